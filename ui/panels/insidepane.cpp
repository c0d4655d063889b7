#include "ui/panels/insidepane.h"

#include "base/error.h"
#include "base/figurecatalog.h"
#include "core/text/languagemodel.h"
#include "ui/common/filefilters.h"
#include "ui/panels/causaldialog.h"
#include "ui/panels/insidetext.h"
#include "ui/panels/thumbnailgrid.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

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
    buildSourceRow(layout);
    buildSnapshotRow(layout);
    buildStyleRows(layout);
    buildCausalRow(layout);
    buildViews(layout);
    connectSession();
}

void InsidePane::buildSourceRow(QVBoxLayout* layout)
{
    auto* top = new QHBoxLayout;
    m_source = new QComboBox(this);
    m_source->setObjectName("source");
    for (const BundledCheckpoint& b : bundledCheckpoints()) m_source->addItem(b.label, b.id);
    m_source->addItem(tr("Two-layer construction (no training)"), "construction");
    m_source->addItem(tr("Model in the Train tab"), "current");
    m_source->addItem(tr("Open checkpoint…"), "open");
    m_source->addItem(tr("Open run folder…"), "openrun");
    m_source->addItem(tr("Open pretrained model folder…"), "openlm");
    m_source->setToolTip(tr("What this pane looks inside"));
    m_source->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);  // a long file name does not widen the pane
    m_source->setMinimumContentsLength(14);
    top->addWidget(m_source, 1);
    m_n = new QSpinBox(this);
    m_n->setRange(1, 8);
    m_n->setValue(3);
    m_n->setPrefix(tr("n = "));
    m_n->setToolTip(tr("The construction's n-gram order"));
    m_letters = new QSpinBox(this);
    m_letters->setRange(2, 52);
    m_letters->setValue(26);
    m_letters->setPrefix(tr("|V| = "));
    m_letters->setToolTip(tr("The construction's alphabet"));
    top->addWidget(m_n);
    top->addWidget(m_letters);
    m_viewBox = new QComboBox(this);
    m_viewBox->setObjectName("view");
    for (const QString& v : {views::attention, views::implicit, views::state, views::delta}) m_viewBox->addItem(viewTitle(v), v);
    m_viewBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);  // "Effective attention" for a recurrent model's heads
    top->addWidget(m_viewBox);
    layout->addLayout(top);
    m_n->setVisible(false);
    m_letters->setVisible(false);

    connect(m_source, &QComboBox::activated, this, &InsidePane::onSource);
    const auto construction = [this] {
        if (m_source->currentData().toString() == "construction") chooseConstruction(m_n->value(), m_letters->value());
    };
    connect(m_n, &QSpinBox::editingFinished, this, construction);
    connect(m_letters, &QSpinBox::editingFinished, this, construction);
    connect(m_viewBox, &QComboBox::activated, this, [this] { rebuild(); });
}

void InsidePane::buildSnapshotRow(QVBoxLayout* layout)
{
    // a run's snapshots, stepped through with the arrows or picked from the list
    m_steps = new QWidget(this);
    auto* steps = new QHBoxLayout(m_steps);
    steps->setContentsMargins(0, 0, 0, 0);
    m_earlier = new QToolButton(m_steps);
    m_earlier->setObjectName("earlierSnapshot");
    m_earlier->setArrowType(Qt::LeftArrow);
    m_earlier->setToolTip(tr("The snapshot before this one"));
    m_step = new QComboBox(m_steps);
    m_step->setObjectName("snapshotStep");
    m_step->setToolTip(tr("The run's weights at this step: snapshots kept while it trained (log-spaced steps, and on each side "
                          "of the step where a head's lookup score first reached 0.5), and its last checkpoint"));
    m_step->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_step->setMinimumContentsLength(20);
    m_later = new QToolButton(m_steps);
    m_later->setObjectName("laterSnapshot");
    m_later->setArrowType(Qt::RightArrow);
    m_later->setToolTip(tr("The snapshot after this one"));
    steps->addWidget(new QLabel(tr("Snapshot"), m_steps));
    steps->addWidget(m_earlier);
    steps->addWidget(m_step, 1);
    steps->addWidget(m_later);
    m_steps->setVisible(false);
    layout->addWidget(m_steps);
    connect(m_step, &QComboBox::activated, this, &InsidePane::showSnapshot);
    connect(m_earlier, &QToolButton::clicked, this, [this] { showSnapshot(m_step->currentIndex() - 1); });
    connect(m_later, &QToolButton::clicked, this, [this] { showSnapshot(m_step->currentIndex() + 1); });
}

void InsidePane::buildStyleRows(QVBoxLayout* layout)
{
    auto* style = new QHBoxLayout;
    m_colormap = new QComboBox(this);
    m_colormap->addItems(Colormap::names());
    m_log = new QCheckBox(tr("log"), this);
    m_log->setToolTip(tr("Logarithmic colour scale"));
    m_auto = new QCheckBox(tr("auto range"), this);
    m_auto->setChecked(true);
    m_auto->setToolTip(tr("The colour scale spans the map's values; untick to set its ends"));
    m_overlay = new QCheckBox(tr("lookup marks"), this);
    m_overlay->setChecked(true);
    m_overlay->setToolTip(tr("Circles: where an order-n lookup head should look (the token after the earlier occurrence of the "
                             "last n tokens). Crosses: the n-gram occurred more than once, so the lookup is ambiguous."));
    m_overlayN = new QSpinBox(this);
    m_overlayN->setObjectName("marksOrder");
    m_overlayN->setRange(1, kMaxLookupOrder);
    m_overlayN->setValue(2);
    m_overlayN->setPrefix(tr("n = "));
    m_overlayN->setToolTip(tr("The order of the lookup marked; selecting a lookup head sets it to the head's order"));
    for (QWidget* w : std::initializer_list<QWidget*>{m_colormap, m_log, m_auto, m_overlay, m_overlayN}) style->addWidget(w);
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
    range->addWidget(new QLabel(tr("colour scale from"), this));
    range->addWidget(m_min);
    range->addWidget(new QLabel(tr("to"), this));
    range->addWidget(m_max);
    range->addStretch(1);
    m_range->setVisible(false);
    layout->addWidget(m_range);

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
}

void InsidePane::buildCausalRow(QVBoxLayout* layout)
{
    // the causal tests: heads switched off in place, each head's importance, the state swept
    m_causal = new QWidget(this);
    auto* causal = new QHBoxLayout(m_causal);
    causal->setContentsMargins(0, 0, 0, 0);
    m_ablateMode = new QToolButton(m_causal);
    m_ablateMode->setObjectName("ablateMode");
    m_ablateMode->setText(tr("Switch heads off"));
    m_ablateMode->setCheckable(true);
    m_ablateMode->setToolTip(tr("While down, clicking a head's thumbnail switches it off or on (right-click one at any time). "
                                "The pane then shows the model with those heads off: a forward-time mask, the weights untouched."));
    m_ablationMethod = new QComboBox(m_causal);
    m_ablationMethod->setObjectName("ablationMethod");
    m_ablationMethod->addItem(tr("zeroed"), "zero");
    m_ablationMethod->addItem(tr("mean over the input"), "mean");
    m_ablationMethod->setToolTip(tr("Zeroed: the head's output taken away. Mean: replaced by its mean over the input's positions, "
                                    "which keeps its average contribution and removes what depends on where it looks."));
    m_resetHeads = new QToolButton(m_causal);
    m_resetHeads->setObjectName("resetHeads");
    m_resetHeads->setText(tr("Reset"));
    m_resetHeads->setToolTip(tr("Every head on again"));
    m_importanceButton = new QToolButton(m_causal);
    m_importanceButton->setObjectName("headImportance");
    m_importanceButton->setText(tr("Head importance…"));
    m_importanceButton->setToolTip(tr("Switch each head off alone over many examples: which heads the answers need"));
    m_sweepButton = new QToolButton(m_causal);
    m_sweepButton->setObjectName("stateSweep");
    m_sweepButton->setText(tr("State sweep…"));
    m_sweepButton->setToolTip(tr("Shrink the state (first k of d_state, fewer channels, fewer bits) and see where copying fails "
                                 "against the copy bound for that state"));
    for (QWidget* w : std::initializer_list<QWidget*>{m_ablateMode, m_ablationMethod, m_resetHeads, m_importanceButton, m_sweepButton})
        causal->addWidget(w);
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
}

void InsidePane::buildViews(QVBoxLayout* layout)
{
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
    m_thumbs = new ThumbnailGrid(views);
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
    connect(m_thumbs, &ThumbnailGrid::clicked, this, [this](int map) {
        if (m_ablateMode->isChecked() && m_view.view == views::attention && m_causal->isVisible()) toggleHead(size_t(map));
        else selectMap(map);
    });
    connect(m_thumbs, &ThumbnailGrid::menuRequested, this, &InsidePane::headMenu);
}

void InsidePane::connectSession()
{
    connect(&m_session, &InsideSession::statusChanged, this, &InsidePane::showStatus);
    connect(&m_session, &InsideSession::loading, this, &InsidePane::opening);
    connect(&m_session, &InsideSession::subjectChanged, this, &InsidePane::showOpened);
    connect(&m_session, &InsideSession::openFailed, this, &InsidePane::openFailed);
    connect(&m_session, &InsideSession::probed, this, &InsidePane::rebuild);
    connect(&m_session, &InsideSession::refreshed, this, &InsidePane::refreshed);
}

void InsidePane::onSource(int index)
{
    const QString id = m_source->itemData(index).toString();
    if (id == "open") {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open a checkpoint"), QString(), checkpointFileFilter());
        m_source->setCurrentIndex(m_lastSource);  // the entry stays what is shown until the file loads
        if (!path.isEmpty()) chooseCheckpoint(path);
        return;
    }
    if (id == "openrun") {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a run folder (config.json, metrics.csv, checkpoints/)"));
        m_source->setCurrentIndex(m_lastSource);
        if (!dir.isEmpty()) chooseRun(dir);
        return;
    }
    if (id == "openlm") {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Open a pretrained model folder (config.json, tokenizer.json, weights)"));
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
            m_source->insertItem(at, tr("%1 (Pretrained tab)").arg(lm->name), "lm:" + lm->folder);
            m_source->setItemData(at, lm->folder, Qt::ToolTipRole);
        }
    m_lastSource = std::max(0, m_source->findData(shown));
}

void InsidePane::chooseLanguageModel(const std::shared_ptr<const LanguageModel>& lm)
{
    if (!lm) return;
    int i = m_source->findData("lm:" + lm->folder);
    if (i < 0) {
        m_source->insertItem(m_source->findData("open"), tr("%1 (Pretrained tab)").arg(lm->name), "lm:" + lm->folder);
        i = m_source->findData("lm:" + lm->folder);
    }
    m_source->setCurrentIndex(i);
    m_session.openLanguageModel(lm);
}

void InsidePane::chooseModelFolder(const QString& folder)
{
    int i = m_source->findData("lmdir:" + folder);
    if (i < 0) {
        m_source->insertItem(m_source->findData("open"), QFileInfo(folder).fileName(), "lmdir:" + folder);
        i = m_source->findData("lmdir:" + folder);
        m_source->setItemData(i, folder, Qt::ToolTipRole);
    }
    m_source->setCurrentIndex(i);
    m_session.openModelFolder(folder);
}

void InsidePane::chooseBundled(const QString& id)
{
    if (const int i = m_source->findData(id); i >= 0) m_source->setCurrentIndex(i);
    m_session.openBundled(id);
}

void InsidePane::chooseConstruction(int n, int letters)
{
    m_source->setCurrentIndex(m_source->findData("construction"));
    m_n->setValue(n);
    m_letters->setValue(letters);
    m_session.openConstruction(n, letters);
}

void InsidePane::chooseCheckpoint(const QString& path)
{
    if (const QString run = runFolderOf(path); !run.isEmpty()) return chooseRun(run, path);
    int i = m_source->findData("file:" + path);
    if (i < 0) {
        m_source->insertItem(m_source->count() - 1, QFileInfo(path).fileName(), "file:" + path);
        i = m_source->count() - 2;
    }
    m_source->setCurrentIndex(i);
    m_session.openCheckpoint(path);
}

void InsidePane::chooseRun(const QString& runDir, const QString& checkpoint)
{
    const QDir dir(runDir);
    const QString id = "run:" + dir.absolutePath();
    int i = m_source->findData(id);
    if (i < 0) {
        m_source->insertItem(m_source->findData("open"), tr("%1 (run)").arg(dir.dirName()), id);
        i = m_source->findData(id);
        m_source->setItemData(i, dir.absolutePath(), Qt::ToolTipRole);
    }
    m_source->setCurrentIndex(i);
    m_session.openRun(runDir, checkpoint);
}

void InsidePane::showSnapshot(int index)
{
    if (index < 0 || index >= int(m_session.snapshots().size())) return;
    m_keepSelected = m_selected;
    m_session.openSnapshot(index);
}

void InsidePane::chooseCurrentModel()
{
    m_source->setCurrentIndex(m_source->findData("current"));
    const Model m = m_current ? m_current() : Model();
    if (m.isNull()) return m_session.fail(tr("No model in the Train tab yet: train one or load a checkpoint there first."));
    m_session.openModel(m, tr("the model in the Train tab"), tr("model in the Train tab"));
}

void InsidePane::opening()
{
    m_n->setVisible(m_source->currentData().toString() == "construction");
    m_letters->setVisible(m_n->isVisible());
}

void InsidePane::showOpened()
{
    m_lastSource = m_source->currentIndex();
    const std::vector<RunSnapshot>& snapshots = m_session.snapshots();
    const int shown = m_session.shownSnapshot();
    const QSignalBlocker quiet(m_step);
    m_step->clear();
    for (const RunSnapshot& s : snapshots) m_step->addItem(s.label(), s.path);
    m_step->setCurrentIndex(shown);
    m_steps->setVisible(!snapshots.empty());
    m_earlier->setEnabled(shown > 0);
    m_later->setEnabled(shown >= 0 && shown + 1 < int(snapshots.size()));
}

void InsidePane::openFailed()
{
    // the snapshot list keeps showing the step that is shown
    m_keepSelected = -1;
    const QSignalBlocker quiet(m_step);
    m_step->setCurrentIndex(m_step->findData(m_session.shownPath()));
}

void InsidePane::setInput(const std::vector<int>& tokens) { m_session.setInput(tokens); }

void InsidePane::setTextInput(const QString& prompt) { m_session.setTextInput(prompt); }

void InsidePane::setTaskInput(int difficulty, unsigned long long seed)
{
    if (m_session.input() != InsideSession::Input::Task) {
        // a task's keys are single tokens (MQAR, MAD's recall): marks start at a 1-gram lookup
        const QSignalBlocker quiet(m_overlayN);
        m_overlayN->setValue(1);
    }
    m_session.setTaskInput(difficulty, seed);
}

QString InsidePane::view() const { return m_viewBox->currentData().toString(); }

void InsidePane::setView(const QString& view)
{
    const int i = m_viewBox->findData(view);
    if (i >= 0) m_viewBox->setCurrentIndex(i);
    rebuild();
}

void InsidePane::showStatus()
{
    // a short pane gives the line one row, whole in its tooltip
    const QString status = m_session.status();
    m_status->setWordWrap(!m_shortPane);
    m_status->setText(m_shortPane ? m_status->fontMetrics().elidedText(status, Qt::ElideRight, flowRoom() - 8) : status);
    m_status->setToolTip(m_shortPane && m_status->text() != status ? status : QString());
}

QString InsidePane::info() const { return m_infoText; }

void InsidePane::showInfo()
{
    // a short pane gives the map the height: a line for the map and one for the answers, each
    // elided, the whole in the tooltip
    m_info->setWordWrap(!m_shortPane);
    m_info->setText(m_shortPane ? briefHtml({m_infoText, m_infoBrief}, m_info->fontMetrics(), flowRoom() - 8) : m_infoText);
    m_info->setToolTip(m_shortPane ? m_infoText : QString());
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
    const ModelProbes& probes = m_session.probes();
    const QStringList views = viewsOf(probes);
    // a recurrent layer's heads (Mamba-2, Gated DeltaNet) show their effective attention where attention heads show theirs
    if (const int i = m_viewBox->findData(views::attention); i >= 0)
        m_viewBox->setItemText(i, probes.effectiveAttention ? tr("Effective attention") : viewTitle(views::attention));
    for (int i = 0; i < m_viewBox->count(); ++i) {
        auto* model = qobject_cast<QStandardItemModel*>(m_viewBox->model());
        if (model) model->item(i)->setEnabled(views.contains(m_viewBox->itemData(i).toString()));
    }
    if (!views.isEmpty() && !views.contains(view())) m_viewBox->setCurrentIndex(m_viewBox->findData(views.front()));
    m_view = views.isEmpty() ? InsideView{} : buildView(probes, view(), m_session.analysis(), m_session.score().wrong);
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
    m_flowRoom = flowRoom();
    m_thumbs->build(m_view, m_shortPane, m_flowRoom);
}

int InsidePane::flowRoom() const { return width() - style()->pixelMetric(QStyle::PM_ScrollBarExtent) - 12; }

void InsidePane::resizeEvent(QResizeEvent* e)
{
    QWidget::resizeEvent(e);
    // a new width matters only to thumbnails flowed across it (and to the one-line status)
    const bool shortPane = height() < kShortPane;
    const bool flowing = ThumbnailGrid::flows(shortPane, m_view.maps.size());
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
    const bool heads = m_session.probes().attention.layers > 0 && m_session.hasSwitchableHeads();
    const bool states = m_session.hasShrinkableState();
    const bool attention = heads && m_view.view == views::attention;
    m_ablateMode->setVisible(attention);
    m_ablationMethod->setVisible(attention);
    m_resetHeads->setVisible(attention);
    m_resetHeads->setEnabled(!m_session.ablation().isEmpty());
    m_importanceButton->setVisible(heads);
    m_sweepButton->setVisible(states);
    m_causal->setVisible(heads || states);
}

bool InsidePane::headOffAt(size_t map) const
{
    return m_view.view == views::attention && map < m_view.blocks.size() && m_session.ablation().contains(m_view.blocks[map], m_view.heads[map]);
}

void InsidePane::toggleHead(size_t map)
{
    if (m_view.view != views::attention || map >= m_view.blocks.size()) return;
    m_keepSelected = m_selected;
    setHeadOff(m_view.blocks[map], m_view.heads[map], !headOffAt(map));
}

void InsidePane::headMenu(int map, const QPoint& globalPos)
{
    const size_t i = size_t(map);
    if (!m_causal->isVisible() || i >= m_view.maps.size()) return;
    QMenu menu;
    const QString head = QString("%1.%2").arg(m_view.blocks[i]).arg(m_view.heads[i]);
    QAction* toggle = menu.addAction(headOffAt(i) ? tr("Switch head %1 on").arg(head) : tr("Switch head %1 off").arg(head));
    QAction* reset = menu.addAction(tr("Every head on"));
    reset->setEnabled(!m_session.ablation().isEmpty());
    QAction* chosen = menu.exec(globalPos);
    if (chosen == toggle) toggleHead(i);
    else if (chosen == reset) resetHeads();
}

void InsidePane::setHeadOff(int layer, int head, bool off)
{
    // the map shown stays shown once the pane is probed again (set before: a pane without an input redraws at once)
    const int keep = m_keepSelected;
    if (m_keepSelected < 0) m_keepSelected = m_selected;
    if (!m_session.setHeadOff(layer, head, off)) m_keepSelected = keep;
}

void InsidePane::setAblationMethod(HeadAblation::Method method)
{
    const QSignalBlocker quiet(m_ablationMethod);
    m_ablationMethod->setCurrentIndex(m_ablationMethod->findData(ablationMethodName(method)));
    const int keep = m_keepSelected;
    m_keepSelected = m_selected;
    if (!m_session.setAblationMethod(method)) m_keepSelected = keep;
}

void InsidePane::resetHeads()
{
    const int keep = m_keepSelected;
    m_keepSelected = m_selected;
    if (!m_session.resetHeads()) m_keepSelected = keep;
}

HeadImportanceDialog* InsidePane::openHeadImportance()
{
    return m_session.hasSwitchableHeads() ? new HeadImportanceDialog(m_session.subject(), this) : nullptr;
}

StateSweepDialog* InsidePane::openStateSweep()
{
    return m_session.hasShrinkableState() ? new StateSweepDialog(m_session.subject(), this) : nullptr;
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
    const LookupAnalysis* analysis = m_session.analysis();
    if (m_view.view != views::attention || !analysis || m_selected >= int(m_view.maps.size())) return nullptr;
    return &analysis->heads[size_t(m_view.layers[size_t(m_selected)]) * m_session.probes().attention.heads + size_t(m_view.heads[size_t(m_selected)])];
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
    std::vector<bool> off(m_view.maps.size());
    for (size_t i = 0; i < off.size(); ++i) off[i] = headOffAt(i);
    m_thumbs->paint(m_view, s, off, tr("\nswitched off (%1)").arg(m_ablationMethod->currentText()));
    showMap();
}

void InsidePane::showMap()
{
    m_thumbs->setSelected(m_selected);
    m_heatmap->setData(m_view.maps.empty() ? HeatmapData{} : m_view.maps[size_t(m_selected)]);
    const InsideInfo info = describeMap();
    m_infoText = info.whole;
    m_infoBrief = info.brief;
    showInfo();
    if (m_view.maps.empty()) return;
    const HeadLookup* head = selectedHead();
    showMarks(head && head->kind == HeadKind::NgramMatch);
}

InsideInfo InsidePane::describeMap() const
{
    if (m_view.maps.empty()) return noMapInfo(!m_session.probes().tokens.empty());
    const HeadLookup* head = selectedHead();
    AnswersShown answers;
    answers.readsText = m_session.subject().readsText();
    if (const TaskInput* task = m_session.shownTask()) answers.task = task->task;
    answers.score = m_session.scored() ? &m_session.score() : nullptr;
    answers.ablation = m_session.ablation().isEmpty() ? QString() : m_session.ablation().describe();
    answers.plainScore = m_session.plainScore();
    answers.tokens = int(m_session.tokens().size());
    answers.continuation = m_session.continuation();
    answers.plainContinuation = m_session.plainContinuation();
    return withAnswers(head ? headInfo(*head, *m_session.analysis()) : viewInfo(m_view.view), answers);
}

void InsidePane::showMarks(bool match)
{
    std::vector<std::pair<int, int>> marks, warnings;
    const std::vector<int>& tokens = m_session.tokens();
    const auto queries = m_session.queries();
    if (m_overlay->isChecked() && (m_view.view == views::attention || m_view.view == views::implicit) && !tokens.empty() && queries) {
        try {
            lookupMarksIn(tokens, queries->first, queries->second, m_overlayN->value(), match, marks, warnings);
            if (const TaskInput* task = m_session.shownTask()) {
                keepAnsweredQueries(*task, marks);
                keepAnsweredQueries(*task, warnings);
            }
        } catch (const Error&) {
            // no queries to mark
        }
    }
    m_heatmap->setMarks(marks, warnings);
}

}  // namespace parrot
