#include "ui/panels/insidepane.h"

#include "ui/common/filefilters.h"
#include "ui/panels/causaldialog.h"
#include "ui/panels/constructionview.h"
#include "base/error.h"

#include "core/eval/lmtests.h"
#include "base/tasks/tokentask.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QStyle>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <optional>

namespace parrot {

InsidePane::InsidePane(QWidget* parent) : QWidget(parent)
{
    // Short rows of controls, so that two panes fit side by side on a laptop's screen; no margin
    // above or below (the input's line above and the tab's edge below part them from the rest).
    auto* layout = new QVBoxLayout(this);
    {
        const QMargins m = layout->contentsMargins();
        layout->setContentsMargins(m.left(), 0, m.right(), 0);
    }
    auto* top = new QHBoxLayout;
    m_source = new QComboBox(this);
    m_source->setObjectName("source");
    for (const BundledCheckpoint& b : bundledCheckpoints()) m_source->addItem(b.label, b.id);
    m_source->addItem("Two-layer construction (no training)", "construction");
    m_source->addItem("Model in the Train tab", "current");
    m_source->addItem("Open checkpoint…", "open");
    m_source->addItem("Open run folder…", "openrun");
    m_source->addItem("Open pretrained model folder…", "openlm");
    m_source->setToolTip("What this pane looks inside");
    m_source->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // a long file name does not widen the pane
    m_source->setMinimumContentsLength(14);
    top->addWidget(m_source, 1);
    m_n = new QSpinBox(this);
    m_n->setRange(1, 8);
    m_n->setValue(3);
    m_n->setPrefix("n = ");
    m_n->setToolTip("The construction's n-gram order");
    m_letters = new QSpinBox(this);
    m_letters->setRange(2, 52);
    m_letters->setValue(26);
    m_letters->setPrefix("|V| = ");
    m_letters->setToolTip("The construction's alphabet");
    top->addWidget(m_n);
    top->addWidget(m_letters);
    m_viewBox = new QComboBox(this);
    m_viewBox->setObjectName("view");
    for (const char* v : {"attention", "implicit", "state", "delta"}) m_viewBox->addItem(viewTitle(v), v);
    m_viewBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "Effective attention" for a recurrent model's heads
    top->addWidget(m_viewBox);
    layout->addLayout(top);

    // a run's snapshots, stepped through with the arrows or picked from the list
    m_steps = new QWidget(this);
    auto* steps = new QHBoxLayout(m_steps);
    steps->setContentsMargins(0, 0, 0, 0);
    m_earlier = new QToolButton(m_steps);
    m_earlier->setObjectName("earlierSnapshot");
    m_earlier->setArrowType(Qt::LeftArrow);
    m_earlier->setToolTip("The snapshot before this one");
    m_step = new QComboBox(m_steps);
    m_step->setObjectName("snapshotStep");
    m_step->setToolTip("The run's weights at this step: snapshots kept while it trained (log-spaced steps, and on each side "
                       "of the step where a head's lookup score first reached 0.5), and its last checkpoint");
    m_step->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_step->setMinimumContentsLength(20);
    m_later = new QToolButton(m_steps);
    m_later->setObjectName("laterSnapshot");
    m_later->setArrowType(Qt::RightArrow);
    m_later->setToolTip("The snapshot after this one");
    steps->addWidget(new QLabel("Snapshot", m_steps));
    steps->addWidget(m_earlier);
    steps->addWidget(m_step, 1);
    steps->addWidget(m_later);
    m_steps->setVisible(false);
    layout->addWidget(m_steps);
    connect(m_step, &QComboBox::activated, this, &InsidePane::showSnapshot);
    connect(m_earlier, &QToolButton::clicked, this, [this] { showSnapshot(m_step->currentIndex() - 1); });
    connect(m_later, &QToolButton::clicked, this, [this] { showSnapshot(m_step->currentIndex() + 1); });

    auto* style = new QHBoxLayout;
    m_colormap = new QComboBox(this);
    m_colormap->addItems(Colormap::names());
    m_log = new QCheckBox("log", this);
    m_log->setToolTip("Logarithmic colour scale");
    m_auto = new QCheckBox("auto range", this);
    m_auto->setChecked(true);
    m_auto->setToolTip("The colour scale spans the map's values; untick to set its ends");
    m_overlay = new QCheckBox("lookup marks", this);
    m_overlay->setChecked(true);
    m_overlay->setToolTip("Circles: where an order-n lookup head should look (the token after the earlier occurrence of the "
                          "last n tokens). Crosses: the n-gram occurred more than once, so the lookup is ambiguous.");
    m_overlayN = new QSpinBox(this);
    m_overlayN->setObjectName("marksOrder");
    m_overlayN->setRange(1, kMaxLookupOrder);
    m_overlayN->setValue(2);
    m_overlayN->setPrefix("n = ");
    m_overlayN->setToolTip("The order of the lookup marked; selecting a lookup head sets it to the head's order");
    style->addWidget(m_colormap);
    style->addWidget(m_log);
    style->addWidget(m_auto);
    style->addWidget(m_overlay);
    style->addWidget(m_overlayN);
    style->addStretch(1);
    layout->addLayout(style);
    // the colour scale's ends, on a row of their own while they are set by hand
    m_range = new QWidget(this);
    auto* range = new QHBoxLayout(m_range);
    range->setContentsMargins(0, 0, 0, 0);
    m_min = new QDoubleSpinBox(this);
    m_max = new QDoubleSpinBox(this);
    for (QDoubleSpinBox* s : {m_min, m_max}) {
        s->setDecimals(4);
        s->setRange(0, 1e6);
        s->setSingleStep(0.05);
    }
    m_min->setValue(0);
    m_max->setValue(1);
    range->addWidget(new QLabel("colour scale from", this));
    range->addWidget(m_min);
    range->addWidget(new QLabel("to", this));
    range->addWidget(m_max);
    range->addStretch(1);
    m_range->setVisible(false);
    layout->addWidget(m_range);

    // the causal tests: heads switched off in place, each head's importance, the state swept
    m_causal = new QWidget(this);
    auto* causal = new QHBoxLayout(m_causal);
    causal->setContentsMargins(0, 0, 0, 0);
    m_ablateMode = new QToolButton(m_causal);
    m_ablateMode->setObjectName("ablateMode");
    m_ablateMode->setText("Switch heads off");
    m_ablateMode->setCheckable(true);
    m_ablateMode->setToolTip("While down, clicking a head's thumbnail switches it off or on (right-click one at any time). "
                             "The pane then shows the model with those heads off: a forward-time mask, the weights untouched.");
    m_ablationMethod = new QComboBox(m_causal);
    m_ablationMethod->setObjectName("ablationMethod");
    m_ablationMethod->addItem("zeroed", "zero");
    m_ablationMethod->addItem("mean over the input", "mean");
    m_ablationMethod->setToolTip("Zeroed: the head's output taken away. Mean: replaced by its mean over the input's positions, "
                                 "which keeps its average contribution and removes what depends on where it looks.");
    m_resetHeads = new QToolButton(m_causal);
    m_resetHeads->setObjectName("resetHeads");
    m_resetHeads->setText("Reset");
    m_resetHeads->setToolTip("Every head on again");
    m_importanceButton = new QToolButton(m_causal);
    m_importanceButton->setObjectName("headImportance");
    m_importanceButton->setText("Head importance…");
    m_importanceButton->setToolTip("Switch each head off alone over many examples: which heads the answers need");
    m_sweepButton = new QToolButton(m_causal);
    m_sweepButton->setObjectName("stateSweep");
    m_sweepButton->setText("State sweep…");
    m_sweepButton->setToolTip("Shrink the state (first k of d_state, fewer channels, fewer bits) and see where copying fails "
                              "against the copy bound for that state");
    causal->addWidget(m_ablateMode);
    causal->addWidget(m_ablationMethod);
    causal->addWidget(m_resetHeads);
    causal->addWidget(m_importanceButton);
    causal->addWidget(m_sweepButton);
    causal->addStretch(1);
    m_causal->setVisible(false);
    layout->addWidget(m_causal);
    connect(m_resetHeads, &QToolButton::clicked, this, &InsidePane::resetHeads);
    connect(m_ablationMethod, &QComboBox::activated, this, [this] {
        setAblationMethod(m_ablationMethod->currentData().toString() == "mean" ? HeadAblation::Method::Mean : HeadAblation::Method::Zero);
    });
    connect(m_importanceButton, &QToolButton::clicked, this, [this] {
        if (HeadImportanceDialog* d = openHeadImportance()) d->show();
    });
    connect(m_sweepButton, &QToolButton::clicked, this, [this] {
        if (StateSweepDialog* d = openStateSweep()) d->show();
    });

    // The views scroll rather than shrink: the heatmap takes the height there is and keeps at
    // least half a label's height for every row (up to kReadableRows), and the thumbnails keep
    // every row of heads whole. The status (what is shown, or what went wrong) heads them.
    auto* scroll = m_views = new QScrollArea(this);
    scroll->setObjectName("views");
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* views = m_viewsBox = new QWidget(scroll);
    auto* vl = new QVBoxLayout(views);
    vl->setContentsMargins(0, 0, 0, 0);
    m_status = new QLabel(views);
    m_status->setWordWrap(true);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // never widens the pane
    vl->addWidget(m_status);
    m_thumbs = new QWidget(views);  // the grid, then a stretch: the thumbnails sit on the left
    auto* thumbRow = new QHBoxLayout(m_thumbs);
    thumbRow->setContentsMargins(0, 0, 0, 0);
    auto* grid = new QWidget(m_thumbs);
    thumbRow->addWidget(grid);
    m_flow = new QVBoxLayout;  // a short pane's lines of thumbnails, in place of the grid
    m_flow->setSpacing(2);
    thumbRow->addLayout(m_flow);
    thumbRow->addStretch(1);
    m_thumbGrid = new QGridLayout(grid);
    m_thumbGrid->setContentsMargins(0, 0, 0, 0);
    m_thumbGrid->setSpacing(2);
    vl->addWidget(m_thumbs);
    m_heatmap = new HeatmapView(views);
    m_heatmap->setReadableRows(kReadableRows);
    vl->addWidget(m_heatmap, 1);
    m_mapGap = fontMetrics().height() / 2;
    vl->addSpacing(m_mapGap);  // the hover line and the head's heading read as two
    m_info = new QLabel(views);
    m_info->setObjectName("headInfo");
    m_info->setWordWrap(true);
    m_info->setTextFormat(Qt::RichText);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    vl->addWidget(m_info);
    scroll->setWidget(views);
    layout->addWidget(scroll, 1);
    // The map's height follows from the viewport's size and what shares it, whichever of them
    // changed last (a resize, a status, new thumbnails, a head's line): see fitMap.
    scroll->viewport()->installEventFilter(this);
    views->installEventFilter(this);

    connect(m_source, &QComboBox::activated, this, &InsidePane::onSource);
    connect(&m_load, &BackgroundJob::progress, this, [this](int done, int total) {
        setStatus(QString("Loading %1: %2 of %3 tensors…").arg(m_loading).arg(done).arg(total));
    });
    connect(m_n, &QSpinBox::editingFinished, this, [this] {
        if (m_source->currentData().toString() == "construction") chooseConstruction(m_n->value(), m_letters->value());
    });
    connect(m_letters, &QSpinBox::editingFinished, this, [this] {
        if (m_source->currentData().toString() == "construction") chooseConstruction(m_n->value(), m_letters->value());
    });
    connect(m_viewBox, &QComboBox::activated, this, [this] { rebuild(); });
    connect(m_colormap, &QComboBox::currentTextChanged, this, [this] { restyle(); });
    for (QCheckBox* c : {m_log, m_overlay}) connect(c, &QCheckBox::toggled, this, [this] { restyle(); });
    connect(m_auto, &QCheckBox::toggled, this, [this](bool on) {
        m_range->setVisible(!on);
        if (!on) {  // start from the range shown
            const auto [lo, hi] = m_heatmap->range();
            m_min->setValue(lo);
            m_max->setValue(hi);
        }
        restyle();
    });
    for (QDoubleSpinBox* s : {m_min, m_max}) connect(s, &QDoubleSpinBox::valueChanged, this, [this] { restyle(); });
    connect(m_overlayN, &QSpinBox::valueChanged, this, [this] { restyle(); });
    m_n->setVisible(false);
    m_letters->setVisible(false);
}

void InsidePane::onSource(int index)
{
    const QString id = m_source->itemData(index).toString();
    if (id == "open") {
        const QString path = QFileDialog::getOpenFileName(this, "Open a checkpoint", QString(), checkpointFileFilter());
        m_source->setCurrentIndex(m_lastSource);  // the entry stays what is shown until the file loads
        if (!path.isEmpty()) chooseCheckpoint(path);
        return;
    }
    if (id == "openrun") {
        const QString dir = QFileDialog::getExistingDirectory(this, "Open a run folder (config.json, metrics.csv, checkpoints/)");
        m_source->setCurrentIndex(m_lastSource);
        if (!dir.isEmpty()) chooseRun(dir);
        return;
    }
    if (id == "openlm") {
        const QString dir = QFileDialog::getExistingDirectory(this, "Open a pretrained model folder (config.json, tokenizer.json, weights)");
        m_source->setCurrentIndex(m_lastSource);
        if (!dir.isEmpty()) chooseModelFolder(dir);
        return;
    }
    if (id == "construction") chooseConstruction(m_n->value(), m_letters->value());
    else if (id == "current") chooseCurrentModel();
    else if (id.startsWith("lmdir:")) chooseModelFolder(id.mid(6));
    else if (id.startsWith("lm:")) {
        for (const auto& lm : m_pretrained)
            if (lm->folder == id.mid(3)) return chooseLanguageModel(lm);
    } else if (id.startsWith("file:")) chooseCheckpoint(id.mid(5));
    else if (id.startsWith("run:")) chooseRun(id.mid(4));
    else chooseBundled(id);
}

void InsidePane::setPretrainedModels(const std::vector<std::shared_ptr<const LanguageModel>>& models)
{
    m_pretrained = models;
    // the entries follow the list (one that is shown stays, its model still held by the subject)
    const QString shown = m_source->currentData().toString();
    for (int i = m_source->count() - 1; i >= 0; --i) {
        const QString id = m_source->itemData(i).toString();
        if (id.startsWith("lm:") && id != shown) m_source->removeItem(i);
    }
    const int at = m_source->findData("open");
    for (const auto& lm : models)
        if (m_source->findData("lm:" + lm->folder) < 0) {
            m_source->insertItem(at, lm->name + " (Pretrained tab)", "lm:" + lm->folder);
            m_source->setItemData(at, lm->folder, Qt::ToolTipRole);
        }
    m_lastSource = std::max(0, m_source->findData(shown));
}

void InsidePane::chooseLanguageModel(const std::shared_ptr<const LanguageModel>& lm)
{
    if (!lm) return;
    int i = m_source->findData("lm:" + lm->folder);
    if (i < 0) {
        m_source->insertItem(m_source->findData("open"), lm->name + " (Pretrained tab)", "lm:" + lm->folder);
        i = m_source->findData("lm:" + lm->folder);
    }
    m_source->setCurrentIndex(i);
    load(lm->name, [lm](JobContext&) { return InsideSubject(lm); });
}

void InsidePane::chooseModelFolder(const QString& folder)
{
    const QString label = QFileInfo(folder).fileName();
    int i = m_source->findData("lmdir:" + folder);
    if (i < 0) {
        m_source->insertItem(m_source->findData("open"), label, "lmdir:" + folder);
        i = m_source->findData("lmdir:" + folder);
        m_source->setItemData(i, folder, Qt::ToolTipRole);
    }
    m_source->setCurrentIndex(i);
    load(label, [folder](JobContext& job) {
        return InsideSubject::loadLanguageModel(folder, [&job](int done, int total) {
            job.progress(done, total);
            return !job.cancelled();
        });
    });
}

void InsidePane::chooseBundled(const QString& id)
{
    try {
        const BundledCheckpoint& b = findBundled(id);
        m_source->setCurrentIndex(m_source->findData(id));
        const QString path = b.path, label = b.label;
        load(label, [path, label](JobContext&) { return InsideSubject::load(path, label); });
    } catch (const Error& e) {
        setStatus(e.message());
    }
}

void InsidePane::chooseConstruction(int n, int letters)
{
    m_source->setCurrentIndex(m_source->findData("construction"));
    m_n->setValue(n);
    m_letters->setValue(letters);
    load("the construction", [n, letters](JobContext&) { return InsideSubject(ConstructionOptions{n, letters}); });
}

void InsidePane::chooseCheckpoint(const QString& path)
{
    if (const QString run = runFolderOf(path); !run.isEmpty()) return chooseRun(run, path);
    QString label = QFileInfo(path).fileName();
    int i = m_source->findData("file:" + path);
    if (i < 0) {
        m_source->insertItem(m_source->count() - 1, label, "file:" + path);
        i = m_source->count() - 2;
    }
    m_source->setCurrentIndex(i);
    load(label, [path](JobContext&) { return InsideSubject::load(path); });
}

void InsidePane::chooseRun(const QString& runDir, const QString& checkpoint)
{
    const QDir dir(runDir);
    const QString id = "run:" + dir.absolutePath(), label = dir.dirName() + " (run)";
    int i = m_source->findData(id);
    if (i < 0) {
        m_source->insertItem(m_source->findData("open"), label, id);
        i = m_source->findData(id);
        m_source->setItemData(i, dir.absolutePath(), Qt::ToolTipRole);
    }
    m_source->setCurrentIndex(i);
    // the checkpoint asked for, else the run's last, else its latest snapshot
    QString path = checkpoint;
    if (path.isEmpty() && dir.exists("checkpoints/last.safetensors")) path = dir.filePath("checkpoints/last.safetensors");
    if (path.isEmpty()) {
        const QStringList snapshots = QDir(dir.filePath("checkpoints/snapshots")).entryList({"step-*.safetensors"}, QDir::Files, QDir::Name);
        if (!snapshots.isEmpty()) path = dir.filePath("checkpoints/snapshots/" + snapshots.last());
    }
    if (path.isEmpty()) {
        setStatus(QString("Cannot open %1: it has no checkpoints/last.safetensors and no snapshots").arg(dir.absolutePath()));
        emit failed(status());
        emit refreshed();
        return;
    }
    const QString name = dir.dirName();
    load(name, [path, name](JobContext&) { return InsideSubject::load(path, name); }, dir.absolutePath(), path);
}

void InsidePane::showSnapshot(int index)
{
    if (index < 0 || index >= int(m_snapshots.size())) return;
    const RunSnapshot shot = m_snapshots[size_t(index)];
    const QString name = QDir(m_runDir).dirName() + ", " + shot.label();
    m_keepSelected = m_selected;
    load(name, [path = shot.path, name](JobContext&) { return InsideSubject::load(path, name); }, m_runDir, shot.path);
}

void InsidePane::chooseCurrentModel()
{
    m_source->setCurrentIndex(m_source->findData("current"));
    const Model m = m_current ? m_current() : Model();
    if (m.isNull()) {
        setStatus("No model in the Train tab yet: train one or load a checkpoint there first.");
        emit failed(status());
        return;
    }
    load("the model in the Train tab", [m](JobContext&) { return InsideSubject(m, "model in the Train tab"); });
}

void InsidePane::load(const QString& what, std::function<InsideSubject(JobContext&)> make, const QString& runDir,
                      const QString& path)
{
    m_probe.cancel();  // of the subject being replaced
    setStatus(QString("Loading %1…").arg(what));
    m_loading = what;
    m_n->setVisible(m_source->currentData().toString() == "construction");
    m_letters->setVisible(m_n->isVisible());
    struct Opened {
        InsideSubject subject;
        std::vector<RunSnapshot> snapshots;
    };
    m_load.start(
        [make, runDir](JobContext& job) {
            Opened o{make(job), {}};
            if (!runDir.isEmpty()) o.snapshots = runSnapshots(runDir);  // a few file names, and mechanisms.csv for the notes
            return o;
        },
        [this, runDir, path](const Opened& o) {
            if (m_subject.isNull() || o.subject.name() != m_subject.name() || m_runDir != runDir) m_ablation.heads.clear();
            m_subject = o.subject;
            if (!m_subject.ablationProblem(m_ablation).isEmpty()) m_ablation.heads.clear();  // heads this subject has not
            m_lastSource = m_source->currentIndex();
            m_runDir = runDir;
            m_snapshots = o.snapshots;
            const QSignalBlocker quiet(m_step);
            m_step->clear();
            int shown = -1;
            for (size_t i = 0; i < m_snapshots.size(); ++i) {
                m_step->addItem(m_snapshots[i].label(), m_snapshots[i].path);
                if (QFileInfo(m_snapshots[i].path) == QFileInfo(path)) shown = int(i);
            }
            for (size_t i = 0; i < m_snapshots.size() && shown < 0; ++i)  // last.safetensors, listed as its step's snapshot
                if (m_snapshots[i].step == m_subject.model().step()) shown = int(i);
            m_step->setCurrentIndex(shown);
            m_shownPath = shown >= 0 ? m_snapshots[size_t(shown)].path : path;
            m_steps->setVisible(!m_snapshots.empty());
            m_earlier->setEnabled(shown > 0);
            m_later->setEnabled(shown >= 0 && shown + 1 < int(m_snapshots.size()));
            probe();
            emit opened();
        },
        [this, what](const QString& message) {
            // the snapshot list keeps showing the step that is shown
            m_keepSelected = -1;
            const QSignalBlocker quiet(m_step);
            m_step->setCurrentIndex(m_step->findData(m_shownPath));
            const QString error = QString("Cannot open %1: %2").arg(what, message);
            setStatus(error);
            emit failed(error);
            emit refreshed();
        });
}

void InsidePane::setInput(const std::vector<int>& tokens)
{
    m_input = Input::Copy;
    m_copyTokens = tokens;
    if (!m_subject.isNull() && !m_load.isRunning()) probe();  // else the subject, once loaded, is probed with it
}

void InsidePane::setTextInput(const QString& prompt)
{
    m_input = Input::Text;
    m_prompt = prompt;
    if (!m_subject.isNull() && !m_load.isRunning()) probe();
}

void InsidePane::setTaskInput(int difficulty, unsigned long long seed)
{
    if (m_input != Input::Task) {
        // a task's keys are single tokens (MQAR, MAD's recall): marks start at a 1-gram lookup
        const QSignalBlocker quiet(m_overlayN);
        m_overlayN->setValue(1);
    }
    m_input = Input::Task;
    m_taskDifficulty = difficulty;
    m_taskSeed = seed;
    if (!m_subject.isNull() && !m_load.isRunning()) probe();
}

std::pair<int, int> InsidePane::queries() const
{
    if (m_input == Input::Task && m_task.tokens == m_tokens) return InsideSubject::lookupQueries(m_task);
    return m_subject.lookupQueries(m_tokens);
}

CopyScore InsidePane::scored(const std::vector<int>& predictions) const
{
    if (m_input == Input::Task && m_task.tokens == m_tokens) return InsideSubject::score(m_task, predictions);
    return m_subject.score(m_tokens, predictions);
}

void InsidePane::probe()
{
    const QString problem = m_input == Input::Task ? m_subject.taskProblem() : m_subject.inputProblem(m_input == Input::Text);
    const bool noInput = m_input == Input::Text ? m_prompt.isEmpty() : m_input == Input::Copy ? m_copyTokens.empty() : m_taskDifficulty < 1;
    if (!problem.isEmpty() || noInput) {
        m_probe.cancel();
        setStatus(problem.isEmpty() ? QString("No input yet.") : m_subject.name() + ": " + problem);
        m_probes = {};
        m_tokens.clear();
        m_task = {};
        m_predictions.clear();
        m_continuation.clear();
        rebuild();
        emit refreshed();
        return;
    }
    const InsideSubject subject = m_subject;
    const Input input = m_input;
    const std::vector<int> copyTokens = m_copyTokens;
    const QString prompt = m_prompt;
    const int difficulty = m_taskDifficulty;
    const unsigned long long seed = m_taskSeed;
    const HeadAblation ablation = m_ablation;
    struct Probed {
        std::vector<int> tokens;
        TaskInput task;
        ModelProbes probes;
        std::vector<int> predictions;
        QString continuation;
        std::vector<int> plainPredictions;  // with every head, when heads are off
        QString plainContinuation;
    };
    setStatus(ablation.isEmpty() ? QString("Looking inside %1…").arg(subject.name())
                                 : QString("Looking inside %1 with %2…").arg(subject.name(), ablation.describe()));
    m_probe.start(
        [subject, input, copyTokens, prompt, difficulty, seed, ablation](JobContext& job) {
            Probed p;
            if (input == Input::Text) {
                p.tokens = subject.encode(prompt);
            } else if (input == Input::Task) {
                p.task = subject.taskInput(difficulty, seed);
                p.tokens = p.task.tokens;
            } else {
                p.tokens = copyTokens;
                for (int t : p.tokens)  // the input's letters must be in this subject's alphabet
                    if (t >= CopyVocab{subject.letters()}.size())
                        throw Error(QString("the input has letters outside this model's alphabet of %1").arg(subject.letters()));
            }
            std::optional<SubjectHeadsOff> off;
            if (!ablation.isEmpty()) {
                p.plainPredictions = subject.predictions(p.tokens);
                if (const LanguageModel* lm = subject.languageModel())
                    p.plainContinuation = lm->generate(prompt, 16, [&job](int, int) { return !job.cancelled(); }).text;
                off.emplace(subject, ablation);
            }
            p.probes = subject.probe(p.tokens, [&job] { return !job.cancelled(); });
            p.predictions = p.probes.predictions.size() == p.tokens.size() ? p.probes.predictions : subject.predictions(p.tokens);
            if (const LanguageModel* lm = subject.languageModel()) {
                // what it answers: a phone book's number, the rest of a passage (greedy, a line's worth)
                const LanguageModel::Continuation c = lm->generate(prompt, 16, [&job](int, int) { return !job.cancelled(); });
                p.continuation = c.text;
            }
            return p;
        },
        [this](const Probed& p) {
            m_tokens = p.tokens;
            m_task = p.task;
            m_probes = p.probes;
            m_predictions = p.predictions;
            m_continuation = p.continuation;
            m_plainScore = p.plainPredictions.size() == p.tokens.size() && !p.tokens.empty() ? scored(p.plainPredictions) : CopyScore{};
            m_plainContinuation = p.plainContinuation;
            setStatus(m_ablation.isEmpty() ? m_subject.summary() : m_subject.summary() + " — " + m_ablation.describe());
            rebuild();
            emit refreshed();
        },
        [this](const QString& error) {
            m_probes = {};
            m_tokens.clear();
            m_task = {};
            m_predictions = {};
            m_continuation.clear();
            setStatus(m_subject.name() + ": " + error);
            rebuild();
            emit failed(status());
            emit refreshed();
        });
}

QString InsidePane::view() const { return m_viewBox->currentData().toString(); }

void InsidePane::setView(const QString& view)
{
    const int i = m_viewBox->findData(view);
    if (i >= 0) m_viewBox->setCurrentIndex(i);
    rebuild();
}

QString InsidePane::status() const { return m_statusText; }

void InsidePane::setStatus(const QString& text)
{
    m_statusText = text;
    showStatus();
}

void InsidePane::showStatus()
{
    // a short pane gives the line one row, whole in its tooltip
    m_status->setWordWrap(!m_shortPane);
    m_status->setText(m_shortPane ? m_status->fontMetrics().elidedText(m_statusText, Qt::ElideRight, flowRoom() - 8) : m_statusText);
    m_status->setToolTip(m_shortPane && m_status->text() != m_statusText ? m_statusText : QString());
}

QString InsidePane::info() const { return m_infoText; }

void InsidePane::showInfo()
{
    // a short pane gives the map the height: a line for the map and one for the answers, each
    // elided, the whole in the tooltip
    m_info->setWordWrap(!m_shortPane);
    if (!m_shortPane) {
        m_info->setText(m_infoText);
        m_info->setToolTip(QString());
        return;
    }
    QStringList lines;
    for (const QString& line : m_infoBrief)
        lines << m_info->fontMetrics().elidedText(line, Qt::ElideRight, flowRoom() - 8).toHtmlEscaped();
    m_info->setText(lines.join("<br>"));
    m_info->setToolTip(m_infoText);
}

void InsidePane::fitMap()
{
    // In a short pane the map gets the viewport's height less what shares it (the status, the
    // thumbnails, the head's line and the spaces between them): a function of the pane's size and
    // content, not of the order in which they arrived. Only a pane too short for a third of a label
    // a row scrolls. A tall pane's map keeps every other row labelled, what is under it scrolling.
    if (!m_shortPane) return m_heatmap->setFitHeight(0);
    const QWidget* viewport = m_views->viewport();
    const int width = viewport->width();
    auto* vl = qobject_cast<QVBoxLayout*>(m_viewsBox->layout());
    int others = m_mapGap, items = 2;  // the map and the gap
    for (const QWidget* w : {static_cast<const QWidget*>(m_status), static_cast<const QWidget*>(m_thumbs), static_cast<const QWidget*>(m_info)}) {
        if (w->isHidden()) continue;
        const int h = w->hasHeightForWidth() ? w->heightForWidth(width) : w->sizeHint().height();
        others += std::max(h, w->minimumSizeHint().height());
        ++items;
    }
    others += vl->spacing() * (items - 1);
    m_heatmap->setFitHeight(std::max(1, viewport->height() - others - 2));  // (2: rounding in the labels' heights)
}

bool InsidePane::eventFilter(QObject* watched, QEvent* e)
{
    if ((watched == m_views->viewport() && e->type() == QEvent::Resize) || (watched == m_viewsBox && e->type() == QEvent::LayoutRequest))
        fitMap();
    return QWidget::eventFilter(watched, e);
}

void InsidePane::rebuild()
{
    // which views this subject has; keep the chosen one when it can, else the first it has
    const QStringList views = viewsOf(m_probes);
    // a recurrent layer's heads (Mamba-2, Gated DeltaNet) show their effective attention where attention heads show theirs
    if (const int i = m_viewBox->findData("attention"); i >= 0)
        m_viewBox->setItemText(i, m_probes.effectiveAttention ? QString("Effective attention") : viewTitle("attention"));
    for (int i = 0; i < m_viewBox->count(); ++i) {
        auto* model = qobject_cast<QStandardItemModel*>(m_viewBox->model());
        if (model) model->item(i)->setEnabled(views.contains(m_viewBox->itemData(i).toString()));
    }
    if (!views.isEmpty() && !views.contains(view())) m_viewBox->setCurrentIndex(m_viewBox->findData(views.front()));
    m_analysis.reset();
    if (m_probes.attention.layers > 0 && int(m_tokens.size()) == m_probes.attention.length) {
        try {
            const auto [begin, end] = queries();
            m_analysis = std::make_unique<LookupAnalysis>(analyseLookup(m_probes.attention, m_tokens, begin, end));
        } catch (const Error&) {
            // not a copy input: heads unlabelled
        }
    }
    m_scored = m_predictions.size() == m_tokens.size() && !m_tokens.empty();
    m_score = m_scored ? scored(m_predictions) : CopyScore{};
    m_view = views.isEmpty() ? InsideView{} : buildView(m_probes, view(), m_analysis.get(), m_score.wrong);
    // the first lookup head when there is one, else the first map; stepping through a run's
    // snapshots keeps the map that was shown, so one head is seen to change
    m_selected = 0;
    for (size_t i = 0; i < m_view.highlighted.size(); ++i)
        if (m_view.highlighted[i]) {
            m_selected = int(i);
            break;
        }
    if (m_keepSelected >= 0 && m_keepSelected < int(m_view.maps.size())) m_selected = m_keepSelected;
    m_keepSelected = -1;
    followSelectedHead();
    buildThumbnails();
    updateCausalRow();
    restyle();
}

void InsidePane::buildThumbnails()
{
    // Attention: a row per layer, a column per head. Many maps (a pretrained model's 144 heads or
    // 24 blocks): smaller thumbnails without captions (they are in the tooltips and the map's
    // title) and a label heading each row, so a laptop's half-screen pane holds a row.
    // A short pane (a laptop's screen) drops the captions and flows the layers one after the
    // other across the pane's width, each behind its label, for the enlarged map's height.
    for (QToolButton* b : m_thumbButtons) b->deleteLater();
    m_thumbButtons.clear();
    for (QLabel* l : m_rowLabels) l->deleteLater();
    m_rowLabels.clear();
    const bool attention = m_view.view == "attention";
    const bool many = m_view.maps.size() > 16;
    const bool flow = m_shortPane && !many;
    const bool compact = many || flow;
    m_thumbSide = many ? kSmallThumbnail : flow ? kFlowThumbnail : kThumbnail;
    while (QLayoutItem* line = m_flow->takeAt(0)) delete line;  // the lines' items, not the widgets
    m_flowRoom = flowRoom();
    QHBoxLayout* line = nullptr;
    int used = 0;
    int lastRow = -1;
    const int thumbWidth = m_thumbSide + 8 + m_flow->spacing();
    const auto place = [&](QWidget* w, int row, int col, bool label) {
        if (!flow) {
            m_thumbGrid->addWidget(w, row, col);
            return;
        }
        // (a button's size hint before it is polished counts a caption it will not show)
        const int width = label ? w->sizeHint().width() + m_flow->spacing() : thumbWidth;
        // a label starts a line when it and one thumbnail do not fit on this one
        if (!line || (used > 0 && used + width + (label ? thumbWidth : 0) > m_flowRoom)) {
            line = new QHBoxLayout;
            line->setSpacing(m_flow->spacing());
            line->addStretch(1);
            m_flow->addLayout(line);
            used = 0;
        }
        line->insertWidget(line->count() - 1, w);
        used += width;
    };
    for (size_t i = 0; i < m_view.maps.size(); ++i) {
        const int row = attention ? m_view.layers[i] : int(i) / 8, col = (attention ? m_view.heads[i] : int(i) % 8) + (compact ? 1 : 0);
        if (compact && row != lastRow && (attention || !flow)) {
            const int lastInRow = attention ? -1 : int(std::min(m_view.maps.size(), size_t(row + 1) * 8)) - 1;
            auto* label = new QLabel(attention ? QString("L%1").arg(m_view.blocks[i])
                                               : QString("%1–%2").arg(m_view.blocks[i]).arg(m_view.blocks[size_t(lastInRow)]),
                                     m_thumbs);
            label->setToolTip(attention ? QString("layer %1: its heads from 0 on").arg(m_view.blocks[i]) : QString("blocks"));
            if (flow) label->setContentsMargins(used > 0 ? 6 : 0, 0, 2, 0);  // a layer's heads read as a group
            place(label, row, 0, true);
            m_rowLabels.push_back(label);
            lastRow = row;
        }
        auto* b = new QToolButton(m_thumbs);
        b->setToolButtonStyle(compact ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextUnderIcon);
        b->setIconSize(QSize(m_thumbSide, m_thumbSide));
        b->setText(m_view.captions[i].section('\n', 0, 0));
        b->setToolTip(m_view.captions[i]);
        b->setCheckable(true);
        b->setAutoRaise(true);
        if (m_view.highlighted[i]) b->setStyleSheet(QString("QToolButton { border: %1px solid #ff7f0e; }").arg(compact ? 2 : 3));
        connect(b, &QToolButton::clicked, this, [this, i] {
            if (m_ablateMode->isChecked() && m_view.view == "attention" && m_causal->isVisible()) toggleHead(i);
            else selectMap(int(i));
        });
        if (attention) {
            b->setContextMenuPolicy(Qt::CustomContextMenu);
            connect(b, &QToolButton::customContextMenuRequested, this, [this, i, b](const QPoint& at) {
                if (!m_causal->isVisible() || i >= m_view.maps.size()) return;
                QMenu menu;
                const QString head = QString("%1.%2").arg(m_view.blocks[i]).arg(m_view.heads[i]);
                QAction* toggle = menu.addAction(headOffAt(i) ? QString("Switch head %1 on").arg(head) : QString("Switch head %1 off").arg(head));
                QAction* reset = menu.addAction("Every head on");
                reset->setEnabled(!m_ablation.isEmpty());
                QAction* chosen = menu.exec(b->mapToGlobal(at));
                if (chosen == toggle) toggleHead(i);
                else if (chosen == reset) resetHeads();
            });
        }
        place(b, row, col, false);
        m_thumbButtons.push_back(b);
    }
}

int InsidePane::flowRoom() const { return width() - style()->pixelMetric(QStyle::PM_ScrollBarExtent) - 12; }

void InsidePane::resizeEvent(QResizeEvent* e)
{
    QWidget::resizeEvent(e);
    // a new width matters only to thumbnails flowed across it (and to the one-line status)
    const bool shortPane = height() < kShortPane;
    const bool flowing = shortPane && m_view.maps.size() <= 16;
    if (shortPane == m_shortPane && (!flowing || flowRoom() == m_flowRoom)) {
        if (shortPane && width() != e->oldSize().width()) {
            showStatus();
            showInfo();
        }
        return;
    }
    m_shortPane = shortPane;
    m_flowRoom = flowRoom();
    showStatus();
    showInfo();
    fitMap();
    if (m_view.maps.empty()) return;
    buildThumbnails();
    restyle();
}

void InsidePane::updateCausalRow()
{
    HeadAblation probeHead;
    probeHead.heads = {{0, 0}};
    const bool heads = !m_subject.isNull() && m_probes.attention.layers > 0 && m_subject.ablationProblem(probeHead).isEmpty();
    const bool states = !m_subject.isNull() && !m_subject.isConstruction() && !m_subject.readsText() && !m_subject.model().stateLayout().channels.empty();
    const bool attention = heads && m_view.view == "attention";
    m_ablateMode->setVisible(attention);
    m_ablationMethod->setVisible(attention);
    m_resetHeads->setVisible(attention);
    m_resetHeads->setEnabled(!m_ablation.isEmpty());
    m_importanceButton->setVisible(heads);
    m_sweepButton->setVisible(states);
    m_causal->setVisible(heads || states);
}

bool InsidePane::headOffAt(size_t map) const
{
    return m_view.view == "attention" && map < m_view.blocks.size() && m_ablation.contains(m_view.blocks[map], m_view.heads[map]);
}

void InsidePane::toggleHead(size_t map)
{
    if (m_view.view != "attention" || map >= m_view.blocks.size()) return;
    m_keepSelected = m_selected;
    setHeadOff(m_view.blocks[map], m_view.heads[map], !headOffAt(map));
}

void InsidePane::setHeadOff(int layer, int head, bool off)
{
    HeadAblation next = m_ablation;
    auto& hs = next.heads;
    const auto it = std::find(hs.begin(), hs.end(), std::make_pair(layer, head));
    if (off == (it != hs.end())) return;
    if (off) hs.emplace_back(layer, head);
    else hs.erase(it);
    const QString problem = m_subject.ablationProblem(next);
    if (!problem.isEmpty()) {
        setStatus(problem);
        emit failed(problem);
        return;
    }
    m_ablation = next;
    if (m_keepSelected < 0) m_keepSelected = m_selected;
    probe();
}

void InsidePane::setAblationMethod(HeadAblation::Method method)
{
    const QSignalBlocker quiet(m_ablationMethod);
    m_ablationMethod->setCurrentIndex(m_ablationMethod->findData(ablationMethodName(method)));
    if (m_ablation.method == method) return;
    m_ablation.method = method;
    if (!m_ablation.isEmpty()) {
        m_keepSelected = m_selected;
        probe();
    }
}

void InsidePane::resetHeads()
{
    if (m_ablation.isEmpty()) return;
    m_ablation.heads.clear();
    m_keepSelected = m_selected;
    probe();
}

HeadImportanceDialog* InsidePane::openHeadImportance()
{
    HeadAblation probeHead;
    probeHead.heads = {{0, 0}};
    if (m_subject.isNull() || !m_subject.ablationProblem(probeHead).isEmpty()) return nullptr;
    return new HeadImportanceDialog(m_subject, this);
}

StateSweepDialog* InsidePane::openStateSweep()
{
    if (m_subject.isNull() || m_subject.isConstruction() || m_subject.readsText() || m_subject.model().stateLayout().channels.empty()) return nullptr;
    return new StateSweepDialog(m_subject, this);
}

void InsidePane::selectMap(int index)
{
    if (index < 0 || index >= int(m_view.maps.size())) return;
    m_selected = index;
    followSelectedHead();
    showMap();
}

const HeadLookup* InsidePane::selectedHead() const
{
    if (m_view.view != "attention" || !m_analysis || m_selected >= int(m_view.maps.size())) return nullptr;
    return &m_analysis->heads[size_t(m_view.layers[size_t(m_selected)]) * m_probes.attention.heads + size_t(m_view.heads[size_t(m_selected)])];
}

void InsidePane::followSelectedHead()
{
    // A lookup head's marks start at its own order; after that the spinner is the user's.
    const HeadLookup* h = selectedHead();
    if (!h || h->order == 0) return;
    const QSignalBlocker quiet(m_overlayN);
    m_overlayN->setValue(h->order);
}

void InsidePane::restyle()
{
    HeatmapStyle s;
    s.colormap = m_colormap->currentText();
    s.logScale = m_log->isChecked();
    s.autoRange = m_auto->isChecked();
    s.min = m_min->value();
    s.max = std::max(m_max->value(), m_min->value() + 1e-6);
    m_heatmap->setStyle(s);
    for (size_t i = 0; i < m_thumbButtons.size(); ++i) {
        QImage image = heatmapImage(m_view.maps[i], s, QSize(m_thumbSide, m_thumbSide));
        const bool off = headOffAt(i);
        if (off) {  // a switched-off head: faded, crossed out in red
            image = image.convertToFormat(QImage::Format_Grayscale8).convertToFormat(QImage::Format_ARGB32);
            QPainter paint(&image);
            paint.fillRect(image.rect(), QColor(255, 255, 255, 120));
            paint.setPen(QPen(QColor(214, 39, 40), std::max(2, m_thumbSide / 10)));
            paint.drawLine(2, 2, image.width() - 3, image.height() - 3);
            paint.drawLine(2, image.height() - 3, image.width() - 3, 2);
        }
        m_thumbButtons[i]->setIcon(QPixmap::fromImage(image));
        m_thumbButtons[i]->setToolTip(m_view.captions[i] + (off ? QString("\nswitched off (%1)").arg(m_ablationMethod->currentText()) : QString()));
    }
    showMap();
}

void InsidePane::showMap()
{
    for (size_t i = 0; i < m_thumbButtons.size(); ++i) m_thumbButtons[i]->setChecked(int(i) == m_selected);
    if (m_view.maps.empty()) {
        m_heatmap->setData(HeatmapData{});
        m_infoText = m_probes.tokens.empty() ? QString() : QString("Nothing to show in this view.");
        m_infoBrief = QStringList{m_infoText};
        showInfo();
        return;
    }
    const HeatmapData& map = m_view.maps[size_t(m_selected)];
    m_heatmap->setData(map);
    // whole, and a line each for the map and the answers (a short pane's form)
    QString info, brief, answers;
    bool match = false;
    if (const HeadLookup* head = selectedHead()) {
        const HeadLookup& h = *head;
        match = h.kind == HeadKind::NgramMatch;
        QString lookup, matched, ambiguous;
        int best = 0;
        for (int k = 1; k <= kMaxLookupOrder; ++k) {
            lookup += QString("<td>%1</td>").arg(h.scored[size_t(k)] ? QString::number(h.lookup[size_t(k)], 'f', 2) : "–");
            matched += QString("<td>%1</td>").arg(h.scored[size_t(k)] ? QString::number(h.match[size_t(k)], 'f', 2) : "–");
            ambiguous += QString("<td>%1</td>").arg(m_analysis->ambiguous[size_t(k)]);
            if (h.scored[size_t(k)] && (best == 0 || h.lookup[size_t(k)] > h.lookup[size_t(best)] + 0.01)) best = k;  // the lowest order near the best
        }
        info = QString("<b>%1</b> — previous-token %2, current %3, first-token %4, entropy %5"
                       "<table cellspacing=4><tr><td>n</td><td>1</td><td>2</td><td>3</td><td>4</td><td>5</td><td>6</td><td>7</td><td>8</td></tr>"
                       "<tr><td>lookup</td>%6</tr><tr><td>match</td>%7</tr><tr><td>ambiguous queries</td>%8</tr></table>")
                   .arg(h.label).arg(h.previousToken, 0, 'f', 2).arg(h.currentToken, 0, 'f', 2).arg(h.firstToken, 0, 'f', 2)
                   .arg(h.entropy, 0, 'f', 2).arg(lookup, matched, ambiguous);
        brief = best > 0 ? QString("%1 — lookup %2, match %3 at n = %4; previous-token %5")
                               .arg(h.label).arg(h.lookup[size_t(best)], 0, 'f', 2).arg(h.match[size_t(best)], 0, 'f', 2).arg(best)
                               .arg(h.previousToken, 0, 'f', 2)
                         : QString("%1 — previous-token %2, entropy %3").arg(h.label).arg(h.previousToken, 0, 'f', 2).arg(h.entropy, 0, 'f', 2);
    } else if (m_view.view == "implicit") {
        info = "The selective scan is linear in its input: y_t = Σ_s α[t,s] u_s + D u_t per channel. Shown: |α| averaged over "
               "the channels (the skip D and the gate are left out). Compare its rows with a lookup head's single bright cell.";
        brief = "|α| of y_t = Σ_s α[t,s] u_s + D u_t, averaged over the channels";
    } else if (m_view.view == "state") {
        info = "Per-channel norm of the hidden state after each token (LSTM: |h| then |c| channels; Mamba-2: a head's head_dim x d_state state; Gated DeltaNet: a head's key x value state).";
        brief = info;
    } else if (m_view.view == "delta") {
        info = "The step size Δ after softplus (Mamba: per channel; Mamba-2: per head): large Δ lets a token in and forgets the past; small Δ keeps the state.";
        brief = info;
    }
    // the model's answers
    if (m_scored) {
        const CopyScore& score = m_score;
        if (m_subject.readsText()) {
            info += QString("<br>Predicts %1 of the %2 copyable tokens of this prompt (the next token after a %3-gram seen once "
                            "before, as it followed then; rows marked ✗ are wrong).")
                        .arg(score.right).arg(score.answers).arg(kTextCopyOrder);
            answers = QString("Predicts %1 of %2 copyable tokens").arg(score.right).arg(score.answers);
        } else if (m_input == Input::Task && !m_task.tokens.empty()) {
            info += QString("<br>Answers %1 of %2 of this %3 example's answer tokens (rows marked ✗ are wrong).")
                        .arg(score.right).arg(score.answers).arg(m_task.task.toHtmlEscaped());
            answers = QString("Answers %1 of %2").arg(score.right).arg(score.answers);
        } else {
            info += QString("<br>Copies %1 of %2 letters of this input (rows marked ✗ are wrong).").arg(score.right).arg(score.answers);
            answers = QString("Copies %1 of %2 letters").arg(score.right).arg(score.answers);
        }
        if (!m_ablation.isEmpty() && m_plainScore.answers == score.answers) {
            info += QString(" <b>With %1</b>; with every head: %2 of %3.").arg(m_ablation.describe().toHtmlEscaped()).arg(m_plainScore.right).arg(m_plainScore.answers);
            answers += QString(" with %1; with every head: %2").arg(m_ablation.describe()).arg(m_plainScore.right);
        }
    }
    if (m_subject.readsText() && !m_tokens.empty()) {
        const QString continuation = QString(m_continuation).replace('\n', QChar(0x23CE));
        info += QString("<br>%1 tokens. Greedy continuation: <b>%2</b>").arg(m_tokens.size()).arg(continuation.toHtmlEscaped());
        answers += (answers.isEmpty() ? QString() : QString("; ")) + QString("continues: %1").arg(continuation);
    }
    if (m_subject.readsText() && !m_tokens.empty() && !m_ablation.isEmpty())
        info += QString("<br>With every head: <b>%1</b>").arg(QString(m_plainContinuation).replace('\n', QChar(0x23CE)).toHtmlEscaped());
    m_infoText = info;
    m_infoBrief.clear();
    for (const QString& line : {brief, answers})
        if (!line.isEmpty()) m_infoBrief << line;
    showInfo();
    std::vector<std::pair<int, int>> marks, warnings;
    if (m_overlay->isChecked() && (m_view.view == "attention" || m_view.view == "implicit") && !m_tokens.empty()) {
        try {
            const auto [begin, end] = queries();
            lookupMarksIn(m_tokens, begin, end, m_overlayN->value(), match, marks, warnings);
            if (m_input == Input::Task && m_task.tokens == m_tokens) {
                keepAnsweredQueries(m_task, marks);
                keepAnsweredQueries(m_task, warnings);
            }
        } catch (const Error&) {
            // no queries to mark
        }
    }
    m_heatmap->setMarks(marks, warnings);
}

}  // namespace parrot
