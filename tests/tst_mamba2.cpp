// Mamba-2 against references written outside the app (tests/data/make_mamba2_refs.py): transformers'
// Mamba2ForCausalLM and a step-by-step recurrence, on two tiny random models (one group of B and C,
// and two). Logits, every parameter's gradient and the final states agree in float32 (logits and
// states to 1e-5, gradients to 5e-5, of their largest entry), for the whole sequence at once, a
// prompt followed by single steps, and any chunk size.
#include "base/config.h"
#include "base/error.h"
#include "core/kernels/fastpaths.h"
#include "core/model.h"
#include "core/models/mamba2.h"
#include "reftest.h"
#include "testutil.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace parrot;

namespace {

const QString kData = QStringLiteral(PARROT_TEST_DATA) + "/mamba2_tiny/";

struct Fixture {
    Mamba2LMOptions options;
    std::shared_ptr<Mamba2LMImpl> model;
    std::map<std::string, torch::Tensor> refs;
};

Fixture load(const QString& name, int64_t chunk = 0)
{
    Fixture f;
    const QJsonObject c = QJsonDocument::fromJson(test::readAll(kData + name + "/config.json")).object();
    f.options.mixer.dModel = c["d_model"].toInt();
    f.options.mixer.dState = c["d_state"].toInt();
    f.options.mixer.headDim = c["head_dim"].toInt();
    f.options.mixer.expand = c["expand"].toInt();
    f.options.mixer.nGroups = c["n_groups"].toInt();
    f.options.mixer.dConv = c["d_conv"].toInt();
    f.options.mixer.chunkSize = chunk > 0 ? chunk : c["chunk_size"].toInt();
    f.options.layers = c["layers"].toInt();
    f.options.vocabSize = c["vocab"].toInt();
    f.options.tieEmbeddings = true;
    f.model = std::make_shared<Mamba2LMImpl>(f.options);
    test::loadParameters(*f.model, kData + name + "/model.safetensors");
    f.refs = test::readTensors(kData + name + "/refs.safetensors");
    return f;
}

}  // namespace

class TestMamba2 : public QObject {
    Q_OBJECT
private slots:
    void matchesTheReferences_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("chunk");
        QTest::addColumn<bool>("fused");
        QTest::newRow("one group, chunks of 4") << "g1" << 0 << false;
        QTest::newRow("one group, chunks of 3") << "g1" << 3 << false;
        QTest::newRow("one group, one chunk") << "g1" << 64 << false;
        QTest::newRow("two groups, chunks of 4") << "g2" << 0 << false;
        QTest::newRow("two groups, chunks of 1") << "g2" << 1 << false;
        QTest::newRow("one group, fused scan") << "g1" << 0 << true;
        QTest::newRow("two groups, fused scan") << "g2" << 0 << true;
    }

    // The logits, and the gradient of sum(logits * R) for every parameter: through the chunked
    // scan with the fast paths off, through Mamba's fused scan (training's path) with them on.
    void matchesTheReferences()
    {
        QFETCH(QString, name);
        QFETCH(int, chunk);
        QFETCH(bool, fused);
        const bool before = fastPaths();
        setFastPaths(fused);
        const auto restore = qScopeGuard([before] { setFastPaths(before); });
        Fixture f = load(name, chunk);
        const QString problem = test::logitsAndGradientsDiffer(*f.model, [&](const torch::Tensor& t) { return f.model->forward(t); }, f.refs);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
    }

    // The same models with their layers run token by token (the reference twin).
    void recurrentTwinMatchesTheReferences()
    {
        for (const QString name : {"g1", "g2"}) {
            Fixture f = load(name);
            auto recurrent = [&](const torch::Tensor& tokens) {
                torch::Tensor x = f.model->embed(tokens);
                for (const auto& block : *f.model->layers) {
                    auto* b = block->as<Mamba2BlockImpl>();
                    x = x + b->mixer->forwardRecurrent(b->norm(x));
                }
                return f.model->head(f.model->norm_f(x));
            };
            const QString problem = test::logitsAndGradientsDiffer(*f.model, recurrent, f.refs);
            QVERIFY2(problem.isEmpty(), qPrintable(name + ": " + problem));
        }
    }

    // Generating: the prompt through the chunked scan, then a token a time; the logits are those
    // of the whole row, and the states left are the reference's.
    void promptThenStepsMatch_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("prompt");
        QTest::newRow("one group, a prompt of 7") << "g1" << 7;
        QTest::newRow("one group, a prompt of 2 (shorter than the convolution)") << "g1" << 2;
        QTest::newRow("two groups, a prompt of 5") << "g2" << 5;
        QTest::newRow("two groups, the whole row at once") << "g2" << 11;
    }

    void promptThenStepsMatch()
    {
        QFETCH(QString, name);
        QFETCH(int, prompt);
        Fixture f = load(name);
        torch::NoGradGuard noGrad;
        const torch::Tensor tokens = f.refs["tokens"], want = f.refs["logits"];
        const int64_t T = tokens.size(1);
        auto state = f.model->startDecoding(tokens.size(0), torch::TensorOptions().dtype(torch::kFloat));
        std::vector<torch::Tensor> got{f.model->decode(tokens.narrow(1, 0, prompt), *state)};
        for (int64_t t = prompt; t < T; ++t) got.push_back(f.model->decode(tokens.narrow(1, t, 1), *state));
        const torch::Tensor logits = torch::cat(got, 1);
        QVERIFY2(test::maxDiff(logits, want) < 1e-5, qPrintable(QString::number(test::maxDiff(logits, want))));
        const auto& caches = Mamba2LMImpl::caches(*state);
        QCOMPARE(int(caches.size()), int(f.options.layers));
        for (size_t i = 0; i < caches.size(); ++i) {
            const torch::Tensor ssm = f.refs.at("state." + std::to_string(i) + ".ssm"), conv = f.refs.at("state." + std::to_string(i) + ".conv");
            QVERIFY2(test::maxDiff(caches[i].ssm, ssm) < 1e-5, qPrintable(QString("layer %1 scan state: %2").arg(i).arg(test::maxDiff(caches[i].ssm, ssm))));
            QVERIFY2(test::maxDiff(caches[i].conv, conv) < 1e-5, qPrintable(QString("layer %1 convolution: %2").arg(i).arg(test::maxDiff(caches[i].conv, conv))));
        }
    }

    // The effective attention is exact: each head's M applied to its inputs gives the scan's output.
    void effectiveAttentionIsTheScan()
    {
        torch::manual_seed(3);
        const int64_t Bn = 2, T = 13, H = 4, P = 3, N = 5;
        const torch::Tensor x = torch::randn({Bn, T, H, P}), dt = torch::rand({Bn, T, H}) * 0.5 + 0.05;
        const torch::Tensor A = -torch::rand({H}) * 4 - 0.5, Bm = torch::randn({Bn, T, H, N}), Cm = torch::randn({Bn, T, H, N});
        const torch::Tensor M = ssdMatrix(dt, A, Bm, Cm);  // (B, H, T, T)
        QVERIFY(M.triu(1).abs().max().item<double>() == 0);  // causal
        const torch::Tensor viaM = torch::einsum("bhts,bshp->bthp", {M, x});
        for (int64_t chunk : {1, 4, 13, 64}) {
            const torch::Tensor y = ssdScan(x, dt, A, Bm, Cm, chunk).first;
            QVERIFY2(test::maxDiff(y, viaM) < 1e-5, qPrintable(QString("chunks of %1: %2").arg(chunk).arg(test::maxDiff(y, viaM))));
        }
    }

    // A shape that cannot work is refused by name; the explorer gets a map per head.
    void shapesAndProbes()
    {
        ExperimentConfig c = test::smallConfig("mamba2");
        c.model.headDim = 24;  // 2 x 32 = 64 inner channels
        QVERIFY2(validate(c).join("; ").contains("model.head_dim"), qPrintable(validate(c).join("; ")));
        c.model.headDim = 16;
        c.model.nGroups = 3;  // 4 heads
        QVERIFY2(validate(c).join("; ").contains("model.n_groups"), qPrintable(validate(c).join("; ")));
        c.model.nGroups = 2;
        QVERIFY2(validate(c).isEmpty(), qPrintable(validate(c).join("; ")));
        const Model m = Model::create(c);
        const ModelProbes p = m.probe({1, 4, 5, 6, 2, 4, 5, 6, 3});
        QVERIFY(p.effectiveAttention);
        QCOMPARE(p.attention.layers, c.model.layers);
        QCOMPARE(p.attention.heads, 4);
        // each row of a head's map is the share of that output's |M|: it sums to one
        for (int t = 0; t < p.attention.length; ++t) {
            double row = 0;
            for (int s = 0; s < p.attention.length; ++s) row += p.attention.at(0, 0, t, s);
            QVERIFY2(std::abs(row - 1) < 1e-4, qPrintable(QString::number(row)));
        }
        // the state the bound counts: heads x head_dim x d_state, and the convolution's inputs
        const long long perLayer = 4LL * 16 * c.model.dState + (64LL + 2 * 2 * c.model.dState) * (c.model.dConv - 1);
        QCOMPARE(m.size().stateFloats, c.model.layers * perLayer);
    }
};

QTEST_GUILESS_MAIN(TestMamba2)
#include "tst_mamba2.moc"
