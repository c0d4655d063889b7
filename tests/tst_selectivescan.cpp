// The fused selective scan against its reference loop: outputs and every input gradient,
// across shapes (T = 1, odd sizes), with and without the gate and the delta bias, for every
// build of the vector kernel the CPU runs (AVX-512, AVX2, baseline); a double-precision
// finite-difference check of the fused backward; and the same bits whatever the thread count.
// Also the rest of the Mamba block's fast path: the fused causal convolution + SiLU against
// conv1d and silu, the fused RMS norm against its torch ops, the channel-last mixer against its
// explicit twin, and the Mamba families' logits at some rows against their full forward.
#include "core/kernels/fastpaths.h"
#include "core/kernels/selectivescan.h"
#include "core/models/factory.h"
#include "core/models/mamba.h"
#include "testutil.h"

#include <ATen/Parallel.h>

#include <QtTest>

using namespace parrot;

namespace {

// Views: u, delta and z as transposes of (B, T, D) tensors, the layout the Mamba mixer hands
// over; deltaScale widens delta to reach softplus's tails.
ScanInputs randomInputs(int64_t B, int64_t D, int64_t T, int64_t N, bool gate, bool bias, torch::Dtype type,
                        bool views = false, double deltaScale = 0.5)
{
    auto opts = torch::TensorOptions().dtype(type);
    auto btd = [&] { return views ? torch::randn({B, T, D}, opts).transpose(1, 2) : torch::randn({B, D, T}, opts); };
    ScanInputs in;
    in.u = btd();
    in.delta = btd() * deltaScale - 1.0;
    in.A = -torch::exp(torch::randn({D, N}, opts) * 0.5);
    in.B = torch::randn({B, N, T}, opts);
    in.C = torch::randn({B, N, T}, opts);
    in.D = torch::randn({D}, opts);
    if (gate) in.z = btd();
    if (bias) in.deltaBias = torch::randn({D}, opts) * 0.3;
    return in;
}

std::vector<torch::Tensor*> leaves(ScanInputs& in)
{
    std::vector<torch::Tensor*> l{&in.u, &in.delta, &in.A, &in.B, &in.C, &in.D};
    if (in.z.defined()) l.push_back(&in.z);
    if (in.deltaBias.defined()) l.push_back(&in.deltaBias);
    return l;
}

const char* kNames[] = {"u", "delta", "A", "B", "C", "D", "z", "delta_bias"};

// max |a - b| / (max |b| + eps): a relative error over the whole tensor
double relError(const torch::Tensor& a, const torch::Tensor& b)
{
    return (a - b).abs().max().item<double>() / (b.abs().max().item<double>() + 1e-12);
}

}  // namespace

class TestSelectiveScan : public QObject {
    Q_OBJECT
private slots:
    void fusedMatchesReference_data()
    {
        QTest::addColumn<int>("B");
        QTest::addColumn<int>("D");
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("N");
        QTest::addColumn<bool>("gate");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<bool>("views");
        QTest::addColumn<bool>("softplus");
        QTest::addColumn<double>("deltaScale");
        QTest::addColumn<double>("zScale");  // the gate's spread: past +-88 exp(-z) overflows a float
        QTest::newRow("T=1") << 2 << 3 << 1 << 4 << true << true << false << true << 0.5 << 1.0;
        QTest::newRow("all ones") << 1 << 1 << 1 << 1 << true << true << false << true << 0.5 << 1.0;
        QTest::newRow("odd") << 3 << 7 << 13 << 5 << true << true << false << true << 0.5 << 1.0;
        QTest::newRow("no gate") << 2 << 5 << 9 << 3 << false << true << false << true << 0.5 << 1.0;
        QTest::newRow("no bias") << 2 << 5 << 9 << 3 << true << false << false << true << 0.5 << 1.0;
        QTest::newRow("bare") << 2 << 4 << 6 << 2 << false << false << false << true << 0.5 << 1.0;
        QTest::newRow("mamba-like") << 2 << 32 << 64 << 16 << true << true << false << true << 0.5 << 1.0;
        QTest::newRow("long") << 1 << 4 << 300 << 8 << true << true << false << true << 0.5 << 1.0;
        QTest::newRow("transposed views") << 3 << 19 << 11 << 6 << true << true << true << true << 0.5 << 1.0;
        QTest::newRow("softplus tails") << 2 << 9 << 7 << 4 << true << true << false << true << 12.0 << 1.0;
        QTest::newRow("no softplus") << 2 << 9 << 7 << 4 << true << true << false << false << 0.0 << 1.0;
        // Two channel groups (64 each, the last of 6: a part-filled vector) for one batch row;
        // T not a multiple of the 8 or 16 steps transposed at a time; N = 16 summed a vector of
        // lanes at a time, N = 20 with a remainder.
        QTest::newRow("B=1, two groups") << 1 << 70 << 19 << 16 << true << true << false << true << 0.5 << 1.0;
        QTest::newRow("groups, views, N=20") << 2 << 130 << 33 << 20 << true << true << true << true << 0.5 << 1.0;
        QTest::newRow("full blocks as views") << 2 << 64 << 40 << 16 << true << true << true << true << 0.5 << 1.0;
        QTest::newRow("full blocks, no gate") << 3 << 48 << 35 << 16 << false << true << false << true << 0.5 << 1.0;
        QTest::newRow("saturated gate") << 2 << 40 << 21 << 8 << true << true << false << true << 0.5 << 150.0;
    }
    void fusedMatchesReference()
    {
        QFETCH(int, B);
        QFETCH(int, D);
        QFETCH(int, T);
        QFETCH(int, N);
        QFETCH(bool, gate);
        QFETCH(bool, bias);
        QFETCH(bool, views);
        QFETCH(bool, softplus);
        QFETCH(double, deltaScale);
        QFETCH(double, zScale);
        torch::manual_seed(B * 1000 + D * 100 + T + N);
        ScanInputs ref = randomInputs(B, D, T, N, gate, bias, torch::kFloat, views, deltaScale);
        if (gate) ref.z = ref.z * zScale;
        if (!softplus) {  // then delta is the step itself and must be positive
            ref.delta = torch::rand_like(ref.delta) * 0.5 + 0.01;
            ref.deltaSoftplus = false;
        }
        for (auto* t : leaves(ref)) t->set_requires_grad(true);
        auto yRef = selectiveScanReference(ref);
        auto w = torch::randn_like(yRef);
        (yRef * w).sum().backward();

        // Every CPU code: each build of the vector kernel and the CUDA kernel's per-channel code.
        std::vector<std::pair<ScanPath, std::string>> codes;
        for (const std::string& k : scanKernels()) codes.push_back({ScanPath::Vector, k});
        codes.push_back({ScanPath::Channel, ""});
        for (const auto& [path, kernel] : codes) {
            useScanKernel(kernel);
            const QString which = path == ScanPath::Vector ? QString::fromStdString("vector " + kernel) : "channel";
            ScanInputs fused = ref;
            for (auto* t : leaves(fused)) *t = t->detach().clone().set_requires_grad(true);
            QCOMPARE(fused.u.is_contiguous(), !views);  // clone() keeps the strides
            auto yFused = selectiveScanFused(fused, path);
            QCOMPARE(yFused.sizes().vec(), (std::vector<int64_t>{B, D, T}));
            QVERIFY2(relError(yFused, yRef) < 1e-4, qPrintable(which + ": y " + QString::number(relError(yFused, yRef))));
            (yFused * w).sum().backward();
            const auto lr = leaves(ref), lf = leaves(fused);
            for (size_t i = 0; i < lr.size(); ++i) {
                const int name = int(i) < 6 ? int(i) : (lr[i] == &ref.z ? 6 : 7);
                QVERIFY2(lf[i]->grad().defined(), kNames[name]);
                const double e = relError(lf[i]->grad(), lr[i]->grad());
                QVERIFY2(e < 1e-4, qPrintable(QString("%1: d%2: relative error %3").arg(which, kNames[name]).arg(e)));
            }
        }
        useScanKernel("");
    }

    // Work is split into (batch row, channel group) items, each computed whole by one thread,
    // and dB and dC are summed over the groups in order: so one thread and two give the same
    // bits, forward and every gradient (resumed training is compared bit for bit).
    void sameBitsWhateverTheThreads()
    {
        torch::manual_seed(5);
        ScanInputs base = randomInputs(3, 150, 37, 16, true, true, torch::kFloat, true);
        auto w = torch::randn({3, 150, 37});
        const int threads = at::get_num_threads();
        for (const std::string& kernel : scanKernels()) {
            useScanKernel(kernel);
            std::vector<std::vector<torch::Tensor>> runs;
            for (int n : {1, 2, 3}) {
                at::set_num_threads(n);
                ScanInputs in = base;
                for (auto* t : leaves(in)) *t = t->detach().clone().set_requires_grad(true);
                auto y = selectiveScanFused(in);
                (y * w).sum().backward();
                std::vector<torch::Tensor> r{y.detach()};
                for (auto* t : leaves(in)) r.push_back(t->grad());
                runs.push_back(r);
            }
            for (size_t k = 1; k < runs.size(); ++k)
                for (size_t i = 0; i < runs[0].size(); ++i)
                    QVERIFY2(torch::equal(runs[0][i], runs[k][i]),
                             qPrintable(QString("%1: output %2 differs with %3 threads").arg(kernel.c_str()).arg(i).arg(k + 1)));
        }
        useScanKernel("");
        at::set_num_threads(threads);
    }

    void fusedBackwardMatchesFiniteDifferences_data()
    {
        QTest::addColumn<int>("path");
        QTest::newRow("vector") << int(ScanPath::Vector);
        QTest::newRow("channel") << int(ScanPath::Channel);
    }
    void fusedBackwardMatchesFiniteDifferences()
    {
        QFETCH(int, path);
        const auto scanPath = ScanPath(path);
        torch::manual_seed(7);
        ScanInputs in = randomInputs(2, 3, 4, 2, true, true, torch::kDouble);
        for (auto* t : leaves(in)) t->set_requires_grad(true);
        auto w = torch::randn({2, 3, 4}, torch::kDouble);
        (selectiveScanFused(in, scanPath) * w).sum().backward();
        const double eps = 1e-6;
        int index = 0;
        for (auto* leaf : leaves(in)) {
            auto analytic = leaf->grad().clone();
            auto flat = leaf->detach().view({-1});
            for (int64_t k = 0; k < flat.numel(); ++k) {
                torch::NoGradGuard g;
                const double orig = flat[k].item<double>();
                ScanInputs probe = in;
                for (auto* t : leaves(probe)) *t = t->detach();
                auto perturbed = [&](double v) {
                    auto copy = leaf->detach().clone();
                    copy.view({-1})[k] = v;
                    ScanInputs p = probe;
                    for (size_t j = 0; j < leaves(in).size(); ++j)
                        if (leaves(in)[j] == leaf) *leaves(p)[j] = copy;
                    return (selectiveScanFused(p, scanPath) * w).sum().item<double>();
                };
                const double numeric = (perturbed(orig + eps) - perturbed(orig - eps)) / (2 * eps);
                const double a = analytic.view({-1})[k].item<double>();
                QVERIFY2(std::abs(a - numeric) <= 1e-6 * std::max(1.0, std::abs(numeric)),
                         qPrintable(QString("d%1[%2]: analytic %3, numeric %4").arg(kNames[index]).arg(k).arg(a).arg(numeric)));
            }
            ++index;
        }
    }

    void statesAreReturnedByTheReference()
    {
        ScanInputs in = randomInputs(2, 3, 5, 4, false, false, torch::kFloat);
        torch::Tensor states;
        auto y = selectiveScanReference(in, &states);
        QCOMPARE(states.sizes().vec(), (std::vector<int64_t>{2, 3, 5, 4}));
        // y_t = C_t . x_t + D u_t
        auto expect = (states * in.C.transpose(1, 2).unsqueeze(1)).sum(-1) + in.u * in.D.view({1, 3, 1});
        QVERIFY(relError(y, expect) < 1e-5);
    }

    // Runs where the build has the CUDA kernel and Torch sees a GPU; elsewhere the channel rows
    // above test the same per-thread code on the host.
    void cudaKernelMatchesReferenceOnGpu()
    {
        if (!cudaScanBuilt()) QSKIP("this build has no CUDA scan kernel (nvcc was not found)");
        if (!torch::cuda::is_available()) QSKIP("Torch sees no CUDA device");
        torch::manual_seed(11);
        ScanInputs cpu = randomInputs(3, 70, 45, 16, true, true, torch::kFloat, true);
        for (auto* t : leaves(cpu)) t->set_requires_grad(true);
        ScanInputs gpu = cpu;
        for (auto* t : leaves(gpu)) *t = t->detach().to(torch::kCUDA).set_requires_grad(true);
        auto yRef = selectiveScanReference(cpu);
        auto y = selectiveScan(gpu);
        QVERIFY2(y.grad_fn() && y.grad_fn()->name().find("ScanFunction") != std::string::npos, "not the CUDA kernel");
        QVERIFY(relError(y.cpu(), yRef) < 1e-4);
        auto w = torch::randn_like(yRef);
        (yRef * w).sum().backward();
        (y * w.to(torch::kCUDA)).sum().backward();
        const auto lr = leaves(cpu), lg = leaves(gpu);
        for (size_t i = 0; i < lr.size(); ++i) {
            const double e = relError(lg[i]->grad().cpu(), lr[i]->grad());
            QVERIFY2(e < 1e-4, qPrintable(QString("d%1: relative error %2").arg(kNames[i]).arg(e)));
        }
    }

    void convMatchesReference_data()
    {
        QTest::addColumn<int>("B");
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("D");
        QTest::addColumn<int>("K");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<bool>("view");  // x as the first half of a (B, T, 2D) projection
        QTest::addColumn<bool>("float64");
        QTest::addColumn<double>("scale");  // of the input: past -88 before the SiLU, exp(-x) overflows a float
        QTest::newRow("odd channels") << 2 << 13 << 37 << 4 << true << false << false << 1.0;
        QTest::newRow("T < K") << 3 << 2 << 20 << 4 << true << false << false << 1.0;
        QTest::newRow("T = 1") << 2 << 1 << 9 << 3 << true << false << false << 1.0;
        QTest::newRow("projection view") << 2 << 17 << 64 << 4 << true << true << false << 1.0;
        QTest::newRow("no bias") << 1 << 11 << 48 << 4 << false << true << false << 1.0;
        QTest::newRow("float64") << 2 << 9 << 7 << 4 << true << true << true << 1.0;
        QTest::newRow("saturated") << 2 << 15 << 40 << 4 << true << false << false << 200.0;
    }
    void convMatchesReference()
    {
        QFETCH(int, B);
        QFETCH(int, T);
        QFETCH(int, D);
        QFETCH(int, K);
        QFETCH(bool, bias);
        QFETCH(bool, view);
        QFETCH(bool, float64);
        QFETCH(double, scale);
        torch::manual_seed(B * 100 + T + D + K);
        const auto opts = torch::TensorOptions().dtype(float64 ? torch::kDouble : torch::kFloat);
        const auto full = torch::randn({B, T, view ? 2 * D : D}, opts) * scale;
        const auto w0 = torch::randn({D, 1, K}, opts) * 0.5, b0 = torch::randn({D}, opts);
        const auto g = torch::randn({B, T, D}, opts);
        auto leaf = [](const torch::Tensor& t) { return t.detach().clone().set_requires_grad(true); };
        auto xr = leaf(full.narrow(2, 0, D)), wr = leaf(w0), br = bias ? leaf(b0) : torch::Tensor();
        auto yr = causalConvSiluReference(xr, wr, br);
        (yr * g).sum().backward();
        for (const std::string& kernel : scanKernels()) {
            useScanKernel(kernel);
            auto wide = leaf(full), wf = leaf(w0), bf = bias ? leaf(b0) : torch::Tensor();
            auto input = wide.narrow(2, 0, D);  // a strided view when `view`
            auto yf = causalConvSilu(input, wf, bf);
            QVERIFY(yf.is_contiguous());
            QVERIFY2(yf.grad_fn() && yf.grad_fn()->name().find("ConvFunction") != std::string::npos, "not the fused conv");
            (yf * g).sum().backward();
            const QString k = QString::fromStdString(kernel);
            const double tol = float64 ? 1e-12 : 1e-5;
            QVERIFY2(relError(yf, yr) < tol, qPrintable(k + ": u " + QString::number(relError(yf, yr))));
            const auto dx = wide.grad().narrow(2, 0, D);
            QVERIFY2(relError(dx, xr.grad()) < tol, qPrintable(k + ": dx " + QString::number(relError(dx, xr.grad()))));
            QVERIFY2(relError(wf.grad(), wr.grad()) < tol, qPrintable(k + ": dw " + QString::number(relError(wf.grad(), wr.grad()))));
            if (bias) QVERIFY2(relError(bf.grad(), br.grad()) < tol, qPrintable(k + ": dbias " + QString::number(relError(bf.grad(), br.grad()))));
        }
        useScanKernel("");
    }

    void rmsNormMatchesReference_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("C");
        QTest::addColumn<bool>("float64");
        QTest::newRow("odd width") << 37 << 37 << false;
        QTest::newRow("blocks of rows and a remainder") << 150 << 272 << false;
        QTest::newRow("one row") << 1 << 8 << false;
        QTest::newRow("float64") << 70 << 19 << true;
    }
    void rmsNormMatchesReference()
    {
        QFETCH(int, rows);
        QFETCH(int, C);
        QFETCH(bool, float64);
        torch::manual_seed(rows + C);
        const auto opts = torch::TensorOptions().dtype(float64 ? torch::kDouble : torch::kFloat);
        const auto x0 = torch::randn({rows, C}, opts).view({1, rows, C}) * 3, w0 = torch::randn({C}, opts), g = torch::randn({1, rows, C}, opts);
        auto leaf = [](const torch::Tensor& t) { return t.detach().clone().set_requires_grad(true); };
        auto xr = leaf(x0), wr = leaf(w0);
        auto yr = rmsNormReference(xr, wr, 1e-5);
        (yr * g).sum().backward();
        for (const std::string& kernel : scanKernels()) {
            useScanKernel(kernel);
            auto xf = leaf(x0), wf = leaf(w0);
            auto yf = rmsNorm(xf, wf, 1e-5);
            QVERIFY2(yf.grad_fn() && yf.grad_fn()->name().find("NormFunction") != std::string::npos, "not the fused norm");
            (yf * g).sum().backward();
            const double tol = float64 ? 1e-12 : 1e-5;
            const QString k = QString::fromStdString(kernel);
            QVERIFY2(relError(yf, yr) < tol, qPrintable(k + ": y " + QString::number(relError(yf, yr))));
            QVERIFY2(relError(xf.grad(), xr.grad()) < tol, qPrintable(k + ": dx " + QString::number(relError(xf.grad(), xr.grad()))));
            QVERIFY2(relError(wf.grad(), wr.grad()) < tol, qPrintable(k + ": dw " + QString::number(relError(wf.grad(), wr.grad()))));
        }
        useScanKernel("");
    }

    // in_proj's two halves from one node against F::linear on each narrowed half: outputs, the
    // input's and the weight's gradients, also when one output is not used (its rows' gradient 0).
    void splitLinearMatchesReference_data()
    {
        QTest::addColumn<bool>("useBoth");
        QTest::newRow("both halves used") << true;
        QTest::newRow("second half unused") << false;
    }
    void splitLinearMatchesReference()
    {
        QFETCH(bool, useBoth);
        torch::manual_seed(11);
        const auto x0 = torch::randn({3, 7, 24}), w0 = torch::randn({50, 24});
        const auto ga = torch::randn({3, 7, 30}), gb = torch::randn({3, 7, 20});
        auto leaf = [](const torch::Tensor& t) { return t.detach().clone().set_requires_grad(true); };
        auto xr = leaf(x0), wr = leaf(w0), xf = leaf(x0), wf = leaf(w0);
        const auto r = splitLinearReference(xr, wr, 30), f = splitLinear(xf, wf, 30);
        QVERIFY(f[0].grad_fn() && f[0].grad_fn()->name().find("SplitLinear") != std::string::npos);
        QCOMPARE(f[0].sizes(), r[0].sizes());
        QCOMPARE(f[1].sizes(), r[1].sizes());
        QVERIFY(relError(f[0], r[0]) < 1e-6 && relError(f[1], r[1]) < 1e-6);
        ((r[0] * ga).sum() + (useBoth ? (r[1] * gb).sum() : torch::zeros({}))).backward();
        ((f[0] * ga).sum() + (useBoth ? (f[1] * gb).sum() : torch::zeros({}))).backward();
        QVERIFY2(relError(xf.grad(), xr.grad()) < 1e-5, qPrintable(QString::number(relError(xf.grad(), xr.grad()))));
        QVERIFY2(relError(wf.grad(), wr.grad()) < 1e-5, qPrintable(QString::number(relError(wf.grad(), wr.grad()))));
        if (!useBoth) QCOMPARE(wf.grad().narrow(0, 30, 20).abs().max().item<float>(), 0.0f);
    }

    // The channel-last mixer (fused conv, in_proj by halves, no transposed copies) against the
    // twin that forward() runs with the fast paths off: output and every parameter's gradient.
    void mambaMixerFastMatchesTwin()
    {
        torch::manual_seed(3);
        MambaOptions o;
        o.dModel = 40;  // d_inner 80: a part-filled last vector of channels
        MambaMixer mixer(o);
        const auto x = torch::randn({3, 21, 40});
        const auto g = torch::randn({3, 21, 40});
        std::vector<torch::Tensor> outs, grads[2];
        for (int fast : {1, 0}) {
            setFastPaths(fast);
            mixer->zero_grad();
            auto y = mixer->forward(x);
            (y * g).sum().backward();
            outs.push_back(y.detach());
            for (const auto& p : mixer->named_parameters()) grads[fast].push_back(p.value().grad().clone());
        }
        setFastPaths(true);
        QVERIFY2(relError(outs[0], outs[1]) < 1e-5, qPrintable(QString::number(relError(outs[0], outs[1]))));
        const auto names = mixer->named_parameters().keys();
        for (size_t i = 0; i < names.size(); ++i) {
            const double e = relError(grads[1][i], grads[0][i]);
            QVERIFY2(e < 1e-4, qPrintable(QString("d%1: relative error %2").arg(names[i].c_str()).arg(e)));
        }
    }

    // Whole models of the SSM families with the fast paths on (fused norms, channel-last mixer)
    // and off (RMSNorm modules, the twin mixer): logits and every gradient.
    void ssmFamiliesFastMatchTwin_data()
    {
        QTest::addColumn<QString>("kind");
        for (const char* kind : {"mamba", "s4d", "s4_mamba", "mambaformer"}) QTest::newRow(kind) << QString(kind);
    }
    void ssmFamiliesFastMatchTwin()
    {
        QFETCH(QString, kind);
        torch::manual_seed(8);
        SequenceModel net = buildModel(test::smallConfig(kind));
        auto idx = torch::randint(0, 30, {3, 17}, torch::kLong);
        auto w = torch::randn({3, 17, 30});
        std::vector<torch::Tensor> runs[2];
        for (int fast : {1, 0}) {
            setFastPaths(fast);
            auto y = net->forward(idx);
            const auto g = torch::autograd::grad({(y * w).sum()}, net->parameters(), {}, false, false, true);
            runs[fast].push_back(y.detach());
            for (const auto& t : g) runs[fast].push_back(t.defined() ? t : torch::zeros({1}));
        }
        setFastPaths(true);
        for (size_t i = 0; i < runs[0].size(); ++i) {
            const double e = relError(runs[1][i], runs[0][i]);
            QVERIFY2(e < 1e-4, qPrintable(QString("%1 %2: relative error %3").arg(kind, i ? QString("gradient %1").arg(i - 1) : "logits").arg(e)));
        }
    }

    // The Mamba families' forwardAt (the last block's gate and output projection at the scored
    // rows only) against the full forward's rows: logits and every gradient.
    void mambaFamiliesLogitsAtRowsMatchTheFullForward_data()
    {
        QTest::addColumn<QString>("kind");
        for (const char* kind : {"mamba", "hybrid", "mambaformer", "s4_mamba"}) QTest::newRow(kind) << QString(kind);
    }
    void mambaFamiliesLogitsAtRowsMatchTheFullForward()
    {
        QFETCH(QString, kind);
        torch::manual_seed(6);
        SequenceModel net = buildModel(test::smallConfig(kind));
        auto idx = torch::randint(0, 30, {3, 17}, torch::kLong);
        auto rows = torch::tensor(std::vector<int64_t>{0, 5, 16, 17, 30, 50}, torch::kLong);
        auto w = torch::randn({6, 30});
        auto full = net->forward(idx);
        auto selected = full.reshape({-1, full.size(-1)}).index_select(0, rows);
        auto at = net->forwardAt(idx, rows);
        QCOMPARE(at.sizes().vec(), selected.sizes().vec());
        QVERIFY2(relError(at, selected) < 1e-5, qPrintable(QString::number(relError(at, selected))));
        const auto params = net->parameters();
        const auto gFull = torch::autograd::grad({(selected * w).sum()}, params, {}, false, false, true);
        const auto gAt = torch::autograd::grad({(at * w).sum()}, params, {}, false, false, true);
        for (size_t i = 0; i < params.size(); ++i) {
            QCOMPARE(gAt[i].defined(), gFull[i].defined());
            if (!gAt[i].defined()) continue;
            QVERIFY2(relError(gAt[i], gFull[i]) < 1e-4, qPrintable(QString("gradient %1: %2").arg(i).arg(relError(gAt[i], gFull[i]))));
        }
    }

    void dispatchUsesTheFusedKernelOnCpu()
    {
        ScanInputs in = randomInputs(1, 2, 3, 2, false, false, torch::kFloat);
        in.deltaSoftplus = false;
        in.u.set_requires_grad(true);
        auto y = selectiveScan(in);
        QVERIFY(y.grad_fn());
        QVERIFY2(y.grad_fn()->name().find("ScanFunction") != std::string::npos, y.grad_fn()->name().c_str());
    }
};

QTEST_GUILESS_MAIN(TestSelectiveScan)
#include "tst_selectivescan.moc"
