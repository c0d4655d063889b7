// The whole-number settings, each defined once: its dotted key, the range validate() accepts,
// the largest value the settings form offers and the form's tooltip. validate(), the settings
// form's spin boxes and their tooltips read this table, so a range is changed in one place.
// Settings whose limits depend on others (task.max_len >= task.min_len, model.num_masked_heads
// <= model.heads, model.short_conv 0 or 2..16) keep those checks in validate(); their entries give
// the form its range and tooltip. Plain C++, no torch.
#pragma once

#include <QString>

#include <limits>

namespace parrot {

inline constexpr long long kUnbounded = std::numeric_limits<long long>::max();
// The longest difficulty (string length, pairs, entries) a task setting or evaluation may ask for.
inline constexpr int kMaxLength = 10000;

struct IntField {
    const char* key;        // as --set and the JSON spell it, e.g. "model.d_model"
    long long lo = 0;       // smallest accepted
    long long hi = kUnbounded;  // largest accepted; kUnbounded: no limit
    long long formMax = 0;  // the settings form's largest (at most hi)
    const char* tip = "";   // the settings form's tooltip
    const char* zero = "";  // what 0 means, where it means something ("off"), said in the range
};

// The entry of `key`; a key not in the table is a programming error (std::logic_error).
const IntField& intField(const char* key);
// "" when `value` is in the field's range, else "KEY: expected LO..HI, got VALUE" (or ">= LO").
QString rangeProblem(const IntField& field, long long value);
inline QString rangeProblem(const char* key, long long value) { return rangeProblem(intField(key), value); }

}  // namespace parrot
