#include "ui/panels/inspectorpanel.h"

#include "base/error.h"
#include "figures/heatmap.h"
#include "ui/common/appsettings.h"
#include "ui/common/filefilters.h"

#include <QComboBox>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>

namespace parrot {

namespace {

constexpr int kNameRole = Qt::UserRole + 1;

}  // namespace

InspectorPanel::InspectorPanel(QWidget* parent) : QWidget(parent)
{
    setAcceptDrops(true);
    auto* layout = new QVBoxLayout(this);
    auto* bar = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open file…"), this);
    m_recent = new QComboBox(this);
    m_recent->setPlaceholderText(tr("recent files"));
    m_recent->setMinimumContentsLength(40);
    m_explore = new QPushButton(tr("Open in explorer"), this);
    m_train = new QPushButton(tr("Open in Train tab (evaluate)"), this);
    m_explore->setEnabled(false);
    m_train->setEnabled(false);
    bar->addWidget(open);
    bar->addWidget(m_recent, 1);
    bar->addWidget(m_explore);
    bar->addWidget(m_train);
    layout->addLayout(bar);
    m_summary = new QLabel(tr("Open a checkpoint (safetensors, a sharded index, a PyTorch file) or drop one here."), this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);
    auto* split = new QSplitter(Qt::Horizontal, this);
    m_tree = new QTreeWidget(split);
    m_tree->setHeaderLabels({tr("Tensor"), tr("Shape"), tr("DType"), tr("Bytes"), tr("Mean"), tr("Std"), tr("Min"), tr("Max")});
    m_tree->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    auto* right = new QTabWidget(split);
    m_histogram = new QCustomPlot(right);
    m_histogram->xAxis->setLabel(tr("value"));
    m_histogram->yAxis->setLabel(tr("count"));
    m_heatmap = new HeatmapView(right);
    m_config = new QPlainTextEdit(right);
    m_config->setReadOnly(true);
    right->addTab(m_histogram, tr("Histogram"));
    right->addTab(m_heatmap, tr("Heatmap (2-D)"));
    right->addTab(m_config, tr("Configuration"));
    split->addWidget(m_tree);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    for (const QString& f : recentFiles()) m_recent->addItem(f);
    m_recent->setCurrentIndex(-1);
    connect(open, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Inspect a checkpoint"), QString(),
                                                          checkpointFileFilter());
        if (!path.isEmpty()) openFile(path);
    });
    connect(m_recent, &QComboBox::activated, this, [this](int i) { openFile(m_recent->itemText(i)); });
    connect(m_tree, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) {
        if (item && !item->data(0, kNameRole).toString().isEmpty()) showTensor(item->data(0, kNameRole).toString());
    });
    connect(m_explore, &QPushButton::clicked, this, [this] { emit openInExplorer(m_info.path); });
    connect(m_train, &QPushButton::clicked, this, [this] { emit openInTrainTab(m_info.path); });
}

QStringList InspectorPanel::recentFiles() const { return AppSettings::load().recentInspected; }

void InspectorPanel::remember(const QString& path)
{
    AppSettings::rememberInspected(path);
    m_recent->clear();
    m_recent->addItems(recentFiles());
    m_recent->setCurrentIndex(0);
}

QString InspectorPanel::status() const { return m_summary->text(); }

void InspectorPanel::openFile(const QString& path)
{
    m_summary->setText(tr("Reading %1…").arg(path));
    m_read.start([path](JobContext&) { return inspectCheckpoint(path); },
                 [this](const CheckpointInfo& info) {
                     show(info);
                     emit loaded();
                 },
                 [this, path](const QString& error) {  // described in the panel like any file it cannot run
                     CheckpointInfo info;
                     info.path = path;
                     info.format = tr("unknown");
                     info.problem = error;
                     show(info);
                     emit loaded();
                 });
}

void InspectorPanel::show(const CheckpointInfo& info)
{
    m_info = info;
    if (QFileInfo::exists(info.path)) remember(info.path);
    QString text = tr("<b>%1</b><br>format: %2").arg(info.path.toHtmlEscaped(), info.format);
    if (!info.tensors.empty() || !info.recognised.isEmpty())
        text += tr("; recognised as: %1; %2 tensors, %3 bytes")
                    .arg((info.recognised.isEmpty() ? QString("–") : info.recognised).toHtmlEscaped())
                    .arg(info.tensors.size()).arg(info.totalBytes);
    else if (const QFileInfo file(info.path); file.exists())  // nothing read: not "0 tensors, 0 bytes" of a file that has bytes
        text += tr("; a file of %1 bytes, no tensors read").arg(file.size());
    text += info.problem.isEmpty() ? tr("<br>The app can run it.")
                                   : QString("<br><span style='color:#b00'>%1</span>").arg(info.problem.toHtmlEscaped());
    m_summary->setText(text);
    m_explore->setEnabled(info.runnable);
    m_train->setEnabled(info.runnable);
    m_config->setPlainText(QJsonDocument(info.config).toJson(QJsonDocument::Indented) +
                           (info.metadata.isEmpty() ? QString() : tr("\nmetadata keys: ") + QStringList(info.metadata.keys()).join(", ")));
    // the tree: one node per name component ("backbone" > "layers" > "0" > "mixer" > "A_log")
    m_tree->clear();
    QMap<QString, QTreeWidgetItem*> nodes;
    for (const TensorSummary& t : info.tensors) {
        const QStringList parts = t.name.split('.');
        QTreeWidgetItem* parent = nullptr;
        QString prefix;
        for (int i = 0; i + 1 < parts.size(); ++i) {
            prefix += (i ? "." : "") + parts[i];
            if (!nodes.contains(prefix)) {
                auto* node = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
                node->setText(0, parts[i]);
                nodes[prefix] = node;
            }
            parent = nodes[prefix];
        }
        auto* leaf = parent ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(m_tree);
        leaf->setText(0, parts.last());
        leaf->setData(0, kNameRole, t.name);
        leaf->setToolTip(0, t.name);
        leaf->setText(1, shapeText(t.shape));
        leaf->setText(2, t.dtype);
        leaf->setText(3, QString::number(t.bytes));
        if (t.floating) {
            int col = 4;
            for (double v : {t.mean, t.std, t.min, t.max}) leaf->setText(col++, QString::number(v, 'g', 4));
        }
    }
    m_tree->expandToDepth(1);
    m_histogram->clearPlottables();
    m_histogram->replot();
    m_heatmap->setData(HeatmapData{});
    // show the first floating-point tensor rather than empty plots
    for (const TensorSummary& t : info.tensors)
        if (t.floating) {
            selectTensor(t.name);
            break;
        }
}

void InspectorPanel::selectTensor(const QString& name)
{
    QTreeWidgetItemIterator it(m_tree);
    for (; *it; ++it)
        if ((*it)->data(0, kNameRole).toString() == name) {
            m_tree->setCurrentItem(*it);
            return;
        }
}

void InspectorPanel::showTensor(const QString& name)
{
    const auto t = std::find_if(m_info.tensors.begin(), m_info.tensors.end(), [&](const TensorSummary& s) { return s.name == name; });
    if (t == m_info.tensors.end() || !t->floating) return;
    std::vector<float> v;
    try {
        v = tensorValues(m_info.path, name);
    } catch (const Error& e) {
        m_summary->setText(e.message());
        return;
    }
    // histogram: 40 bins over [min, max]
    const int bins = 40;
    const double lo = t->min, hi = t->max > t->min ? t->max : t->min + 1, width = (hi - lo) / bins;
    QVector<double> keys(bins), counts(bins, 0);
    for (int b = 0; b < bins; ++b) keys[b] = lo + (b + 0.5) * width;
    for (float x : v) counts[std::clamp(int((double(x) - lo) / width), 0, bins - 1)] += 1;
    m_histogram->clearPlottables();
    auto* bars = new QCPBars(m_histogram->xAxis, m_histogram->yAxis);
    bars->setData(keys, counts);
    bars->setWidth(width);
    bars->setBrush(QColor("#4c72b0"));
    bars->setPen(Qt::NoPen);
    m_histogram->xAxis->setRange(lo - width, hi + width);
    m_histogram->yAxis->setRange(0, *std::max_element(counts.begin(), counts.end()) * 1.05 + 1);
    m_histogram->replot();
    // heatmap of a 2-D tensor (rows x columns), capped to what a screen shows
    HeatmapData d;
    if (t->shape.size() == 2 && t->shape[0] * t->shape[1] <= 4'000'000) {
        d.rows = int(t->shape[0]);
        d.cols = int(t->shape[1]);
        d.values = v;
        d.rowTitle = tr("row");
        d.colTitle = tr("column");
        d.title = name;
    }
    m_heatmap->setData(d);
}

void InspectorPanel::dragEnterEvent(QDragEnterEvent* e)
{
    if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void InspectorPanel::dropEvent(QDropEvent* e)
{
    const QList<QUrl> urls = e->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) openFile(urls.first().toLocalFile());
}

}  // namespace parrot
