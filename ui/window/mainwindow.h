// The Parrotscope window: experiment settings, Train / Pause / Stop with live plots,
// evaluation at chosen lengths, checkpoints. Long work runs on worker threads and
// reports by queued signals; the window never waits on it except when closing.
#pragma once

#include "core/model.h"
#include "base/types.h"

#include <QMainWindow>
#include <QMargins>
#include <QPointer>

#include <functional>

class QCustomPlot;
class QAction;
class QDialog;
class QDockWidget;
class QLabel;
class QMenu;
class QMessageBox;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace parrot {

class AccuracyPlot;
class BackgroundJob;
class ExportDialog;
class ExperimentsPanel;
class ExplorerPanel;
class InspectorPanel;
class PretrainedPanel;
class RecoveryBar;
class LossPlot;
class RunBrowser;
class SettingsPanel;
class TrainPanel;
class TrainingSession;

// Every widget's geometry and visibility under `top`, as bytes: two equal signatures taken apart
// in time mean nothing moved between them (a layout has settled; screenshots and tests wait for it).
QByteArray layoutSignature(const QWidget& top);

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    bool loadPreset(const QString& name);
    bool openCheckpoint(const QString& path);  // errors go to the log and a message box
    // The same off the GUI thread (File → Open, recent files, the inspector): a busy progress bar,
    // Esc / Stop cancels (the current model is kept); `then` runs after a successful open, and
    // checkpointOpened reports how it ended.
    void openCheckpointInBackground(const QString& path, std::function<void()> then = {});
    bool isOpening() const;
    bool saveCheckpoint(const QString& path);
    bool saveScreenshot(const QString& path);
    // Train (F5): a fresh model with the form's settings, or, when the Train tab holds a model opened
    // from a checkpoint, a window-modal choice (trainChoiceBox()) between that and continuing it.
    void startTraining();
    void trainFresh();
    // Trains the opened model further under the form's settings (Model::continuedAs, train()):
    // train.steps more steps counted on from its step, a new run folder naming the checkpoint.
    void continueTraining();
    QMessageBox* trainChoiceBox() const;
    // Resumes a run folder where its last autosave left it (planResume): the Runs tab's Continue
    // training and the Train tab's Continue after Stop. A run that diverged asks for a lower
    // learning rate first. Errors go to a message box.
    void resumeRun(const QString& runDir);
    // Looks (off the GUI thread) for runs under the runs folder that a crash or a kill cut short
    // (interruptedRuns) and offers the newest in recoveryBar(); at start-up and when the folder changes.
    void findInterruptedRuns();
    RecoveryBar* recoveryBar() const { return m_recoveryBar; }
    void startEvaluation();
    // Takes a screenshot at training step `step` (or when training ends first), then closes.
    void screenshotAtStep(long long step, const QString& path);

    bool isTraining() const;
    bool isEvaluating() const;
    const Model& model() const;
    QString runsFolder() const;
    QString currentRunDir() const;
    // The Train tab's model, run and jobs (the workflow above, without widgets).
    TrainingSession* session() const { return m_session; }

    SettingsPanel* settings() const { return m_settings; }
    TrainPanel* trainPanel() const { return m_trainPanel; }
    LossPlot* lossPlot() const;
    AccuracyPlot* accuracyPlot() const;
    RunBrowser* runBrowser() const { return m_runs; }
    ExperimentsPanel* experiments() const { return m_experiments; }
    void showExperiments();  // the Experiments tab
    ExplorerPanel* explorer() const { return m_explorer; }
    InspectorPanel* inspector() const { return m_inspector; }
    void showExplorer();     // the Explore tab
    void showTrain();        // the Train tab
    void showInspector();    // the Inspect tab
    void showPretrained();   // the Pretrained tab
    PretrainedPanel* pretrained() const { return m_pretrained; }
    // The workspace tab (dock) in front, its panel and title ("Train", "Explore", …).
    QWidget* currentPanel() const;
    QString currentPanelName() const;
    // File → Export: the dialog for `plot` (nullptr: the current tab's first plot, or its whole
    // panel when `wholePanel`); nullptr when the tab shows no plot (an error is shown).
    ExportDialog* exportFigure(QCustomPlot* plot, bool wholePanel);
    ExportDialog* exportDialog() const;
    // Edit → Copy figure: the plot (nullptr: the one under the mouse, else the tab's first) as an image.
    bool copyFigure(QCustomPlot* plot);
    // Layouts: the docks' arrangement and the window geometry, saved under a name (QSettings
    // "layouts/NAME"), restored, or reset to the default; the session's own is saved on close and
    // restored by restoreSession() (the app calls it at start-up).
    void saveLayout(const QString& name);
    bool restoreLayout(const QString& name);
    QStringList savedLayouts() const;
    void resetLayout();
    bool restoreSession();  // false when there is none (or it was saved by another version)
    // The first-run welcome (non-blocking; also Help → Welcome): three one-click ways in, each one
    // sentence, as buttons named welcomeTrain, welcomeExplore and welcomeFinding.
    QDialog* showWelcome();
    QDialog* showPreferences();  // Edit → Preferences (window-modal, non-blocking; applied on OK)
    static constexpr int kLayoutVersion = 2;
    // The first start's geometry (the client area): `preferred`, shrunk to what `available` (a
    // screen's, less its panels) holds with the window's frame around it, and centred there.
    static QRect firstGeometry(const QRect& available, const QSize& preferred, const QMargins& frame);
    static constexpr QSize kPreferredSize{1920, 1200};  // the Explore tab's two heatmaps want the height
    // Room left for a window manager's frame before the window is shown and its frame is known:
    // a title bar up to 40 px, borders up to 8 px.
    static constexpr QMargins kFrameAllowance{8, 40, 8, 8};
    // A first window shorter than this (a 1366×768 or 1280×800 laptop) starts with the log folded
    // into its status-bar line, which opens it.
    static constexpr int kFoldLogBelow = 900;
    bool settingsFollowTab() const { return m_settingsFollowTab; }
    // Whether a view is still loading in the background (the explorer's models and probes).
    bool busyLoading() const;  // also the inspector reading a file, the run browser reading the runs folder
    QPushButton* trainButton() const;
    QPushButton* pauseButton() const;
    QPushButton* stopButton() const;
    QLineEdit* evalLengthsEdit() const;
    QPushButton* evaluateButton() const;

signals:
    void trainingFinished(const parrot::TrainOutcome& outcome);
    void evaluationFinished(const parrot::LengthCurve& curve);
    void errorShown(const QString& text);
    void checkpointOpened(bool ok);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;

private:
    void buildMenus();
    void onProgress(const TrainProgress& p);
    void onEvaluated(const LengthCurve& c);
    void onTrainingFinished(const TrainOutcome& o);
    void togglePause();
    void stopWork();
    void showError(const QString& text);
    void log(const QString& text);
    void updateActions();
    void updateStatus();
    void openCheckpointDialog();
    void saveCheckpointDialog();
    void showAbout();
    void showWorkspace(int index);
    void fillLayoutsMenu();
    void fillRecentMenu();
    void updateJobStatus();
    static QWidget* pageOf(const QDockWidget* dock);  // the panel a workspace dock scrolls
    void fitDocks();  // the first start's sizes: the form, a short log (folded on a short screen), the views
    void followTab();  // the Experiment form beside the Train tab only, while it follows the tab
    void setSettingsFollowTab(bool on, bool apply = true);
    // restoreState with the form's follow-the-tab rule of that state; false when it cannot be restored
    bool restoreDocks(const QByteArray& state, bool formFollowsTab);
    void setBottomHeight(QDockWidget* bottom, int height);  // of the log and runs docks (`bottom` one of them)
    void connectSession();
    void startRun(bool continueModel);

    SettingsPanel* m_settings;
    TrainPanel* m_trainPanel;
    RunBrowser* m_runs = nullptr;
    ExperimentsPanel* m_experiments = nullptr;
    ExplorerPanel* m_explorer = nullptr;
    InspectorPanel* m_inspector = nullptr;
    PretrainedPanel* m_pretrained = nullptr;
    bool m_shownOnce = false;
    std::vector<QDockWidget*> m_workspace;  // Train, Experiments, Explore, Inspect
    QDockWidget* m_currentWorkspace = nullptr;
    bool m_sessionRestored = false;
    QPointer<ExportDialog> m_exportDialog;
    QMenu *m_recentMenu = nullptr, *m_layoutsMenu = nullptr;
    QByteArray m_defaultLayout;
    QLabel* m_statusJob = nullptr;
    RecoveryBar* m_recoveryBar = nullptr;
    BackgroundJob* m_recoveryScan = nullptr;
    QAction* m_exportAction = nullptr;
    QPlainTextEdit* m_log;
    QPushButton* m_logLine = nullptr;
    QAction* m_followAction = nullptr;
    bool m_settingsFollowTab = true;
    QDockWidget* m_followedTab = nullptr;  // the tab the form last followed  // the default layout's; a layout saved or restored keeps its own
    QLabel* m_statusDevice;
    QAction *m_saveAction, *m_openAction, *m_trainAction, *m_stopAction;

    TrainingSession* m_session = nullptr;
    QPointer<QMessageBox> m_trainChoice;
    std::function<void()> m_afterOpen;  // what openCheckpointInBackground runs once the model is open
    int m_evaluationSamples = 0;        // of the evaluation running, for its log line
    long long m_screenshotStep = -1;
    QString m_screenshotPath;
};

}  // namespace parrot
