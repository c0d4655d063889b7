// Crash recovery: a window killed outright (SIGKILL) in the middle of training leaves its run with
// a run.lock naming a dead process and a resume file. The next start says so in one line, with
// Continue, which ends bit for bit where the same run uninterrupted ends, and Dismiss, which leaves
// the run resumable from the Runs tab. A lock of a live process, or of another host, is never taken
// for an interrupted run. And the files a user chooses (an export, a checkpoint, a layout, a sweep)
// are never half-written: a write that fails on a full disk, a folder removed meanwhile or (not as
// root) a read-only one gives one message naming the file and leaves the earlier file as it was.
#include "base/error.h"
#include "base/experiments/sweep.h"
#include "base/io/runfolder.h"
#include "base/io/safetensors.h"
#include "core/diagnostics.h"
#include "core/model.h"
#include "ui/common/appsettings.h"
#include "ui/common/exportdialog.h"
#include "ui/jobs/trainingsession.h"
#include "ui/panels/experimentspanel.h"
#include "ui/window/mainwindow.h"
#include "ui/window/recoverybar.h"
#include "testutil.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QPushButton>
#include <QTemporaryDir>
#include <QSettings>
#include <QtTest>

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>

using namespace parrot;

namespace {

// A copy run small enough to train in seconds, with an autosave every 10 steps.
QStringList runSettings()
{
    return {"--preset", "copy-tiny", "--set", "model.d_model=32", "--set", "model.heads=4", "--set", "train.steps=400",
            "--set", "train.checkpoint_every=10", "--set", "train.eval_every=200", "--set", "train.log_every=5",
            "--set", "train.eval_samples=16", "--set", "task.eval_samples=16", "--threads", "1"};
}

long long resumeStep(const QString& runDir)
{
    try {
        return readSafetensors(resumeFilePath(runDir)).metadata.value("step", "-1").toLongLong();
    } catch (const Error&) {
        return -1;  // being written
    }
}

// Starts `args` (the window or the command line) and kills it (SIGKILL) once a run folder under
// `root` has autosaved past step 20; the run folder, or "" when none got that far.
QString startAndKill(const QStringList& args, const QString& root)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(PARROT_EXE, args);
    if (!p.waitForStarted(10000)) return {};
    QString run;
    QElapsedTimer waited;
    waited.start();
    while (run.isEmpty() && waited.elapsed() < 120000 && p.state() == QProcess::Running) {
        p.waitForFinished(50);
        for (const QFileInfo& d : QDir(root).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
            if (resumeStep(d.absoluteFilePath()) >= 20) run = d.absoluteFilePath();
    }
    const bool killed = p.state() == QProcess::Running;
    p.kill();
    p.waitForFinished(10000);
    if (!killed) qWarning("the process ended before the kill: %s", p.readAll().constData());
    return killed ? run : QString();
}

// A full disk for this process while it lives: a file may not grow past `bytes` (a write past it
// fails with EFBIG, as with ENOSPC, instead of killing the process).
struct DiskFull {
    rlimit before{};
    explicit DiskFull(rlim_t bytes)
    {
        ::signal(SIGXFSZ, SIG_IGN);
        ::getrlimit(RLIMIT_FSIZE, &before);
        const rlimit r{bytes, before.rlim_max};
        ::setrlimit(RLIMIT_FSIZE, &r);
    }
    ~DiskFull() { ::setrlimit(RLIMIT_FSIZE, &before); }
};

// The ways a write fails: a full disk, the folder removed meanwhile, a read-only folder (root
// writes anyway, so only for another user).
QStringList failures()
{
    QStringList out{"full", "removed"};
    if (::geteuid() != 0) out << "read-only";
    return out;
}

// Puts `dir` in the state `failure` names; undone by the returned guard's destructor.
std::unique_ptr<DiskFull> breakFolder(const QString& failure, const QString& dir)
{
    if (failure == "removed") QDir(dir).removeRecursively();
    if (failure == "read-only") QFile::setPermissions(dir, QFile::ReadOwner | QFile::ExeOwner);
    return failure == "full" ? std::make_unique<DiskFull>(256) : nullptr;
}

}  // namespace

class TestRecovery : public QObject {
    Q_OBJECT
    QTemporaryDir m_home;
    QString m_runs;

private slots:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        QCoreApplication::setOrganizationName("Parrotscope");  // as the app: QSettings reports its writes only with one
        // the window here and the processes it starts share these: the runs folder is the default,
        // <data>/Parrotscope/runs, and no settings are shared with the user's
        qputenv("XDG_DATA_HOME", m_home.filePath("data").toLocal8Bit());
        qputenv("XDG_CONFIG_HOME", m_home.filePath("config").toLocal8Bit());
        m_runs = QDir(m_home.filePath("data")).filePath("Parrotscope/runs");
        QVERIFY(QDir().mkpath(m_runs));
        configureThreads(1);  // as the runs' --threads 1, so that the window's training matches them bit for bit
    }

    // The window killed at a random step offers the run at its next start, in one line naming the
    // step; Continue resumes it through the stale lock and ends bit for bit as the run uninterrupted.
    void killedWindowContinuesBitExact()
    {
        const QString ref = m_home.filePath("reference");
        const test::CliResult whole = test::runCli(QStringList{"train", "--out", ref} + runSettings());
        QVERIFY2(whole.code == 0, qPrintable(whole.out + whole.err));

        const QString run = startAndKill(runSettings() + QStringList{"--train", "--fresh-layout"}, m_runs);
        QVERIFY2(!run.isEmpty(), "the window did not get to an autosave before the kill");
        QVERIFY(QFileInfo::exists(QDir(run).filePath("run.lock")));  // left by the killed process
        QVERIFY(runStatus(run).isEmpty());
        const long long step = resumeStep(run);
        QVERIFY(step >= 20 && step < 400);

        MainWindow w;
        w.resize(1366, 768);
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.recoveryBar()->isVisible(), 20000);
        QCOMPARE(w.recoveryBar()->runs().size(), size_t(1));
        QCOMPARE(w.recoveryBar()->text(), QString("Training of copy-tiny stopped unexpectedly at step %1").arg(QLocale().toString(step)));
        QVERIFY(QFileInfo::exists(QDir(run).filePath("run.lock")));  // looking changes nothing
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR"))
            w.grab().save(QDir(qEnvironmentVariable("PARROT_SHOT_DIR")).filePath("recovery-1366x768.png"));

        QTest::mouseClick(w.recoveryBar()->continueButton(), Qt::LeftButton);
        QVERIFY(!w.recoveryBar()->isVisible());
        QTRY_VERIFY_WITH_TIMEOUT(w.train()->session()->busy(), 10000);
        QCOMPARE(w.train()->session()->runDir(), run);
        QTRY_VERIFY_WITH_TIMEOUT(!w.train()->session()->busy(), 180000);
        QCOMPARE(runStatus(run), QString("finished"));
        QVERIFY(!QFileInfo::exists(QDir(run).filePath("run.lock")));  // a run that ends lets go of its lock
        QVERIFY(test::tensorBytes(QDir(run).filePath("checkpoints/last.safetensors")) ==
                test::tensorBytes(QDir(ref).filePath("checkpoints/last.safetensors")));

        // a finished run is not offered again
        MainWindow again;
        again.show();
        QTest::qWait(1500);
        QVERIFY(!again.recoveryBar()->isVisible());
        QCOMPARE(again.recoveryBar()->runs().size(), size_t(0));
    }

    // Dismiss leaves the run as it was, resumable; a run trained now, or one whose lock names
    // another host, is never offered.
    void dismissLeavesTheRunResumable()
    {
        QDir(m_runs).removeRecursively();
        QVERIFY(QDir().mkpath(m_runs));
        const QString run = startAndKill(QStringList{"train", "--out", QDir(m_runs).filePath("cli-run")} + runSettings(), m_runs);
        QVERIFY(!run.isEmpty());
        const long long step = resumeStep(run);
        QCOMPARE(interruptedRuns(m_runs).size(), size_t(1));
        QCOMPARE(interruptedRuns(m_runs).front().step, step);

        // A run folder holding `lock` with line `line` (QLockFile's: pid, process name, host name,
        // machine id, boot id) replaced by `value`.
        const auto lockedCopy = [&](const QString& name, const QByteArray& lock, int line, const QByteArray& value) {
            const QString dir = QDir(m_runs).filePath(name);
            QVERIFY(QDir().mkpath(dir));
            QVERIFY(QFile::copy(QDir(run).filePath("config.json"), QDir(dir).filePath("config.json")));
            QList<QByteArray> lines = lock.split('\n');
            QVERIFY(lines.size() > line);
            lines[line] = value;
            QFile f(QDir(dir).filePath("run.lock"));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(lines.join('\n'));
        };
        // the dead run's lock as written on another machine (a runs folder on a shared disk): not ours to judge
        lockedCopy("other-host-run", test::readAll(QDir(run).filePath("run.lock")), 3, "0123456789abcdef0123456789abcdef");
        QCOMPARE(interruptedRuns(m_runs).size(), size_t(1));

        // a run being trained right now holds a live lock: not offered while it lives
        QProcess live;
        live.start(PARROT_EXE, QStringList{"train", "--out", QDir(m_runs).filePath("live-run")} + runSettings() +
                                   QStringList{"--set", "train.steps=100000"});
        QVERIFY(live.waitForStarted(10000));
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(QDir(m_runs).filePath("live-run/run.lock")), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(test::readAll(QDir(m_runs).filePath("live-run/run.lock")).count('\n') >= 4, 10000);
        QCOMPARE(interruptedRuns(m_runs).size(), size_t(1));
        // the same live lock from before a reboot (a power cut: another boot id) is stale, whatever
        // process has that number now
        lockedCopy("rebooted-run", test::readAll(QDir(m_runs).filePath("live-run/run.lock")), 4, "00000000-0000-0000-0000-000000000000");
        QCOMPARE(interruptedRuns(m_runs).size(), size_t(2));
        QVERIFY(QDir(QDir(m_runs).filePath("rebooted-run")).removeRecursively());

        MainWindow w;
        w.show();
        QTRY_VERIFY_WITH_TIMEOUT(w.recoveryBar()->isVisible(), 20000);
        QCOMPARE(w.recoveryBar()->current()->dir, run);
        QTest::mouseClick(w.recoveryBar()->dismissButton(), Qt::LeftButton);
        QVERIFY(!w.recoveryBar()->isVisible());
        QVERIFY(!QFileInfo::exists(QDir(run).filePath("run.lock")));
        QVERIFY(QFileInfo::exists(resumeFilePath(run)));
        QCOMPARE(resumeStep(run), step);  // nothing else changed
        QCOMPARE(interruptedRuns(m_runs).size(), size_t(0));
        QVERIFY(QFileInfo::exists(QDir(m_runs).filePath("live-run/run.lock")));  // Dismiss touches only its run
        live.kill();
        live.waitForFinished(10000);

        // the dismissed run resumes from the command line as from the Runs tab
        const test::CliResult rest = test::runCli({"train", "--resume", run, "--threads", "1"});
        QVERIFY2(rest.code == 0, qPrintable(rest.out + rest.err));
        QCOMPARE(runStatus(run), QString("finished"));
    }

    // The window's own writes, each made to fail three ways: one message naming the file, the
    // earlier file byte for byte as it was, and a later write to a sound folder works.
    void failedWritesKeepTheEarlierFile()
    {
        MainWindow w;
        w.resize(1366, 768);
        w.show();
        w.train()->session()->setModel(Model::create(test::smallConfig("transformer", 10)));  // a model to save
        QStringList errors;
        connect(&w, &MainWindow::errorShown, this, [&errors](const QString& e) { errors << e; });
        const auto oneError = [&errors](const QString& file) {
            const bool ok = errors.size() == 1 && errors.front().contains(file);
            if (!ok) qWarning("expected one message naming %s, got: %s", qPrintable(file), qPrintable(errors.join(" | ")));
            errors.clear();
            return ok;
        };
        for (const QString& failure : failures()) {
            const QString dir = m_home.filePath("files-" + failure);
            QVERIFY(QDir().mkpath(dir));

            // a checkpoint (File → Save checkpoint)
            const QString checkpoint = QDir(dir).filePath("model.safetensors");
            QVERIFY(w.train()->saveCheckpoint(checkpoint));
            const QByteArray checkpointBefore = test::readAll(checkpoint);
            // an exported figure (File → Export), written off the GUI thread
            w.docks()->showTab(Tab::Train);
            ExportDialog* d = w.figureActions()->exportFigure(nullptr, false);
            QVERIFY(d);
            const QString figure = QDir(dir).filePath("loss.png");
            d->setPath(figure);
            QString error;
            QVERIFY2(test::exportAndWait(*d, &error), qPrintable(error));
            const QByteArray figureBefore = test::readAll(figure);
            {
                const auto broken = breakFolder(failure, dir);
                QVERIFY(!w.train()->saveCheckpoint(checkpoint));
                QVERIFY2(oneError(checkpoint), qPrintable(failure));
                const bool exported = test::exportAndWait(*d, &error);
                QVERIFY2(!exported, qPrintable(failure + ": " + d->path() + " " + QString::number(QFileInfo(figure).size())));
                QVERIFY2(error.contains(figure), qPrintable(error));
                errors.clear();  // the dialog shows its own error; the window's are not asked for here
            }
            QFile::setPermissions(dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
            if (failure == "removed") {
                QVERIFY(!QFileInfo::exists(checkpoint) && !QFileInfo::exists(figure));  // nothing half-written there either
            } else {
                QCOMPARE(test::readAll(checkpoint), checkpointBefore);
                QCOMPARE(test::readAll(figure), figureBefore);
                QCOMPARE(QDir(dir).entryList(QDir::Files).size(), 2);  // no temporary file left beside them
            }
            d->close();
        }

        // a layout (View → Save layout): the settings file is written whole or not at all
        w.docks()->saveLayout("kept");
        const QString settingsFile = QSettings().fileName();
        const QByteArray settingsBefore = test::readAll(settingsFile);
        QVERIFY(!settingsBefore.isEmpty());
        {
            DiskFull full(256);
            w.docks()->saveLayout("lost");
        }
        QVERIFY(oneError(QFileInfo(settingsFile).fileName()));
        QCOMPARE(test::readAll(settingsFile), settingsBefore);
        QVERIFY(w.docks()->savedLayouts().contains("kept"));
        QVERIFY(!w.docks()->savedLayouts().contains("lost"));
        w.docks()->saveLayout("later");
        QVERIFY(errors.isEmpty());
        // the preferences go the same way: written whole (numbers too), or the file is left as it was
        AppSettings prefs = AppSettings::load();
        prefs.threads = 3;
        QCOMPARE(prefs.savePreferences(), QString());
        QCOMPARE(AppSettings::load().threads, 3);
        const QByteArray prefsBefore = test::readAll(settingsFile);
        prefs.threads = 5;
        {
            DiskFull full(256);
            QVERIFY(prefs.savePreferences().contains(QFileInfo(settingsFile).fileName()));
        }
        QCOMPARE(test::readAll(settingsFile), prefsBefore);
        QCOMPARE(AppSettings::load().threads, 3);
        QVERIFY(QSettings().childGroups().contains("layouts"));

        // a sweep written into its folder (the Experiments tab's Run): index.json and the configs stay
        ExperimentsPanel* e = w.experiments();
        const QString sweep = m_home.filePath("sweep");
        QVERIFY(e->selectPreset("state-size"));
        e->setOutDir(sweep);
        writeSweepFiles(loadSweep(sweepPresetFile("state-size"), sweep));
        const QByteArray indexBefore = test::readAll(QDir(sweep).filePath("index.json"));
        QVERIFY(!indexBefore.isEmpty());
        e->setStepsDivisor(4);  // a quick look: every config changes, so each must be written again
        bool started = false;
        {
            DiskFull full(256);
            started = e->run();
        }
        if (started) e->cancel();
        QVERIFY(!started);
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors.front().contains(sweep) && errors.front().contains("cannot write"), qPrintable(errors.front()));
        errors.clear();
        QCOMPARE(test::readAll(QDir(sweep).filePath("index.json")), indexBefore);
        QVERIFY(!e->isRunning());
    }
};

QTEST_MAIN(TestRecovery)
#include "tst_recovery.moc"
