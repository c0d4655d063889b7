// The UI's one way to run work off the GUI thread: results and errors come back on the GUI
// thread, stale jobs (replaced or cancelled) deliver nothing, progress is coalesced and in
// order, and an owner going away waits for the work and hears nothing afterwards.
#include "ui/jobs/backgroundjob.h"

#include <QtTest>

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

using namespace parrot;

namespace {

// Spins without running the event loop, so nothing queued to the GUI thread is delivered meanwhile.
bool waitWithoutEvents(const std::atomic<bool>& flag, int timeoutMs = 20000)
{
    QElapsedTimer clock;
    clock.start();
    while (!flag.load()) {
        if (clock.elapsed() > timeoutMs) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

// Work that runs until its job is cancelled or stopped, then returns how often it looked.
struct UntilCancelled {
    std::shared_ptr<std::atomic<bool>> started = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> sawCancel = std::make_shared<std::atomic<bool>>(false);
    int operator()(JobContext& job) const
    {
        *started = true;
        int looks = 1;
        while (!job.cancelled()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            ++looks;
        }
        *sawCancel = true;
        return looks;
    }
};

// Counts the queued calls posted to an object, whatever they turn out to do when delivered.
class QueuedCalls : public QObject {
public:
    int count = 0;
    bool eventFilter(QObject*, QEvent* e) override
    {
        count += e->type() == QEvent::MetaCall;
        return false;
    }
};

}  // namespace

class TestBackgroundJob : public QObject {
    Q_OBJECT
private slots:
    void resultArrivesOnTheGuiThread()
    {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QThread* gui = QThread::currentThread();
        QThread* worker = nullptr;
        QThread* deliveredOn = nullptr;
        bool runningInCallback = true;
        job.start([](JobContext&) { return QThread::currentThread(); },
                  [&](QThread* ranOn) {
                      worker = ranOn;
                      deliveredOn = QThread::currentThread();
                      runningInCallback = job.isRunning();
                  },
                  [](const QString& e) { QFAIL(qPrintable("unexpected error: " + e)); });
        QVERIFY(job.isRunning());
        QVERIFY(finished.wait(20000));
        QVERIFY(worker && worker != gui);
        QCOMPARE(deliveredOn, gui);
        QVERIFY(!runningInCallback);  // so a callback may start the next job
        QVERIFY(!job.isRunning());
        QCOMPARE(finished.count(), 1);
    }

    void workWithoutAResultStillReports()
    {
        BackgroundJob job;
        std::atomic<bool> ran{false};
        bool delivered = false;
        job.start([&ran](JobContext&) { ran = true; }, [&] { delivered = true; });
        QTRY_VERIFY_WITH_TIMEOUT(delivered, 20000);
        QVERIFY(ran);
    }

    void anExceptionBecomesTheErrorText()
    {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QString error;
        bool gotResult = false;
        job.start([](JobContext&) -> int { throw std::runtime_error("bad length 7: expected 1..5\n  at frame 0\n  at frame 1"); },
                  [&](int) { gotResult = true; }, [&](const QString& e) { error = e; });
        QVERIFY(finished.wait(20000));
        QVERIFY(!gotResult);
        QCOMPARE(error, QString("bad length 7: expected 1..5"));  // the first line only (torch adds a backtrace)

        job.start([](JobContext&) -> int { throw 42; }, [&](int) { gotResult = true; }, [&](const QString& e) { error = e; });
        QVERIFY(finished.wait(20000));
        QVERIFY(!gotResult);
        QVERIFY(!error.isEmpty() && !error.contains("bad length"));
    }

    void cancelIsSeenByTheWorkAndDropsItsResult()
    {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QSignalSpy progress(&job, &BackgroundJob::progress);
        bool called = false;
        UntilCancelled work;
        auto ended = std::make_shared<std::atomic<bool>>(false);
        job.start(
            [work, ended](JobContext& c) {
                const int looks = work(c);
                c.progress(1, 1);  // after the cancel: dropped too
                *ended = true;
                return looks;
            },
            [&](int) { called = true; }, [&](const QString&) { called = true; });
        QVERIFY(waitWithoutEvents(*work.started));
        job.cancel();
        QVERIFY(!job.isRunning());
        QVERIFY(!job.stopRequested());
        QVERIFY(waitWithoutEvents(*ended));
        QVERIFY(*work.sawCancel);
        QTest::qWait(300);  // the finished thread's delivery, were there one, lands by now
        QVERIFY(!called);
        QCOMPARE(finished.count(), 0);
        QCOMPARE(progress.count(), 0);
    }

    void stopIsSeenByTheWorkAndKeepsItsResult()
    {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        int looks = 0;
        bool stoppedInCallback = false;
        UntilCancelled work;
        job.start(work, [&](int n) {
            looks = n;
            stoppedInCallback = job.stopRequested();
        });
        QVERIFY(waitWithoutEvents(*work.started));
        QVERIFY(!job.stopRequested());
        job.stop();
        QVERIFY(job.isRunning());  // until what it has is delivered
        QVERIFY(finished.wait(20000));
        QVERIFY(*work.sawCancel);
        QVERIFY(looks >= 1);
        QVERIFY(stoppedInCallback);
    }

    // The first job is still running (and ends last) when the second is started: only the
    // second's result arrives, once.
    void aNewerStartMakesTheOlderStale()
    {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        std::vector<int> results;
        auto firstStarted = std::make_shared<std::atomic<bool>>(false);
        auto firstSawCancel = std::make_shared<std::atomic<bool>>(false);
        auto release = std::make_shared<std::atomic<bool>>(false);
        auto firstEnded = std::make_shared<std::atomic<bool>>(false);
        job.start(
            [=](JobContext& c) {
                *firstStarted = true;
                while (!c.cancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                *firstSawCancel = true;
                while (!*release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                c.progress(5, 5);
                *firstEnded = true;
                return 1;
            },
            [&](int r) { results.push_back(r); });
        QVERIFY(waitWithoutEvents(*firstStarted));
        QSignalSpy progress(&job, &BackgroundJob::progress);
        job.start([](JobContext&) { return 2; }, [&](int r) { results.push_back(r); });
        QVERIFY(finished.wait(20000));
        QCOMPARE(results, std::vector<int>{2});
        QVERIFY(waitWithoutEvents(*firstSawCancel));  // a newer start cancels the older work
        *release = true;
        QVERIFY(waitWithoutEvents(*firstEnded));
        QTest::qWait(300);
        QCOMPARE(results, std::vector<int>{2});
        QCOMPARE(finished.count(), 1);
        QCOMPARE(progress.count(), 0);  // the stale job's progress is dropped with it
    }

    // A callback may start the next job on the same object (the explorer probes what it loaded).
    void aCallbackCanStartTheNextJob()
    {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        std::vector<int> results;
        job.start([](JobContext&) { return 1; }, [&](int r) {
            results.push_back(r);
            job.start([](JobContext&) { return 2; }, [&](int r2) { results.push_back(r2); });
        });
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), size_t(2), 20000);
        QCOMPARE(results, (std::vector<int>{1, 2}));
        QTRY_COMPARE(finished.count(), 2);
        QVERIFY(!job.isRunning());
    }

    // While the GUI thread is busy, any number of reports becomes one queued delivery carrying
    // the latest value: one event in the queue, not one per report.
    void progressIsCoalesced()
    {
        BackgroundJob job;
        QueuedCalls queued;
        job.installEventFilter(&queued);
        std::vector<std::pair<int, int>> seen;
        connect(&job, &BackgroundJob::progress, this, [&](int done, int total) { seen.emplace_back(done, total); });
        auto reported = std::make_shared<std::atomic<bool>>(false);
        constexpr int kReports = 100000;
        bool delivered = false;
        job.start(
            [reported](JobContext& c) {
                for (int i = 1; i <= kReports; ++i) c.progress(i, kReports);
                *reported = true;
            },
            [&] { delivered = true; });
        QVERIFY(waitWithoutEvents(*reported));
        QTRY_VERIFY_WITH_TIMEOUT(delivered, 20000);
        QCOMPARE(seen, (std::vector<std::pair<int, int>>{{kReports, kReports}}));
        QCOMPARE(queued.count, 2);  // the progress and the thread's end
    }

    // With the GUI thread free, deliveries come in the order reported, never repeat, end at the
    // last value, and all arrive before the result.
    void progressArrivesInOrderBeforeTheResult()
    {
        BackgroundJob job;
        std::vector<std::pair<int, int>> seen;
        bool resultSeen = false, progressAfterResult = false;
        connect(&job, &BackgroundJob::progress, this, [&](int done, int total) {
            progressAfterResult = progressAfterResult || resultSeen;
            seen.emplace_back(done, total);
        });
        constexpr int kReports = 2000;
        job.start(
            [](JobContext& c) {
                for (int i = 1; i <= kReports; ++i) {
                    c.progress(i, kReports);
                    if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
                }
                return kReports;
            },
            [&](int) { resultSeen = true; });
        QTRY_VERIFY_WITH_TIMEOUT(resultSeen, 20000);
        QVERIFY(!progressAfterResult);
        QVERIFY(!seen.empty());
        QVERIFY(int(seen.size()) <= kReports);
        for (size_t i = 0; i < seen.size(); ++i) {
            QCOMPARE(seen[i].second, kReports);
            if (i > 0) QVERIFY2(seen[i].first > seen[i - 1].first, qPrintable(QString("delivery %1 went back").arg(i)));
        }
        QCOMPARE(seen.back().first, kReports);
        qInfo("%d reports arrived as %d deliveries", kReports, int(seen.size()));
    }

    // The owner going away: the destructor cancels, waits for the work to end, and afterwards
    // nothing is delivered, not even what the work queued before it ended.
    void destructionWhileRunningWaitsAndCallsNothing()
    {
        bool called = false;
        int progressCalls = 0;
        UntilCancelled work;
        auto ended = std::make_shared<std::atomic<bool>>(false);
        {
            auto job = std::make_unique<BackgroundJob>();
            connect(job.get(), &BackgroundJob::progress, this, [&] { ++progressCalls; });
            connect(job.get(), &BackgroundJob::finished, this, [&] { called = true; });
            job->start(
                [work, ended](JobContext& c) {
                    c.progress(1, 2);
                    const int looks = work(c);
                    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // slow to wind down
                    c.progress(2, 2);
                    *ended = true;
                    return looks;
                },
                [&](int) { called = true; }, [&](const QString&) { called = true; });
            QVERIFY(waitWithoutEvents(*work.started));
            job.reset();
            QVERIFY(*ended);  // waited for, not left running
            QVERIFY(*work.sawCancel);
        }
        QTest::qWait(300);
        QVERIFY(!called);
        QCOMPARE(progressCalls, 0);
    }
};

QTEST_MAIN(TestBackgroundJob)
#include "tst_backgroundjob.moc"
