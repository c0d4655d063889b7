// The Transformer through the core's facade: causality, attention maps, Hard-ALiBi windows.
#include "base/ablation.h"
#include "base/error.h"
#include "base/io/safetensors.h"
#include "base/tasks/tokentask.h"
#include "core/model.h"
#include "testutil.h"

#include <QtTest>
#include <QTemporaryDir>

#include <cmath>

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

    // Switching a head off by the forward-time mask is the same model as one whose output
    // projection never reads that head (its columns of c_proj zeroed by hand in the file): same
    // logits to 1e-5, on the fused attention's path and on NoPE's explicit one.
    void ablatingAHeadEqualsZeroingItsProjection_data()
    {
        QTest::addColumn<QString>("positions");
        QTest::newRow("nope") << "nope";
        QTest::newRow("hard_alibi") << "hard_alibi";
    }
    void ablatingAHeadEqualsZeroingItsProjection()
    {
        QFETCH(QString, positions);
        const ExperimentConfig c = modelConfig(positions);
        const Model m = Model::create(c);
        const int T = 12, layer = c.model.layers - 1, head = 2, D = c.model.dModel / c.model.heads;
        const std::vector<int> tokens = randomTokens(2 * T, c.task.vocabSize, 7);
        QTemporaryDir dir;
        const QString path = dir.filePath("m.safetensors");
        m.save(path);
        SafetensorsFile f = readSafetensors(path);
        const QString name = QString("h.%1.attn.c_proj.weight").arg(layer);
        QVERIFY(f.tensors.contains(name));
        TensorRecord& w = f.tensors[name];  // (C out, C in): the head's inputs are columns head*D .. head*D + D - 1
        std::vector<float> v = toFloat32(w, name);
        const int C = c.model.dModel;
        for (int r = 0; r < C; ++r)
            for (int k = head * D; k < (head + 1) * D; ++k) v[size_t(r * C + k)] = 0;
        w.data = QByteArray(reinterpret_cast<const char*>(v.data()), qsizetype(v.size() * sizeof(float)));
        w.mapping.reset();
        const QString zeroed = dir.filePath("zeroed.safetensors");
        writeSafetensors(zeroed, f);
        HeadAblation off;
        off.heads = {{layer, head}};
        const std::vector<float> masked = m.logits(tokens, 2, T, off), byHand = Model::load(zeroed).logits(tokens, 2, T);
        const std::vector<float> plain = m.logits(tokens, 2, T);
        QCOMPARE(masked.size(), byHand.size());
        double worst = 0, changed = 0;
        for (size_t i = 0; i < masked.size(); ++i) {
            worst = std::max(worst, double(std::abs(masked[i] - byHand[i])));
            changed = std::max(changed, double(std::abs(masked[i] - plain[i])));
        }
        QVERIFY2(worst < 1e-5, qPrintable(QString::number(worst)));
        QVERIFY2(changed > 1e-4, "switching the head off changed nothing");
        QCOMPARE(m.logits(tokens, 2, T), plain);  // a forward-time mask: the model itself is unchanged
    }

    // Mean ablation keeps a head's average over the input: on one position that is the head itself.
    void meanAblationOfOnePositionChangesNothing()
    {
        const Model m = Model::create(modelConfig("nope"));
        HeadAblation mean;
        mean.method = HeadAblation::Method::Mean;
        mean.heads = {{0, 1}, {1, 3}};
        const std::vector<int> one{5};
        const std::vector<float> a = m.logits(one, 1, 1, mean), b = m.logits(one, 1, 1);
        for (size_t i = 0; i < a.size(); ++i) QVERIFY(std::abs(a[i] - b[i]) < 1e-6);
        const std::vector<int> tokens = randomTokens(10, 26, 3);
        QVERIFY(m.logits(tokens, 1, 10, mean) != m.logits(tokens, 1, 10));
    }

    void ablationRefusesHeadsTheModelHasNot()
    {
        const ExperimentConfig c = modelConfig("nope");
        const Model m = Model::create(c);
        HeadAblation bad;
        bad.heads = {{c.model.layers, 0}};
        QVERIFY(m.ablationProblem(bad).contains(QString("no head %1.0").arg(c.model.layers)));
        QVERIFY_THROWS_EXCEPTION(Error, m.logits({1, 2}, 1, 2, bad));
        bad.heads = {{0, c.model.heads}};
        QVERIFY(!m.ablationProblem(bad).isEmpty());
        ExperimentConfig mc = c;
        mc.model.kind = "mamba";
        HeadAblation one;
        one.heads = {{0, 0}};
        QVERIFY(Model::create(mc).ablationProblem(one).contains("no heads of its own"));
        QCOMPARE(parseHeadList("1.2, 0.3,1.2"), (std::vector<std::pair<int, int>>{{1, 2}, {0, 3}}));
        QVERIFY_THROWS_EXCEPTION(Error, parseHeadList("1-2"));
        QVERIFY_THROWS_EXCEPTION(Error, parseHeadList(""));
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
