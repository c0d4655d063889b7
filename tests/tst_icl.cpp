// The in-context-learning tasks and their baselines: generators against their definitions,
// baselines against closed forms, the batch layout, and every family reading vectors.
#include "base/error.h"
#include "base/modelcatalog.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "core/model.h"
#include "core/models/factory.h"
#include "core/tasks/iclbaselines.h"
#include "testutil.h"

#include <QtTest>

#include <cmath>
#include <set>

using namespace parrot;

namespace {

TaskConfig icl(const QString& kind, int dims = 4, int pairs = 12)
{
    TaskConfig t = taskDefaults(kind);
    t.dims = dims;
    t.minLen = t.maxLen = pairs;
    t.contextLen = 4 * pairs;
    t.evalLengths = {pairs};
    return t;
}

double dotAt(const IclPrompt& p, int i, const std::vector<double>& w)
{
    double s = 0;
    for (int c = 0; c < p.d; ++c) s += p.x[size_t(i) * p.d + c] * w[size_t(c)];
    return s;
}

// Least squares on the listed pairs (all of them d-dim, noise-free): w.
std::vector<double> fit(const IclPrompt& p, const std::vector<int>& rows)
{
    IclPrompt q;
    q.d = p.d;
    q.dOut = 1;
    for (int r : rows) {
        q.x.insert(q.x.end(), p.x.begin() + long(r) * p.d, p.x.begin() + long(r + 1) * p.d);
        q.y.push_back(p.y[size_t(r)]);
    }
    q.pairs = int(rows.size());
    std::vector<double> w(size_t(p.d));
    // w_c = prediction at a unit vector e_c appended as the last x
    for (int c = 0; c < p.d; ++c) {
        IclPrompt e = q;
        std::vector<float> unit(size_t(p.d), 0.0f);
        unit[size_t(c)] = 1;
        e.x.insert(e.x.end(), unit.begin(), unit.end());
        e.y.push_back(0);
        w[size_t(c)] = leastSquaresPrediction(e, q.pairs);
    }
    return w;
}

}  // namespace

class TestIcl : public QObject {
    Q_OBJECT
private slots:
    void leastSquaresRecoversTheFunctionFromDPoints()
    {
        const auto task = IclTask::create(icl("linear_regression", 5, 12));
        std::mt19937_64 rng(1);
        for (const IclPrompt& p : task->prompts(20, 12, rng)) {
            QCOMPARE(p.pairs, 12);
            for (int i = 5; i < 12; ++i)  // exact once d noise-free points are seen
                QVERIFY2(std::abs(leastSquaresPrediction(p, i) - p.y[size_t(i)]) < 1e-4, qPrintable(QString::number(i)));
            QVERIFY(std::abs(leastSquaresPrediction(p, 2) - p.y[2]) > 1e-3);  // not before
            QCOMPARE(leastSquaresPrediction(p, 0), 0.0);
        }
    }

    void averagingAndNearestNeighboursAreWhatTheySay()
    {
        IclPrompt p;
        p.pairs = 5;
        p.d = 2;
        p.dOut = 1;
        p.x = {1, 0, 0, 1, 2, 2, -1, 0, 1.1f, 0.1f};
        p.y = {1, 2, 3, 4, 0};
        p.scored.assign(5, 1);
        // averaging: w = mean of y_j x_j over the first 4 = ((1,0) + (0,2) + (6,6) + (-4,0)) / 4 = (0.75, 2)
        QVERIFY(std::abs(averagingPrediction(p, 4) - (0.75 * 1.1 + 2 * 0.1)) < 1e-6);
        // 3-NN of (1.1, 0.1): squared distances to the four seen x are 0.02, 2.02, 4.42, 4.42;
        // the nearest three carry y 1, 2 and one of 3 / 4 (a tie): the mean is 2 or 7/3
        const double knn = nearestNeighboursPrediction(p, 4);
        QVERIFY2(std::abs(knn - 2.0) < 1e-9 || std::abs(knn - 7.0 / 3) < 1e-9, qPrintable(QString::number(knn)));
        QVERIFY(std::abs(nearestNeighboursPrediction(p, 4, 1) - 1.0) < 1e-9);
        QCOMPARE(nearestNeighboursPrediction(p, 1), 1.0);  // fewer seen than 3: all of them
    }

    void lassoFindsASparseFunction()
    {
        TaskConfig t = icl("sparse_linear_regression", 10, 16);
        t.sparsity = 2;
        const auto task = IclTask::create(t);
        std::mt19937_64 rng(3);
        double lasso = 0, ls = 0;
        for (const IclPrompt& p : task->prompts(30, 16, rng)) {
            lasso += std::pow(lassoPrediction(p, 8) - p.y[8], 2);
            ls += std::pow(leastSquaresPrediction(p, 8) - p.y[8], 2);
        }
        // with 8 < d = 10 points least squares cannot pin w down; Lasso uses the sparsity
        QVERIFY2(lasso < 0.2 * ls, qPrintable(QString("%1 vs %2").arg(lasso).arg(ls)));
        const auto curves = iclBaselines(*task, task->prompts(10, 16, rng));
        QStringList names;
        for (const auto& c : curves) names << c.name;
        QCOMPARE(names, (QStringList{"least squares", "averaging", "3-NN", "Lasso", "zero"}));
        for (const auto& c : curves) QCOMPARE(int(c.error.size()), 16);
    }

    void sparsityIsExact()
    {
        TaskConfig t = icl("sparse_linear_regression", 8, 20);
        t.sparsity = 3;
        const auto task = IclTask::create(t);
        std::mt19937_64 rng(4);
        for (const IclPrompt& p : task->prompts(10, 20, rng)) {
            int nonZero = 0;
            for (double w : fit(p, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})) nonZero += std::abs(w) > 1e-4;
            QCOMPARE(nonZero, 3);
        }
    }

    void outliersAreUnscoredAndOrthogonal()
    {
        const auto task = IclTask::create(icl("orthogonal_outlier_regression", 4, 40));
        std::mt19937_64 rng(5);
        int outliers = 0, pairs = 0;
        for (const IclPrompt& p : task->prompts(20, 40, rng)) {
            std::vector<int> clean, dirty;
            for (int i = 0; i < p.pairs; ++i) (p.scored[size_t(i)] ? clean : dirty).push_back(i);
            outliers += int(dirty.size());
            pairs += p.pairs;
            if (clean.size() < 6 || dirty.size() < 6) continue;
            const auto w = fit(p, clean), u = fit(p, dirty);
            double wu = 0, ww = 0, uu = 0;
            for (int c = 0; c < 4; ++c) {
                wu += w[size_t(c)] * u[size_t(c)];
                ww += w[size_t(c)] * w[size_t(c)];
                uu += u[size_t(c)] * u[size_t(c)];
            }
            QVERIFY2(std::abs(wu) < 1e-3 * std::sqrt(ww * uu) + 1e-6, "outliers follow a u orthogonal to w");
            for (int i : clean) QVERIFY(std::abs(dotAt(p, i, w) - p.y[size_t(i)]) < 1e-3);
        }
        QVERIFY(std::abs(double(outliers) / pairs - 0.5) < 0.08);

        const auto many = IclTask::create(icl("many_outlier_regression", 3, 50));
        for (const IclPrompt& p : many->prompts(10, 50, rng))
            for (int i = 0; i < p.pairs; ++i)
                if (!p.scored[size_t(i)]) {
                    for (int c = 0; c < 3; ++c) QCOMPARE(p.x[size_t(i) * 3 + c], 1.0f);
                    QCOMPARE(p.y[size_t(i)], 1.0f);
                }
    }

    void sparseParityDrawsASubsetPerPrompt()
    {
        TaskConfig t = icl("sparse_parity", 6, 30);
        t.sparsity = 2;
        const auto task = IclTask::create(t);
        QCOMPARE(task->metric(), QString("accuracy"));
        std::mt19937_64 rng(6);
        const auto ps = task->prompts(16, 30, rng);
        // exactly one pair of coordinates explains every label of each prompt (30 examples rule out
        // the other 14 pairs), and the prompts of one batch do not all share it
        std::set<std::pair<int, int>> subsets;
        for (const IclPrompt& p : ps) {
            std::vector<std::pair<int, int>> explaining;
            for (int a = 0; a < 6; ++a)
                for (int b = a + 1; b < 6; ++b) {
                    bool all = true;
                    for (int i = 0; i < p.pairs && all; ++i) {
                        QVERIFY(std::abs(p.x[size_t(i) * 6 + a]) == 1.0f);
                        all = p.y[size_t(i)] == p.x[size_t(i) * 6 + a] * p.x[size_t(i) * 6 + b];
                    }
                    if (all) explaining.push_back({a, b});
                }
            QCOMPARE(int(explaining.size()), 1);
            subsets.insert(explaining.front());
        }
        QVERIFY2(subsets.size() >= 5, "16 prompts drawn from 15 subsets share one or two");
        QVERIFY(iclBaselines(*task, ps).empty());
    }

    // The curriculum (train.curriculum_*): x on the first D coordinates and at most 2D + 1 pairs,
    // growing evenly to the whole task by curriculum_steps; the labels follow the masked x.
    void curriculumGrowsDimsAndPairs()
    {
        ExperimentConfig c = test::tinyConfig();
        c.task = icl("linear_regression", 8, 24);
        c.train.curriculumDims = 3;
        c.train.curriculumSteps = 1000;
        QVERIFY2(validate(c).isEmpty(), qPrintable(validate(c).join("; ")));
        using Stage = std::pair<int, int>;
        QCOMPARE(IclTask::curriculumStage(c, 0), Stage(3, 7));
        QCOMPARE(IclTask::curriculumStage(c, 500), Stage(6, 16));
        QCOMPARE(IclTask::curriculumStage(c, 999), Stage(8, 24));
        QCOMPARE(IclTask::curriculumStage(c, 1000), Stage(8, 24));
        c.train.curriculumDims = 0;
        QCOMPARE(IclTask::curriculumStage(c, 0), Stage(8, 24));
        // stages are monotone
        c.train.curriculumDims = 2;
        Stage before{0, 0};
        for (long long s = 0; s <= 1000; s += 7) {
            const Stage now = IclTask::curriculumStage(c, s);
            QVERIFY(now.first >= before.first && now.second >= before.second);
            before = now;
        }
        // early-stage prompts: x zero past the active coordinates, y still w.x; parity's subset inside
        auto task = IclTask::create(c.task);
        task->setActiveDims(3);
        std::mt19937_64 rng(4);
        for (const IclPrompt& p : task->prompts(4, 10, rng))
            for (int i = 0; i < p.pairs; ++i)
                for (int j = 3; j < 8; ++j) QCOMPARE(p.x[size_t(i) * 8 + j], 0.0f);
        TaskConfig parity = icl("sparse_parity", 8, 30);
        parity.sparsity = 2;
        auto pt = IclTask::create(parity);
        pt->setActiveDims(3);
        for (const IclPrompt& p : pt->prompts(8, 30, rng)) {
            int explaining = 0;
            for (int a = 0; a < 3; ++a)
                for (int b = a + 1; b < 3; ++b) {
                    bool all = true;
                    for (int i = 0; i < p.pairs && all; ++i) all = p.y[size_t(i)] == p.x[size_t(i) * 8 + a] * p.x[size_t(i) * 8 + b];
                    explaining += all;
                }
            QCOMPARE(explaining, 1);
        }
        // bad settings name the field
        c.train.curriculumDims = 9;
        QVERIFY(validate(c).join(" ").contains("train.curriculum_dims: expected 1..task.dims (8)"));
        c.train.curriculumDims = 3;
        c.train.curriculumSteps = 0;
        QVERIFY(validate(c).join(" ").contains("train.curriculum_steps: expected >= 1 with a curriculum"));
        ExperimentConfig copy = test::tinyConfig();
        copy.train.curriculumDims = 2;
        copy.train.curriculumSteps = 10;
        QVERIFY(validate(copy).join(" ").contains("a curriculum applies to the in-context-learning tasks"));
    }

    void vectorMqarQueriesRepeatKeys()
    {
        const auto task = IclTask::create(icl("vector_mqar", 6, 5));
        QCOMPARE(task->outputDims(), 6);
        QVERIFY(task->curveOverPairs());
        std::mt19937_64 rng(7);
        for (const IclPrompt& p : task->prompts(5, 5, rng)) {
            QCOMPARE(p.pairs, 10);  // 5 pairs, then 5 queries
            std::set<std::vector<float>> keys;
            for (int i = 0; i < 5; ++i) {
                const std::vector<float> k(p.x.begin() + i * 6, p.x.begin() + (i + 1) * 6);
                double norm = 0;
                for (float v : k) norm += v * v;
                QVERIFY(std::abs(norm - 6.0) < 1e-3);
                keys.insert(k);
                QVERIFY(!p.scored[size_t(i)]);
            }
            for (int q = 5; q < 10; ++q) {
                QVERIFY(p.scored[size_t(q)]);
                const std::vector<float> k(p.x.begin() + q * 6, p.x.begin() + (q + 1) * 6);
                QVERIFY(keys.count(k));
                // its target is the value stored with that key
                for (int i = 0; i < 5; ++i)
                    if (std::equal(k.begin(), k.end(), p.x.begin() + i * 6))
                        QVERIFY(std::equal(p.y.begin() + q * 6, p.y.begin() + (q + 1) * 6, p.y.begin() + i * 6));
            }
        }
    }

    void treesAndNetworksAreFunctionsOfX()
    {
        const auto tree = IclTask::create(icl("decision_tree", 5, 60));
        std::mt19937_64 rng(8);
        for (const IclPrompt& p : tree->prompts(5, 60, rng)) {
            std::set<float> leaves(p.y.begin(), p.y.end());
            QVERIFY(leaves.size() <= 16);  // depth 4
        }
        const auto relu = IclTask::create(icl("relu_regression", 5, 20));
        for (const IclPrompt& p : relu->prompts(5, 20, rng))
            for (float y : p.y) QVERIFY(std::isfinite(y));
    }

    void batchesInterleaveXAndPaddedY()
    {
        const auto task = IclTask::create(icl("linear_regression", 3, 4));
        std::mt19937_64 a(9), b(9);
        const VectorBatch v = task->batch(2, 4, a);
        const auto ps = task->prompts(2, 4, b);  // the same draws
        QCOMPARE(v.inputs.size(), size_t(2 * 8 * 3));
        for (int r = 0; r < 2; ++r)
            for (int i = 0; i < 4; ++i) {
                for (int c = 0; c < 3; ++c) QCOMPARE(v.inputs[(size_t(r) * 8 + 2 * i) * 3 + c], ps[size_t(r)].x[size_t(i) * 3 + c]);
                QCOMPARE(v.inputs[(size_t(r) * 8 + 2 * i + 1) * 3], ps[size_t(r)].y[size_t(i)]);
                QCOMPARE(v.inputs[(size_t(r) * 8 + 2 * i + 1) * 3 + 1], 0.0f);  // padding
                QCOMPARE(v.targets[size_t(r) * 4 + i], ps[size_t(r)].y[size_t(i)]);
            }
    }

    void sameSeedSamePrompts()
    {
        for (const char* kind : {"linear_regression", "sparse_linear_regression", "relu_regression", "decision_tree",
                                 "orthogonal_outlier_regression", "many_outlier_regression", "sparse_parity", "vector_mqar"}) {
            const auto task = IclTask::create(icl(kind, 4, 6));
            std::mt19937_64 a(11), b(11), c(12);
            const VectorBatch x = task->batch(3, 6, a), y = task->batch(3, 6, b), z = task->batch(3, 6, c);
            QVERIFY2(x.inputs == y.inputs && x.targets == y.targets && x.scored == y.scored, kind);
            QVERIFY2(x.inputs != z.inputs, kind);
        }
    }

    void badOptionsAreClearErrors()
    {
        TaskConfig t = icl("sparse_parity", 4, 10);
        t.sparsity = 9;
        QVERIFY_THROWS_EXCEPTION(Error, IclTask::create(t));
        ExperimentConfig c = test::tinyConfig();
        c.task = icl("linear_regression", 4, 10);
        c.task.contextLen = 10;  // 10 pairs take 20 positions
        QVERIFY(validate(c).join(" ").contains("task.context_len"));
        c.task = icl("linear_regression", 0, 10);
        QVERIFY(validate(c).join(" ").contains("task.dims"));
        QVERIFY_THROWS_EXCEPTION(Error, TokenTask::create(icl("linear_regression")));
    }

    // Every family reads vectors through read_in and writes d_out numbers per position; the
    // model saves and loads with its read-in; evaluation reports errors with baselines.
    void everyFamilyReadsVectors()
    {
        QTemporaryDir dir;
        for (const QString& kind : familyIds()) {
            ExperimentConfig c = test::smallConfig(kind);
            c.task = icl("vector_mqar", 6, 3);
            SequenceModel net = buildModel(c);
            QVERIFY(net->hasVectorIO());
            auto y = net->forwardVectors(torch::randn({2, 12, 6}));
            QCOMPARE(y.sizes().vec(), (std::vector<int64_t>{2, 12, 6}));
        }
        ExperimentConfig c = test::tinyConfig();
        c.task = icl("linear_regression", 4, 10);
        const Model m = Model::create(c);
        const QString path = dir.filePath("icl.safetensors");
        m.save(path);
        const Model back = Model::load(path);
        const LengthCurve a = m.evaluate({10}, 32, 1), b = back.evaluate({10}, 32, 1);
        QVERIFY(a.isError());
        QCOMPARE(a.error, b.error);
        QCOMPARE(int(a.lengths.size()), 10);
        QCOMPARE(a.baselineNames.size(), size_t(4));  // least squares, averaging, 3-NN, zero
        QVERIFY(a.baselineError[0].back() < 1e-6);     // least squares is exact by then
        QVERIFY_THROWS_EXCEPTION(Error, m.probe({1, 2}));  // no token views for a vector model
    }
};

QTEST_GUILESS_MAIN(TestIcl)
#include "tst_icl.moc"
