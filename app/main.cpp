// parrotscope: the window by default; headless subcommands when asked (presets, models, tasks,
// sample, config, train, eval, sweep, inspect, info, runs, compare, export; app/cli.cpp, whose
// usage text is `--help`), and --version / --diagnostics, without touching the display.
#include "cli.h"
#include "diagnostics.h"
#include "error.h"
#include "settingspanel.h"
#include "experiments/sweep.h"
#include "experimentspanel.h"
#include "inspectorpanel.h"
#include "mainwindow.h"
#include "presets.h"
#include "version.h"

#include <QApplication>
#include <QIcon>
#include <QSettings>
#include <QTextStream>
#include <QElapsedTimer>
#include <QTimer>

#include <cstdlib>

#include <unistd.h>

namespace {

int runGui(int argc, char** argv, const QStringList& args)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName("Parrotscope");
    QApplication::setOrganizationName("Parrotscope");
    QApplication::setApplicationVersion(parrot::appVersion());
    QApplication::setDesktopFileName("io.github.parrotscope.Parrotscope");  // matches the installed .desktop entry
    QApplication::setWindowIcon(QIcon(":/icons/io.github.parrotscope.Parrotscope.svg"));

    QString preset, screenshot, checkpoint, error;
    QStringList sets;
    int threads = QSettings().value("threads", 0).toInt();
    long long screenshotStep = -1;
    bool train = false, runSweep = false, resultsTable = false;
    QString experiment, sweepDir, tab, inspectFile, layout;
    QString theme = QSettings().value("theme", "system").toString();
    bool restore = true;
    for (qsizetype i = 1; i < args.size(); ++i) {
        const QString& a = args[i];
        auto next = [&]() -> QString {
            if (i + 1 >= args.size()) { error = a + ": expects a value"; return {}; }
            return args[++i];
        };
        if (a == "--preset") preset = next();
        else if (a == "--set") sets << next();
        else if (a == "--screenshot") screenshot = next();
        else if (a == "--threads") {
            bool ok = false;
            threads = next().toInt(&ok);
            if (!ok || threads < 0) error = "--threads: expected a non-negative integer";
        } else if (a == "--train") train = true;
        else if (a == "--experiment") experiment = next();
        else if (a == "--sweep-dir") sweepDir = next();
        else if (a == "--run-sweep") runSweep = true;
        else if (a == "--results-table") resultsTable = true;
        else if (a == "--tab") tab = next();
        else if (a == "--inspect") inspectFile = next();
        else if (a == "--theme") theme = next();
        else if (a == "--layout") layout = next();
        else if (a == "--fresh-layout") restore = false;
        else if (a == "--screenshot-at-step") {
            bool ok = false;
            screenshotStep = next().toLongLong(&ok);
            if (!ok || screenshotStep < 0) error = "--screenshot-at-step: expected a step number";
        } else if (!a.startsWith("--") && checkpoint.isEmpty()) checkpoint = a;
        else error = QString("unexpected argument '%1' (see parrotscope --help)").arg(a);
        if (!error.isEmpty()) break;
    }
    if (error.isEmpty() && !preset.isEmpty() && !parrot::presetNames().contains(preset))
        error = QString("unknown preset '%1' (available: %2)").arg(preset, parrot::presetNames().join(", "));
    if (error.isEmpty() && !experiment.isEmpty() && !parrot::sweepPresetNames().contains(experiment))
        error = QString("unknown sweep preset '%1' (bundled: %2)").arg(experiment, parrot::sweepPresetNames().join(", "));
    if (error.isEmpty() && (!sweepDir.isEmpty() || runSweep || resultsTable) && experiment.isEmpty())
        error = "--sweep-dir, --run-sweep and --results-table need --experiment NAME";
    if (error.isEmpty() && !tab.isEmpty() && tab != "train" && tab != "experiments" && tab != "explore" && tab != "inspect")
        error = QString("--tab: expected train, experiments, explore or inspect, not '%1'").arg(tab);
    if (error.isEmpty() && theme != "system" && theme != "light" && theme != "dark")
        error = QString("--theme: expected system, light or dark, not '%1'").arg(theme);
    if (!error.isEmpty()) {
        QTextStream(stderr) << "parrotscope: error: " << error << "\n";
        return 1;
    }
    parrot::ExperimentConfig config;
    if (error.isEmpty()) {
        try {
            config = parrot::loadPreset(preset.isEmpty() ? parrot::defaultPresetName() : preset);
            parrot::applyOverrides(config, sets);
        } catch (const parrot::Error& e) {
            error = e.message();
        }
    }
    if (!error.isEmpty()) {
        QTextStream(stderr) << "parrotscope: error: " << error << "\n";
        return 1;
    }
    parrot::configureThreads(threads);

    parrot::MainWindow::applyTheme(theme);
    parrot::MainWindow window;
    // the window and layout of the last session (not for screenshots: those show the default layout)
    const bool restored = restore && screenshot.isEmpty() && window.restoreSession();
    if (!layout.isEmpty() && !window.restoreLayout(layout)) {
        QTextStream(stderr) << "parrotscope: error: no saved layout '" << layout << "' (saved: " << window.savedLayouts().join(", ") << ")\n";
        return 1;
    }
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
    // (a restored session keeps the tab it had in front)
    if (tab.isEmpty() && preset.isEmpty() && checkpoint.isEmpty() && !train && experiment.isEmpty() && screenshotStep < 0 && !restored)
        tab = "explore";
    if (tab == "explore") window.showExplorer();
    else if (tab == "experiments") window.showExperiments();
    else if (tab == "train") window.showTrain();
    else if (tab == "inspect") window.showInspector();
    window.show();
    if (!screenshot.isEmpty()) {
        if (screenshotStep >= 0) {
            window.screenshotAtStep(screenshotStep, screenshot);
            QTimer::singleShot(0, &window, &parrot::MainWindow::startTraining);
        } else {
            // once what the window is loading in the background (the explorer's models) is shown
            auto* poll = new QTimer(&window);
            auto* waited = new QElapsedTimer;
            waited->start();
            QObject::connect(poll, &QTimer::timeout, &window, [&window, poll, waited, screenshot] {
                if (window.busyLoading() && waited->elapsed() < 20000) return;
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
    } else if (!QSettings().value("welcomed", false).toBool() && qEnvironmentVariableIsEmpty("CI")) {
        QTimer::singleShot(0, &window, &parrot::MainWindow::showWelcome);  // the first start only
    }
    return app.exec();
}

}  // namespace

int main(int argc, char** argv)
{
    parrot::restartWithLibrarySettings(argv);  // OpenMP and OpenBLAS read theirs when they load
    QStringList args;
    for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
    const QString command = parrot::commandOf(args);
    if (command == "compare" || command == "export" || (command == "inspect" && args.contains("--figure"))) {  // draws figures: widgets, but never a window
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
        QApplication app(argc, argv);
        return parrot::runCli(args);
    }
    if (parrot::isHeadless(args)) {
        QCoreApplication app(argc, argv);
        return parrot::runCli(args);
    }
    return runGui(argc, argv, args);
}
