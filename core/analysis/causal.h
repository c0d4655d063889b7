// The causal tests of the look-inside views: what a model's answers lose when one attention head
// is switched off (head importance), and how its copying falls as its state is made smaller,
// against the copy paper's bound for that smaller state (state sweep). The Explore tab and
// `parrotscope inspect --head-importance / --state-sweep` both run these.
#pragma once

#include "core/analysis/inside.h"

#include <QString>

#include <functional>
#include <vector>

namespace parrot {

// Each head of a Transformer subject (a model, the construction, a pretrained language model)
// ablated alone over the same `samples` examples, against the model with every head.
struct HeadImportanceRequest {
    // A copy model's token task ("" = the one it was trained on; another task must share its
    // vocabulary, e.g. copy_dup_ngram for a copy model); the construction's: copy or
    // copy_dup_ngram; a pretrained model's zero-shot test: phonebook, copy-text or shuffled-text.
    QString task;
    int length = 0;  // what the task's length counts; 0: the longest the model trained on (a test: 20)
    int samples = 100;
    unsigned long long seed = 1;
    HeadAblation::Method method = HeadAblation::Method::Zero;
};

struct HeadImportanceRow {
    int layer = 0, head = 0;
    double answer = 0, answerErr = 0;  // whole answers right with the head off, and its standard error
    double token = 0, tokenErr = 0;    // answer tokens right
    double answerDrop = 0, answerDropErr = 0, tokenDrop = 0, tokenDropErr = 0;  // the full model's minus these
    QString label;      // the lookup analysis' label of the head on one example ("" when it has none)
    double lookup = 0;  // its lookup score at its order (or its best order), on that example
    int order = 0;
};

struct HeadImportance {
    QString subject, task, method;
    int length = 0, samples = 0, layers = 0, heads = 0;
    unsigned long long seed = 1;
    double answer = 0, answerErr = 0, token = 0, tokenErr = 0;  // the full model
    std::vector<HeadImportanceRow> rows;  // sorted by answer drop, then token drop, largest first
    bool complete = true;  // false: stopped before every head was measured
    // One row a head, with a header line.
    QString csv() const;
    const HeadImportanceRow* find(int layer, int head) const;
};

// The tasks the window offers for a subject, its own first: a copy model's task (and the
// duplicated-n-gram copy for a copy model), the construction's two, a pretrained model's tests.
QStringList headImportanceTasks(const InsideSubject& subject);
// The length a request of length 0 measures at for `task`.
int defaultImportanceLength(const InsideSubject& subject, const QString& task);

// Throws parrot::Error for a subject without attention heads, a task it cannot read, or a length
// out of range. `keepGoing(done, total)` (total = heads + 1, done = the full model and the heads
// measured) is polled during each evaluation too; false stops and returns the heads measured so
// far (complete = false).
HeadImportance measureHeadImportance(const InsideSubject& subject, const HeadImportanceRequest& request,
                                     const std::function<bool(int done, int total)>& keepGoing = {});

// A state-space model's copy accuracy against length with its state shrunk to each setting of
// one kind (base/ablation.h's StateShrink), beside the copy bound for that state:
// the longest string m bits can hold, m / log2|V|.
struct StateSweepPoint {
    StateShrink shrink;  // Mode::None: the whole state
    QString label;       // "d_state 4 of 16", "8 bits", "25% of channels", "whole state (32-bit floats)"
    double stateBits = 0;    // the fixed state's bits under it (0: it grows with the context)
    double boundLength = 0;  // crossingLength(stateBits, |V|): beyond it no state of that size copies every string
    LengthCurve curve;
    int longestCopied = 0;   // the longest evaluated length still copied at >= 90% (capacity.h)
};

struct StateSweep {
    QString subject, mode;  // mode: "dims", "channels" or "bits"
    QString task;
    int vocab = 0;          // the alphabet the bound counts
    bool copyTask = false;  // the bound is about copying: drawn for copy tasks only
    int samples = 0;
    unsigned long long seed = 1;
    std::vector<StateSweepPoint> points;  // the whole state first
    bool complete = true;
    QString csv() const;  // one row per setting and length
};

// The settings swept by default: dims d_state/2, d_state/4, ..., 1; channels 1/2 ... 1/16;
// bits 16, 8, 4, 2, 1 (each after the whole state).
std::vector<StateShrink> defaultStateSweep(StateShrink::Mode mode, int dState);

// `settings` empty: defaultStateSweep. `lengths` empty: the model's evaluation lengths. Throws
// parrot::Error for a model without state-space layers or a setting it cannot run.
// `keepGoing(done, total)` after each setting; false stops with those done (complete = false).
StateSweep measureStateSweep(const Model& model, const QString& name, StateShrink::Mode mode, const std::vector<StateShrink>& settings,
                             const std::vector<int>& lengths, int samples, unsigned long long seed,
                             const std::function<bool(int done, int total)>& keepGoing = {});

}  // namespace parrot
