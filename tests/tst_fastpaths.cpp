// The fused kernels of the training hot path against their explicit twins: the attention kernel
// (kernels/attention.h) against matmul + bias + softmax, forward and the gradient of q, k and v,
// for every position scheme it serves; whole Transformers and MambaFormers with the fast paths on
// and off (logits and every parameter's gradient); FusedAdamW against torch's AdamW after
// clip_grad_norm_; a batch split into row blocks on two threads against the whole batch; and
// the default experiment trained 50 steps both ways; and the block cache that replaces Torch's
// CPU allocator (blockcache.h) against what it promises.
#include "core/blockcache.h"
#include "core/kernels/attention.h"
#include "core/kernels/fastpaths.h"
#include "core/model.h"
#include "core/models/factory.h"
#include "core/models/transformer.h"
#include "core/train/adamw.h"
#include "core/train/splitbackward.h"
#include "core/train/trainer.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

namespace {

// Restores torch's thread count when a test leaves.
struct Threads {
    int before = at::get_num_threads();
    explicit Threads(int n) { at::set_num_threads(n); }
    ~Threads() { at::set_num_threads(before); }
};

// Restores the process-wide switch when a test leaves, whatever it asserted.
struct FastPaths {
    bool before = fastPaths();
    explicit FastPaths(bool on) { setFastPaths(on); }
    ~FastPaths() { setFastPaths(before); }
};

TransformerOptions options(const QString& positions, int64_t C, int64_t H, int64_t masked)
{
    TransformerOptions o;
    o.positions = positionsFromName(positions.toStdString());
    o.dModel = C;
    o.heads = H;
    o.numMaskedHeads = masked;
    return o;
}

// The explicit path on a fused projection's output: qkv (B, T, 3C) -> (B, T, C).
torch::Tensor explicitAttention(const torch::Tensor& qkv, const TransformerOptions& o)
{
    const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, H = o.heads, D = C / H;
    auto parts = qkv.view({B, T, 3, H, D}).permute({2, 0, 3, 1, 4});
    auto bias = attentionBias(o, T, qkv.device()).to(qkv.scalar_type());
    auto att = torch::softmax(torch::matmul(parts[0], parts[1].transpose(-2, -1)) / std::sqrt(double(D)) + bias, -1);
    return torch::matmul(att, parts[2]).transpose(1, 2).reshape({B, T, C});
}

AttentionPattern patternOf(const TransformerOptions& o)
{
    AttentionPattern p;
    p.heads = o.heads;
    p.scale = 1.0 / std::sqrt(double(o.dModel / o.heads));
    p.window.assign(size_t(o.heads), std::numeric_limits<int64_t>::max());
    if (o.positions == Positions::HardAlibi)
        for (int64_t h = 0; h < o.numMaskedHeads; ++h) p.window[size_t(h)] = h;
    if (o.positions == Positions::Alibi) {
        const auto s = alibiSlopes(o.heads);
        for (int64_t h = 0; h < o.heads; ++h) p.slopes.push_back(s[h].item<double>());
    }
    return p;
}

double maxDiff(const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); }

// Per-step losses of a run folder's metrics.csv (log_every 1).
std::vector<double> losses(const QString& run)
{
    std::vector<double> out;
    const QList<QByteArray> rows = test::readAll(run + "/metrics.csv").trimmed().split('\n');
    const int column = int(rows.value(0).split(',').indexOf("loss"));
    for (int i = 1; i < rows.size() && column >= 0; ++i) {
        const QList<QByteArray> cells = rows[i].split(',');
        if (cells.value(0).toInt() == int(out.size()) + 1) out.push_back(cells.value(column).toDouble());
    }
    return out;
}

}  // namespace

class TestFastPaths : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        torch::manual_seed(7);
        installBlockCache();  // as configureThreads() does in the app
    }

    void attentionMatchesExplicit_data()
    {
        QTest::addColumn<QString>("positions");
        QTest::addColumn<int>("dModel");
        QTest::addColumn<int>("heads");
        QTest::addColumn<int>("masked");
        QTest::addColumn<int>("T");
        QTest::newRow("nope") << "nope" << 32 << 4 << 0 << 19;
        QTest::newRow("learned") << "learned" << 24 << 3 << 0 << 7;
        QTest::newRow("alibi") << "alibi" << 40 << 8 << 0 << 33;
        QTest::newRow("hard_alibi") << "hard_alibi" << 64 << 8 << 4 << 64;
        QTest::newRow("hard_alibi all masked, odd D") << "hard_alibi" << 15 << 3 << 3 << 11;
        QTest::newRow("T = 1") << "hard_alibi" << 16 << 4 << 2 << 1;
        // the vector kernels: head sizes 8 (above), 16 (the default model), 24, 32, 48 and 64
        QTest::newRow("default shape, D 16") << "hard_alibi" << 128 << 8 << 4 << 64;
        QTest::newRow("alibi, D 32") << "alibi" << 64 << 2 << 0 << 70;
        QTest::newRow("hard_alibi, D 64") << "hard_alibi" << 128 << 2 << 1 << 9;
        QTest::newRow("nope, D 24 (MambaFormer at 1M)") << "nope" << 192 << 8 << 0 << 45;
        QTest::newRow("hard_alibi, D 48") << "hard_alibi" << 96 << 2 << 1 << 17;
        QTest::newRow("D 12: scalar loops") << "nope" << 48 << 4 << 0 << 21;
    }
    void attentionMatchesExplicit()
    {
        QFETCH(QString, positions);
        QFETCH(int, dModel);
        QFETCH(int, heads);
        QFETCH(int, masked);
        QFETCH(int, T);
        const TransformerOptions o = options(positions, dModel, heads, masked);
        for (auto type : {torch::kDouble, torch::kFloat}) {
            const double tol = type == torch::kDouble ? 1e-12 : 2e-5;
            auto qkv = torch::randn({3, T, 3 * dModel}, torch::TensorOptions().dtype(type)).set_requires_grad(true);
            auto weight = torch::randn({3, T, dModel}, qkv.options().requires_grad(false));
            auto fused = attentionFused(qkv, patternOf(o));
            auto reference = explicitAttention(qkv, o);
            QVERIFY2(maxDiff(fused, reference) < tol, qPrintable(QString("forward differs by %1").arg(maxDiff(fused, reference))));
            const auto gFused = torch::autograd::grad({(fused * weight).sum()}, {qkv})[0];
            const auto gReference = torch::autograd::grad({(reference * weight).sum()}, {qkv})[0];
            QVERIFY2(maxDiff(gFused, gReference) < 10 * tol,
                     qPrintable(QString("d qkv differs by %1").arg(maxDiff(gFused, gReference))));
            // without gradients the kernel keeps no weights and gives the same values
            torch::NoGradGuard noGrad;
            QCOMPARE(maxDiff(attentionFused(qkv.detach(), patternOf(o)), fused.detach()), 0.0);
        }
    }

    void windowedHeadsIgnoreKeysOutsideTheirWindow()
    {
        // Changing every key and value but the last two rows must not move a window-1 head's output.
        const TransformerOptions o = options("hard_alibi", 16, 4, 4);
        auto qkv = torch::randn({1, 12, 48});
        auto changed = qkv.clone();
        changed.narrow(1, 0, 10).narrow(2, 16, 32).normal_();
        const auto a = attentionFused(qkv, patternOf(o)), b = attentionFused(changed, patternOf(o));
        const int64_t D = 4;
        QCOMPARE(maxDiff(a.select(1, 11).narrow(0, 0, 1).narrow(1, D, D), b.select(1, 11).narrow(0, 0, 1).narrow(1, D, D)), 0.0);
        QVERIFY(maxDiff(a.select(1, 11).narrow(1, 3 * D, D), b.select(1, 11).narrow(1, 3 * D, D)) > 1e-3);  // window 3 sees row 8
    }

    void modelsMatchWithFastPathsOff_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("positions");
        QTest::newRow("transformer hard_alibi") << "transformer" << "hard_alibi";
        QTest::newRow("transformer alibi") << "transformer" << "alibi";
        QTest::newRow("transformer learned") << "transformer" << "learned";
        QTest::newRow("transformer nope, short conv") << "transformer" << "nope:conv";
        QTest::newRow("mambaformer") << "mambaformer" << "nope";
    }
    void modelsMatchWithFastPathsOff()
    {
        QFETCH(QString, kind);
        QFETCH(QString, positions);
        ExperimentConfig c = test::smallConfig(kind);
        c.model.positions = positions.section(':', 0, 0);
        c.model.shortConv = positions.endsWith(":conv") ? 3 : 0;
        torch::manual_seed(3);
        SequenceModel net = buildModel(c);
        auto idx = torch::randint(0, 30, {4, 40}, torch::kLong);
        auto run = [&](bool fast) {
            FastPaths paths(fast);
            for (auto& p : net->parameters()) p.mutable_grad().reset();
            auto logits = net->forward(idx);
            (logits * torch::linspace(-1, 1, logits.size(-1))).sum().backward();
            std::vector<torch::Tensor> grads{logits.detach()};
            for (const auto& p : net->parameters()) grads.push_back(p.grad().clone());
            return grads;
        };
        const auto fast = run(true), slow = run(false);
        QCOMPARE(fast.size(), slow.size());
        for (size_t i = 0; i < fast.size(); ++i)
            QVERIFY2(maxDiff(fast[i], slow[i]) < 1e-5 * std::max(1.0, slow[i].abs().max().item<double>()),
                     qPrintable(QString("%1 differs by %2").arg(i == 0 ? QString("the logits") : QString("gradient %1").arg(i)).arg(maxDiff(fast[i], slow[i]))));
    }

    void logitsAtSomePositionsMatchTheFullForward_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<bool>("parallel");
        QTest::newRow("transformer") << "transformer" << false;
        QTest::newRow("transformer, parallel residual") << "transformer" << true;
        QTest::newRow("transformer, short conv") << "transformer:conv" << false;
        QTest::newRow("mamba (the default: select before the head)") << "mamba" << false;
    }
    void logitsAtSomePositionsMatchTheFullForward()
    {
        QFETCH(QString, kind);
        QFETCH(bool, parallel);
        ExperimentConfig c = test::smallConfig(kind.section(':', 0, 0));
        c.model.parallelResidual = parallel;
        c.model.shortConv = kind.endsWith(":conv") ? 3 : 0;
        torch::manual_seed(5);
        SequenceModel net = buildModel(c);
        auto idx = torch::randint(0, 30, {3, 17}, torch::kLong);
        auto rows = torch::tensor(std::vector<int64_t>{0, 5, 16, 17, 30, 50}, torch::kLong);
        auto w = torch::randn({6, 30});
        auto full = net->forward(idx);
        auto selected = full.reshape({-1, full.size(-1)}).index_select(0, rows);
        auto at = net->forwardAt(idx, rows);
        QCOMPARE(at.sizes().vec(), selected.sizes().vec());
        QVERIFY(maxDiff(at, selected) < 1e-5);
        const auto params = net->parameters();
        const auto gFull = torch::autograd::grad({(selected * w).sum()}, params);
        const auto gAt = torch::autograd::grad({(at * w).sum()}, params, {}, false, false, true);
        for (size_t i = 0; i < params.size(); ++i) {
            if (!gAt[i].defined()) continue;  // unused parameters, as in the full forward
            QVERIFY2(maxDiff(gAt[i], gFull[i]) < 1e-5, qPrintable(QString("gradient %1 differs by %2").arg(i).arg(maxDiff(gAt[i], gFull[i]))));
        }
    }

    // The batch split into row blocks, each forward and backward on its own thread
    // (train/splitbackward.h), against the whole batch at once: the same loss and gradients.
    void splitBatchMatchesTheWholeBatch_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<int>("parts");
        QTest::newRow("transformer, 2 blocks") << "transformer" << 2;
        QTest::newRow("transformer, 3 uneven blocks") << "transformer" << 3;
        QTest::newRow("mamba, 2 blocks") << "mamba" << 2;
        QTest::newRow("lstm, 2 blocks") << "lstm" << 2;
        QTest::newRow("mambaformer, 2 blocks") << "mambaformer" << 2;
    }
    void splitBatchMatchesTheWholeBatch()
    {
        QFETCH(QString, kind);
        QFETCH(int, parts);
        Threads threads(2);  // two blocks at once even where torch would start with one thread
        ExperimentConfig c = test::smallConfig(kind);
        torch::manual_seed(11);
        SequenceModel net = buildModel(c);
        std::mt19937_64 rng(3);
        const TokenBatch b = TokenTask::create(c.task)->trainBatch(10, rng);
        const auto params = net->parameters();
        auto gradients = [&](int n, double& loss) {
            for (auto p : params) p.mutable_grad().reset();
            loss = tokenLossBackward(net, b, torch::kCPU, n);
            std::vector<torch::Tensor> g;
            for (const auto& p : params) g.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
            return g;
        };
        double whole = 0, split = 0;
        const auto gWhole = gradients(1, whole);
        const auto gSplit = gradients(parts, split);
        QVERIFY2(std::abs(whole - split) < 1e-6 * std::max(1.0, whole), qPrintable(QString("loss %1 against %2").arg(split).arg(whole)));
        int compared = 0;
        for (size_t i = 0; i < params.size(); ++i) {
            QCOMPARE(gSplit[i].defined(), gWhole[i].defined());
            if (!gWhole[i].defined()) continue;
            const double scale = std::max(1e-3, gWhole[i].abs().max().item<double>());
            QVERIFY2(maxDiff(gSplit[i], gWhole[i]) < 1e-5 * scale,
                     qPrintable(QString("gradient %1 differs by %2 (scale %3)").arg(i).arg(maxDiff(gSplit[i], gWhole[i])).arg(scale)));
            ++compared;
        }
        QVERIFY(compared >= int(params.size()) - 2);
        // The trainer splits on the CPU with the fast paths on, and not with them off.
        QCOMPARE(splitParts(b, torch::kCPU), 1);  // 10 rows: fewer than 8 per block for two
        TokenBatch wide = b;
        wide.batch = 32;
        QCOMPARE(splitParts(wide, torch::kCPU), 2);
        FastPaths off(false);
        QCOMPARE(splitParts(wide, torch::kCPU), 1);
    }

    void probesStillSeeTheAttentionWeights()
    {
        // A probed forward takes the explicit path: the weights are there and the logits agree.
        const Model m = Model::create(test::smallConfig("transformer"));
        std::vector<int> tokens(30);
        for (int i = 0; i < 30; ++i) tokens[size_t(i)] = 4 + i % 26;
        const AttentionMaps probed = m.attention(tokens);
        QCOMPARE(probed.layers, 2);
        QCOMPARE(int(probed.weights.size()), probed.layers * probed.heads * 30 * 30);
        for (int q = 0; q < 30; ++q) {  // each row a distribution over the keys up to it
            float sum = 0;
            for (int k = 0; k < 30; ++k) sum += probed.at(1, 3, q, k);
            QVERIFY(std::abs(sum - 1) < 1e-4);
        }
    }

    void fusedAdamWMatchesTorch_data()
    {
        QTest::addColumn<double>("clip");
        QTest::newRow("clipped") << 0.5;
        QTest::newRow("clip above the norm") << 1e6;
        QTest::newRow("no clipping") << 0.0;
    }
    void fusedAdamWMatchesTorch()
    {
        QFETCH(double, clip);
        torch::manual_seed(11);
        std::vector<torch::Tensor> a{torch::randn({70, 33}), torch::randn({40000}), torch::randn({5})}, b;
        for (auto& t : a) {
            t.set_requires_grad(true);
            b.push_back(t.detach().clone().set_requires_grad(true));
        }
        FusedAdamW fused({{{a[0], a[1]}, 0.1}, {{a[2]}, 0.0}}, 0.9, 0.98);
        std::vector<torch::optim::OptimizerParamGroup> groups;
        groups.emplace_back(std::vector<torch::Tensor>{b[0], b[1]}, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(1e-2).betas({0.9, 0.98}).weight_decay(0.1)));
        groups.emplace_back(std::vector<torch::Tensor>{b[2]}, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(1e-2).betas({0.9, 0.98}).weight_decay(0.0)));
        torch::optim::AdamW reference(groups, torch::optim::AdamWOptions(1e-2));
        for (int step = 0; step < 20; ++step) {
            const double lr = 1e-2 * (1.0 - step / 40.0);
            for (size_t i = 0; i < a.size(); ++i) {
                const auto g = torch::randn_like(a[i]) * (1 + step);
                a[i].mutable_grad() = g.clone();
                b[i].mutable_grad() = g.clone();
            }
            fused.step(lr, clip);
            for (auto& g : reference.param_groups()) static_cast<torch::optim::AdamWOptions&>(g.options()).lr(lr);
            if (clip > 0) torch::nn::utils::clip_grad_norm_(b, clip);
            reference.step();
            for (size_t i = 0; i < a.size(); ++i) {
                QVERIFY(!a[i].grad().defined());  // dropped: the next backward writes fresh ones
                QVERIFY2(maxDiff(a[i], b[i]) < 1e-5, qPrintable(QString("step %1, tensor %2: %3").arg(step).arg(i).arg(maxDiff(a[i], b[i]))));
            }
        }
        QVERIFY(maxDiff(a[1], b[1].detach() * 0) > 0.1);  // the parameters did move
    }

    void defaultTrainingLossesMatchTheOldPath()
    {
        // The default experiment, 50 steps with the fast paths and with their twins: the same
        // losses up to floating-point reordering.
        ExperimentConfig c;
        c.train.steps = 50;
        c.train.evalEvery = 0;
        c.train.checkpointEvery = 0;
        c.train.logEvery = 1;
        c.task.evalLengths = {5};
        c.task.evalSamples = 8;
        QTemporaryDir dir;
        std::vector<std::vector<double>> runs;
        Threads threads(2);  // the fast run splits its batches over two threads (train/splitbackward.h)
        for (bool fast : {true, false}) {
            FastPaths paths(fast);
            Model m = Model::create(c);
            TrainControl control;
            const QString run = dir.filePath(fast ? "fast" : "reference");
            const TrainOutcome o = train(m, run, control, {});
            QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
            runs.push_back(losses(run));
            QCOMPARE(int(runs.back().size()), 50);
        }
        double worst = 0;
        for (size_t i = 0; i < 50; ++i) worst = std::max(worst, std::abs(runs[0][i] - runs[1][i]));
        QVERIFY2(worst < 1e-4, qPrintable(QString("losses differ by up to %1").arg(worst)));
        QVERIFY(runs[0].back() < runs[0].front() - 0.3);  // and it learned
    }

    void blockCacheReusesFreedBlocksWhileKept()
    {
        const BlockCacheStats start = blockCacheStats();
        QCOMPARE(start.cachedBytes, size_t(0));
        {
            const KeepFreedBlocks keep;
            auto a = torch::full({300000}, 1.5f);  // 1.2 MB: a large block
            const void* p = a.data_ptr();
            QCOMPARE(reinterpret_cast<uintptr_t>(p) % 64, uintptr_t(0));  // Torch's alignment
            a = torch::Tensor();
            QVERIFY(blockCacheStats().cachedBytes >= 1200000);
            auto b = torch::zeros({290000});  // a little smaller: the same block serves it
            QCOMPARE(static_cast<const void*>(b.data_ptr()), p);
            QCOMPARE(b.sum().item<float>(), 0.0f);  // and it holds what was asked, not the old values
            QCOMPARE(blockCacheStats().reused, start.reused + 1);
            auto c = torch::ones({1000000});  // more than half as much again: a new block
            QVERIFY(c.data_ptr() != p);
            auto small = torch::ones({100});  // small ones go to the C library
            QCOMPARE(blockCacheStats().mapped, start.mapped + 2);
        }
        QCOMPARE(blockCacheStats().cachedBytes, size_t(0));  // the last keeper gave everything back
        auto d = torch::ones({300000});
        d = torch::Tensor();
        QCOMPARE(blockCacheStats().cachedBytes, size_t(0));  // no keeper: freed blocks are unmapped
        auto empty = torch::empty({0});
        QCOMPARE(empty.numel(), int64_t(0));
    }

    void blockCacheGivesBackOnlyWhatCameAfterAMark()
    {
        const KeepFreedBlocks keep;
        auto step = torch::ones({500000});
        const void* stepBlock = step.data_ptr();
        step = torch::Tensor();  // a training step's tensor, cached
        const uint64_t mark = blockCacheMark();
        auto eval = torch::ones({700000});
        eval = torch::Tensor();  // an evaluation's, cached after the mark
        const size_t before = blockCacheStats().cachedBytes;
        releaseCachedBlocksSince(mark);
        const size_t after = blockCacheStats().cachedBytes;
        QVERIFY(after < before && after >= 2000000);
        step = torch::ones({500000});
        QCOMPARE(static_cast<const void*>(step.data_ptr()), stepBlock);  // the step's block stayed
    }

    void blockCacheServesManyThreadsAtOnce()
    {
        // Threads allocating, writing, reading and freeing large tensors together: each sees its
        // own values, and nothing is cached once the keeper is gone.
        Threads threads(2);
        std::atomic<int> wrong{0};
        {
            const KeepFreedBlocks keep;
            at::parallel_for(0, 64, 1, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i)
                    for (int r = 0; r < 20; ++r) {
                        auto t = torch::full({int64_t(20000 + 997 * ((i + r) % 13))}, float(i * 100 + r));
                        auto u = t * 2;
                        if (u.min().item<float>() != float(2 * (i * 100 + r)) || u.max().item<float>() != u.min().item<float>())
                            wrong += 1;
                    }
            });
        }
        QCOMPARE(wrong.load(), 0);
        QCOMPARE(blockCacheStats().cachedBytes, size_t(0));
    }

    void trainingKeepsItsStepsMemoryAndGivesItBack()
    {
        // A short run with an evaluation: while it trains the cache serves the steps' tensors
        // (reused, not mapped anew each step); afterwards nothing is left cached.
        ExperimentConfig c;
        c.train.steps = 20;
        c.train.evalEvery = 10;
        c.train.checkpointEvery = 0;
        c.task.evalLengths = {5, 20};
        c.task.evalSamples = 16;
        Model m = Model::create(c);
        const BlockCacheStats before = blockCacheStats();
        TrainControl control;
        const TrainOutcome o = train(m, QString(), control, {});
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        const BlockCacheStats after = blockCacheStats();
        QCOMPARE(after.cachedBytes, size_t(0));
        const size_t reused = after.reused - before.reused, mapped = after.mapped - before.mapped;
        QVERIFY2(reused > 5 * mapped, qPrintable(QString("%1 blocks reused, %2 mapped").arg(reused).arg(mapped)));
    }
};

QTEST_GUILESS_MAIN(TestFastPaths)
#include "tst_fastpaths.moc"
