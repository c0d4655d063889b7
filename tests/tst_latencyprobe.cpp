// The GUI-thread latency probe (ui/jobs/latencyprobe.h): a deliberate stall is seen, at its length and
// in its phase; a probe that is off has no timer and records nothing; the window's option prints
// its summary on close. (The app's own latency is measured by bench/bench_gui_latency, not here:
// timings of the whole window would make a flaky test.)
#include "ui/jobs/latencyprobe.h"
#include "testutil.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QProcess>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

using namespace parrot;

namespace {

// Holds the GUI thread, as a long replot or a file read would.
void busyWait(int ms)
{
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < ms) {
    }
}

// Runs the event loop for `ms` (QTest::qWait sleeps between its rounds, which would read as stalls).
void spin(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, Qt::PreciseTimer, &loop, &QEventLoop::quit);
    loop.exec();
}

}  // namespace

class TestLatencyProbe : public QObject {
    Q_OBJECT
private slots:
    void aStallIsRecordedInItsPhase()
    {
        LatencyProbe probe;
        probe.start();
        QVERIFY(probe.isRunning());
        spin(500);  // quiet ticks
        probe.setPhase("busy");
        spin(20);
        busyWait(120);
        spin(500);
        const LatencyProbe::Stats busy = probe.stats("busy");
        QVERIFY2(busy.longestMs >= 100, qPrintable(QString::number(busy.longestMs)));
        QVERIFY(busy.longestMs < 10000);
        QVERIFY(!busy.longStalls.empty() && busy.longStalls.back().ms >= 100);
        QVERIFY(busy.longStalls.back().cpuMs > 0);  // the thread held it: it was on a core
        // it ended some 140 ms into the phase (20 ms of ticks, then 120 ms held)
        QVERIFY2(busy.longestAtS >= 0.13 && busy.longestAtS < 5, qPrintable(QString::number(busy.longestAtS)));
        // one stall among a hundred-odd ticks is not the 99th percentile
        QVERIFY2(busy.ticks > 50, qPrintable(QString::number(busy.ticks)));
        QVERIFY2(busy.p99Ms < busy.longestMs, qPrintable(QString("%1 of %2").arg(busy.p99Ms).arg(busy.longestMs)));
        // the quiet phase before it kept its own ticks, and the stall is not among them
        const LatencyProbe::Stats window = probe.stats("window");
        QVERIFY2(window.ticks > 20, qPrintable(QString::number(window.ticks)));
        QVERIFY(window.longestMs < busy.longestMs);
        QCOMPARE(probe.stats().size(), size_t(2));
        QCOMPARE(probe.stats()[0].phase, QString("window"));
        QCOMPARE(probe.stats()[1].phase, QString("busy"));
        QCOMPARE(probe.overall().ticks, window.ticks + busy.ticks);
        QCOMPARE(probe.overall().longestMs, busy.longestMs);
        QVERIFY(probe.summary().contains(QString("longest stall %1 ms").arg(busy.longestMs, 0, 'f', 1)));
        QCOMPARE(probe.stats("never set").ticks, 0);

        // stopped, it records nothing more; cleared, nothing at all
        probe.stop();
        QVERIFY(!probe.isRunning());
        const int ticks = probe.overall().ticks;
        busyWait(120);
        spin(100);
        QCOMPARE(probe.overall().ticks, ticks);
        probe.clear();
        QCOMPARE(probe.overall().ticks, 0);
        QCOMPARE(probe.overall().longestMs, 0.0);
    }

    // Off (never started), the probe costs nothing: no timer, no ticks, whatever the thread does.
    void offRecordsNothing()
    {
        LatencyProbe probe;
        QVERIFY(!probe.isRunning());
        QVERIFY(probe.findChildren<QTimer*>().isEmpty());
        probe.setPhase("busy");
        busyWait(120);
        spin(100);
        QCOMPARE(probe.overall().ticks, 0);
        QVERIFY(probe.stats().empty());
    }

    void requestedByTheFlagOrTheEnvironment()
    {
        qunsetenv("PARROTSCOPE_MEASURE_LATENCY");
        QVERIFY(!LatencyProbe::latencyRequested(false));
        QVERIFY(LatencyProbe::latencyRequested(true));
        for (const char* on : {"1", "yes", "true"}) {
            qputenv("PARROTSCOPE_MEASURE_LATENCY", on);
            QVERIFY2(LatencyProbe::latencyRequested(false), on);
        }
        for (const char* off : {"", "0", "false", "no"}) {
            qputenv("PARROTSCOPE_MEASURE_LATENCY", off);
            QVERIFY2(!LatencyProbe::latencyRequested(false), off);
        }
        qunsetenv("PARROTSCOPE_MEASURE_LATENCY");
    }

    // The window with --measure-latency (or the variable) prints one summary line when it closes;
    // without, none.
    void theWindowPrintsItsSummaryOnClose()
    {
        QTemporaryDir home;
        const auto window = [&](const QStringList& extra, const QByteArray& variable) {
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert("HOME", home.path());
            env.insert("XDG_CONFIG_HOME", home.filePath("config"));
            env.insert("XDG_DATA_HOME", home.filePath("data"));
            env.insert("QT_QPA_PLATFORM", "offscreen");
            env.remove("PARROTSCOPE_MEASURE_LATENCY");
            if (!variable.isNull()) env.insert("PARROTSCOPE_MEASURE_LATENCY", QString::fromLatin1(variable));
            p.setProcessEnvironment(env);
            p.start(PARROT_EXE, QStringList{"--threads", "1", "--preset", "copy-tiny", "--screenshot", home.filePath("w.png")} + extra);
            if (!p.waitForFinished(120000)) return QString("(did not finish)");
            return QString::fromUtf8(p.readAllStandardError());
        };
        static const QRegularExpression line(
            "^parrotscope: GUI thread: [0-9]+ ticks of 5 ms, longest stall [0-9.]+ ms, 99th percentile [0-9.]+ ms$",
            QRegularExpression::MultilineOption);
        const QString flagged = window({"--measure-latency"}, {});
        QVERIFY2(line.match(flagged).hasMatch(), qPrintable(flagged));
        const QString variable = window({}, "1");
        QVERIFY2(line.match(variable).hasMatch(), qPrintable(variable));
        const QString plain = window({}, {});
        QVERIFY2(!plain.contains("GUI thread"), qPrintable(plain));
    }
};

QTEST_MAIN(TestLatencyProbe)
#include "tst_latencyprobe.moc"
