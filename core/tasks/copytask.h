// The string-copying task of "Repeat After Me" (Jelassi et al., 2024), section 3:
// an example is `$ s | s .` with s drawn uniformly i.i.d. from V letters.
// Plain C++ (no torch): the generator is tested on its own and shared by training,
// evaluation and the explorer views.
#pragma once

#include "config.h"

#include <QString>

#include <cstdint>
#include <random>
#include <vector>

namespace parrot {

// Token ids: the four specials first, then the letters.
struct CopyVocab {
    static constexpr int Pad = 0;
    static constexpr int Bos = 1;  // `$`
    static constexpr int Sep = 2;  // `|`
    static constexpr int Eos = 3;  // `.`
    static constexpr int FirstLetter = 4;

    int letters = 26;
    int size() const { return letters + FirstLetter; }
    bool isLetter(int id) const { return id >= FirstLetter && id < size(); }
    // `$`, `|`, `.`, `_` for PAD; a..z, then A..Z, then `<n>` past 52 letters.
    QString text(int id) const;
    QString text(const std::vector<int>& ids, const QString& sep = " ") const;
};

// A batch of next-token prediction rows, row-major (batch x length).
// input[t] predicts target[t]; the loss counts only where mask[t] is 1.
struct TokenBatch {
    int batch = 0;
    int length = 0;
    int examples = 0;  // complete examples in the batch (the cut ones not counted)
    std::vector<int64_t> input;
    std::vector<int64_t> target;
    std::vector<uint8_t> mask;
};

// An evaluation batch: one example per row, all of the same string length L.
// The answer (the copied s) is predicted at positions [answerStart, answerStart + L).
struct CopyEvalBatch {
    TokenBatch tokens;
    int stringLength = 0;
    int answerStart = 0;
};

class CopyTask {
public:
    explicit CopyTask(const TaskConfig& config);

    const CopyVocab& vocab() const { return m_vocab; }
    const TaskConfig& config() const { return m_config; }

    // One example `$ s | s .` of a length drawn from [min_len, max_len].
    std::vector<int> example(std::mt19937_64& rng) const;
    std::vector<int> example(int length, std::mt19937_64& rng) const;

    // Rows of context_len inputs packed with back-to-back examples. The example that
    // does not fit is cut at the row's end and masked out entirely; the loss counts
    // the copied answer and its EOS of every complete example.
    TokenBatch trainBatch(int batch, std::mt19937_64& rng) const;

    // `batch` independent examples of string length `length`, one per row.
    CopyEvalBatch evalBatch(int length, int batch, std::mt19937_64& rng) const;

private:
    TaskConfig m_config;
    CopyVocab m_vocab;
};

}  // namespace parrot
