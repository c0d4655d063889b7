// What every figure shares, on screen and in exports: whole-number ticks on axes that count
// (lengths, steps, examples), and a legend that keeps off the data.
#pragma once

#include <QSharedPointer>
#include <QString>

class QCPAxisTicker;
class QCPBars;
class QCPItemRect;
class QCustomPlot;

namespace parrot {

// Ticks at whole numbers only (never 2.5 or 7.5), for axes whose values are counts; on a
// logarithmic axis, powers of ten, or where the range is under 1.6 decades 1, 2, 3 and 5 times
// a power of ten.
QSharedPointer<QCPAxisTicker> integerTicker(bool logarithmic = false);

// A series' name for a legend: broken between words into lines of at most about `width`
// characters, so a long model description fits a narrow figure.
QString legendName(const QString& name, int width = 40);

// From now on, each time the plot is laid out (a replot, an export at any size or font) its
// legend goes where its box covers no data: the first of the axis rect's inset places, in the
// order top right, top left, bottom right, bottom left, then the middles of the right, left, top
// and bottom edges, whose box holds no point or line of a visible graph or curve, no text item and
// no straight line; when none is free, below the axis rect, in as many columns as fit. Calling it
// again for the same plot does nothing.
void keepLegendOffData(QCustomPlot& plot);

// Keeps the axis rects of two plots shown one above the other at the same left and right margins
// (the larger of the two at each layout), so that the same step is at the same x in both.
void lineUpAxisRects(QCustomPlot& a, QCustomPlot& b);

// A legend entry for a shaded band (an item, which a legend cannot list): a swatch named `name`
// (bars without data, so neither a curve nor in the data), given the band's shade each time the
// plot is laid out, so a theme that changes the band changes its swatch too.
QCPBars* addBandKey(QCustomPlot& plot, QCPItemRect* band, const QString& name);

}  // namespace parrot
