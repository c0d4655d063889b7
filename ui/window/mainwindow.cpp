#include "ui/window/mainwindow.h"

#include "ui/common/filefilters.h"
#include "ui/common/appsettings.h"
#include "ui/window/preferencesdialog.h"
#include "ui/window/recoverybar.h"
#include "ui/jobs/backgroundjob.h"
#include "ui/window/theme.h"
#include "base/weightdtype.h"
#include "base/config.h"
#include "core/device.h"
#include "core/diagnostics.h"
#include "base/error.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/explorerpanel.h"
#include "figures/export.h"
#include "ui/common/exportdialog.h"
#include "ui/panels/inspectorpanel.h"
#include "base/analysis/mechanisms.h"
#include "ui/panels/pretrainedpanel.h"
#include "base/io/runfolder.h"
#include "figures/plots.h"
#include "base/presets.h"
#include "ui/panels/runbrowser.h"
#include "ui/panels/settingspanel.h"
#include "ui/panels/trainpanel.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "ui/jobs/trainingsession.h"
#include "base/version.h"
#include "base/io/textfile.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QCursor>
#include <QDataStream>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QTabBar>
#include <QMouseEvent>
#include <QCommandLinkButton>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <optional>

#include <qcustomplot.h>

#include <unistd.h>

namespace parrot {


MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(tr("Parrotscope"));
    m_session = new TrainingSession(this);
    // The first start fits the screen it opens on; later starts restore the last session's geometry.
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        setGeometry(firstGeometry(screen->availableGeometry(), kPreferredSize, kFrameAllowance));

    // Left: the experiment form.
    m_settings = new SettingsPanel(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_settings);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto* settingsDock = new QDockWidget(tr("Experiment"), this);
    settingsDock->setObjectName("settingsDock");
    settingsDock->setWidget(scroll);
    settingsDock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
    settingsDock->setMinimumWidth(330);
    addDockWidget(Qt::LeftDockWidgetArea, settingsDock);

    // Centre: the Train tab (controls, progress, the two live plots, evaluation).
    m_trainPanel = new TrainPanel(this);
    // The experiment presets (sweeps), their figure and results table.
    m_experiments = new ExperimentsPanel(this);
    // The workspace: the tabs docked together (Train, Experiments, Explore, Inspect, Pretrained), which can be
    // split, moved and floated like the others; View → Layouts saves and restores arrangements.
    m_explorer = new ExplorerPanel(this);  // look inside models (attention, implicit attention, states) and the construction
    m_explorer->setCurrentModelProvider([this] { return m_session->model(); });
    m_inspector = new InspectorPanel(this);  // any checkpoint file, read (never run) and shown tensor by tensor
    m_pretrained = new PretrainedPanel(this);  // HuggingFace language models: generation and the zero-shot tests
    const std::pair<QWidget*, QString> pages[] = {{m_trainPanel, tr("Train")}, {m_experiments, tr("Experiments")},
                                                  {m_explorer, tr("Explore")}, {m_inspector, tr("Inspect")},
                                                  {m_pretrained, tr("Pretrained")}};
    const char* ids[] = {"trainDock", "experimentsDock", "exploreDock", "inspectDock", "pretrainedDock"};
    for (size_t i = 0; i < std::size(pages); ++i) {
        auto* dock = new QDockWidget(pages[i].second, this);
        dock->setObjectName(ids[i]);
        // A page scrolls in its dock rather than setting the window's minimum size, so the window
        // fits a laptop's screen whatever a page holds, and no page is squeezed under its content.
        auto* scroll = new QScrollArea(dock);
        scroll->setWidgetResizable(true);
        scroll->setFrameShape(QFrame::NoFrame);
        scroll->setWidget(pages[i].first);
        dock->setWidget(scroll);
        dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable | QDockWidget::DockWidgetClosable);
        addDockWidget(Qt::RightDockWidgetArea, dock);
        if (i > 0) tabifyDockWidget(m_workspace.front(), dock);
        m_workspace.push_back(dock);
        connect(dock, &QDockWidget::visibilityChanged, this, [this, dock](bool visible) {
            if (!visible) return;
            m_currentWorkspace = dock;
            followTab();
        });
    }
    m_currentWorkspace = m_workspace.front();
    m_workspace.front()->raise();
    setDockNestingEnabled(true);
    setTabPosition(Qt::RightDockWidgetArea, QTabWidget::North);
    connect(m_pretrained, &PretrainedPanel::modelsChanged, this, [this] { m_explorer->setPretrainedModels(m_pretrained->models()); });
    connect(m_pretrained, &PretrainedPanel::lookInside, this,
            [this](const std::shared_ptr<const LanguageModel>& a, const std::shared_ptr<const LanguageModel>& b, const QString& prompt) {
                m_explorer->showLanguageModels(a, b, prompt);
                showExplorer();
            });
    connect(m_inspector, &InspectorPanel::openInExplorer, this, [this](const QString& path) {
        m_explorer->showCheckpoint(path);
        showExplorer();
    });
    connect(m_inspector, &InspectorPanel::openInTrainTab, this, [this](const QString& path) {
        openCheckpointInBackground(path, [this] { showTrain(); });
    });

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
    // The log's last line in the status bar; a click opens the log (folded away on a short screen).
    m_logLine = new QPushButton(this);
    m_logLine->setObjectName("logLine");
    m_logLine->setFlat(true);
    m_logLine->setStyleSheet("QPushButton#logLine { text-align: left; border: none; padding: 1px 6px; }");
    m_logLine->setCursor(Qt::PointingHandCursor);
    m_logLine->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_logLine->setToolTip(tr("The log's last line: click to open or close the log (View → Log)"));
    statusBar()->addWidget(m_logLine, 1);
    connect(m_logLine, &QPushButton::clicked, this, [this, logDock, runsDock] {
        const bool open = !logDock->isVisible() || logDock->visibleRegion().isEmpty();
        logDock->setVisible(open);
        runsDock->setVisible(open);
        if (open) logDock->raise();
    });
    // The runs brought forward get room for several rows; the log is fine short.
    connect(runsDock, &QDockWidget::visibilityChanged, this, [this, runsDock](bool visible) {
        const int missing = m_runs->heightForRows(6) - m_runs->height();
        if (visible && isVisible() && missing > 0) setBottomHeight(runsDock, statusBar()->y() - runsDock->y() + missing);
    });

    m_runs->setFolder(runsFolder());
    m_experiments->setRunsFolder(runsFolder());
    connect(m_experiments, &ExperimentsPanel::message, this, &MainWindow::log);
    connect(m_experiments, &ExperimentsPanel::errorMessage, this, &MainWindow::showError);
    connect(m_experiments, &ExperimentsPanel::runsChanged, m_runs, &RunBrowser::refresh);
    connect(m_runs, &RunBrowser::continueRequested, this, &MainWindow::resumeRun);
    connect(m_runs, &RunBrowser::exploreRequested, this, [this](const QString& dir) {
        m_explorer->showRun(dir);
        showExplorer();
    });
    connect(m_trainPanel->continueButton(), &QPushButton::clicked, this, [this] { resumeRun(m_session->runDir()); });
    connect(m_runs, &RunBrowser::overlayRequested, this, [this](const QStringList& dirs) {
        for (const QString& dir : dirs) {
            try {
                const RunRecord r = loadRun(dir);
                if (r.curves.empty()) {
                    log(tr("%1 has no evaluation to overlay").arg(dir));
                    continue;
                }
                if (r.curves.back().isError() != m_trainPanel->accuracyPlot()->errorMode()) {
                    showError(tr("%1: its curve (%2) does not share the plot's axis; pick the same kind of task first")
                                  .arg(QDir(m_runs->folder()).relativeFilePath(dir), r.config.task.kind));
                    continue;
                }
                m_trainPanel->accuracyPlot()->addCurve(runLegend(r), r.curves.back());
            } catch (const Error& e) {
                showError(e.message());
            }
        }
    });

    // A run cut short by a crash, a kill or a power cut: one line under the menu offers to continue it.
    m_recoveryBar = new RecoveryBar(this);
    addToolBar(Qt::TopToolBarArea, m_recoveryBar);
    m_recoveryScan = new BackgroundJob(this);
    connect(m_recoveryBar, &RecoveryBar::continueRequested, this, [this](const QString& dir) {
        if (m_session->busy()) {
            showError(tr("%1 was not continued: the Train tab is busy. Stop it, then continue the run from the Runs tab.")
                          .arg(QDir::toNativeSeparators(dir)));
            return;
        }
        showTrain();
        resumeRun(dir);
    });
    connect(m_recoveryBar, &RecoveryBar::dismissRequested, this, [this](const QString& dir) {
        if (dismissInterruptedRun(dir))
            log(tr("%1 is left where it stopped; Continue training in the Runs tab resumes it.").arg(QDir::toNativeSeparators(dir)));
        m_runs->refresh();
    });
    QTimer::singleShot(0, this, &MainWindow::findInterruptedRuns);

    m_statusJob = new QLabel(this);
    m_statusJob->setObjectName("statusJob");
    statusBar()->addPermanentWidget(m_statusJob);
    m_statusDevice = new QLabel(this);
    statusBar()->addPermanentWidget(m_statusDevice);
    auto* memoryTimer = new QTimer(this);  // the job runs in this process: its memory is the process's
    connect(memoryTimer, &QTimer::timeout, this, &MainWindow::updateJobStatus);
    memoryTimer->start(2000);
    qApp->installEventFilter(this);  // right-click on any plot or table: export, copy

    buildMenus();
    connect(m_trainPanel->trainButton(), &QPushButton::clicked, this, &MainWindow::startTraining);
    connect(m_trainPanel->pauseButton(), &QPushButton::clicked, this, &MainWindow::togglePause);
    connect(m_trainPanel->stopButton(), &QPushButton::clicked, this, &MainWindow::stopWork);
    connect(m_trainPanel->evaluateButton(), &QPushButton::clicked, this, &MainWindow::startEvaluation);
    connect(m_trainPanel->evalCancelButton(), &QPushButton::clicked, m_session, &TrainingSession::stop);
    connect(m_session, &TrainingSession::evaluationProgress, this, [this](int done, int total) {
        m_trainPanel->setStatus(tr("evaluating: %1 of %2 lengths").arg(done).arg(total), 1000 * done / std::max(1, total));
    });
    connect(m_settings, &SettingsPanel::changed, this, &MainWindow::updateActions);
    connect(m_settings, &SettingsPanel::changed, this, [this] {
        m_trainPanel->setTask(m_settings->config().task);
        if (!isTraining()) m_trainPanel->setMechanismsShown(mechanismsApply(m_settings->config()));  // a run's stays while it trains
    });
    m_trainPanel->setMechanismsShown(mechanismsApply(m_settings->config()));
    connect(m_settings, &SettingsPanel::errorMessage, this, &MainWindow::showError);
    connect(m_settings, &SettingsPanel::presetLoaded, this, [this](const QString& name) {
        const ExperimentConfig c = m_settings->config();
        m_trainPanel->setTask(c.task, true);
        log(tr("Preset %1 loaded.").arg(name));
    });
    connectSession();
    updateStatus();
    updateJobStatus();
    m_trainPanel->showModel(model());
    updateActions();
    m_defaultLayout = saveState(kLayoutVersion);
    // Chosen by hand, the form stays as the user put it.
    connect(settingsDock->toggleViewAction(), &QAction::triggered, this, [this] { setSettingsFollowTab(false); });
    connect(settingsDock, &QDockWidget::topLevelChanged, this, [this](bool floating) {
        if (floating) setSettingsFollowTab(false);
    });
}

MainWindow::~MainWindow()
{
    // The session, a child, stops its jobs and waits for the training thread; what it reports
    // on the way goes nowhere.
    disconnect(m_session, nullptr, this, nullptr);
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    m_openAction = file->addAction(tr("&Open checkpoint..."), this, &MainWindow::openCheckpointDialog);
    m_openAction->setShortcut(QKeySequence::Open);
    file->addAction(tr("&Inspect checkpoint file..."), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Inspect a checkpoint"), QString(),
                                                          checkpointFileFilter());
        if (path.isEmpty()) return;
        showInspector();
        m_inspector->openFile(path);
    });
    m_recentMenu = file->addMenu(tr("Open &recent checkpoint"));
    m_recentMenu->setObjectName("recentMenu");
    connect(m_recentMenu, &QMenu::aboutToShow, this, &MainWindow::fillRecentMenu);
    m_saveAction = file->addAction(tr("&Save checkpoint..."), this, &MainWindow::saveCheckpointDialog);
    m_saveAction->setShortcut(QKeySequence::Save);
    file->addSeparator();
    m_exportAction = file->addAction(tr("&Export figure..."), QKeySequence(Qt::CTRL | Qt::Key_E), this, [this] { exportFigure(nullptr, false); });
    m_exportAction->setObjectName("exportAction");
    file->addAction(tr("Export the whole &tab as one figure..."), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E), this,
                    [this] { exportFigure(nullptr, true); });
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
    edit->addAction(tr("&Copy figure"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C), this, [this] { copyFigure(nullptr); });
    edit->addSeparator();
    edit->addAction(tr("&Preferences..."), QKeySequence::Preferences, this, &MainWindow::showPreferences);

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->setObjectName("viewMenu");
    for (QDockWidget* d : m_workspace) view->addAction(d->toggleViewAction());
    view->addSeparator();
    for (const char* id : {"settingsDock", "logDock", "runsDock"})
        if (auto* d = findChild<QDockWidget*>(id)) view->addAction(d->toggleViewAction());
    m_followAction = view->addAction(tr("Experiment form &follows the tab"), this, [this](bool on) { setSettingsFollowTab(on); });
    m_followAction->setObjectName("followTabAction");
    m_followAction->setCheckable(true);
    m_followAction->setChecked(m_settingsFollowTab);
    m_followAction->setToolTip(tr("Show the Experiment form beside the Train tab only, and give the other tabs its width"));
    view->addSeparator();
    view->addAction(tr("&Save layout as..."), this, [this] {
        bool ok = false;
        const QString name = QInputDialog::getText(this, tr("Save layout"), tr("Name of this layout:"), QLineEdit::Normal, tr("My layout"), &ok);
        if (ok && !name.trimmed().isEmpty()) saveLayout(name.trimmed());
    });
    m_layoutsMenu = view->addMenu(tr("&Restore layout"));
    connect(m_layoutsMenu, &QMenu::aboutToShow, this, &MainWindow::fillLayoutsMenu);
    view->addAction(tr("Reset &layout"), this, [this] { resetLayout(); });

    QMenu* run = menuBar()->addMenu(tr("&Run"));
    m_trainAction = run->addAction(tr("&Train"), QKeySequence(Qt::Key_F5), this, &MainWindow::startTraining);
    run->addAction(tr("&Pause / resume"), QKeySequence(Qt::Key_F6), this, &MainWindow::togglePause);
    m_stopAction = run->addAction(tr("&Stop"), QKeySequence(Qt::Key_Escape), this, &MainWindow::stopWork);
    run->addAction(tr("&Evaluate"), QKeySequence(Qt::Key_F7), this, &MainWindow::startEvaluation);
    run->addSeparator();
    run->addAction(tr("E&xperiment presets (sweeps)..."), QKeySequence(Qt::CTRL | Qt::Key_R), this, &MainWindow::showExperiments);
    run->addAction(tr("&Look inside (Explore)"), QKeySequence(Qt::CTRL | Qt::Key_I), this, &MainWindow::showExplorer);

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Welcome"), this, &MainWindow::showWelcome);
    help->addAction(tr("&About Parrotscope"), this, &MainWindow::showAbout);
}

void MainWindow::showWorkspace(int index)
{
    // The form placed so that only the tab coming to the front is laid out again: hidden before
    // another tab is raised into its width, shown after the Train tab is (the tab going away is
    // never resized on its way out).
    QDockWidget* d = m_workspace[size_t(index)];
    m_currentWorkspace = d;
    const bool formBeside = d == m_workspace.front();
    if (!formBeside) followTab();
    d->show();
    d->raise();
    if (formBeside) followTab();
}

void MainWindow::showTrain() { showWorkspace(0); }

void MainWindow::showExperiments() { showWorkspace(1); }

void MainWindow::showExplorer() { showWorkspace(2); }

void MainWindow::showInspector() { showWorkspace(3); }
void MainWindow::showPretrained() { showWorkspace(4); }

QWidget* MainWindow::currentPanel() const { return m_currentWorkspace ? pageOf(m_currentWorkspace) : nullptr; }

QString MainWindow::currentPanelName() const { return m_currentWorkspace ? m_currentWorkspace->windowTitle() : QString(); }

ExportDialog* MainWindow::exportDialog() const { return m_exportDialog.data(); }

ExportDialog* MainWindow::exportFigure(QCustomPlot* plot, bool wholePanel)
{
    QWidget* panel = currentPanel();
    QString name = currentPanelName();
    if (plot) {  // the panel the plot is in
        for (QDockWidget* d : m_workspace)
            if (d->widget()->isAncestorOf(plot)) {
                panel = pageOf(d);
                name = d->windowTitle();
            }
    }
    if (!plot && panelPlots(panel, 100, 100).empty()) {
        showError(tr("The %1 tab shows no plot to export.").arg(name));
        return nullptr;
    }
    if (m_exportDialog) m_exportDialog->close();
    m_exportDialog = new ExportDialog(panel, name, plot, wholePanel, this);
    m_exportDialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_exportDialog, &ExportDialog::exported, this, [this](const QString& path) { log(tr("Figure saved to %1").arg(path)); });
    connect(m_exportDialog, &ExportDialog::failed, this, [this](const QString& message) { log(tr("Export failed: %1").arg(message)); });
    m_exportDialog->open();  // window-modal, never blocking the event loop
    return m_exportDialog;
}

bool MainWindow::copyFigure(QCustomPlot* plot)
{
    if (!plot) {
        const std::vector<PlacedPlot> plots = panelPlots(currentPanel(), 100, 100);
        if (plots.empty()) {
            showError(tr("The %1 tab shows no plot to copy.").arg(currentPanelName()));
            return false;
        }
        plot = plots.front().plot;
        for (const PlacedPlot& p : plots)  // the plot under the mouse, when there is one
            if (p.plot->rect().contains(p.plot->mapFromGlobal(QCursor::pos()))) plot = p.plot;
    }
    const QImage image = plotImage(*plot, savedExportOptions());
    QGuiApplication::clipboard()->setImage(image);
    statusBar()->showMessage(tr("Copied %1 to the clipboard (%2 × %3)").arg(plotName(*plot)).arg(image.width()).arg(image.height()), 5000);
    return !image.isNull();
}

QWidget* MainWindow::pageOf(const QDockWidget* dock)
{
    auto* scroll = qobject_cast<QScrollArea*>(dock->widget());
    return scroll ? scroll->widget() : dock->widget();
}

QRect MainWindow::firstGeometry(const QRect& available, const QSize& preferred, const QMargins& frame)
{
    const QSize room = available.size().shrunkBy(frame);
    const QSize size = preferred.boundedTo(room);
    // centred in what the screen holds, the frame included
    const QPoint topLeft = available.topLeft() + QPoint(frame.left() + (room.width() - size.width()) / 2,
                                                        frame.top() + (room.height() - size.height()) / 2);
    return QRect(topLeft, size);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() == QEvent::MouseButtonPress && watched->parent() == this) {
        // A workspace tab pressed in the docks' tab bar: the form hidden before the switch, so that
        // the tab is laid out once, at its width (as showWorkspace does; the Train tab shows the
        // form after it is raised, when the tab's visibility changes).
        if (auto* bar = qobject_cast<QTabBar*>(watched)) {
            const int tab = bar->tabAt(static_cast<QMouseEvent*>(event)->position().toPoint());
            for (QDockWidget* d : m_workspace)
                if (tab >= 0 && bar->tabText(tab) == d->windowTitle() && d != m_currentWorkspace && d != m_workspace.front() &&
                    !d->isFloating()) {
                    m_currentWorkspace = d;
                    followTab();
                }
        }
        return QMainWindow::eventFilter(watched, event);
    }
    if (event->type() != QEvent::ContextMenu) return QMainWindow::eventFilter(watched, event);
    auto* widget = qobject_cast<QWidget*>(watched);
    QWidget* window = widget ? widget->window() : nullptr;
    const bool ours = window == this || (qobject_cast<QDockWidget*>(window) && window->parentWidget() == this);  // floating docks too
    if (!ours) return QMainWindow::eventFilter(watched, event);
    auto* ce = static_cast<QContextMenuEvent*>(event);
    if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        QMenu menu(this);
        menu.addAction(tr("Export figure..."), this, [this, plot] { exportFigure(plot, false); });
        menu.addAction(tr("Copy figure to clipboard"), this, [this, plot] { copyFigure(plot); });
        menu.addAction(tr("Export the whole tab as one figure..."), this, [this, plot] { exportFigure(plot, true); });
        menu.exec(ce->globalPos());
        return true;
    }
    QTableWidget* table = qobject_cast<QTableWidget*>(widget);
    if (!table && widget->parentWidget()) table = qobject_cast<QTableWidget*>(widget->parentWidget());  // its viewport
    if (table && table->rowCount() > 0) {
        QMenu menu(this);
        menu.addAction(tr("Export table as CSV..."), this, [this, table] {
            const QString path = QFileDialog::getSaveFileName(this, tr("Export table"), exportFolder(),
                                                              tr("CSV (*.csv)"));
            if (path.isEmpty()) return;
            try {
                writeTextFile(path, tableCsv(*table), "the table");
                log(tr("Table saved to %1").arg(path));
            } catch (const Error& e) {
                showError(e.message());
            }
        });
        menu.addAction(tr("Copy table"), this, [table] { QGuiApplication::clipboard()->setText(tableCsv(*table)); });
        menu.exec(ce->globalPos());
        return true;
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::saveLayout(const QString& givenName)
{
    QString name = givenName;
    name.replace('/', '-').replace('\\', '-');  // a slash would make a settings group of its own
    const QString error = writeSettings({{QString("layouts/%1/state").arg(name), saveState(kLayoutVersion)},
                                         {QString("layouts/%1/geometry").arg(name), saveGeometry()},
                                         {QString("layouts/%1/formFollowsTab").arg(name), m_settingsFollowTab}});
    if (!error.isEmpty()) {
        showError(tr("The layout \"%1\" was not saved. %2; the layouts saved before are kept.").arg(name, error));
        return;
    }
    log(tr("Layout \"%1\" saved (View → Restore layout).").arg(name));
}

QStringList MainWindow::savedLayouts() const
{
    QSettings s;
    s.beginGroup("layouts");
    return s.childGroups();
}

bool MainWindow::restoreLayout(const QString& name)
{
    QSettings s;
    const QByteArray state = s.value(QString("layouts/%1/state").arg(name)).toByteArray();
    // a layout saved without the flag keeps the form where it was saved
    if (!restoreDocks(state, s.value(QString("layouts/%1/formFollowsTab").arg(name), false).toBool())) {
        showError(tr("The layout \"%1\" cannot be restored (it was saved by another version, or removed).").arg(name));
        return false;
    }
    restoreGeometry(s.value(QString("layouts/%1/geometry").arg(name)).toByteArray());
    m_recoveryBar->sync();  // a layout holds no interrupted run
    log(tr("Layout \"%1\" restored.").arg(name));
    return true;
}

void MainWindow::resetLayout()
{
    restoreState(m_defaultLayout, kLayoutVersion);
    for (QDockWidget* d : findChildren<QDockWidget*>()) d->show();
    m_recoveryBar->sync();
    setSettingsFollowTab(true, false);
    fitDocks();
    showTrain();
}

bool MainWindow::restoreSession()
{
    QSettings s;
    const QByteArray state = s.value("window/state").toByteArray();
    if (state.isEmpty()) return false;
    restoreGeometry(s.value("window/geometry").toByteArray());
    m_sessionRestored = restoreDocks(state, s.value("window/formFollowsTab", false).toBool());
    m_recoveryBar->sync();
    return m_sessionRestored;
}

bool MainWindow::restoreDocks(const QByteArray& state, bool formFollowsTab)
{
    // the form's rule set before the docks move, so that the tabs shown while they do are not
    // followed; kept as it was when the state cannot be restored
    const bool before = m_settingsFollowTab;
    setSettingsFollowTab(formFollowsTab, false);
    if (state.isEmpty() || !restoreState(state, kLayoutVersion)) {
        setSettingsFollowTab(before, false);
        return false;
    }
    m_followedTab = m_currentWorkspace;  // as restored
    return true;
}

void MainWindow::fillLayoutsMenu()
{
    m_layoutsMenu->clear();
    const QStringList names = savedLayouts();
    if (names.isEmpty()) m_layoutsMenu->addAction(tr("(no saved layouts: View → Save layout as…)"))->setEnabled(false);
    for (const QString& name : names) m_layoutsMenu->addAction(name, this, [this, name] { restoreLayout(name); });
    if (!names.isEmpty()) {
        m_layoutsMenu->addSeparator();
        QMenu* remove = m_layoutsMenu->addMenu(tr("Delete"));
        for (const QString& name : names) remove->addAction(name, this, [name] { QSettings().remove("layouts/" + name); });
    }
}

void MainWindow::fillRecentMenu()
{
    m_recentMenu->clear();
    const QStringList recent = AppSettings::load().recentCheckpoints;
    if (recent.isEmpty()) m_recentMenu->addAction(tr("(none yet)"))->setEnabled(false);
    for (const QString& path : recent) m_recentMenu->addAction(path, this, [this, path] { openCheckpointInBackground(path); });
}

void MainWindow::updateJobStatus()
{
    // resident memory of this process, where the jobs (training, evaluation, sweeps) run
    qint64 rss = 0;
    QFile statm("/proc/self/statm");
    if (statm.open(QIODevice::ReadOnly)) rss = statm.readAll().split(' ').value(1).toLongLong() * sysconf(_SC_PAGESIZE);
    const QString job = !m_session->activity().isEmpty() ? m_session->activity() : m_experiments->isRunning() ? tr("sweep") : QString();
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

QString MainWindow::runsFolder() const
{
    return AppSettings::load().runsFolder;
}

bool MainWindow::loadPreset(const QString& name) { return m_settings->selectPreset(name); }

LossPlot* MainWindow::lossPlot() const { return m_trainPanel->lossPlot(); }
AccuracyPlot* MainWindow::accuracyPlot() const { return m_trainPanel->accuracyPlot(); }
QPushButton* MainWindow::trainButton() const { return m_trainPanel->trainButton(); }
QPushButton* MainWindow::pauseButton() const { return m_trainPanel->pauseButton(); }
QPushButton* MainWindow::stopButton() const { return m_trainPanel->stopButton(); }
QLineEdit* MainWindow::evalLengthsEdit() const { return m_trainPanel->evalLengthsEdit(); }
QPushButton* MainWindow::evaluateButton() const { return m_trainPanel->evaluateButton(); }

void MainWindow::connectSession()
{
    connect(m_session, &TrainingSession::modelChanged, this, [this] {
        m_trainPanel->showModel(model());
        updateActions();
    });
    connect(m_session, &TrainingSession::busyChanged, this, &MainWindow::updateActions);
    connect(m_session, &TrainingSession::runStarted, this, [this](const ExperimentConfig& c, const QString& description, bool resuming) {
        if (resuming) m_settings->setCheckpointConfig(c, resumeFilePath(m_session->runDir()), model().step());
        m_trainPanel->setCanContinue(false);
        m_trainPanel->startFresh(c.task, resuming ? tr("resuming...") : tr("starting..."));
        m_trainPanel->setMechanismsShown(mechanismsApply(c));
        log(description);
    });
    connect(m_session, &TrainingSession::progress, this, &MainWindow::onProgress);
    connect(m_session, &TrainingSession::evaluated, this, &MainWindow::onEvaluated);
    connect(m_session, &TrainingSession::mechanisms, m_trainPanel, &TrainPanel::showMechanisms);
    connect(m_session, &TrainingSession::logMessage, this, &MainWindow::log);
    connect(m_session, &TrainingSession::trainingFinished, this, &MainWindow::onTrainingFinished);
    connect(m_session, &TrainingSession::evaluationFinished, this, [this](const LengthCurve& result, bool partial) {
        m_trainPanel->setStatus(partial ? tr("evaluation cancelled") : tr("evaluated"));
        if (!result.empty()) {
            m_trainPanel->addEvaluation(result);
            log(tr("Evaluation at step %1, %2 examples per point: %3").arg(result.step).arg(m_evaluationSamples).arg(result.summary()));
        }
        emit evaluationFinished(result);
    });
    connect(m_session, &TrainingSession::opened, this, [this](const QString& path) {
        m_trainPanel->setBusy(false);
        m_settings->setCheckpointConfig(model().config(), path, model().step());
        m_trainPanel->setCanContinue(false);
        m_trainPanel->startFresh(model().config().task, tr("loaded"));
        log(tr("Opened %1: %2").arg(path, model().summary()));
        AppSettings::rememberCheckpoint(path);
        const auto then = std::exchange(m_afterOpen, {});
        if (then) then();
        emit checkpointOpened(true);
    });
    connect(m_session, &TrainingSession::openCancelled, this, [this](const QString& path) {
        m_trainPanel->setBusy(false);
        m_trainPanel->setStatus(tr("opening cancelled"));
        log(tr("Opening %1 cancelled; the current model is kept.").arg(path));
        m_afterOpen = {};
        emit checkpointOpened(false);
    });
    connect(m_session, &TrainingSession::openFailed, this, [this](const QString& message) {
        m_trainPanel->setBusy(false);
        m_trainPanel->setStatus(tr("idle"));
        m_afterOpen = {};
        showError(message);
        emit checkpointOpened(false);
    });
    connect(m_session, &TrainingSession::evaluationFailed, this, &MainWindow::showError);
}

bool MainWindow::isTraining() const { return m_session->isTraining(); }
bool MainWindow::isEvaluating() const { return m_session->isEvaluating(); }
bool MainWindow::isOpening() const { return m_session->isOpening(); }
const Model& MainWindow::model() const { return m_session->model(); }
QString MainWindow::currentRunDir() const { return m_session->runDir(); }

void MainWindow::startTraining()
{
    if (m_session->busy()) return;
    if (model().isNull() || m_session->checkpoint().isEmpty()) return trainFresh();
    if (m_trainChoice && m_trainChoice->isVisible()) return m_trainChoice->raise();
    const ExperimentConfig c = m_settings->config();
    // Only the architecture has to match: the task and training settings are the form's.
    const QStringList otherModel = overridesBetween(model().config(), c).filter(QRegularExpression("^model\\."));
    auto* box = new QMessageBox(QMessageBox::Question, tr("Train"),
                                tr("The Train tab holds the model opened from %1, trained to step %2. Continue training it, "
                                   "or start a fresh model with these settings?")
                                    .arg(SettingsPanel::checkpointName(m_session->checkpoint())).arg(model().step()),
                                QMessageBox::Cancel, this);
    box->setObjectName("trainChoice");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setInformativeText(
        tr("Continue: %1 more steps (the Steps setting) from its weights, counted on from step %2, into a new run folder whose "
           "config.json names the checkpoint. The optimiser starts afresh, since a checkpoint does not hold its state, so the "
           "learning rate warms up and decays again over these steps. (A run folder stopped part-way resumes exactly, "
           "optimiser state and all: the Runs tab's Continue training.)\n\nFresh: new weights from step 0 with these settings.")
            .arg(c.train.steps).arg(model().step())
        + (otherModel.isEmpty() ? QString() : tr("\n\nIt cannot continue: the settings describe another model (%1).").arg(otherModel.join(", "))));
    QPushButton* continueButton = box->addButton(tr("Continue this model"), QMessageBox::AcceptRole);
    continueButton->setObjectName("continueModel");
    continueButton->setEnabled(otherModel.isEmpty());
    QPushButton* freshButton = box->addButton(tr("Start a fresh model"), QMessageBox::AcceptRole);
    freshButton->setObjectName("freshModel");
    box->setDefaultButton(otherModel.isEmpty() ? continueButton : freshButton);
    connect(continueButton, &QPushButton::clicked, this, &MainWindow::continueTraining);
    connect(freshButton, &QPushButton::clicked, this, &MainWindow::trainFresh);
    m_trainChoice = box;
    box->open();  // window-modal: the event loop and the plots keep going
}

QMessageBox* MainWindow::trainChoiceBox() const { return m_trainChoice.data(); }

void MainWindow::trainFresh() { startRun(false); }

void MainWindow::continueTraining() { startRun(true); }

void MainWindow::startRun(bool continueModel)
{
    if (m_session->busy() || (continueModel && model().isNull())) return;
    const QStringList problems = m_settings->problems();
    if (!problems.isEmpty()) {
        showError(tr("Cannot train with these settings:\n%1").arg(problems.join("\n")));
        return;
    }
    try {
        m_session->start(m_settings->config(), continueModel, runsFolder());
    } catch (const Error& e) {
        showError(e.message());
    }
}

void MainWindow::resumeRun(const QString& runDir)
{
    if (m_session->busy()) return;
    try {
        m_session->resume(runDir);
        return;
    } catch (const Error& e) {
        if (runStatus(runDir) != "diverged" || !QFileInfo::exists(resumeFilePath(runDir))) {
            showError(e.message());
            return;
        }
    }
    // a divergence goes on only with a change: ask for a lower rate
    double lr = 0;
    try {
        lr = loadConfigFile(QDir(runDir).filePath("config.json")).train.lr;
    } catch (const Error& e) {
        showError(e.message());
        return;
    }
    bool ok = false;
    const double lower = QInputDialog::getDouble(this, tr("Continue a run that diverged"),
                                                 tr("This run diverged at learning rate %1. Resume it from its last good "
                                                    "checkpoint with the learning rate:").arg(lr, 0, 'g', 3),
                                                 lr / 2, 1e-9, 100, 9, &ok);
    if (!ok) return;
    try {
        m_session->resume(runDir, {QString("train.lr=%1").arg(lower, 0, 'g', 9)});
    } catch (const Error& e) {
        showError(e.message());
    }
}

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
    m_trainPanel->showProgress(p, model());
    // At the last step, wait for the final evaluation (onTrainingFinished takes the shot).
    if (m_screenshotStep >= 0 && p.step >= m_screenshotStep && p.step < p.totalSteps) {
        m_screenshotStep = -1;
        // Let the coalesced replot land first.
        QTimer::singleShot(200, this, [this] { saveScreenshot(m_screenshotPath); close(); });
    }
}

void MainWindow::onEvaluated(const LengthCurve& c)
{
    m_trainPanel->showCurve(c);
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
    m_trainPanel->setPaused(false);
    m_trainPanel->setStatus(tr("%1 at step %2").arg(statusName(o.status)).arg(o.step));
    m_trainPanel->showEnded();
    m_trainPanel->setCanContinue(m_session->resumable());
    m_runs->refresh();  // the run just written
    if (o.status == TrainOutcome::Status::Finished || o.status == TrainOutcome::Status::Cancelled)
        log(o.message + (o.checkpoint.isEmpty() ? QString() : tr(" Checkpoint: %1").arg(o.checkpoint)));
    else
        showError(o.message);
    if (!o.finalCurve.empty()) {
        m_trainPanel->showCurve(o.finalCurve);
        log(tr("Final evaluation: %1").arg(o.finalCurve.summary()));
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
    if (!isTraining()) return;
    const bool pause = !m_session->isPaused();
    m_session->setPaused(pause);
    m_trainPanel->setPaused(pause);
    log(pause ? tr("Paused.") : tr("Resumed."));
}

void MainWindow::stopWork()
{
    if (isTraining()) m_trainPanel->setStatus(tr("stopping..."));
    else if (isOpening()) m_trainPanel->setStatus(tr("cancelling..."));
    m_session->stop();  // an evaluation's lengths measured so far are still shown
}

void MainWindow::startEvaluation()
{
    if (m_session->busy()) return;
    std::vector<int> lengths;
    try {
        if (model().isNull()) throw Error(tr("There is no model to evaluate: train one or open a checkpoint."));
        lengths = m_trainPanel->evaluationLengths();
        m_evaluationSamples = m_trainPanel->evaluationSamples();
        m_session->evaluate(lengths, m_evaluationSamples);
    } catch (const Error& e) {
        showError(e.message());
        return;
    }
    m_trainPanel->setStatus(tr("evaluating..."), 0);
}

bool MainWindow::openCheckpoint(const QString& path)
{
    try {
        m_session->openNow(path);
        return true;
    } catch (const Error& e) {
        showError(e.message());
        return false;
    }
}

void MainWindow::openCheckpointInBackground(const QString& path, std::function<void()> then)
{
    try {
        m_session->open(path);
    } catch (const Error& e) {
        showError(e.message());
        return;
    }
    m_afterOpen = std::move(then);
    m_trainPanel->setBusy(true);  // reading and converting has no steps to count
    m_trainPanel->setStatus(tr("opening %1...").arg(QFileInfo(path).fileName()));
    log(tr("Opening %1 (Esc cancels)").arg(path));
}

bool MainWindow::saveCheckpoint(const QString& path)
{
    try {
        m_session->save(path);
        log(tr("Saved checkpoint %1 (step %2).").arg(path).arg(model().step()));
        return true;
    } catch (const Error& e) {
        showError(e.message());
        return false;
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

void MainWindow::openCheckpointDialog()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open checkpoint"), AppSettings::load().lastCheckpoint,
                                                      checkpointFileFilter());
    if (!path.isEmpty()) openCheckpointInBackground(path);
}

void MainWindow::saveCheckpointDialog()
{
    const QString runDir = m_session->runDir();
    const QString suggested = QDir(runDir.isEmpty() ? QDir::homePath() : runDir)
                                  .filePath(QString("%1-step%2.safetensors").arg(model().config().name).arg(model().step()));
    const QString path = QFileDialog::getSaveFileName(this, tr("Save checkpoint"), suggested,
                                                      tr("Safetensors checkpoints (*.safetensors)"));
    if (!path.isEmpty()) saveCheckpoint(path);
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
    // Three ways in, one click each; window-modal but not blocking, closed by any of them.
    auto* box = new QDialog(this);
    box->setObjectName("welcome");
    box->setWindowTitle(tr("Welcome to Parrotscope"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    auto* layout = new QVBoxLayout(box);
    auto* intro = new QLabel(tr("<b>Why do Transformers copy and look things up in their context better than "
                                "state-space models, and what does it look like inside?</b><br>Start with one of these:"),
                             box);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    const auto choice = [box, layout](const QString& name, const QString& title, const QString& sentence, auto then) {
        auto* b = new QCommandLinkButton(title, sentence, box);
        b->setObjectName(name);
        layout->addWidget(b);
        QObject::connect(b, &QCommandLinkButton::clicked, box, [box, then] {
            box->accept();
            then();
        });
        return b;
    };
    choice("welcomeTrain", tr("Train the default experiment and watch it"),
           tr("A two-layer Hard-ALiBi Transformer learns to copy strings: the loss, the moment its lookup heads form, "
              "and its accuracy against string length fill in live (under a minute on two cores)."),
           [this] {
               loadPreset(defaultPresetName());
               showTrain();
               startTraining();
           });
    choice("welcomeExplore", tr("Open the two bundled models side by side"),
           tr("A trained Transformer and a trained Mamba read the same string: the Transformer's n-gram lookup heads "
              "beside Mamba's implicit attention, with their mistakes marked."),
           [this] { showExplorer(); });
    choice("welcomeFinding", tr("Run one finding: length generalisation"),
           tr("Six models learn to copy strings of 1-8 letters and are tested up to 80: only the Hard-ALiBi Transformer "
              "copies beyond what it was trained on (about 2 minutes on two cores; the figure fills in as runs finish)."),
           [this] {
               showExperiments();
               m_experiments->selectPreset("length-generalisation");
               m_experiments->run();
           });
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, box);
    auto* later = new QLabel(tr("Help → Welcome shows this again."), box);
    later->setEnabled(false);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(later, 1);
    bottom->addWidget(close);
    layout->addLayout(bottom);
    connect(close, &QDialogButtonBox::rejected, box, &QDialog::reject);
    box->setMinimumWidth(std::min(620, std::max(420, width() - 80)));
    AppSettings::markWelcomed();
    box->open();
    return box;
}

void MainWindow::showEvent(QShowEvent* e)
{
    QMainWindow::showEvent(e);
    if (m_shownOnce) return;
    m_shownOnce = true;
    if (!m_sessionRestored) fitDocks();
}

void MainWindow::fitDocks()
{
    // The first layout: the form at its width, a short log, the rest for the views. On a short
    // screen (a laptop's 768 lines) the log folds into its line in the status bar, so that each
    // tab's main view is whole.
    auto* settingsDock = findChild<QDockWidget*>("settingsDock");
    auto* logDock = findChild<QDockWidget*>("logDock");
    const int sep = style()->pixelMetric(QStyle::PM_DockWidgetSeparatorExtent, nullptr, this);
    const int form = std::clamp(width() / 5, settingsDock->minimumWidth(), 400);
    const bool shortWindow = height() < kFoldLogBelow;
    logDock->setVisible(!shortWindow);
    findChild<QDockWidget*>("runsDock")->setVisible(!shortWindow);
    if (!shortWindow) {
        logDock->raise();
        setBottomHeight(logDock, std::clamp((statusBar()->y() - m_currentWorkspace->y()) / 8, 110, 160));
    }
    if (settingsDock->isVisible()) resizeDocks({settingsDock, m_currentWorkspace}, {form, width() - form - sep}, Qt::Horizontal);
}

void MainWindow::setSettingsFollowTab(bool on, bool apply)
{
    m_settingsFollowTab = on;
    m_followedTab = nullptr;
    if (m_followAction) m_followAction->setChecked(on);
    if (apply) followTab();
}

void MainWindow::followTab()
{
    // The form applies to the Train tab only (Experiments has its own presets; Explore, Inspect
    // and Pretrained show models and files): elsewhere its width goes to the tab.
    // Only when the tab in front changes: the form shown or hidden relays the docks out, which
    // tells the same tab again that it is visible.
    auto* settingsDock = findChild<QDockWidget*>("settingsDock");
    if (!m_settingsFollowTab || !settingsDock || settingsDock->isFloating() || !m_currentWorkspace) return;
    if (m_followedTab == m_currentWorkspace) return;
    m_followedTab = m_currentWorkspace;
    const bool wanted = m_currentWorkspace == m_workspace.front();
    if (settingsDock->isHidden() == wanted) settingsDock->setVisible(wanted);  // (before the window is shown too)
    settingsDock->toggleViewAction()->setChecked(wanted);  // View → Experiment says what is shown
}

void MainWindow::setBottomHeight(QDockWidget* bottom, int height)
{
    // Without a central widget the dock areas share the height in proportion to their sizes, so
    // the bottom one and those above are sized together to add up to the height there is (the
    // bottom one alone is undone by that sharing). The form is hidden beside most tabs.
    auto* settingsDock = findChild<QDockWidget*>("settingsDock");
    const int sep = style()->pixelMetric(QStyle::PM_DockWidgetSeparatorExtent, nullptr, this);
    const auto docked = [](const QDockWidget* d) { return d && d->isVisible() && !d->isFloating(); };
    if (!docked(bottom) || !docked(m_currentWorkspace)) return;  // a layout of the user's own
    const int above = statusBar()->y() - m_currentWorkspace->y() - height - sep;
    if (above <= 0) return;
    if (docked(settingsDock)) resizeDocks({settingsDock, m_currentWorkspace, bottom}, {above, above, height}, Qt::Vertical);
    else resizeDocks({m_currentWorkspace, bottom}, {above, height}, Qt::Vertical);
}

void MainWindow::closeEvent(QCloseEvent* e)
{
    if (isTraining()) log(tr("Stopping training before closing; the last checkpoint is kept in %1").arg(m_session->runDir()));
    m_session->stop();
    if (m_experiments->isRunning()) {
        log(tr("Stopping the sweep before closing; its finished runs are kept, and Run resumes it"));
        m_experiments->cancel();
    }
    // the next start comes back to this window and layout (a full disk keeps the last one saved)
    writeSettings({{"window/geometry", saveGeometry()}, {"window/state", saveState(kLayoutVersion)}, {"window/formFollowsTab", m_settingsFollowTab}});
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
    const bool busy = m_session->busy();
    const bool trainable = m_settings->problems().isEmpty();
    m_trainPanel->setAvailable(!busy && trainable, isTraining(), busy, !busy && !model().isNull(), isEvaluating());
    m_trainPanel->continueButton()->setEnabled(!busy && m_session->resumable());
    m_trainAction->setEnabled(!busy && trainable);
    m_stopAction->setEnabled(busy);
    m_saveAction->setEnabled(!isTraining() && !model().isNull());
    m_openAction->setEnabled(!busy);
    m_settings->setEnabled(!busy);
}

void MainWindow::updateStatus()
{
    const Diagnostics d = diagnostics();
    m_statusDevice->setText(tr("%1 · %2 threads · %3").arg(deviceDescription()).arg(d.threads)
                                .arg(d.blasIsReference ? tr("reference BLAS (slow)") : d.blas.section(" (", 0, 0)));
}

}  // namespace parrot
