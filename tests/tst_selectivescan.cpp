// The fused selective scan against its reference loop: outputs and every input gradient,
// across shapes (T = 1, odd sizes), with and without the gate and the delta bias, for every
// build of the vector kernel the CPU runs (AVX-512, AVX2, baseline); a double-precision
// finite-difference check of the fused backward; and the same bits whatever the thread count.
#include "kernels/selectivescan.h"

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
        QTest::newRow("T=1") << 2 << 3 << 1 << 4 << true << true << false << true << 0.5;
        QTest::newRow("all ones") << 1 << 1 << 1 << 1 << true << true << false << true << 0.5;
        QTest::newRow("odd") << 3 << 7 << 13 << 5 << true << true << false << true << 0.5;
        QTest::newRow("no gate") << 2 << 5 << 9 << 3 << false << true << false << true << 0.5;
        QTest::newRow("no bias") << 2 << 5 << 9 << 3 << true << false << false << true << 0.5;
        QTest::newRow("bare") << 2 << 4 << 6 << 2 << false << false << false << true << 0.5;
        QTest::newRow("mamba-like") << 2 << 32 << 64 << 16 << true << true << false << true << 0.5;
        QTest::newRow("long") << 1 << 4 << 300 << 8 << true << true << false << true << 0.5;
        QTest::newRow("transposed views") << 3 << 19 << 11 << 6 << true << true << true << true << 0.5;
        QTest::newRow("softplus tails") << 2 << 9 << 7 << 4 << true << true << false << true << 12.0;
        QTest::newRow("no softplus") << 2 << 9 << 7 << 4 << true << true << false << false << 0.0;
        // Two channel groups (64 each, the last of 6: a part-filled vector) for one batch row;
        // T not a multiple of the 8 or 16 steps transposed at a time; N = 16 summed a vector of
        // lanes at a time, N = 20 with a remainder.
        QTest::newRow("B=1, two groups") << 1 << 70 << 19 << 16 << true << true << false << true << 0.5;
        QTest::newRow("groups, views, N=20") << 2 << 130 << 33 << 20 << true << true << true << true << 0.5;
        QTest::newRow("full blocks as views") << 2 << 64 << 40 << 16 << true << true << true << true << 0.5;
        QTest::newRow("full blocks, no gate") << 3 << 48 << 35 << 16 << false << true << false << true << 0.5;
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
        torch::manual_seed(B * 1000 + D * 100 + T + N);
        ScanInputs ref = randomInputs(B, D, T, N, gate, bias, torch::kFloat, views, deltaScale);
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
