#include "ui/window/mainwindow.h"

#include "base/io/runfolder.h"
#include "base/presets.h"
#include "base/version.h"
#include "base/weightdtype.h"
#include "core/device.h"
#include "core/diagnostics.h"
#include "ui/common/appsettings.h"
#include "ui/common/filefilters.h"
#include "ui/jobs/backgroundjob.h"
#include "ui/jobs/trainingsession.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/explorerpanel.h"
#include "ui/panels/inspectorpanel.h"
#include "ui/panels/pretrainedpanel.h"
#include "ui/panels/runbrowser.h"
#include "ui/panels/settingspanel.h"
#include "ui/panels/traincontroller.h"
#include "ui/panels/trainpanel.h"
#include "ui/window/docklayout.h"
#include "ui/window/figureactions.h"
#include "ui/window/preferencesdialog.h"
#include "ui/window/recoverybar.h"
#include "ui/window/theme.h"
#include "ui/window/welcomedialog.h"

#include <QCloseEvent>
#include <QDataStream>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QGuiApplication>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScreen>
#include <QStatusBar>
#include <QTime>
#include <QTimer>

#include <unistd.h>

namespace parrot {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(tr("Parrotscope"));
    // The first start fits the screen it opens on; later starts restore the last session's geometry.
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        setGeometry(DockLayout::firstGeometry(screen->availableGeometry(), DockLayout::kPreferredSize, DockLayout::kFrameAllowance));
    m_docks = new DockLayout(this);
    m_figures = new FigureActions(this, m_docks);
    m_settings = new SettingsPanel(this);              // the experiment form, left
    m_trainPanel = new TrainPanel(this);               // controls, progress, the live plots, evaluation
    m_train = new TrainController(m_settings, m_trainPanel, this);
    m_experiments = new ExperimentsPanel(this);        // the experiment presets (sweeps), their figure and table
    m_explorer = new ExplorerPanel(this);              // look inside models and the construction
    m_inspector = new InspectorPanel(this);            // any checkpoint file, read (never run), tensor by tensor
    m_pretrained = new PretrainedPanel(this);          // HuggingFace language models: generation, zero-shot tests
    m_log = new QPlainTextEdit(this);
    m_runs = new RunBrowser(this);                     // the runs under the runs folder, beside the log
    buildDocks();
    buildStatusBar();
    buildRecovery();
    buildMenus();
    connectTabs();
    connectTrain();
    updateStatus();
    updateJobStatus();
    m_train->updateControls();
    m_docks->finish();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildDocks()
{
    m_docks->addForm(m_settings, tr("Experiment"));
    // The workspace: the tabs docked together, which can be split, moved and floated like the
    // others; View → Layouts saves and restores arrangements.
    m_docks->addWorkspace(m_trainPanel, Tab::Train);
    m_docks->addWorkspace(m_experiments, Tab::Experiments);
    m_docks->addWorkspace(m_explorer, Tab::Explore);
    m_docks->addWorkspace(m_inspector, Tab::Inspect);
    m_docks->addWorkspace(m_pretrained, Tab::Pretrained);
    m_log->setReadOnly(true);
    m_log->setObjectName("log");
    m_log->setMaximumBlockCount(5000);
    m_docks->addBottom(m_log, m_runs);
    connect(m_docks, &DockLayout::logMessage, this, &MainWindow::log);
    connect(m_docks, &DockLayout::errorMessage, this, &MainWindow::showError);
    // The runs brought forward get room for several rows; the log is fine short.
    connect(m_docks->runsDock(), &QDockWidget::visibilityChanged, this, [this](bool visible) {
        const int missing = m_runs->heightForRows(6) - m_runs->height();
        QDockWidget* runs = m_docks->runsDock();
        if (visible && isVisible() && missing > 0) m_docks->setBottomHeight(runs, statusBar()->y() - runs->y() + missing);
    });
}

void MainWindow::buildStatusBar()
{
    // The log's last line in the status bar; a click opens the log (folded away on a short screen).
    m_logLine = new QPushButton(this);
    m_logLine->setObjectName("logLine");
    m_logLine->setFlat(true);
    m_logLine->setStyleSheet("QPushButton#logLine { text-align: left; border: none; padding: 1px 6px; }");
    m_logLine->setCursor(Qt::PointingHandCursor);
    m_logLine->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_logLine->setToolTip(tr("The log's last line: click to open or close the log (View → Log)"));
    statusBar()->addWidget(m_logLine, 1);
    connect(m_logLine, &QPushButton::clicked, m_docks, &DockLayout::toggleBottom);
    m_statusJob = new QLabel(this);
    m_statusJob->setObjectName("statusJob");
    statusBar()->addPermanentWidget(m_statusJob);
    m_statusDevice = new QLabel(this);
    statusBar()->addPermanentWidget(m_statusDevice);
    auto* memoryTimer = new QTimer(this);  // the job runs in this process: its memory is the process's
    connect(memoryTimer, &QTimer::timeout, this, &MainWindow::updateJobStatus);
    memoryTimer->start(2000);
    connect(m_figures, &FigureActions::logMessage, this, &MainWindow::log);
    connect(m_figures, &FigureActions::errorMessage, this, &MainWindow::showError);
    connect(m_figures, &FigureActions::statusMessage, statusBar(), &QStatusBar::showMessage);
}

void MainWindow::buildRecovery()
{
    m_recoveryBar = new RecoveryBar(this);
    addToolBar(Qt::TopToolBarArea, m_recoveryBar);
    m_recoveryScan = new BackgroundJob(this);
    connect(m_recoveryBar, &RecoveryBar::continueRequested, this, [this](const QString& dir) {
        if (!m_train->busy()) m_docks->showTab(Tab::Train);
        m_train->resumeInterrupted(dir);
    });
    connect(m_recoveryBar, &RecoveryBar::dismissRequested, this, [this](const QString& dir) {
        if (dismissInterruptedRun(dir))
            log(tr("%1 is left where it stopped; Continue training in the Runs tab resumes it.").arg(QDir::toNativeSeparators(dir)));
        m_runs->refresh();
    });
    connect(m_docks, &DockLayout::restored, m_recoveryBar, &RecoveryBar::sync);  // a layout holds no interrupted run
    QTimer::singleShot(0, this, &MainWindow::findInterruptedRuns);
}

void MainWindow::buildMenus()
{
    buildFileMenu();
    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    edit->addAction(tr("&Copy figure"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C), this, [this] { m_figures->copyFigure(nullptr); });
    edit->addSeparator();
    edit->addAction(tr("&Preferences..."), QKeySequence::Preferences, this, &MainWindow::showPreferences);
    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->setObjectName("viewMenu");
    m_docks->fillViewMenu(view);
    buildRunMenu();
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Welcome"), this, &MainWindow::showWelcome);
    help->addAction(tr("&About Parrotscope"), this, &MainWindow::showAbout);
}

void MainWindow::buildFileMenu()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(tr("&Open checkpoint..."), m_train, &TrainController::openCheckpointDialog);
    m_openAction->setShortcut(QKeySequence::Open);
    file->addAction(tr("&Inspect checkpoint file..."), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Inspect a checkpoint"), QString(), checkpointFileFilter());
        if (path.isEmpty()) return;
        m_docks->showTab(Tab::Inspect);
        m_inspector->openFile(path);
    });
    m_recentMenu = file->addMenu(tr("Open &recent checkpoint"));
    m_recentMenu->setObjectName("recentMenu");
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    m_saveAction = file->addAction(tr("&Save checkpoint..."), m_train, &TrainController::saveCheckpointDialog);
    m_saveAction->setShortcut(QKeySequence::Save);
    file->addSeparator();
    QAction* exportAction = file->addAction(tr("&Export figure..."), QKeySequence(Qt::CTRL | Qt::Key_E), this,
                                            [this] { m_figures->exportFigure(nullptr, false); });
    exportAction->setObjectName("exportAction");
    file->addAction(tr("Export the whole &tab as one figure..."), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), this,
                    [this] { m_figures->exportFigure(nullptr, true); });
    file->addAction(tr("Save &window as PNG..."), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save screenshot"), "parrotscope.png", tr("PNG images (*.png)"));
        if (!path.isEmpty()) saveScreenshot(path);
    });
    file->addAction(tr("Open runs &folder"), this, [this] { log(tr("Runs are saved in %1").arg(runsFolder())); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::buildRunMenu()
{
    QMenu* run = menuBar()->addMenu(tr("&Run"));
    m_trainAction = run->addAction(tr("&Train"), QKeySequence(Qt::Key_F5), m_train, &TrainController::startTraining);
    run->addAction(tr("&Pause / resume"), QKeySequence(Qt::Key_F6), m_train, &TrainController::togglePause);
    m_stopAction = run->addAction(tr("&Stop"), QKeySequence(Qt::Key_Escape), m_train, &TrainController::stopWork);
    run->addAction(tr("&Evaluate"), QKeySequence(Qt::Key_F7), m_train, &TrainController::startEvaluation);
    run->addSeparator();
    run->addAction(tr("E&xperiment presets (sweeps)..."), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                   [this] { m_docks->showTab(Tab::Experiments); });
    run->addAction(tr("&Look inside (Explore)"), QKeySequence(Qt::CTRL | Qt::Key_I), this, [this] { m_docks->showTab(Tab::Explore); });
}

void MainWindow::connectTabs()
{
    m_explorer->setCurrentModelProvider([this] { return m_train->model(); });
    connect(m_pretrained, &PretrainedPanel::modelsChanged, this, [this] { m_explorer->setPretrainedModels(m_pretrained->models()); });
    connect(m_pretrained, &PretrainedPanel::lookInside, this,
            [this](const std::shared_ptr<const LanguageModel>& a, const std::shared_ptr<const LanguageModel>& b, const QString& prompt) {
                m_explorer->showLanguageModels(a, b, prompt);
                m_docks->showTab(Tab::Explore);
            });
    connect(m_inspector, &InspectorPanel::openInExplorer, this, [this](const QString& path) {
        m_explorer->showCheckpoint(path);
        m_docks->showTab(Tab::Explore);
    });
    connect(m_inspector, &InspectorPanel::openInTrainTab, this, [this](const QString& path) {
        m_train->openCheckpointInBackground(path, [this] { m_docks->showTab(Tab::Train); });
    });
    m_runs->setFolder(runsFolder());
    m_experiments->setRunsFolder(runsFolder());
    connect(m_experiments, &ExperimentsPanel::message, this, &MainWindow::log);
    connect(m_experiments, &ExperimentsPanel::errorMessage, this, &MainWindow::showError);
    connect(m_experiments, &ExperimentsPanel::runsChanged, m_runs, &RunBrowser::refresh);
    connect(m_runs, &RunBrowser::continueRequested, m_train, &TrainController::resumeRun);
    connect(m_runs, &RunBrowser::exploreRequested, this, [this](const QString& dir) {
        m_explorer->showRun(dir);
        m_docks->showTab(Tab::Explore);
    });
    connect(m_runs, &RunBrowser::overlayRequested, this, [this](const QStringList& dirs) { m_train->overlayRuns(dirs, m_runs->folder()); });
}

void MainWindow::connectTrain()
{
    connect(m_train, &TrainController::logMessage, this, &MainWindow::log);
    connect(m_train, &TrainController::errorMessage, this, &MainWindow::showError);
    connect(m_train, &TrainController::statusMessage, this, [this](const QString& text) { statusBar()->showMessage(text); });
    connect(m_train, &TrainController::controlsChanged, this, &MainWindow::updateActions);
    connect(m_train, &TrainController::runWritten, m_runs, &RunBrowser::refresh);
    connect(m_train, &TrainController::progress, this, &MainWindow::onProgress);
    connect(m_train, &TrainController::trainingFinished, this, &MainWindow::onTrainingFinished);
}

void MainWindow::fillRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = AppSettings::load().recentCheckpoints;
    if (recent.isEmpty()) m_recentMenu->addAction(tr("(none yet)"))->setEnabled(false);
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] { m_train->openCheckpointInBackground(path); });
}

void MainWindow::updateJobStatus()
{
    // resident memory of this process, where the jobs (training, evaluation, sweeps) run
    qint64 rss = 0;
    QFile statm("/proc/self/statm");
    if (statm.open(QIODevice::ReadOnly)) rss = statm.readAll().split(' ').value(1).toLongLong() * sysconf(_SC_PAGESIZE);
    const QString activity = m_train->session()->activity();
    const QString job = !activity.isEmpty() ? activity : m_experiments->isRunning() ? tr("sweep") : QString();
    m_statusJob->setText((job.isEmpty() ? tr("idle") : job) + (rss > 0 ? tr(" · memory %1 MB").arg(rss / (1024 * 1024)) : QString()));
}

bool MainWindow::busyLoading() const
{
    return m_explorer->left()->busy() || m_explorer->right()->busy() || m_inspector->busy() || m_pretrained->busy() ||
           m_runs->isLoading();
}

QByteArray layoutSignature(const QWidget& top)
{
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    for (const QWidget* w : top.findChildren<QWidget*>()) out << w->geometry() << w->isVisible();
    return bytes;
}

QString MainWindow::runsFolder() const { return AppSettings::load().runsFolder; }

void MainWindow::findInterruptedRuns()
{
    const QString root = runsFolder();
    m_recoveryScan->start([root](JobContext&) { return interruptedRuns(root); },
                          [this](const std::vector<InterruptedRun>& runs) {
                              m_recoveryBar->setRuns(runs);
                              for (const InterruptedRun& r : runs)
                                  log(tr("%1 (%2): it can be continued from its last autosave.")
                                          .arg(RecoveryBar::describe(r), QDir::toNativeSeparators(r.dir)));
                          },
                          [this](const QString& error) { log(tr("Looking for interrupted runs: %1").arg(error)); });
}

void MainWindow::onProgress(const TrainProgress& p)
{
    // At the last step, wait for the final evaluation (onTrainingFinished takes the shot).
    if (m_screenshotStep >= 0 && p.step >= m_screenshotStep && p.step < p.totalSteps) {
        m_screenshotStep = -1;
        // Let the coalesced replot land first.
        QTimer::singleShot(200, this, [this] { saveScreenshot(m_screenshotPath); close(); });
    }
}

void MainWindow::onTrainingFinished(const TrainOutcome&)
{
    if (!m_screenshotPath.isEmpty() && m_screenshotStep >= 0) {
        m_screenshotStep = -1;
        QTimer::singleShot(200, this, [this] { saveScreenshot(m_screenshotPath); close(); });
    }
}

bool MainWindow::saveScreenshot(const QString& path)
{
    // what was just loaded may have changed sizes: lay the window out before grabbing it
    for (int i = 0; i < 3; ++i) {
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
        QCoreApplication::processEvents(QEventLoop::ExcludeUserInputEvents);
    }
    const bool ok = grab().save(path, "PNG");
    if (!ok) showError(tr("Could not write the screenshot %1").arg(path));
    return ok;
}

void MainWindow::screenshotAtStep(long long step, const QString& path)
{
    m_screenshotStep = step;
    m_screenshotPath = path;
}

QDialog* MainWindow::showPreferences()
{
    auto* dialog = new PreferencesDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &PreferencesDialog::chosen, this, [this](const AppSettings& s) {
        if (s.device != deviceChoice()) {
            setDeviceChoice(s.device);  // one of deviceOptions(): usable here
            log(tr("Device: %1 for the models built or opened from now on.").arg(deviceDescription()));
        }
        if (s.weightDtype != weightDtypeName(weightDtypeChoice())) {
            setWeightDtypeChoice(weightDtypeFromName(s.weightDtype));
            log(tr("Pretrained weights: %1 for the models opened from now on.").arg(s.weightDtype));
        }
        applyTheme(s.theme);
        const bool newFolder = m_runs->folder() != s.runsFolder;
        m_runs->setFolder(s.runsFolder);
        m_experiments->setRunsFolder(s.runsFolder);
        if (newFolder) findInterruptedRuns();
        configureThreads(s.threads);
        updateStatus();
    });
    connect(dialog, &PreferencesDialog::saveFailed, this, &MainWindow::showError);
    dialog->open();  // window-modal, never blocking the event loop
    return dialog;
}

void MainWindow::showAbout()
{
    QMessageBox::about(this, tr("About Parrotscope"),
                       tr("<b>Parrotscope %1</b>: why Transformers copy and state-space models cannot.<br>"
                          "Qt %2 (built with %3), QCustomPlot 2.1.<pre>%4</pre>")
                           .arg(appVersion(), qVersion(), QT_VERSION_STR, diagnosticsText(diagnostics()).toHtmlEscaped()));
}

QDialog* MainWindow::showWelcome()
{
    auto* box = new WelcomeDialog(this);
    connect(box, &WelcomeDialog::trainRequested, this, [this] {
        m_settings->selectPreset(defaultPresetName());
        m_docks->showTab(Tab::Train);
        m_train->startTraining();
    });
    connect(box, &WelcomeDialog::exploreRequested, this, [this] { m_docks->showTab(Tab::Explore); });
    connect(box, &WelcomeDialog::findingRequested, this, [this] {
        m_docks->showTab(Tab::Experiments);
        m_experiments->selectPreset("length-generalisation");
        m_experiments->run();
    });
    AppSettings::markWelcomed();
    box->open();
    return box;
}

void MainWindow::showEvent(QShowEvent* e)
{
    QMainWindow::showEvent(e);
    m_docks->fitOnFirstShow();
}

void MainWindow::closeEvent(QCloseEvent* e)
{
    if (m_train->isTraining())
        log(tr("Stopping training before closing; the last checkpoint is kept in %1").arg(m_train->currentRunDir()));
    m_train->session()->stop();
    if (m_experiments->isRunning()) {
        log(tr("Stopping the sweep before closing; its finished runs are kept, and Run resumes it"));
        m_experiments->cancel();
    }
    m_docks->saveSession();
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
    const QString line = QString("[%1] %2").arg(QTime::currentTime().toString("HH:mm:ss"), text);
    m_log->appendPlainText(line);
    m_logLine->setText(line.section('\n', 0, 0).left(300));
}

void MainWindow::updateActions()
{
    const bool busy = m_train->busy();
    m_trainAction->setEnabled(!busy && m_train->trainable());
    m_stopAction->setEnabled(busy);
    m_saveAction->setEnabled(!m_train->isTraining() && !m_train->model().isNull());
    m_openAction->setEnabled(!busy);
}

void MainWindow::updateStatus()
{
    const Diagnostics d = diagnostics();
    m_statusDevice->setText(tr("%1 · %2 threads · %3").arg(deviceDescription()).arg(d.threads)
                                .arg(d.blasIsReference ? tr("reference BLAS (slow)") : d.blas.section(" (", 0, 0)));
}

}  // namespace parrot
