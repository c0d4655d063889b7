#include "explorerpanel.h"

#include "constructionview.h"
#include "error.h"
#include "figures.h"

#include <qcustomplot.h>
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

QStringList viewsOf(const ModelProbes& p)
{
    QStringList v;
    if (p.attention.layers > 0) v << "attention";
    if (p.implicitAttention.layers > 0) v << "implicit";
    if (!p.stateNorm.empty()) v << "state";
    if (!p.delta.empty()) v << "delta";
    return v;
}

QString viewTitle(const QString& view)
{
    if (view == "attention") return "Attention";
    if (view == "implicit") return "Implicit attention";
    if (view == "state") return "State norm";
    if (view == "delta") return "Step size Δ";
    return view;
}

namespace {

QStringList tokenLabels(const std::vector<QString>& tokens, const std::vector<bool>& wrong = {})
{
    QStringList l;
    for (size_t i = 0; i < tokens.size(); ++i) l << (i < wrong.size() && wrong[i] ? tokens[i] + " ✗" : tokens[i]);
    return l;
}

HeatmapData attentionMap(const AttentionMaps& a, int layer, int head, const QStringList& rows, const QStringList& cols)
{
    HeatmapData d;
    d.rows = d.cols = a.length;
    d.values.assign(a.weights.begin() + ptrdiff_t((size_t(layer) * a.heads + head) * a.length * a.length),
                    a.weights.begin() + ptrdiff_t((size_t(layer) * a.heads + head + 1) * a.length * a.length));
    d.rowLabels = rows;
    d.colLabels = cols;
    return d;
}

}  // namespace

InsideView buildView(const ModelProbes& p, const QString& view, const LookupAnalysis* analysis, const std::vector<int>& predictions,
                     const std::vector<int>& tokens)
{
    if (!viewsOf(p).contains(view)) throw Error(QString("this model has no %1 view").arg(viewTitle(view).toLower()));
    InsideView v;
    v.view = view;
    // predictions made for another input (a pane whose input changed while it was loading) mark nothing
    const std::vector<bool> wrong = predictions.size() == tokens.size() ? scoreCopy(tokens, predictions).wrong : std::vector<bool>{};
    const QStringList rows = tokenLabels(p.tokens, wrong), cols = tokenLabels(p.tokens);
    if (view == "attention" || view == "implicit") {
        const AttentionMaps& a = view == "attention" ? p.attention : p.implicitAttention;
        const std::vector<int>& blocks = view == "attention" ? p.attentionLayers : p.implicitLayers;
        for (int l = 0; l < a.layers; ++l)
            for (int h = 0; h < a.heads; ++h) {
                HeatmapData d = attentionMap(a, l, h, rows, cols);
                if (std::all_of(d.values.begin(), d.values.end(), [](float x) { return x == 0; })) continue;  // an unused head
                const int block = l < int(blocks.size()) ? blocks[size_t(l)] : l;
                QString caption = view == "attention" ? QString("L%1 H%2").arg(block).arg(h) : QString("block %1").arg(block);
                bool lookup = false;
                if (analysis && view == "attention") {
                    const HeadLookup& hl = analysis->heads[size_t(l) * a.heads + h];
                    caption += "\n" + hl.label;
                    lookup = hl.kind == HeadKind::NgramLookup;
                }
                d.title = view == "attention" ? QString("attention, layer %1 head %2").arg(block).arg(h)
                                              : QString("implicit attention of block %1 (mean |α| over channels)").arg(block);
                v.maps.push_back(std::move(d));
                v.captions.push_back(caption);
                v.layers.push_back(l);
                v.heads.push_back(h);
                v.blocks.push_back(block);
                v.highlighted.push_back(lookup);
            }
    } else {
        const std::vector<ProbeMatrix>& ms = view == "state" ? p.stateNorm : p.delta;
        for (size_t i = 0; i < ms.size(); ++i) {
            const ProbeMatrix& m = ms[i];
            HeatmapData d;
            d.rows = m.rows;
            d.cols = m.cols;
            d.values = m.values;
            d.rowLabels = rows;
            d.rowTitle = "position";
            d.colTitle = "channel";
            d.title = QString("%1 of block %2").arg(view == "state" ? "hidden-state norm" : "step size Δ").arg(m.layer);
            v.maps.push_back(std::move(d));
            v.captions.push_back(QString("block %1").arg(m.layer));
            v.layers.push_back(int(i));
            v.heads.push_back(0);
            v.blocks.push_back(m.layer);
            v.highlighted.push_back(false);
        }
    }
    return v;
}

QString renderInside(const InsideSubject& subject, const std::vector<int>& tokens, const InsideFigureRequest& r, const QString& outFile)
{
    checkFigureFile(outFile, r.width, r.height);
    const QString problem = subject.copyProblem();
    if (!problem.isEmpty()) throw Error(problem);
    const ModelProbes p = subject.probe(tokens);
    const QStringList views = viewsOf(p);
    QString view = r.figure, note;
    if (view == "attention" && !views.contains("attention") && views.contains("implicit")) {
        view = "implicit";
        note = QString(" (%1 has no attention heads: its implicit attention instead)").arg(subject.architecture());
    }
    if (!views.contains(view))
        throw Error(QString("%1 has no %2 view (it has: %3)").arg(subject.name(), view, views.isEmpty() ? "none" : views.join(", ")));
    std::unique_ptr<LookupAnalysis> analysis;
    if (view == "attention") {
        const auto [begin, end] = copyQueries(tokens, CopyVocab::Sep);
        analysis = std::make_unique<LookupAnalysis>(analyseLookup(p.attention, tokens, begin, end));
    }
    const InsideView v = buildView(p, view, analysis.get(), subject.predictions(tokens), tokens);
    // which map: the one asked for, else the strongest lookup head, else the last block
    int index = -1;
    if (r.layer >= 0 || r.head >= 0) {
        const int heads = view == "attention" ? p.attention.heads : 1;
        for (size_t i = 0; i < v.maps.size(); ++i)
            if (v.blocks[i] == std::max(0, r.layer) && v.heads[i] == std::max(0, r.head)) index = int(i);
        if (index < 0) throw Error(QString("no %1 map at layer %2, head %3 (%4 heads per layer)").arg(view).arg(r.layer).arg(std::max(0, r.head)).arg(heads));
    } else if (analysis) {
        std::vector<int> shown;  // the maps' heads, as indices into the analysis
        for (size_t i = 0; i < v.maps.size(); ++i) shown.push_back(v.layers[i] * p.attention.heads + v.heads[i]);
        index = int(std::find(shown.begin(), shown.end(), strongestLookupHead(*analysis, shown)) - shown.begin());
    } else {
        index = int(v.maps.size()) - 1;
    }
    HeatmapView heatmap;
    heatmap.resize(r.width, r.height);
    HeatmapStyle style;
    style.logScale = r.logScale;
    heatmap.setStyle(style);
    heatmap.setData(v.maps[size_t(index)]);
    int order = 0;
    bool match = false;
    if (analysis) {
        const HeadLookup& h = analysis->heads[size_t(v.layers[size_t(index)]) * p.attention.heads + size_t(v.heads[size_t(index)])];
        order = h.order;
        match = h.kind == HeadKind::NgramMatch;
    }
    if (view == "attention" || view == "implicit") {
        std::vector<std::pair<int, int>> marks, warnings;
        lookupMarks(tokens, order > 0 ? order : 2, match, marks, warnings);
        heatmap.setMarks(marks, warnings);
    }
    const HeatmapData& d = v.maps[size_t(index)];
    QString csv = QString("%1/%2").arg(d.rowTitle, d.colTitle);
    for (int c = 0; c < d.cols; ++c) csv += "," + (c < d.colLabels.size() ? d.colLabels[c] : QString::number(c));
    csv += "\n";
    for (int row = 0; row < d.rows; ++row) {
        csv += row < d.rowLabels.size() ? d.rowLabels[row] : QString::number(row);
        for (int c = 0; c < d.cols; ++c) csv += "," + QString::number(double(d.at(row, c)), 'g', 6);
        csv += "\n";
    }
    heatmap.plot()->replot();
    savePlot(*heatmap.plot(), outFile, r.width, r.height, d.title, csv, r.style);
    return QString("%1: %2%3 -> %4").arg(subject.name(), d.title + (order > 0 ? QString(" [%1]").arg(v.captions[size_t(index)].section('\n', 1)) : QString()), note, outFile);
}

// ---------------------------------------------------------------------------------------------

InsidePane::InsidePane(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* top = new QHBoxLayout;
    m_source = new QComboBox(this);
    m_source->setObjectName("source");
    for (const BundledCheckpoint& b : bundledCheckpoints()) m_source->addItem(b.label, b.id);
    m_source->addItem("Two-layer construction (no training)", "construction");
    m_source->addItem("Model in the Train tab", "current");
    m_source->addItem("Open checkpoint…", "open");
    m_source->setToolTip("What this pane looks inside");
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
    m_min = new QDoubleSpinBox(this);
    m_max = new QDoubleSpinBox(this);
    for (QDoubleSpinBox* s : {m_min, m_max}) {
        s->setDecimals(4);
        s->setRange(0, 1e6);
        s->setSingleStep(0.05);
        s->setEnabled(false);
    }
    m_min->setValue(0);
    m_max->setValue(1);
    m_overlay = new QCheckBox("lookup marks", this);
    m_overlay->setChecked(true);
    m_overlay->setToolTip("Circles: where an order-n lookup head should look (the token after the earlier occurrence of the "
                          "last n tokens). Crosses: the n-gram occurred more than once, so the lookup is ambiguous.");
    m_overlayN = new QSpinBox(this);
    m_overlayN->setRange(1, kMaxLookupOrder);
    m_overlayN->setValue(2);
    m_overlayN->setPrefix("n = ");
    style->addWidget(m_colormap);
    style->addWidget(m_log);
    style->addWidget(m_auto);
    style->addWidget(new QLabel("min", this));
    style->addWidget(m_min);
    style->addWidget(new QLabel("max", this));
    style->addWidget(m_max);
    style->addWidget(m_overlay);
    style->addWidget(m_overlayN);
    style->addStretch(1);
    layout->addLayout(style);

    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFixedHeight(128);
    m_thumbs = new QWidget(scroll);
    m_thumbGrid = new QGridLayout(m_thumbs);
    m_thumbGrid->setSpacing(2);
    scroll->setWidget(m_thumbs);
    layout->addWidget(scroll);
    m_heatmap = new HeatmapView(this);
    m_heatmap->setMinimumHeight(260);
    layout->addWidget(m_heatmap, 1);
    m_info = new QLabel(this);
    m_info->setWordWrap(true);
    m_info->setTextFormat(Qt::RichText);
    m_info->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_info);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

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
        m_min->setEnabled(!on);
        m_max->setEnabled(!on);
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
    for (const BundledCheckpoint& b : bundledCheckpoints())
        if (b.id == id) {
            m_source->setCurrentIndex(m_source->findData(id));
            const QString path = b.path, label = b.label;
            load(label, [path, label] { return InsideSubject::load(path, label); });
            return;
        }
    setStatus(QString("no bundled checkpoint '%1'").arg(id));
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
    const int perRow = m_view.view == "attention" && m_probes.attention.heads > 0 ? m_probes.attention.heads : 8;
    for (size_t i = 0; i < m_view.maps.size(); ++i) {
        auto* b = new QToolButton(m_thumbs);
        b->setToolButtonStyle(Qt::ToolButtonTextUnderIcon);
        b->setIconSize(QSize(40, 40));
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
    showMap();
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
        m_thumbButtons[i]->setIcon(QPixmap::fromImage(heatmapImage(m_view.maps[i], s, QSize(40, 40))));
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
    m_heatmap->setData(m_view.maps[size_t(m_selected)]);
    QString info;
    bool match = false;
    int n = m_overlayN->value();
    if (m_view.view == "attention" && m_analysis) {
        const HeadLookup& h = m_analysis->heads[size_t(m_view.layers[size_t(m_selected)]) * m_probes.attention.heads +
                                                size_t(m_view.heads[size_t(m_selected)])];
        if (h.order > 0) {
            n = h.order;
            match = h.kind == HeadKind::NgramMatch;
            m_overlayN->blockSignals(true);
            m_overlayN->setValue(n);
            m_overlayN->blockSignals(false);
        }
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
    if (m_overlay->isChecked() && (m_view.view == "attention" || m_view.view == "implicit")) lookupMarks(m_tokens, n, match, marks, warnings);
    m_heatmap->setMarks(marks, warnings);
}

// ---------------------------------------------------------------------------------------------

ExplorerPanel::ExplorerPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* tabs = new QTabWidget(this);
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
