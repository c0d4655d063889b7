// The Parrotscope window: a shell that holds the parts and wires them together. The docks and
// their layouts (DockLayout), the Train tab's controller (TrainController), the figure actions
// (FigureActions), the panels of the other tabs, the menus, the log and the status bar. Long work
// runs on worker threads and reports by queued signals; the window never waits on it except when
// closing.
#pragma once

#include "ui/panels/traincontroller.h"
#include "ui/window/docklayout.h"
#include "ui/window/figureactions.h"

#include <QMainWindow>

class QAction;
class QDialog;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QPushButton;

namespace parrot {

class BackgroundJob;
class ExperimentsPanel;
class ExplorerPanel;
class InspectorPanel;
class PretrainedPanel;
class RecoveryBar;
class RunBrowser;
class SettingsPanel;
class TrainPanel;

// Every widget's geometry and visibility under `top`, as bytes: two equal signatures taken apart
// in time mean nothing moved between them (a layout has settled; screenshots and tests wait for it).
QByteArray layoutSignature(const QWidget& top);

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The window's parts.
    DockLayout* docks() const { return m_docks; }
    TrainController* train() const { return m_train; }
    FigureActions* figureActions() const { return m_figures; }
    SettingsPanel* settings() const { return m_settings; }
    TrainPanel* trainPanel() const { return m_trainPanel; }
    ExperimentsPanel* experiments() const { return m_experiments; }
    ExplorerPanel* explorer() const { return m_explorer; }
    InspectorPanel* inspector() const { return m_inspector; }
    PretrainedPanel* pretrained() const { return m_pretrained; }
    RunBrowser* runBrowser() const { return m_runs; }
    // A run cut short by a crash, a kill or a power cut: one line under the menu offers to continue it.
    RecoveryBar* recoveryBar() const { return m_recoveryBar; }

    QString runsFolder() const;
    // Looks (off the GUI thread) for runs under the runs folder that a crash or a kill cut short
    // (interruptedRuns) and offers the newest in recoveryBar(); at start-up and when the folder changes.
    void findInterruptedRuns();
    bool saveScreenshot(const QString& path);
    // Takes a screenshot at training step `step` (or when training ends first), then closes.
    void screenshotAtStep(long long step, const QString& path);
    // The first-run welcome (non-blocking; also Help → Welcome).
    QDialog* showWelcome();
    QDialog* showPreferences();  // Edit → Preferences (window-modal, non-blocking; applied on OK)
    // Whether a view is still loading in the background: the explorer's models and probes, the
    // inspector reading a file, the Pretrained tab, the run browser reading the runs folder.
    bool busyLoading() const;

signals:
    void errorShown(const QString& text);

protected:
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;

private:
    void buildDocks();
    void buildStatusBar();
    void buildRecovery();
    void buildMenus();
    void buildFileMenu();
    void buildRunMenu();
    void connectTabs();
    void connectTrain();
    void showError(const QString& text);
    void log(const QString& text);
    void updateActions();
    void updateStatus();
    void updateJobStatus();
    void fillRecentMenu();
    void showAbout();
    void onProgress(const TrainProgress& p);
    void onTrainingFinished(const TrainOutcome& o);

    DockLayout* m_docks;
    FigureActions* m_figures;
    SettingsPanel* m_settings;
    TrainPanel* m_trainPanel;
    TrainController* m_train;
    ExperimentsPanel* m_experiments;
    ExplorerPanel* m_explorer;
    InspectorPanel* m_inspector;
    PretrainedPanel* m_pretrained;
    RunBrowser* m_runs;
    QPlainTextEdit* m_log;
    RecoveryBar* m_recoveryBar = nullptr;
    BackgroundJob* m_recoveryScan = nullptr;
    QPushButton* m_logLine = nullptr;
    QLabel* m_statusJob = nullptr;
    QLabel* m_statusDevice = nullptr;
    QMenu* m_recentMenu = nullptr;
    QAction *m_saveAction = nullptr, *m_openAction = nullptr, *m_trainAction = nullptr, *m_stopAction = nullptr;
    long long m_screenshotStep = -1;
    QString m_screenshotPath;
};

}  // namespace parrot
