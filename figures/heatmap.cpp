#include "figures/heatmap.h"

#include <QAbstractScrollArea>
#include <QApplication>
#include <QLabel>
#include <QMouseEvent>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace parrot {

namespace {

// Nine stops at 0, 1/8, ..., 1 of matplotlib's maps (their published sRGB values).
const std::vector<QColor>& stops(const QString& name)
{
    static const std::vector<QColor> viridis{QColor("#440154"), QColor("#472d7b"), QColor("#3b528b"), QColor("#2c728e"), QColor("#21918c"),
                                             QColor("#28ae80"), QColor("#5ec962"), QColor("#addc30"), QColor("#fde725")};
    static const std::vector<QColor> magma{QColor("#000004"), QColor("#1c1044"), QColor("#4f127b"), QColor("#812581"), QColor("#b5367a"),
                                           QColor("#e55064"), QColor("#fb8761"), QColor("#fec287"), QColor("#fcfdbf")};
    static const std::vector<QColor> grey{QColor("#ffffff"), QColor("#000000")};
    if (name == "magma") return magma;
    if (name == "grey") return grey;
    return viridis;
}

// The value range a style shows for `d`: its own, or the data's (log: from the smallest positive).
std::pair<double, double> shownRange(const HeatmapData& d, const HeatmapStyle& s)
{
    double lo = s.min, hi = s.max;
    if (s.autoRange) {
        lo = INFINITY;
        hi = -INFINITY;
        for (float v : d.values) {
            if (!std::isfinite(v) || (s.logScale && v <= 0)) continue;
            lo = std::min(lo, double(v));
            hi = std::max(hi, double(v));
        }
        if (!std::isfinite(lo)) lo = s.logScale ? 1e-6 : 0, hi = 1;
    }
    if (s.logScale) {
        lo = std::max(lo, 1e-12);
        hi = std::max(hi, lo * 10);  // at least a decade
    } else if (hi <= lo) {
        hi = lo + 1;
    }
    return {lo, hi};
}

// Where v falls in the range, 0..1 (log: by its logarithm).
double position(double v, std::pair<double, double> r, bool log)
{
    if (log) {
        if (v <= 0) return 0;
        return std::clamp((std::log(v) - std::log(r.first)) / (std::log(r.second) - std::log(r.first)), 0.0, 1.0);
    }
    return std::clamp((v - r.first) / (r.second - r.first), 0.0, 1.0);
}

QCPColorGradient gradientOf(const QString& name)
{
    QCPColorGradient g;
    g.clearColorStops();
    const auto& s = stops(name);
    for (size_t i = 0; i < s.size(); ++i) g.setColorStopAt(double(i) / double(s.size() - 1), s[i]);
    g.setLevelCount(256);
    return g;
}

// Labels on an axis at the chosen cells (tokens, or the cell's number).
void labelAxis(QCPAxis* axis, const QStringList& labels, const std::vector<int>& cells, const QString& title)
{
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int i : cells) ticker->addTick(i, i < labels.size() ? labels[i] : QString::number(i));
    axis->setTicker(ticker);
    axis->setLabel(title);
    axis->setSubTicks(false);
}

// The room one label of an axis needs along it: the tallest label's ink (and a gap) on the
// vertical axis, so a 40-token map keeps every label in a few hundred pixels; the widest label's
// width (and a gap) on the horizontal one, where numbers of three digits would touch.
double labelSpacing(const QCPAxis* axis, const QStringList& labels, int count)
{
    const QFontMetrics fm(axis->tickLabelFont());
    if (axis->orientation() == Qt::Vertical) {
        int tallest = fm.tightBoundingRect("0g").height();
        for (const QString& l : labels) tallest = std::max(tallest, fm.tightBoundingRect(l).height());
        return tallest + 2;
    }
    // cells past the labels are numbered
    int widest = labels.size() < count ? fm.horizontalAdvance(QString::number(std::max(0, count - 1))) : 0;
    for (const QString& l : labels) widest = std::max(widest, fm.horizontalAdvance(l));
    return widest + std::max(3.0, fm.horizontalAdvance(' ') * 0.75);  // a gap that still parts two labels
}

}  // namespace

std::vector<int> labelledCells(int count, double length, double spacing, const std::vector<int>& keep, bool roundSteps)
{
    std::vector<int> cells;
    if (count <= 0) return cells;
    if (length / count >= spacing) {
        for (int i = 0; i < count; ++i) cells.push_back(i);
        return cells;
    }
    // cells at least `step` apart have room for both labels
    int step = int(std::ceil(spacing * count / std::max(length, 1.0)));
    if (roundSteps) {  // numbers read best at multiples of 1, 2 or 5 times a power of ten
        int nice = 1;
        for (int decade = 1; nice < step; decade *= 10)
            for (int m : {1, 2, 5})
                if (nice < step) nice = m * decade;
        step = nice;
    }
    std::set<int> chosen;
    const auto clear = [&](int c) {
        const auto after = chosen.lower_bound(c);
        if (after != chosen.end() && *after - c < step) return false;
        return after == chosen.begin() || c - *std::prev(after) >= step;
    };
    for (int k : keep)
        if (k >= 0 && k < count && clear(k)) chosen.insert(k);
    for (int c = 0; c < count; c += roundSteps ? step : 1)
        if (clear(c)) chosen.insert(c);
    return {chosen.begin(), chosen.end()};
}

QStringList Colormap::names() { return {"viridis", "magma", "grey"}; }

QColor Colormap::at(const QString& name, double t)
{
    const auto& s = stops(name);
    t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * double(s.size() - 1);
    const size_t i = std::min(size_t(t), s.size() - 2);
    const double f = t - double(i);
    const QColor a = s[i], b = s[i + 1];
    return QColor::fromRgbF(float(a.redF() + f * (b.redF() - a.redF())), float(a.greenF() + f * (b.greenF() - a.greenF())),
                            float(a.blueF() + f * (b.blueF() - a.blueF())));
}

QImage heatmapImage(const HeatmapData& d, const HeatmapStyle& style, QSize size)
{
    // A map of many more cells than pixels (a long prompt's attention) is pooled first, each pixel
    // the largest of its cells, so a lookup head's one bright cell per row still shows, and the
    // colour map runs per pixel rather than per cell.
    const int cols = std::max(1, std::min(d.cols, 2 * size.width())), rows = std::max(1, std::min(d.rows, 2 * size.height()));
    QImage cells(cols, rows, QImage::Format_RGB32);
    cells.fill(Qt::white);
    const auto r = shownRange(d, style);
    for (int y = 0; y < rows && d.rows > 0; ++y) {
        const int r0 = int(int64_t(y) * d.rows / rows), r1 = std::max(r0 + 1, int(int64_t(y + 1) * d.rows / rows));
        for (int x = 0; x < cols && d.cols > 0; ++x) {
            const int c0 = int(int64_t(x) * d.cols / cols), c1 = std::max(c0 + 1, int(int64_t(x + 1) * d.cols / cols));
            float most = d.at(r0, c0);
            for (int i = r0; i < r1; ++i)
                for (int j = c0; j < c1; ++j) most = std::max(most, d.at(i, j));
            cells.setPixelColor(x, y, Colormap::at(style.colormap, position(most, r, style.logScale)));
        }
    }
    return cells.scaled(size, Qt::IgnoreAspectRatio, Qt::FastTransformation);
}

HeatmapView::HeatmapView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumSize(240, 200);
    m_plot->setBackground(Qt::white);
    m_map = new QCPColorMap(m_plot->xAxis, m_plot->yAxis);
    m_map->setInterpolate(false);
    m_map->setTightBoundary(false);
    m_scale = new QCPColorScale(m_plot);
    m_plot->plotLayout()->addElement(0, 1, m_scale);
    m_scale->setBarWidth(10);
    m_map->setColorScale(m_scale);
    m_plot->yAxis->setRangeReversed(true);  // the first query at the top, as in the papers
    auto* group = new QCPMarginGroup(m_plot);
    m_plot->axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
    m_plot->plotLayout()->insertRow(0);
    m_title = new QCPTextElement(m_plot, QString(), QFont(font().family(), 10, QFont::Bold));
    m_plot->plotLayout()->addElement(0, 0, m_title);
    m_marks = m_plot->addGraph();
    m_marks->setLineStyle(QCPGraph::lsNone);
    m_marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor("#ff7f0e"), 1.6), Qt::NoBrush, 9));
    m_warnings = m_plot->addGraph();
    m_warnings->setLineStyle(QCPGraph::lsNone);
    m_warnings->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(QColor("#d62728"), 2), Qt::NoBrush, 9));
    // A ✗ in a column of its own left of the map for every marked row (a wrong answer): all of
    // them show, however few rows have room for a label.
    m_wrong = m_plot->addGraph();
    m_wrong->setName("wrong answers");
    m_wrong->setLineStyle(QCPGraph::lsNone);
    m_wrong->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(QColor("#d62728"), 1.5), Qt::NoBrush, 7));
    m_lock = new QCPItemRect(m_plot);
    m_lock->setPen(QPen(Qt::white, 2));
    m_lock->setBrush(Qt::NoBrush);
    m_lock->setVisible(false);
    layout->addWidget(m_plot, 1);
    m_readout = new QLabel(this);
    m_readout->setObjectName("readout");
    m_readout->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_readout->setMinimumHeight(m_readout->fontMetrics().height() + 4);
    // a long read-out (a long token's row, the locked row's top three) is cut, never widening the map
    m_readout->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    layout->addWidget(m_readout);
    // Which cells are labelled depends on the axis rect, known only once laid out; other labels
    // change the margins, so the plot is laid out again (twice at most, should they not settle).
    connect(m_plot, &QCustomPlot::afterLayout, this, [this] {
        fitRows();
        if (m_relabelPasses < 2 && relabel()) {
            ++m_relabelPasses;
            m_plot->replot(QCustomPlot::rpQueuedReplot);
        }
    });
    connect(m_plot, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) { onMove(int(e->position().x()), int(e->position().y())); });
    // A click locks a row; a drag pans a zoomed map (Ctrl + wheel zooms; the wheel alone scrolls
    // what the map sits in); a double click shows all of it again.
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    m_plot->installEventFilter(this);
    connect(m_plot, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { m_pressedAt = e->position().toPoint(); });
    connect(m_plot, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if (e->button() == Qt::LeftButton && (e->position().toPoint() - m_pressedAt).manhattanLength() < 4)
            onClick(int(e->position().x()), int(e->position().y()));  // right: the export menu
    });
    connect(m_plot, &QCustomPlot::mouseDoubleClick, this, [this] { resetZoom(); });
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis})
        connect(axis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] { keepInside(); });
}

bool HeatmapView::eventFilter(QObject* watched, QEvent* e)
{
    if (watched == m_plot && e->type() == QEvent::Wheel && !(static_cast<QWheelEvent*>(e)->modifiers() & Qt::ControlModifier)) {
        // not a zoom: the scroll area around the map scrolls, as over any other widget
        for (QWidget* w = parentWidget(); w; w = w->parentWidget())
            if (auto* area = qobject_cast<QAbstractScrollArea*>(w)) {
                QApplication::sendEvent(area->viewport(), e);
                break;
            }
        return true;
    }
    return QWidget::eventFilter(watched, e);
}

QCPRange HeatmapView::fullRange(Qt::Orientation o) const
{
    if (o == Qt::Horizontal) return QCPRange(gutter() ? -1.5 : -0.5, std::max(1, m_data.cols) - 0.5);
    return QCPRange(-0.5, std::max(1, m_data.rows) - 0.5);
}

void HeatmapView::keepInside()
{
    // a zoomed or panned range stays within the map and at least a few cells wide
    if (m_clamping) return;
    m_clamping = true;
    for (QCPAxis* axis : {m_plot->xAxis, m_plot->yAxis}) {
        const QCPRange full = fullRange(axis->orientation());
        QCPRange r = axis->range();
        const double size = std::clamp(r.size(), std::min(full.size(), 4.0), full.size());
        r.lower = std::clamp(r.center() - size / 2, full.lower, full.upper - size);
        r.upper = r.lower + size;
        if (std::abs(r.lower - axis->range().lower) > 1e-9 || std::abs(r.upper - axis->range().upper) > 1e-9) axis->setRange(r);
    }
    m_clamping = false;
    relabel();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

bool HeatmapView::zoomed() const
{
    return m_plot->xAxis->range().size() < fullRange(Qt::Horizontal).size() - 1e-6 ||
           m_plot->yAxis->range().size() < fullRange(Qt::Vertical).size() - 1e-6;
}

void HeatmapView::zoomTo(int firstRow, int lastRow, int firstCol, int lastCol)
{
    m_plot->xAxis->setRange(firstCol - 0.5, lastCol + 0.5);
    m_plot->yAxis->setRange(firstRow - 0.5, lastRow + 0.5);
    keepInside();
}

void HeatmapView::resetZoom()
{
    m_clamping = true;
    m_plot->xAxis->setRange(fullRange(Qt::Horizontal));
    m_plot->yAxis->setRange(fullRange(Qt::Vertical));
    m_clamping = false;
    relabel();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::setData(const HeatmapData& data)
{
    m_data = data;
    if (m_lockedRow >= m_data.rows) m_lockedRow = -1;
    m_hoverText.clear();
    setMarks({}, {});
    redraw();
}

void HeatmapView::setStyle(const HeatmapStyle& style)
{
    m_style = style;
    redraw();
}

std::pair<double, double> HeatmapView::range() const { return shownRange(m_data, m_style); }

void HeatmapView::setMarks(const std::vector<std::pair<int, int>>& marks, const std::vector<std::pair<int, int>>& warnings)
{
    m_markCells = marks;
    auto fill = [](QCPGraph* g, const std::vector<std::pair<int, int>>& cells) {
        QVector<double> x, y;
        for (const auto& [r, c] : cells) {
            x << c;
            y << r;
        }
        g->setData(x, y);
    };
    fill(m_marks, marks);
    fill(m_warnings, warnings);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void HeatmapView::redraw()
{
    const int rows = std::max(1, m_data.rows), cols = std::max(1, m_data.cols);
    m_map->data()->setSize(cols, rows);
    m_map->data()->setRange(QCPRange(0, cols - 1), QCPRange(0, rows - 1));
    for (int r = 0; r < m_data.rows; ++r)
        for (int c = 0; c < m_data.cols; ++c) m_map->data()->setCell(c, r, double(m_data.at(r, c)));
    m_map->setGradient(gradientOf(m_style.colormap));
    m_map->setDataScaleType(m_style.logScale ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (m_style.logScale) m_scale->axis()->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    else m_scale->axis()->setTicker(QSharedPointer<QCPAxisTicker>::create());
    const auto [lo, hi] = range();
    m_map->setDataRange(QCPRange(lo, hi));
    m_clamping = true;  // a new map is shown whole
    m_plot->xAxis->setRange(fullRange(Qt::Horizontal));
    m_plot->yAxis->setRange(fullRange(Qt::Vertical));
    m_clamping = false;
    relabel();
    QVector<double> x, y;
    for (int r : m_data.markedRows)
        if (r >= 0 && r < m_data.rows) {
            x << -1;
            y << r;
        }
    m_wrong->setData(x, y);
    m_title->setText(m_data.title);
    m_relabelPasses = 0;
    fitRows();
    lockRow(m_lockedRow);
}

bool HeatmapView::relabel()
{
    // the axis rect's size once laid out, else the widget's
    const QRect r = m_plot->axisRect()->rect();
    int w = r.width() > 10 ? r.width() : std::max(100, m_plot->width() - 120);
    const int h = r.height() > 10 ? r.height() : std::max(100, m_plot->height() - 100);
    // The cells in view (all of them unless zoomed) share the axis, pixels per cell being the
    // axis over its range (which holds the ✗ column too); cells without labels of their own are
    // numbered, at round steps.
    const auto inView = [](const QCPAxis* axis, int count, int length, const QStringList& labels, const std::vector<int>& keep) {
        const QCPRange range = axis->range();
        const int first = std::clamp(int(std::ceil(range.lower)), 0, std::max(0, count - 1));
        const int last = std::clamp(int(std::floor(range.upper)), first, std::max(0, count - 1));
        const int n = count > 0 ? last - first + 1 : 0;
        std::vector<int> shifted;
        for (int k : keep)
            if (k >= first && k <= last) shifted.push_back(k - first);
        std::vector<int> cells = labelledCells(n, length * n / std::max(1.0, range.size()), labelSpacing(axis, labels, count), shifted,
                                               labels.isEmpty());
        for (int& c : cells) c += first;
        return cells;
    };
    std::vector<int> cols = inView(m_plot->xAxis, m_data.cols, w, m_data.colLabels, {});
    std::vector<int> rows = inView(m_plot->yAxis, m_data.rows, h, m_data.rowLabels, m_data.markedRows);
    const bool changed = cols != m_colCells || rows != m_rowCells;
    m_colCells = std::move(cols);
    m_rowCells = std::move(rows);
    labelAxis(m_plot->xAxis, m_data.colLabels, m_colCells, m_data.colTitle);
    labelAxis(m_plot->yAxis, m_data.rowLabels, m_rowCells, m_data.rowTitle);
    return changed;
}

bool HeatmapView::gutter() const { return !m_data.markedRows.empty(); }

std::vector<int> HeatmapView::labelledRows() const { return m_rowCells; }

std::vector<int> HeatmapView::labelledColumns() const { return m_colCells; }

void HeatmapView::setReadableRows(int rows)
{
    m_readableRows = rows;
    fitRows();
}

void HeatmapView::setFitHeight(int height)
{
    if (height == m_fitHeight) return;
    m_fitHeight = height;
    fitRows();
}

void HeatmapView::fitRows()
{
    if (m_readableRows <= 0) return;
    // the axis gets half a label's room per row (cells several pixels high, every other row
    // labelled, and every marked one); what surrounds it (title, key labels, margins, the
    // read-out) as laid out, else an estimate
    const int rows = std::min(m_readableRows, std::max(1, m_data.rows));
    const double spacing = labelSpacing(m_plot->yAxis, m_data.rowLabels, rows);
    const int readable = rows * int(std::ceil(spacing / 2)), least = rows * int(std::ceil(spacing / 3));
    const int laidOut = m_plot->axisRect()->rect().height();
    const int fontPx = QFontMetrics(m_plot->yAxis->tickLabelFont()).height();
    const int around = (laidOut > 10 ? m_plot->height() - laidOut : 4 * fontPx + 40) + m_readout->sizeHint().height() + layout()->spacing();
    // given a height to fit in, the rows give up room down to a third of a label each
    const int axis = m_fitHeight > 0 ? std::clamp(m_fitHeight - around, least, readable) : readable;
    if (std::abs(minimumHeight() - (axis + around)) > 1) setMinimumHeight(axis + around);
}

void HeatmapView::resizeEvent(QResizeEvent* e)
{
    QWidget::resizeEvent(e);
    m_relabelPasses = 0;
    relabel();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

std::pair<int, int> HeatmapView::cellAt(int x, int y) const
{
    const int c = int(std::lround(m_plot->xAxis->pixelToCoord(x))), r = int(std::lround(m_plot->yAxis->pixelToCoord(y)));
    if (r < 0 || c < 0 || r >= m_data.rows || c >= m_data.cols || !m_plot->axisRect()->rect().contains(x, y)) return {-1, -1};
    return {r, c};
}

void HeatmapView::onMove(int x, int y)
{
    const auto [r, c] = cellAt(x, y);
    if (r < 0) return;
    const QString rl = r < m_data.rowLabels.size() ? m_data.rowLabels[r] : QString::number(r);
    const QString cl = c < m_data.colLabels.size() ? m_data.colLabels[c] : QString::number(c);
    m_hoverText = QString("%1 %2 '%3' → %4 %5 '%6': %7")
                      .arg(m_data.rowTitle).arg(r).arg(rl, m_data.colTitle).arg(c).arg(cl)
                      .arg(double(m_data.at(r, c)), 0, 'g', 4);
    m_readout->setText(readout());
    emit hovered(r, c);
}

void HeatmapView::onClick(int x, int y)
{
    const auto [r, c] = cellAt(x, y);
    if (r < 0) return;
    lockRow(r == m_lockedRow ? -1 : r);
    emit rowLocked(m_lockedRow);
}

void HeatmapView::lockRow(int row)
{
    m_lockedRow = row >= 0 && row < m_data.rows ? row : -1;
    m_lock->setVisible(m_lockedRow >= 0);
    if (m_lockedRow >= 0) {
        m_lock->topLeft->setCoords(-0.5, m_lockedRow - 0.5);
        m_lock->bottomRight->setCoords(m_data.cols - 0.5, m_lockedRow + 0.5);
    }
    m_readout->setText(readout());
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString HeatmapView::readout() const
{
    QString locked;
    if (m_lockedRow >= 0) {
        // the locked row's three largest entries
        std::vector<int> order(size_t(m_data.cols));
        for (int c = 0; c < m_data.cols; ++c) order[size_t(c)] = c;
        std::sort(order.begin(), order.end(), [&](int a, int b) { return m_data.at(m_lockedRow, a) > m_data.at(m_lockedRow, b); });
        QStringList top;
        for (int i = 0; i < std::min(3, m_data.cols); ++i) {
            const int c = order[size_t(i)];
            top << QString("%1 '%2' %3").arg(c).arg(c < m_data.colLabels.size() ? m_data.colLabels[c] : QString::number(c))
                       .arg(double(m_data.at(m_lockedRow, c)), 0, 'g', 3);
        }
        locked = QString("locked %1 %2: %3").arg(m_data.rowTitle).arg(m_lockedRow).arg(top.join(", "));
    }
    if (m_hoverText.isEmpty())
        return locked.isEmpty() ? QString("hover: values; click: lock a row; Ctrl+wheel: zoom, drag: pan, double-click: all")
                                : locked;
    return locked.isEmpty() ? m_hoverText : m_hoverText + "   |   " + locked;
}

}  // namespace parrot
