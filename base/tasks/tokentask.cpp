#include "base/tasks/tokentask.h"

#include "base/configfields.h"
#include "base/error.h"
#include "base/tasks/madtasks.h"

#include <QFile>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace parrot {

QString CopyVocab::text(int id) const
{
    switch (id) {
    case Pad: return "_";
    case Bos: return "$";
    case Sep: return "|";
    case Eos: return ".";
    default: break;
    }
    const int letter = id - FirstLetter;
    if (letter < 0 || letter >= letters) return QString("<?%1>").arg(id);
    if (letter < 26) return QString(QChar('a' + letter));
    if (letter < 52) return QString(QChar('A' + letter - 26));
    return QString("<%1>").arg(letter);
}

QString CopyVocab::text(const std::vector<int>& ids, const QString& sep) const
{
    QStringList parts;
    for (int id : ids) parts << text(id);
    return parts.join(sep);
}

int Example::answers() const { return int(std::count(roles.begin(), roles.end(), Role::Answer)); }

namespace {

QStringList letterSymbols(int count)
{
    const CopyVocab v{count};
    QStringList s;
    for (int i = 0; i < count; ++i) s << v.text(CopyVocab::FirstLetter + i);
    return s;
}

// The character tasks' alphabet: space, letters, digits, punctuation.
const QString& characters()
{
    static const QString chars = QStringLiteral(" abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:'\"!?-()");
    return chars;
}

QStringList characterSymbols()
{
    QStringList s;
    for (QChar c : characters()) s << (c == ' ' ? QStringLiteral("\u2423") : QString(c));  // visible space
    return s;
}

int uniform(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// `$ s | s .`: the copy format, shared by the letter, duplicated-n-gram and text copies.
Example copyExample(const std::vector<int>& s)
{
    Example e;
    e.add(CopyVocab::Bos, Role::Separator);
    for (int id : s) e.add(id, Role::Prompt);
    e.add(CopyVocab::Sep, Role::Separator);
    for (int id : s) e.add(id, Role::Answer);
    e.add(CopyVocab::Eos, Role::End);
    return e;
}

// ---- copy and the n-gram tasks: letters ----------------------------------------------------

class LetterTask : public TokenTask {
public:
    explicit LetterTask(const TaskConfig& c) : TokenTask(c, letterSymbols(c.vocabSize)) {}

protected:
    std::vector<int> randomString(int length, std::mt19937_64& rng) const
    {
        std::vector<int> s(size_t(std::max(0, length)));
        for (int& c : s) c = symbol(uniform(rng, 0, symbolCount() - 1));
        return s;
    }
    static void addAll(Example& e, const std::vector<int>& ids, Role role)
    {
        for (int id : ids) e.add(id, role);
    }
};

class CopyTask : public LetterTask {
public:
    using LetterTask::LetterTask;
    Example example(int length, std::mt19937_64& rng) const override
    {
        const std::vector<int> s = randomString(length, rng);
        return copyExample(s);
    }
    int maxTokens(int length) const override { return 2 * length + 3; }
};

class DupNgramCopyTask : public CopyTask {
public:
    explicit DupNgramCopyTask(const TaskConfig& c) : CopyTask(c)
    {
        throwIfOutOfRange("task.ngram", c.ngram);
    }
    QString checkDifficulty(int length) const override
    {
        if (length < 1) return TokenTask::checkDifficulty(length);
        return length >= 2 * m_config.ngram ? QString()
                                            : QString("length %1: the duplicated-n-gram copy needs at least 2 x ngram = %2 letters")
                                                  .arg(length).arg(2 * m_config.ngram);
    }
    Example example(int length, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        const int n = m_config.ngram;
        std::vector<int> s = randomString(length, rng);
        const std::vector<int> g = randomString(n, rng);
        // two non-overlapping positions i < j
        const int i = uniform(rng, 0, length - 2 * n);
        const int j = uniform(rng, i + n, length - n);
        std::copy(g.begin(), g.end(), s.begin() + i);
        std::copy(g.begin(), g.end(), s.begin() + j);
        return copyExample(s);
    }
};

class NgramLookupTask : public LetterTask {
public:
    NgramLookupTask(const TaskConfig& c, bool suffixKey) : LetterTask(c), m_suffix(suffixKey)
    {
        throwIfOutOfRange("task.ngram", c.ngram);
        throwIfOutOfRange("task.answer_len", c.answerLen);
    }
    QString checkDifficulty(int length) const override
    {
        if (length < 1) return TokenTask::checkDifficulty(length);
        const int need = m_config.ngram + std::max(1, m_config.answerLen);
        return length >= need ? QString()
                              : QString("length %1: n-gram lookup needs at least ngram + answer letters = %2").arg(length).arg(need);
    }
    Example example(int length, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        const int n = m_config.ngram, answer = std::max(1, m_config.answerLen);
        // A string and a position whose n-gram occurs exactly once in it; positions in random order.
        for (int attempt = 0; attempt < 200; ++attempt) {
            const std::vector<int> s = randomString(length, rng);
            std::vector<int> starts(size_t(length - n - answer + 1));
            std::iota(starts.begin(), starts.end(), 0);
            std::shuffle(starts.begin(), starts.end(), rng);
            for (int i : starts) {
                int occurrences = 0;
                for (int k = 0; k + n <= length && occurrences < 2; ++k)
                    occurrences += std::equal(s.begin() + i, s.begin() + i + n, s.begin() + k);
                if (occurrences != 1) continue;
                const std::vector<int> g(s.begin() + i, s.begin() + i + n);
                const int end = m_config.answerLen > 0 ? i + n + m_config.answerLen : length;
                const std::vector<int> ans(s.begin() + i + n, s.begin() + end);
                Example e;
                e.add(CopyVocab::Bos, Role::Separator);
                if (m_suffix) {
                    addAll(e, s, Role::Prompt);
                    e.add(CopyVocab::Sep, Role::Separator);
                    addAll(e, g, Role::Query);
                } else {
                    addAll(e, g, Role::Query);
                    e.add(CopyVocab::Sep, Role::Separator);
                    addAll(e, s, Role::Prompt);
                    e.add(CopyVocab::Sep, Role::Separator);
                }
                addAll(e, ans, Role::Answer);
                e.add(CopyVocab::Eos, Role::End);
                return e;
            }
        }
        throw Error(QString("n-gram lookup: no %1-gram occurred exactly once in 200 random strings of length %2 over %3 "
                            "letters; use a larger task.vocab_size or task.ngram")
                        .arg(n).arg(length).arg(symbolCount()));
    }
    int maxTokens(int length) const override { return 2 * length + 4; }

private:
    bool m_suffix;
};

// ---- associative recall ----------------------------------------------------------------------

// Zoology's multi-query associative recall (Arora et al. 2023, zoology/data/associative_recall.py):
// one example a row, and the answers are not read back (the model reads filler where a value was
// asked for), so a later query cannot be answered by elimination of the values already given.
class MqarTask : public LetterTask {
public:
    static constexpr int kMaxGap = 3;
    explicit MqarTask(const TaskConfig& c) : LetterTask(c)
    {
        if (c.vocabSize < 4) throw Error(QString("task.vocab_size: associative recall needs >= 4 letters, got %1").arg(c.vocabSize));
    }
    QString checkDifficulty(int pairs) const override
    {
        if (pairs < 1) return TokenTask::checkDifficulty(pairs);
        return pairs <= symbolCount() / 2 ? QString()
                                          : QString("%1 key-value pairs: at most vocab_size / 2 = %2 distinct keys")
                                                .arg(pairs).arg(symbolCount() / 2);
    }
    Example example(int pairs, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(pairs);
        if (!problem.isEmpty()) throw Error(problem);
        const int half = symbolCount() / 2;
        std::vector<int> keys(static_cast<size_t>(half));
        std::iota(keys.begin(), keys.end(), 0);
        std::shuffle(keys.begin(), keys.end(), rng);
        keys.resize(size_t(pairs));
        std::vector<int> values(static_cast<size_t>(pairs));
        for (int& v : values) v = half + uniform(rng, 0, symbolCount() - half - 1);
        Example e;
        e.add(CopyVocab::Bos, Role::Separator);
        for (int p = 0; p < pairs; ++p) {
            e.add(symbol(keys[size_t(p)]), Role::Prompt);
            e.add(symbol(values[size_t(p)]), Role::Prompt);
        }
        e.add(CopyVocab::Sep, Role::Separator);
        // Every key once more, in random order, each after a gap of filler drawn from
        // p(g) ~ 1 / (g + 1) over 0..kMaxGap: mostly close, sometimes further.
        std::vector<int> order(static_cast<size_t>(pairs));
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), rng);
        std::discrete_distribution<int> gap({1.0, 1.0 / 2, 1.0 / 3, 1.0 / 4});
        for (int p : order) {
            for (int g = gap(rng); g > 0; --g) e.add(CopyVocab::Pad, Role::Pad);
            e.add(symbol(keys[size_t(p)]), Role::Query);
            e.add(symbol(values[size_t(p)]), Role::Answer);
        }
        return e;
    }
    int maxTokens(int pairs) const override { return 2 + 2 * pairs + (2 + kMaxGap) * pairs; }
    bool packed() const override { return false; }
    bool readsAnswersBack() const override { return false; }
};

// ---- the character tasks -----------------------------------------------------------------------

class CharacterTask : public TokenTask {
public:
    explicit CharacterTask(const TaskConfig& c) : TokenTask(c, characterSymbols()) {}

protected:
    int charId(QChar c) const
    {
        const int i = characters().indexOf(c);
        return i < 0 ? symbol(0) : symbol(i);  // anything else reads as a space
    }
    void addText(Example& e, const QString& text, Role role) const
    {
        for (QChar c : text) e.add(charId(c), role);
    }
};

class TextCopyTask : public CharacterTask {
public:
    explicit TextCopyTask(const TaskConfig& c) : CharacterTask(c)
    {
        // One line of words, whitespace collapsed, characters outside the alphabet dropped.
        QString all = resourceLines("english.txt").join(' ');
        QString clean;
        for (QChar ch : all)
            if (characters().contains(ch)) clean += ch;
        m_words = clean.split(' ', Qt::SkipEmptyParts);
        m_text = m_words.join(' ');
    }
    QString checkDifficulty(int length) const override
    {
        if (length < 1) return TokenTask::checkDifficulty(length);
        return length <= m_text.size() / 2 ? QString()
                                           : QString("length %1: the bundled text allows spans up to %2 characters").arg(length).arg(m_text.size() / 2);
    }
    Example example(int length, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(length);
        if (!problem.isEmpty()) throw Error(problem);
        QString span;
        if (m_config.shuffleWords) {
            // Words from a random start until there are enough characters, in a shuffled order.
            const int first = uniform(rng, 0, int(m_words.size()) - 1);
            QStringList words;
            int chars = 0;
            for (int w = first; chars < length + 1; w = (w + 1) % int(m_words.size())) {
                words << m_words[w];
                chars += int(m_words[w].size()) + 1;
            }
            std::shuffle(words.begin(), words.end(), rng);
            span = words.join(' ').left(length);
        } else {
            // A span starting at a word.
            std::vector<int> starts;
            for (int i = 0; i + length <= m_text.size(); ++i)
                if (i == 0 || m_text[i - 1] == ' ') starts.push_back(i);
            span = m_text.mid(starts[size_t(uniform(rng, 0, int(starts.size()) - 1))], length);
        }
        std::vector<int> ids;
        for (QChar c : span) ids.push_back(charId(c));
        return copyExample(ids);
    }
    int maxTokens(int length) const override { return 2 * length + 3; }

private:
    QStringList m_words;
    QString m_text;
};

class PhonebookTask : public CharacterTask {
public:
    static constexpr int kDigits = 10;
    explicit PhonebookTask(const TaskConfig& c) : CharacterTask(c)
    {
        m_first = resourceLines("first_names.txt");
        m_last = resourceLines("surnames.txt");
        for (const QString& n : m_first + m_last) m_longest = std::max(m_longest, int(n.size()));
    }
    QString checkDifficulty(int entries) const override
    {
        if (entries < 1) return TokenTask::checkDifficulty(entries);
        const int names = int(m_first.size() * m_last.size());
        return entries <= names ? QString() : QString("%1 entries: the bundled lists make %2 distinct names").arg(entries).arg(names);
    }
    Example example(int entries, std::mt19937_64& rng) const override
    {
        const QString problem = checkDifficulty(entries);
        if (!problem.isEmpty()) throw Error(problem);
        std::set<std::pair<int, int>> used;
        std::vector<QString> names, numbers;
        while (int(names.size()) < entries) {
            const int f = uniform(rng, 0, int(m_first.size()) - 1), l = uniform(rng, 0, int(m_last.size()) - 1);
            if (!used.insert({f, l}).second) continue;
            names.push_back(m_first[f] + ' ' + m_last[l]);
            QString digits;
            for (int k = 0; k < kDigits; ++k) digits += QChar('0' + uniform(rng, 0, 9));
            numbers.push_back(digits);
        }
        const int asked = uniform(rng, 0, entries - 1);
        Example e;
        e.add(CopyVocab::Bos, Role::Separator);
        for (int i = 0; i < entries; ++i) addText(e, names[size_t(i)] + ": " + numbers[size_t(i)] + (i + 1 < entries ? "; " : ""), Role::Prompt);
        e.add(CopyVocab::Sep, Role::Separator);
        addText(e, names[size_t(asked)] + ": ", Role::Query);
        addText(e, numbers[size_t(asked)], Role::Answer);
        e.add(CopyVocab::Eos, Role::End);
        return e;
    }
    int maxTokens(int entries) const override
    {
        const int line = 2 * m_longest + 1 + 2 + kDigits + 2;  // "First Last: digits; "
        return 1 + entries * line + 1 + line + 1;
    }

private:
    QStringList m_first, m_last;
    int m_longest = 0;
};

}  // namespace

TokenTask::TokenTask(const TaskConfig& config, QStringList symbols)
    : m_config(config), m_symbols(std::move(symbols)), m_readOut(isReadOutTask(config.kind))
{
}

std::unique_ptr<TokenTask> TokenTask::create(const TaskConfig& c)
{
    const TaskInfo* info = findTask(c.kind);
    if (isTextTask(c.kind))
        throw Error("task.kind: \"text\" is a pretrained language model's own text; such a model is not trained here: use "
                    "`parrotscope generate`, `parrotscope lm-eval` or the Pretrained tab");
    if (!info) {
        throw Error(QString("task.kind: unknown task \"%1\" (expected one of %2)").arg(c.kind, taskIds().join(", ")));
    }
    if (info->vectors)
        throw Error(QString("task.kind: \"%1\" is an in-context-learning task on vectors, not tokens").arg(c.kind));
    if (!info->characters && (c.vocabSize < 2 || c.vocabSize > 1024))
        throw Error(QString("task.vocab_size: expected 2..1024, got %1").arg(c.vocabSize));
    if (c.minLen < 1 || c.maxLen < c.minLen)
        throw Error(QString("task.min_len/max_len: expected 1 <= min_len <= max_len, got %1 and %2").arg(c.minLen).arg(c.maxLen));
    // Each catalogue token task's generator; a task in the catalogue without one is refused, never
    // built as another task.
    using Make = std::unique_ptr<TokenTask> (*)(const TaskConfig&);
    static const std::map<QString, Make> generators{
        {"copy", [](const TaskConfig& c) -> std::unique_ptr<TokenTask> { return std::make_unique<CopyTask>(c); }},
        {"prefix_ngram", [](const TaskConfig& c) -> std::unique_ptr<TokenTask> { return std::make_unique<NgramLookupTask>(c, false); }},
        {"suffix_ngram", [](const TaskConfig& c) -> std::unique_ptr<TokenTask> { return std::make_unique<NgramLookupTask>(c, true); }},
        {"copy_dup_ngram", [](const TaskConfig& c) -> std::unique_ptr<TokenTask> { return std::make_unique<DupNgramCopyTask>(c); }},
        {"text_copy", [](const TaskConfig& c) -> std::unique_ptr<TokenTask> { return std::make_unique<TextCopyTask>(c); }},
        {"phonebook", [](const TaskConfig& c) -> std::unique_ptr<TokenTask> { return std::make_unique<PhonebookTask>(c); }},
        {"mqar", [](const TaskConfig& c) -> std::unique_ptr<TokenTask> { return std::make_unique<MqarTask>(c); }},
    };
    std::unique_ptr<TokenTask> t;
    if (isMadTask(c.kind)) {
        t = makeMadTask(c);
    } else {
        const auto g = generators.find(c.kind);
        if (g == generators.end()) throw Error(QString("task.kind: \"%1\" has no token generator").arg(c.kind));
        t = g->second(c);
    }
    for (int d : {c.minLen, c.maxLen}) {
        const QString problem = t->checkDifficulty(d);
        if (!problem.isEmpty()) throw Error(QString("task.%1: %2").arg(d == c.minLen ? "min_len" : "max_len", problem));
    }
    const int need = t->maxTokens(c.maxLen);
    if (c.contextLen < need || c.contextLen > 65536)
        throw Error(QString("task.context_len: expected room for one example at max_len %1 (%2 tokens) and at most 65536, got %3")
                        .arg(c.maxLen).arg(need).arg(c.contextLen));
    return t;
}

QString TokenTask::checkDifficulty(int difficulty) const
{
    return difficulty >= 1 ? QString() : QString("%1 %2: expected >= 1").arg(findTask(m_config.kind)->difficulty).arg(difficulty);
}

QString TokenTask::text(int id) const
{
    switch (id) {
    case CopyVocab::Pad: return "_";
    case CopyVocab::Bos: return "$";
    case CopyVocab::Sep: return "|";
    case CopyVocab::Eos: return ".";
    default: break;
    }
    const int i = id - 4;
    return i >= 0 && i < m_symbols.size() ? m_symbols[i] : QString("<?%1>").arg(id);
}

QString TokenTask::text(const std::vector<int>& ids, const QString& sep) const
{
    QStringList parts;
    for (int id : ids) parts << text(id);
    return parts.join(sep);
}

Example TokenTask::example(std::mt19937_64& rng) const
{
    return example(uniform(rng, m_config.minLen, m_config.maxLen), rng);
}

Example TokenTask::trainingExample(std::mt19937_64& rng) const
{
    if (m_config.trainExamples <= 0) return example(rng);
    // A fixed training set of train_examples: example i always comes from the same generator.
    const auto i = std::uniform_int_distribution<long long>(0, m_config.trainExamples - 1)(rng);
    std::mt19937_64 own(0x5EEDF00DULL ^ (static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ULL));
    return example(own);
}

std::vector<int> TokenTask::modelInput(const Example& e) const
{
    std::vector<int> input = e.tokens;
    for (size_t i = 0; i < input.size(); ++i)
        if (hides(e, int(i))) input[i] = CopyVocab::Pad;
    return input;
}

TokenBatch TokenTask::trainBatch(int batch, std::mt19937_64& rng) const
{
    const int T = m_config.contextLen;
    TokenBatch b;
    b.batch = batch;
    b.length = T;
    b.input.resize(size_t(batch) * T);
    b.target.resize(size_t(batch) * T);
    b.mask.assign(size_t(batch) * T, 0);
    const int shift = m_readOut ? 0 : 1;          // position t is scored on token t + shift
    std::vector<int> row(size_t(T) + 1);
    std::vector<uint8_t> scored(size_t(T) + 1);  // token i is an answer or the end of a complete example
    std::vector<uint8_t> hidden(size_t(T) + 1);  // token i is an answer the model does not read back
    for (int r = 0; r < batch; ++r) {
        int pos = 0;
        if (!packed()) {  // one example, then padding
            std::fill(row.begin(), row.end(), int(CopyVocab::Pad));
            std::fill(scored.begin(), scored.end(), uint8_t(0));
            std::fill(hidden.begin(), hidden.end(), uint8_t(0));
        }
        while (pos < T + 1) {
            if (!packed() && pos > 0) break;
            const Example ex = trainingExample(rng);
            const int n = int(ex.tokens.size());
            const bool complete = pos + n <= T + shift;
            for (int i = 0; i < n && pos + i < T + 1; ++i) {
                row[size_t(pos + i)] = ex.tokens[size_t(i)];
                scored[size_t(pos + i)] = complete && (ex.roles[size_t(i)] == Role::Answer || ex.roles[size_t(i)] == Role::End);
                hidden[size_t(pos + i)] = hides(ex, i);
            }
            b.examples += complete;
            pos += n;
        }
        for (int t = 0; t < T; ++t) {
            b.input[size_t(r) * T + t] = hidden[size_t(t)] ? int(CopyVocab::Pad) : row[size_t(t)];
            b.target[size_t(r) * T + t] = row[size_t(t + shift)];
            b.mask[size_t(r) * T + t] = scored[size_t(t + shift)];
        }
    }
    return b;
}

TokenBatch TokenTask::evalBatch(int difficulty, int batch, std::mt19937_64& rng) const
{
    const QString problem = checkDifficulty(difficulty);
    if (!problem.isEmpty()) throw Error(problem);
    const int shift = m_readOut ? 0 : 1;  // as in trainBatch
    std::vector<Example> rows;
    int longest = 0;
    for (int r = 0; r < batch; ++r) {
        rows.push_back(evalExample(difficulty, rng));
        longest = std::max(longest, int(rows.back().tokens.size()) - shift);
    }
    TokenBatch b;
    b.batch = batch;
    b.length = longest;
    b.examples = batch;
    b.input.assign(size_t(batch) * longest, CopyVocab::Pad);
    b.target.assign(size_t(batch) * longest, CopyVocab::Pad);
    b.mask.assign(size_t(batch) * longest, 0);
    for (int r = 0; r < batch; ++r) {
        const Example& ex = rows[size_t(r)];
        for (int t = 0; t + shift < int(ex.tokens.size()); ++t) {
            b.input[size_t(r) * longest + t] = hides(ex, t) ? int(CopyVocab::Pad) : ex.tokens[size_t(t)];
            b.target[size_t(r) * longest + t] = ex.tokens[size_t(t + shift)];
            b.mask[size_t(r) * longest + t] = ex.roles[size_t(t + shift)] == Role::Answer;
        }
    }
    return b;
}

QStringList resourceLines(const QString& name)
{
    QFile f(":/data/" + name);
    if (!f.open(QIODevice::ReadOnly)) throw Error(QString("missing bundled resource %1").arg(name));
    QStringList out;
    for (const QString& line : QString::fromUtf8(f.readAll()).split('\n')) {
        const QString t = line.trimmed();
        if (!t.isEmpty() && !t.startsWith('#')) out << t;
    }
    return out;
}

int taskVocabSize(const TaskConfig& config)
{
    const TaskInfo* info = findTask(config.kind);
    if (info && info->vectors) return 0;  // read in and out through linear layers
    if (isTextTask(config.kind)) return config.vocabSize;  // its tokenizer's ids, no specials of ours
    if (info && info->characters) return 4 + int(characters().size());
    if (isMadTask(config.kind)) return CopyVocab{config.vocabSize}.size() + std::max(0, config.noiseVocab);  // letters, then noise
    return CopyVocab{config.vocabSize}.size();
}

}  // namespace parrot
