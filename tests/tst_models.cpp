// Every model family: shapes, causality, recurrent step mode, probes, sizes, the positional
// schemes' definitions, and that each one learns a tiny copy task above chance.
#include "base/error.h"
#include "base/modelcatalog.h"
#include "base/tasks/taskcatalog.h"
#include "core/kernels/fastpaths.h"
#include "core/modelimpl.h"
#include "core/models/hybrid.h"
#include "core/models/lstm.h"
#include "core/models/mamba.h"
#include "core/models/stateshrink.h"
#include "core/models/transformer.h"
#include "core/train/losses.h"
#include "core/train/trainer.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QtTest>

#include <random>
#include <set>
#include <tuple>

using namespace parrot;

namespace {

const QStringList kKinds = familyIds();  // every family in the catalogue

using test::smallConfig;

double maxAbsDiff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Trains `c` to the end (failing the test if it does not finish) and evaluates it at one length.
LengthCurve trainedCurve(const ExperimentConfig& c, int length)
{
    Model model = Model::create(c);
    TrainControl control;
    const TrainOutcome o = train(model, {}, control, {});
    if (o.status != TrainOutcome::Status::Finished) qWarning("%s", qPrintable(o.message));
    return o.status == TrainOutcome::Status::Finished ? model.evaluate({length}, 200, 5) : LengthCurve{};
}

// One data row per family.
void familyRows()
{
    QTest::addColumn<QString>("kind");
    for (const QString& k : kKinds) QTest::newRow(qPrintable(k)) << k;
}

}  // namespace

class TestModels : public QObject {
    Q_OBJECT
private slots:
    void everyFamilyIsCausal_data()
    {
        QTest::addColumn<QString>("kind");
        for (const QString& k : kKinds) QTest::newRow(qPrintable(k)) << k;
        QTest::newRow("transformer rope") << "transformer:rope";
        QTest::newRow("transformer alibi") << "transformer:alibi";
        QTest::newRow("transformer learned") << "transformer:learned";
        QTest::newRow("transformer nope, short conv") << "transformer:nope:conv";
        QTest::newRow("hybrid, short conv") << "hybrid:learned:conv";
        QTest::newRow("mambaformer, short conv") << "mambaformer:nope:conv";
    }
    void everyFamilyIsCausal()
    {
        QFETCH(QString, kind);
        ExperimentConfig c = smallConfig(kind.section(':', 0, 0));
        if (kind.contains(':')) c.model.positions = kind.section(':', 1, 1);
        if (kind.endsWith(":conv")) c.model.shortConv = 3;
        torch::manual_seed(1);
        SequenceModel net = buildModel(c);
        const int64_t B = 2, T = 12, V = CopyVocab{c.task.vocabSize}.size();
        auto idx = torch::randint(0, V, {B, T}, torch::kLong);
        torch::NoGradGuard g;
        auto base = net->forward(idx);
        QCOMPARE(base.sizes().vec(), (std::vector<int64_t>{B, T, V}));
        for (int64_t t : {0, 1, 5, 11}) {
            auto changed = idx.clone();
            changed.narrow(1, t, T - t).add_(1).remainder_(V);
            auto out = net->forward(changed);
            if (t > 0) QVERIFY2(maxAbsDiff(out.narrow(1, 0, t), base.narrow(1, 0, t)) == 0.0, qPrintable(QString::number(t)));
            QVERIFY(maxAbsDiff(out.narrow(1, t, 1), base.narrow(1, t, 1)) > 1e-7);
        }
    }

    // State shrinking (base/ablation.h) that removes nothing is the plain model, value for
    // value; removing something changes the output; the bits counted follow the state's shape.
    void shrinkingNothingIsThePlainModel_data()
    {
        QTest::addColumn<QString>("kind");
        for (const char* k : {"mamba", "mamba2", "gated_deltanet", "s4_mamba", "s4d", "hybrid", "mambaformer"}) QTest::newRow(k) << k;
    }
    void shrinkingNothingIsThePlainModel()
    {
        QFETCH(QString, kind);
        torch::manual_seed(3);
        const ExperimentConfig c = smallConfig(kind);
        const Model model = Model::create(c);
        const int B = 2, T = 14, V = CopyVocab{c.task.vocabSize}.size();
        std::vector<int> tokens;
        std::mt19937 rng(4);
        for (int i = 0; i < B * T; ++i) tokens.push_back(int(rng() % unsigned(V)));
        const std::vector<float> plain = model.logits(tokens, B, T);
        const auto under = [&](const StateShrink& s) {
            const StateShrunk scope(model, s);
            return model.logits(tokens, B, T);
        };
        const auto maxDiff = [&](const std::vector<float>& a) {
            double d = 0;
            for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - plain[i])));
            return d;
        };
        const int N = model.stateLayout().dState;
        QCOMPARE(N, kind == "gated_deltanet" ? c.model.headDim : c.model.dState);  // the delta rule's state rows: a head's keys
        QVERIFY(under(StateShrink::keepDims(N)) == plain);      // exactly: a mask of ones
        QVERIFY(under(StateShrink::keepChannels(1.0)) == plain);
        QVERIFY2(maxDiff(under(StateShrink::quantise(16))) < 1e-3, qPrintable(QString::number(maxDiff(under(StateShrink::quantise(16))))));
        QVERIFY(maxDiff(under(StateShrink::keepDims(1))) > 1e-5);
        QVERIFY(maxDiff(under(StateShrink::keepChannels(0.25))) > 1e-5);
        QVERIFY(maxDiff(under(StateShrink::quantise(1))) > 1e-5);
        QVERIFY(model.logits(tokens, B, T) == plain);  // the scope is gone with its block
        // the bits: the whole state at 32 bits a float, less with less of it
        const ModelSize size = model.size();
        if (size.stateFloatsPerToken == 0) {
            QCOMPARE(model.stateBits(), double(size.stateFloats) * 32);
            QVERIFY(model.stateBits(StateShrink::keepDims(1)) < model.stateBits());
            QVERIFY(model.stateBits(StateShrink::quantise(2)) < model.stateBits(StateShrink::quantise(8)));
        } else {
            QCOMPARE(model.stateBits(), 0.0);  // attention's cache grows: no fixed bound
        }
        QVERIFY(model.shrinkProblem(StateShrink::keepDims(N + 1)).contains("state dimensions"));
    }

    void shrinkingNeedsStateSpaceLayers()
    {
        for (const char* k : {"transformer", "lstm"}) {
            const Model m = Model::create(smallConfig(k));
            QVERIFY2(m.shrinkProblem(StateShrink::keepDims(1)).contains("no state-space layers"), k);
            QVERIFY_THROWS_EXCEPTION(Error, StateShrunk(m, StateShrink::quantise(4)));
        }
        QVERIFY_THROWS_EXCEPTION(Error, StateShrink::keepChannels(0));
        QVERIFY_THROWS_EXCEPTION(Error, StateShrink::quantise(0));
        QVERIFY_THROWS_EXCEPTION(Error, StateShrink::keepDims(0));
    }

    // Keeping the first k state dimensions is the model whose x_proj writes nothing into B and C
    // beyond k: the other dimensions never fill and are never read.
    void keepingKStateDimsEqualsCuttingBAndCByHand()
    {
        torch::manual_seed(5);
        const ExperimentConfig c = smallConfig("mamba");
        SequenceModel net = buildModel(c);
        SequenceModel cut = buildModel(c);
        torch::NoGradGuard g;
        auto source = net->named_parameters(), target = cut->named_parameters();
        for (const auto& p : source) target[p.key()].copy_(p.value());
        const int64_t N = c.model.dState, k = 2;
        for (const auto& m : cut->modules(false))
            if (auto* mixer = dynamic_cast<MambaMixerImpl*>(m.get())) {
                const int64_t R = mixer->options().dtRank();
                mixer->x_proj->weight.narrow(0, R + k, N - k).zero_();      // B's columns k..N-1
                mixer->x_proj->weight.narrow(0, R + N + k, N - k).zero_();  // C's
            }
        auto idx = torch::randint(0, CopyVocab{c.task.vocabSize}.size(), {2, 16}, torch::kLong);
        const StateShrink shrink = StateShrink::keepDims(int(k));
        torch::Tensor shrunk;
        {
            const StateShrinkScope scope(shrink);
            shrunk = net->forward(idx);
        }
        const double diff = maxAbsDiff(shrunk, cut->forward(idx));
        QVERIFY2(diff < 1e-5, qPrintable(QString::number(diff)));
        QVERIFY(maxAbsDiff(net->forward(idx), cut->forward(idx)) > 1e-4);
    }

    // b bits an entry: at most 2^b values in each row of the state, within half a step of h.
    void quantisedStateKeepsItsLevels()
    {
        torch::manual_seed(6);
        const auto h = torch::randn({3, 5, 8}) * torch::rand({3, 5, 1}) * 4;
        for (int bits : {1, 2, 3, 8}) {
            const auto q = quantisedState(h, bits);
            const auto s = h.abs().amax(-1, true);
            const double step = 2.0 / (std::pow(2.0, bits) - 1);
            QVERIFY(((q - h).abs() <= s * (step / 2) + 1e-6).all().item<bool>());
            for (int64_t r = 0; r < 3 * 5; ++r) {
                const auto row = q.view({15, 8})[r];
                QVERIFY(int(std::get<0>(at::_unique(row)).numel()) <= (1 << bits));
            }
        }
        QVERIFY(quantisedState(torch::zeros({2, 3}), 2).abs().sum().item<double>() == 0.0);
    }

    // Generating (one step a token) under a shrink computes what the whole sequence gives under it.
    void stepsFollowTheShrunkState_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("setting");
        for (const char* k : {"mamba", "s4_mamba"})
            for (int s = 0; s < 3; ++s) QTest::newRow(qPrintable(QString("%1 %2").arg(k).arg(s))) << k << s;
    }
    void stepsFollowTheShrunkState()
    {
        QFETCH(QString, kind);
        QFETCH(int, setting);
        const StateShrink shrink = setting == 0 ? StateShrink::keepDims(2) : setting == 1 ? StateShrink::keepChannels(0.5) : StateShrink::quantise(3);
        torch::manual_seed(7);
        const ExperimentConfig c = smallConfig(kind);
        SequenceModel net = buildModel(c);
        auto* mamba = dynamic_cast<MambaLMImpl*>(net.get());
        QVERIFY(mamba);
        auto idx = torch::randint(0, CopyVocab{c.task.vocabSize}.size(), {2, 10}, torch::kLong);
        torch::NoGradGuard g;
        const StateShrinkScope scope(shrink);
        const auto parallel = net->forward(idx);
        std::vector<MambaCache> caches;
        std::vector<torch::Tensor> steps;
        for (int64_t t = 0; t < 10; ++t) steps.push_back(mamba->step(idx.select(1, t), caches));
        const double diff = maxAbsDiff(torch::stack(steps, 1), parallel);
        QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    }

    void recurrentStepEqualsParallelForward_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("mamba") << "mamba";
        QTest::newRow("s4_mamba") << "s4_mamba";
        QTest::newRow("lstm") << "lstm";
    }
    void recurrentStepEqualsParallelForward()
    {
        QFETCH(QString, kind);
        const ExperimentConfig c = smallConfig(kind);
        torch::manual_seed(2);
        SequenceModel net = buildModel(c);
        const int64_t B = 3, T = 9, V = CopyVocab{c.task.vocabSize}.size();
        auto idx = torch::randint(0, V, {B, T}, torch::kLong);
        torch::NoGradGuard g;
        auto parallel = net->forward(idx);
        std::vector<torch::Tensor> steps;
        if (auto* mamba = dynamic_cast<MambaLMImpl*>(net.get())) {
            std::vector<MambaCache> caches;
            for (int64_t t = 0; t < T; ++t) steps.push_back(mamba->step(idx.select(1, t), caches));
            QCOMPARE(int(caches.size()), c.model.layers);
        } else {
            auto* lstm = dynamic_cast<LstmLMImpl*>(net.get());
            QVERIFY(lstm);
            std::tuple<torch::Tensor, torch::Tensor> state;
            for (int64_t t = 0; t < T; ++t) steps.push_back(lstm->step(idx.select(1, t), state));
        }
        const double diff = maxAbsDiff(torch::stack(steps, 1), parallel);
        QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    }

    // Generating: the prompt through decode() at once, then one token at a time, gives the same
    // logits as the whole sequence through forward(), for every family with an incremental path
    // (a KV cache for each position scheme, Mamba's recurrent state with and without an MLP).
    void decodeEqualsForward_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("positions");
        QTest::addColumn<int>("mlp");
        for (const char* p : {"nope", "learned", "rope", "alibi", "hard_alibi"}) QTest::newRow(p) << "transformer" << p << 0;
        QTest::newRow("nope with a short conv") << "transformer" << "nope:conv" << 0;
        QTest::newRow("rope with a short conv") << "transformer" << "rope:conv" << 0;
        QTest::newRow("mamba") << "mamba" << "nope" << 0;
        QTest::newRow("mamba with an MLP") << "mamba" << "nope" << 2;
    }
    void decodeEqualsForward()
    {
        QFETCH(QString, kind);
        QFETCH(QString, positions);
        QFETCH(int, mlp);
        ExperimentConfig c = smallConfig(kind);
        c.model.positions = positions.section(':', 0, 0);
        c.model.shortConv = positions.endsWith(":conv") ? 4 : 0;  // a window longer than the one-token steps
        c.model.mambaMlpRatio = mlp;
        if (positions == "hard_alibi") c.model.numMaskedHeads = 2;
        if (positions.startsWith("rope")) c.model.rotaryFraction = 0.5;
        torch::manual_seed(4);
        SequenceModel net = buildModel(c);
        net->eval();
        const int64_t T = 12, prompt = 7, V = CopyVocab{c.task.vocabSize}.size();
        const auto idx = torch::randint(0, V, {2, T}, torch::kLong);
        torch::NoGradGuard g;
        const auto whole = net->forward(idx);
        auto state = net->startDecoding(2, idx.options());
        QVERIFY(state);
        std::vector<torch::Tensor> parts{net->decode(idx.narrow(1, 0, prompt), *state)};
        for (int64_t t = prompt; t < T; ++t) parts.push_back(net->decode(idx.narrow(1, t, 1), *state));
        QCOMPARE(state->length, T);
        const double diff = maxAbsDiff(torch::cat(parts, 1), whole);
        QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    }

    // Mamba reads a prompt at once (the fused scan, the state after it in closed form, by chunks
    // of 256 tokens): the tokens after a 600-token prompt continue as the whole forward does.
    void longPromptPrefillEqualsForward()
    {
        ExperimentConfig c = smallConfig("mamba");
        torch::manual_seed(5);
        SequenceModel net = buildModel(c);
        net->eval();
        const int64_t T = 604, prompt = 600, V = CopyVocab{c.task.vocabSize}.size();
        const auto idx = torch::randint(0, V, {1, T}, torch::kLong);
        torch::NoGradGuard g;
        const auto whole = net->forward(idx);
        auto state = net->startDecoding(1, idx.options());
        std::vector<torch::Tensor> parts{net->decode(idx.narrow(1, 0, prompt), *state)};
        for (int64_t t = prompt; t < T; ++t) parts.push_back(net->decode(idx.narrow(1, t, 1), *state));
        const double diff = maxAbsDiff(torch::cat(parts, 1), whole);
        QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    }

    void hardAlibiMasksExactlyAsDefined()
    {
        TransformerOptions o;
        o.heads = 6;
        o.numMaskedHeads = 3;
        o.positions = Positions::HardAlibi;
        const int64_t T = 9;
        auto bias = attentionBias(o, T, torch::kCPU);
        for (int64_t h = 0; h < 6; ++h)
            for (int64_t q = 0; q < T; ++q)
                for (int64_t k = 0; k < T; ++k) {
                    const bool allowed = q - k >= 0 && (h >= 3 || q - k <= h);
                    QCOMPARE(std::isinf(bias[h][q][k].item<float>()), !allowed);
                    if (allowed) QCOMPARE(bias[h][q][k].item<float>(), 0.0f);
                }
    }

    void alibiSlopesAndBiases()
    {
        auto s = alibiSlopes(8);
        for (int h = 1; h <= 8; ++h) QCOMPARE(s[h - 1].item<float>(), float(std::pow(2.0, -h)));
        TransformerOptions o;
        o.heads = 8;
        o.positions = Positions::Alibi;
        auto bias = attentionBias(o, 5, torch::kCPU);
        QCOMPARE(bias[0][4][1].item<float>(), -0.5f * 3);   // head 1: slope 1/2, distance 3
        QCOMPARE(bias[7][3][3].item<float>(), 0.0f);
        QVERIFY(std::isinf(bias[2][1][3].item<float>()));   // the future
    }

    void ropeDependsOnlyOnRelativePosition()
    {
        torch::manual_seed(3);
        auto q = torch::randn({1, 1, 1, 16}, torch::kDouble), k = torch::randn({1, 1, 1, 16}, torch::kDouble);
        for (int64_t rot : {4, 16}) {
            auto dot = [&](int64_t i, int64_t j) {
                return (applyRotary(q, rot, i) * applyRotary(k, rot, j)).sum().item<double>();
            };
            QVERIFY(std::abs(dot(3, 1) - dot(10, 8)) < 1e-9);
            QVERIFY(std::abs(dot(5, 5) - dot(0, 0)) < 1e-9);
            QVERIFY(std::abs(dot(3, 1) - dot(3, 2)) > 1e-6);  // and it does depend on the distance
        }
        // the dims past the rotary fraction pass through unchanged
        auto x = torch::randn({1, 1, 3, 16});
        QCOMPARE(maxAbsDiff(applyRotary(x, 4, 7).narrow(-1, 4, 12), x.narrow(-1, 4, 12)), 0.0);
    }

    void probesHaveTheDocumentedShapes()
    {
        const int64_t B = 2, T = 7;
        for (const QString& kind : kKinds) {
            const ExperimentConfig c = smallConfig(kind);
            SequenceModel net = buildModel(c);
            auto idx = torch::randint(0, 8, {B, T}, torch::kLong);
            torch::NoGradGuard g;
            Probes p;
            auto withProbes = net->forward(idx, &p);
            QVERIFY2(maxAbsDiff(withProbes, net->forward(idx)) < 1e-5, qPrintable(kind));  // same function
            const ModelFamily& f = familyOf(c.model);
            QCOMPARE(p.attention.empty(), !f.attention && !f.effectiveAttention);
            // attention heads, or (Mamba-2, Gated DeltaNet) the recurrent heads
            const int64_t heads = f.attention ? c.model.heads : recurrentHeads(c.model);
            for (const auto& a : p.attention) QCOMPARE(a.sizes().vec(), (std::vector<int64_t>{B, heads, T, T}));
            QCOMPARE(p.attention.size(), p.attentionLayer.size());
            QCOMPARE(p.stateNorm.empty(), kind == "transformer");
            for (const auto& s : p.stateNorm) {
                QCOMPARE(s.size(0), B);
                QCOMPARE(s.size(1), T);
            }
            QCOMPARE(p.delta.empty(), !f.selectiveScan && kind != "mamba2");  // the families with a step size
            for (const auto& d : p.delta)  // a step size per channel (Mamba), per head (Mamba-2)
                QCOMPARE(d.sizes().vec(), (std::vector<int64_t>{B, T, f.selectiveScan ? c.model.expand * c.model.dModel : heads}));
        }
    }

    // The recurrent heads (Mamba-2, Gated DeltaNet) switch off as attention heads do: one head off
    // changes the logits; every head off leaves each block adding nothing, as zero output
    // projections would; on the fused path and the chunked one.
    void recurrentHeadsSwitchOff()
    {
        for (const QString& kind : kKinds) {
            const ExperimentConfig c = smallConfig(kind);
            const int heads = recurrentHeads(c.model);
            if (heads == 0) continue;
            for (bool fast : {true, false}) {
                const bool before = fastPaths();
                setFastPaths(fast);
                const auto restore = qScopeGuard([before] { setFastPaths(before); });
                torch::manual_seed(4);
                SequenceModel net = buildModel(c);
                torch::NoGradGuard g;
                const auto idx = torch::randint(0, 8, {2, 9}, torch::kLong);
                const auto plain = net->forward(idx);
                HeadAblation one, all;
                one.heads = {{0, 1}};
                for (int l = 0; l < c.model.layers; ++l)
                    for (int h = 0; h < heads; ++h) all.heads.push_back({l, h});
                torch::Tensor oneOff, allOff;
                {
                    const HeadAblationScope scope(one);
                    oneOff = net->forward(idx);
                }
                {
                    const HeadAblationScope scope(all);
                    allOff = net->forward(idx);
                }
                QVERIFY2(maxAbsDiff(oneOff, plain) > 1e-6, qPrintable(kind));
                for (auto& p : net->named_parameters())
                    if (p.key().find("out_proj.weight") != std::string::npos || p.key().find("o_proj.weight") != std::string::npos) p.value().zero_();
                QVERIFY2(maxAbsDiff(allOff, net->forward(idx)) < 1e-6, qPrintable(kind + (fast ? ", fused" : ", chunked")));
            }
        }
    }

    // The facade's plain arrays: shapes, block indices, and what the numbers must satisfy.
    void facadeProbesArePlainArraysWithShapes()
    {
        const std::vector<int> tokens{1, 4, 5, 6, 2, 4, 5, 6, 3};
        const int T = int(tokens.size());
        for (const QString& kind : kKinds) {
            const ExperimentConfig c = smallConfig(kind);
            const Model m = Model::create(c);
            const ModelProbes p = m.probe(tokens);
            const int Di = int(c.model.expand * c.model.dModel);
            // Mamba-2's blocks show their heads as attention heads and keep a state per head
            const bool recurrentHeads = familyOf(c.model).effectiveAttention;
            const int perBlock = recurrentHeads ? parrot::recurrentHeads(c.model) : Di;
            QCOMPARE(int(p.tokens.size()), T);
            QCOMPARE(p.tokens[0], QString("$"));
            const AttentionMaps& a = p.attention;
            QCOMPARE(int(p.attentionLayers.size()), a.layers);
            QCOMPARE(a.weights.size(), size_t(a.layers) * a.heads * T * T);
            for (int l = 0; l < a.layers; ++l)
                for (int h = 0; h < a.heads; ++h)
                    for (int q = 0; q < T; ++q) {
                        double sum = 0;
                        for (int k = 0; k < T; ++k) {
                            if (k > q) QCOMPARE(a.at(l, h, q, k), 0.0f);  // causal
                            sum += a.at(l, h, q, k);
                        }
                        QVERIFY2(std::abs(sum - 1.0) < 1e-4, qPrintable(kind));
                    }
            std::set<int> blocks(p.attentionLayers.begin(), p.attentionLayers.end());
            for (const ProbeMatrix& s : p.stateNorm) {
                if (recurrentHeads) QVERIFY2(blocks.count(s.layer), qPrintable(kind + ": a state without its block's heads"));
                else QVERIFY2(blocks.insert(s.layer).second, qPrintable(kind + ": a block with attention and a state"));
                QCOMPARE(s.rows, T);
                QCOMPARE(s.cols, kind == "lstm" ? 2 * int(c.model.dModel) : perBlock);
                QCOMPARE(s.values.size(), size_t(s.rows) * s.cols);
                for (float v : s.values) QVERIFY(std::isfinite(v) && v >= 0);
            }
            // every block appears once, numbered from 0
            QCOMPARE(int(blocks.size()), int(p.attentionLayers.size() + (recurrentHeads ? 0 : p.stateNorm.size())));
            QCOMPARE(*blocks.rbegin(), int(blocks.size()) - 1);
            const bool mambaBlocks = kind == "mamba" || kind == "hybrid" || kind == "mambaformer";
            QCOMPARE(p.delta.empty(), !mambaBlocks && kind != "mamba2");
            for (const ProbeMatrix& dlt : p.delta) {
                QCOMPARE(dlt.rows, T);
                QCOMPARE(dlt.cols, perBlock);
                for (float v : dlt.values) QVERIFY(v > 0);  // softplus
            }
            // implicit attention: one map per selective-scan block, causal, non-negative
            const AttentionMaps& ia = p.implicitAttention;
            QCOMPARE(ia.layers, kind == "mamba" ? int(c.model.layers) : recurrentHeads ? 0 : int(p.delta.size()));
            QCOMPARE(int(p.implicitLayers.size()), ia.layers);
            if (ia.layers > 0) {
                QCOMPARE(ia.heads, 1);
                QCOMPARE(ia.weights.size(), size_t(ia.layers) * T * T);
                for (size_t i = 0; i < p.delta.size(); ++i) QCOMPARE(p.implicitLayers[i], p.delta[i].layer);
                for (int q = 0; q < T; ++q)
                    for (int k = 0; k < T; ++k) {
                        QVERIFY(ia.at(0, 0, q, k) >= 0);
                        if (k > q) QCOMPARE(ia.at(0, 0, q, k), 0.0f);
                    }
                QVERIFY(ia.at(0, 0, T - 1, T - 1) > 0);
            }
        }
        QVERIFY_THROWS_EXCEPTION(Error, Model::create(smallConfig("mamba")).probe({1, 999}));
    }

    // The unrolled scan is the layer's map: alpha applied to the scan's input, plus the skip, gated
    // and projected, gives the mixer's own output (a one-layer Mamba's, and a trained-size one's).
    void mambaImplicitAttentionIsTheLayersOutputMap()
    {
        for (const auto& [dModel, dState, T] : {std::tuple{16, 4, 9}, std::tuple{32, 16, 40}}) {
            MambaOptions o;
            o.dModel = dModel;
            o.dState = dState;
            MambaMixer mixer(o);
            torch::NoGradGuard g;
            {  // move A and delta off their initial values so every channel decays differently
                mixer->A_log.add_(0.3 * torch::randn_like(mixer->A_log));
                mixer->dt_proj->bias.add_(torch::randn_like(mixer->dt_proj->bias));
            }
            const auto x = torch::randn({2, T, dModel});
            const MambaImplicitAttention ia = mixer->implicitAttention(x);
            const int64_t Di = o.dInner();
            QCOMPARE(ia.alpha.sizes().vec(), (std::vector<int64_t>{2, Di, T, T}));
            QCOMPARE(ia.alpha.triu(1).abs().max().item<double>(), 0.0);  // causal
            const auto y = torch::matmul(ia.alpha, ia.u.unsqueeze(-1)).squeeze(-1) + ia.u * mixer->D.view({1, Di, 1});
            const auto out = mixer->out_proj((y * torch::silu(ia.z)).transpose(1, 2));
            const auto expected = mixer->forward(x);
            QVERIFY2(maxAbsDiff(out, expected) < 1e-4 * (1 + expected.abs().max().item<double>()),
                     qPrintable(QString("d_model %1: %2").arg(dModel).arg(maxAbsDiff(out, expected))));
            // and a wrong map does not: drop each row's own position (the largest entry)
            const auto cut = ia.alpha.tril(-1);
            const auto y2 = torch::matmul(cut, ia.u.unsqueeze(-1)).squeeze(-1) + ia.u * mixer->D.view({1, Di, 1});
            QVERIFY(maxAbsDiff(mixer->out_proj((y2 * torch::silu(ia.z)).transpose(1, 2)), expected) > 1e-4);
        }
    }

    // The blocked channel mean the explorer draws equals unrollScan's |alpha| averaged over the
    // channels, for lengths that are, and are not, multiples of its block, with trained-like
    // decays (A and delta far from their initial values, where a factoring through the block's
    // start would overflow).
    void implicitAttentionMeanEqualsTheUnrolledScan()
    {
        torch::manual_seed(3);
        for (const auto& [Di, N, T] : {std::tuple{8, 4, 5}, std::tuple{40, 16, 16}, std::tuple{300, 8, 53}}) {
            const auto delta = torch::nn::functional::softplus(2 * torch::randn({2, Di, T}));
            const auto A = -torch::exp(torch::randn({Di, N}) + 1.5);
            const auto Bm = torch::randn({2, N, T}), Cm = torch::randn({2, N, T});
            const auto expected = unrollScan(delta, A, Bm, Cm).abs().mean(1);
            const auto got = implicitAttentionMean(delta, A, Bm, Cm);
            QCOMPARE(got.sizes().vec(), expected.sizes().vec());
            QVERIFY(torch::isfinite(got).all().item<bool>());
            QVERIFY2(maxAbsDiff(got, expected) < 1e-5 * (1 + expected.abs().max().item<double>()),
                     qPrintable(QString("Di %1 T %2: %3").arg(Di).arg(T).arg(maxAbsDiff(got, expected))));
        }
        // cancelled between blocks of queries
        const auto d = torch::ones({1, 4, 40});
        QVERIFY_THROWS_EXCEPTION(Error, implicitAttentionMean(d, -torch::ones({4, 2}), torch::ones({1, 2, 40}), torch::ones({1, 2, 40}),
                                                              [] { return false; }));
    }

    // Mamba, LSTM and S4D widened or narrowed to a Transformer's size land within a width step.
    void matchParametersPicksAWidthOfEqualSize()
    {
        ExperimentConfig t = test::tinyConfig();
        const long long target = Model::measure(t).parameters;
        for (const QString& kind : {QString("mamba"), QString("lstm"), QString("s4d"), QString("hybrid")}) {
            ExperimentConfig c = t;
            c.model.kind = kind;
            const ExperimentConfig matched = Model::matchParameters(c, target);
            const long long got = Model::measure(matched).parameters;
            QVERIFY2(std::abs(double(got - target)) / double(target) < 0.1,
                     qPrintable(QString("%1: %2 vs %3 at d_model %4").arg(kind).arg(got).arg(target).arg(matched.model.dModel)));
            // no other width of the step is nearer
            const int step = kind == "hybrid" ? 2 * int(c.model.heads) : 8;
            for (int w : {matched.model.dModel - step, matched.model.dModel + step}) {
                if (w < step) continue;
                ExperimentConfig other = matched;
                other.model.dModel = w;
                QVERIFY2(std::abs(double(Model::measure(other).parameters - target)) >= std::abs(double(got - target)), qPrintable(kind));
            }
            QCOMPARE(matched.model.layers, c.model.layers);
        }
        QVERIFY_THROWS_EXCEPTION(Error, Model::matchParameters(t, 10));  // smaller than any width
        QVERIFY_THROWS_EXCEPTION(Error, Model::matchParameters(t, -1));
    }

    void stateSizesCountWhatThePaperCounts()
    {
        ExperimentConfig c = smallConfig("mamba");
        const int64_t Di = c.model.expand * c.model.dModel;
        QCOMPARE(buildModel(c)->stateSize().floats, c.model.layers * Di * (c.model.dState + c.model.dConv - 1));
        c.model.kind = "lstm";
        QCOMPARE(buildModel(c)->stateSize().floats, 2LL * c.model.dModel * c.model.layers);
        c.model.kind = "transformer";
        const StateSize t = buildModel(c)->stateSize();
        QCOMPARE(t.floats, 0);
        QCOMPARE(t.floatsPerToken, 2LL * c.model.dModel * c.model.layers);
        c.model.shortConv = 3;  // the convolution's window: its last 2 inputs per layer, besides the KV cache
        const StateSize conv = buildModel(c)->stateSize();
        QCOMPARE(conv.floats, 2LL * c.model.dModel * c.model.layers);
        QCOMPARE(conv.floatsPerToken, t.floatsPerToken);
        QCOMPARE(Model::measure(c).parameters, Model::measure([&] { auto p = c; p.model.shortConv = 0; return p; }()).parameters +
                                                   c.model.layers * c.model.dModel * (3 + 1));  // depthwise weights and a bias
        // the hybrid's attention layers take the convolution too: its window joins the Mamba blocks' state
        c.model.kind = "hybrid";
        const StateSize hybrid = buildModel(c)->stateSize();
        c.model.shortConv = 0;
        QCOMPARE(hybrid.floats - buildModel(c)->stateSize().floats, 2LL * c.model.dModel * c.model.layers);
        c.model.shortConv = 3;
        QCOMPARE(Model::create(c).parameterCount(), Model::measure([&] { auto p = c; p.model.shortConv = 0; return p; }()).parameters +
                                                        c.model.layers * c.model.dModel * (3 + 1));
    }

    void sizesAreDescribedForPeople()
    {
        QCOMPARE((ModelSize{404480, 0, 512}).describe(),
                 QString("404,480 parameters; state grows by 512 floats per token of context (KV cache)"));
        QCOMPARE((ModelSize{1000, 5632, 0}).describe(), QString("1,000 parameters; state 5,632 floats = 180,224 bits at 32-bit"));
        const ExperimentConfig c = smallConfig("hybrid");
        const ModelSize s = Model::measure(c);
        QVERIFY(s.stateFloats > 0 && s.stateFloatsPerToken > 0);
        QCOMPARE(s.parameters, Model::create(c).parameterCount());
        ExperimentConfig huge = c;
        huge.model.dModel = 4096;
        huge.model.heads = 8;
        QVERIFY_THROWS_EXCEPTION(Error, Model::measure(huge));
    }

    void mambaParameterNamesFollowMambaSsm()
    {
        SequenceModel net = buildModel(smallConfig("mamba"));
        QStringList names;
        for (const auto& p : net->named_parameters()) names << QString::fromStdString(p.key());
        for (const char* n : {"backbone.embedding.weight", "backbone.layers.0.norm.weight", "backbone.layers.0.mixer.in_proj.weight",
                              "backbone.layers.0.mixer.conv1d.weight", "backbone.layers.0.mixer.conv1d.bias",
                              "backbone.layers.0.mixer.x_proj.weight", "backbone.layers.0.mixer.dt_proj.weight",
                              "backbone.layers.0.mixer.dt_proj.bias", "backbone.layers.0.mixer.A_log",
                              "backbone.layers.0.mixer.D", "backbone.layers.1.mixer.out_proj.weight", "backbone.norm_f.weight"})
            QVERIFY2(names.contains(n), n);
        auto* m = dynamic_cast<MambaLMImpl*>(net.get());
        auto* mixer = m->layers[0]->as<MambaBlockImpl>()->mixer.get();
        // A_log = log(1..N) for every channel; softplus(dt bias) inside [1e-3, 0.1]; D = 1
        QCOMPARE(mixer->A_log[3][2].item<float>(), std::log(3.0f));
        auto dt = torch::nn::functional::softplus(mixer->dt_proj->bias);
        QVERIFY(dt.min().item<float>() >= 0.999e-3f && dt.max().item<float>() <= 0.1001f);
        QCOMPARE(mixer->D.min().item<float>(), 1.0f);
    }

    // model.init = mimetic (Trockman et al. 2024): C's projection starts equal to B's and every
    // state transition near 1, so at initialisation a token's implicit attention peaks on an
    // earlier occurrence of the same context, as an attention head's would; mamba_ssm's default
    // initialisation does not. Refused for a family without selective mixers.
    void mimeticInitStartsMambaLikeAttention()
    {
        auto share = [](const QString& init, const QString& kind) {
            ExperimentConfig c = smallConfig(kind);
            c.model.dModel = 64;
            c.model.dState = 16;
            c.model.init = init;
            c.seed = 5;
            torch::manual_seed(5);
            SequenceModel net = buildModel(c);
            MambaMixerImpl* mixer = nullptr;
            for (const auto& m : net->modules(false))
                if (auto* found = dynamic_cast<MambaMixerImpl*>(m.get())) { mixer = found; break; }
            if (!mixer) return -1.0;
            const int64_t N = c.model.dState, R = mixer->dt_proj->weight.size(1);
            const auto w = mixer->x_proj->weight;
            const bool tied = torch::equal(w.narrow(0, R, N), w.narrow(0, R + N, N));
            const bool slow = (-torch::exp(mixer->A_log) * 0.1).exp().min().item<double>() > 0.999;
            if (init == "mimetic" && !(tied && slow)) return -2.0;
            if (init == "default" && (tied || slow)) return -3.0;
            // 24 distinct random inputs, then the same 24 again: from the 4th repeated position on,
            // the convolution's window equals the one 24 earlier
            torch::NoGradGuard g;
            const auto half = torch::randn({1, 24, 64});
            const auto ia = mixer->implicitAttention(torch::cat({half, half}, 1));
            const auto score = ia.alpha.mean(1)[0];  // (T, T), channels averaged
            // for each repeated position, the share of the other earlier positions scored below the
            // earlier occurrence (1: it is the top; about 1/2 for a score blind to the match)
            double rank = 0;
            int asked = 0;
            for (int64_t t = 27; t < 48; ++t, ++asked) {
                const auto row = score[t].narrow(0, 0, t);  // earlier positions only
                rank += (row < row[t - 24]).sum().item<double>() / double(t - 1);
            }
            return rank / asked;
        };
        for (const char* kind : {"mamba", "mambaformer"}) {
            const double mimetic = share("mimetic", kind), plain = share("default", kind);
            qInfo("%s: the earlier occurrence outranks %.2f of the other positions (mimetic), %.2f (default)", kind, mimetic, plain);
            QVERIFY2(mimetic >= 0.9, qPrintable(QString("%1 mimetic: %2").arg(kind).arg(mimetic)));
            QVERIFY2(plain >= 0 && plain <= 0.75, qPrintable(QString("%1 default: %2").arg(kind).arg(plain)));
        }
        ExperimentConfig lstm = smallConfig("lstm");
        lstm.model.init = "mimetic";
        QVERIFY(validate(lstm).join(" ").contains("model.init: mimetic initialisation is for Mamba's selective mixers"));
        lstm.model.init = "attention";
        QVERIFY(validate(lstm).join(" ").contains("model.init: expected default or mimetic"));
    }

    // mamba_ssm divides out_proj and fc2 by sqrt(residuals per layer * layers) after torch's default
    // init (uniform in +-1/sqrt(fan_in)): one residual per layer without an MLP, two with one.
    void mambaRescalesResidualProjections_data()
    {
        QTest::addColumn<int>("mlpRatio");
        QTest::newRow("no MLP") << 0;
        QTest::newRow("MLP") << 2;
    }
    void mambaRescalesResidualProjections()
    {
        QFETCH(int, mlpRatio);
        ExperimentConfig c = smallConfig("mamba");
        c.model.layers = 3;
        c.model.mambaMlpRatio = mlpRatio;
        SequenceModel net = buildModel(c);
        const double residuals = (mlpRatio > 0 ? 2.0 : 1.0) * c.model.layers;
        int checked = 0;
        for (const auto& p : net->named_parameters()) {
            const QString name = QString::fromStdString(p.key());
            if (!name.endsWith("out_proj.weight") && !name.endsWith("fc2.weight")) continue;
            const double bound = 1.0 / std::sqrt(double(p.value().size(1))) / std::sqrt(residuals);
            const double maxAbs = p.value().abs().max().item<double>();
            QVERIFY2(maxAbs <= bound * 1.0001 && maxAbs > 0.9 * bound,
                     qPrintable(QString("%1: max |w| %2, expected just under %3").arg(name).arg(maxAbs).arg(bound)));
            ++checked;
        }
        QCOMPARE(checked, c.model.layers * (mlpRatio > 0 ? 2 : 1));
    }

    // Every family's float32 gradients, twice over, equal its float64 ones: catches kernels that
    // read memory they should not (LibTorch 1.13's GELU backward did, with a transposed gradient)
    // and any float-only fast path that diverges from the maths.
    void gradientsAreDeterministicAndMatchFloat64_data()
    {
        QTest::addColumn<QString>("kind");
        for (const QString& k : kKinds) QTest::newRow(qPrintable(k)) << k;
    }
    void gradientsAreDeterministicAndMatchFloat64()
    {
        QFETCH(QString, kind);
        const ExperimentConfig c = smallConfig(kind);
        auto gradients = [&](torch::Dtype type) {
            torch::manual_seed(5);
            SequenceModel net = buildModel(c);
            net->to(type);
            torch::manual_seed(6);
            auto idx = torch::randint(0, net->forward(torch::zeros({1, 1}, torch::kLong)).size(-1), {4, 24}, torch::kLong);
            auto logits = net->forward(idx);
            auto w = torch::randn(logits.sizes()).to(type);  // float32 draws either way
            (logits * w).sum().backward();
            std::vector<std::pair<std::string, torch::Tensor>> g;
            for (const auto& p : net->named_parameters()) g.emplace_back(p.key(), p.value().grad().to(torch::kDouble));
            return g;
        };
        const auto a = gradients(torch::kFloat), b = gradients(torch::kFloat), d = gradients(torch::kDouble);
        QCOMPARE(a.size(), d.size());
        for (size_t i = 0; i < a.size(); ++i) {
            const char* name = a[i].first.c_str();
            QVERIFY2(torch::isfinite(a[i].second).all().item<bool>(), name);
            QVERIFY2(torch::equal(a[i].second, b[i].second), name);
            const double scale = d[i].second.abs().max().item<double>() + 1e-6;
            const double err = (a[i].second - d[i].second).abs().max().item<double>() / scale;
            QVERIFY2(err < 2e-3, qPrintable(QString("%1: float32 vs float64 gradient, relative error %2").arg(name).arg(err)));
        }
    }

    // MAD's compression: every family gets the read-out decoder; the logits at every position
    // come from the representation at the row's last `|` alone, so what follows it changes
    // nothing and a letter before it changes them; the estimate counts the decoder exactly; a
    // checkpoint keeps it; and the model refuses to generate.
    void compressionReadsOutAtTheLastSeparator_data() { familyRows(); }
    void compressionReadsOutAtTheLastSeparator()
    {
        QFETCH(QString, kind);
        ExperimentConfig c = smallConfig(kind);
        c.task = taskDefaults("mad_compression");
        c.task.minLen = c.task.maxLen = 8;
        c.task.contextLen = 12;
        c.task.evalLengths = {8};
        ExperimentConfig plain = c;
        plain.task.kind = "mad_recall";  // the same vocabulary, next-token prediction
        const double decoder = 2.0 * (32 * 32 + 32) + 6 * 32;
        QCOMPARE(double(Model::measure(c).parameters - Model::measure(plain).parameters), decoder);
        QCOMPARE(estimatedParameters(c) - estimatedParameters(plain), decoder);

        torch::manual_seed(2);
        SequenceModel net = buildModel(c);
        QVERIFY(net->hasReadOut());
        QVERIFY(!buildModel(plain)->hasReadOut());
        const int64_t V = taskVocabSize(c.task), T = 12;
        // two rows: $ a b c ... |  then padding
        auto idx = torch::randint(4, 4 + 16, {2, T}, torch::kLong);
        idx.select(1, 0).fill_(CopyVocab::Bos);
        idx.select(1, 8).fill_(CopyVocab::Sep);
        idx.narrow(1, 9, T - 9).fill_(CopyVocab::Pad);
        torch::NoGradGuard g;
        const auto base = net->forward(idx);
        QCOMPARE(base.sizes().vec(), (std::vector<int64_t>{2, T, V}));
        QVERIFY(maxAbsDiff(base.select(1, 1), base.select(1, 2)) > 1e-6);  // positions are told apart
        auto after = idx.clone();
        after.narrow(1, 9, T - 9).fill_(5);
        QCOMPARE(maxAbsDiff(net->forward(after), base), 0.0);
        auto letter = idx.clone();
        letter.index_put_({0, 3}, idx.index({0, 3}).item<int64_t>() == 4 ? 5 : 4);
        const auto changed = net->forward(letter);
        QVERIFY(maxAbsDiff(changed.select(0, 0), base.select(0, 0)) > 1e-6);

        const QString path = QDir::temp().filePath(QString("parrot-compression-%1.pt").arg(kind));
        Model model = Model::create(c);
        model.save(path);
        const Model loaded = Model::load(path);
        QFile::remove(path);
        std::vector<int> tokens(idx.data_ptr<int64_t>(), idx.data_ptr<int64_t>() + idx.numel());
        QCOMPARE(loaded.logits(tokens, 2, int(T)), model.logits(tokens, 2, int(T)));
        try {
            loaded.generate({CopyVocab::Bos, 5, 6}, 3);
            QFAIL("a read-out model generated tokens");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("compression"), qPrintable(e.message()));
        }
    }

    // A Transformer and Mamba learn to read back three letters of four from the representation
    // at `|` well above the 1/4 of guessing (MAD's compression, tiny).
    void compressionLearnsATinySequence_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("transformer") << "transformer";
        QTest::newRow("mamba") << "mamba";
    }
    void compressionLearnsATinySequence()
    {
        QFETCH(QString, kind);
        ExperimentConfig c = smallConfig(kind, 300);
        c.task = taskDefaults("mad_compression");
        c.task.vocabSize = 4;
        c.task.minLen = c.task.maxLen = 4;
        c.task.contextLen = 5;
        c.task.evalLengths = {4};
        c.train.lr = 3e-3;
        c.train.warmupSteps = 10;
        const LengthCurve curve = trainedCurve(c, 4);
        QCOMPARE(curve.charAccuracy.size(), size_t(1));
        qInfo("%s: per-letter accuracy %.3f at length 4", qPrintable(kind), curve.charAccuracy[0]);
        QVERIFY(curve.charAccuracy[0] > 0.6);
    }

    // Each family learns something of copying in a few seconds: character accuracy at length 2
    // well above the 1/4 of guessing among four letters. The LSTM needs a higher rate and more
    // steps to leave its plateau, S4D more steps (its time-invariant kernel has to find the lags).
    void everyFamilyLearnsATinyCopyAboveChance_data() { familyRows(); }
    void everyFamilyLearnsATinyCopyAboveChance()
    {
        QFETCH(QString, kind);
        ExperimentConfig c = smallConfig(kind);
        c.task.vocabSize = 4;
        c.task.minLen = 1;
        c.task.maxLen = 2;
        c.task.contextLen = 16;
        c.task.evalLengths = {2};
        c.train.steps = kind == "lstm" ? 600 : kind == "s4d" ? 400 : 150;
        c.train.lr = kind == "lstm" ? 1e-2 : 3e-3;
        c.train.warmupSteps = 10;
        const LengthCurve curve = trainedCurve(c, 2);
        QCOMPARE(curve.charAccuracy.size(), size_t(1));
        qInfo("%s: char accuracy %.3f, string accuracy %.3f at length 2", qPrintable(kind), curve.charAccuracy[0],
              curve.stringAccuracy[0]);
        QVERIFY(curve.charAccuracy[0] > 0.5);
    }

    // train.precision bf16 (autocast): every family trains under it; the first step's loss is
    // the float32 one to bfloat16's precision but not identical (so autocast took effect); the
    // weights, and the checkpoint on disk, stay float32.
    void everyFamilyTrainsInBf16_data() { familyRows(); }
    void everyFamilyTrainsInBf16()
    {
        QFETCH(QString, kind);
        QTemporaryDir dir;
        const auto firstLosses = [&](const QString& precision, const QString& run) {
            ExperimentConfig c = smallConfig(kind, 3);
            c.train.precision = precision;
            c.train.logEvery = 1;
            Model model = Model::create(c);
            TrainControl control;
            TrainCallbacks cb;
            std::vector<double> losses;
            cb.progress = [&](const TrainProgress& p) { losses.insert(losses.end(), p.stepLosses.begin(), p.stepLosses.end()); };
            const TrainOutcome o = train(model, run, control, cb);
            if (o.status != TrainOutcome::Status::Finished) qWarning("%s", qPrintable(o.message));
            for (const auto& p : ModelAccess::impl(model).net->parameters())
                if (p.scalar_type() != torch::kFloat) losses.clear();  // a weight left in bfloat16: fails below
            return losses;
        };
        const std::vector<double> full = firstLosses("fp32", {}), half = firstLosses("bf16", dir.filePath("bf16"));
        QCOMPARE(full.size(), size_t(3));
        QCOMPARE(half.size(), size_t(3));
        qInfo("%s: first loss %.6f (fp32), %.6f (bf16)", qPrintable(kind), full[0], half[0]);
        for (double l : half) QVERIFY(std::isfinite(l));
        QVERIFY2(std::abs(half[0] - full[0]) < 0.02 * full[0], qPrintable(QString("%1 vs %2").arg(half[0]).arg(full[0])));
        QVERIFY(half[0] != full[0]);
        const SafetensorsFile saved = readSafetensors(dir.filePath("bf16/checkpoints/last.safetensors"));
        QVERIFY(!saved.tensors.isEmpty());
        for (auto it = saved.tensors.begin(); it != saved.tensors.end(); ++it) QCOMPARE(it->dtype, QString("F32"));
    }
};

QTEST_GUILESS_MAIN(TestModels)
#include "tst_models.moc"
