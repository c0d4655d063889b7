#include "explorerpanel.h"

#include "constructionview.h"
#include "error.h"

#include "tasks/tokentask.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace parrot {

InsidePane::InsidePane(QWidget* parent) : QWidget(parent)
{
    // Short rows of controls, so that two panes fit side by side on a laptop's screen.
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    m_source = new QComboBox(this);
    m_source->setObjectName("source");
    for (const BundledCheckpoint& b : bundledCheckpoints()) m_source->addItem(b.label, b.id);
    m_source->addItem("Two-layer construction (no training)", "construction");
    m_source->addItem("Model in the Train tab", "current");
    m_source->addItem("Open checkpoint…", "open");
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
    top->addWidget(m_viewBox);
    layout->addLayout(top);

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

    // The views scroll rather than shrink: the heatmap takes the height there is and keeps at
    // least half a label's height for every row (up to kReadableRows), and the thumbnails keep
    // every row of heads whole. The status (what is shown, or what went wrong) heads them.
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName("views");
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* views = new QWidget(scroll);
    auto* vl = new QVBoxLayout(views);
    vl->setContentsMargins(0, 0, 0, 0);
    m_status = new QLabel(views);
    m_status->setWordWrap(true);
    vl->addWidget(m_status);
    m_thumbs = new QWidget(views);
    m_thumbGrid = new QGridLayout(m_thumbs);
    m_thumbGrid->setContentsMargins(0, 0, 0, 0);
    m_thumbGrid->setSpacing(2);
    vl->addWidget(m_thumbs);
    m_heatmap = new HeatmapView(views);
    m_heatmap->setReadableRows(kReadableRows);
    vl->addWidget(m_heatmap, 1);
    vl->addSpacing(fontMetrics().height() / 2);  // the hover line and the head's heading read as two
    m_info = new QLabel(views);
    m_info->setObjectName("headInfo");
    m_info->setWordWrap(true);
    m_info->setTextFormat(Qt::RichText);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    vl->addWidget(m_info);
    scroll->setWidget(views);
    layout->addWidget(scroll, 1);

    connect(m_source, &QComboBox::activated, this, &InsidePane::onSource);
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
        const QString path = QFileDialog::getOpenFileName(this, "Open a checkpoint", QString(), "Checkpoints (*.safetensors *.json *.bin *.pt *.pth);;All files (*)");
        m_source->setCurrentIndex(m_lastSource);  // the entry stays what is shown until the file loads
        if (!path.isEmpty()) chooseCheckpoint(path);
        return;
    }
    if (id == "construction") chooseConstruction(m_n->value(), m_letters->value());
    else if (id == "current") chooseCurrentModel();
    else chooseBundled(id);
}

void InsidePane::chooseBundled(const QString& id)
{
    try {
        const BundledCheckpoint& b = findBundled(id);
        m_source->setCurrentIndex(m_source->findData(id));
        const QString path = b.path, label = b.label;
        load(label, [path, label] { return InsideSubject::load(path, label); });
    } catch (const Error& e) {
        setStatus(e.message());
    }
}

void InsidePane::chooseConstruction(int n, int letters)
{
    m_source->setCurrentIndex(m_source->findData("construction"));
    m_n->setValue(n);
    m_letters->setValue(letters);
    load("the construction", [n, letters] { return InsideSubject(ConstructionOptions{n, letters}); });
}

void InsidePane::chooseCheckpoint(const QString& path)
{
    QString label = QFileInfo(path).fileName();
    int i = m_source->findData("file:" + path);
    if (i < 0) {
        m_source->insertItem(m_source->count() - 1, label, "file:" + path);
        i = m_source->count() - 2;
    }
    m_source->setCurrentIndex(i);
    load(label, [path] { return InsideSubject::load(path); });
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
    load("the model in the Train tab", [m] { return InsideSubject(m, "model in the Train tab"); });
}

void InsidePane::load(const QString& what, std::function<InsideSubject()> make)
{
    m_probe.cancel();  // of the subject being replaced
    setStatus(QString("Loading %1…").arg(what));
    m_n->setVisible(m_source->currentData().toString() == "construction");
    m_letters->setVisible(m_n->isVisible());
    m_load.start([make](JobContext&) { return make(); },
                 [this](const InsideSubject& s) {
                     m_subject = s;
                     m_lastSource = m_source->currentIndex();
                     probe();
                 },
                 [this, what](const QString& message) {
                     const QString error = QString("Cannot open %1: %2").arg(what, message);
                     setStatus(error);
                     emit failed(error);
                     emit refreshed();
                 });
}

void InsidePane::setInput(const std::vector<int>& tokens)
{
    m_tokens = tokens;
    if (!m_subject.isNull() && !m_load.isRunning()) probe();  // else the subject, once loaded, is probed with it
}

void InsidePane::probe()
{
    const QString problem = m_subject.copyProblem();
    if (!problem.isEmpty() || m_tokens.empty()) {
        m_probe.cancel();
        setStatus(problem.isEmpty() ? QString("No input yet.") : m_subject.name() + ": " + problem);
        m_probes = {};
        rebuild();
        emit refreshed();
        return;
    }
    const InsideSubject subject = m_subject;
    const std::vector<int> tokens = m_tokens;
    struct Probed {
        ModelProbes probes;
        std::vector<int> predictions;
    };
    m_probe.start(
        [subject, tokens](JobContext&) {
            for (int t : tokens)  // the input's letters must be in this subject's alphabet
                if (t >= CopyVocab{subject.letters()}.size())
                    throw Error(QString("the input has letters outside this model's alphabet of %1").arg(subject.letters()));
            return Probed{subject.probe(tokens), subject.predictions(tokens)};
        },
        [this](const Probed& p) {
            m_probes = p.probes;
            m_predictions = p.predictions;
            setStatus(m_subject.summary());
            rebuild();
            emit refreshed();
        },
        [this](const QString& error) {
            m_probes = {};
            m_predictions = {};
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

QString InsidePane::status() const { return m_status->text(); }

void InsidePane::setStatus(const QString& text) { m_status->setText(text); }

QString InsidePane::info() const { return m_info->text(); }

void InsidePane::rebuild()
{
    // which views this subject has; keep the chosen one when it can, else the first it has
    const QStringList views = viewsOf(m_probes);
    for (int i = 0; i < m_viewBox->count(); ++i) {
        auto* model = qobject_cast<QStandardItemModel*>(m_viewBox->model());
        if (model) model->item(i)->setEnabled(views.contains(m_viewBox->itemData(i).toString()));
    }
    if (!views.isEmpty() && !views.contains(view())) m_viewBox->setCurrentIndex(m_viewBox->findData(views.front()));
    m_analysis.reset();
    if (m_probes.attention.layers > 0) {
        try {
            const auto [begin, end] = copyQueries(m_tokens, CopyVocab::Sep);
            m_analysis = std::make_unique<LookupAnalysis>(analyseLookup(m_probes.attention, m_tokens, begin, end));
        } catch (const Error&) {
            // not a copy input: heads unlabelled
        }
    }
    m_view = views.isEmpty() ? InsideView{} : buildView(m_probes, view(), m_analysis.get(), m_predictions, m_tokens);
    for (QToolButton* b : m_thumbButtons) b->deleteLater();
    m_thumbButtons.clear();
    // the first lookup head when there is one, else the first map
    m_selected = 0;
    for (size_t i = 0; i < m_view.highlighted.size(); ++i)
        if (m_view.highlighted[i]) {
            m_selected = int(i);
            break;
        }
    followSelectedHead();
    const int perRow = m_view.view == "attention" && m_probes.attention.heads > 0 ? m_probes.attention.heads : 8;
    for (size_t i = 0; i < m_view.maps.size(); ++i) {
        auto* b = new QToolButton(m_thumbs);
        b->setToolButtonStyle(Qt::ToolButtonTextUnderIcon);
        b->setIconSize(QSize(kThumbnail, kThumbnail));
        b->setText(m_view.captions[i].section('\n', 0, 0));
        b->setToolTip(m_view.captions[i]);
        b->setCheckable(true);
        b->setAutoRaise(true);
        if (m_view.highlighted[i]) b->setStyleSheet("QToolButton { border: 3px solid #ff7f0e; }");
        connect(b, &QToolButton::clicked, this, [this, i] { selectMap(int(i)); });
        m_thumbGrid->addWidget(b, int(i) / perRow, int(i) % perRow);
        m_thumbButtons.push_back(b);
    }
    restyle();
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
    for (size_t i = 0; i < m_thumbButtons.size(); ++i)
        m_thumbButtons[i]->setIcon(QPixmap::fromImage(heatmapImage(m_view.maps[i], s, QSize(kThumbnail, kThumbnail))));
    showMap();
}

void InsidePane::showMap()
{
    for (size_t i = 0; i < m_thumbButtons.size(); ++i) m_thumbButtons[i]->setChecked(int(i) == m_selected);
    if (m_view.maps.empty()) {
        m_heatmap->setData(HeatmapData{});
        m_info->setText(m_probes.tokens.empty() ? QString() : QString("Nothing to show in this view."));
        return;
    }
    const HeatmapData& map = m_view.maps[size_t(m_selected)];
    m_heatmap->setData(map);
    QString info;
    bool match = false;
    if (const HeadLookup* head = selectedHead()) {
        const HeadLookup& h = *head;
        match = h.kind == HeadKind::NgramMatch;
        QString lookup, matched, ambiguous;
        for (int k = 1; k <= kMaxLookupOrder; ++k) {
            lookup += QString("<td>%1</td>").arg(h.scored[size_t(k)] ? QString::number(h.lookup[size_t(k)], 'f', 2) : "–");
            matched += QString("<td>%1</td>").arg(h.scored[size_t(k)] ? QString::number(h.match[size_t(k)], 'f', 2) : "–");
            ambiguous += QString("<td>%1</td>").arg(m_analysis->ambiguous[size_t(k)]);
        }
        info = QString("<b>%1</b> — previous-token %2, current %3, first-token %4, entropy %5"
                       "<table cellspacing=4><tr><td>n</td><td>1</td><td>2</td><td>3</td><td>4</td><td>5</td><td>6</td><td>7</td><td>8</td></tr>"
                       "<tr><td>lookup</td>%6</tr><tr><td>match</td>%7</tr><tr><td>ambiguous queries</td>%8</tr></table>")
                   .arg(h.label).arg(h.previousToken, 0, 'f', 2).arg(h.currentToken, 0, 'f', 2).arg(h.firstToken, 0, 'f', 2)
                   .arg(h.entropy, 0, 'f', 2).arg(lookup, matched, ambiguous);
    } else if (m_view.view == "implicit") {
        info = "The selective scan is linear in its input: y_t = Σ_s α[t,s] u_s + D u_t per channel. Shown: |α| averaged over "
               "the channels (the skip D and the gate are left out). Compare its rows with a lookup head's single bright cell.";
    } else if (m_view.view == "state") {
        info = "Per-channel norm of the hidden state after each token (LSTM: |h| then |c| channels).";
    } else if (m_view.view == "delta") {
        info = "Mamba's step size Δ after softplus: large Δ lets a token in and forgets the past; small Δ keeps the state.";
    }
    // the model's answers
    if (m_predictions.size() == m_tokens.size()) {
        const CopyScore score = scoreCopy(m_tokens, m_predictions);
        info += QString("<br>Copies %1 of %2 letters of this input (rows marked ✗ are wrong).").arg(score.right).arg(score.answers);
    }
    m_info->setText(info);
    std::vector<std::pair<int, int>> marks, warnings;
    if (m_overlay->isChecked() && (m_view.view == "attention" || m_view.view == "implicit"))
        lookupMarks(m_tokens, m_overlayN->value(), match, marks, warnings);
    m_heatmap->setMarks(marks, warnings);
}

// ---------------------------------------------------------------------------------------------

ExplorerPanel::ExplorerPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* tabs = m_tabs = new QTabWidget(this);
    auto* inside = new QWidget(tabs);
    auto* il = new QVBoxLayout(inside);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel("Copy input:", inside));
    m_input = new QLineEdit(inside);
    m_input->setObjectName("input");
    m_input->setPlaceholderText("type letters and press Enter, or draw a random string");
    bar->addWidget(m_input, 1);
    m_kind = new QComboBox(inside);
    m_kind->addItem("random string", "copy");
    m_kind->addItem("with a repeated 3-gram", "copy_dup_ngram");
    m_kind->setToolTip("A repeated n-gram makes the lookup ambiguous: watch where the crosses are and where copying fails");
    m_length = new QSpinBox(inside);
    m_length->setRange(1, 400);
    m_length->setValue(16);
    m_length->setPrefix("L = ");
    m_seed = new QSpinBox(inside);
    m_seed->setRange(0, 1000000);
    m_seed->setValue(1);
    m_seed->setPrefix("seed ");
    auto* random = new QPushButton("Random", inside);
    random->setObjectName("random");
    bar->addWidget(m_kind);
    bar->addWidget(m_length);
    bar->addWidget(m_seed);
    bar->addWidget(random);
    il->addLayout(bar);
    m_inputStatus = new QLabel(inside);
    il->addWidget(m_inputStatus);
    auto* split = new QSplitter(Qt::Horizontal, inside);
    m_left = new InsidePane(split);
    m_right = new InsidePane(split);
    split->addWidget(m_left);
    split->addWidget(m_right);
    il->addWidget(split, 1);
    tabs->addTab(inside, "Inside two models");
    m_construction = new ConstructionView(tabs);
    tabs->addTab(m_construction, "Copy construction");
    layout->addWidget(tabs);

    connect(m_input, &QLineEdit::returnPressed, this, [this] { setInputText(m_input->text()); });
    connect(random, &QPushButton::clicked, this, [this] {
        m_seed->setValue(m_seed->value() + 1);
        randomInput();
    });
    connect(m_kind, &QComboBox::activated, this, [this] { randomInput(); });
    m_left->chooseBundled("hard-alibi");
    m_right->chooseBundled("mamba");
    randomInput();
}

void ExplorerPanel::showCheckpoint(const QString& path)
{
    m_right->chooseCheckpoint(path);
    m_tabs->setCurrentIndex(0);  // the panes, whichever sub-tab was in front
}

bool ExplorerPanel::panesShown() const { return m_tabs->currentIndex() == 0; }

void ExplorerPanel::setCurrentModelProvider(const std::function<Model()>& provider)
{
    m_left->setCurrentModelProvider(provider);
    m_right->setCurrentModelProvider(provider);
}

void ExplorerPanel::setInputText(const QString& letters)
{
    try {
        applyInput(copyInput(letters, 52));
    } catch (const Error& e) {
        m_inputError = e.message();
        m_inputStatus->setText("<span style='color:#b00'>" + m_inputError.toHtmlEscaped() + "</span>");
    }
}

void ExplorerPanel::randomInput()
{
    try {
        applyInput(randomCopyInput(m_length->value(), 26, static_cast<unsigned long long>(m_seed->value()), m_kind->currentData().toString(), 3));
    } catch (const Error& e) {
        m_inputError = e.message();
        m_inputStatus->setText("<span style='color:#b00'>" + m_inputError.toHtmlEscaped() + "</span>");
    }
}

void ExplorerPanel::applyInput(const std::vector<int>& tokens)
{
    m_inputError.clear();
    m_tokens = tokens;
    // the letters typed or drawn, shown back without the specials
    const CopyVocab v{52};
    QString s;
    const auto sep = std::find(tokens.begin(), tokens.end(), int(CopyVocab::Sep));
    for (auto it = tokens.begin(); it != sep; ++it)
        if (v.isLetter(*it)) s += v.text(*it);
    m_input->setText(s);
    m_inputStatus->setText(QString("%1 tokens: %2").arg(tokens.size()).arg(v.text(tokens)));
    m_left->setInput(tokens);
    m_right->setInput(tokens);
}

}  // namespace parrot
