// parrotscope: the window when no command is given, else one of the headless commands, or
// --version / --diagnostics / --help. The commands, the window among them, are the entries of
// the command table (app/commands.cpp), which main() dispatches through and `--help` is written
// from; this file holds the window's entry.
#include "base/error.h"
#include "base/experiments/sweep.h"
#include "base/presets.h"
#include "base/version.h"
#include "base/weightdtype.h"
#include "core/device.h"
#include "core/diagnostics.h"
#include "ui/common/appsettings.h"
#include "ui/jobs/latencyprobe.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/explorerpanel.h"
#include "ui/panels/insidepane.h"
#include "ui/panels/inspectorpanel.h"
#include "ui/panels/pretrainedpanel.h"
#include "ui/panels/settingspanel.h"
#include "ui/window/mainwindow.h"
#include "ui/window/theme.h"
#include "args.h"
#include "cli.h"
#include "commands.h"

#include <QApplication>

#include <cstdio>
#include <QFileInfo>
#include <QIcon>
#include <QTextStream>
#include <QElapsedTimer>
#include <QTimer>

#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include <unistd.h>

namespace parrot {

namespace {

// The window's command line, read and checked.
struct WindowRequest {
    int threads = 0;
    QString device, dtype, preset;
    QStringList sets;
    QString screenshot;
    long long screenshotStep = -1;  // --screenshot-at-step; -1: a still window
    bool train = false;
    QString experiment, sweepDir;
    bool runSweep = false, resultsTable = false;
    QString tab, inspectFile;
    QStringList pretrainedFolders;
    QString theme, layout;
    bool restore = true;  // the last session's window and layout
    bool measureLatency = false;
    QString checkpoint;
};

WindowRequest readWindow(Args& a, const AppSettings& saved)
{
    WindowRequest r;
    r.threads = a.integer("--threads", saved.threads);
    r.device = a.value("--device");
    r.dtype = a.value("--dtype");
    r.preset = a.value("--preset");
    r.sets = a.values("--set");
    r.screenshot = a.value("--screenshot");
    r.train = a.flag("--train");
    r.experiment = a.value("--experiment");
    r.sweepDir = a.value("--sweep-dir");
    r.runSweep = a.flag("--run-sweep");
    r.resultsTable = a.flag("--results-table");
    r.tab = a.value("--tab");
    r.inspectFile = a.value("--inspect");
    r.pretrainedFolders = a.values("--pretrained");
    r.theme = a.value("--theme");
    if (r.theme.isNull()) r.theme = saved.theme;
    r.layout = a.value("--layout");
    r.restore = !a.flag("--fresh-layout");
    const QString stepText = a.value("--screenshot-at-step");
    r.measureLatency = LatencyProbe::latencyRequested(a.flag("--measure-latency"));
    r.checkpoint = a.positional();
    a.done();
    if (!stepText.isNull()) {
        bool ok = false;
        r.screenshotStep = stepText.toLongLong(&ok);
        if (!ok || r.screenshotStep < 0) throw Error("--screenshot-at-step: expected a step number");
    }
    return r;
}

void checkWindow(const WindowRequest& r)
{
    // a word that is neither a command nor a file is most likely a mistyped command
    if (!r.checkpoint.isEmpty() && !QFileInfo::exists(r.checkpoint))
        throw Error(QString("%1: no such command or file (see parrotscope --help)").arg(r.checkpoint));
    if (!r.preset.isEmpty() && !presetNames().contains(r.preset))
        throw Error(QString("unknown preset '%1' (available: %2)").arg(r.preset, presetNames().join(", ")));
    if (!r.experiment.isEmpty() && !sweepPresetNames().contains(r.experiment))
        throw Error(QString("unknown sweep preset '%1' (bundled: %2)").arg(r.experiment, sweepPresetNames().join(", ")));
    if ((!r.sweepDir.isEmpty() || r.runSweep || r.resultsTable) && r.experiment.isEmpty())
        throw Error("--sweep-dir, --run-sweep and --results-table need --experiment NAME");
    QStringList tabNames;
    for (const auto& t : kTabNames) tabNames << t.second;
    if (!r.tab.isEmpty() && !tabNames.contains(r.tab))
        throw Error(QString("--tab: expected %1 or %2, not '%3'").arg(tabNames.mid(0, tabNames.size() - 1).join(", "), tabNames.last(), r.tab));
    if (r.theme != "system" && r.theme != "light" && r.theme != "dark")
        throw Error(QString("--theme: expected system, light or dark, not '%1'").arg(r.theme));
}

// Threads, device, weight type and theme: the command line's, else those saved in Preferences.
void applySettings(const WindowRequest& r, const AppSettings& saved)
{
    configureThreads(r.threads);
    if (!r.device.isNull()) {
        setDeviceChoice(r.device);  // asked for on the command line: refused with its reason
    } else {
        // the one saved in Preferences, unless this machine cannot give it (another GPU count, a CPU-only build)
        const QString problem = deviceProblem(saved.device);
        if (problem.isEmpty()) setDeviceChoice(saved.device);
        else QTextStream(stderr) << "parrotscope: the device set in Preferences cannot be used here, using auto: " << problem << "\n";
    }
    setWeightDtypeChoice(weightDtypeFromName(r.dtype.isNull() ? saved.weightDtype : r.dtype));
    applyTheme(r.theme);
}

// With --pretrained and --tab explore: the Explore tab on them, the first beside one of the other
// architecture, once all are loaded.
void lookInsidePretrainedWhenLoaded(PretrainedPanel* pretrained)
{
    auto done = std::make_shared<bool>(false);
    const auto check = [pretrained, done] {
        QTimer::singleShot(0, pretrained, [pretrained, done] {  // after the panel has queued its next folder
            if (*done || pretrained->busy() || pretrained->modelCount() == 0) return;
            *done = true;
            pretrained->selectModel(0);
            pretrained->lookInsideSelected();
        });
    };
    QObject::connect(pretrained, &parrot::PretrainedPanel::modelsChanged, pretrained, check);
    QObject::connect(pretrained, &parrot::PretrainedPanel::failed, pretrained, check);
}

// Opens what the command line names (its experiment, checkpoint, sweep, files, folders) and brings
// the tab that shows it to the front. `restored`: the window has the last session's tab.
void openRequested(MainWindow& window, WindowRequest r, const ExperimentConfig& config, bool restored)
{
    window.settings()->selectPreset(config.name);
    if (!r.sets.isEmpty()) window.settings()->setConfig(config);
    if (!r.checkpoint.isEmpty()) window.train()->openCheckpoint(r.checkpoint);
    if (!r.experiment.isEmpty()) {
        window.docks()->showTab(Tab::Experiments);
        window.experiments()->selectPreset(r.experiment);
        if (!r.sweepDir.isEmpty()) {
            // a thorough or paper-scale folder is opened as what it is (the Thorough and Scale boxes follow it)
            std::optional<SweepPlan> index;
            try {
                index = readSweepIndex(r.sweepDir);
            } catch (const Error&) {  // the tab says what is wrong with it
            }
            if (index && (index->thorough || !index->scale.isEmpty())) window.experiments()->openSweepFolder(r.sweepDir);
            else window.experiments()->setOutDir(r.sweepDir);
        }
        window.experiments()->showResultsTable(r.resultsTable);
        if (r.runSweep) QTimer::singleShot(0, window.experiments(), &parrot::ExperimentsPanel::run);
    }
    // Opened plainly, the window shows the bundled models inside (the Explore tab); asked for a
    // preset, a checkpoint, training or an experiment, the tab that shows it.
    if (!r.inspectFile.isEmpty()) {
        r.tab = "inspect";
        window.inspector()->openFile(r.inspectFile);
    }
    for (const QString& folder : r.pretrainedFolders) {  // loaded one after the other, off the GUI thread
        if (r.tab.isEmpty()) r.tab = "pretrained";
        window.pretrained()->addFolder(folder);
    }
    if (r.tab == "explore" && !r.pretrainedFolders.isEmpty()) lookInsidePretrainedWhenLoaded(window.pretrained());
    // (a restored session keeps the tab it had in front)
    if (r.tab.isEmpty() && r.preset.isEmpty() && r.checkpoint.isEmpty() && !r.train && r.experiment.isEmpty() && r.screenshotStep < 0 && !restored)
        r.tab = "explore";
    // the Explore tab on a checkpoint given: its left pane looks inside it (the right keeps its model)
    if (r.tab == "explore" && !r.checkpoint.isEmpty()) window.explorer()->left()->chooseCheckpoint(r.checkpoint);
    for (const auto& [shown, name] : kTabNames)
        if (r.tab == name) window.docks()->showTab(shown);
}

// --screenshot FILE without a step: saved once what the window is loading in the background (the
// explorer's models) is shown and its layout has settled (nothing moved since the last look), or
// after 20 s; then the application exits.
void screenshotWhenSettled(MainWindow& window, const QString& screenshot)
{
    auto* poll = new QTimer(&window);
    auto* waited = new QElapsedTimer;
    waited->start();
    auto layout = std::make_shared<QByteArray>();
    QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, waited, screenshot, layout] {
        const QByteArray now = parrot::layoutSignature(window);
        const bool moved = now != *layout;
        *layout = now;
        if ((window.busyLoading() || moved) && waited->elapsed() < 20000) return;
        poll->stop();
        delete waited;
        const bool ok = window.saveScreenshot(screenshot);
        if (!ok) QTextStream(stderr) << "parrotscope: error: cannot write " << screenshot << "\n";
        QApplication::exit(ok ? 0 : 1);
    });
    poll->start(300);
}

// What the shown window does first: a screenshot, training, or the first start's welcome.
void startShown(MainWindow& window, const WindowRequest& r, const AppSettings& saved)
{
    if (!r.screenshot.isEmpty()) {
        if (r.screenshotStep >= 0) {
            window.screenshotAtStep(r.screenshotStep, r.screenshot);
            QTimer::singleShot(0, window.train(), &parrot::TrainController::trainFresh);  // nobody is there to answer a question
        } else {
            screenshotWhenSettled(window, r.screenshot);
        }
    } else if (r.train) {
        QTimer::singleShot(0, window.train(), &parrot::TrainController::startTraining);
    } else if (!saved.welcomed && qEnvironmentVariableIsEmpty("CI")) {
        QTimer::singleShot(0, &window, &parrot::MainWindow::showWelcome);  // the first start only
    }
}

}  // namespace

int runWindow(Args& a)
{
    QApplication::setApplicationName("Parrotscope");
    QApplication::setOrganizationName("Parrotscope");
    QApplication::setApplicationVersion(appVersion());
    QApplication::setDesktopFileName("io.github.parrotscope.Parrotscope");  // matches the installed .desktop entry
    QApplication::setWindowIcon(QIcon(":/icons/io.github.parrotscope.Parrotscope.svg"));

    const AppSettings saved = AppSettings::load();
    const WindowRequest r = readWindow(a, saved);
    checkWindow(r);
    ExperimentConfig config = loadPreset(r.preset.isEmpty() ? defaultPresetName() : r.preset);
    applyOverrides(config, r.sets);
    applySettings(r, saved);
    MainWindow window;
    // the window and layout of the last session (not for screenshots: those show the default layout)
    const bool restored = r.restore && r.screenshot.isEmpty() && window.docks()->restoreSession();
    if (!r.layout.isEmpty() && !window.docks()->restoreLayout(r.layout))
        throw Error(QString("no saved layout '%1' (saved: %2)").arg(r.layout, window.docks()->savedLayouts().join(", ")));
    openRequested(window, r, config, restored);
    // Started before the first show, so that the show itself counts; there is no timer at all without it.
    std::unique_ptr<LatencyProbe> probe;
    if (r.measureLatency) {
        probe = std::make_unique<LatencyProbe>();
        probe->start();
    }
    window.show();
    startShown(window, r, saved);
    const int code = QApplication::exec();
    if (probe) QTextStream(stderr) << "parrotscope: " << probe->summary() << "\n";
    return code;
}

}  // namespace parrot

int main(int argc, char** argv)
{
    QStringList args;
    for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
    // OpenMP reads its settings when it loads: a command that runs a model's math starts again
    // with them; the others only pass them on to the processes they start
    parrot::restartWithLibrarySettings(argv, parrot::runsModelMath(args));
    parrot::flushDenormals();  // before any thread starts: they inherit it
    if (const QString mistyped = parrot::mistypedCommand(args); !mistyped.isEmpty()) {
        std::fprintf(stderr, "parrotscope: error: %s\n", qPrintable(mistyped));
        return 2;
    }
    const parrot::Command& command = parrot::commandFor(args);
    const parrot::Widgets widgets = parrot::widgetsFor(command, args);
    if (widgets == parrot::Widgets::None) {
        QCoreApplication app(argc, argv);
        return parrot::runCommand(command, args);
    }
    // figures are drawn with widgets, but never shown
    if (widgets == parrot::Widgets::Figures && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    return parrot::runCommand(command, args);
}
