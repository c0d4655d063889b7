// How long the window's GUI thread stalls while it works: the window, offscreen, is
// driven through what a user does most (training the default experiment, an evaluation, opening
// the biggest bundled checkpoint, the Explore tab, a shrunken sweep, exporting a whole tab) while
// a LatencyProbe (ui/jobs/latencyprobe.h) ticks every 5 ms on the GUI thread. Each phase's longest
// and 99th-percentile stall is printed; the goal is no stall over 50 ms anywhere.
//
// The window runs with a fresh home folder (settings, runs), so nothing of the user's is read or
// touched. Timings are not tests: run it on a quiet machine (a compiler on the other core shows
// up as scheduling jitter), and compare runs with each other, not with another machine's.
//
// Usage: bench_gui_latency [--steps N] [--threads N] [--app PATH] [--keep DIR] [--trace MS]
#include "base/presets.h"
#include "core/diagnostics.h"
#include "ui/common/exportdialog.h"
#include "ui/jobs/latencyprobe.h"
#include "ui/panels/causaldialog.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/explorerpanel.h"
#include "ui/panels/insidepane.h"
#include "ui/panels/settingspanel.h"
#include "ui/window/mainwindow.h"

#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QMetaEnum>
#include <QTemporaryDir>
#include <QTextStream>
#include <QThread>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>

using namespace parrot;

namespace {

QTextStream& out()
{
    static QTextStream s(stdout);
    return s;
}

// Runs the event loop until `done()` holds (checked every 20 ms, and after every event the loop
// handles is too often: the check itself would show up as load) or `timeoutMs` passes.
bool waitUntil(const std::function<bool()>& done, int timeoutMs)
{
    if (done()) return true;
    QEventLoop loop;
    QTimer poll, deadline;
    bool ok = false;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done()) {
            ok = true;
            loop.quit();
        }
    });
    QObject::connect(&deadline, &QTimer::timeout, &loop, &QEventLoop::quit);
    deadline.setSingleShot(true);
    poll.start(20);
    deadline.start(timeoutMs);
    loop.exec();
    return ok;
}

// Lets the event loop run for `ms`: trailing replots and layouts land in the phase that caused them.
void settle(int ms)
{
    QElapsedTimer t;
    t.start();
    waitUntil([&] { return t.elapsed() >= ms; }, ms + 1000);
}

// Connects to `signal` before `start` runs, so a signal emitted at once is not missed, and waits
// for it. False when it did not come within `timeoutMs`.
template <typename Sender, typename Signal>
bool runUntilSignal(const std::function<void()>& start, Sender* sender, Signal signal, int timeoutMs)
{
    bool fired = false;
    const QMetaObject::Connection c = QObject::connect(sender, signal, sender, [&fired] { fired = true; });
    start();
    const bool ok = waitUntil([&] { return fired; }, timeoutMs);
    QObject::disconnect(c);
    return ok;
}

// With --trace MS: every event the GUI thread takes MS ms or longer to handle, with what received
// it, nested ones indented under the event that sent them. It points at the cause of a stall
// (a paint, a queued result, a timer) without a profiler.
class TracingApplication : public QApplication {
public:
    using QApplication::QApplication;
    double traceMs = -1;
    const LatencyProbe* probe = nullptr;

    bool notify(QObject* receiver, QEvent* event) override
    {
        if (traceMs < 0 || QThread::currentThread() != thread()) return QApplication::notify(receiver, event);
        // read before delivery: handling an event may delete its receiver (DeferredDelete does)
        const char* type = QMetaEnum::fromType<QEvent::Type>().valueToKey(event->type());
        const char* className = receiver->metaObject()->className();
        const QString name = receiver->objectName();
        QElapsedTimer t;
        t.start();
        const int depth = m_depth++;
        const size_t mark = m_lines.size();
        const bool handled = QApplication::notify(receiver, event);
        --m_depth;
        const double ms = double(t.nsecsElapsed()) / 1e6;
        if (ms >= traceMs) {
            const QString what = QString("%1%2 ms  %3 to %4%5")
                                     .arg(QString(2 * depth, ' '))
                                     .arg(ms, 0, 'f', 1)
                                     .arg(type ? type : "event")
                                     .arg(className)
                                     .arg(name.isEmpty() ? QString() : " '" + name + "'");
            m_lines.insert(m_lines.begin() + qsizetype(mark), what);  // before what it sent
        } else {
            m_lines.resize(mark);  // a quick event's slow children are its own story only if it is slow
        }
        if (depth == 0 && !m_lines.empty()) {
            QTextStream err(stderr);
            err << "[" << (probe ? probe->phase() : QString()) << "]\n";
            for (const QString& l : m_lines) err << "  " << l << "\n";
            m_lines.clear();
        }
        return handled;
    }

private:
    int m_depth = 0;
    QStringList m_lines;
};

struct Options {
    int steps = 300;
    int threads = 0;  // all cores, as the window
    QString app;
    QString keep;
    double traceMs = -1;
};

[[noreturn]] void usage(int code)
{
    QTextStream err(stderr);
    (code ? err : out())
        << "Usage: bench_gui_latency [--steps N] [--threads N] [--app PATH] [--keep DIR] [--trace MS]\n"
           "  --steps N    training steps of the default experiment (default 300: 10-20 s on 2 cores)\n"
           "  --threads N  torch threads (default: all cores, as the window)\n"
           "  --app PATH   the parrotscope binary the sweep's runs are started with (default: the one built with this)\n"
           "  --keep DIR   write the home folder (settings, runs, sweep, exports) there instead of a temporary one\n"
           "  --trace MS   print to stderr every event the GUI thread takes MS ms or longer to handle\n";
    err.flush();
    out().flush();
    std::exit(code);
}

Options parse(const QStringList& args)
{
    Options o;
    o.app = QStringLiteral(PARROT_EXE);
    for (qsizetype i = 1; i < args.size(); ++i) {
        const QString a = args[i];
        const auto value = [&]() -> QString {
            if (i + 1 >= args.size()) {
                QTextStream(stderr) << "bench_gui_latency: " << a << " expects a value\n";
                usage(2);
            }
            return args[++i];
        };
        const auto number = [&](int least) {
            const QString v = value();
            bool ok = false;
            const int n = v.toInt(&ok);
            if (!ok || n < least) {
                QTextStream(stderr) << "bench_gui_latency: " << a << ": expected a whole number >= " << least << ", not '" << v << "'\n";
                usage(2);
            }
            return n;
        };
        if (a == "--steps") o.steps = number(1);
        else if (a == "--threads") o.threads = number(0);
        else if (a == "--app") o.app = value();
        else if (a == "--keep") o.keep = value();
        else if (a == "--trace") o.traceMs = number(1);
        else if (a == "-h" || a == "--help") usage(0);
        else {
            QTextStream(stderr) << "bench_gui_latency: unknown option " << a << "\n";
            usage(2);
        }
    }
    if (!QFileInfo(o.app).isExecutable()) {
        QTextStream(stderr) << "bench_gui_latency: " << o.app << " is missing; build the parrotscope target first\n";
        std::exit(1);
    }
    return o;
}

// A laptop's screen for the offscreen platform (its own default is 800 x 800), as tst_gui uses.
void useOffscreenLaptopScreen(const QString& dir)
{
    if (!qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) return;  // the caller chose one
    const QString config = QDir(dir).filePath("screen.json");
    QFile f(config);
    if (f.open(QIODevice::WriteOnly))
        f.write(R"({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": 1366, "height": 768,
                                 "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1.0}]})");
    qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.toLocal8Bit());
}

// The machine's 1-minute load average (/proc/loadavg), or "?": stalls on a machine busy with
// other work are partly waiting for a core, and the table says how busy it was.
QString loadAverage()
{
    QFile f("/proc/loadavg");
    return f.open(QIODevice::ReadOnly) ? QString::fromLatin1(f.readAll()).section(' ', 0, 0) : QString("?");
}

}  // namespace

int main(int argc, char** argv)
{
    restartWithLibrarySettings(argv);  // as the app does: OpenMP's short spin
    QStringList args;
    for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
    const Options o = parse(args);

    // A fresh home: no saved layout, settings or runs of the user's are read or written.
    std::optional<QTemporaryDir> temporary;
    QString home = o.keep;
    if (home.isEmpty()) {
        temporary.emplace();
        if (!temporary->isValid()) {
            QTextStream(stderr) << "bench_gui_latency: cannot make a temporary folder\n";
            return 1;
        }
        home = temporary->path();
    }
    QDir().mkpath(home);
    home = QDir(home).absolutePath();
    qputenv("HOME", home.toLocal8Bit());
    qputenv("XDG_CONFIG_HOME", QDir(home).filePath("config").toLocal8Bit());
    qputenv("XDG_DATA_HOME", QDir(home).filePath("data").toLocal8Bit());
    qputenv("XDG_CACHE_HOME", QDir(home).filePath("cache").toLocal8Bit());
    qputenv("CI", "1");  // no first-start welcome
    useOffscreenLaptopScreen(home);

    TracingApplication app(argc, argv);
    QApplication::setApplicationName("Parrotscope");
    QApplication::setOrganizationName("Parrotscope");
    configureThreads(o.threads);

    const QString loadBefore = loadAverage();
    LatencyProbe probe;
    app.traceMs = o.traceMs;
    app.probe = &probe;
    bool failed = false;
    const auto check = [&failed](bool ok, const QString& what) {
        if (!ok) {
            QTextStream(stderr) << "bench_gui_latency: " << what << "\n";
            failed = true;
        }
        return ok;
    };

    // Start-up: the window shown, the Explore tab's two bundled models loaded and drawn.
    // (Building the window is one piece of work before its event loop runs, as in any Qt
    // program: the probe starts after it, and counts the first show.)
    MainWindow w;
    w.settings()->selectPreset(defaultPresetName());
    w.docks()->showTab(Tab::Explore);
    probe.setPhase("start");
    probe.start();
    w.show();
    check(waitUntil([&] { return !w.busyLoading(); }, 60000), "the Explore tab's models did not load within 60 s");
    settle(500);

    // Training the default experiment, shrunk to a few steps, with its periodic evaluations.
    probe.setPhase("train");
    {
        ExperimentConfig c = w.settings()->config();
        c.train.steps = o.steps;
        c.train.warmupSteps = std::max(1, o.steps / 6);
        c.train.evalEvery = std::max(1, o.steps / 3);
        c.train.checkpointEvery = std::max(1, o.steps / 2);
        w.settings()->setConfig(c);
        w.docks()->showTab(Tab::Train);
        check(runUntilSignal([&] { w.train()->trainFresh(); }, w.train(), &TrainController::trainingFinished, 600000), "training did not finish within 10 minutes");
        settle(500);
    }

    // An evaluation of the trained model at the Train tab's lengths.
    probe.setPhase("evaluate");
    check(runUntilSignal([&] { w.train()->startEvaluation(); }, w.train(), &TrainController::evaluationFinished, 600000), "the evaluation did not finish");
    settle(500);

    // Opening the biggest bundled checkpoint (File → Open reads off the GUI thread).
    probe.setPhase("open checkpoint");
    {
        const QString path = QStringLiteral(PARROT_SOURCE_DIR) + "/resources/checkpoints/copy-hard-alibi.safetensors";
        bool opened = false;
        const QMetaObject::Connection c = QObject::connect(w.train(), &TrainController::checkpointOpened, &w, [&opened](bool ok) { opened = ok; });
        check(runUntilSignal([&] { w.train()->openCheckpointInBackground(path); }, w.train(), &TrainController::checkpointOpened, 120000) && opened,
              "could not open " + path);
        QObject::disconnect(c);
        settle(500);
    }

    // The Explore tab brought to the front and drawn, then a new input typed: both panes probe it
    // and redraw.
    probe.setPhase("explore");
    {
        w.docks()->showTab(Tab::Explore);
        settle(1000);
        ExplorerPanel* e = w.explorer();
        int refreshed = 0;
        const auto count = [&refreshed] { ++refreshed; };
        const QMetaObject::Connection l = QObject::connect(e->left(), &InsidePane::refreshed, e, count);
        const QMetaObject::Connection r = QObject::connect(e->right(), &InsidePane::refreshed, e, count);
        e->setInputText("qwertyuiopasdfghjklz");
        check(waitUntil([&] { return refreshed >= 2 && !w.busyLoading(); }, 60000), "the Explore tab did not redraw within 60 s");
        QObject::disconnect(l);
        QObject::disconnect(r);
        settle(1000);
    }

    // The causal tests: the lookup heads switched off in the pane (it probes again), each head's
    // importance and the Mamba's state sweep in their dialogs, each run to the end.
    probe.setPhase("causal");
    {
        ExplorerPanel* e = w.explorer();
        InsidePane* pane = e->left();
        const InsideView view = pane->shown();
        for (size_t i = 0; i < view.maps.size(); ++i)
            if (view.highlighted[i]) pane->setHeadOff(view.blocks[i], view.heads[i], true);
        check(waitUntil([&] { return !pane->busy(); }, 60000), "the pane with its heads off did not redraw within 60 s");
        pane->resetHeads();
        check(waitUntil([&] { return !pane->busy(); }, 60000), "the pane did not redraw within 60 s");
        if (HeadImportanceDialog* d = pane->openHeadImportance()) {
            d->show();
            check(runUntilSignal([&] { d->run(); }, d, &CausalDialog::measured, 300000), "head importance did not finish");
            d->close();
        }
        if (StateSweepDialog* d = e->right()->openStateSweep()) {
            d->show();
            check(runUntilSignal([&] { d->run(); }, d, &CausalDialog::measured, 300000), "the state sweep did not finish");
            d->close();
        }
        settle(500);
    }

    // A bundled sweep from the Experiments tab, shrunk to a few steps per run (as tst_gui runs it).
    probe.setPhase("sweep");
    {
        // the tab, the sweep and Run are three clicks: the event loop runs between them
        w.docks()->showTab(Tab::Experiments);
        settle(300);
        ExperimentsPanel* p = w.experiments();
        p->setExecutable(o.app);
        p->setExtraOverrides({"train.steps=4", "train.warmup_steps=1", "train.eval_every=2", "train.eval_samples=4",
                              "task.eval_samples=4", "model.d_model=32", "model.heads=4", "model.num_masked_heads=2"});
        check(p->selectPreset("length-generalisation"), "no bundled sweep length-generalisation");
        settle(300);
        check(runUntilSignal([&] { check(p->run(), "the sweep did not start"); }, p, &ExperimentsPanel::sweepFinished, 900000),
              "the sweep did not finish within 15 minutes");
        settle(1000);
    }

    // The whole Explore tab exported as one figure, as PNG (File → Export the whole tab).
    probe.setPhase("explore");  // the switch back is the Explore tab's
    w.docks()->showTab(Tab::Explore);
    settle(500);
    probe.setPhase("export tab");
    {
        ExportDialog* d = w.figureActions()->exportFigure(nullptr, true);
        if (check(d != nullptr, "File → Export offered no figure on the Explore tab")) {
            settle(300);
            for (const char* ext : {"png", "pdf"}) {
                d->setPath(QDir(home).filePath(QString("explore.%1").arg(ext)));
                QString error;
                QString failure;
                const auto c = QObject::connect(d, &ExportDialog::failed, [&failure](const QString& m) { failure = m; });
                check(d->exportNow(&error), QString("the export failed: %1").arg(error));
                while (d->isWriting()) settle(20);  // the file is written off the GUI thread
                QObject::disconnect(c);
                check(failure.isEmpty(), QString("the export failed: %1").arg(failure));
                settle(300);
            }
            d->close();
        }
        settle(300);
    }
    probe.stop();

    // The table, and each stall over the goal with when it happened, to find its cause.
    out() << QString("GUI thread stalls (a %1 ms timer's lateness), %2 threads, %3 training steps; load average %4 before, %5 after\n")
                 .arg(LatencyProbe::kIntervalMs).arg(diagnostics().threads).arg(o.steps).arg(loadBefore, loadAverage());
    out() << QString("%1 %2 %3 %4 %5 %6\n").arg("phase", -16).arg("ticks", 7).arg("longest ms", 11).arg("(at s)", 7).arg("p99 ms", 8).arg("over 50 ms", 11);
    const std::vector<LatencyProbe::Stats> all = probe.stats();
    for (const LatencyProbe::Stats& s : all)
        out() << QString("%1 %2 %3 %4 %5 %6\n")
                     .arg(s.phase, -16)
                     .arg(s.ticks, 7)
                     .arg(s.longestMs, 11, 'f', 1)
                     .arg(s.longestAtS, 7, 'f', 2)
                     .arg(s.p99Ms, 8, 'f', 1)
                     .arg(int(s.longStalls.size()), 11);
    for (const LatencyProbe::Stats& s : all) {
        if (s.longStalls.empty()) continue;
        QStringList at;
        for (const LatencyProbe::LongStall& l : s.longStalls)
            at << QString("%1 ms at %2 s%3").arg(l.ms, 0, 'f', 0).arg(l.atS, 0, 'f', 2)
                      .arg(l.cpuMs >= 0 ? QString(" (GUI thread on a core %1 ms)").arg(l.cpuMs, 0, 'f', 0) : QString());
        out() << "  over 50 ms in " << s.phase << ": " << at.join(", ") << "\n";
    }
    const auto worst = std::max_element(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.longestMs < b.longestMs; });
    if (worst != all.end())
        out() << QString("worst: %1, longest stall %2 ms (p99 %3 ms); goal: none over %4 ms\n")
                     .arg(worst->phase)
                     .arg(worst->longestMs, 0, 'f', 1)
                     .arg(worst->p99Ms, 0, 'f', 1)
                     .arg(LatencyProbe::kLongStallMs, 0, 'f', 0);
    out().flush();
    return failed ? 1 : 0;
}
