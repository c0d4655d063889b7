// The numeric settings, each defined once: its dotted key, its label, the range validate()
// accepts, what the settings form offers and the form's tooltip. validate(), the settings form's
// spin boxes, their labels and tooltips, and `parrotscope config --describe` read these tables,
// so a range or a label is changed in one place.
// Settings whose limits depend on others (task.max_len >= task.min_len, model.num_masked_heads
// <= model.heads, model.short_conv 0 or 2..16) keep those checks in validate(); their entries give
// the form its range and tooltip. Plain C++, no torch.
#pragma once

#include <QString>

#include <limits>
#include <vector>

namespace parrot {

inline constexpr long long kUnbounded = std::numeric_limits<long long>::max();
// The longest difficulty (string length, pairs, entries) a task setting or evaluation may ask for.
inline constexpr int kMaxLength = 10000;

struct IntField {
    const char* key;        // as --set and the JSON spell it, e.g. "model.d_model"
    const char* label;      // the settings form's row, e.g. "d_model"
    long long lo = 0;       // smallest accepted
    long long hi = kUnbounded;  // largest accepted; kUnbounded: no limit
    long long formMax = 0;  // the settings form's largest (at most hi)
    const char* tip = "";   // the settings form's tooltip
    const char* zero = "";  // what 0 means, where it means something ("off"), said in the range
    long long formMin = 0;  // the settings form's smallest, where it is above lo
};

inline constexpr double kInfinite = std::numeric_limits<double>::infinity();

struct RealField {
    const char* key;
    const char* label;
    double lo = 0, hi = kInfinite;          // the accepted range (always finite values)
    bool loOpen = false, hiOpen = false;    // whether lo or hi itself is excluded
    const char* expected = "";              // the range in words for messages: "a positive number", "0..1"
    double formMin = 0, formMax = 0;        // the settings form's range; formMax 0: not in the form
    double formStep = 0;
    int decimals = 0;
    const char* tip = "";
};

const std::vector<IntField>& intFieldTable();
const std::vector<RealField>& realFieldTable();

// The entry of `key`; a key not in the table is a programming error (std::logic_error).
const IntField& intField(const char* key);
// "" when `value` is in the field's range, else "KEY: expected LO..HI, got VALUE" (or ">= LO").
QString rangeProblem(const IntField& field, long long value);
inline QString rangeProblem(const char* key, long long value) { return rangeProblem(intField(key), value); }
const RealField& realField(const char* key);
// "" when `value` is finite and in range, else "KEY: expected <expected>, got VALUE".
QString rangeProblem(const RealField& field, double value);
// The same problems as parrot::Error (the task classes check their options so).
void throwIfOutOfRange(const char* key, long long value);
void throwIfOutOfRealRange(const char* key, double value);

}  // namespace parrot
