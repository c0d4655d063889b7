// The Train tab's workflow with no window: TrainingSession trains, stops, resumes, evaluates,
// opens and saves as the window's buttons ask it to, and refuses what cannot go ahead.
#include "base/error.h"
#include "base/io/runfolder.h"
#include "ui/jobs/trainingsession.h"
#include "testutil.h"

#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

namespace {

constexpr int kWaitMs = 240000;

TrainOutcome waitForOutcome(QSignalSpy& finished)
{
    if (finished.isEmpty() && !finished.wait(kWaitMs)) return {};
    return finished.takeFirst().at(0).value<TrainOutcome>();
}

}  // namespace

class TestSession : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void trainsAFreshModelIntoARunFolder()
    {
        TrainingSession s;
        QSignalSpy started(&s, &TrainingSession::runStarted);
        QSignalSpy progress(&s, &TrainingSession::progress);
        QSignalSpy finished(&s, &TrainingSession::trainingFinished);
        QSignalSpy busy(&s, &TrainingSession::busyChanged);
        const ExperimentConfig c = test::tinyConfig(30);
        s.start(c, false, m_dir.filePath("runs"));
        QVERIFY(s.isTraining() && s.busy());
        QCOMPARE(s.activity(), QString("training"));
        QCOMPARE(started.size(), 1);
        QVERIFY(started.at(0).at(1).toString().startsWith("Training "));
        QVERIFY2(!started.at(0).at(2).toBool(), "a fresh run, not a resumed one");
        // a second start while training is refused, and changes nothing
        QVERIFY_THROWS_EXCEPTION(Error, s.start(c, false, m_dir.filePath("runs")));
        QVERIFY_THROWS_EXCEPTION(Error, s.evaluate({4}, 8));
        QVERIFY_THROWS_EXCEPTION(Error, s.save(m_dir.filePath("busy.safetensors")));
        const TrainOutcome o = waitForOutcome(finished);
        QCOMPARE(int(o.status), int(TrainOutcome::Status::Finished));
        QCOMPARE(o.step, 30LL);
        QVERIFY(!s.busy());
        QVERIFY(!progress.isEmpty());
        QVERIFY(busy.size() >= 2);
        QCOMPARE(s.model().step(), 30LL);
        QVERIFY(QFileInfo(s.runDir()).isDir());
        QCOMPARE(QFileInfo(s.runDir()).absolutePath(), QFileInfo(m_dir.filePath("runs")).absoluteFilePath());
        QVERIFY(!s.resumable());  // finished: nothing to resume
        QVERIFY(s.checkpoint().isEmpty());  // a model of the session's own
        // saved and opened again, off the GUI thread
        const QString file = m_dir.filePath("fresh.safetensors");
        s.save(file);
        QVERIFY(QFileInfo::exists(file));
        TrainingSession other;
        QSignalSpy opened(&other, &TrainingSession::opened);
        other.open(file);
        QVERIFY(other.isOpening());
        QVERIFY(opened.wait(60000));
        QCOMPARE(other.checkpoint(), file);
        QCOMPARE(other.model().step(), 30LL);
        QCOMPARE(toJson(other.model().config()), toJson(s.model().config()));
    }

    void stopsAndResumesTheSameRun()
    {
        TrainingSession s;
        QSignalSpy progress(&s, &TrainingSession::progress);
        QSignalSpy finished(&s, &TrainingSession::trainingFinished);
        ExperimentConfig c = test::tinyConfig(1000);
        c.train.checkpointEvery = 20;
        s.start(c, false, m_dir.filePath("runs"));
        QVERIFY(progress.wait(kWaitMs));
        s.setPaused(true);
        QVERIFY(s.isPaused());
        s.stop();  // also releases the pause
        const TrainOutcome stopped = waitForOutcome(finished);
        QCOMPARE(int(stopped.status), int(TrainOutcome::Status::Cancelled));
        QVERIFY(stopped.step < 1000);
        QVERIFY(s.resumable());
        QVERIFY(QFileInfo::exists(resumeFilePath(s.runDir())));
        const QString runDir = s.runDir();
        QSignalSpy started(&s, &TrainingSession::runStarted);
        s.resume(runDir);
        QCOMPARE(started.size(), 1);
        QVERIFY(started.at(0).at(2).toBool());
        QCOMPARE(s.runDir(), runDir);
        const TrainOutcome resumed = waitForOutcome(finished);
        QCOMPARE(int(resumed.status), int(TrainOutcome::Status::Finished));
        QCOMPARE(resumed.step, 1000LL);
        QVERIFY(!s.resumable());
    }

    void evaluatesTheModelItHolds()
    {
        TrainingSession s;
        QVERIFY_THROWS_EXCEPTION(Error, s.evaluate({4}, 8));  // no model yet
        s.setModel(Model::create(test::tinyConfig(5)));
        QSignalSpy done(&s, &TrainingSession::evaluationFinished);
        s.evaluate({4, 8}, 16);
        QVERIFY(s.isEvaluating());
        QCOMPARE(s.activity(), QString("evaluating"));
        QVERIFY(done.wait(kWaitMs));
        const LengthCurve curve = done.at(0).at(0).value<LengthCurve>();
        QCOMPARE(curve.lengths, (std::vector<int>{4, 8}));
        QVERIFY2(!done.at(0).at(1).toBool(), "every length measured");
        QVERIFY(!s.busy());
    }

    void aCheckpointThatCannotBeReadKeepsTheModel()
    {
        TrainingSession s;
        s.setModel(Model::create(test::tinyConfig(5)));
        const QString bad = m_dir.filePath("broken.safetensors");
        QVERIFY(test::writeAll(bad, "not a checkpoint"));
        QSignalSpy failed(&s, &TrainingSession::openFailed);
        QSignalSpy opened(&s, &TrainingSession::opened);
        s.open(bad);
        QVERIFY(failed.wait(60000));
        QVERIFY2(failed.at(0).at(0).toString().contains("broken.safetensors"), qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(opened.isEmpty());
        QVERIFY(!s.model().isNull());  // the model held is kept
        QVERIFY(s.checkpoint().isEmpty());
        QVERIFY_THROWS_EXCEPTION(Error, s.openNow(m_dir.filePath("missing.safetensors")));
        QVERIFY(!s.model().isNull());
    }

    void continuesAnOpenedCheckpointIntoANewRun()
    {
        TrainingSession s;
        const ExperimentConfig c = test::tinyConfig(10);
        s.setModel(Model::create(c));
        // nothing opened from a file: there is nothing to continue
        QVERIFY_THROWS_EXCEPTION(Error, s.start(c, true, m_dir.filePath("runs")));
        const QString file = m_dir.filePath("to-continue.safetensors");
        s.save(file);
        s.openNow(file);
        QCOMPARE(s.checkpoint(), file);
        QSignalSpy started(&s, &TrainingSession::runStarted);
        QSignalSpy finished(&s, &TrainingSession::trainingFinished);
        s.start(c, true, m_dir.filePath("runs"));
        QVERIFY(started.at(0).at(1).toString().startsWith("Continuing "));
        QVERIFY(QDir(s.runDir()).dirName().contains("continued"));
        const TrainOutcome o = waitForOutcome(finished);
        QCOMPARE(int(o.status), int(TrainOutcome::Status::Finished));
        QCOMPARE(s.model().step(), 10LL);  // 10 more steps, counted on from step 0 of the saved model
        QCOMPARE(s.checkpoint(), o.checkpoint);  // continuing again goes on from what this run wrote
        // a config that describes another model cannot continue it
        ExperimentConfig other = c;
        other.model.layers += 1;
        QVERIFY_THROWS_EXCEPTION(Error, s.start(other, true, m_dir.filePath("runs")));
        QVERIFY(!s.busy());
    }
};

QTEST_GUILESS_MAIN(TestSession)
#include "tst_session.moc"
