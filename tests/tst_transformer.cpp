// The Transformer through the core's facade: causality, attention maps, Hard-ALiBi windows.
#include "base/error.h"
#include "core/model.h"
#include "base/tasks/tokentask.h"
#include "testutil.h"

#include <QtTest>

using namespace parrot;

namespace {

ExperimentConfig modelConfig(const QString& positions)
{
    ExperimentConfig c = test::tinyConfig();
    c.model.positions = positions;
    c.model.numMaskedHeads = positions == "hard_alibi" ? 2 : 0;
    c.model.heads = 4;
    c.model.dModel = 32;
    return c;
}

std::vector<int> randomTokens(int n, int vocab, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(0, vocab - 1);
    std::vector<int> t(n);
    for (int& x : t) x = d(rng);
    return t;
}

}  // namespace

class TestTransformer : public QObject {
    Q_OBJECT
private slots:
    void futureTokensNeverChangeEarlierLogits_data()
    {
        QTest::addColumn<QString>("positions");
        QTest::newRow("nope") << "nope";
        QTest::newRow("hard_alibi") << "hard_alibi";
    }
    void futureTokensNeverChangeEarlierLogits()
    {
        QFETCH(QString, positions);
        const Model m = Model::create(modelConfig(positions));
        const int T = 24, V = CopyVocab{m.config().task.vocabSize}.size();
        for (int cut = 0; cut < T; cut += 5) {
            std::vector<int> a = randomTokens(T, V, 1 + cut), b = a;
            for (int t = cut; t < T; ++t) b[t] = (a[t] + 1 + t) % V;  // change every token from `cut` on
            const std::vector<float> la = m.logits(a, 1, T), lb = m.logits(b, 1, T);
            for (int t = 0; t < cut; ++t)
                for (int v = 0; v < V; ++v) QCOMPARE(la[size_t(t) * V + v], lb[size_t(t) * V + v]);
            // and the changed position itself does change the output: the model is not constant
            float diff = 0;
            for (int v = 0; v < V; ++v) diff += std::abs(la[size_t(cut) * V + v] - lb[size_t(cut) * V + v]);
            QVERIFY(diff > 1e-6f);
        }
    }

    void batchRowsAreIndependent()
    {
        const Model m = Model::create(modelConfig("nope"));
        const int T = 10, V = CopyVocab{m.config().task.vocabSize}.size();
        const auto a = randomTokens(T, V, 1), b = randomTokens(T, V, 2);
        std::vector<int> both = a;
        both.insert(both.end(), b.begin(), b.end());
        const auto lab = m.logits(both, 2, T), lb = m.logits(b, 1, T);
        for (size_t i = 0; i < lb.size(); ++i) QVERIFY(std::abs(lab[lb.size() + i] - lb[i]) < 1e-5f);
    }

    void attentionIsCausalAndNormalised()
    {
        const Model m = Model::create(modelConfig("nope"));
        const int T = 12;
        const AttentionMaps a = m.attention(randomTokens(T, 12, 3));
        QCOMPARE(a.layers, 2);
        QCOMPARE(a.heads, 4);
        QCOMPARE(a.length, T);
        QCOMPARE(int(a.tokens.size()), T);
        for (int l = 0; l < a.layers; ++l)
            for (int h = 0; h < a.heads; ++h)
                for (int q = 0; q < T; ++q) {
                    float sum = 0;
                    for (int k = 0; k < T; ++k) {
                        if (k > q) QCOMPARE(a.at(l, h, q, k), 0.0f);
                        sum += a.at(l, h, q, k);
                    }
                    QVERIFY(std::abs(sum - 1.0f) < 1e-5f);
                }
    }

    void hardAlibiHeadsSeeTheirWindowOnly()
    {
        const Model m = Model::create(modelConfig("hard_alibi"));  // heads 0, 1 masked: windows 1 and 2
        const int T = 10;
        const AttentionMaps a = m.attention(randomTokens(T, 12, 4));
        for (int l = 0; l < a.layers; ++l)
            for (int q = 0; q < T; ++q) {
                QCOMPARE(a.at(l, 0, q, q), 1.0f);  // window 1: only itself
                for (int k = 0; k < T; ++k) {
                    if (q - k > 1 || k > q) QCOMPARE(a.at(l, 1, q, k), 0.0f);
                    if (q - k > 0 || k > q) QCOMPARE(a.at(l, 0, q, k), 0.0f);
                }
                // the unmasked heads see the whole prefix
                if (q >= 3) QVERIFY(a.at(l, 3, q, 0) > 0.0f);
            }
    }

    void sameSeedSameWeights()
    {
        const auto c = modelConfig("nope");
        const auto tokens = randomTokens(8, 12, 5);
        QCOMPARE(Model::create(c).logits(tokens, 1, 8), Model::create(c).logits(tokens, 1, 8));
        auto other = c;
        other.seed = c.seed + 1;
        QVERIFY(Model::create(other).logits(tokens, 1, 8) != Model::create(c).logits(tokens, 1, 8));
    }

    void parameterCountMatchesTheArchitecture()
    {
        ExperimentConfig c = modelConfig("nope");
        const long long C = c.model.dModel, V = CopyVocab{c.task.vocabSize}.size(), M = 4 * C;
        const long long block = 2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (C * M + M) + (M * C + C);
        QCOMPARE(Model::create(c).parameterCount(), 2 * V * C + c.model.layers * block + 2 * C);
        c.model.tieEmbeddings = true;
        QCOMPARE(Model::create(c).parameterCount(), V * C + c.model.layers * block + 2 * C);
    }

    void badTokensAreErrors()
    {
        const Model m = Model::create(modelConfig("nope"));
        QVERIFY_THROWS_EXCEPTION(Error, m.logits({1, 2, 999}, 1, 3));
        QVERIFY_THROWS_EXCEPTION(Error, m.logits({1, 2, 3}, 2, 3));
    }
};

QTEST_GUILESS_MAIN(TestTransformer)
#include "tst_transformer.moc"
