#include "error.h"
#include "tasks/copytask.h"

#include <QtTest>

#include <set>

using namespace parrot;

namespace {

TaskConfig smallTask()
{
    TaskConfig t;
    t.vocabSize = 5;
    t.minLen = 2;
    t.maxLen = 6;
    t.contextLen = 40;
    return t;
}

}  // namespace

class TestCopyTask : public QObject {
    Q_OBJECT
private slots:
    void exampleHasThePapersFormat()
    {
        const CopyTask task(smallTask());
        std::mt19937_64 rng(1);
        for (int i = 0; i < 200; ++i) {
            const std::vector<int> ex = task.example(rng);
            const int L = (int(ex.size()) - 3) / 2;
            QCOMPARE(int(ex.size()), 2 * L + 3);
            QCOMPARE(ex.front(), CopyVocab::Bos);
            QCOMPARE(ex[L + 1], CopyVocab::Sep);
            QCOMPARE(ex.back(), CopyVocab::Eos);
            for (int j = 0; j < L; ++j) {
                QVERIFY(task.vocab().isLetter(ex[1 + j]));
                QCOMPARE(ex[L + 2 + j], ex[1 + j]);
            }
        }
    }

    void lengthsCoverTheRangeUniformly()
    {
        const CopyTask task(smallTask());
        std::mt19937_64 rng(7);
        std::map<int, int> counts;
        const int n = 5000;
        for (int i = 0; i < n; ++i) ++counts[(int(task.example(rng).size()) - 3) / 2];
        QCOMPARE(int(counts.size()), 5);
        QCOMPARE(counts.begin()->first, 2);
        QCOMPARE(counts.rbegin()->first, 6);
        for (auto [len, c] : counts) QVERIFY2(std::abs(c - n / 5) < n / 5 * 0.15, qPrintable(QString::number(len)));
    }

    void lettersAreUniform()
    {
        const CopyTask task(smallTask());
        std::mt19937_64 rng(3);
        std::map<int, int> counts;
        int total = 0;
        for (int i = 0; i < 3000; ++i) {
            const auto ex = task.example(6, rng);
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
        const CopyTask task(cfg);
        std::mt19937_64 rng(11);
        const TokenBatch b = task.trainBatch(64, rng);
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

    void sameSeedSameData()
    {
        const CopyTask task(smallTask());
        std::mt19937_64 a(42), b(42), c(43);
        const TokenBatch x = task.trainBatch(8, a), y = task.trainBatch(8, b), z = task.trainBatch(8, c);
        QCOMPARE(x.input, y.input);
        QCOMPARE(x.mask, y.mask);
        QVERIFY(x.input != z.input);
    }

    void evalBatchHasOneExamplePerRow()
    {
        const CopyTask task(smallTask());
        std::mt19937_64 rng(5);
        const CopyEvalBatch e = task.evalBatch(9, 4, rng);  // longer than training: allowed
        QCOMPARE(e.stringLength, 9);
        QCOMPARE(e.tokens.length, 2 * 9 + 2);
        QCOMPARE(e.answerStart, 10);
        for (int r = 0; r < 4; ++r) {
            const auto at = [&](int t) { return int(e.tokens.input[size_t(r) * e.tokens.length + t]); };
            QCOMPARE(at(0), CopyVocab::Bos);
            QCOMPARE(at(e.answerStart), CopyVocab::Sep);
            for (int j = 0; j < 9; ++j)
                QCOMPARE(int(e.tokens.target[size_t(r) * e.tokens.length + e.answerStart + j]), at(1 + j));
            QCOMPARE(int(e.tokens.target[size_t(r) * e.tokens.length + e.tokens.length - 1]), CopyVocab::Eos);
        }
    }

    void invalidConfigIsRejected()
    {
        TaskConfig t = smallTask();
        t.contextLen = 10;  // max_len 6 needs 15
        QVERIFY_THROWS_EXCEPTION(Error, CopyTask{t});
    }
};

QTEST_GUILESS_MAIN(TestCopyTask)
#include "tst_copytask.moc"
