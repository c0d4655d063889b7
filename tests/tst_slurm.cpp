// Sweeps on a real Slurm: tests/slurm/cluster.sh starts munged, slurmctld and slurmd on this
// machine (Debian's packages, installed by packaging/setup.sh with the tests), and the sweeps go
// through sbatch, squeue/scontrol and scancel as a user's would. Where the daemons cannot start
// the test is skipped with the reason, except under CI (CI=true), where that is a failure.
#include "base/experiments/sweep.h"
#include "base/io/jsonfile.h"
#include "base/io/runfolder.h"
#include "ui/panels/experimentspanel.h"
#include "testutil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QComboBox>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableWidget>
#include <QtTest>

using namespace parrot;

namespace {

// The bundled sweep the tests submit: its runs, however many the preset holds.
int presetRuns() { return int(parrot::loadSweep(parrot::sweepPresetFile("length-generalisation"), ".").runs.size()); }

const QStringList kShrunk{"--set", "train.steps=4", "--set", "train.warmup_steps=1", "--set", "train.eval_every=2", "--set",
                          "train.eval_samples=4", "--set", "task.eval_samples=4", "--set", "model.d_model=32", "--set", "model.heads=4",
                          "--set", "model.num_masked_heads=2"};

QJsonObject status(const QString& dir)
{
    const auto r = test::runCli({"sweep", "--status", dir, "--json"});
    return r.code == 0 ? QJsonDocument::fromJson(r.out.toUtf8()).object() : QJsonObject{{"error", r.err}};
}

// Polls the sweep's status until `done` holds for it (or `seconds` pass); the last status.
QJsonObject waitFor(const QString& dir, const std::function<bool(const QJsonObject&)>& done, int seconds = 300)
{
    QElapsedTimer clock;
    clock.start();
    QJsonObject s;
    while (clock.elapsed() < seconds * 1000) {
        s = status(dir);
        if (done(s)) return s;
        QTest::qWait(500);
    }
    return s;
}

int counted(const QJsonObject& s, const QString& state) { return s["counts"].toObject()[state].toInt(); }

QJsonObject runState(const QJsonObject& s, const QString& name)
{
    for (const auto& v : s["runs"].toArray())
        if (v.toObject()["name"].toString() == name) return v.toObject();
    return {};
}

}  // namespace

class TestSlurm : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_cluster;  // the daemons' folder
    QString m_config;   // their slurm.conf

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        qputenv("XDG_CONFIG_HOME", QDir(m_dir.path()).filePath("config").toLocal8Bit());  // the cluster profiles
        m_cluster = QDir(m_dir.path()).filePath("cluster");
        QProcess start;
        start.start("bash", {QString(PARROT_SOURCE_DIR) + "/tests/slurm/cluster.sh", "start", m_cluster, "2"});
        const bool ran = start.waitForFinished(120000);
        const QString why = QString::fromUtf8(start.readAllStandardError()).trimmed();
        if (!ran || start.exitCode() != 0) {
            const QString reason = "a single-node Slurm could not be started here: " + (why.isEmpty() ? QString("cluster.sh did not finish") : why);
            if (qEnvironmentVariable("CI") == "true") QFAIL(qPrintable(reason + " (under CI this test must run)"));
            QSKIP(qPrintable(reason));
        }
        m_config = QString::fromUtf8(start.readAllStandardOutput()).trimmed();
        qputenv("SLURM_CONF", m_config.toLocal8Bit());
        // the profile the tests submit with, kept as a user keeps one
        const auto saved = test::runCli({"sweep", "--save-cluster", "test", "--partition", "debug", "--cpus-per-task", "1"});
        QVERIFY2(saved.code == 0 && saved.out.contains("saved cluster profile test"), qPrintable(saved.out + saved.err));
    }

    void cleanupTestCase()
    {
        if (m_cluster.isEmpty()) return;
        QProcess stop;
        stop.start("bash", {QString(PARROT_SOURCE_DIR) + "/tests/slurm/cluster.sh", "stop", m_cluster});
        stop.waitForFinished(60000);
    }

    // A shrunken bundled sweep through Slurm, into a folder whose name a shell would run if it
    // were pasted into code: every run finishes, each task's log is in logs/, the job id is in
    // index.json, and the results equal the same sweep run here, run for run.
    void aSweepRunsThroughSlurmAsItRunsHere()
    {
        const QString dir = QDir(m_dir.path()).filePath("sweep 100% it's \"quoted\" $(touch PWNED) `touch PWNED2`");
        QStringList submit{"sweep", "--preset", "length-generalisation", "--out", dir, "--slurm", "--save-cluster", "test2", "--partition", "debug"};
        auto r = test::runCli(submit + kShrunk);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QString job = r.out.trimmed().split('\n').last();
        QVERIFY2(!job.isEmpty() && job.front().isDigit(), qPrintable(r.out));
        QVERIFY2(r.out.contains(QString("submitted %1 of %1 runs").arg(presetRuns())), qPrintable(r.out));
        const QJsonObject index = readJsonObject(QDir(dir).filePath("index.json"), "index");
        QCOMPARE(index["slurm"].toObject()["job"].toString(), job);
        // the script: comments, #SBATCH lines and one exec that reads its arguments; the folder's
        // name is only in a comment (the command to submit it again by hand)
        const QStringList script = QString::fromUtf8(test::readAll(QDir(dir).filePath("slurm/job-1.sh"))).split('\n', Qt::SkipEmptyParts);
        QVERIFY(script.size() >= 3);
        int code = 0;
        for (const QString& line : script) {
            if (line.startsWith('#')) continue;
            QVERIFY2(line.startsWith("exec \"$1\" sweep --slurm-task"), qPrintable(line));
            ++code;
        }
        QCOMPARE(code, 1);
        QVERIFY(script.join('\n').contains("# sbatch --parsable"));
        const QJsonObject done = waitFor(dir, [](const QJsonObject& s) { return counted(s, "finished") == presetRuns() || counted(s, "failed") > 0; });
        QVERIFY2(counted(done, "finished") == presetRuns(), qPrintable(QJsonDocument(done).toJson()));
        QVERIFY(QFileInfo::exists(QDir(dir).filePath(QString("logs/slurm-%1_0.log").arg(job))));
        for (const QString& pwned : {QDir(dir).filePath("PWNED"), QDir(dir).filePath("PWNED2"), QDir(m_dir.path()).filePath("PWNED"),
                                     QDir::current().filePath("PWNED")})
            QVERIFY2(!QFileInfo::exists(pwned), qPrintable(pwned));
        // submitting again submits nothing: every run is finished
        r = test::runCli(submit + kShrunk);
        QVERIFY2(r.code == 0 && r.out.contains("nothing to submit"), qPrintable(r.out + r.err));
        // the same sweep here, with the same seeds: the same results, run for run
        const QString local = QDir(m_dir.path()).filePath("local");
        r = test::runCli(QStringList{"sweep", "--preset", "length-generalisation", "--out", local, "--jobs", "2"} + kShrunk);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        int compared = 0;
        for (const auto& v : index["runs"].toArray()) {
            const QString name = v.toObject()["name"].toString();
            const RunRecord a = loadRun(QDir(dir).filePath("runs/" + name)), b = loadRun(QDir(local).filePath("runs/" + name));
            QVERIFY2(!a.curves.empty() && !b.curves.empty(), qPrintable(name));
            QCOMPARE(a.curves.back().lengths, b.curves.back().lengths);
            QCOMPARE(a.curves.back().stringAccuracy, b.curves.back().stringAccuracy);
            QCOMPARE(a.curves.back().charAccuracy, b.curves.back().charAccuracy);
            ++compared;
        }
        QCOMPARE(compared, presetRuns());
        // the profile was kept for the next submission
        const QJsonObject profiles = readJsonObject(QDir(m_dir.path()).filePath("config/Parrotscope/clusters.json"), "profiles");
        QCOMPARE(profiles["test2"].toObject()["partition"].toString(), QString("debug"));
        QVERIFY(profiles.contains("test"));
    }

    // One task scancelled mid-way is shown as cancelled while the other runs on; submitting
    // again submits only it (the other is still running). Then `sweep --cancel` stops both, and
    // submitting again goes on with both from their autosaves: every logged step once, none
    // missing, and each run folder says it was resumed.
    void cancelledTasksResumeFromTheirAutosaves()
    {
        const QString file = QDir(m_dir.path()).filePath("long.json");
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"name": "long", "preset": "copy-tiny",
                    "set": {"train.steps": 4000, "train.checkpoint_every": 50, "train.eval_every": 2000, "task.eval_samples": 8,
                            "model.d_model": 32, "model.heads": 4, "model.num_masked_heads": 2},
                    "variants": [{"label": "a", "set": {"seed": 1}}, {"label": "b", "set": {"seed": 2}}]})");
        f.close();
        const QString dir = QDir(m_dir.path()).filePath("long");
        const QStringList submit{"sweep", "--config", file, "--out", dir, "--slurm", "--cluster", "test"};
        auto r = test::runCli(submit);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QString job = r.out.trimmed().split('\n').last();
        const auto bothPast = [](long long step) {
            return [step](const QJsonObject& s) {
                for (const auto& v : s["runs"].toArray())
                    if (v.toObject()["state"].toString() != "running" || v.toObject()["step"].toInteger() < step) return false;
                return true;
            };
        };
        QJsonObject s = waitFor(dir, bothPast(100));
        QVERIFY2(counted(s, "running") == 2, qPrintable(QJsonDocument(s).toJson()));
        // one task, with Slurm's own command
        QProcess scancel;
        scancel.start("scancel", {job + "_0"});
        QVERIFY(scancel.waitForFinished(30000) && scancel.exitCode() == 0);
        s = waitFor(dir, [](const QJsonObject& s) { return runState(s, "a")["state"].toString() == "cancelled"; }, 120);
        QVERIFY2(runState(s, "a")["state"].toString() == "cancelled" && runState(s, "b")["state"].toString() == "running",
                 qPrintable(QJsonDocument(s).toJson()));
        QVERIFY(runState(s, "a")["step"].toInteger() < 4000);
        r = test::runCli(submit);
        QVERIFY2(r.code == 0 && r.out.contains("submitted 1 of 2 runs") && r.out.contains("1 still queued or running"), qPrintable(r.out + r.err));
        // both, with sweep --cancel
        s = waitFor(dir, bothPast(runState(s, "a")["step"].toInteger() + 50));
        QVERIFY2(counted(s, "running") == 2, qPrintable(QJsonDocument(s).toJson()));
        r = test::runCli({"sweep", "--cancel", dir});
        QVERIFY2(r.code == 0 && r.out.contains("cancelled Slurm jobs"), qPrintable(r.out + r.err));
        s = waitFor(dir, [](const QJsonObject& s) { return counted(s, "cancelled") == 2; }, 120);
        QVERIFY2(counted(s, "cancelled") == 2, qPrintable(QJsonDocument(s).toJson()));
        r = test::runCli(submit);
        QVERIFY2(r.code == 0 && r.out.contains("submitted 2 of 2 runs"), qPrintable(r.out + r.err));
        s = waitFor(dir, [](const QJsonObject& s) { return counted(s, "finished") == 2 || counted(s, "failed") > 0; });
        QVERIFY2(counted(s, "finished") == 2, qPrintable(QJsonDocument(s).toJson()));
        for (const char* name : {"a", "b"}) {
            const QString run = QDir(dir).filePath(QString("runs/") + name);
            const RunRecord rec = loadRun(run);
            // every logged step once and in order, never further apart than the log's interval (a
            // run stopped by SIGTERM also logs the step it stopped at), up to the last
            QVERIFY(rec.metrics.size() > 10);
            const long long every = rec.metrics[1].step - rec.metrics[0].step;
            for (size_t i = 1; i < rec.metrics.size(); ++i) {
                const long long gap = rec.metrics[i].step - rec.metrics[i - 1].step;
                QVERIFY2(gap > 0 && gap <= every, qPrintable(QString("%1 after %2").arg(rec.metrics[i].step).arg(rec.metrics[i - 1].step)));
            }
            QCOMPARE(rec.metrics.back().step, 4000LL);
            QVERIFY2(!readJsonObject(QDir(run).filePath("config.json"), "config")["resumed"].toArray().isEmpty(), name);
        }
        QCOMPARE(readJsonObject(QDir(dir).filePath("slurm/jobs.json"), "jobs")["submissions"].toArray().size(), 3);
        QCOMPARE(readJsonObject(QDir(dir).filePath("index.json"), "index")["slurm"].toObject()["jobs"].toArray().size(), 3);
    }

    // The window: Run on the saved profile submits (off the GUI thread), the job id comes back,
    // the Runs tab shows each run's state as the folder is polled, and the figure fills in.
    void theExperimentsTabSubmitsAndFollows()
    {
        ExperimentsPanel p;
        p.setExecutable(PARROT_EXE);
        p.setExtraOverrides({"train.steps=4", "train.warmup_steps=1", "train.eval_every=2", "train.eval_samples=4", "task.eval_samples=4",
                             "model.d_model=32", "model.heads=4", "model.num_masked_heads=2"});
        QVERIFY(p.selectPreset("length-generalisation"));
        const QString dir = QDir(m_dir.path()).filePath("window sweep");
        p.setOutDir(dir);
        p.reloadClusterProfiles();
        const int profile = p.runOnBox()->findData("test");
        QVERIFY2(profile > 0, "the profile saved by the first test is offered");
        p.runOnBox()->setCurrentIndex(profile);
        p.show();
        QSignalSpy submitted(&p, &ExperimentsPanel::clusterSubmitted);
        QVERIFY(p.run());
        QTRY_VERIFY_WITH_TIMEOUT(submitted.size() == 1, 60000);
        const QString job = submitted.front().front().toString();
        QVERIFY2(!job.isEmpty() && job.front().isDigit(), qPrintable(job));
        QCOMPARE(p.lastJob(), job);
        QVERIFY(p.polling());
        QTRY_COMPARE_WITH_TIMEOUT(p.runsTable()->rowCount(), presetRuns(), 30000);
        const auto finished = [&p] {
            int n = 0;
            for (int i = 0; i < p.runsTable()->rowCount(); ++i) n += p.runsTable()->item(i, 1) && p.runsTable()->item(i, 1)->text() == "finished";
            return n;
        };
        QTRY_VERIFY_WITH_TIMEOUT(finished() == presetRuns(), 300000);
        QTRY_COMPARE_WITH_TIMEOUT(p.resultRuns(), presetRuns(), 10000);
        QVERIFY(!p.polling());  // nothing queued or running: the polling stops
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) {
            p.resize(1366, 720);
            p.findChild<QTabWidget*>()->setCurrentIndex(2);
            QTest::qWait(100);
            p.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/experiments-slurm-runs.png");
        }
    }

    // A partition that does not exist: sbatch's refusal, named. An executable the node does not
    // have: the task fails, and the status says so with Slurm's state and exit code.
    void jobsThatCannotStartAreReportedAsFailed()
    {
        const QString dir = QDir(m_dir.path()).filePath("bad");
        const QStringList base = QStringList{"sweep", "--preset", "length-generalisation", "--out", dir, "--slurm"} + kShrunk;
        test::expectCliError(test::runCli(base + QStringList{"--partition", "nosuchpartition"}), "nvalid partition");
        // extra #SBATCH lines: copied into the script; anything else in that file is refused
        const QString lines = QDir(m_dir.path()).filePath("sbatch-lines"), evil = QDir(m_dir.path()).filePath("evil-lines");
        QFile good(lines), bad(evil);
        QVERIFY(good.open(QIODevice::WriteOnly) && bad.open(QIODevice::WriteOnly));
        good.write("# our group's defaults\n#SBATCH --comment=parrotscope-test\n\n");
        bad.write("#SBATCH --comment=x\ntouch PWNED\n");
        good.close();
        bad.close();
        test::expectCliError(test::runCli(base + QStringList{"--sbatch-lines", evil}), "touch PWNED' is not an #SBATCH line");
        QVERIFY(!QFileInfo::exists(QDir(dir).filePath("slurm/jobs.json")));
        auto r = test::runCli(base + QStringList{"--executable", QDir(m_dir.path()).filePath("no/such/parrotscope"), "--sbatch-lines", lines});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY(test::readAll(QDir(dir).filePath("slurm/job-1.sh")).contains("\n#SBATCH --comment=parrotscope-test\n"));
        const QJsonObject s = waitFor(dir, [](const QJsonObject& s) { return counted(s, "failed") == presetRuns(); }, 180);
        QVERIFY2(counted(s, "failed") == presetRuns(), qPrintable(QJsonDocument(s).toJson()));
        const QString detail = s["runs"].toArray()[0].toObject()["detail"].toString();
        QVERIFY2(detail.contains("FAILED") && detail.contains("exit code 127"), qPrintable(detail));
        // and a sweep never submitted cannot be cancelled
        test::expectCliError(test::runCli({"sweep", "--cancel", QDir(m_dir.path()).filePath("local")}), "never submitted");
        test::expectCliError(test::runCli({"sweep", "--status", m_dir.path()}), "not a sweep folder");
    }
};

QTEST_MAIN(TestSlurm)
#include "tst_slurm.moc"
