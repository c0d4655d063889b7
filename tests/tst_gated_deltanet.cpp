// Gated DeltaNet against references written outside the app (tests/data/make_gated_deltanet_refs.py):
// flash-linear-attention's reference recurrence at the heart of each layer, on two tiny random models
// (the decay gate on, and off: the plain delta rule). Logits, every parameter's gradient and the final
// states agree in float32 (logits and states to 1e-5, gradients to 5e-5, of their largest entry), for
// the whole sequence in chunks of any size, token by token, and a prompt followed by single steps.
#include "base/config.h"
#include "core/kernels/deltarule.h"
#include "core/kernels/fastpaths.h"
#include "core/model.h"
#include "core/models/gateddeltanet.h"
#include "reftest.h"
#include "testutil.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace parrot;

namespace {

const QString kData = QStringLiteral(PARROT_TEST_DATA) + "/gated_deltanet_tiny/";

struct Fixture {
    GatedDeltaNetLMOptions options;
    std::shared_ptr<GatedDeltaNetLMImpl> model;
    std::map<std::string, torch::Tensor> refs;
};

Fixture load(const QString& name, int64_t chunk = 0)
{
    Fixture f;
    const QJsonObject c = QJsonDocument::fromJson(test::readAll(kData + name + "/config.json")).object();
    f.options.mixer.dModel = c["d_model"].toInt();
    f.options.mixer.headDim = c["head_dim"].toInt();
    f.options.mixer.expandV = c["expand_v"].toInt();
    f.options.mixer.dConv = c["d_conv"].toInt();
    f.options.mixer.chunkSize = chunk > 0 ? chunk : c["chunk_size"].toInt();
    f.options.mixer.forgetGate = c["forget_gate"].toBool();
    f.options.layers = c["layers"].toInt();
    f.options.vocabSize = c["vocab"].toInt();
    f.options.tieEmbeddings = true;
    f.model = std::make_shared<GatedDeltaNetLMImpl>(f.options);
    test::loadParameters(*f.model, kData + name + "/model.safetensors");
    f.refs = test::readTensors(kData + name + "/refs.safetensors");
    return f;
}

// Random inputs to the rule itself: unit keys, decays in (0, 1], write strengths in (0, 1).
struct RuleInputs {
    torch::Tensor q, k, v, beta, logDecay;
};

RuleInputs randomRule(int64_t T, bool gated, int seed)
{
    torch::manual_seed(seed);
    const int64_t Bn = 2, H = 3, K = 4, V = 5;
    RuleInputs r;
    r.q = torch::randn({Bn, T, H, K}) * 0.5;
    r.k = torch::nn::functional::normalize(torch::randn({Bn, T, H, K}), torch::nn::functional::NormalizeFuncOptions().dim(-1));
    r.v = torch::randn({Bn, T, H, V});
    r.beta = torch::rand({Bn, T, H});
    if (gated) r.logDecay = -torch::rand({Bn, T, H}) * 0.7;
    return r;
}

}  // namespace

class TestGatedDeltaNet : public QObject {
    Q_OBJECT
private slots:
    void matchesTheReferences_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("chunk");
        QTest::addColumn<bool>("fused");
        QTest::newRow("gated, chunks of 4") << "gated" << 0 << false;
        QTest::newRow("gated, chunks of 3") << "gated" << 3 << false;
        QTest::newRow("gated, one chunk") << "gated" << 64 << false;
        QTest::newRow("gated, chunks of 1") << "gated" << 1 << false;
        QTest::newRow("plain delta rule, chunks of 4") << "plain" << 0 << false;
        QTest::newRow("plain delta rule, chunks of 5") << "plain" << 5 << false;
        QTest::newRow("gated, fused") << "gated" << 0 << true;
        QTest::newRow("plain delta rule, fused") << "plain" << 0 << true;
    }

    // The logits, and the gradient of sum(logits * R) for every parameter: through the chunked
    // rule with the fast paths off, through the fused kernel (training's path) with them on.
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

    // The same model with its layers run token by token (the reference twin).
    void recurrentTwinMatchesTheReferences()
    {
        for (const QString name : {"gated", "plain"}) {
            Fixture f = load(name);
            auto recurrent = [&](const torch::Tensor& tokens) {
                torch::Tensor x = f.model->embed(tokens);
                for (const auto& block : *f.model->layers) {
                    auto* b = block->as<GatedDeltaNetBlockImpl>();
                    x = x + b->attn->forwardRecurrent(b->attn_norm(x));
                }
                return f.model->head(f.model->norm(x));
            };
            const QString problem = test::logitsAndGradientsDiffer(*f.model, recurrent, f.refs);
            QVERIFY2(problem.isEmpty(), qPrintable(name + ": " + problem));
        }
    }

    // Generating: the prompt in chunks, then a token at a time; the logits are those of the whole
    // row, and the states and convolution inputs left are the reference's.
    void promptThenStepsMatch_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("prompt");
        QTest::newRow("gated, a prompt of 7") << "gated" << 7;
        QTest::newRow("gated, a prompt of 2 (shorter than the convolution)") << "gated" << 2;
        QTest::newRow("plain delta rule, a prompt of 5") << "plain" << 5;
        QTest::newRow("plain delta rule, the whole row at once") << "plain" << 11;
    }

    void promptThenStepsMatch()
    {
        QFETCH(QString, name);
        QFETCH(int, prompt);
        Fixture f = load(name);
        torch::NoGradGuard noGrad;
        const torch::Tensor tokens = f.refs["tokens"], want = f.refs["logits"];
        auto state = f.model->startDecoding(tokens.size(0), torch::TensorOptions().dtype(torch::kFloat));
        std::vector<torch::Tensor> got{f.model->decode(tokens.narrow(1, 0, prompt), *state)};
        for (int64_t t = prompt; t < tokens.size(1); ++t) got.push_back(f.model->decode(tokens.narrow(1, t, 1), *state));
        const torch::Tensor logits = torch::cat(got, 1);
        const double err = test::scaledDiff(logits, want);  // as logitsAndGradientsDiffer compares them
        QVERIFY2(err < 1e-5, qPrintable(QString("%1 (scaled)").arg(err)));
        const auto& caches = GatedDeltaNetLMImpl::caches(*state);
        QCOMPARE(int(caches.size()), int(f.options.layers));
        for (size_t i = 0; i < caches.size(); ++i) {
            const std::string at = "state." + std::to_string(i) + ".";
            const std::pair<const char*, torch::Tensor> parts[] = {{"recurrent", caches[i].state}, {"conv_q", caches[i].convQ},
                                                                  {"conv_k", caches[i].convK}, {"conv_v", caches[i].convV}};
            for (const auto& [part, mine] : parts) {
                const double err = test::maxDiff(mine, f.refs.at(at + part));
                QVERIFY2(err < 1e-5, qPrintable(QString("layer %1 %2: %3").arg(i).arg(part).arg(err)));
            }
        }
    }

    // The chunked rule is the recurrence, state passed in and out included, at every chunk size.
    void chunkedRuleIsTheRecurrence()
    {
        for (bool gated : {true, false}) {
            const RuleInputs r = randomRule(13, gated, gated ? 5 : 6);
            const torch::Tensor h0 = torch::randn({2, 3, 4, 5}) * 0.3;
            const auto [want, wantState] = deltaRuleRecurrent(r.q, r.k, r.v, r.beta, r.logDecay, h0);
            for (int64_t chunk : {1, 4, 13, 64}) {
                const auto [o, state] = deltaRuleChunked(r.q, r.k, r.v, r.beta, r.logDecay, chunk, h0);
                QVERIFY2(test::maxDiff(o, want) < 1e-5, qPrintable(QString("chunks of %1: %2").arg(chunk).arg(test::maxDiff(o, want))));
                QVERIFY2(test::maxDiff(state, wantState) < 1e-5, qPrintable(QString("state, chunks of %1").arg(chunk)));
            }
        }
    }

    // The fused kernel and its hand-written backward against the recurrence under autograd, over
    // more tokens than the stretches it keeps states for, with and without the gate, in each of
    // this CPU's builds.
    void fusedRuleIsTheRecurrence()
    {
        for (bool gated : {true, false}) {
            const RuleInputs r = randomRule(37, gated, gated ? 8 : 9);
            std::vector<torch::Tensor> leaves{r.q, r.k, r.v, r.beta};
            if (gated) leaves.push_back(r.logDecay);
            for (auto& t : leaves) t = t.detach().clone().requires_grad_(true);
            const torch::Tensor g = gated ? leaves[4] : torch::Tensor();
            const torch::Tensor dO = torch::randn({2, 37, 3, 5});
            const torch::Tensor want = deltaRuleRecurrent(leaves[0], leaves[1], leaves[2], leaves[3], g).first;
            const auto wantGrads = torch::autograd::grad({want}, leaves, {dO});
            const torch::Tensor got = deltaRuleFused(leaves[0], leaves[1], leaves[2], leaves[3], g);
            QVERIFY2(test::maxDiff(got, want) < 1e-5, qPrintable(QString::number(test::maxDiff(got, want))));
            const auto grads = torch::autograd::grad({got}, leaves, {dO});
            const char* names[] = {"q", "k", "v", "beta", "log decay"};
            for (size_t i = 0; i < leaves.size(); ++i)
                QVERIFY2(test::maxDiff(grads[i], wantGrads[i]) < 1e-4,
                         qPrintable(QString("d%1: %2").arg(names[i]).arg(test::maxDiff(grads[i], wantGrads[i]))));
        }
    }

    // The effective attention is exact: each head's M applied to its values gives the rule's output;
    // and the delta rule replaces what a key held: writing v then v' under one key reads back v'.
    void effectiveAttentionIsTheRule()
    {
        for (bool gated : {true, false}) {
            const RuleInputs r = randomRule(11, gated, 7);
            const torch::Tensor M = deltaRuleMatrix(r.q, r.k, r.beta, r.logDecay);  // (B, H, T, T)
            QCOMPARE(M.triu(1).abs().max().item<double>(), 0.0);
            const torch::Tensor viaM = torch::einsum("bhts,bshv->bthv", {M, r.v});
            const torch::Tensor o = deltaRuleRecurrent(r.q, r.k, r.v, r.beta, r.logDecay).first;
            QVERIFY2(test::maxDiff(viaM, o) < 1e-5, qPrintable(QString::number(test::maxDiff(viaM, o))));
        }
        const torch::Tensor key = torch::tensor({0.6f, 0.8f}).view({1, 1, 1, 2}).expand({1, 2, 1, 2}).contiguous();
        const torch::Tensor v = torch::tensor({1.0f, -2.0f}).view({1, 2, 1, 1});
        const torch::Tensor o = deltaRuleRecurrent(key, key, v, torch::ones({1, 2, 1}), {}).first;  // b = 1: a full write
        QVERIFY2(std::abs(o[0][1][0][0].item<double>() - (-2.0)) < 1e-6, qPrintable(QString::number(o[0][1][0][0].item<double>())));
    }

    // A shape that cannot work is refused by name; the explorer gets a map per head; the state is
    // what the bound counts.
    void shapesProbesAndState()
    {
        ExperimentConfig c = test::smallConfig("gated_deltanet");
        c.model.dModel = 64;
        c.model.headDim = 24;
        QVERIFY2(validate(c).join("; ").contains("model.head_dim"), qPrintable(validate(c).join("; ")));
        c.model.headDim = 16;
        QVERIFY2(validate(c).isEmpty(), qPrintable(validate(c).join("; ")));
        std::vector<long long> counts;
        for (bool gate : {true, false}) {
            c.model.forgetGate = gate;
            const Model m = Model::create(c);
            const ModelProbes p = m.probe({1, 4, 5, 6, 2, 4, 5, 6, 3});
            QVERIFY(p.effectiveAttention);
            QCOMPARE(p.attention.layers, c.model.layers);
            QCOMPARE(p.attention.heads, 4);
            for (int t = 0; t < p.attention.length; ++t) {
                double row = 0;
                for (int s = 0; s < p.attention.length; ++s) row += p.attention.at(0, 0, t, s);
                QVERIFY2(std::abs(row - 1) < 1e-4, qPrintable(QString::number(row)));
            }
            // heads x head_dim x head_v_dim, and the three short convolutions' inputs
            const long long K = 16, V = K * c.model.expand, perLayer = 4 * K * V + (2 * 64 + 4 * V) * (c.model.dConv - 1);
            QCOMPARE(m.size().stateFloats, c.model.layers * perLayer);
            counts.push_back(m.parameterCount());
        }
        // without the gate there is nothing to decay with: no a_proj, A_log or dt_bias
        QCOMPARE(counts[0] - counts[1], c.model.layers * (4LL * 64 + 2 * 4));
    }
};

QTEST_GUILESS_MAIN(TestGatedDeltaNet)
#include "tst_gated_deltanet.moc"
