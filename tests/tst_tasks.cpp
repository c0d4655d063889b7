// Every token task: the formats of both papers' generators, determinism, uniqueness of lookup
// keys, masks only on answers, and clear errors for what cannot be generated.
#include "base/error.h"
#include "base/tasks/madtasks.h"
#include "base/tasks/taskcatalog.h"
#include "base/tasks/tokentask.h"

#include <QtTest>

#include <map>
#include <set>

using namespace parrot;

namespace {

TaskConfig smallTask(const QString& kind = "copy")
{
    TaskConfig t;
    t.kind = kind;
    t.vocabSize = 5;
    t.minLen = 2;
    t.maxLen = 6;
    t.contextLen = 40;
    return t;
}

std::unique_ptr<TokenTask> make(const TaskConfig& t) { return TokenTask::create(t); }

// The token ids of the roles, in order.
std::vector<int> withRole(const Example& e, Role r)
{
    std::vector<int> out;
    for (size_t i = 0; i < e.tokens.size(); ++i)
        if (e.roles[i] == r) out.push_back(e.tokens[i]);
    return out;
}

QString textOf(const TokenTask& t, const std::vector<int>& ids) { return t.text(ids, "").replace(QString::fromUtf8("\u2423"), " "); }

// A config for each task that fits its examples.
TaskConfig configFor(const QString& kind)
{
    if (isMadTask(kind)) {  // MAD's own settings, shrunk: sequences of 16-32 tokens
        TaskConfig t = taskDefaults(kind);
        t.minLen = 16;
        t.maxLen = 32;
        t.contextLen = 40;
        t.motif = 2;
        t.copyTokens = 4;
        if (kind == "mad_memorization") t.vocabSize = 64;
        return t;
    }
    TaskConfig t = smallTask(kind);
    t.vocabSize = 16;
    t.ngram = 2;
    t.minLen = kind == "phonebook" || kind == "mqar" ? 2 : 5;
    t.maxLen = kind == "phonebook" ? 4 : 8;
    t.contextLen = kind == "phonebook" ? 200 : 64;
    return t;
}

}  // namespace

class TestTasks : public QObject {
    Q_OBJECT
private slots:
    void exampleHasThePapersFormat()
    {
        const auto taskPtr = make(smallTask());
        const TokenTask& task = *taskPtr;
        std::mt19937_64 rng(1);
        for (int i = 0; i < 200; ++i) {
            const std::vector<int> ex = task.example(rng).tokens;
            const int L = (int(ex.size()) - 3) / 2;
            QCOMPARE(int(ex.size()), 2 * L + 3);
            QCOMPARE(ex.front(), CopyVocab::Bos);
            QCOMPARE(ex[L + 1], CopyVocab::Sep);
            QCOMPARE(ex.back(), CopyVocab::Eos);
            for (int j = 0; j < L; ++j) {
                QVERIFY(CopyVocab{5}.isLetter(ex[1 + j]));
                QCOMPARE(ex[L + 2 + j], ex[1 + j]);
            }
        }
    }

    void lengthsCoverTheRangeUniformly()
    {
        const auto task = make(smallTask());
        std::mt19937_64 rng(7);
        std::map<int, int> counts;
        const int n = 5000;
        for (int i = 0; i < n; ++i) ++counts[(int(task->example(rng).tokens.size()) - 3) / 2];
        QCOMPARE(int(counts.size()), 5);
        QCOMPARE(counts.begin()->first, 2);
        QCOMPARE(counts.rbegin()->first, 6);
        for (auto [len, c] : counts) QVERIFY2(std::abs(c - n / 5) < n / 5 * 0.15, qPrintable(QString::number(len)));
    }

    void lettersAreUniform()
    {
        const auto task = make(smallTask());
        std::mt19937_64 rng(3);
        std::map<int, int> counts;
        int total = 0;
        for (int i = 0; i < 3000; ++i) {
            const auto ex = task->example(6, rng).tokens;
            for (int j = 1; j <= 6; ++j, ++total) ++counts[ex[j]];
        }
        QCOMPARE(int(counts.size()), 5);
        for (auto [id, c] : counts) QVERIFY(std::abs(c - total / 5) < total / 5 * 0.1);
    }

    void vocabularyText()
    {
        const CopyVocab v{26};
        QCOMPARE(v.size(), 30);
        QCOMPARE(v.text(CopyVocab::Bos), QString("$"));
        QCOMPARE(v.text(CopyVocab::Sep), QString("|"));
        QCOMPARE(v.text(CopyVocab::Eos), QString("."));
        QCOMPARE(v.text(CopyVocab::FirstLetter), QString("a"));
        QCOMPARE(v.text(CopyVocab::FirstLetter + 25), QString("z"));
        QCOMPARE(v.text({1, 4, 5, 2, 4, 5, 3}, ""), QString("$ab|ab."));
    }

    void packedRowsAreBackToBackExamplesWithAnswerMasks()
    {
        const TaskConfig cfg = smallTask();
        const auto task = make(cfg);
        std::mt19937_64 rng(11);
        const TokenBatch b = task->trainBatch(64, rng);
        QCOMPARE(b.batch, 64);
        QCOMPARE(b.length, cfg.contextLen);
        int complete = 0;
        for (int r = 0; r < b.batch; ++r) {
            const int T = b.length;
            // Rebuild the row of T + 1 tokens from input and the last target.
            std::vector<int> row(T + 1);
            for (int t = 0; t < T; ++t) {
                row[t] = int(b.input[size_t(r) * T + t]);
                if (t > 0) QCOMPARE(int(b.target[size_t(r) * T + t - 1]), row[t]);
            }
            row[T] = int(b.target[size_t(r) * T + T - 1]);
            QCOMPARE(row[0], CopyVocab::Bos);
            // Walk the examples: every one starts where the previous ended.
            int pos = 0;
            while (pos <= T) {
                QCOMPARE(row[pos], CopyVocab::Bos);
                int sep = pos + 1;
                while (sep <= T && row[sep] != CopyVocab::Sep) ++sep;
                const int L = sep - pos - 1;
                QVERIFY(L >= 1 || sep > T);
                const int end = pos + 2 * L + 2;  // index of this example's EOS
                const bool fits = end <= T;
                for (int i = pos; i <= std::min(end, T); ++i) {
                    // mask[t] scores target t, which is row[t + 1]
                    const bool scored = i >= 1 && b.mask[size_t(r) * T + i - 1];
                    const bool isAnswer = i >= sep + 1 && i <= end;
                    if (!fits) QVERIFY2(!scored, "a cut example must be masked entirely");
                    else QCOMPARE(scored, isAnswer);
                    if (fits && i > sep && i < end) QCOMPARE(row[i], row[i - L - 1]);
                }
                if (fits) {
                    QVERIFY(L >= cfg.minLen && L <= cfg.maxLen);
                    QCOMPARE(row[end], CopyVocab::Eos);
                    ++complete;
                } else {
                    QVERIFY(end > T);
                }
                pos = end + 1;
            }
        }
        QCOMPARE(b.examples, complete);
        QVERIFY(complete >= 64 * 2);  // rows of 41 tokens hold at least two examples of length <= 6 most of the time
    }

    void sameSeedSameData_data()
    {
        QTest::addColumn<QString>("kind");
        for (const TaskInfo& t : taskCatalog())
            if (!t.vectors) QTest::newRow(qPrintable(t.id)) << t.id;
    }
    void sameSeedSameData()
    {
        QFETCH(QString, kind);
        const auto task = make(configFor(kind));
        std::mt19937_64 a(42), b(42), c(43);
        const TokenBatch x = task->trainBatch(8, a), y = task->trainBatch(8, b), z = task->trainBatch(8, c);
        QCOMPARE(x.input, y.input);
        QCOMPARE(x.mask, y.mask);
        QVERIFY(x.input != z.input);
    }

    // Training scores answers and their end token; evaluation the answers alone; both only
    // where the role says so, and evaluation rows hold one example each. Position t is scored on
    // the next token, or on its own token for a read-out task (MAD's compression).
    void masksAreOnAnswersOnly_data() { sameSeedSameData_data(); }
    void masksAreOnAnswersOnly()
    {
        QFETCH(QString, kind);
        const TaskConfig cfg = configFor(kind);
        const auto task = make(cfg);
        QCOMPARE(task->readsOut(), kind == "mad_compression");
        const size_t shift = task->readsOut() ? 0 : 1;
        std::mt19937_64 rng(9), replay(9);
        const int d = cfg.maxLen;
        const TokenBatch e = task->evalBatch(d, 6, rng);
        for (int r = 0; r < 6; ++r) {
            const Example ex = task->evalExample(d, replay);  // the same draws, in order
            QVERIFY(ex.answers() >= 1);
            QCOMPARE(ex.tokens.size(), ex.roles.size());
            const std::vector<int> input = task->modelInput(ex);  // the tokens, or filler at answers not read back
            for (int t = 0; t < e.length; ++t) {
                const size_t i = size_t(r) * e.length + t;
                const bool inside = size_t(t) + shift < ex.tokens.size();
                QCOMPARE(int(e.input[i]), inside ? input[size_t(t)] : CopyVocab::Pad);
                QCOMPARE(bool(e.mask[i]), inside && ex.roles[size_t(t) + shift] == Role::Answer);
                if (inside) QCOMPARE(int(e.target[i]), ex.tokens[size_t(t) + shift]);
            }
        }
        const TokenBatch b = task->trainBatch(4, rng);
        int scored = 0;
        for (uint8_t m : b.mask) scored += m;
        QVERIFY(scored > 0);
        QVERIFY(b.examples >= 1 || kind == "phonebook");
    }

    // MAD's tasks: one sequence a training row (then padding, never scored), and a fixed
    // training set when train_examples is set (only that many different rows), fresh otherwise.
    void madRowsHoldOneSequenceFromAFixedSet()
    {
        for (const QString& kind :
             {QString("mad_recall"), QString("mad_selective_copy"), QString("mad_memorization"), QString("mad_compression")}) {
            TaskConfig cfg = configFor(kind);
            cfg.minLen = 16;
            cfg.maxLen = 24;
            cfg.trainExamples = 3;
            const auto task = make(cfg);
            QVERIFY(!task->packed());
            std::mt19937_64 rng(1);
            const TokenBatch b = task->trainBatch(40, rng);
            std::set<std::vector<int64_t>> rows;
            for (int r = 0; r < b.batch; ++r) {
                const auto row = b.input.begin() + ptrdiff_t(r) * b.length;
                QCOMPARE(int(row[0]), CopyVocab::Bos);
                QCOMPARE(int(std::count(row, row + b.length, int64_t(CopyVocab::Bos))), 1);  // one sequence
                // past the sequence only padding, never scored
                int last = b.length - 1;
                while (last > 0 && row[last] == CopyVocab::Pad) --last;
                for (int t = last + 1; t < b.length; ++t) QVERIFY(!b.mask[size_t(r) * b.length + t]);
                rows.insert(std::vector<int64_t>(row, row + b.length));
            }
            QVERIFY2(rows.size() <= 3, qPrintable(kind));
            QCOMPARE(b.examples, 40);
            cfg.trainExamples = 0;
            const TokenBatch fresh = make(cfg)->trainBatch(40, rng);
            std::set<std::vector<int64_t>> freshRows;
            for (int r = 0; r < fresh.batch; ++r)
                freshRows.insert(std::vector<int64_t>(fresh.input.begin() + ptrdiff_t(r) * fresh.length,
                                                      fresh.input.begin() + ptrdiff_t(r + 1) * fresh.length));
            QVERIFY2(freshRows.size() > 30, qPrintable(kind));
        }
    }

    // In-context recall (MAD, multi-query): keys from the first half, values from the second,
    // a key's value fixed in the sequence; exactly the values of keys seen before are answers,
    // and the last pair asks for one. With noise, noise tokens fill about that share of the pairs
    // and are never answers.
    void madRecallAnswersRepeatedKeys()
    {
        for (const double noise : {0.0, 0.4}) {
            TaskConfig cfg = configFor(noise > 0 ? "mad_noisy_recall" : "mad_recall");
            cfg.noiseFraction = noise;
            cfg.noiseVocab = 16;
            const auto task = make(cfg);
            QCOMPARE(task->vocabSize(), 4 + 16 + 16);
            QCOMPARE(taskVocabSize(cfg), task->vocabSize());
            std::mt19937_64 rng(3);
            int noisePairs = 0, pairs = 0;
            for (int i = 0; i < 300; ++i) {
                const Example e = task->example(32, rng);
                QCOMPARE(int(e.tokens.size()), 33);
                std::map<int, int> value;
                for (size_t t = 1; t < e.tokens.size(); t += 2) {
                    const int k = e.tokens[t] - 4, v = e.tokens[t + 1] - 4;
                    ++pairs;
                    if (k >= 16) {  // noise: both tokens from the noise vocabulary, not scored
                        QVERIFY(v >= 16 && e.roles[t] == Role::Pad && e.roles[t + 1] == Role::Pad);
                        ++noisePairs;
                        continue;
                    }
                    QVERIFY(k < 8 && v >= 8 && v < 16);
                    const bool seen = value.count(k) > 0;
                    if (seen) QCOMPARE(v, value[k]);
                    value[k] = v;
                    QCOMPARE(e.roles[t + 1] == Role::Answer, seen);
                }
                QCOMPARE(e.roles.back(), Role::Answer);  // the last pair repeats a key
                QVERIFY(e.answers() >= 1);
            }
            const double share = double(noisePairs) / pairs;
            QVERIFY2(std::abs(share - noise * 15.0 / 16) < 0.05, qPrintable(QString::number(share)));  // one slot a sequence is kept
        }
    }

    // Fuzzy recall: keys and values of 1..motif distinct tokens, split by their halves of the
    // alphabet; the repeated key's value is answered; evaluation asks with keys of `motif` tokens.
    void madFuzzyRecallMotifs()
    {
        TaskConfig cfg = configFor("mad_fuzzy_recall");
        cfg.motif = 3;
        const auto task = make(cfg);
        std::mt19937_64 rng(4);
        for (const bool evaluation : {false, true}) {
            std::set<size_t> keySizes;
            for (int i = 0; i < 200; ++i) {
                const Example e = evaluation ? task->evalExample(32, rng) : task->example(32, rng);
                QVERIFY(int(e.tokens.size()) <= 33);
                // split into key and value runs
                std::vector<std::vector<int>> runs;
                std::vector<bool> isKey;
                for (size_t t = 1; t < e.tokens.size(); ++t) {
                    const bool key = e.tokens[t] - 4 < 8;
                    if (runs.empty() || isKey.back() != key || (key && runs.back().size() == 3)) {
                        runs.emplace_back();
                        isKey.push_back(key);
                    }
                    runs.back().push_back(e.tokens[t]);
                }
                std::map<std::vector<int>, std::vector<int>> value;
                for (size_t r = 0; r + 1 < runs.size(); r += 2) {
                    QVERIFY(isKey[r] && !isKey[r + 1]);
                    keySizes.insert(runs[r].size());
                    QCOMPARE(std::set<int>(runs[r].begin(), runs[r].end()).size(), runs[r].size());  // distinct tokens
                    if (value.count(runs[r])) QCOMPARE(runs[r + 1], value[runs[r]]);
                    value[runs[r]] = runs[r + 1];
                }
                const std::vector<int> answers = withRole(e, Role::Answer);
                QVERIFY(!answers.empty());
                QVERIFY(std::equal(runs.back().begin(), runs.back().end(), answers.end() - ptrdiff_t(runs.back().size())));
            }
            const std::set<size_t> expected = evaluation ? std::set<size_t>{3} : std::set<size_t>{1, 2, 3};
            QVERIFY(keySizes == expected);
        }
    }

    // Selective copying: the letters among the blanks are answered in order after `|`;
    // memorization: every key's value is the same in every sequence and task, keys do not repeat.
    void madSelectiveCopyAndMemorization()
    {
        TaskConfig cfg = configFor("mad_selective_copy");
        cfg.copyTokens = 5;
        const auto copy = make(cfg);
        std::mt19937_64 rng(5);
        for (int i = 0; i < 100; ++i) {
            const Example e = copy->example(24, rng);
            QCOMPARE(int(e.tokens.size()), 25);
            QCOMPARE(withRole(e, Role::Answer), withRole(e, Role::Prompt));
            QCOMPARE(int(withRole(e, Role::Answer).size()), 5);
            QCOMPARE(int(withRole(e, Role::Pad).size()), 24 - 2 * 5 - 1);
            QCOMPARE(e.tokens[size_t(24 - 5)], int(CopyVocab::Sep));
        }
        QVERIFY(!copy->checkDifficulty(11).isEmpty());  // 2 x 5 + 2 = 12 at least

        TaskConfig mc = configFor("mad_memorization");
        const auto a = make(mc), b = make(mc);
        std::map<int, int> value;
        std::mt19937_64 ra(6), rb(7);
        for (int i = 0; i < 100; ++i)
            for (const Example& e : {a->example(32, ra), b->example(32, rb)}) {
                const std::vector<int> keys = withRole(e, Role::Query), values = withRole(e, Role::Answer);
                QCOMPARE(int(keys.size()), 16);
                QCOMPARE(std::set<int>(keys.begin(), keys.end()).size(), keys.size());
                for (size_t k = 0; k < keys.size(); ++k) {
                    QVERIFY(keys[k] - 4 < 32 && values[k] - 4 >= 32);
                    const auto [it, fresh] = value.emplace(keys[k], values[k]);
                    QCOMPARE(it->second, values[k]);  // one map for every sequence and task
                }
            }
        QCOMPARE(int(value.size()), 32);  // every key was seen
        QVERIFY(!a->checkDifficulty(66).isEmpty());  // 33 keys of 32
    }

    // Compression: length - 1 letters (a noise_fraction share of them noise tokens, never scored)
    // and `|`; a training row is its own target, scored at the letters, the read token last.
    void madCompressionIsReadBackFromItsLastToken()
    {
        for (const double noise : {0.0, 0.3}) {
            TaskConfig cfg = configFor("mad_compression");
            cfg.noiseFraction = noise;
            cfg.noiseVocab = 8;
            const auto task = make(cfg);
            QCOMPARE(task->vocabSize(), 4 + 16 + 8);
            QCOMPARE(taskVocabSize(cfg), task->vocabSize());
            std::mt19937_64 rng(8);
            int noisy = 0, letters = 0;
            for (int i = 0; i < 200; ++i) {
                const Example e = task->example(24, rng);
                QCOMPARE(int(e.tokens.size()), 25);
                QCOMPARE(e.tokens.front(), int(CopyVocab::Bos));
                QCOMPARE(e.tokens.back(), int(CopyVocab::Sep));
                for (size_t t = 1; t + 1 < e.tokens.size(); ++t) {
                    const int s = e.tokens[t] - 4;
                    QCOMPARE(e.roles[t], s < 16 ? Role::Answer : Role::Pad);
                    QVERIFY(s >= 0 && s < 16 + 8);
                    ++(s < 16 ? letters : noisy);
                }
            }
            const double share = double(noisy) / (noisy + letters);
            QVERIFY2(std::abs(share - noise) < 0.03, qPrintable(QString::number(share)));
            const TokenBatch b = task->trainBatch(16, rng);
            for (int r = 0; r < b.batch; ++r) {
                const size_t row = size_t(r) * b.length;
                int last = b.length - 1;
                while (b.input[row + last] == CopyVocab::Pad) --last;
                QCOMPARE(int(b.input[row + last]), int(CopyVocab::Sep));  // one sequence, `|` last
                for (int t = 0; t < b.length; ++t) {
                    const int s = int(b.input[row + t]) - 4;
                    QCOMPARE(b.target[row + t], b.input[row + t]);
                    QCOMPARE(bool(b.mask[row + t]), t < last && s >= 0 && s < 16);
                }
            }
        }
        QVERIFY(!make(configFor("mad_compression"))->checkDifficulty(1).isEmpty());
    }

    void ngramLookupKeysAreUniqueAndAnswersFollowThem_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("answerLen");
        QTest::newRow("prefix, rest") << "prefix_ngram" << 0;
        QTest::newRow("prefix, k=2") << "prefix_ngram" << 2;
        QTest::newRow("suffix, rest") << "suffix_ngram" << 0;
        QTest::newRow("suffix, k=1") << "suffix_ngram" << 1;
    }
    void ngramLookupKeysAreUniqueAndAnswersFollowThem()
    {
        QFETCH(QString, kind);
        QFETCH(int, answerLen);
        TaskConfig cfg = configFor(kind);
        cfg.ngram = 3;
        cfg.vocabSize = 4;
        cfg.answerLen = answerLen;
        const auto task = make(cfg);
        std::mt19937_64 rng(2);
        for (int i = 0; i < 300; ++i) {
            const Example e = task->example(rng);
            const std::vector<int> s = withRole(e, Role::Prompt), g = withRole(e, Role::Query), ans = withRole(e, Role::Answer);
            QCOMPARE(int(g.size()), 3);
            if (answerLen > 0) QCOMPARE(int(ans.size()), answerLen);
            int at = -1, count = 0;
            for (size_t k = 0; k + 3 <= s.size(); ++k)
                if (std::equal(g.begin(), g.end(), s.begin() + long(k))) { at = int(k); ++count; }
            QCOMPARE(count, 1);
            QVERIFY(std::equal(ans.begin(), ans.end(), s.begin() + at + 3));
            if (answerLen == 0) QCOMPARE(int(ans.size()), int(s.size()) - at - 3);
            // the order of the parts
            const QString pattern = kind == "prefix_ngram" ? "$ g | s | a ." : "$ s | g a .";
            QStringList parts;
            Role last = Role::Pad;
            for (size_t k = 0; k < e.roles.size(); ++k) {
                if (e.roles[k] == Role::Separator || e.roles[k] == Role::End) parts << task->text(e.tokens[k]);
                else if (e.roles[k] != last) parts << (e.roles[k] == Role::Prompt ? "s" : e.roles[k] == Role::Query ? "g" : "a");
                last = e.roles[k];
            }
            QCOMPARE(parts.join(' '), pattern);
        }
    }

    void duplicatedNgramOccursTwice()
    {
        TaskConfig cfg = configFor("copy_dup_ngram");
        cfg.ngram = 3;
        cfg.minLen = 6;  // room for two non-overlapping 3-grams
        const auto task = make(cfg);
        std::mt19937_64 rng(4);
        for (int i = 0; i < 200; ++i) {
            const Example e = task->example(8, rng);
            const std::vector<int> s = withRole(e, Role::Prompt);
            QCOMPARE(withRole(e, Role::Answer), s);
            bool twice = false;
            for (size_t a = 0; a + 3 <= s.size() && !twice; ++a)
                for (size_t b = a + 3; b + 3 <= s.size() && !twice; ++b)
                    twice = std::equal(s.begin() + long(a), s.begin() + long(a + 3), s.begin() + long(b));
            QVERIFY(twice);
        }
    }

    void textCopySpansComeFromTheBundledText()
    {
        QFile f(":/data/english.txt");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString source = QString::fromUtf8(f.readAll()).simplified();
        for (bool shuffle : {false, true}) {
            TaskConfig cfg = configFor("text_copy");
            cfg.shuffleWords = shuffle;
            cfg.maxLen = 40;
            cfg.contextLen = 90;
            const auto task = make(cfg);
            QCOMPARE(task->vocabSize(), taskVocabSize(cfg));
            std::mt19937_64 rng(6);
            for (int i = 0; i < 50; ++i) {
                const Example e = task->example(40, rng);
                const QString span = textOf(*task, withRole(e, Role::Prompt));
                QCOMPARE(span.size(), 40);
                QCOMPARE(withRole(e, Role::Answer), withRole(e, Role::Prompt));
                if (!shuffle) QVERIFY2(source.contains(span), qPrintable(span));
                // shuffled or not, every whole word is one of the text's
                const QStringList words = span.split(' ', Qt::SkipEmptyParts);
                for (int w = 1; w + 1 < words.size(); ++w) QVERIFY2(source.contains(words[w]), qPrintable(words[w]));
            }
        }
    }

    void phonebookAnswersTheQueriedNumber()
    {
        const TaskConfig cfg = configFor("phonebook");
        const auto task = make(cfg);
        std::mt19937_64 rng(8);
        for (int i = 0; i < 100; ++i) {
            const Example e = task->example(4, rng);
            const QString book = textOf(*task, withRole(e, Role::Prompt));
            const QString query = textOf(*task, withRole(e, Role::Query));
            const QString number = textOf(*task, withRole(e, Role::Answer));
            QCOMPARE(book.split("; ").size(), 4);
            QVERIFY(QRegularExpression("^[0-9]{10}$").match(number).hasMatch());
            QVERIFY2(QRegularExpression("^[A-Z][a-z]+ [A-Z][a-z]+: $").match(query).hasMatch(), qPrintable(query));
            QVERIFY2(book.contains(query + number), qPrintable(book + " / " + query));
            QCOMPARE(book.count(query), 1);  // names are distinct
        }
    }

    void associativeRecallAnswersEachKeysValue()
    {
        TaskConfig cfg = configFor("mqar");
        const auto task = make(cfg);
        std::mt19937_64 rng(10);
        for (int i = 0; i < 200; ++i) {
            const Example e = task->example(6, rng);
            const std::vector<int> kv = withRole(e, Role::Prompt), q = withRole(e, Role::Query), a = withRole(e, Role::Answer);
            QCOMPARE(int(kv.size()), 12);
            std::map<int, int> value;
            for (size_t k = 0; k < kv.size(); k += 2) {
                QVERIFY(kv[k] - 4 < 8 && kv[k + 1] - 4 >= 8);  // keys in the first half, values in the second
                QVERIFY(value.emplace(kv[k], kv[k + 1]).second);  // distinct keys
            }
            QCOMPARE(std::set<int>(q.begin(), q.end()).size(), size_t(6));  // every key asked once
            for (size_t k = 0; k < q.size(); ++k) QCOMPARE(a[k], value[q[k]]);
            int run = 0;
            for (Role r : e.roles) {
                run = r == Role::Pad ? run + 1 : 0;
                QVERIFY(run <= 3);
            }
        }
    }

    // Zoology's layout: one example a row, and the model never reads an answer: where a value was asked
    // for it reads filler, so the values already given cannot be ruled out. Training, evaluation and
    // modelInput() agree on it; the targets are still the values.
    void associativeRecallHidesItsAnswersFromTheInput()
    {
        const auto task = make(configFor("mqar"));
        QVERIFY(!task->packed());
        QVERIFY(!task->readsAnswersBack());
        std::mt19937_64 rng(11);
        const Example e = task->example(6, rng);
        const std::vector<int> input = task->modelInput(e);
        QCOMPARE(input.size(), e.tokens.size());
        for (size_t i = 0; i < input.size(); ++i)
            QCOMPARE(input[i], e.roles[i] == Role::Answer ? int(CopyVocab::Pad) : e.tokens[i]);
        const auto check = [](const TokenBatch& b, bool oneExampleARow) {
            int answers = 0;
            for (int r = 0; r < b.batch; ++r) {
                int starts = 0;
                for (int t = 0; t < b.length; ++t) {
                    const size_t i = size_t(r) * b.length + t;
                    starts += b.input[i] == CopyVocab::Bos;
                    if (!b.mask[i]) continue;
                    ++answers;
                    QVERIFY(b.target[i] - 4 >= 8);  // a value is asked for ...
                    if (t + 1 < b.length) QCOMPARE(int(b.input[i + 1]), int(CopyVocab::Pad));  // ... and never read
                }
                if (oneExampleARow) QCOMPARE(starts, 1);
            }
            QVERIFY(answers > 0);
        };
        check(task->trainBatch(16, rng), true);
        check(task->evalBatch(6, 16, rng), true);
        QVERIFY(make(configFor("copy"))->readsAnswersBack());  // the copy tasks read their answers, as a language model does
    }

    void impossibleRequestsAreClearErrors()
    {
        // MAD's knobs out of range name the field
        const auto refused = [](TaskConfig t, const char* field) {
            try {
                make(t);
            } catch (const Error& e) {
                return e.message().contains(field);
            }
            return false;
        };
        TaskConfig noisy = configFor("mad_noisy_recall");
        noisy.noiseFraction = 1.0;
        QVERIFY(refused(noisy, "task.noise_fraction"));
        noisy.noiseFraction = 0.3;
        noisy.noiseVocab = 0;
        QVERIFY(refused(noisy, "task.noise_vocab"));
        TaskConfig compression = configFor("mad_compression");
        compression.noiseFraction = -0.1;
        QVERIFY(refused(compression, "task.noise_fraction"));
        compression.noiseFraction = 0;
        compression.vocabSize = 1;
        QVERIFY(refused(compression, "task.vocab_size"));
        TaskConfig fuzzy = configFor("mad_fuzzy_recall");
        fuzzy.motif = 9;
        QVERIFY(refused(fuzzy, "task.motif"));
        TaskConfig copy = configFor("mad_selective_copy");
        copy.copyTokens = 10;
        QVERIFY(refused(copy, "task.min_len"));  // 16 tokens cannot hold 10 letters twice
        copy.copyTokens = 4;
        copy.trainExamples = -1;
        QVERIFY(refused(copy, "task.train_examples"));
        TaskConfig t = smallTask();
        t.contextLen = 10;  // max_len 6 needs 15
        QVERIFY_THROWS_EXCEPTION(Error, make(t));
        TaskConfig u = smallTask("sorting");
        try {
            make(u);
            QFAIL("unknown task accepted");
        } catch (const Error& e) {
            QVERIFY(e.message().contains("task.kind") && e.message().contains("mqar"));
        }
        TaskConfig n = configFor("suffix_ngram");
        n.vocabSize = 2;
        n.ngram = 1;
        n.maxLen = 30;
        const auto lookup = make(n);
        std::mt19937_64 rng(1);
        QVERIFY_THROWS_EXCEPTION(Error, lookup->example(30, rng));  // no letter occurs exactly once
        TaskConfig m = configFor("mqar");
        m.maxLen = 9;  // 16 letters: 8 keys at most
        m.contextLen = 200;
        QVERIFY_THROWS_EXCEPTION(Error, make(m));
        QVERIFY(!make(configFor("mqar"))->checkDifficulty(9).isEmpty());
        QVERIFY(!make(configFor("prefix_ngram"))->checkDifficulty(2).isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestTasks)
#include "tst_tasks.moc"
