// The Parrotscope window: experiment settings, Train / Pause / Stop with live plots,
// evaluation at chosen lengths, checkpoints. Long work runs on worker threads and
// reports by queued signals; the window never waits on it except when closing.
#pragma once

#include "model.h"
#include "types.h"

#include <QMainWindow>
#include <QPointer>

#include <atomic>
#include <memory>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QThread;

namespace parrot {

class AccuracyPlot;
class ExperimentsPanel;
class ExplorerPanel;
class InspectorPanel;
class LossPlot;
class RunBrowser;
class SettingsPanel;
class TrainWorker;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    bool loadPreset(const QString& name);
    bool openCheckpoint(const QString& path);  // errors go to the log and a message box
    bool saveCheckpoint(const QString& path);
    bool saveScreenshot(const QString& path);
    void startTraining();
    void startEvaluation();
    // Takes a screenshot at training step `step` (or when training ends first), then closes.
    void screenshotAtStep(long long step, const QString& path);

    bool isTraining() const { return m_trainThread != nullptr; }
    bool isEvaluating() const { return m_evalThread != nullptr; }
    const Model& model() const { return m_model; }
    QString runsFolder() const;
    QString currentRunDir() const { return m_runDir; }

    SettingsPanel* settings() const { return m_settings; }
    LossPlot* lossPlot() const { return m_loss; }
    AccuracyPlot* accuracyPlot() const { return m_accuracy; }
    RunBrowser* runBrowser() const { return m_runs; }
    ExperimentsPanel* experiments() const { return m_experiments; }
    void showExperiments();  // the Experiments tab
    ExplorerPanel* explorer() const { return m_explorer; }
    InspectorPanel* inspector() const { return m_inspector; }
    void showExplorer();     // the Explore tab
    void showTrain();        // the Train tab
    void showInspector();    // the Inspect tab
    // Whether a view is still loading in the background (the explorer's models and probes).
    bool busyLoading() const;  // also the inspector reading a file
    QPushButton* trainButton() const { return m_train; }
    QPushButton* pauseButton() const { return m_pause; }
    QPushButton* stopButton() const { return m_stop; }
    QLineEdit* evalLengthsEdit() const { return m_evalLengths; }
    QPushButton* evaluateButton() const { return m_evaluate; }

signals:
    void trainingFinished(const parrot::TrainOutcome& outcome);
    void evaluationFinished(const parrot::LengthCurve& curve);
    void errorShown(const QString& text);

protected:
    void closeEvent(QCloseEvent* e) override;
    void showEvent(QShowEvent* e) override;

private:
    QString m_plotTaskKind;  // the task whose evaluation lengths the evaluate box holds
    void buildMenus();
    void onProgress(const TrainProgress& p);
    void setPlotTask(const TaskConfig& t);  // the accuracy plot's axis, title and training range
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
    void showPreferences();
    void showAbout();
    void setModel(const Model& m);

    SettingsPanel* m_settings;
    LossPlot* m_loss;
    AccuracyPlot* m_accuracy;
    RunBrowser* m_runs = nullptr;
    ExperimentsPanel* m_experiments = nullptr;
    ExplorerPanel* m_explorer = nullptr;
    InspectorPanel* m_inspector = nullptr;
    bool m_shownOnce = false;
    class QTabWidget* m_centralTabs = nullptr;
    QPushButton *m_train, *m_pause, *m_stop, *m_evaluate, *m_evalCancelButton;
    QProgressBar* m_progress;
    QLabel* m_progressText;
    QLabel* m_modelLabel;
    QLineEdit* m_evalLengths;
    QSpinBox* m_evalSamples;
    QPlainTextEdit* m_log;
    QLabel* m_statusDevice;
    QAction *m_saveAction, *m_openAction, *m_trainAction, *m_stopAction;

    Model m_model;
    QString m_runDir;
    QThread* m_trainThread = nullptr;
    QPointer<TrainWorker> m_worker;
    QThread* m_evalThread = nullptr;
    std::shared_ptr<std::atomic<bool>> m_evalCancel;
    long long m_screenshotStep = -1;
    QString m_screenshotPath;
};

}  // namespace parrot
