// The token tasks of "Repeat After Me" (Jelassi et al., 2024) and multi-query associative recall
// (Arora et al., 2023, Zoology), behind one interface: an example is a token sequence with a role
// per token; training packs examples into rows and scores answers and their end token; evaluation
// puts one example per row and scores the answers alone. Plain C++ (no torch), so generators are
// tested on their own and shared by training, evaluation, the sample viewer and the explorer.
//
// Every task's "difficulty" is what task.min_len / max_len / eval_lengths range over: the string
// length for the copy and lookup tasks, the number of entries for the phone book, the number of
// key-value pairs for associative recall.
#pragma once

#include "base/config.h"
#include "base/tasks/taskcatalog.h"

#include <QString>
#include <QStringList>

#include <cstdint>
#include <memory>
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

enum class Role : uint8_t {
    Pad,        // padding, or filler between queries
    Prompt,     // the context: the string, the entries, the key-value pairs
    Separator,  // `$`, `|`
    Query,      // what is asked: the n-gram key, the name, the recalled key
    Answer,     // the tokens to produce (scored in training and evaluation)
    End,        // `.` after an answer (scored in training only)
};

struct Example {
    std::vector<int> tokens;
    std::vector<Role> roles;
    void add(int token, Role role)
    {
        tokens.push_back(token);
        roles.push_back(role);
    }
    int answers() const;  // number of Answer tokens
};

// Rows of next-token prediction, row-major (batch x length): input[t] predicts target[t];
// the loss and the accuracy count only where mask[t] is 1.
struct TokenBatch {
    int batch = 0;
    int length = 0;
    int examples = 0;  // complete examples in the batch (the cut ones not counted)
    std::vector<int64_t> input;
    std::vector<int64_t> target;
    std::vector<uint8_t> mask;
};


class TokenTask {
public:
    // Checks the config (throws parrot::Error naming the field) and builds the task.
    static std::unique_ptr<TokenTask> create(const TaskConfig& config);
    virtual ~TokenTask() = default;

    const TaskConfig& config() const { return m_config; }
    int vocabSize() const { return 4 + int(m_symbols.size()); }
    QString text(int id) const;
    QString text(const std::vector<int>& ids, const QString& sep = " ") const;

    // One example at a difficulty; or at one drawn uniformly from [min_len, max_len].
    virtual Example example(int difficulty, std::mt19937_64& rng) const = 0;
    Example example(std::mt19937_64& rng) const;
    // An upper bound on an example's tokens at that difficulty.
    virtual int maxTokens(int difficulty) const = 0;
    // Why a difficulty cannot be generated ("" when it can), e.g. a string too short for its n-gram.
    virtual QString checkDifficulty(int difficulty) const;

    // Rows of context_len tokens packed with back-to-back examples. The example that does not
    // fit is cut at the row's end and masked out entirely; answers and their `.` are scored (the
    // next token; readsOut(): the token itself).
    // Tasks that are not packed() put one example in each row, then padding. With
    // task.train_examples > 0 the examples come from a fixed set of that many (MAD's knob).
    TokenBatch trainBatch(int batch, std::mt19937_64& rng) const;
    // One training example: a fresh one, or one of the fixed set of task.train_examples.
    Example trainingExample(std::mt19937_64& rng) const;
    // `batch` examples at one difficulty, one per row, right-padded; only answers are scored.
    TokenBatch evalBatch(int difficulty, int batch, std::mt19937_64& rng) const;

    // Whether training rows hold several examples back to back (false: MAD's one sequence a row).
    virtual bool packed() const { return true; }
    // Whether the model reads each answer token once it has been predicted (teacher forcing, as a
    // language model does); false (MQAR, as Zoology): it reads filler (`_`) there instead.
    virtual bool readsAnswersBack() const { return true; }
    // The tokens the model reads for an example: its tokens, with filler at the answers it does not
    // read back. Training, evaluation and probes all feed this.
    std::vector<int> modelInput(const Example& e) const;
    // Read-out tasks (TaskInfo::readOut, MAD's compression) score a row against itself: target[t]
    // is input[t] and the mask is on the answers' own positions; the others predict the next token.
    bool readsOut() const { return m_readOut; }
    // The example an evaluation scores at a difficulty (fuzzy recall asks with its longest keys).
    virtual Example evalExample(int difficulty, std::mt19937_64& rng) const { return example(difficulty, rng); }

protected:
    TokenTask(const TaskConfig& config, QStringList symbols);
    bool hides(const Example& e, int i) const { return !readsAnswersBack() && e.roles[size_t(i)] == Role::Answer; }
    int symbol(int i) const { return 4 + i; }  // the id of symbol i
    int symbolCount() const { return int(m_symbols.size()); }

    TaskConfig m_config;
    QStringList m_symbols;  // display text of ids 4, 5, ...
    bool m_readOut = false;
};

// The vocabulary size a task config implies (for building models), without building the task.
int taskVocabSize(const TaskConfig& config);

// Lines of a bundled text resource (resources/data: the corpora, the name lists), trimmed, without
// # comments and blank lines. Throws parrot::Error when the resource is missing.
QStringList resourceLines(const QString& name);

}  // namespace parrot
