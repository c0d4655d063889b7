// parrotscope: the window when no command is given, else one of the headless commands, or
// --version / --diagnostics / --help. The commands, the window among them, are the entries of
// the command table (app/commands.cpp), which main() dispatches through and `--help` is written
// from; this file holds the window's entry.
#include "ui/common/appsettings.h"
#include "args.h"
#include "cli.h"
#include "commands.h"
#include "core/device.h"
#include "core/diagnostics.h"
#include "base/weightdtype.h"
#include "base/error.h"
#include "ui/panels/settingspanel.h"
#include "base/experiments/sweep.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/explorerpanel.h"
#include "ui/panels/insidepane.h"
#include "ui/panels/inspectorpanel.h"
#include "ui/jobs/latencyprobe.h"
#include "ui/window/mainwindow.h"
#include "ui/window/theme.h"
#include "ui/panels/pretrainedpanel.h"
#include "base/presets.h"
#include "base/version.h"

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

int runWindow(Args& a)
{
    QApplication::setApplicationName("Parrotscope");
    QApplication::setOrganizationName("Parrotscope");
    QApplication::setApplicationVersion(appVersion());
    QApplication::setDesktopFileName("io.github.parrotscope.Parrotscope");  // matches the installed .desktop entry
    QApplication::setWindowIcon(QIcon(":/icons/io.github.parrotscope.Parrotscope.svg"));

    const AppSettings saved = AppSettings::load();
    const int threads = a.integer("--threads", saved.threads);
    const QString device = a.value("--device");
    const QString dtype = a.value("--dtype");
    const QString preset = a.value("--preset");
    const QStringList sets = a.values("--set");
    const QString screenshot = a.value("--screenshot");
    const bool train = a.flag("--train");
    const QString experiment = a.value("--experiment");
    const QString sweepDir = a.value("--sweep-dir");
    const bool runSweep = a.flag("--run-sweep");
    const bool resultsTable = a.flag("--results-table");
    QString tab = a.value("--tab");
    const QString inspectFile = a.value("--inspect");
    const QStringList pretrainedFolders = a.values("--pretrained");
    QString theme = a.value("--theme");
    if (theme.isNull()) theme = saved.theme;
    const QString layout = a.value("--layout");
    const bool restore = !a.flag("--fresh-layout");
    const QString stepText = a.value("--screenshot-at-step");
    const bool measureLatency = LatencyProbe::latencyRequested(a.flag("--measure-latency"));
    const QString checkpoint = a.positional();
    a.done();
    long long screenshotStep = -1;
    if (!stepText.isNull()) {
        bool ok = false;
        screenshotStep = stepText.toLongLong(&ok);
        if (!ok || screenshotStep < 0) throw Error("--screenshot-at-step: expected a step number");
    }
    // a word that is neither a command nor a file is most likely a mistyped command
    if (!checkpoint.isEmpty() && !QFileInfo::exists(checkpoint))
        throw Error(QString("%1: no such command or file (see parrotscope --help)").arg(checkpoint));
    if (!preset.isEmpty() && !presetNames().contains(preset))
        throw Error(QString("unknown preset '%1' (available: %2)").arg(preset, presetNames().join(", ")));
    if (!experiment.isEmpty() && !sweepPresetNames().contains(experiment))
        throw Error(QString("unknown sweep preset '%1' (bundled: %2)").arg(experiment, sweepPresetNames().join(", ")));
    if ((!sweepDir.isEmpty() || runSweep || resultsTable) && experiment.isEmpty())
        throw Error("--sweep-dir, --run-sweep and --results-table need --experiment NAME");
    // the tabs --tab names, each with what brings it to the front
    const std::vector<std::pair<QString, void (MainWindow::*)()>> tabs{{"train", &MainWindow::showTrain},
                                                                       {"experiments", &MainWindow::showExperiments},
                                                                       {"explore", &MainWindow::showExplorer},
                                                                       {"inspect", &MainWindow::showInspector},
                                                                       {"pretrained", &MainWindow::showPretrained}};
    QStringList tabNames;
    for (const auto& t : tabs) tabNames << t.first;
    if (!tab.isEmpty() && !tabNames.contains(tab))
        throw Error(QString("--tab: expected %1 or %2, not '%3'").arg(tabNames.mid(0, tabNames.size() - 1).join(", "), tabNames.last(), tab));
    if (theme != "system" && theme != "light" && theme != "dark")
        throw Error(QString("--theme: expected system, light or dark, not '%1'").arg(theme));
    ExperimentConfig config = loadPreset(preset.isEmpty() ? defaultPresetName() : preset);
    applyOverrides(config, sets);
    configureThreads(threads);
    if (!device.isNull()) {
        setDeviceChoice(device);  // asked for on the command line: refused with its reason
    } else {
        // the one saved in Preferences, unless this machine cannot give it (another GPU count, a CPU-only build)
        const QString problem = deviceProblem(saved.device);
        if (problem.isEmpty()) setDeviceChoice(saved.device);
        else QTextStream(stderr) << "parrotscope: the device set in Preferences cannot be used here, using auto: " << problem << "\n";
    }

    setWeightDtypeChoice(weightDtypeFromName(dtype.isNull() ? saved.weightDtype : dtype));
    applyTheme(theme);
    MainWindow window;
    // the window and layout of the last session (not for screenshots: those show the default layout)
    const bool restored = restore && screenshot.isEmpty() && window.restoreSession();
    if (!layout.isEmpty() && !window.restoreLayout(layout))
        throw Error(QString("no saved layout '%1' (saved: %2)").arg(layout, window.savedLayouts().join(", ")));
    window.loadPreset(config.name);
    if (!sets.isEmpty()) window.settings()->setConfig(config);
    if (!checkpoint.isEmpty()) window.openCheckpoint(checkpoint);
    if (!experiment.isEmpty()) {
        window.showExperiments();
        window.experiments()->selectPreset(experiment);
        if (!sweepDir.isEmpty()) window.experiments()->setOutDir(sweepDir);
        window.experiments()->showResultsTable(resultsTable);
        if (runSweep) QTimer::singleShot(0, window.experiments(), &parrot::ExperimentsPanel::run);
    }
    // Opened plainly, the window shows the bundled models inside (the Explore tab); asked for a
    // preset, a checkpoint, training or an experiment, the tab that shows it.
    if (!inspectFile.isEmpty()) {
        tab = "inspect";
        window.inspector()->openFile(inspectFile);
    }
    for (const QString& folder : pretrainedFolders) {  // loaded one after the other, off the GUI thread
        if (tab.isEmpty()) tab = "pretrained";
        window.pretrained()->addFolder(folder);
    }
    if (tab == "explore" && !pretrainedFolders.isEmpty()) {
        // the Explore tab on them: the first beside one of the other architecture, once all are loaded
        auto* pretrained = window.pretrained();
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
    // (a restored session keeps the tab it had in front)
    if (tab.isEmpty() && preset.isEmpty() && checkpoint.isEmpty() && !train && experiment.isEmpty() && screenshotStep < 0 && !restored)
        tab = "explore";
    // the Explore tab on a checkpoint given: its left pane looks inside it (the right keeps its model)
    if (tab == "explore" && !checkpoint.isEmpty()) window.explorer()->left()->chooseCheckpoint(checkpoint);
    for (const auto& [name, show] : tabs)
        if (tab == name) (window.*show)();
    // Started before the first show, so that the show itself counts; there is no timer at all without it.
    std::unique_ptr<LatencyProbe> probe;
    if (measureLatency) {
        probe = std::make_unique<LatencyProbe>();
        probe->start();
    }
    window.show();
    if (!screenshot.isEmpty()) {
        if (screenshotStep >= 0) {
            window.screenshotAtStep(screenshotStep, screenshot);
            QTimer::singleShot(0, &window, &parrot::MainWindow::trainFresh);  // nobody is there to answer a question
        } else {
            // once what the window is loading in the background (the explorer's models) is shown
            // and its layout has settled: nothing moved since the last look
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
    } else if (train) {
        QTimer::singleShot(0, &window, &parrot::MainWindow::startTraining);
    } else if (!saved.welcomed && qEnvironmentVariableIsEmpty("CI")) {
        QTimer::singleShot(0, &window, &parrot::MainWindow::showWelcome);  // the first start only
    }
    const int code = QApplication::exec();
    if (probe) QTextStream(stderr) << "parrotscope: " << probe->summary() << "\n";
    return code;
}

}  // namespace parrot

int main(int argc, char** argv)
{
    parrot::restartWithLibrarySettings(argv);  // OpenMP and OpenBLAS read theirs when they load
    QStringList args;
    for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
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
