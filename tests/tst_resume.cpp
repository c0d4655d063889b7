// Nothing lost: a run stopped by cancel or killed outright (SIGKILL, 20 times at random moments)
// resumes from its resume file and ends bit for bit where the same run uninterrupted ends; run
// folders stay readable after every kill; a sweep run again finishes exactly what is missing; a
// full disk leaves the last checkpoint intact; a divergence is resumed only with a change; a model
// too large for memory is refused at the boundary with both figures.
#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/io/safetensors.h"
#include "core/model.h"
#include "core/train/trainer.h"
#include "testutil.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLockFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cmath>
#include <random>

using namespace parrot;

namespace {

// metrics.csv as step -> loss text; fails the test on a repeated or decreasing step.
std::map<long long, QString> lossesByStep(const QString& dir)
{
    QFile f(QDir(dir).filePath("metrics.csv"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    const int loss = int(lines.value(0).split(',').indexOf("loss"));
    std::map<long long, QString> out;
    long long last = -1;
    for (const QString& line : lines.mid(1)) {
        const QStringList cells = line.split(',');
        const long long step = cells[0].toLongLong();
        if (step <= last) {
            qWarning("%s: metrics.csv step %lld after %lld", qPrintable(dir), step, last);
            return {};
        }
        last = step;
        out[step] = cells.value(loss);
    }
    return out;
}

// Every row of the uninterrupted run is in the resumed run, with the same loss.
bool sameRows(const std::map<long long, QString>& reference, const std::map<long long, QString>& resumed)
{
    if (reference.empty() || resumed.empty()) return false;
    for (const auto& [step, loss] : reference) {
        const auto it = resumed.find(step);
        if (it == resumed.end() || it->second != loss) {
            qWarning("step %lld: %s uninterrupted, %s resumed", step, qPrintable(loss),
                     it == resumed.end() ? "missing" : qPrintable(it->second));
            return false;
        }
    }
    return true;
}

// A small run of `kind` with frequent autosaves, logs and evaluations.
ExperimentConfig smallRun(const QString& kind, int steps)
{
    ExperimentConfig c = test::smallConfig(kind, steps);
    c.train.checkpointEvery = 5;
    c.train.logEvery = 1;
    c.train.evalEvery = 12;
    c.train.evalSamples = 16;
    c.task.evalSamples = 16;
    return c;
}

// The command line of a small copy run that keeps a killer busy: autosaves every 3 steps,
// evaluations every 10, a metrics row every step.
QStringList cliRun(const QString& kind, int steps)
{
    return {"--set", "model.kind=" + kind, "--set", "model.d_model=32", "--set", "model.heads=4", "--set", "model.d_state=4",
            "--set", QString("train.steps=%1").arg(steps), "--set", "train.checkpoint_every=3", "--set", "train.eval_every=10",
            "--set", "train.log_every=1", "--set", "train.eval_samples=16", "--set", "task.eval_samples=16", "--threads", "1"};
}

// A small Transformer run of `steps` in <tmp>/run, stopped after step `stopAt` (0: to the end).
QString trainedRun(const QTemporaryDir& tmp, int steps, long long stopAt)
{
    const QString dir = tmp.filePath("run");
    Model m = Model::create(smallRun("transformer", steps));
    TrainControl control;
    TrainCallbacks cb;
    cb.progressIntervalMs = 0;
    cb.progress = [&](const TrainProgress& p) { if (stopAt > 0 && p.step >= stopAt) control.cancel = true; };
    train(m, dir, control, cb);
    return dir;
}

QProcess* startCli(const QStringList& args)
{
    auto* p = new QProcess;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    p->setProcessEnvironment(env);
    p->setProcessChannelMode(QProcess::MergedChannels);
    p->start(PARROT_EXE, args);
    return p;
}

}  // namespace

class TestResume : public QObject {
    Q_OBJECT
private slots:
    // Cancelled at step 17 and resumed: the same losses, step for step, and the same weights at
    // the end, bit for bit; metrics.csv without a gap or a repeated step.
    void resumeAfterCancelIsBitExact_data()
    {
        killedTwentyTimesEndsBitExact_data();
        QTest::newRow("mamba2") << "mamba2";  // the fused scan's other users
        QTest::newRow("gated_deltanet") << "gated_deltanet";
    }
    void resumeAfterCancelIsBitExact()
    {
        QFETCH(QString, kind);
        const ExperimentConfig c = smallRun(kind, 40);
        QTemporaryDir tmp;
        const QString a = tmp.filePath("a"), b = tmp.filePath("b");
        std::vector<double> whole, parts;
        TrainCallbacks cb;
        cb.progressIntervalMs = 0;
        cb.progress = [&](const TrainProgress& p) { whole.insert(whole.end(), p.stepLosses.begin(), p.stepLosses.end()); };
        Model ma = Model::create(c);
        TrainControl ca;
        QCOMPARE(train(ma, a, ca, cb).status, TrainOutcome::Status::Finished);

        TrainControl cancel;
        TrainCallbacks stopAt17 = cb;
        stopAt17.progress = [&](const TrainProgress& p) {
            parts.insert(parts.end(), p.stepLosses.begin(), p.stepLosses.end());
            if (p.step >= 17) cancel.cancel = true;
        };
        Model mb = Model::create(c);
        const TrainOutcome stopped = train(mb, b, cancel, stopAt17);
        QCOMPARE(stopped.status, TrainOutcome::Status::Cancelled);
        QCOMPARE(stopped.step, 17LL);
        QCOMPARE(runStatus(b), QString("cancelled"));

        ResumePlan plan = planResume(b);
        QCOMPARE(plan.fromStep, 17LL);
        QCOMPARE(plan.toStep, 40LL);
        TrainControl go;
        TrainCallbacks rest = cb;
        rest.progress = [&](const TrainProgress& p) { parts.insert(parts.end(), p.stepLosses.begin(), p.stepLosses.end()); };
        const TrainOutcome resumed = resumeTraining(plan, go, rest);
        QVERIFY2(resumed.status == TrainOutcome::Status::Finished, qPrintable(resumed.message));
        QCOMPARE(resumed.step, 40LL);
        QCOMPARE(parts.size(), whole.size());
        for (size_t i = 0; i < whole.size(); ++i)
            QVERIFY2(parts[i] == whole[i], qPrintable(QString("step %1: %2 resumed, %3 uninterrupted").arg(i + 1).arg(parts[i], 0, 'g', 17).arg(whole[i], 0, 'g', 17)));
        QVERIFY(test::tensorBytes(QDir(a).filePath("checkpoints/last.safetensors")) == test::tensorBytes(QDir(b).filePath("checkpoints/last.safetensors")));
        QVERIFY(sameRows(lossesByStep(a), lossesByStep(b)));
        QCOMPARE(runStatus(b), QString("finished"));
        // the evaluations: one per evaluation step, as uninterrupted
        QCOMPARE(loadRun(b).curves.size(), loadRun(a).curves.size());
        // config.json records the resume
        QVERIFY(test::readAll(QDir(b).filePath("config.json")).contains("\"from_step\": 17"));
    }

    // The command line killed with SIGKILL 20 times at random moments (in steps, autosaves,
    // evaluations and metrics writes: an autosave every 3 steps, an evaluation every 10, a row every
    // step), resumed after each: after every kill the folder's config.json, metrics.csv and last
    // checkpoint read back and the run can be resumed; at the end its weights are bit for bit those
    // of the same run uninterrupted. Transformer and Mamba.
    void killedTwentyTimesEndsBitExact_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("transformer") << "transformer";
        QTest::newRow("mamba") << "mamba";
    }
    void killedTwentyTimesEndsBitExact()
    {
        QFETCH(QString, kind);
        QTemporaryDir tmp;
        const QString ref = tmp.filePath("ref");
        const int steps = 1500;  // about 10 s of training here: 20 short lives rarely finish it
        const test::CliResult whole = test::runCli(QStringList{"train", "--preset", "copy-tiny", "--out", ref} + cliRun(kind, steps));
        QVERIFY2(whole.code == 0, qPrintable(whole.out + whole.err));
        const auto reference = test::tensorBytes(QDir(ref).filePath("checkpoints/last.safetensors"));
        const auto referenceRows = lossesByStep(ref);

        // A run that gets to its end between kills (a faster machine) is checked against the
        // reference, and the kills go on with a fresh run in another folder.
        std::mt19937 rng(kind == "mamba" ? 7 : 3);
        int kills = 0, attempts = 0, runs = 1;
        QString run = tmp.filePath("run-1");
        QStringList resumedAt;
        const auto checkFinished = [&] {
            QCOMPARE(runStatus(run), QString("finished"));
            QVERIFY(test::tensorBytes(QDir(run).filePath("checkpoints/last.safetensors")) == reference);
            QVERIFY(sameRows(referenceRows, lossesByStep(run)));
        };
        while (kills < 20 && attempts < 80) {
            ++attempts;
            if (runStatus(run) == "finished") {
                checkFinished();
                run = tmp.filePath(QString("run-%1").arg(++runs));
            }
            const bool fresh = !QFileInfo::exists(QDir(run).filePath("config.json"));
            std::unique_ptr<QProcess> p(startCli(fresh ? QStringList{"train", "--preset", "copy-tiny", "--out", run} + cliRun(kind, steps)
                                                       : QStringList{"train", "--resume", run, "--threads", "1"}));
            QVERIFY(p->waitForStarted(10000));
            // the process loads the libraries (about half a second), then trains
            const int ms = std::uniform_int_distribution<int>(400, 1800)(rng);
            if (p->waitForFinished(ms)) {
                QVERIFY2(p->exitCode() == 0, qPrintable(QString::fromUtf8(p->readAll())));
                continue;  // it finished before the kill
            }
            p->kill();  // SIGKILL
            p->waitForFinished(10000);
            ++kills;
            // what a kill leaves can be read and resumed
            if (!QFileInfo::exists(QDir(run).filePath("config.json"))) continue;  // killed before it wrote anything
            QVERIFY(loadConfigFile(QDir(run).filePath("config.json")).train.steps == steps);
            const RunRecord r = loadRun(run);
            QVERIFY(!lossesByStep(run).empty() || r.metrics.empty());
            if (QFileInfo::exists(QDir(run).filePath("checkpoints/last.safetensors")))
                QVERIFY(Model::load(QDir(run).filePath("checkpoints/last.safetensors")).step() >= 0);
            if (runStatus(run) == "finished") continue;  // killed on its way out
            if (QFileInfo::exists(resumeFilePath(run))) {
                try {
                    const ResumePlan plan = planResume(run);
                    QVERIFY(plan.fromStep <= steps);
                    resumedAt << QString::number(plan.fromStep);
                } catch (const Error& e) {
                    QFAIL(qPrintable("after a kill: " + e.message()));
                }
            }
        }
        qInfo("%s: %d kills over %d run(s); resumed at steps %s", qPrintable(kind), kills, runs, qPrintable(resumedAt.join(' ')));
        QVERIFY2(kills >= 20, qPrintable(QString("only %1 kills landed").arg(kills)));
        if (runStatus(run) != "finished" && QFileInfo::exists(QDir(run).filePath("config.json"))) {
            const test::CliResult rest = test::runCli({"train", "--resume", run, "--threads", "1"});
            QVERIFY2(rest.code == 0, qPrintable(rest.out + rest.err));
        }
        if (QFileInfo::exists(QDir(run).filePath("config.json"))) checkFinished();
    }

    // A sweep killed with its running run (the whole process group, as a closed terminal or an
    // out-of-memory kill would): run again, it keeps the finished runs untouched, resumes the one
    // cut short and runs the rest, and every run ends bit for bit as the same run uninterrupted.
    void killedSweepFinishesExactlyWhatIsMissing()
    {
        QTemporaryDir tmp;
        const QString file = tmp.filePath("sweep.json");
        QVERIFY(test::writeAll(file, R"({
            "name": "kill-sweep", "preset": "copy-tiny",
            "set": {"train.steps": 400, "train.eval_every": 100, "train.checkpoint_every": 20, "task.eval_samples": 16,
                    "train.eval_samples": 16, "model.d_model": 32, "model.heads": 4, "model.num_masked_heads": 2},
            "grid": {"seed": [1, 2, 3]}
        })"));
        const QString out = tmp.filePath("out");
        QProcess sweep;
        sweep.setChildProcessModifier([] { ::setpgid(0, 0); });  // its own group, with its train processes
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        sweep.setProcessEnvironment(env);
        sweep.start(PARROT_EXE, {"sweep", "--config", file, "--out", out, "--jobs", "1"});
        QVERIFY(sweep.waitForStarted(10000));
        // wait until the first run has finished and the second has autosaved
        const QString first = out + "/runs/seed-1", second = out + "/runs/seed-2";
        QElapsedTimer t;
        t.start();
        while (t.elapsed() < 120000 && !(runStatus(first) == "finished" && QFileInfo::exists(resumeFilePath(second))))
            QTest::qWait(20);
        QVERIFY2(runStatus(first) == "finished", "the first run did not finish in 2 minutes");
        QTest::qWait(150);
        ::kill(-pid_t(sweep.processId()), SIGKILL);
        QVERIFY(sweep.waitForFinished(10000));
        QVERIFY(runStatus(second) != "finished");
        const QDateTime firstDone = QFileInfo(first + "/result.json").lastModified();

        const test::CliResult again = test::runCli({"sweep", "--config", file, "--out", out, "--jobs", "1"});
        QVERIFY2(again.code == 0, qPrintable(again.out + again.err));
        QVERIFY2(again.out.contains("1 already finished") && again.out.contains("3 of 3 runs finished"), qPrintable(again.out));
        QCOMPARE(QFileInfo(first + "/result.json").lastModified(), firstDone);
        QVERIFY(test::readAll(second + "/config.json").contains("\"resumed\""));
        // the resumed run is the run uninterrupted
        const QString ref = tmp.filePath("ref");
        // (with the threads the sweep gave its one job: all the cores)
        const test::CliResult whole = test::runCli({"train", "--config", out + "/configs/seed-2.json", "--out", ref, "--threads",
                                                    QString::number(std::max(1, QThread::idealThreadCount()))});
        QVERIFY2(whole.code == 0, qPrintable(whole.err));
        QVERIFY(test::tensorBytes(ref + "/checkpoints/last.safetensors") == test::tensorBytes(second + "/checkpoints/last.safetensors"));
    }

    // --steps past the total needs --extend-schedule; a finished run needs more steps; only
    // train.* settings change; a run another process trains is refused.
    // A run killed between creating its lock file and writing its process id into it leaves an
    // empty run.lock: a remnant, not an owner. It is cleared; a live owner's lock still refuses.
    void anEmptyLockFileIsARemnant()
    {
        QTemporaryDir dir;
        const QString lockPath = QDir(dir.path()).filePath("run.lock");
        QFile empty(lockPath);
        QVERIFY(empty.open(QIODevice::WriteOnly));
        empty.close();
        RunFolder::checkNotInUse(dir.path());  // no throw
        QVERIFY(!QFileInfo::exists(lockPath));
        QLockFile held(lockPath);
        QVERIFY(held.tryLock(0));
        bool refused = false;
        try {
            RunFolder::checkNotInUse(dir.path());
        } catch (const Error& e) {
            refused = e.message().contains("is training this run");
        }
        QVERIFY(refused);
    }

    void resumeRefusesWhatItCannotDo()
    {
        QTemporaryDir tmp;
        const QString dir = trainedRun(tmp, 10, 0);
        QCOMPARE(runStatus(dir), QString("finished"));
        TrainControl control;
        const auto refused = [&](const ResumeOptions& o, const QString& what) {
            try {
                planResume(dir, o);
            } catch (const Error& e) {
                if (e.message().contains(what)) return true;
                qWarning("%s", qPrintable(e.message()));
            }
            return false;
        };
        QVERIFY(refused({}, "finished all its 10 steps"));
        QVERIFY(refused({20, false, {}}, "--extend-schedule"));
        QVERIFY(refused({20, true, {"model.d_model=64"}}, "only train.*"));
        QVERIFY(refused({20, true, {"train.steps=30"}}, "only train.*"));
        try {
            planResume(tmp.filePath("nothing"));
            QFAIL("a missing folder was resumed");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("not a run folder"), qPrintable(e.message()));
        }
        // extended: the schedule stretches over 20 steps, config.json says so
        ResumePlan plan = planResume(dir, {20, true, {}});
        QCOMPARE(plan.model.config().train.steps, 20);
        const TrainOutcome o = resumeTraining(plan, control, {});
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        QCOMPARE(o.step, 20LL);
        QCOMPARE(loadConfigFile(QDir(dir).filePath("config.json")).train.steps, 20);
        QCOMPARE(int(lossesByStep(dir).size()), 20);
        // a live process's run
        RunFolder::checkNotInUse(dir);
        {
            QLockFile held(QDir(dir).filePath("run.lock"));
            QVERIFY(held.tryLock(0));
            QVERIFY(refused({30, true, {}}, "is training this run"));
        }
        QVERIFY(!refused({30, true, {}}, "is training this run"));
    }

    // A run killed before it saved anything (its folder written, no autosave yet) starts again
    // in place from its first step and ends as the same run uninterrupted.
    void runKilledBeforeItsFirstSaveStartsAgainInPlace()
    {
        QTemporaryDir tmp, ref;
        const QString dir = trainedRun(tmp, 20, 0), whole = trainedRun(ref, 20, 0);
        for (const char* f : {"result.json", "checkpoints/resume.safetensors", "checkpoints/last.safetensors"})
            QVERIFY(QFile::remove(QDir(dir).filePath(f)));
        ResumePlan plan = planResume(dir);
        QVERIFY2(plan.description.contains("Restarting"), qPrintable(plan.description));
        QCOMPARE(plan.fromStep, 0LL);
        TrainControl control;
        const TrainOutcome o = resumeTraining(plan, control, {});
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        QVERIFY(test::tensorBytes(QDir(dir).filePath("checkpoints/last.safetensors")) == test::tensorBytes(QDir(whole).filePath("checkpoints/last.safetensors")));
        QVERIFY(sameRows(lossesByStep(whole), lossesByStep(dir)));
    }

    // A run that diverges keeps its last finite checkpoint; resuming it unchanged is refused with
    // a lower rate suggested; with a lower rate it goes on.
    void divergedRunResumesOnlyWithAChange()
    {
        QTemporaryDir tmp;
        const QString dir = trainedRun(tmp, 30, 10);
        QCOMPARE(runStatus(dir), QString("cancelled"));
        const auto before = test::tensorBytes(resumeFilePath(dir));
        ResumePlan wild = planResume(dir, {0, false, {"train.lr=1e30", "train.grad_clip=0", "train.warmup_steps=0"}});
        TrainControl go;
        const TrainOutcome o = resumeTraining(wild, go, {});
        QVERIFY2(o.status == TrainOutcome::Status::Diverged, qPrintable(o.message));
        QCOMPARE(runStatus(dir), QString("diverged"));
        QVERIFY(test::tensorBytes(resumeFilePath(dir)) == before);  // the last finite state, untouched
        const Model kept = Model::load(QDir(dir).filePath("checkpoints/last.safetensors"));
        QCOMPARE(kept.step(), 10LL);
        const std::vector<float> logits = kept.logits({1, 4, 5, 6}, 1, 4);
        for (float v : logits) QVERIFY(std::isfinite(v));
        try {
            planResume(dir);
            QFAIL("a diverged run was resumed unchanged");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("diverge again") && e.message().contains("train.lr=5e+29"), qPrintable(e.message()));
        }
        ResumePlan calm = planResume(dir, {0, false, {"train.lr=0.001"}});
        QCOMPARE(calm.fromStep, 10LL);
        const TrainOutcome ok = resumeTraining(calm, go, {});
        QVERIFY2(ok.status == TrainOutcome::Status::Finished, qPrintable(ok.message));
        QCOMPARE(ok.step, 30LL);
    }

    // A disk that fills (a file-size limit on the process): the autosave fails with a clear
    // message, the resume file and the checkpoint from before are unchanged and still resume.
    void fullDiskKeepsTheLastCheckpoint()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath("run");
        const test::CliResult first = test::runCli(QStringList{"train", "--preset", "copy-tiny", "--out", dir} + cliRun("transformer", 30)
                                                   + QStringList{"--steps", "12"});
        QVERIFY2(first.code == 0, qPrintable(first.out + first.err));
        // stretch it to 30 steps with the disk "full": files may not grow past half the resume file
        const qint64 limit = QFileInfo(resumeFilePath(dir)).size() / 2;
        const auto resumeBefore = test::tensorBytes(resumeFilePath(dir));
        const auto lastBefore = test::tensorBytes(QDir(dir).filePath("checkpoints/last.safetensors"));
        QProcess p;
        p.setChildProcessModifier([limit] {
            ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG instead of killing
            const rlimit r{rlim_t(limit), rlim_t(limit)};
            ::setrlimit(RLIMIT_FSIZE, &r);
        });
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(env);
        p.start(PARROT_EXE, {"train", "--resume", dir, "--steps", "30", "--extend-schedule", "--threads", "1"});
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() != 0, qPrintable(err));
        QVERIFY2(err.contains("could not be written") && err.contains("disk full") && err.contains("resume.safetensors"), qPrintable(err));
        QVERIFY(test::tensorBytes(resumeFilePath(dir)) == resumeBefore);
        QVERIFY(test::tensorBytes(QDir(dir).filePath("checkpoints/last.safetensors")) == lastBefore);
        // with room again it goes on
        const test::CliResult again = test::runCli({"train", "--resume", dir, "--steps", "30", "--extend-schedule", "--threads", "1"});
        QVERIFY2(again.code == 0, qPrintable(again.out + again.err));
        QCOMPARE(runStatus(dir), QString("finished"));
    }

    // The memory guard at its boundary: a model that needs just under 80% of the memory is built,
    // one that needs just over is refused, naming both figures.
    void tooLargeForMemoryIsRefusedAtTheBoundary()
    {
        const ExperimentConfig c = test::smallConfig("transformer");
        const double needed = double(Model::measure(c).parameters);  // the estimate is close; find the boundary from it
        double lo = needed, hi = needed * 100;  // bytes available: refused at lo, accepted at hi
        QVERIFY(!Model::memoryProblem(c, lo).isEmpty());
        QVERIFY(Model::memoryProblem(c, hi).isEmpty());
        while (hi - lo > 1) {
            const double mid = std::floor((lo + hi) / 2);
            (Model::memoryProblem(c, mid).isEmpty() ? hi : lo) = mid;
        }
        // the boundary is where 80% of the memory holds 16 bytes a parameter
        const QString message = Model::memoryProblem(c, lo);
        QVERIFY2(message.contains("too large") && message.contains("MB") && message.contains("reduce model.d_model"), qPrintable(message));
        const double perParameter = 0.8 * hi / 16.0;  // the parameters the estimate counts
        QVERIFY2(std::abs(perParameter / needed - 1) < 0.5, qPrintable(QString::number(perParameter / needed)));
        QVERIFY2(message.contains(QString::number(lo / 1e6, 'f', 1) + " MB"), qPrintable(message));
    }
};

QTEST_GUILESS_MAIN(TestResume)
#include "tst_resume.moc"
