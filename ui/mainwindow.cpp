#include "mainwindow.h"

#include "tasks/icltask.h"
#include "tasks/tokentask.h"

#include "config.h"
#include "diagnostics.h"
#include "error.h"
#include "io/runfolder.h"
#include "plots.h"
#include "experimentspanel.h"
#include "explorerpanel.h"
#include "inspectorpanel.h"
#include "runbrowser.h"
#include "settingspanel.h"
#include "train/trainworker.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QTabWidget>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

namespace parrot {

namespace {

QString duration(double s)
{
    if (s >= 3600) return QString("%1 h %2 min").arg(int(s / 3600)).arg(int(s / 60) % 60);
    if (s >= 60) return QString("%1 min %2 s").arg(int(s / 60)).arg(int(s) % 60);
    return QString("%1 s").arg(int(s + 0.5));
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    registerMetaTypes();
    setWindowTitle(tr("Parrotscope"));
    resize(1360, 860);

    // Left: the experiment form.
    m_settings = new SettingsPanel(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_settings);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* settingsDock = new QDockWidget(tr("Experiment"), this);
    settingsDock->setObjectName("settingsDock");
    settingsDock->setWidget(scroll);
    settingsDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
    settingsDock->setMinimumWidth(330);
    addDockWidget(Qt::LeftDockWidgetArea, settingsDock);

    // Centre: controls, progress, the two live plots, evaluation.
    auto* central = new QWidget(this);
    auto* v = new QVBoxLayout(central);
    auto* controls = new QHBoxLayout;
    m_train = new QPushButton(tr("Train"), this);
    m_train->setObjectName("train");
    m_train->setToolTip(tr("Train a new model with these settings (F5)"));
    m_pause = new QPushButton(tr("Pause"), this);
    m_pause->setObjectName("pause");
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName("stop");
    m_stop->setToolTip(tr("Stop after the current step and save a checkpoint (Esc)"));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_progress->setFormat(tr("idle"));
    m_progressText = new QLabel(this);
    m_progressText->setMinimumWidth(360);
    controls->addWidget(m_train);
    controls->addWidget(m_pause);
    controls->addWidget(m_stop);
    controls->addWidget(m_progress, 1);
    controls->addWidget(m_progressText);
    v->addLayout(controls);
    m_modelLabel = new QLabel(this);
    m_modelLabel->setObjectName("modelLabel");
    m_modelLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    v->addWidget(m_modelLabel);

    auto* plots = new QSplitter(Qt::Horizontal, this);
    m_loss = new LossPlot(this);
    m_accuracy = new AccuracyPlot(this);
    plots->addWidget(m_loss);
    plots->addWidget(m_accuracy);
    v->addWidget(plots, 1);

    auto* evalBox = new QGroupBox(tr("Evaluate the current model"), this);
    auto* eh = new QHBoxLayout(evalBox);
    m_evalLengths = new QLineEdit("10, 20, 30, 40, 60, 80", this);
    m_evalLengths->setObjectName("evalLengths");
    m_evalLengths->setToolTip(tr("Lengths to test (string length, entries or pairs, by task), e.g. up to 4x the training range; "
                                 "set to the task's evaluation lengths when the task changes"));
    m_evalSamples = new QSpinBox(this);
    m_evalSamples->setRange(1, 100000);
    m_evalSamples->setValue(128);
    m_evalSamples->setObjectName("evalSamples");
    m_evaluate = new QPushButton(tr("Evaluate"), this);
    m_evaluate->setObjectName("evaluate");
    m_evalCancelButton = new QPushButton(tr("Cancel"), this);
    eh->addWidget(new QLabel(tr("Lengths"), this));
    eh->addWidget(m_evalLengths, 1);
    eh->addWidget(new QLabel(tr("Examples per length"), this));
    eh->addWidget(m_evalSamples);
    eh->addWidget(m_evaluate);
    eh->addWidget(m_evalCancelButton);
    v->addWidget(evalBox);
    // Centre, second tab: the experiment presets (sweeps), their figure and results table.
    m_experiments = new ExperimentsPanel(this);
    m_centralTabs = new QTabWidget(this);
    m_centralTabs->setObjectName("centralTabs");
    m_centralTabs->addTab(central, tr("Train"));
    m_centralTabs->addTab(m_experiments, tr("Experiments"));
    // Third tab: look inside models (attention, implicit attention, states) and the construction.
    m_explorer = new ExplorerPanel(this);
    m_explorer->setCurrentModelProvider([this] { return m_model; });
    m_centralTabs->addTab(m_explorer, tr("Explore"));
    // Fourth tab: any checkpoint file, read (never run) and shown tensor by tensor.
    m_inspector = new InspectorPanel(this);
    m_centralTabs->addTab(m_inspector, tr("Inspect"));
    connect(m_inspector, &InspectorPanel::openInExplorer, this, [this](const QString& path) {
        m_explorer->right()->chooseCheckpoint(path);
        showExplorer();
    });
    connect(m_inspector, &InspectorPanel::openInTrainTab, this, [this](const QString& path) {
        if (openCheckpoint(path)) showTrain();
    });
    setCentralWidget(m_centralTabs);

    m_log = new QPlainTextEdit(this);
    m_log->setReadOnly(true);
    m_log->setObjectName("log");
    m_log->setMaximumBlockCount(5000);
    auto* logDock = new QDockWidget(tr("Log"), this);
    logDock->setObjectName("logDock");
    logDock->setWidget(m_log);
    addDockWidget(Qt::BottomDockWidgetArea, logDock);
    // The runs under the runs folder, in a tab beside the log.
    m_runs = new RunBrowser(this);
    auto* runsDock = new QDockWidget(tr("Runs"), this);
    runsDock->setObjectName("runsDock");
    runsDock->setWidget(m_runs);
    addDockWidget(Qt::BottomDockWidgetArea, runsDock);
    tabifyDockWidget(logDock, runsDock);
    logDock->raise();

    m_runs->setFolder(runsFolder());
    m_experiments->setRunsFolder(runsFolder());
    connect(m_experiments, &ExperimentsPanel::message, this, &MainWindow::log);
    connect(m_experiments, &ExperimentsPanel::errorMessage, this, &MainWindow::showError);
    connect(m_experiments, &ExperimentsPanel::runsChanged, m_runs, &RunBrowser::refresh);
    connect(m_runs, &RunBrowser::overlayRequested, this, [this](const QStringList& dirs) {
        for (const QString& dir : dirs) {
            try {
                const RunRecord r = loadRun(dir);
                if (r.curves.empty()) {
                    log(tr("%1 has no evaluation to overlay").arg(dir));
                    continue;
                }
                if (r.curves.back().isError() != m_accuracy->errorMode()) {
                    showError(tr("%1: its curve (%2) does not share the plot's axis; pick the same kind of task first")
                                  .arg(QDir(m_runs->folder()).relativeFilePath(dir), r.config.task.kind));
                    continue;
                }
                m_accuracy->addCurve(QString("%1 (%2)").arg(QFileInfo(dir).fileName(), r.architecture()), r.curves.back());
            } catch (const Error& e) {
                showError(e.message());
            }
        }
    });
    resizeDocks({logDock}, {110}, Qt::Vertical);

    m_statusDevice = new QLabel(this);
    statusBar()->addPermanentWidget(m_statusDevice);

    buildMenus();
    connect(m_train, &QPushButton::clicked, this, &MainWindow::startTraining);
    connect(m_pause, &QPushButton::clicked, this, &MainWindow::togglePause);
    connect(m_stop, &QPushButton::clicked, this, &MainWindow::stopWork);
    connect(m_evaluate, &QPushButton::clicked, this, &MainWindow::startEvaluation);
    connect(m_evalCancelButton, &QPushButton::clicked, this, [this] { if (m_evalCancel) *m_evalCancel = true; });
    connect(m_settings, &SettingsPanel::changed, this, &MainWindow::updateActions);
    connect(m_settings, &SettingsPanel::changed, this, [this] { setPlotTask(m_settings->config().task); });
    connect(m_settings, &SettingsPanel::errorMessage, this, &MainWindow::showError);
    connect(m_settings, &SettingsPanel::presetLoaded, this, [this](const QString& name) {
        const ExperimentConfig c = m_settings->config();
        setPlotTask(c.task);
        log(tr("Preset %1 loaded.").arg(name));
    });
    updateStatus();
    setModel(Model());
}

MainWindow::~MainWindow()
{
    // Quit and wait on the workers before anything they report to goes away.
    if (m_worker) m_worker->cancel();
    if (m_evalCancel) *m_evalCancel = true;
    if (m_trainThread) {
        m_trainThread->quit();
        m_trainThread->wait();
    }
    if (m_evalThread) m_evalThread->wait();
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(tr("&Open checkpoint..."), this, &MainWindow::openCheckpointDialog);
    m_openAction->setShortcut(QKeySequence::Open);
    file->addAction(tr("&Inspect checkpoint file..."), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Inspect a checkpoint"), QString(),
                                                          tr("Checkpoints (*.safetensors *.json *.bin *.pt *.pth);;All files (*)"));
        if (path.isEmpty()) return;
        m_centralTabs->setCurrentWidget(m_inspector);
        m_inspector->openFile(path);
    });
    m_saveAction = file->addAction(tr("&Save checkpoint..."), this, &MainWindow::saveCheckpointDialog);
    m_saveAction->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save &window as PNG..."), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save screenshot"), "parrotscope.png", tr("PNG images (*.png)"));
        if (!path.isEmpty()) saveScreenshot(path);
    });
    file->addAction(tr("Open runs &folder"), this, [this] {
        log(tr("Runs are saved in %1").arg(runsFolder()));
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("&Preferences..."), this, &MainWindow::showPreferences);

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    m_trainAction = run->addAction(tr("&Train"), QKeySequence(Qt::Key_F5), this, &MainWindow::startTraining);
    run->addAction(tr("&Pause / resume"), QKeySequence(Qt::Key_F6), this, &MainWindow::togglePause);
    m_stopAction = run->addAction(tr("&Stop"), QKeySequence(Qt::Key_Escape), this, &MainWindow::stopWork);
    run->addAction(tr("&Evaluate"), QKeySequence(Qt::Key_F7), this, &MainWindow::startEvaluation);
    run->addSeparator();
    run->addAction(tr("E&xperiment presets (sweeps)..."), QKeySequence(Qt::CTRL | Qt::Key_R), this, &MainWindow::showExperiments);
    run->addAction(tr("&Look inside (Explore)"), QKeySequence(Qt::CTRL | Qt::Key_I), this, &MainWindow::showExplorer);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Parrotscope"), this, &MainWindow::showAbout);
}

void MainWindow::showExperiments() { m_centralTabs->setCurrentWidget(m_experiments); }

void MainWindow::showExplorer() { m_centralTabs->setCurrentWidget(m_explorer); }

void MainWindow::showTrain() { m_centralTabs->setCurrentIndex(0); }

void MainWindow::showInspector() { m_centralTabs->setCurrentWidget(m_inspector); }

bool MainWindow::busyLoading() const { return m_explorer->left()->busy() || m_explorer->right()->busy() || m_inspector->busy(); }

QString MainWindow::runsFolder() const
{
    QSettings s;
    const QString fallback = QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)).filePath("Parrotscope/runs");
    return s.value("runsFolder", fallback).toString();
}

bool MainWindow::loadPreset(const QString& name) { return m_settings->selectPreset(name); }

void MainWindow::setModel(const Model& m)
{
    m_model = m;
    m_modelLabel->setText(m.isNull() ? tr("No model yet: press Train, or open a checkpoint (Ctrl+O).")
                                     : tr("Model: %1").arg(m.summary()));
    updateActions();
}

void MainWindow::startTraining()
{
    if (m_trainThread || m_evalThread) return;
    const QStringList problems = m_settings->problems();
    if (!problems.isEmpty()) {
        showError(tr("Cannot train with these settings:\n%1").arg(problems.join("\n")));
        return;
    }
    const ExperimentConfig c = m_settings->config();
    Model model;
    QString runDir;
    try {
        model = Model::create(c);
        QDir().mkpath(runsFolder());
        runDir = newRunDir(runsFolder(), c.name);
    } catch (const Error& e) {
        showError(e.message());
        return;
    }
    setModel(model);
    m_runDir = runDir;
    m_loss->clear();
    m_accuracy->clearCurves();
    setPlotTask(c.task);
    m_progress->setValue(0);
    m_progress->setFormat(tr("starting..."));
    log(tr("Training %1 on copy (lengths %2-%3); run folder %4").arg(model.summary()).arg(c.task.minLen).arg(c.task.maxLen).arg(runDir));

    m_worker = new TrainWorker(model, runDir);
    m_trainThread = new QThread(this);
    m_worker->moveToThread(m_trainThread);
    connect(m_trainThread, &QThread::started, m_worker, &TrainWorker::run);
    connect(m_trainThread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &TrainWorker::progress, this, &MainWindow::onProgress);
    connect(m_worker, &TrainWorker::evaluated, this, &MainWindow::onEvaluated);
    connect(m_worker, &TrainWorker::logMessage, this, &MainWindow::log);
    connect(m_worker, &TrainWorker::finished, this, &MainWindow::onTrainingFinished);
    m_trainThread->start();
    updateActions();
}

void MainWindow::onProgress(const TrainProgress& p)
{
    m_modelLabel->setText(tr("Model: %1, training: step %2").arg(m_model.summary().section(", step", 0, 0)).arg(p.step));
    if (p.step > 0) m_loss->addPoint(double(p.step), p.loss);
    m_progress->setValue(p.totalSteps > 0 ? int(1000 * p.step / p.totalSteps) : 0);
    m_progress->setFormat(p.paused ? tr("paused at step %1 / %2").arg(p.step).arg(p.totalSteps)
                                   : tr("step %1 / %2").arg(p.step).arg(p.totalSteps));
    m_progressText->setText(tr("loss %1 · lr %2 · %3 tok/s · elapsed %4 · ETA %5")
                                .arg(p.loss, 0, 'f', 4).arg(p.lr, 0, 'e', 1).arg(p.tokensPerSecond, 0, 'f', 0)
                                .arg(duration(p.elapsedSeconds), duration(p.etaSeconds)));
    // At the last step, wait for the final evaluation (onTrainingFinished takes the shot).
    if (m_screenshotStep >= 0 && p.step >= m_screenshotStep && p.step < p.totalSteps) {
        m_screenshotStep = -1;
        // Let the coalesced replot land first.
        QTimer::singleShot(200, this, [this] { saveScreenshot(m_screenshotPath); close(); });
    }
}

void MainWindow::setPlotTask(const TaskConfig& t)
{
    const TaskInfo* info = findTask(t.kind);
    const bool errorCurves = isVectorTask(t.kind) && t.kind != "sparse_parity" && t.kind != "vector_mqar";
    m_accuracy->setTask(info ? info->difficulty : tr("length"), t.minLen, t.maxLen, errorCurves);
    // A new task brings its own evaluation lengths (copy's string lengths mean nothing for MQAR).
    if (t.kind != m_plotTaskKind) {
        m_plotTaskKind = t.kind;
        QStringList lengths;
        for (int l : evaluationLengths(t)) lengths << QString::number(l);
        m_evalLengths->setText(lengths.join(", "));
    }
}

void MainWindow::onEvaluated(const LengthCurve& c)
{
    m_accuracy->setLiveCurve(c);
    if (c.isError() || (isVectorTask(m_settings->config().task.kind) && !c.lengths.empty())) {
        statusBar()->showMessage(tr("step %1: %2").arg(c.step).arg(c.summary()));
        return;
    }
    const int target = m_settings->config().task.maxLen;
    const double acc = c.stringAccuracyAt(target);
    const TaskInfo* info = findTask(m_settings->config().task.kind);
    if (acc >= 0 && info)
        statusBar()->showMessage(tr("step %1: answer accuracy %2% at %3 %4").arg(c.step).arg(100 * acc, 0, 'f', 1).arg(info->difficulty).arg(target));
}

void MainWindow::onTrainingFinished(const TrainOutcome& o)
{
    m_trainThread->quit();
    m_trainThread->wait();
    m_trainThread->deleteLater();
    m_trainThread = nullptr;
    m_worker = nullptr;
    m_pause->setText(tr("Pause"));
    m_progress->setFormat(tr("%1 at step %2").arg(statusName(o.status)).arg(o.step));
    setModel(m_model);  // refresh the summary: the step changed
    m_runs->refresh();  // the run just written
    if (o.status == TrainOutcome::Status::Finished || o.status == TrainOutcome::Status::Cancelled)
        log(o.message + (o.checkpoint.isEmpty() ? QString() : tr(" Checkpoint: %1").arg(o.checkpoint)));
    else
        showError(o.message);
    if (!o.finalCurve.empty()) {
        m_accuracy->setLiveCurve(o.finalCurve);
        log(tr("Final evaluation: %1").arg([&] {
            return o.finalCurve.summary();
        }()));
    }
    if (!m_screenshotPath.isEmpty() && m_screenshotStep >= 0) {
        m_screenshotStep = -1;
        QTimer::singleShot(200, this, [this] { saveScreenshot(m_screenshotPath); close(); });
    }
    updateActions();
    emit trainingFinished(o);
}

void MainWindow::togglePause()
{
    if (!m_worker) return;
    if (m_worker->isPaused()) {
        m_worker->resume();
        m_pause->setText(tr("Pause"));
        log(tr("Resumed."));
    } else {
        m_worker->pause();
        m_pause->setText(tr("Resume"));
        log(tr("Paused."));
    }
}

void MainWindow::stopWork()
{
    if (m_worker) {
        m_worker->resume();
        m_worker->cancel();
        m_progress->setFormat(tr("stopping..."));
    }
    if (m_evalCancel) *m_evalCancel = true;
}

void MainWindow::startEvaluation()
{
    if (m_trainThread || m_evalThread) return;
    if (m_model.isNull()) {
        showError(tr("There is no model to evaluate: train one or open a checkpoint."));
        return;
    }
    std::vector<int> lengths;
    try {
        lengths = parseLengthList(m_evalLengths->text(), tr("Evaluation lengths"));
    } catch (const Error& e) {
        showError(e.message());
        return;
    }
    const Model model = m_model;
    const int samples = m_evalSamples->value();
    auto result = std::make_shared<LengthCurve>();
    auto error = std::make_shared<QString>();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    m_evalCancel = cancel;
    QPointer<MainWindow> self(this);
    m_progress->setValue(0);
    m_progress->setFormat(tr("evaluating..."));
    m_evalThread = QThread::create([=] {
        try {
            *result = model.evaluate(lengths, samples, 1234, [=](int done, int total) {
                QMetaObject::invokeMethod(self, [=] {
                    if (self) {
                        self->m_progress->setValue(1000 * done / total);
                        self->m_progress->setFormat(tr("evaluating: %1 of %2 lengths").arg(done).arg(total));
                    }
                }, Qt::QueuedConnection);
                return !cancel->load();
            });
        } catch (const std::exception& e) {
            *error = QString::fromUtf8(e.what()).section('\n', 0, 0);
        }
    });
    connect(m_evalThread, &QThread::finished, this, [=, this] {
        m_evalThread->deleteLater();
        m_evalThread = nullptr;
        m_evalCancel.reset();
        if (!error->isEmpty()) {
            showError(tr("Evaluation failed: %1").arg(*error));
        } else {
            const bool partial = !isVectorTask(m_model.config().task.kind) && result->lengths.size() < lengths.size();
            m_progress->setFormat(partial ? tr("evaluation cancelled") : tr("evaluated"));
            if (!result->empty()) {
                if (result->isError()) m_accuracy->setLiveCurve(*result);  // with its baselines
                else m_accuracy->addCurve(tr("evaluation, step %1").arg(result->step), *result);
                log(tr("Evaluation at step %1, %2 examples per point: %3").arg(result->step).arg(samples).arg(result->summary()));
            }
            emit evaluationFinished(*result);
        }
        updateActions();
    });
    m_evalThread->start();
    updateActions();
}

bool MainWindow::openCheckpoint(const QString& path)
{
    if (m_trainThread || m_evalThread) {
        showError(tr("Stop the running job before opening a checkpoint."));
        return false;
    }
    try {
        const Model m = Model::load(path);
        setModel(m);
        m_settings->setConfig(m.config());
        m_loss->clear();
        m_accuracy->clearCurves();
        setPlotTask(m.config().task);
        m_progress->setFormat(tr("loaded"));
        log(tr("Opened %1: %2").arg(path, m.summary()));
        QSettings().setValue("lastCheckpoint", path);
        return true;
    } catch (const Error& e) {
        showError(tr("Could not open the checkpoint.\n%1").arg(e.message()));
        return false;
    }
}

bool MainWindow::saveCheckpoint(const QString& path)
{
    if (m_model.isNull()) {
        showError(tr("There is no model to save yet."));
        return false;
    }
    if (m_trainThread) {
        showError(tr("Stop or finish training before saving (the run folder autosaves to %1).").arg(m_runDir));
        return false;
    }
    try {
        m_model.save(path);
        log(tr("Saved checkpoint %1 (step %2).").arg(path).arg(m_model.step()));
        return true;
    } catch (const Error& e) {
        showError(e.message());
        return false;
    }
}

bool MainWindow::saveScreenshot(const QString& path)
{
    const bool ok = grab().save(path, "PNG");
    if (!ok) showError(tr("Could not write the screenshot %1").arg(path));
    return ok;
}

void MainWindow::screenshotAtStep(long long step, const QString& path)
{
    m_screenshotStep = step;
    m_screenshotPath = path;
}

void MainWindow::openCheckpointDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), QSettings().value("lastCheckpoint").toString(),
                                                      tr("Checkpoints (*.safetensors *.json *.bin *.pt *.pth);;All files (*)"));
    if (!path.isEmpty()) openCheckpoint(path);
}

void MainWindow::saveCheckpointDialog()
{
    const QString suggested = QDir(m_runDir.isEmpty() ? QDir::homePath() : m_runDir)
                                  .filePath(QString("%1-step%2.safetensors").arg(m_model.config().name).arg(m_model.step()));
    const QString path = QFileDialog::getSaveFileName(this, tr("Save checkpoint"), suggested,
                                                      tr("Safetensors checkpoints (*.safetensors)"));
    if (!path.isEmpty()) saveCheckpoint(path);
}

void MainWindow::showPreferences()
{
    QDialog dialog(this);
    dialog.setWindowTitle(tr("Preferences"));
    auto* form = new QFormLayout(&dialog);
    auto* threads = new QSpinBox(&dialog);
    threads->setRange(0, 1024);
    threads->setSpecialValueText(tr("all cores"));
    threads->setValue(QSettings().value("threads", 0).toInt());
    auto* runs = new QLineEdit(runsFolder(), &dialog);
    form->addRow(tr("CPU threads"), threads);
    form->addRow(tr("Runs folder"), runs);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
    if (dialog.exec() != QDialog::Accepted) return;
    QSettings s;
    s.setValue("threads", threads->value());
    s.setValue("runsFolder", runs->text());
    m_runs->setFolder(runsFolder());
    m_experiments->setRunsFolder(runsFolder());
    configureThreads(threads->value());
    updateStatus();
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Parrotscope"),
                       tr("<b>Parrotscope</b>: why Transformers copy and state-space models cannot.<pre>%1</pre>")
                           .arg(diagnosticsText(diagnostics()).toHtmlEscaped()));
}

void MainWindow::showEvent(QShowEvent* e)
{
    QMainWindow::showEvent(e);
    if (m_shownOnce) return;
    m_shownOnce = true;
    // a short log at first: the views above get the height (the docks keep what the user sets)
    if (auto* logDock = findChild<QDockWidget*>("logDock")) resizeDocks({logDock}, {120}, Qt::Vertical);
}

void MainWindow::closeEvent(QCloseEvent* e)
{
    if (m_worker) {
        log(tr("Stopping training before closing; the last checkpoint is kept in %1").arg(m_runDir));
        stopWork();
    }
    if (m_evalCancel) *m_evalCancel = true;
    if (m_experiments->isRunning()) {
        log(tr("Stopping the sweep before closing; its finished runs are kept, and Run resumes it"));
        m_experiments->cancel();
    }
    e->accept();
}

void MainWindow::showError(const QString& text)
{
    log(tr("Error: %1").arg(text));
    statusBar()->showMessage(text.section('\n', 0, 0), 10000);
    // Window-modal but not blocking: the event loop and any running job keep going.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Parrotscope"), text, QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setObjectName("errorBox");
    box->open();
    emit errorShown(text);
}

void MainWindow::log(const QString& text)
{
    m_log->appendPlainText(QString("[%1] %2").arg(QTime::currentTime().toString("HH:mm:ss"), text));
}

void MainWindow::updateActions()
{
    const bool busy = m_trainThread || m_evalThread;
    const bool trainable = m_settings->problems().isEmpty();
    m_train->setEnabled(!busy && trainable);
    m_trainAction->setEnabled(!busy && trainable);
    m_pause->setEnabled(m_trainThread != nullptr);
    m_stop->setEnabled(busy);
    m_stopAction->setEnabled(busy);
    m_evaluate->setEnabled(!busy && !m_model.isNull());
    m_evalCancelButton->setEnabled(m_evalThread != nullptr);
    m_saveAction->setEnabled(!m_trainThread && !m_model.isNull());
    m_openAction->setEnabled(!busy);
    m_settings->setEnabled(!busy);
}

void MainWindow::updateStatus()
{
    const Diagnostics d = diagnostics();
    m_statusDevice->setText(tr("%1 · %2 threads · %3").arg(d.device).arg(d.threads)
                                .arg(d.blasIsReference ? tr("reference BLAS (slow)") : d.blas.section(" (", 0, 0)));
}

}  // namespace parrot
