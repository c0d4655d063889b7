// The copy paper's two-layer construction (Jelassi et al., 2024, the theorem that a depth-2
// Transformer copies strings exponentially long in its size by n-gram lookup), with its weights
// written down, not trained. Tokens are the copy task's: `$ s | s`.
//
// Residual stream of one position t (no MLPs, no norms): slot 0 holds the token at t as a one-hot
// over the H = |V| + 1 hash symbols (the letters, and one "marker" shared by `$` and `|`), slots
// 1..n are written by layer 1, and a position code p(t) = (cos(pi t / 2^f), sin(pi t / 2^f)) for
// f = 0..12.
//
// Layer 1, n heads. Head o attends from t to t - o: its query is p(t) rotated back by o steps,
// p(t - o), its key p(s), so the score is beta1 * sum_f cos(pi (t - o - s) / 2^f): largest (13) at
// s = t - o and at least 2 lower anywhere else within 8192 positions (for d != 0 the term at the
// largest power of two 2^f dividing d is cos(pi * odd) = -1). With beta1 = 20 every other position
// gets less than e^-40 of the weight. A null key with value zero scores 12: where t - o is before
// the start it wins by 1 x beta1 and the slot stays empty (elsewhere it takes under e^-20). The
// value is slot 0, written into slot o: the position now holds the tokens at t, t-1, ..., t-n.
//
// Layer 2, one head: the query at t is the n-gram ending at t (slots 0..n-1), the key at s the
// n-gram before s (slots 1..n); slot pair i counts with weight 2^(n-i), so the score ranks keys by
// the longest run of matching tokens back from t (a full match beats any partial one by at least
// one unit). The start of the answer is the marker `|`, which matches only the marker `$`, so the
// first answer tokens look up the string's first letters. beta2 = 30 leaves under T e^-30 of the
// weight off the best key. The value is the token at s: the letter after the matched n-gram (or
// the marker after the last letter, read out as `.`).
//
// It fails only where the n-gram ending at t occurs twice in the string (a tie, or an earlier copy
// winning): for a uniformly random string of L letters that happens with probability about
// C(L, 2) / |V|^n, under the bound L^2 / |V|^n the paper states.
#pragma once

#include "base/types.h"

#include <functional>
#include <memory>

namespace parrot {

struct ConstructionOptions {
    int n = 5;          // n-gram order (1..8)
    int letters = 26;   // alphabet size |V| (2..52)
    double beta1 = 20;  // layer 1 inverse temperature (see above)
    double beta2 = 30;  // layer 2 inverse temperature
    QString describe() const;  // "two-layer construction, n = 5, |V| = 26"
};

class CopyConstruction {
public:
    // Throws parrot::Error for n or the alphabet out of range.
    explicit CopyConstruction(const ConstructionOptions& options);
    ~CopyConstruction();
    const ConstructionOptions& options() const { return m_o; }
    int vocabSize() const;  // the copy task's: 4 specials + letters
    int heads() const { return m_o.n; }
    static constexpr int maxLength = 8192;  // positions the position code tells apart

    // Logits (time x vocab) for one row of copy-task tokens, and its attention: 2 layers x n heads;
    // layer 2 uses head 0 only (the other heads' maps are all zero).
    std::vector<float> logits(const std::vector<int>& tokens) const;
    ModelProbes probe(const std::vector<int>& tokens) const;

    // String and character accuracy of copying uniformly random strings of each length (a task
    // "copy" or "copy_dup_ngram" with this alphabet), `samples` strings per length from a generator
    // seeded by `seed` and the length, as Model::evaluate. Teacher-forced argmax: a string is
    // copied exactly under greedy decoding exactly when every teacher-forced prediction is right.
    LengthCurve evaluate(const std::vector<int>& lengths, int samples, unsigned long long seed, const QString& kind = "copy",
                         const std::function<bool(int done, int total)>& keepGoing = {}) const;

    // The paper's bound on the copy error at length L: min(1, L^2 / |V|^n).
    static double boundError(int length, int n, int letters);
    // The chance that a uniformly random string of L letters repeats some n-gram (birthday
    // estimate 1 - exp(-C(L - n + 1, 2) / |V|^n)): where the construction can fail.
    static double repeatChance(int length, int n, int letters);

    struct Weights;  // the matrices (construction.cpp)

private:
    ConstructionOptions m_o;
    std::unique_ptr<Weights> m_w;
};

}  // namespace parrot
