#include "base/tasks/madtasks.h"

#include "base/configfields.h"
#include "base/error.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace parrot {

namespace {

int uniformInt(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// The letters a.., then the noise tokens ~0, ~1, ...
QStringList madSymbols(int letters, int noise)
{
    const CopyVocab v{letters};
    QStringList s;
    for (int i = 0; i < letters; ++i) s << v.text(CopyVocab::FirstLetter + i);
    for (int i = 0; i < noise; ++i) s << QString("~%1").arg(i);
    return s;
}

class MadTask : public TokenTask {
public:
    explicit MadTask(const TaskConfig& c) : TokenTask(c, madSymbols(c.vocabSize, std::max(0, c.noiseVocab)))
    {
        throwIfOutOfRange("task.train_examples", c.trainExamples);
        throwIfOutOfRange("task.noise_vocab", c.noiseVocab);
        // (only noisy recall and compression draw noise)
        throwIfOutOfRealRange("task.noise_fraction", c.noiseFraction);
        if (c.noiseFraction > 0 && c.noiseVocab < 1)
            throw Error(QString("task.noise_vocab: noise needs >= 1 noise token, got %1").arg(c.noiseVocab));
    }
    bool packed() const override { return false; }

protected:
    int letter(int i) const { return symbol(i); }
    int letters() const { return m_config.vocabSize; }
};

// In-context recall, with or without noise (MAD's generate_in_context_recall_instance, multi-query).
class RecallTask : public MadTask {
public:
    explicit RecallTask(const TaskConfig& c) : MadTask(c)
    {
        if (c.vocabSize < 4) throw Error(QString("task.vocab_size: in-context recall needs >= 4 letters (keys and values), got %1").arg(c.vocabSize));
    }
    QString checkDifficulty(int length) const override
    {
        if (length < 4) return QString("sequence length %1: recall needs at least 4 tokens (two pairs)").arg(length);
        return {};
    }
    Example example(int length, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        const int half = letters() / 2, pairs = length / 2;
        const int kept = uniformInt(rng, 0, pairs - 2);  // one slot is always a pair
        std::map<int, int> value;                         // key -> value, fixed within the sequence
        std::vector<int> presented;
        Example e;
        e.add(CopyVocab::Bos, Role::Separator);
        std::uniform_real_distribution<double> coin(0, 1);
        for (int i = 0; i + 1 < pairs; ++i) {
            if (m_config.noiseFraction > 0 && i != kept && coin(rng) < m_config.noiseFraction) {
                for (int k = 0; k < 2; ++k) e.add(symbol(letters() + uniformInt(rng, 0, m_config.noiseVocab - 1)), Role::Pad);
                continue;
            }
            const int k = uniformInt(rng, 0, half - 1);
            const bool seen = value.count(k) > 0;
            if (!seen) {
                value[k] = half + uniformInt(rng, 0, letters() - half - 1);
                presented.push_back(k);
            }
            e.add(letter(k), seen ? Role::Query : Role::Prompt);
            e.add(letter(value[k]), seen ? Role::Answer : Role::Prompt);
        }
        // the last pair asks for a key shown before
        const int k = presented[size_t(uniformInt(rng, 0, int(presented.size()) - 1))];
        e.add(letter(k), Role::Query);
        e.add(letter(value[k]), Role::Answer);
        return e;
    }
    int maxTokens(int length) const override { return 1 + 2 * (length / 2); }
};

// Fuzzy in-context recall (MAD's generate_fuzzy_in_context_recall_instance, multi-query).
class FuzzyRecallTask : public MadTask {
public:
    explicit FuzzyRecallTask(const TaskConfig& c) : MadTask(c)
    {
        throwIfOutOfRange("task.motif", c.motif);
        if (c.vocabSize / 2 < c.motif)
            throw Error(QString("task.vocab_size: keys of %1 distinct tokens need >= %2 letters, got %3").arg(c.motif).arg(2 * c.motif).arg(c.vocabSize));
    }
    QString checkDifficulty(int length) const override
    {
        const int need = 4 * m_config.motif + 2;
        if (length < need) return QString("sequence length %1: fuzzy recall with motifs of %2 needs at least %3 tokens").arg(length).arg(m_config.motif).arg(need);
        return {};
    }
    Example example(int length, std::mt19937_64& rng) const override { return generate(length, rng, false); }
    Example evalExample(int length, std::mt19937_64& rng) const override { return generate(length, rng, true); }
    int maxTokens(int length) const override { return 1 + length; }

private:
    // `size` distinct tokens of [first, first + count), in random order
    std::vector<int> motif(int size, int first, int count, std::mt19937_64& rng) const
    {
        std::vector<int> pool(static_cast<size_t>(count));
        std::iota(pool.begin(), pool.end(), first);
        for (int i = 0; i < size; ++i) std::swap(pool[size_t(i)], pool[size_t(uniformInt(rng, i, count - 1))]);
        pool.resize(size_t(size));
        return pool;
    }
    Example generate(int length, std::mt19937_64& rng, bool evaluation) const
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        const int m = m_config.motif, half = letters() / 2;
        const auto keySize = [&] { return evaluation ? m : uniformInt(rng, 1, m); };
        const auto newKey = [&] { return motif(keySize(), 0, half, rng); };
        const auto newValue = [&] { return motif(uniformInt(rng, 1, m), half, letters() - half, rng); };
        const std::vector<int> probeKey = newKey(), probeValue = newValue();
        const int probe = int(probeKey.size() + probeValue.size());
        const int probeAt = uniformInt(rng, 0, std::max(0, length - 2 * probe - 2 * m));  // where the probe's pair is shown first
        std::map<std::vector<int>, std::vector<int>> value{{probeKey, probeValue}};
        std::map<std::vector<int>, bool> shown;
        Example e;
        e.add(CopyVocab::Bos, Role::Separator);
        const auto add = [&](const std::vector<int>& k, const std::vector<int>& v) {
            const bool seen = shown[k];
            for (int t : k) e.add(letter(t), seen ? Role::Query : Role::Prompt);
            for (int t : v) e.add(letter(t), seen ? Role::Answer : Role::Prompt);
            shown[k] = true;
        };
        int used = 0;  // tokens after `$`
        bool probeShown = false;
        while (used + 2 * m + probe <= length) {
            if (!probeShown && used >= probeAt) {
                add(probeKey, probeValue);
                used += probe;
                probeShown = true;
                continue;
            }
            const std::vector<int> k = newKey();
            if (!value.count(k)) value[k] = newValue();
            add(k, value[k]);
            used += int(k.size() + value[k].size());
        }
        if (!probeShown) add(probeKey, probeValue);  // (the loop always leaves room for it)
        add(probeKey, probeValue);                   // asked: its value is the answer
        return e;
    }
};

// Selective copying (MAD's generate_selective_copying_instance), answered one letter after another.
class SelectiveCopyTask : public MadTask {
public:
    explicit SelectiveCopyTask(const TaskConfig& c) : MadTask(c)
    {
        throwIfOutOfRange("task.copy_tokens", c.copyTokens);
    }
    QString checkDifficulty(int length) const override
    {
        const int need = 2 * m_config.copyTokens + 2;
        if (length < need)
            return QString("sequence length %1: copying %2 letters needs at least %3 tokens (2 x copy_tokens + 2)").arg(length).arg(m_config.copyTokens).arg(need);
        return {};
    }
    Example example(int length, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        const int n = m_config.copyTokens, blanks = length - 2 * n - 1;
        std::vector<int> s(static_cast<size_t>(n));
        for (int& c : s) c = letter(uniformInt(rng, 0, letters() - 1));
        // which of the n + blanks places hold the letters (in their order)
        std::vector<char> isLetter(size_t(n + blanks), 0);
        std::fill(isLetter.begin(), isLetter.begin() + n, 1);
        std::shuffle(isLetter.begin(), isLetter.end(), rng);
        Example e;
        e.add(CopyVocab::Bos, Role::Separator);
        size_t next = 0;
        for (char l : isLetter) {
            if (l) e.add(s[next++], Role::Prompt);
            else e.add(CopyVocab::Pad, Role::Pad);  // the blank `_`
        }
        e.add(CopyVocab::Sep, Role::Separator);
        for (int c : s) e.add(c, Role::Answer);
        return e;
    }
    int maxTokens(int length) const override { return 1 + length; }
};

// Compression (MAD's generate_compression_instance): length - 1 letters, each replaced with
// probability noise_fraction by a noise token (never scored), then the compression token `|`. The
// letters are the answers, read back from the model's representation at `|` (TaskInfo::readOut).
class CompressionTask : public MadTask {
public:
    explicit CompressionTask(const TaskConfig& c) : MadTask(c)
    {
        if (c.vocabSize < 2) throw Error(QString("task.vocab_size: compression needs >= 2 letters, got %1").arg(c.vocabSize));
    }
    QString checkDifficulty(int length) const override
    {
        if (length < 2) return QString("sequence length %1: expected >= 2 (a letter and the compression token)").arg(length);
        return {};
    }
    Example example(int length, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        std::uniform_real_distribution<double> coin(0, 1);
        Example e;
        e.add(CopyVocab::Bos, Role::Separator);
        for (int i = 0; i + 1 < length; ++i) {
            if (m_config.noiseFraction > 0 && coin(rng) < m_config.noiseFraction)
                e.add(symbol(letters() + uniformInt(rng, 0, m_config.noiseVocab - 1)), Role::Pad);
            else
                e.add(letter(uniformInt(rng, 0, letters() - 1)), Role::Answer);
        }
        e.add(CopyVocab::Sep, Role::Separator);
        return e;
    }
    int maxTokens(int length) const override { return 1 + length; }
};

// Memorization (MAD's generate_memorization_instance): one fixed key-to-value map for every
// sequence, keys without repeats in a sequence.
class MemorizationTask : public MadTask {
public:
    explicit MemorizationTask(const TaskConfig& c) : MadTask(c)
    {
        if (c.vocabSize < 4) throw Error(QString("task.vocab_size: memorization needs >= 4 letters, got %1").arg(c.vocabSize));
        const int half = c.vocabSize / 2;
        std::vector<int> values(size_t(c.vocabSize - half));
        std::iota(values.begin(), values.end(), half);
        std::mt19937_64 fixed(12345);  // MAD's kv_map seed: the same map in every run
        std::shuffle(values.begin(), values.end(), fixed);
        m_value.assign(values.begin(), values.begin() + half);
    }
    QString checkDifficulty(int length) const override
    {
        if (length < 2) return QString("sequence length %1: expected >= 2 (a key and its value)").arg(length);
        if (length / 2 > int(m_value.size()))
            return QString("sequence length %1: %2 keys, but vocab_size %3 has %4 (keys do not repeat in a sequence)")
                .arg(length).arg(length / 2).arg(letters()).arg(m_value.size());
        return {};
    }
    Example example(int length, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        std::vector<int> keys(m_value.size());
        std::iota(keys.begin(), keys.end(), 0);
        std::shuffle(keys.begin(), keys.end(), rng);
        Example e;
        e.add(CopyVocab::Bos, Role::Separator);
        for (int i = 0; i < length / 2; ++i) {
            e.add(letter(keys[size_t(i)]), Role::Query);
            e.add(letter(m_value[size_t(keys[size_t(i)])]), Role::Answer);
        }
        return e;
    }
    int maxTokens(int length) const override { return 1 + 2 * (length / 2); }

private:
    std::vector<int> m_value;  // key i -> letter index of its value
};

}  // namespace

bool isMadTask(const QString& kind) { return kind.startsWith("mad_"); }

std::unique_ptr<TokenTask> makeMadTask(const TaskConfig& c)
{
    if (c.kind == "mad_recall" || c.kind == "mad_noisy_recall") return std::make_unique<RecallTask>(c);
    if (c.kind == "mad_fuzzy_recall") return std::make_unique<FuzzyRecallTask>(c);
    if (c.kind == "mad_selective_copy") return std::make_unique<SelectiveCopyTask>(c);
    if (c.kind == "mad_memorization") return std::make_unique<MemorizationTask>(c);
    if (c.kind == "mad_compression") return std::make_unique<CompressionTask>(c);
    throw Error(QString("task.kind: unknown MAD task \"%1\"").arg(c.kind));
}

}  // namespace parrot
