// The trainer: it really learns copy, writes its run folder, pauses, resumes, cancels
// within a step, and stops cleanly on divergence.
#include "base/error.h"
#include "base/io/safetensors.h"
#include "core/diagnostics.h"
#include "core/model.h"
#include "core/train/trainer.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include "base/io/runfolder.h"
#include "base/tasks/tokentask.h"

#include <QtTest>

#include <thread>

using namespace parrot;

namespace {

// Waits up to `ms` for `cond`, polling.
template <class F> bool waitFor(F cond, int ms)
{
    QElapsedTimer t;
    t.start();
    while (!cond()) {
        if (t.elapsed() > ms) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

}  // namespace

class TestTraining : public QObject {
    Q_OBJECT
private slots:
    // Where training and evaluation run (a thread that called applyThreads), a product below
    // float's smallest normal number is 0: denormal arithmetic made a high-learning-rate run's
    // matrix products ten times slower.
    void denormalsAreFlushedWhereTrainingRuns()
    {
        float product = -1;
        std::thread worker([&] {
            applyThreads();
            volatile float tiny = 1e-30f, scale = 1e-10f;
            product = tiny * scale;
        });
        worker.join();
        QCOMPARE(product, 0.0f);
    }

    void learningRateSchedule()
    {
        TrainConfig c;
        c.steps = 1100;
        c.warmupSteps = 100;
        c.lr = 1e-3;
        c.minLrRatio = 0.1;
        QCOMPARE(learningRate(c, 0), 1e-5);
        QCOMPARE(learningRate(c, 49), 5e-4);
        QCOMPARE(learningRate(c, 100), 1e-3);                      // peak right after warm-up
        QVERIFY(std::abs(learningRate(c, 600) - 5.5e-4) < 1e-12);  // cosine halfway: (1 + 0.1) / 2
        QVERIFY(std::abs(learningRate(c, 1100) - 1e-4) < 1e-12);   // ends at min_lr_ratio
        c.schedule = "linear";
        QVERIFY(std::abs(learningRate(c, 600) - 5.5e-4) < 1e-12);
        QVERIFY(std::abs(learningRate(c, 350) - 7.75e-4) < 1e-12);
        c.schedule = "constant";
        QCOMPARE(learningRate(c, 900), 1e-3);
    }

    // A tiny run really learns to copy strings of length <= 8.
    // The one JSON form of a curve: both kinds round-trip every field, and a run folder written
    // before char_accuracy_stderr was kept still reads.
    void lengthCurveJsonRoundTrips()
    {
        LengthCurve a;
        a.step = 7;
        a.samples = 64;
        a.addAccuracy(5, 60, 64, 300, 320);
        a.addAccuracy(10, 20, 64, 500, 640);
        const auto ra = lengthCurveFromJson(lengthCurveJson(a));
        QVERIFY(ra.has_value());
        QCOMPARE(ra->lengths, a.lengths);
        QCOMPARE(ra->stringAccuracy, a.stringAccuracy);
        QCOMPARE(ra->charAccuracy, a.charAccuracy);
        QCOMPARE(ra->stringStdErr, a.stringStdErr);
        QCOMPARE(ra->charStdErr, a.charStdErr);
        QCOMPARE(ra->step, 7LL);
        QCOMPARE(ra->samples, 64);
        QCOMPARE(a.stringStdErr[0], std::sqrt(60.0 / 64 * (4.0 / 64) / 64));
        LengthCurve e;
        e.metric = "error";
        e.lengths = {0, 1, 2};
        e.error = {1.0, 0.5, 0.25};
        e.errorStdErr = {0.1, 0.05, 0.01};
        e.baselineNames = {"least squares"};
        e.baselineError = {{1.0, 0.4, 0.0}};
        const auto re = lengthCurveFromJson(lengthCurveJson(e));
        QVERIFY(re.has_value() && re->isError());
        QCOMPARE(re->error, e.error);
        QCOMPARE(re->errorStdErr, e.errorStdErr);
        QCOMPARE(re->baselineNames, e.baselineNames);
        QCOMPARE(re->baselineError, e.baselineError);
        QJsonObject old = lengthCurveJson(a);
        old.remove("char_accuracy_stderr");
        const auto ro = lengthCurveFromJson(old);
        QVERIFY(ro.has_value() && ro->charStdErr.empty() && ro->stringAccuracy == a.stringAccuracy);
        QJsonObject broken = lengthCurveJson(a);
        broken.insert("string_accuracy", QJsonArray{0.5});
        QVERIFY(!lengthCurveFromJson(broken).has_value());
    }

    void learnsToCopyShortStrings()
    {
        QTemporaryDir dir;
        const ExperimentConfig cfg = loadPreset("copy-tiny");
        Model model = Model::create(cfg);
        const LengthCurve before = model.evaluate({8}, 200, 99);
        TrainControl control;
        std::vector<TrainProgress> progress;
        std::vector<qint64> emittedAt;
        QElapsedTimer clock;
        clock.start();
        std::vector<LengthCurve> evals;
        TrainCallbacks cb;
        cb.progress = [&](const TrainProgress& p) {
            progress.push_back(p);
            emittedAt.push_back(clock.elapsed());
        };
        cb.evaluated = [&](const LengthCurve& c) { evals.push_back(c); };
        const QString run = dir.filePath("run");
        const TrainOutcome o = train(model, run, control, cb);
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        QCOMPARE(o.step, cfg.train.steps);
        QCOMPARE(model.step(), cfg.train.steps);

        const LengthCurve after = model.evaluate({2, 4, 6, 8}, 200, 99);
        qInfo("string accuracy at 8: %.3f before, %.3f after (%d steps)", before.stringAccuracy[0],
              after.stringAccuracy[3], cfg.train.steps);
        QCOMPARE(before.stringAccuracy[0], 0.0);
        for (double acc : after.stringAccuracy) QVERIFY2(acc >= 0.9, qPrintable(QString::number(acc)));
        QVERIFY(after.charAccuracy[3] >= after.stringAccuracy[3]);

        // progress: throttled, increasing, ending at the last step with a falling loss
        QVERIFY(progress.size() >= 2);
        // at most one report per 50 ms, but for the forced ones at the end
        for (size_t i = 1; i + 2 < emittedAt.size(); ++i) QVERIFY(emittedAt[i] - emittedAt[i - 1] >= 49);
        QCOMPARE(progress.back().step, cfg.train.steps);
        for (size_t i = 1; i < progress.size(); ++i) QVERIFY(progress[i].step >= progress[i - 1].step);
        QVERIFY(progress.back().loss < progress.front().loss / 4);
        QVERIFY(progress.back().examplesSeen > cfg.train.steps * cfg.train.batchSize);
        // every step's loss reaches the listener once, in order, though reports are throttled
        long long carried = 0;
        for (const TrainProgress& p : progress) {
            carried += (long long)p.stepLosses.size();
            if (!p.stepLosses.empty()) QCOMPARE(p.stepLosses.back(), p.loss);
            QCOMPARE(carried, p.step);
        }
        // throttled, however fast the machine: no more reports than 50 ms periods (and the forced ones)
        QVERIFY(progress.size() <= size_t((emittedAt.back() - emittedAt.front()) / 49) + 3);
        // periodic evaluations plus the final one
        QCOMPARE(int(evals.size()), cfg.train.steps / cfg.train.evalEvery);
        QCOMPARE(evals.back().step, cfg.train.steps);
        QCOMPARE(evals.back().lengths, evaluationLengths(cfg.task));

        // the run folder
        QVERIFY(QFile::exists(run + "/config.json"));
        const QJsonObject runCfg = QJsonDocument::fromJson(test::readAll(run + "/config.json")).object();
        QCOMPARE(runCfg["experiment"].toObject(), toJson(cfg));
        QVERIFY(runCfg["environment"].toObject()["threads"].toInt() >= 1);
        QCOMPARE(toJson(loadConfigFile(run + "/config.json")), toJson(cfg));
        const QList<QByteArray> rows = test::readAll(run + "/metrics.csv").trimmed().split('\n');
        QVERIFY(rows[0].startsWith("step,examples_seen,train_time_s,wall_s,loss,lr,tokens_per_s,string_acc_"));
        QCOMPARE(rows.size() - 1, cfg.train.steps / cfg.train.logEvery);
        QVERIFY(rows.last().startsWith(QByteArray::number(cfg.train.steps) + ","));
        QVERIFY(!rows.last().endsWith(","));  // the final row carries the evaluation
        QVERIFY(QFile::exists(run + "/curves.json"));
        // result.json, written last, says how it ended and what the final evaluation found
        const QJsonObject result = QJsonDocument::fromJson(test::readAll(run + "/result.json")).object();
        QCOMPARE(result["status"].toString(), QString("finished"));
        QCOMPARE(result["step"].toInt(), cfg.train.steps);
        QCOMPARE(result["final"].toObject()["values"].toArray().size(), int(o.finalCurve.lengths.size()));
        QCOMPARE(runStatus(run), QString("finished"));
        const Model saved = Model::load(o.checkpoint);
        QCOMPARE(saved.step(), cfg.train.steps);
        const std::vector<int> tokens{1, 4, 5, 6, 2, 4, 5};
        QCOMPARE(saved.logits(tokens, 1, 7), model.logits(tokens, 1, 7));
    }

    // A small Transformer recalls values of keys it saw in context well above the 1/8 chance of
    // guessing among the values, and the evaluation reports standard errors with its accuracies.
    void learnsAssociativeRecallAboveChance()
    {
        ExperimentConfig cfg = loadPreset("copy-tiny");
        cfg.task = taskDefaults("mqar");
        cfg.task.vocabSize = 16;  // keys a-h, values i-p
        cfg.task.minLen = 2;
        cfg.task.maxLen = 4;
        cfg.task.contextLen = 64;
        cfg.task.evalLengths = {4};
        cfg.model.dModel = 64;
        cfg.train.steps = 200;
        cfg.train.evalEvery = 0;
        cfg.train.checkpointEvery = 0;
        Model model = Model::create(cfg);
        TrainControl control;
        const TrainOutcome o = train(model, {}, control, {});
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        const LengthCurve c = model.evaluate({2, 4}, 200, 5);
        qInfo("MQAR answer-token accuracy: %.3f at 2 pairs, %.3f at 4 pairs", c.charAccuracy[0], c.charAccuracy[1]);
        QVERIFY2(c.charAccuracy[1] > 0.25, qPrintable(QString::number(c.charAccuracy[1])));
        QCOMPARE(c.charStdErr.size(), size_t(2));
        const double p = c.stringAccuracy[1];
        QVERIFY(std::abs(c.stringStdErr[1] - std::sqrt(p * (1 - p) / 200)) < 1e-12);
        QVERIFY_THROWS_EXCEPTION(Error, model.evaluate({9}, 10, 1));  // 8 keys at most
    }

    // In-context linear regression (d = 2, 8 examples, a fresh w per prompt): a small
    // Transformer learns to use the examples. Its error falls well below the zero estimator's
    // (which is all one can do without the context) and, over the prompt, below averaging's.
    // (At this laptop scale it stays far from least squares, exact after 2 examples.)
    void learnsLinearRegressionInContext()
    {
        ExperimentConfig cfg = loadPreset("copy-tiny");
        cfg.task = taskDefaults("linear_regression");
        cfg.task.dims = 2;
        cfg.task.minLen = cfg.task.maxLen = 8;
        cfg.task.contextLen = 16;
        cfg.task.evalLengths = {8};
        cfg.model.positions = "nope";
        cfg.model.numMaskedHeads = 0;
        cfg.model.dModel = 64;
        cfg.train.steps = 1000;
        cfg.train.lr = 3e-4;
        cfg.train.warmupSteps = 50;
        cfg.train.evalEvery = 0;
        cfg.train.checkpointEvery = 0;
        Model model = Model::create(cfg);
        TrainControl control;
        const TrainOutcome o = train(model, {}, control, {});
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        QVERIFY(o.finalCurve.isError());
        const LengthCurve c = model.evaluate({8}, 512, 3);
        QCOMPARE(c.baselineNames, (std::vector<QString>{"least squares", "averaging", "3-NN", "zero"}));
        auto mean = [](const std::vector<double>& v, int from) {
            double s = 0;
            for (size_t i = size_t(from); i < v.size(); ++i) s += v[i];
            return s / double(v.size() - size_t(from));
        };
        const double model4 = mean(c.error, 4), zero4 = mean(c.baselineError[3], 4);
        const double model1 = mean(c.error, 1), averaging1 = mean(c.baselineError[1], 1);
        qInfo("after 4+ examples: model %.3f, zero %.3f; over examples 1-7: model %.3f, averaging %.3f; least squares %.3f",
              model4, zero4, model1, averaging1, mean(c.baselineError[0], 4));
        QVERIFY(model4 < 0.8 * zero4);
        QVERIFY(model1 < averaging1);
    }

    void pauseResumeAndCancelTakeEffectWithinAStep()
    {
        QTemporaryDir dir;
        ExperimentConfig cfg = test::tinyConfig(100000);
        Model model = Model::create(cfg);
        TrainControl control;
        std::atomic<long long> step{0};
        std::atomic<bool> pausedSeen{false};
        TrainCallbacks cb;
        cb.progressIntervalMs = 0;
        cb.progress = [&](const TrainProgress& p) {
            step = p.step;
            if (p.paused) pausedSeen = true;
        };
        TrainOutcome outcome;
        std::thread worker([&] { outcome = train(model, dir.filePath("run"), control, cb); });

        QVERIFY(waitFor([&] { return step.load() >= 3; }, 60000));
        control.pause = true;
        QVERIFY(waitFor([&] { return pausedSeen.load(); }, 5000));
        const long long atPause = step.load();
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        QCOMPARE(step.load(), atPause);  // no step while paused

        control.pause = false;
        QVERIFY(waitFor([&] { return step.load() >= atPause + 3; }, 30000));

        QElapsedTimer t;
        t.start();
        control.cancel = true;
        worker.join();
        QVERIFY2(t.elapsed() < 5000, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(outcome.status, TrainOutcome::Status::Cancelled);
        QVERIFY(outcome.step < 100000);
        QVERIFY(outcome.step >= atPause + 3);
        QCOMPARE(Model::load(outcome.checkpoint).step(), outcome.step);  // saved when stopped
    }

    void cancelWhilePausedStops()
    {
        ExperimentConfig cfg = test::tinyConfig(100000);
        Model model = Model::create(cfg);
        TrainControl control;
        control.pause = true;
        TrainOutcome outcome;
        std::thread worker([&] { outcome = train(model, {}, control, {}); });
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        control.cancel = true;
        worker.join();
        QCOMPARE(outcome.status, TrainOutcome::Status::Cancelled);
        QCOMPARE(outcome.step, 0);
    }

    void divergenceStopsAndRestoresTheLastGoodState()
    {
        QTemporaryDir dir;
        ExperimentConfig cfg = test::tinyConfig(50);
        cfg.train.lr = 1e30;  // one Adam step moves every weight by ~1e30: the next loss overflows
        cfg.train.warmupSteps = 0;
        cfg.train.schedule = "constant";
        cfg.train.gradClip = 0;
        Model model = Model::create(cfg);
        const std::vector<int> tokens{1, 4, 5, 2, 4, 5, 3};
        const std::vector<float> initial = model.logits(tokens, 1, 7);
        TrainControl control;
        const TrainOutcome o = train(model, dir.filePath("run"), control, {});
        QCOMPARE(o.status, TrainOutcome::Status::Diverged);
        QVERIFY2(o.message.contains("diverged") && (o.message.contains("NaN") || o.message.contains("infinite")),
                 qPrintable(o.message));
        QVERIFY(o.message.contains("lower learning rate"));
        QCOMPARE(o.step, 0);
        QCOMPARE(model.logits(tokens, 1, 7), initial);  // back to the start of the run
        QVERIFY(o.checkpoint.isEmpty());
        QVERIFY(!QFile::exists(dir.filePath("run/checkpoints/last.safetensors")));
    }

    void divergenceKeepsTheAutosaveUnchanged()
    {
        QTemporaryDir dir;
        ExperimentConfig cfg = test::tinyConfig(50);
        cfg.train.lr = 1e30;
        cfg.train.warmupSteps = 0;
        cfg.train.schedule = "constant";
        cfg.train.gradClip = 0;
        cfg.train.checkpointEvery = 1;
        Model model = Model::create(cfg);
        TrainControl control;
        const TrainOutcome o = train(model, dir.filePath("run"), control, {});
        QCOMPARE(o.status, TrainOutcome::Status::Diverged);
        QVERIFY(!o.checkpoint.isEmpty());
        const SafetensorsFile kept = readSafetensors(o.checkpoint);
        QCOMPARE(kept.metadata["step"].toLongLong(), o.step);  // not overwritten by the failed step
        QCOMPARE(model.step(), o.step);
        QVERIFY(o.message.contains(o.checkpoint) && o.message.contains("kept unchanged"));
    }

    // A model trained before (here, opened from its checkpoint) takes train.steps more steps,
    // counted on from its step, with the schedule's warm-up run again for its fresh optimiser; the
    // run folder says which checkpoint it continues. The opened model itself is left as it was.
    void continuedModelCountsOnFromItsStep()
    {
        QTemporaryDir dir;
        ExperimentConfig cfg = test::tinyConfig(6);
        cfg.train.warmupSteps = 2;
        cfg.train.logEvery = 1;
        Model first = Model::create(cfg);
        TrainControl control;
        QCOMPARE(train(first, dir.filePath("first"), control, {}).step, 6);
        const QString checkpoint = dir.filePath("first/checkpoints/last.safetensors");
        const Model opened = Model::load(checkpoint);
        QCOMPARE(opened.step(), 6);

        ExperimentConfig more = opened.config();
        more.train.steps = 4;
        more.task.maxLen = 6;  // the task and training settings are the new run's
        Model model = opened.continuedAs(more);
        const std::vector<int> tokens{1, 4, 5, 2, 4, 5, 3};
        QCOMPARE(model.step(), 6);
        QCOMPARE(model.config().task.maxLen, 6);
        QCOMPARE(model.logits(tokens, 1, 7), opened.logits(tokens, 1, 7));  // the same weights
        std::vector<TrainProgress> reports;
        TrainCallbacks cb;
        cb.progressIntervalMs = 0;
        cb.progress = [&](const TrainProgress& p) { reports.push_back(p); };
        const TrainOutcome o = train(model, dir.filePath("more"), control, cb, checkpoint);
        QCOMPARE(o.status, TrainOutcome::Status::Finished);
        QCOMPARE(o.step, 10);
        QCOMPARE(opened.step(), 6);
        QVERIFY(model.logits(tokens, 1, 7) != opened.logits(tokens, 1, 7));
        QCOMPARE(reports.front().step, 7);
        QCOMPARE(reports.front().lr, learningRate(more.train, 0));  // warming up again
        QCOMPARE(reports.back().step, 10);
        QCOMPARE(reports.back().totalSteps, 10);
        QCOMPARE(o.finalCurve.step, 10);

        const QJsonObject run = QJsonDocument::fromJson(test::readAll(dir.filePath("more/config.json"))).object();
        QCOMPARE(run["continues_from"].toObject()["checkpoint"].toString(), checkpoint);
        QCOMPARE(run["continues_from"].toObject()["step"].toInteger(), 6);
        QVERIFY(!QJsonDocument::fromJson(test::readAll(dir.filePath("first/config.json"))).object().contains("continues_from"));
        const RunRecord record = loadRun(dir.filePath("more"));
        QCOMPARE(record.metrics.front().step, 7);
        QCOMPARE(Model::load(o.checkpoint).step(), 10);

        ExperimentConfig other = more;
        other.model.layers = 3;
        try {
            opened.continuedAs(other);
            QFAIL("continued a model under another architecture");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("another model") && e.message().contains("model.layers=3"), qPrintable(e.message()));
        }
        ExperimentConfig letters = more;
        letters.task.vocabSize = 10;
        try {
            opened.continuedAs(letters);
            QFAIL("continued a model on a vocabulary its weights do not have");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("does not fit"), qPrintable(e.message()));
        }
    }

    void refusesToOverwriteARunFolder()
    {
        QTemporaryDir dir;
        QVERIFY(test::writeAll(dir.filePath("config.json"), "{\"mine\": true}"));
        Model model = Model::create(test::tinyConfig(5));
        TrainControl control;
        const TrainOutcome o = train(model, dir.path(), control, {});
        QCOMPARE(o.status, TrainOutcome::Status::Failed);
        QVERIFY(o.message.contains("already holds a run"));
        QCOMPARE(test::readAll(dir.filePath("config.json")), QByteArray("{\"mine\": true}"));
        QCOMPARE(model.step(), 0);
    }

    void modelTooLargeIsAClearError()
    {
        ExperimentConfig cfg = test::tinyConfig();
        cfg.model.dModel = 8192;
        cfg.model.heads = 8;
        cfg.model.layers = 64;  // ~52 G parameters
        try {
            Model::create(cfg);
            QFAIL("built a model larger than memory");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("too large"), qPrintable(e.message()));
        }
    }
};

QTEST_GUILESS_MAIN(TestTraining)
#include "tst_training.moc"
