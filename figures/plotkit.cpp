#include "figures/plotkit.h"

#include <qcustomplot.h>

#include <QLineF>
#include <QPointer>

#include <algorithm>
#include <cmath>
#include <vector>

namespace parrot {

namespace {

// Whole-number steps: the base's 2.5 becomes 2; its larger steps are whole already.
double wholeStep(double step) { return step < 1 ? 1 : std::floor(step); }
// Small steps get one sub-tick per whole number; -1 for larger ones, which the base divides into
// whole parts already (10, 20, 25 or 50 into 5 or 4).
int wholeSubTicks(double step) { return step <= 5 ? std::max(0, int(std::lround(step)) - 1) : -1; }

class IntegerTicker : public QCPAxisTicker {
protected:
    double getTickStep(const QCPRange& range) override { return wholeStep(QCPAxisTicker::getTickStep(range)); }
    int getSubTickCount(double tickStep) override
    {
        const int n = wholeSubTicks(tickStep);
        return n >= 0 ? n : QCPAxisTicker::getSubTickCount(tickStep);
    }
};

// Powers of ten; where the range is too short for those (under 1.6 decades), the whole numbers
// 1, 2, 3 and 5 times a power of ten (5 10 20 30 on 4..32), which a log axis spaces about evenly;
// evenly stepped ticks crowd at its right end there (30 35 40).
class IntegerLogTicker : public QCPAxisTickerLog {
protected:
    QVector<double> createTickVector(double tickStep, const QCPRange& range) override
    {
        m_short = range.lower > 0 && std::log10(range.upper / range.lower) < 1.6;
        if (!m_short) return QCPAxisTickerLog::createTickVector(tickStep, range);
        QVector<double> ticks;
        for (const std::vector<int>& steps : {std::vector<int>{1, 2, 3, 5}, std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
            ticks.clear();
            for (double decade = std::pow(10.0, std::floor(std::log10(range.lower))); decade <= range.upper; decade *= 10)
                for (const int m : steps)
                    if (const double t = m * decade; t >= 1 && t >= range.lower && t <= range.upper) ticks << t;
            if (ticks.size() >= 3) break;  // else every whole multiple
        }
        return ticks;
    }
    int getSubTickCount(double tickStep) override  // called after createTickVector
    {
        return m_short ? 0 : QCPAxisTickerLog::getSubTickCount(tickStep);
    }

private:
    bool m_short = false;
};

// Where the data is drawn, in pixels: line segments, and boxes around marks and texts.
struct Obstacles {
    std::vector<QLineF> lines;
    std::vector<QRectF> boxes;

    bool touch(const QRectF& r) const
    {
        return std::any_of(boxes.begin(), boxes.end(), [&](const QRectF& b) { return b.intersects(r); }) ||
               std::any_of(lines.begin(), lines.end(), [&](const QLineF& l) { return crosses(l, r); });
    }

    // Liang and Barsky's clipping: whether any part of the segment lies in the rectangle.
    static bool crosses(const QLineF& l, const QRectF& r)
    {
        const double p[4] = {-l.dx(), l.dx(), -l.dy(), l.dy()};
        const double q[4] = {l.x1() - r.left(), r.right() - l.x1(), l.y1() - r.top(), r.bottom() - l.y1()};
        double t0 = 0, t1 = 1;
        for (int i = 0; i < 4; ++i) {
            if (p[i] == 0) {
                if (q[i] < 0) return false;
                continue;
            }
            const double t = q[i] / p[i];
            if (p[i] < 0) t0 = std::max(t0, t);
            else t1 = std::min(t1, t);
            if (t0 > t1) return false;
        }
        return true;
    }
};

// Whether a value can be drawn on the axis (a log axis has no place for zero or below).
bool drawable(const QCPAxis* axis, double v) { return std::isfinite(v) && (axis->scaleType() != QCPAxis::stLogarithmic || v > 0); }

// The points of one plottable's data as drawn: a mark's box around each, and the segments between
// consecutive drawable points when it draws a line. Consecutive points in one pixel column are one
// box around them all (the segments between them lie inside it), so a long training run costs
// about as much as the plot is wide, not one box per step.
template <class Data>
void addPlottable(Obstacles& o, const QCPAbstractPlottable& p, const Data& data, bool line, double markSize)
{
    const double half = std::max(1.0, markSize / 2);
    bool open = false;      // a column's box is being grown
    bool previous = false;  // the last point was drawn (a line goes on from it)
    double column = 0, left = 0, right = 0, top = 0, bottom = 0;
    QPointF last;
    auto close = [&] {
        if (open) o.boxes.push_back(QRectF(QPointF(left - half, top - half), QPointF(right + half, bottom + half)));
        open = false;
    };
    for (auto it = data.constBegin(); it != data.constEnd(); ++it) {
        if (!drawable(p.keyAxis(), it->key) || !drawable(p.valueAxis(), it->value)) {
            close();
            previous = false;  // a gap in the line
            continue;
        }
        const QPointF at = p.coordsToPixels(it->key, it->value);
        if (open && std::floor(at.x()) == column) {
            left = std::min(left, at.x());
            right = std::max(right, at.x());
            top = std::min(top, at.y());
            bottom = std::max(bottom, at.y());
        } else {
            close();
            if (line && previous) o.lines.push_back(QLineF(last, at));
            open = true;
            column = std::floor(at.x());
            left = right = at.x();
            top = bottom = at.y();
        }
        previous = true;
        last = at;
    }
    close();
}

Obstacles obstaclesIn(QCustomPlot& plot, const QCPAxisRect* rect)
{
    Obstacles o;
    for (int i = 0; i < plot.plottableCount(); ++i) {
        const QCPAbstractPlottable* p = plot.plottable(i);
        if (!p->realVisibility() || !p->keyAxis() || !p->valueAxis() || p->keyAxis()->axisRect() != rect) continue;
        const bool pen = p->pen().style() != Qt::NoPen;
        if (auto* g = qobject_cast<const QCPGraph*>(p)) {
            const bool line = pen && g->lineStyle() != QCPGraph::lsNone, marks = !g->scatterStyle().isNone();
            if (line || marks) addPlottable(o, *p, *g->data(), line, marks ? g->scatterStyle().size() : 0);  // else a band's edge
        } else if (auto* c = qobject_cast<const QCPCurve*>(p)) {
            const bool line = pen && c->lineStyle() != QCPCurve::lsNone, marks = !c->scatterStyle().isNone();
            if (line || marks) addPlottable(o, *p, *c->data(), line, marks ? c->scatterStyle().size() : 0);
        }
    }
    for (int i = 0; i < plot.itemCount(); ++i) {
        QCPAbstractItem* item = plot.item(i);
        if (!item->realVisibility()) continue;
        if (auto* t = qobject_cast<QCPItemText*>(item)) {
            o.boxes.push_back(QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition()).normalized());
        } else if (auto* s = qobject_cast<QCPItemStraightLine*>(item)) {
            const QPointF a = s->point1->pixelPosition(), b = s->point2->pixelPosition();
            const double length = QLineF(a, b).length();
            if (length > 0) {  // the line runs through the whole axis rect
                const QPointF far = (b - a) * (1e5 / length);
                o.lines.push_back(QLineF(a - far, b + far));
            }
        }
    }
    return o;
}

void relayout(QCustomPlot& plot)
{
    for (auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        plot.plotLayout()->update(phase);
}

// The legend below or beside the axes sits in a grid of its own, which lines it up with the axis rect.
QCPLayoutGrid* holderOf(const QCustomPlot& plot)
{
    QCPLayout* holder = plot.legend->layout();
    return holder && holder->layout() == plot.plotLayout() ? qobject_cast<QCPLayoutGrid*>(holder) : nullptr;
}

void moveInside(QCustomPlot& plot, QCPAxisRect* rect)
{
    QCPLayoutGrid* holder = holderOf(plot);
    holder->take(plot.legend);
    plot.plotLayout()->remove(holder);
    plot.plotLayout()->simplify();  // the legend's row or column
    plot.legend->setWrap(0);
    plot.legend->setFillOrder(QCPLayoutGrid::foRowsFirst, true);
    rect->insetLayout()->addElement(plot.legend, Qt::AlignTop | Qt::AlignRight);
}

// Out of the axis rect into a grid of its own: below it, as wide as it, in as many columns as
// that holds; or beside it, on its right, in as many columns as its height needs (for a plot much
// wider than tall, a pane on a laptop screen, where a legend below would leave the data a strip).
// False when the axis rect is not a cell of the plot's own layout (the legend then stays inside).
bool moveOut(QCustomPlot& plot, QCPAxisRect* rect, bool beside)
{
    QCPLayoutGrid* grid = plot.plotLayout();
    QCPLegend* legend = plot.legend;
    for (int row = 0; row < grid->rowCount(); ++row)
        for (int column = 0; column < grid->columnCount(); ++column) {
            if (grid->element(row, column) != rect) continue;
            // the legend's cells along the side it lies on: columns below, rows beside
            int largest = 1;
            for (int i = 0; i < legend->itemCount(); ++i)
                if (const QCPAbstractLegendItem* item = legend->item(i)) {
                    const QSize hint = item->minimumOuterSizeHint();
                    largest = std::max(largest, beside ? hint.height() : hint.width());
                }
            const QMargins m = legend->margins();
            const int room = beside ? rect->rect().height() - m.top() - m.bottom() : rect->rect().width() - m.left() - m.right();
            const int spacing = beside ? legend->rowSpacing() : legend->columnSpacing();
            const int cells = std::clamp((room + spacing) / (largest + spacing), 1, std::max(1, legend->itemCount()));
            rect->insetLayout()->take(legend);
            auto* holder = new QCPLayoutGrid;
            if (beside) {
                grid->insertColumn(column + 1);
                grid->addElement(row, column + 1, holder);
                grid->setColumnStretchFactor(column + 1, 0.001);  // as wide as the legend, the axis rect takes the rest
                holder->setMargins(QMargins(6, rect->margins().top(), 6, rect->margins().bottom()));
            } else {
                grid->insertRow(row + 1);
                grid->addElement(row + 1, column, holder);
                grid->setRowStretchFactor(row + 1, 0.001);  // as tall as the legend, the axis rect takes the rest
                holder->setMargins(QMargins(rect->margins().left(), 6, rect->margins().right(), 6));
            }
            holder->setAutoMargins(QCP::msNone);
            holder->addElement(0, 0, legend);
            legend->setWrap(cells);
            legend->setFillOrder(beside ? QCPLayoutGrid::foRowsFirst : QCPLayoutGrid::foColumnsFirst, true);
            return true;
        }
    return false;
}

void placeLegend(QCustomPlot& plot)
{
    QCPLegend* legend = plot.legend;
    QCPAxisRect* rect = plot.axisRect();
    if (!legend || !rect) return;
    QCPLayoutInset* inset = rect->insetLayout();
    // Every layout starts from the legend inside, so where it goes depends only on the data and
    // the size, never on where an earlier layout put it.
    if (holderOf(plot)) {
        moveInside(plot, rect);
        relayout(plot);
    }
    // QCustomPlot clips each legend item one pixel above its box, which cut the underscores of
    // an item's last line ("d_model" read "d model"): one pixel more below each item.
    bool grown = false;
    for (int i = 0; i < legend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = legend->item(i); item && item->margins().bottom() < 1) {
            item->setMargins(item->margins() + QMargins(0, 0, 0, 1));
            grown = true;
        }
    if (grown) relayout(plot);
    if (legend->layout() != inset || !legend->visible() || legend->itemCount() == 0) return;
    int index = 0;
    while (index < inset->elementCount() && inset->elementAt(index) != legend) ++index;
    const Obstacles obstacles = obstaclesIn(plot, rect);
    static const Qt::Alignment places[] = {
        Qt::AlignTop | Qt::AlignRight,     Qt::AlignTop | Qt::AlignLeft,     Qt::AlignBottom | Qt::AlignRight,
        Qt::AlignBottom | Qt::AlignLeft,   Qt::AlignVCenter | Qt::AlignRight, Qt::AlignVCenter | Qt::AlignLeft,
        Qt::AlignTop | Qt::AlignHCenter,   Qt::AlignBottom | Qt::AlignHCenter};
    inset->setInsetPlacement(index, QCPLayoutInset::ipBorderAligned);
    for (Qt::Alignment place : places) {
        inset->setInsetAlignment(index, place);
        inset->update(QCPLayoutElement::upLayout);
        if (!obstacles.touch(QRectF(legend->outerRect()).adjusted(-2, -2, 2, 2))) return;  // 2 px: half a curve's pen
    }
    inset->setInsetAlignment(index, places[0]);
    const bool wideAndShort = rect->rect().height() < 300 && rect->rect().width() > 3 * rect->rect().height();
    if (moveOut(plot, rect, wideAndShort)) relayout(plot);
    else inset->update(QCPLayoutElement::upLayout);
}

}  // namespace

QSharedPointer<QCPAxisTicker> integerTicker(bool logarithmic)
{
    if (logarithmic) return QSharedPointer<IntegerLogTicker>::create();
    return QSharedPointer<IntegerTicker>::create();
}

QString legendName(const QString& name, int width)
{
    QStringList lines;
    for (const QString& word : name.split(' ', Qt::SkipEmptyParts)) {
        if (!lines.isEmpty() && lines.last().size() + 1 + word.size() <= width) lines.last() += ' ' + word;
        else lines << word;
    }
    return lines.join('\n');
}

QCPBars* addBandKey(QCustomPlot& plot, QCPItemRect* band, const QString& name)
{
    auto* key = new QCPBars(plot.xAxis, plot.yAxis);
    key->setName(name);
    key->setBrush(band->brush());
    QObject::connect(&plot, &QCustomPlot::afterLayout, key, [key, band = QPointer<QCPItemRect>(band)] {
        if (!band) return;
        key->setBrush(band->brush());
        QColor edge = band->brush().color();
        edge.setAlpha(std::min(255, edge.alpha() * 3));  // the swatch's outline a little stronger than its fill
        key->setPen(QPen(edge));
    });
    return key;
}

void lineUpAxisRects(QCustomPlot& a, QCustomPlot& b)
{
    // Margins only grow to the larger one: it is reached in one more layout and never oscillates.
    const auto lineUp = [pa = QPointer<QCustomPlot>(&a), pb = QPointer<QCustomPlot>(&b)] {
        if (!pa || !pb || !pa->isVisible() || !pb->isVisible()) return;  // a hidden one keeps its last layout's margins
        QCPAxisRect *ra = pa->axisRect(), *rb = pb->axisRect();
        const int left = std::max(ra->margins().left(), rb->margins().left());
        const int right = std::max(ra->margins().right(), rb->margins().right());
        for (const auto& [plot, rect] : {std::pair{pa.data(), ra}, std::pair{pb.data(), rb}}) {
            if (rect->margins().left() == left && rect->margins().right() == right) continue;
            const QMargins least = rect->minimumMargins();
            rect->setMinimumMargins(QMargins(left, least.top(), right, least.bottom()));
            plot->replot(QCustomPlot::rpQueuedReplot);
        }
    };
    QObject::connect(&a, &QCustomPlot::afterLayout, &b, lineUp);
    QObject::connect(&b, &QCustomPlot::afterLayout, &a, lineUp);
}

void keepLegendOffData(QCustomPlot& plot)
{
    static const char* const installed = "parrotKeepsLegendOffData";
    if (plot.property(installed).toBool()) return;
    plot.setProperty(installed, true);
    QObject::connect(&plot, &QCustomPlot::afterLayout, &plot, [p = &plot] { placeLegend(*p); });
}

}  // namespace parrot
