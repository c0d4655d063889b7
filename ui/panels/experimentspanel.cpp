#include "ui/panels/experimentspanel.h"

#include "base/error.h"
#include "base/experiments/bestrate.h"
#include "base/experiments/results.h"
#include "base/experiments/slurm.h"
#include "base/experiments/sweeprunner.h"
#include "base/figurecatalog.h"
#include "base/io/runfolder.h"
#include "core/device.h"
#include "core/model.h"
#include "figures/figures.h"
#include "ui/common/exportdialog.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <optional>

namespace parrot {

namespace {

constexpr int kSourceRole = Qt::UserRole + 1;     // the Experiment box's entry for a file: its path
constexpr int kFolderRole = Qt::UserRole + 2;     // ... for a sweep folder: the folder
constexpr int kOverridesRole = Qt::UserRole + 1;  // the Steps box's custom entry: its --set list

QString minutes(double seconds)
{
    if (seconds < 0) return QObject::tr("estimating…");
    if (seconds < 90) return QObject::tr("%1 s").arg(std::lround(seconds));
    return QObject::tr("%1 min").arg(seconds / 60, 0, 'f', 1);
}

}  // namespace

// The sweep to run: which one, its description, its folder, and the row that runs it.
QFormLayout* ExperimentsPanel::buildSweepForm()
{
    auto* form = new QFormLayout;
    auto* presetRow = new QHBoxLayout;
    m_preset = new QComboBox(this);
    m_preset->setObjectName("sweepPreset");
    for (const QString& name : sweepPresetNames()) m_preset->addItem(name, name);
    m_preset->setToolTip(tr("Bundled experiments: each reproduces one finding of the papers at laptop scale"));
    auto* open = new QPushButton(tr("Open sweep file…"), this);
    open->setToolTip(tr("A sweep JSON file of your own (see the README for its format)"));
    auto* openFolder = new QPushButton(tr("Open sweep folder…"), this);
    openFolder->setToolTip(tr("A folder a sweep wrote (with index.json): its runs as one group"));
    presetRow->addWidget(m_preset, 1);
    presetRow->addWidget(open);
    presetRow->addWidget(openFolder);
    form->addRow(tr("Experiment"), presetRow);
    m_description = new QLabel(this);
    m_description->setObjectName("sweepDescription");
    m_description->setWordWrap(true);
    m_description->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // a long description scrolls in a box of about six lines, so the figure keeps its room on a laptop
    auto* descriptionBox = new QScrollArea(this);
    descriptionBox->setObjectName("sweepDescriptionBox");
    descriptionBox->setWidget(m_description);
    descriptionBox->setWidgetResizable(true);
    descriptionBox->setFrameShape(QFrame::NoFrame);
    descriptionBox->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    descriptionBox->setMinimumHeight(60);
    descriptionBox->setMaximumHeight(m_description->fontMetrics().lineSpacing() * 6 + 6);
    form->addRow(descriptionBox);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    form->addRow(m_summary);
    auto* outRow = new QHBoxLayout;
    m_out = new QLineEdit(this);
    m_out->setObjectName("sweepOut");
    m_out->setToolTip(tr("The sweep's folder: configs/, runs/, logs/ and index.json. Finished runs in it are kept and skipped."));
    auto* browse = new QPushButton(tr("Browse…"), this);
    outRow->addWidget(m_out, 1);
    outRow->addWidget(browse);
    form->addRow(tr("Folder"), outRow);
    form->addRow(buildRunRow());
    connect(open, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Open sweep file"), QString(), tr("Sweep files (*.json)"));
        if (!f.isEmpty()) openSweepFile(f);
    });
    connect(openFolder, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, tr("Open sweep folder"), m_out->text());
        if (!d.isEmpty()) openSweepFolder(d);
    });
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(this, tr("Sweep folder"), m_out->text());
        if (!d.isEmpty()) m_out->setText(d);
    });
    return form;
}

// Where and how the runs train, Run and Stop, and the sweep's progress.
QHBoxLayout* ExperimentsPanel::buildRunRow()
{
    auto* runRow = new QHBoxLayout;
    m_jobs = new QSpinBox(this);
    m_jobs->setRange(1, 64);
    m_jobs->setValue(std::clamp(QThread::idealThreadCount(), 1, 4));
    m_jobs->setToolTip(tr("Runs trained at the same time, each in its own process; the cores are shared between them"));
    m_run = new QPushButton(tr("Run"), this);
    m_run->setObjectName("runSweep");
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName("stopSweep");
    m_stop->setToolTip(tr("Stop the running runs; finished runs are kept, and Run again redoes the rest"));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progressText = new QLabel(this);
    m_steps = new QComboBox(this);
    m_steps->setObjectName("sweepSteps");
    m_steps->addItem(tr("×1 (full sweep)"), 1);
    m_steps->addItem(tr("×1/4 (quick look)"), 4);
    m_steps->addItem(tr("×1/10 (quick look)"), 10);
    m_steps->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // a long custom entry does not widen the tab
    m_steps->setMinimumContentsLength(16);
    m_steps->setToolTip(tr("Every run's training steps: the full sweep, or a quick look with a quarter or a tenth of them "
                           "(warm-up, evaluations and autosaves scaled alike), in its own folder; its figure is a preview, "
                           "not the measured outcome"));
    m_thorough = new QCheckBox(tr("Thorough"), this);
    m_thorough->setObjectName("sweepThorough");
    m_thorough->setToolTip(tr("Train every model at each learning rate of a grid (Zoology's: 0.001, 0.003, 0.01, 0.03, or the "
                              "sweep file's own) with 3 seeds, and show each at the rate that does best on held-out prompts, "
                              "with its seed band; the results table names the rate. In a folder of its own; 12 times the runs "
                              "or more"));
    m_scale = new QComboBox(this);
    m_scale->setObjectName("sweepScale");
    m_scale->addItem(tr("laptop"), QString());
    m_scale->setToolTip(tr("The experiment's scale: laptop (its own settings, minutes on a few cores), or paper (as close "
                           "to the paper's string lengths and model sizes as fits minutes on one GPU; the description "
                           "says what it would take on this machine's CPU). In a folder of its own"));
    m_runOn = new QComboBox(this);
    m_runOn->setObjectName("runOn");
    m_runOn->setToolTip(tr("Where the runs train: as processes on this machine, or as a Slurm job array on a cluster profile "
                           "(parrotscope sweep --save-cluster NAME ... keeps one in %1). The sweep folder must be on a "
                           "filesystem the cluster's nodes share, with the same parrotscope on them.").arg(clustersFile()));
    runRow->addWidget(new QLabel(tr("Run on"), this));
    runRow->addWidget(m_runOn);
    runRow->addWidget(new QLabel(tr("Steps"), this));
    runRow->addWidget(m_steps);
    runRow->addWidget(m_thorough);
    m_scaleLabel = new QLabel(tr("Scale"), this);
    runRow->addWidget(m_scaleLabel);
    runRow->addWidget(m_scale);
    runRow->addWidget(new QLabel(tr("Jobs"), this));
    runRow->addWidget(m_jobs);
    runRow->addWidget(m_run);
    runRow->addWidget(m_stop);
    runRow->addWidget(m_progress, 1);
    runRow->addWidget(m_progressText);
    return runRow;
}

QWidget* ExperimentsPanel::buildFigurePage()
{
    auto* figurePage = new QWidget(this);
    auto* fv = new QVBoxLayout(figurePage);
    auto* fh = new QHBoxLayout;
    m_figure = new QComboBox(this);
    m_figure->setObjectName("sweepFigure");
    for (const FigureKind& f : figureCatalog())
        if (f.scopes & SweepFigure) m_figure->addItem(f.title, f.id);
    m_precision = new QSpinBox(this);
    m_precision->setRange(1, 64);
    m_precision->setValue(8);
    m_precision->setSuffix(tr(" bits/float"));
    m_precision->setToolTip(tr("Capacity figure: the effective precision of a state float (dashed lines); 32 is drawn solid"));
    m_export = new QPushButton(tr("Export…"), this);
    m_export->setToolTip(tr("Save the figure as PNG, PDF, SVG or its data as CSV"));
    m_logX = new QCheckBox(tr("log x"), this);
    m_logY = new QCheckBox(tr("log y"), this);
    m_logX->setToolTip(tr("Logarithmic x axis (examples seen, wall time, lengths)"));
    m_logY->setToolTip(tr("Logarithmic y axis (in-context error); zeros are not drawn"));
    m_figureNote = new QLabel(this);
    fh->addWidget(new QLabel(tr("Figure"), this));
    fh->addWidget(m_figure);
    fh->addWidget(m_precision);
    fh->addWidget(m_logX);
    fh->addWidget(m_logY);
    fh->addWidget(m_export);
    fh->addWidget(m_figureNote, 1);
    fv->addLayout(fh);
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumHeight(160);  // the tab fits a laptop's screen without scrolling
    fv->addWidget(m_plot, 1);
    return figurePage;
}

// The graded results table, with the length it grades at.
QWidget* ExperimentsPanel::buildTablePage()
{
    auto* tablePage = new QWidget(this);
    auto* tv = new QVBoxLayout(tablePage);
    auto* th = new QHBoxLayout;
    m_point = new QComboBox(this);
    m_point->addItem(tr("at the longest training length"), int(ResultPoint::InRange));
    m_point->addItem(tr("at the longest length evaluated"), int(ResultPoint::Longest));
    auto* rules = new QLabel(tr("Grades: ✓ pass  ▲ partial  ✗ fail (hover a cell for the value and the rule)"), this);
    rules->setToolTip(gradeRules());
    th->addWidget(new QLabel(tr("Accuracy"), this));
    th->addWidget(m_point);
    th->addWidget(rules, 1);
    tv->addLayout(th);
    m_table = new QTableWidget(this);
    m_table->setObjectName("resultsTable");
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setToolTip(gradeRules());
    tv->addWidget(m_table, 1);
    m_rates = new QLabel(this);  // a thorough sweep's: the rate each model got, and every rate's held-out score
    m_rates->setObjectName("sweepRates");
    m_rates->setWordWrap(true);
    m_rates->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_rates->setToolTip(tr("Each model's learning rate is chosen on held-out prompts at the longest training length, "
                           "never the test prompts or lengths: the mean over seeds at each rate; a run that diverged "
                           "counts as the worst. ⚠ in the table: the best rate is at the grid's edge, and one beyond it "
                           "may do better."));
    m_rates->setVisible(false);
    tv->addWidget(m_rates);
    return tablePage;
}

// Each run of a sweep submitted to Slurm, polled while the tab shows.
QWidget* ExperimentsPanel::buildRunsTable()
{
    m_runsTable = new QTableWidget(0, 5, this);
    m_runsTable->setObjectName("runStates");
    m_runsTable->setHorizontalHeaderLabels({tr("run"), tr("state"), tr("step"), tr("accuracy"), tr("detail")});
    m_runsTable->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_runsTable->verticalHeader()->setVisible(false);
    m_runsTable->horizontalHeader()->setStretchLastSection(true);
    m_runsTable->setToolTip(tr("Each run of a sweep submitted to Slurm, as `parrotscope sweep --status` shows it"));
    m_poll = new QTimer(this);
    m_poll->setInterval(5000);
    connect(m_poll, &QTimer::timeout, this, [this] {
        if (isVisible()) pollCluster();
    });
    return m_runsTable;
}

ExperimentsPanel::ExperimentsPanel(QWidget* parent) : QWidget(parent), m_exe(QCoreApplication::applicationFilePath())
{
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(buildSweepForm());
    m_tabs = new QTabWidget(this);
    m_tabs->addTab(buildFigurePage(), tr("Figure"));
    m_tabs->addTab(buildTablePage(), tr("Results table"));
    m_tabs->addTab(buildRunsTable(), tr("Runs"));
    reloadClusterProfiles();
    connect(m_runOn, &QComboBox::currentIndexChanged, this, &ExperimentsPanel::updateState);
    layout->addWidget(m_tabs, 1);
    connectActions();
    m_precision->setVisible(m_figure->currentData().toString() == "capacity" || m_figure->currentData().toString() == "frontier");
    if (m_preset->count() > 0) {
        const int lg = m_preset->findData("length-generalisation");
        m_preset->setCurrentIndex(lg >= 0 ? lg : 0);
        if (m_plan.name.isEmpty()) selectPreset(m_preset->currentData().toString());
    }
    updateState();
}

void ExperimentsPanel::connectActions()
{
    connect(m_preset, &QComboBox::currentIndexChanged, this, [this] {
        if (m_preset->currentIndex() < 0 || isRunning()) return;
        const QString name = m_preset->currentData().toString();
        const QString file = m_preset->currentData(kSourceRole).toString();
        const QString folder = m_preset->currentData(kFolderRole).toString();
        if (!name.isEmpty()) selectPreset(name);
        else if (!folder.isEmpty()) openSweepFolder(folder);  // the folder again, not its sweep file's default one
        else if (!file.isEmpty() && file != m_source) openSweepFile(file);
    });
    connect(m_steps, &QComboBox::currentIndexChanged, this, [this] {
        if (m_customOut.isEmpty()) m_out->setText(defaultOutDir());  // a quick look never mixes with the full sweep's runs
        updateDescription();
        refreshResults();
    });
    connect(m_out, &QLineEdit::editingFinished, this, [this] {
        m_customOut = m_out->text() == defaultOutDir() ? QString() : m_out->text();
        adoptFolderOverrides();
        refreshResults();
    });
    connect(m_thorough, &QCheckBox::toggled, this, &ExperimentsPanel::setThorough);
    connect(m_scale, &QComboBox::currentIndexChanged, this, &ExperimentsPanel::reloadPlan);
    connect(m_run, &QPushButton::clicked, this, &ExperimentsPanel::run);
    connect(m_stop, &QPushButton::clicked, this, &ExperimentsPanel::cancel);
    connect(m_figure, &QComboBox::currentIndexChanged, this, [this] {
        m_precision->setVisible(m_figure->currentData().toString() == "capacity" || m_figure->currentData().toString() == "frontier");
        refreshResults();
    });
    connect(m_point, &QComboBox::currentIndexChanged, this, &ExperimentsPanel::refreshResults);
    connect(m_logX, &QCheckBox::toggled, this, &ExperimentsPanel::refreshResults);
    connect(m_precision, &QSpinBox::valueChanged, this, &ExperimentsPanel::refreshResults);
    connect(m_logY, &QCheckBox::toggled, this, &ExperimentsPanel::refreshResults);
    connect(m_export, &QPushButton::clicked, this, &ExperimentsPanel::exportFigure);
}

ExperimentsPanel::~ExperimentsPanel() = default;  // the runner kills its children

void ExperimentsPanel::setRunsFolder(const QString& dir)
{
    m_runsFolder = dir;
    if (m_customOut.isEmpty() && !m_plan.name.isEmpty()) {
        m_out->setText(defaultOutDir());
        adoptFolderOverrides();
    }
    refreshResults();
}

QString ExperimentsPanel::defaultOutDir() const
{
    const int divisor = m_steps->currentData().toInt();
    const QString suffix = divisor > 1 ? QString("-quick%1").arg(divisor) : divisor == 0 ? QString("-custom") : QString();
    const QString scale = m_scale->currentData().toString();
    return QDir(m_runsFolder).filePath("sweeps/" + m_plan.name + (scale.isEmpty() ? QString() : "-" + scale)
                                       + (m_thorough->isChecked() ? "-thorough" : "") + suffix);
}

void ExperimentsPanel::setExtraOverrides(const QStringList& sets)
{
    setCustomOverrides(sets);
    if (m_customOut.isEmpty() && !m_plan.name.isEmpty()) m_out->setText(defaultOutDir());
    updateDescription();
    refreshResults();
}

void ExperimentsPanel::setStepsDivisor(int divisor)
{
    const int i = m_steps->findData(divisor);
    if (i >= 0) m_steps->setCurrentIndex(i);
}

void ExperimentsPanel::setCustomOverrides(const QStringList& sets)
{
    const QSignalBlocker block(m_steps);  // the callers move the folder and the text themselves
    int i = m_steps->findData(0);
    if (i < 0) {
        m_steps->addItem(QString(), 0);
        i = m_steps->count() - 1;
    }
    m_steps->setItemText(i, tr("custom: %1").arg(sets.join(", ")));
    m_steps->setItemData(i, sets, kOverridesRole);
    m_steps->setItemData(i, sets.join("\n"), Qt::ToolTipRole);
    m_steps->setCurrentIndex(i);
}

QStringList ExperimentsPanel::overrides() const
{
    const int divisor = m_steps->currentData().toInt();
    return divisor == 0 ? m_steps->currentData(kOverridesRole).toStringList() : quickLookOverrides(m_plan, divisor);
}

void ExperimentsPanel::adoptFolderOverrides()
{
    std::optional<SweepPlan> index;
    try {
        index = readSweepIndex(m_out->text());
    } catch (const Error& e) {  // a damaged index: the folder's settings are not adopted, and the user is told why
        emit message(e.message());
        return;
    }
    if (!index || index->name != m_plan.name) return;
    QStringList current;
    try {
        current = overrides();
    } catch (const Error&) {  // a quick look this sweep cannot take: anything else is a change
    }
    if (index->overrides == current) return;
    int match = -1;
    for (int i = 0; i < m_steps->count() && match < 0; ++i) {
        const int divisor = m_steps->itemData(i).toInt();
        try {
            if (divisor > 0 && quickLookOverrides(m_plan, divisor) == index->overrides) match = i;
        } catch (const Error&) {
        }
    }
    if (match >= 0) {
        const QSignalBlocker block(m_steps);
        m_steps->setCurrentIndex(match);
    } else {
        setCustomOverrides(index->overrides);
    }
    m_customOut = m_out->text();  // the folder stays; the Steps box follows it
    updateDescription();
    emit message(tr("%1 was made with %2; Run resumes it with those settings")
                     .arg(m_out->text(), index->overrides.isEmpty() ? tr("the sweep file's own settings")
                                                                     : "--set " + index->overrides.join(" --set ")));
}

void ExperimentsPanel::updateDescription()
{
    QString text = m_plan.description.isEmpty() ? tr("(no description)") : m_plan.description;
    if (!m_plan.scale.isEmpty() && deviceDescription().startsWith("CPU"))  // sized for a GPU, and this run would be on the CPU
        text = tr("No GPU here: the runs would train on the CPU, for hours (the description says how many). "
                  "Run it where there is a GPU: on a cluster profile with --gres, or with packaging/gpu-check.sh.")
               + "\n\n" + text;
    try {
        m_description->setText(describeChanged(text, overrides()));
    } catch (const Error& e) {
        m_description->setText(text + "\n" + e.message());
    }
}

void ExperimentsPanel::showOtherSource(const QString& label, const QString& source, const QString& folder)
{
    const QSignalBlocker block(m_preset);  // shown, not reloaded
    int i = m_preset->findData(QString());
    if (i < 0) {
        m_preset->addItem(label, QString());
        i = m_preset->count() - 1;
    }
    m_preset->setItemText(i, label);
    m_preset->setItemData(i, source, kSourceRole);
    m_preset->setItemData(i, folder, kFolderRole);
    m_preset->setCurrentIndex(i);
}

QString ExperimentsPanel::outDir() const { return m_out->text(); }

void ExperimentsPanel::showResultsTable(bool table) { m_tabs->setCurrentIndex(table ? 1 : 0); }

void ExperimentsPanel::setOutDir(const QString& dir)
{
    m_out->setText(QDir(dir).absolutePath());
    m_customOut = m_out->text();
    adoptFolderOverrides();
    refreshResults();
    if (QFileInfo::exists(QDir(dir).filePath("slurm/jobs.json"))) {  // a submitted sweep: its states
        startPolling();
        pollCluster();
    }
}

bool ExperimentsPanel::selectPreset(const QString& name)
{
    try {
        const int i = m_preset->findData(name);
        if (i >= 0 && i != m_preset->currentIndex()) {
            m_preset->setCurrentIndex(i);  // comes back here
            return m_plan.name == name;
        }
        {
            const QSignalBlocker block(m_scale);  // another experiment starts at its own scale
            m_scale->setCurrentIndex(0);
        }
        setPlan(loadPlan(sweepPresetFile(name), "."), sweepPresetFile(name));
        return true;
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return false;
    }
}

bool ExperimentsPanel::openSweepFile(const QString& file)
{
    try {
        {
            const QSignalBlocker block(m_scale);
            m_scale->setCurrentIndex(0);
        }
        setPlan(loadPlan(file, "."), file);
        showOtherSource(tr("File: %1").arg(QFileInfo(file).fileName()), file);
        return true;
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return false;
    }
}

bool ExperimentsPanel::openSweepFolder(const QString& dir)
{
    if (isRunning()) return false;
    std::optional<SweepPlan> index;
    try {
        index = readSweepIndex(dir);
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return false;
    }
    if (!index) {
        emit errorMessage(tr("%1: not a sweep folder (no readable index.json)").arg(dir));
        return false;
    }
    SweepPlan plan = *index;
    QString source = plan.source;
    {
        const QSignalBlocker block(m_thorough);  // the folder says which it is
        m_thorough->setChecked(plan.thorough.has_value());
        const QSignalBlocker blockScale(m_scale);
        if (m_scale->findData(plan.scale) < 0) m_scale->addItem(plan.scale, plan.scale);
        m_scale->setCurrentIndex(m_scale->findData(plan.scale));
    }
    if (!source.isEmpty() && QFileInfo::exists(source)) {
        try {
            plan = loadPlan(source, dir);  // Run resumes it
        } catch (const Error& e) {
            emit message(tr("%1 no longer reads (%2); showing the folder's runs only").arg(source, e.message()));
            source.clear();
        }
    } else {
        source.clear();
    }
    setPlan(std::move(plan), source);
    if (const int bundled = m_preset->findData(m_plan.name); bundled >= 0 && source == sweepPresetFile(m_plan.name)) {
        const QSignalBlocker block(m_preset);
        m_preset->setCurrentIndex(bundled);
    } else {
        showOtherSource(tr("Folder: %1").arg(QFileInfo(dir).fileName()), source, QDir(dir).absolutePath());
    }
    setOutDir(dir);
    emit message(source.isEmpty() ? tr("Opened sweep %1 (%2 runs); its sweep file is gone, so it cannot be resumed from here").arg(m_plan.name).arg(m_plan.runs.size())
                                   : tr("Opened sweep %1 (%2 runs) from %3").arg(m_plan.name).arg(m_plan.runs.size()).arg(dir));
    updateState();
    return true;
}

void ExperimentsPanel::setPlan(SweepPlan plan, const QString& source)
{
    m_plan = std::move(plan);
    m_source = source;
    m_customOut.clear();
    fillScales();
    // A quick look needs runs that share their steps; a folder without its sweep file cannot run.
    auto* steps = qobject_cast<QStandardItemModel*>(m_steps->model());
    for (int i = 0; i < m_steps->count(); ++i) {
        const int divisor = m_steps->itemData(i).toInt();
        if (divisor <= 1) continue;
        QString why = source.isEmpty() ? tr("this folder's sweep file is gone: it cannot run") : QString();
        try {
            quickLookOverrides(m_plan, divisor);
        } catch (const Error& e) {
            why = e.message();
        }
        steps->item(i)->setEnabled(why.isEmpty());
        steps->item(i)->setToolTip(why);
        if (!why.isEmpty() && m_steps->currentIndex() == i) {
            const QSignalBlocker block(m_steps);
            m_steps->setCurrentIndex(0);
        }
    }
    m_out->setText(defaultOutDir());
    updateDescription();
    const int fi = m_figure->findData(m_plan.figure);
    if (fi >= 0) m_figure->setCurrentIndex(fi);
    adoptFolderOverrides();
    refreshResults();
}

bool ExperimentsPanel::isRunning() const { return m_runner && m_runner->isRunning(); }

SweepPlan ExperimentsPanel::loadPlan(const QString& source, const QString& outDir) const
{
    return loadSweep(source, outDir, {.thorough = m_thorough->isChecked(), .scale = m_scale->currentData().toString()});
}

// The same experiment, thorough or plain, in a folder of its own (the Steps choice kept).
void ExperimentsPanel::setThorough(bool thorough)
{
    if (isRunning() || m_source.isEmpty()) return;
    {
        const QSignalBlocker block(m_thorough);
        m_thorough->setChecked(thorough);
    }
    reloadPlan();
    if (m_plan.thorough.has_value() != thorough) return;
    emit message(thorough ? tr("Thorough: %1 runs, each model at %2").arg(m_plan.runs.size()).arg(m_plan.thorough->describe())
                          : tr("%1 runs, each model at the sweep file's learning rate").arg(m_plan.runs.size()));
}

void ExperimentsPanel::reloadPlan()
{
    if (isRunning() || m_source.isEmpty()) return;
    try {
        setPlan(loadPlan(m_source, "."), m_source);
    } catch (const Error& e) {
        emit errorMessage(e.message());
        const QSignalBlocker block(m_thorough), blockScale(m_scale);
        m_thorough->setChecked(m_plan.thorough.has_value());
        m_scale->setCurrentIndex(std::max(0, m_scale->findData(m_plan.scale)));
    }
    updateState();
}

void ExperimentsPanel::fillScales()
{
    const QSignalBlocker block(m_scale);
    const QString chosen = m_plan.scale;
    while (m_scale->count() > 1) m_scale->removeItem(1);
    for (const QString& s : m_plan.scales) m_scale->addItem(s, s);
    m_scale->setCurrentIndex(std::max(0, m_scale->findData(chosen)));
    m_scale->setVisible(!m_plan.scales.isEmpty());
    m_scaleLabel->setVisible(!m_plan.scales.isEmpty());
}

bool ExperimentsPanel::run()
{
    if (isRunning() || m_source.isEmpty()) return false;
    if (m_out->text().trimmed().isEmpty()) {
        emit errorMessage(tr("Choose a folder for the sweep first"));
        return false;
    }
    if (!m_runOn->currentData().toString().isEmpty()) {
        if (m_cluster.isRunning()) return false;
        submitToCluster(m_runOn->currentData().toString());
        return true;
    }
    try {
        SweepPlan plan = loadPlan(m_source, m_out->text().trimmed());
        overrideSweep(plan, overrides());
        m_runner = std::make_unique<SweepRunner>(std::move(plan), m_exe, m_jobs->value());
        const int todo = m_runner->prepare();
        emit message(tr("Sweep %1: %2 runs, %3 already finished; %4 at a time, in %5")
                         .arg(m_runner->plan().name).arg(m_runner->plan().runs.size()).arg(m_runner->plan().runs.size() - size_t(todo))
                         .arg(m_jobs->value()).arg(m_runner->plan().outDir));
    } catch (const Error& e) {
        m_runner.reset();
        emit errorMessage(e.message());
        return false;
    }
    connect(m_runner.get(), &SweepRunner::progress, this, [this](double fraction, double eta) {
        m_progress->setValue(int(1000 * fraction));
        m_progressText->setText(tr("%1 of %2 runs · ETA %3").arg(m_runner->finishedCount()).arg(m_runner->toDo()).arg(minutes(eta)));
    });
    connect(m_runner.get(), &SweepRunner::runFinished, this, [this](const QString& name, const QString& status, double seconds) {
        emit message(tr("Sweep run %1: %2 in %3 s").arg(name, status.isEmpty() ? tr("failed (see logs/%1.log)").arg(name) : status)
                         .arg(seconds, 0, 'f', 1));
        emit runsChanged();
        refreshResults();
    });
    connect(m_runner.get(), &SweepRunner::finished, this, [this](int failed, bool cancelled) {
        const int total = m_runner->toDo();
        emit message(cancelled ? tr("Sweep stopped; %1 of %2 runs done. Run again to finish the rest.").arg(m_runner->finishedCount()).arg(total)
                               : tr("Sweep %1 done in %2: %3 of %4 runs finished%5").arg(m_runner->plan().name)
                                     .arg(minutes(m_runner->elapsedSeconds())).arg(total - failed).arg(total)
                                     .arg(failed ? tr(" (the failed runs' logs are in %1/logs)").arg(m_runner->plan().outDir) : QString()));
        if (!cancelled) {
            m_progress->setValue(1000);
            m_progressText->setText(tr("done in %1").arg(minutes(m_runner->elapsedSeconds())));
        } else {
            m_progressText->setText(tr("stopped"));
        }
        updateState();  // the runner is done (isRunning() is false) when it says so
        refreshResults();
        emit sweepFinished(failed, cancelled);
    });
    m_progress->setValue(0);
    m_progressText->setText(tr("starting…"));
    m_runner->start();
    updateState();
    refreshResults();  // the folder's finished runs, or a frame that says the figure is coming
    return true;
}

void ExperimentsPanel::cancel()
{
    if (isRunning()) {
        m_runner->cancel();
        return;
    }
    if (!m_clusterActive || m_cluster.isRunning()) return;
    const QString dir = m_out->text().trimmed();
    m_progressText->setText(tr("cancelling…"));
    m_cluster.start([dir](JobContext&) { return cancelSweepJobs(dir); },
                    [this](const QStringList& jobs) {
                        emit message(jobs.isEmpty() ? tr("No job of this sweep was queued or running") : tr("Cancelled Slurm jobs %1").arg(jobs.join(", ")));
                        QTimer::singleShot(0, this, &ExperimentsPanel::pollCluster);
                    },
                    [this](const QString& error) {
                        emit errorMessage(tr("Cannot cancel: %1").arg(error));
                        updateState();
                    });
    updateState();
}

void ExperimentsPanel::reloadClusterProfiles()
{
    const QString chosen = m_runOn->currentData().toString();
    const QSignalBlocker quiet(m_runOn);
    m_runOn->clear();
    m_runOn->addItem(tr("this machine"), QString());
    try {
        for (const ClusterProfile& p : loadClusterProfiles()) {
            m_runOn->addItem(tr("%1 (Slurm)").arg(p.name), p.name);
            m_runOn->setItemData(m_runOn->count() - 1, p.describe(), Qt::ToolTipRole);
        }
    } catch (const Error& e) {
        emit errorMessage(e.message());
    }
    m_runOn->setCurrentIndex(std::max(0, m_runOn->findData(chosen)));
}

void ExperimentsPanel::submitToCluster(const QString& profileName)
{
    SweepPlan plan;
    ClusterProfile profile;
    try {
        plan = loadPlan(m_source, m_out->text().trimmed());
        overrideSweep(plan, overrides());
        profile = findClusterProfile(profileName);
    } catch (const Error& e) {
        emit errorMessage(e.message());
        emit clusterSubmitted(QString());
        return;
    }
    const QString exe = m_exe;
    m_progressText->setText(tr("submitting…"));
    m_cluster.start(
        [plan, profile, exe](JobContext&) { return submitSweep(plan, profile, exe); },
        [this, profileName](const SlurmSubmitted& s) {
            m_lastJob = s.job;
            if (s.job.isEmpty()) {
                emit message(tr("Nothing to submit: %1 of %2 runs are finished, %3 queued or running").arg(s.total - s.busy).arg(s.total).arg(s.busy));
            } else {
                emit message(tr("Submitted %1 of %2 runs to %3 as Slurm job array %4").arg(s.runs.size()).arg(s.total).arg(profileName, s.job));
                m_progressText->setText(tr("Slurm job %1").arg(s.job));
            }
            emit clusterSubmitted(s.job);
            startPolling();
            QTimer::singleShot(0, this, &ExperimentsPanel::pollCluster);  // once this job has delivered
        },
        [this](const QString& error) {
            emit errorMessage(tr("Cannot submit the sweep: %1").arg(error));
            m_progressText->setText(tr("not submitted"));
            emit clusterSubmitted(QString());
            updateState();
        });
    updateState();
}

void ExperimentsPanel::startPolling()
{
    if (!m_poll->isActive()) m_poll->start();
}

bool ExperimentsPanel::polling() const { return m_poll->isActive(); }

void ExperimentsPanel::pollCluster()
{
    if (m_cluster.isRunning()) return;
    const QString dir = m_out->text().trimmed();
    if (dir.isEmpty() || !QFileInfo::exists(QDir(dir).filePath("slurm/jobs.json"))) {
        m_poll->stop();
        return;
    }
    m_cluster.start([dir](JobContext&) { return sweepStatus(dir); },
                    [this](const std::vector<SweepRunState>& states) {
                        showRunStates(states);
                        emit clusterPolled();
                    },
                    [this](const QString& error) {
                        m_progressText->setText(tr("cannot read the cluster's state"));
                        m_progressText->setToolTip(error);
                        emit clusterPolled();
                    });
}

void ExperimentsPanel::showRunStates(const std::vector<SweepRunState>& states)
{
    m_runsTable->setRowCount(int(states.size()));
    std::map<QString, int> count;
    for (int i = 0; i < int(states.size()); ++i) {
        const SweepRunState& r = states[size_t(i)];
        ++count[r.state];
        const QStringList cells{r.name, r.state, r.steps > 0 ? QString("%1/%2").arg(r.step).arg(r.steps) : QString("–"),
                                r.accuracy >= 0 ? QString::number(r.accuracy * 100, 'f', 1) + "%" : QString("–"), r.detail};
        for (int c = 0; c < cells.size(); ++c) m_runsTable->setItem(i, c, new QTableWidgetItem(cells[c]));
    }
    m_runsTable->resizeColumnsToContents();
    const int ended = count["finished"] + count["diverged"] + count["failed"] + count["cancelled"];
    m_clusterActive = count["pending"] + count["running"] > 0;
    m_progress->setValue(states.empty() ? 0 : int(1000.0 * ended / double(states.size())));
    QStringList parts;
    for (const char* k : {"finished", "running", "pending", "failed", "cancelled", "diverged", "not submitted"})
        if (count[k] > 0) parts << QString("%1 %2").arg(count[k]).arg(k);
    m_progressText->setText(tr("on the cluster: %1").arg(parts.join(" · ")));
    m_progressText->setToolTip(QString());
    if (count["finished"] != m_clusterFinished) {
        m_clusterFinished = count["finished"];
        emit runsChanged();
        refreshResults();
    }
    if (!m_clusterActive) m_poll->stop();
    updateState();
}

void ExperimentsPanel::updateState()
{
    const bool running = isRunning();
    m_run->setEnabled(!running && !m_source.isEmpty() && !m_cluster.isRunning());
    m_stop->setEnabled(running || (m_clusterActive && !m_cluster.isRunning()));
    m_runOn->setEnabled(!running);
    m_preset->setEnabled(!running);
    m_steps->setEnabled(!running);
    m_thorough->setEnabled(!running && !m_source.isEmpty());
    m_scale->setEnabled(!running && !m_source.isEmpty());
    m_out->setEnabled(!running);
    m_jobs->setEnabled(!running && m_runOn->currentData().toString().isEmpty());  // Slurm schedules a cluster's runs
}

std::vector<RunRecord> ExperimentsPanel::finishedRuns(int* finished) const
{
    std::vector<RunRecord> runs;
    for (const SweepRun& r : m_plan.runs) {
        const QString dir = QDir(m_out->text()).filePath("runs/" + r.name);
        if (runStatus(dir) != "finished") continue;
        if (finished) ++*finished;
        try {
            runs.push_back(loadRun(dir));
        } catch (const Error&) {  // unreadable: left out of the figure and the table
        }
    }
    return runs;
}

void ExperimentsPanel::refreshResults()
{
    int finished = 0;
    std::vector<RunRecord> runs = finishedRuns(&finished);
    BestRates rates;
    if (m_plan.thorough) {  // each model at its best rate
        rates = chooseBestRates(m_plan, runs);
        runs = rates.runs;
    }
    m_rates->setText(rates.toText().trimmed());
    m_rates->setVisible(m_plan.thorough.has_value());
    m_resultRuns = int(runs.size());
    m_summary->setText(m_plan.thorough ? tr("%1 runs (thorough: each model at %2); %3 finished in this folder")
                                             .arg(m_plan.runs.size()).arg(m_plan.thorough->describe()).arg(finished)
                                       : tr("%1 runs; %2 finished in this folder").arg(m_plan.runs.size()).arg(finished));
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_figureNote->clear();
    m_figureCsv.clear();
    if (!runs.empty()) {
        try {
            m_plot->xAxis->setVisible(true);
            m_plot->yAxis->setVisible(true);
            const FigureOptions options{m_logX->isChecked(), m_logY->isChecked(), m_precision->value(),
                                        [](const ExperimentConfig& c) { return Model::measure(c); }};
            m_figureCsv = drawComparison(*m_plot, runs, m_figure->currentData().toString(), options);
            if (m_plan.thorough) m_figureNote->setText(tr("each model at its best learning rate (Results table)"));
            applyPlotTheme(*m_plot, darkPlots());  // the figure draws itself for paper (white): the screen's theme again
        } catch (const Error& e) {
            m_figureNote->setText(e.message());
            showEmptyFigure(QString());
        }
    } else {
        showEmptyFigure(isRunning() ? tr("No run of this sweep has finished yet: the figure fills in as they do")
                                    : tr("No finished runs in this folder yet: press Run"));
    }
    m_plot->replot();
    m_export->setEnabled(!runs.empty());

    const ResultsTable t = tabulate(runs, ResultPoint(m_point->currentData().toInt()), rates.rateOfRunDir);
    m_table->clear();
    m_table->setRowCount(int(t.tasks.size()));
    m_table->setColumnCount(int(t.models.size()));
    m_table->setHorizontalHeaderLabels(t.models);
    m_table->setVerticalHeaderLabels(t.tasks);
    for (int i = 0; i < t.tasks.size(); ++i)
        for (int j = 0; j < t.models.size(); ++j) {
            const ResultCell& c = t.cells[size_t(i)][size_t(j)];
            QString text = c.runs == 0 ? QString("–") : gradeSymbol(c.grade).isEmpty() ? QString("?") : gradeSymbol(c.grade);
            if (!c.rate.isEmpty()) text += "  lr " + c.rate.section(' ', 0, 0) + (c.rate.contains("of the grid") ? " \u26A0" : "");
            auto* item = new QTableWidgetItem(text);
            item->setTextAlignment(Qt::AlignCenter);
            item->setToolTip(c.runs == 0 ? tr("no finished run") : c.detail);
            item->setData(Qt::UserRole, c.value);
            if (c.grade == Grade::Pass) item->setForeground(QColor(0, 130, 60));
            else if (c.grade == Grade::Partial) item->setForeground(QColor(200, 130, 0));
            else if (c.grade == Grade::Fail) item->setForeground(QColor(200, 30, 30));
            QFont f = item->font();
            f.setPointSize(f.pointSize() + 3);
            item->setFont(f);
            m_table->setItem(i, j, item);
        }
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
}

// Nothing to draw: a frame that says so, not the axes, title and (empty) legend of what was drawn before.
void ExperimentsPanel::showEmptyFigure(const QString& text)
{
    m_plot->clearPlottables();
    m_plot->clearItems();
    m_plot->legend->setVisible(false);
    while (m_plot->plotLayout()->rowCount() > 1) {  // a figure's title
        m_plot->plotLayout()->removeAt(0);
        m_plot->plotLayout()->simplify();
    }
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis, m_plot->yAxis2}) axis->setVisible(false);
    auto* note = new QCPItemText(m_plot);
    note->position->setType(QCPItemPosition::ptAxisRectRatio);
    note->position->setCoords(0.5, 0.5);
    note->setText(text);
    note->setColor(palette().color(QPalette::PlaceholderText));
}

// The figure as shown, through the dialog File → Export opens (size, DPI, font, line width);
// as CSV, the figure's own table with its standard deviations.
void ExperimentsPanel::exportFigure()
{
    auto* dialog = new ExportDialog(this, tr("Experiments"), m_plot, false, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileStem(m_plan.name + "-" + m_figure->currentData().toString());
    dialog->setCsvSource(m_plot, [this] { return m_figureCsv; });
    connect(dialog, &ExportDialog::exported, this, [this](const QString& path) { emit message(tr("Figure saved to %1").arg(path)); });
    connect(dialog, &ExportDialog::failed, this, [this](const QString& why) { emit message(tr("Export failed: %1").arg(why)); });
    dialog->open();  // window-modal, never blocking the event loop
}

}  // namespace parrot
