// Figures for papers: every export format is a valid file of its kind (PNG header and pixel size
// from the DPI; PDF structure and page size; SVG that parses, with its text as text; CSV columns),
// a PNG at 2x or 3x the DPI is the 1x drawing finer (pixels compared, not headers), no text of an
// SVG lies outside the figure, legends cover no data where there is room, counting axes tick at
// whole numbers, exports are white in dark mode and leave the view as it was, a panel exports as
// one figure and can be cancelled, File → Export drives the dialog and starts in a folder that
// exists, `parrotscope export` writes every figure of a run, and window layouts survive a save /
// restore round trip and a restart.
#include "base/error.h"
#include "base/io/runfolder.h"
#include "core/analysis/construction.h"
#include "core/model.h"
#include "figures/export.h"
#include "figures/figures.h"
#include "figures/plotkit.h"
#include "figures/plots.h"
#include "ui/common/exportdialog.h"
#include "ui/panels/constructionview.h"
#include "ui/panels/experimentspanel.h"
#include "ui/panels/settingspanel.h"
#include "ui/panels/trainpanel.h"
#include "ui/window/mainwindow.h"
#include "ui/window/theme.h"
#include "guitest.h"
#include "testutil.h"

#include <QCommandLinkButton>
#include <QAction>
#include <QCommandLinkButton>
#include <QApplication>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>
#include <qcustomplot.h>

using namespace parrot;

namespace {

// A plot with everything a figure has: a titled graph (its name needs CSV quoting), bars, a
// colour map with its colour bar, axis labels and a legend.
void drawSample(QCustomPlot& plot)
{
    plot.plotLayout()->insertRow(0);
    plot.plotLayout()->addElement(0, 0, new QCPTextElement(&plot, "Sample figure", QFont("sans", 11, QFont::Bold)));
    QCPGraph* g = plot.addGraph();
    g->setName("accuracy, seed 1");
    g->setPen(QPen(Qt::blue, 2));
    for (int i = 0; i < 10; ++i) g->addData(i, i * i / 100.0);
    auto* bars = new QCPBars(plot.xAxis, plot.yAxis);
    bars->setName("bars");
    bars->addData(3, 0.5);
    bars->addData(4, 0.25);
    auto* map = new QCPColorMap(plot.xAxis, plot.yAxis2);
    map->setName("heat");
    map->data()->setSize(3, 2);
    map->data()->setRange(QCPRange(0, 2), QCPRange(0, 1));
    for (int x = 0; x < 3; ++x)
        for (int y = 0; y < 2; ++y) map->data()->setCell(x, y, x + 10 * y);
    auto* scale = new QCPColorScale(&plot);
    plot.plotLayout()->addElement(1, 1, scale);
    map->setColorScale(scale);
    map->rescaleDataRange();
    plot.xAxis->setLabel("string length");
    plot.yAxis->setLabel("answer accuracy");
    plot.legend->setVisible(true);
    plot.rescaleAxes();
    plot.replot();
}

// The sample as a 600 x 400 view.
struct SamplePlot : QCustomPlot {
    SamplePlot()
    {
        resize(600, 400);
        drawSample(*this);
    }
};

ExportOptions options(int width, int height, int dpi, double fontPt = 0)
{
    ExportOptions o;
    o.width = width;
    o.height = height;
    o.dpi = dpi;
    o.fontPt = fontPt;
    return o;
}

QString readText(const QString& path) { return QString::fromUtf8(test::readAll(path)); }

// A PDF that a reader can open: header, at least one page of the asked size, a cross-reference
// table and trailer, and the end marker.
void checkPdf(const QString& path, int width, int height)
{
    const QByteArray pdf = test::readAll(path);
    QVERIFY2(pdf.startsWith("%PDF-1."), qPrintable(path));
    QVERIFY(pdf.trimmed().endsWith("%%EOF"));
    QVERIFY(pdf.contains("/Type /Page") || pdf.contains("/Type/Page"));
    QVERIFY(pdf.contains("xref") && pdf.contains("trailer"));
    const QRegularExpression box("/MediaBox \\[0 0 ([0-9.]+) ([0-9.]+)\\]");
    const QRegularExpressionMatch m = box.match(QString::fromLatin1(pdf));
    QVERIFY2(m.hasMatch(), "no MediaBox");
    QVERIFY2(std::abs(m.captured(1).toDouble() - width) < 1.5 && std::abs(m.captured(2).toDouble() - height) < 1.5,
             qPrintable(m.captured(0)));
}

// An SVG that parses, of the asked size in points (its width and height in mm, its coordinates
// the layout's pixels), with its labels as <text>.
void checkSvg(const QString& path, int width, int height, const QStringList& texts)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    bool root = false;
    QString allText;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == u"svg" && !root) {
            root = true;
            const QSize layout = layoutSize(width, height);
            QCOMPARE(xml.attributes().value("viewBox").toString(), QString("0 0 %1 %2").arg(layout.width()).arg(layout.height()));
            const double mm = xml.attributes().value("width").toString().remove("mm").toDouble();
            QVERIFY2(std::abs(mm - width * 25.4 / 72) < 0.5, qPrintable(xml.attributes().value("width").toString()));
        }
        if (xml.isStartElement() && xml.name() == u"text") allText += xml.readElementText(QXmlStreamReader::IncludeChildElements) + "\n";
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    QVERIFY(root);
    for (const QString& t : texts) QVERIFY2(allText.contains(t), qPrintable(t + " not among the SVG's texts: " + allText.left(300)));
}

// An SVG's transform attribute as QSvgGenerator writes it ("matrix(a,b,c,d,e,f)"); false for others.
bool parseTransform(const QString& text, QTransform* t)
{
    static const QRegularExpression matrix("^\\s*matrix\\(([^)]*)\\)\\s*$");
    const QRegularExpressionMatch m = matrix.match(text);
    if (!m.hasMatch()) return false;
    const QStringList v = m.captured(1).split(QRegularExpression("[,\\s]+"), Qt::SkipEmptyParts);
    if (v.size() != 6) return false;
    *t = QTransform(v[0].toDouble(), v[1].toDouble(), v[2].toDouble(), v[3].toDouble(), v[4].toDouble(), v[5].toDouble());
    return true;
}

// The texts of an SVG that reach outside its viewBox: each <text>'s anchor (the start of its
// baseline) and an estimate of its extent (the font's metrics at its size) carried through the
// transforms of the groups around it. A text whose position cannot be read counts as outside.
QStringList textsOutside(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {path + ": cannot read"};
    QXmlStreamReader xml(&f);
    struct Context {
        QTransform transform;
        double size;
        QString family;
    };
    std::vector<Context> stack{{QTransform(), 12, "sans"}};
    QRectF view;
    QStringList outside;
    int texts = 0;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isEndElement()) {
            stack.pop_back();
            continue;
        }
        if (!xml.isStartElement()) continue;
        const QXmlStreamAttributes a = xml.attributes();
        Context c = stack.back();
        if (a.hasAttribute("transform")) {
            QTransform local;
            if (!parseTransform(a.value("transform").toString(), &local)) outside << "unread transform " + a.value("transform").toString();
            c.transform = local * c.transform;  // into the parent's coordinates, then the parent's
        }
        if (a.hasAttribute("font-size")) c.size = a.value("font-size").toDouble();
        if (a.hasAttribute("font-family")) c.family = a.value("font-family").toString();
        if (xml.name() == u"svg") {
            const QStringList v = a.value("viewBox").toString().split(' ', Qt::SkipEmptyParts);
            if (v.size() == 4) view = QRectF(v[0].toDouble(), v[1].toDouble(), v[2].toDouble(), v[3].toDouble());
        }
        if (xml.name() != u"text") {
            stack.push_back(c);
            continue;
        }
        const double x = a.value("x").toDouble(), y = a.value("y").toDouble();
        const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements);  // through its end element
        ++texts;
        QFont font(c.family);
        font.setPointSizeF(c.size * 72.0 / figureLayoutDpi());  // the SVG's unit is the layout's pixel
        const QFontMetricsF metrics(font);
        const QRectF box = c.transform.mapRect(QRectF(x, y - metrics.ascent(), metrics.horizontalAdvance(text), metrics.height()));
        if (!view.adjusted(-1, -1, 1, 1).contains(box))
            outside << QString("\"%1\" at %2,%3 %4x%5").arg(text).arg(box.x()).arg(box.y()).arg(box.width()).arg(box.height());
    }
    if (xml.hasError()) outside << xml.errorString();
    if (view.isEmpty()) outside << "no viewBox";
    if (texts == 0) outside << "no text at all";
    return outside;
}

// The drawn points of the plot's visible graphs that the legend's box holds: the data points and
// points along the lines between them, in pixels as last laid out.
QStringList pointsUnderLegend(QCustomPlot& plot)
{
    const QRectF legend = plot.legend->outerRect();
    QStringList under;
    for (int g = 0; g < plot.graphCount(); ++g) {
        QCPGraph* graph = plot.graph(g);
        if (!graph->visible() || (graph->pen().style() == Qt::NoPen && graph->scatterStyle().isNone())) continue;
        const bool line = graph->pen().style() != Qt::NoPen && graph->lineStyle() != QCPGraph::lsNone;
        QPointF last;
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
            const QPointF at = graph->coordsToPixels(it->key, it->value);
            for (int k = line && it != graph->data()->constBegin() ? 0 : 10; k <= 10; ++k)
                if (legend.contains(last + (at - last) * (k / 10.0)))
                    under << QString("%1 near (%2, %3)").arg(graph->name()).arg(it->key).arg(it->value);
            last = at;
        }
    }
    return under;
}

bool integerTicks(const QCPAxis& axis)
{
    const QVector<double> ticks = axis.tickVector();
    return !ticks.isEmpty() && std::all_of(ticks.begin(), ticks.end(), [](double t) { return t == std::round(t); });
}

QString tickText(const QCPAxis& axis)
{
    QStringList t;
    for (double v : axis.tickVector()) t << QString::number(v);
    return t.join(' ');
}

// How far two images of one size are apart: the mean absolute difference of their channels
// (0..255) over the image, and over the worst 24 x 24 block (a cut title or a moved legend is
// local, and a mean over the whole image would hide it).
struct Difference {
    double mean = 0, worstBlock = 0;
};
Difference difference(const QImage& a, const QImage& b)
{
    const QImage x = a.convertToFormat(QImage::Format_RGB32), y = b.convertToFormat(QImage::Format_RGB32);
    constexpr int block = 24;
    const int bw = (x.width() + block - 1) / block, bh = (x.height() + block - 1) / block;
    std::vector<double> sums(size_t(bw * bh), 0.0), counts(size_t(bw * bh), 0.0);
    double total = 0;
    for (int r = 0; r < x.height(); ++r) {
        const auto* p = reinterpret_cast<const QRgb*>(x.constScanLine(r));
        const auto* q = reinterpret_cast<const QRgb*>(y.constScanLine(r));
        for (int c = 0; c < x.width(); ++c) {
            const double d = (std::abs(qRed(p[c]) - qRed(q[c])) + std::abs(qGreen(p[c]) - qGreen(q[c])) + std::abs(qBlue(p[c]) - qBlue(q[c]))) / 3.0;
            total += d;
            const size_t i = size_t(r / block * bw + c / block);
            sums[i] += d;
            counts[i] += 1;
        }
    }
    Difference out;
    out.mean = total / (double(x.width()) * x.height());
    for (size_t i = 0; i < sums.size(); ++i) out.worstBlock = std::max(out.worstBlock, sums[i] / counts[i]);
    return out;
}

void checkPng(const QString& path, int width, int height)
{
    QVERIFY(test::readAll(path).startsWith("\x89PNG\r\n\x1a\n"));
    const QImage image(path);
    QCOMPARE(image.size(), QSize(width, height));
}

}  // namespace

class TestExport : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString path(const QString& name) const { return m_dir.filePath(name); }

private slots:
    void initTestCase()
    {
        QVERIFY2(test::pixelAssumptionsBroken().isEmpty(), qPrintable(test::pixelAssumptionsBroken()));
        QStandardPaths::setTestModeEnabled(true);
        QSettings().clear();
        QVERIFY(m_dir.isValid());
    }

    void everyFormatIsAValidFileOfItsKind()
    {
        SamplePlot plot;
        const ExportOptions o = options(640, 400, 144);
        exportPlot(plot, path("s.png"), o);
        checkPng(path("s.png"), 1280, 800);  // 640 x 400 points at 144 dpi: 2 pixels a point
        QCOMPARE(QImage(path("s.png")).dotsPerMeterX(), int(std::lround(144 / 0.0254)));
        exportPlot(plot, path("s.pdf"), o);
        checkPdf(path("s.pdf"), 640, 400);
        exportPlot(plot, path("s.svg"), o);
        checkSvg(path("s.svg"), 640, 400, {"string length", "answer accuracy", "Sample figure", "accuracy, seed 1"});
        exportPlot(plot, path("s.csv"), o);
        const QStringList rows = readText(path("s.csv")).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(rows.first(), QString("series,x,y,value"));
        QCOMPARE(rows.size(), 1 + 10 + 2 + 6);  // the graph's points, the bars, the map's cells
        QVERIFY(rows.contains("\"accuracy, seed 1\",3,0.09,"));
        QVERIFY(rows.contains("heat,2,1,12"));  // cell (2, 1) at its centre coordinates
        QVERIFY(!QFileInfo::exists(path("s.png.part.png")));
    }

    // A PNG at 2x or 3x the DPI, shrunk back, is the 1x PNG: one layout (text, legend, colour bar at
    // the same places and sizes), only finer; and the file says its DPI. Text scaled twice (the
    // old fault: the image's DPI and the painter's scale both enlarging it) moves and cuts it.
    void aPngAtAnyDpiIsTheSameDrawingFiner()
    {
        SamplePlot plot;
        ExportOptions o = options(450, 300, 96, 10);  // 600 x 400 pixels at 96 dpi, whole multiples of them at 192 and 288
        exportPlot(plot, path("dpi96.png"), o);
        const QImage one(path("dpi96.png"));
        QCOMPARE(one.size(), QSize(600, 400));
        for (const int factor : {2, 3}) {
            o.dpi = 96 * factor;
            const QString file = path(QString("dpi%1.png").arg(o.dpi));
            exportPlot(plot, file, o);
            const QImage fine(file);
            QCOMPARE(fine.size(), one.size() * factor);
            QCOMPARE(fine.dotsPerMeterX(), int(std::lround(o.dpi / 0.0254)));
            const QImage shrunk = fine.scaled(one.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
            if (qEnvironmentVariableIsSet("PARROT_SHOTS")) shrunk.save(QDir(qEnvironmentVariable("PARROT_SHOTS")).filePath(QString("shrunk%1.png").arg(o.dpi)));
            // measured: 2.6 and 19 at 2x, 2.0 and 17 at 3x (antialiased edges); text scaled twice: 7.9 and 100
            const Difference d = difference(one, shrunk);
            QVERIFY2(d.mean < 4 && d.worstBlock < 40,
                     qPrintable(QString("%1 dpi shrunk against 96: mean %2, worst block %3").arg(o.dpi).arg(d.mean).arg(d.worstBlock)));
        }
    }

    // No text of an SVG figure lies outside it, at the view's fonts and at a large export font.
    void svgTextStaysInsideTheFigure()
    {
        SamplePlot plot;
        ExportOptions o = options(360, 240, 96);
        for (const double font : {0.0, 14.0}) {
            o.fontPt = font;
            exportPlot(plot, path("inside.svg"), o);
            const QStringList outside = textsOutside(path("inside.svg"));
            QVERIFY2(outside.isEmpty(), qPrintable(QString("font %1: ").arg(font) + outside.join("; ")));
        }
    }

    // The legend goes where its box holds no drawn point when there is such a place (a corner or
    // an edge's middle of the axes), on screen and at an export's size; where the data fills the
    // axes, below them; and back inside when there is room again.
    void legendsCoverNoDataWhereThereIsRoom()
    {
        QCustomPlot plot;
        plot.resize(600, 400);
        keepLegendOffData(plot);
        plot.legend->setVisible(true);
        // lines along the top and the bottom: every corner is taken, the middles of the sides are free
        for (const double y : {0.95, 0.05, 0.85}) {
            QCPGraph* g = plot.addGraph();
            g->setName(QString("a rather long series name at %1").arg(y));
            g->setPen(QPen(seriesColour(plot.graphCount()), 2));
            g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
            for (int x = 0; x <= 40; ++x) g->addData(x, y);
        }
        plot.xAxis->setRange(0, 40);
        plot.yAxis->setRange(-0.02, 1.02);
        plot.replot();
        const QRect axes = plot.axisRect()->rect();
        QVERIFY(axes.contains(plot.legend->outerRect()));
        QVERIFY2(pointsUnderLegend(plot).isEmpty(), qPrintable(pointsUnderLegend(plot).join("; ")));
        QVERIFY(plot.legend->outerRect().top() > axes.top() + 20 && plot.legend->outerRect().bottom() < axes.bottom() - 20);
        plot.toPixmap(900, 300);  // an export's layout
        QVERIFY2(pointsUnderLegend(plot).isEmpty(), qPrintable("at 900 x 300: " + pointsUnderLegend(plot).join("; ")));

        // points everywhere: below the axes, in columns
        QCPGraph* cloud = plot.addGraph();
        cloud->setName("everywhere");
        cloud->setLineStyle(QCPGraph::lsNone);
        cloud->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 3));
        for (int x = 0; x <= 40; ++x)
            for (int y = 0; y <= 20; ++y) cloud->addData(x, y / 20.0);
        plot.replot();
        QVERIFY(!plot.legend->outerRect().intersects(plot.axisRect()->rect()));
        QVERIFY(plot.legend->outerRect().top() >= plot.axisRect()->rect().bottom());
        QVERIFY(plot.viewport().contains(plot.legend->outerRect()));
        QVERIFY(plot.legend->outerRect().height() < plot.legend->outerRect().width());  // its items side by side
        plot.removeGraph(cloud);
        plot.replot();
        QVERIFY(plot.axisRect()->rect().contains(plot.legend->outerRect()));
        QVERIFY(pointsUnderLegend(plot).isEmpty());

        // the construction's figure (its legend covered the n = 3 curve), measured
        ConstructionCurves c;
        c.letters = 26;
        for (int n = 2; n <= 5; ++n) {
            c.orders.push_back(n);
            c.curves.push_back(CopyConstruction({n, 26}).evaluate({10, 25, 50, 100, 150, 200}, 16, 1));
        }
        QCustomPlot construction;
        construction.resize(layoutSize(900, 800));
        drawConstruction(construction, c);
        QVERIFY2(pointsUnderLegend(construction).isEmpty(), qPrintable(pointsUnderLegend(construction).join("; ")));
        QVERIFY2(integerTicks(*construction.xAxis), qPrintable(tickText(*construction.xAxis)));
    }

    // The live accuracy plot names its training range in the legend (a label inside the axes had
    // the curves drawn over it), with a swatch that follows the band's shade; no band, no entry.
    void theTrainingRangeIsNamedInTheLegend()
    {
        AccuracyPlot accuracy;
        accuracy.resize(500, 300);
        accuracy.setTask("string length", 1, 8);
        QCustomPlot* plot = accuracy.plot();
        QCPItemRect* band = nullptr;
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* r = qobject_cast<QCPItemRect*>(plot->item(i))) band = r;
        QCPBars* key = nullptr;
        for (int i = 0; i < plot->plottableCount(); ++i)
            if (auto* b = qobject_cast<QCPBars*>(plot->plottable(i))) key = b;
        QVERIFY(band && band->visible() && key);
        QVERIFY(plot->legend->visible() && plot->legend->hasItemWithPlottable(key));
        QCOMPARE(key->name(), QString("training range"));
        QCOMPARE(plot->itemCount(), 1);  // the band only: no text for curves to cross
        plot->replot();
        QCOMPARE(key->brush().color(), band->brush().color());  // the swatch is the band's shade
        const QColor light = band->brush().color();
        plot->axisRect()->setBackground(QColor(30, 30, 30));  // a dark theme's axes: a lighter band
        plot->replot();
        QVERIFY(band->brush().color() != light);
        QCOMPARE(key->brush().color(), band->brush().color());
        accuracy.setTask("in-context examples", 1, 8, true);  // error curves: no band
        QVERIFY(!band->visible() && !plot->legend->hasItemWithPlottable(key));
    }

    // Lengths, steps and examples are counts: their axes tick at whole numbers (never 2.5, 7.5);
    // the loss plot names its raw and its smoothed line.
    void countingAxesTickAtWholeNumbers()
    {
        AccuracyPlot accuracy;
        accuracy.resize(500, 300);
        accuracy.setTask("string length", 1, 10);
        accuracy.plot()->replot();
        QVERIFY2(integerTicks(*accuracy.plot()->xAxis), qPrintable(tickText(*accuracy.plot()->xAxis)));
        QVERIFY(accuracy.plot()->xAxis->tickVector().size() >= 4);
        // a log axis over a short range (lm-eval's 4..32 tokens): 1, 2, 3, 5 times powers of ten,
        // not 5 10 15 ... 40 crowding at its right end; over decades, powers of ten
        QCustomPlot logPlot;
        logPlot.resize(500, 300);
        logPlot.xAxis->setScaleType(QCPAxis::stLogarithmic);
        logPlot.xAxis->setTicker(integerTicker(true));
        logPlot.xAxis->setRange(3.2, 40);
        logPlot.replot();
        QCOMPARE(logPlot.xAxis->tickVector(), QVector<double>({5, 10, 20, 30}));
        logPlot.xAxis->setRange(1, 5000);
        logPlot.replot();
        QCOMPARE(logPlot.xAxis->tickVector(), QVector<double>({1, 10, 100, 1000}));
        LossPlot loss;
        loss.resize(500, 300);
        loss.addPoints(1, {3.0, 2.5, 2.0, 1.8});
        loss.plot()->rescaleAxes();
        loss.plot()->replot();
        QVERIFY2(integerTicks(*loss.plot()->xAxis), qPrintable(tickText(*loss.plot()->xAxis)));
        QStringList names;
        for (int i = 0; i < loss.plot()->legend->itemCount(); ++i)
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(loss.plot()->legend->item(i))) names << item->plottable()->name();
        QVERIFY(loss.plot()->legend->visible());
        QCOMPARE(names, QStringList({"loss per step", "moving average (20 steps)"}));
    }

    // The figure's fonts, line widths and white background are the export's; the view keeps its own.
    void exportOptionsLeaveTheViewAsItWas()
    {
        QCustomPlot plot;
        plot.resize(500, 300);
        drawSample(plot);
        setDarkPlots(true);
        applyPlotTheme(plot, true);
        const QColor darkLabel = plot.xAxis->labelColor();
        QVERIFY(darkLabel.lightness() > 128);
        const double viewFont = plot.xAxis->labelFont().pointSizeF();
        ExportOptions o;
        o.width = 400;
        o.height = 300;
        o.dpi = 96;
        o.fontPt = 21;
        o.lineWidth = 4;
        exportPlot(plot, path("o.svg"), o);
        const QString svg = readText(path("o.svg"));  // in the layout's pixels: 4/3 of a point at 96 DPI
        QVERIFY2(svg.contains(QString("font-size=\"%1\"").arg(21 * layoutPixelsPerPoint())), "the export's font size is not in the SVG");
        QVERIFY(svg.contains(QString("stroke-width=\"%1\"").arg(4 * layoutPixelsPerPoint())));
        exportPlot(plot, path("o.png"), o);
        const QImage png(path("o.png"));
        QCOMPARE(png.pixelColor(2, 2), QColor(Qt::white));  // white although the view is dark
        QCOMPARE(plot.xAxis->labelColor(), darkLabel);         // and the view is still dark
        QCOMPARE(plot.xAxis->labelFont().pointSizeF(), viewFont);
        QCOMPARE(plot.graph(0)->pen().widthF(), 2.0);
        o.white = false;
        exportPlot(plot, path("dark.png"), o);
        QVERIFY(QImage(path("dark.png")).pixelColor(2, 2).lightness() < 100);
        setDarkPlots(false);
    }

    void aPanelExportsAsOneFigureAndCanBeCancelled()
    {
        QWidget panel;
        auto* h = new QHBoxLayout(&panel);
        auto* a = new QCustomPlot(&panel);
        auto* b = new QCustomPlot(&panel);
        a->setObjectName("left");
        b->setObjectName("right");
        h->addWidget(a);
        h->addWidget(b);
        drawSample(*a);
        drawSample(*b);
        panel.resize(1000, 400);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const std::vector<PlacedPlot> plots = panelPlots(&panel, 1200, 500);
        QCOMPARE(int(plots.size()), 2);
        QVERIFY(plots[0].rect.right() < plots[1].rect.left());  // side by side, as on screen
        QVERIFY(plots[1].rect.right() <= 1200 && plots[1].rect.right() > 1150);
        ExportOptions o;
        o.width = 1200;
        o.height = 500;
        o.dpi = 96;
        exportPlots(plots, path("panel.png"), o);
        checkPng(path("panel.png"), 1600, 667);  // 1200 x 500 points at 96 dpi
        exportPlots(plots, path("panel.svg"), o);
        checkSvg(path("panel.svg"), 1200, 500, {"Sample figure"});
        exportPlots(plots, path("panel.csv"), o);
        const QString csv = readText(path("panel.csv"));
        QVERIFY(csv.startsWith("plot,series,x,y,value\n"));
        QVERIFY(csv.contains("\nleft,") && csv.contains("\nright,"));
        // cancelled after the first plot: nothing written, and an earlier file is kept
        test::writeAll(path("keep.pdf"), "earlier");
        int calls = 0;
        exportPlots(plots, path("keep.pdf"), o, {}, [&](int, int) { return ++calls < 1; });
        QCOMPARE(calls, 1);
        QCOMPARE(test::readAll(path("keep.pdf")), QByteArray("earlier"));
    }

    void badRequestsAreRefusedWithAMessage()
    {
        QCustomPlot plot;
        drawSample(plot);
        const struct {
            QString file;
            ExportOptions o;
            QString says;
        } cases[] = {
            {path("x.jpg"), {}, "expected a .png, .pdf, .svg or .csv file"},
            {path("x.png"), {50, 500}, "expected 100..10000 points"},
            {path("x.png"), {800, 500, 5}, "dpi 5"},
            {path("x.png"), {10000, 10000, 1200}, "over 400 million pixels"},
            {path("no/such/folder/x.pdf"), {}, "does not exist"},
        };
        for (const auto& c : cases) {
            try {
                exportPlot(plot, c.file, c.o);
                QFAIL(qPrintable(c.file + " was written"));
            } catch (const Error& e) {
                QVERIFY2(e.message().contains(c.says), qPrintable(e.message()));
            }
        }
    }

    // An export starts in a folder that exists: the last one while it is there, else Documents,
    // else home (a fresh account may have no Documents, and the first export failed on it).
    void exportsStartInAFolderThatExists()
    {
        QSettings().setValue("export/folder", path("gone/away"));
        QVERIFY(QFileInfo(exportFolder()).isDir());
        QWidget panel;
        auto* plot = new QCustomPlot(&panel);
        drawSample(*plot);
        ExportDialog d(&panel, "Sample", plot, false);
        QVERIFY2(QFileInfo(QFileInfo(d.path()).absolutePath()).isDir(), qPrintable(d.path()));
        d.setPath(QDir(m_dir.path()).filePath("first.pdf"));
        QString error;
        QVERIFY2(test::exportAndWait(d, &error), qPrintable(error));
        QCOMPARE(exportFolder(), QFileInfo(m_dir.path()).absoluteFilePath());  // kept for the next export
        QVERIFY(d.findChild<QLabel*>("pixelSize")->text().contains("points (1/72 inch)"));
    }

    // File → Export on the Train tab's loss plot, then the whole tab; and the plot's right-click menu.
    void fileExportDrivesTheDialog()
    {
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.docks()->showTab(Tab::Train);
        w.trainPanel()->lossPlot()->addPoint(1, 3.2);
        w.trainPanel()->lossPlot()->addPoint(2, 2.5);
        auto* action = w.findChild<QAction*>("exportAction");
        QVERIFY(action);
        QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
        action->trigger();
        ExportDialog* d = w.figureActions()->exportDialog();
        QVERIFY(d && d->isVisible());
        QCOMPARE(d->targetCount(), 3);  // loss, accuracy, the whole tab
        QCOMPARE(d->targetName(), plotName(*w.trainPanel()->lossPlot()->plot()));
        ExportOptions o = d->options();
        o.width = 700;
        o.height = 420;
        o.fontPt = 12;
        d->setOptions(o);
        d->setPath(path("gui-loss.svg"));
        if (qEnvironmentVariableIsSet("PARROT_SHOTS")) {  // for looking at it: PARROT_SHOTS=DIR tst_export
            d->grab().save(QDir(qEnvironmentVariable("PARROT_SHOTS")).filePath("export-dialog.png"));
            w.grab().save(QDir(qEnvironmentVariable("PARROT_SHOTS")).filePath("export-window.png"));
        }
        QString error;
        QVERIFY2(test::exportAndWait(*d, &error), qPrintable(error));
        checkSvg(path("gui-loss.svg"), 700, 420, {"Training loss", "step", "loss per step", "moving average"});
        d->setTarget(2);  // the whole Train tab
        d->setPath(path("gui-train.pdf"));
        QVERIFY2(test::exportAndWait(*d, &error), qPrintable(error));
        checkPdf(path("gui-train.pdf"), 700, 420);
        if (qEnvironmentVariableIsSet("PARROT_SHOTS")) {
            QFile::copy(path("gui-train.pdf"), QDir(qEnvironmentVariable("PARROT_SHOTS")).filePath("whole-train.pdf"));
            ExportOptions png = d->options();
            png.dpi = 192;
            d->setOptions(png);
            d->setPath(QDir(qEnvironmentVariable("PARROT_SHOTS")).filePath("whole-train.png"));
            QVERIFY2(test::exportAndWait(*d, &error), qPrintable(error));
        }
        d->setPath(path("gui-train.txt"));
        QVERIFY(!test::exportAndWait(*d, &error));
        QVERIFY(error.contains(".png, .pdf, .svg or .csv"));
        QVERIFY(d->copyToClipboard());
        QVERIFY(!QGuiApplication::clipboard()->image().isNull());
        d->close();
        // remembered for next time
        QCOMPARE(QSettings().value("export/width").toInt(), 700);
        // right-click on a plot offers export and copy
        QStringList offered;
        QTimer::singleShot(200, [&offered] {
            if (auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget())) {
                for (QAction* a : menu->actions()) offered << a->text();
                menu->close();
            }
        });
        QContextMenuEvent event(QContextMenuEvent::Mouse, QPoint(50, 50), w.trainPanel()->lossPlot()->plot()->mapToGlobal(QPoint(50, 50)));
        QApplication::sendEvent(w.trainPanel()->lossPlot()->plot(), &event);
        QVERIFY2(offered.contains("Export figure...") && offered.contains("Copy figure to clipboard"), qPrintable(offered.join("|")));
    }

    // A layout saved, changed, restored; the session's layout back after a restart.
    void layoutsRoundTrip()
    {
        QSettings().remove("window");
        {
            MainWindow w;
            w.show();
            QVERIFY(QTest::qWaitForWindowExposed(&w));
            auto* log = w.findChild<QDockWidget*>("logDock");
            auto* runs = w.findChild<QDockWidget*>("runsDock");
            QVERIFY(log && runs);
            log->hide();
            runs->setFloating(true);
            w.docks()->saveLayout("paper");
            QVERIFY(w.docks()->savedLayouts().contains("paper"));
            w.docks()->resetLayout();  // the default for this window: the log folded into the status bar when it is short
            QVERIFY(log->isVisible() == (w.height() >= DockLayout::kFoldLogBelow) && !runs->isFloating());
            QVERIFY(w.docks()->restoreLayout("paper"));
            QVERIFY(!log->isVisible() && runs->isFloating());
            QVERIFY(!w.docks()->restoreLayout("no such layout"));
            w.docks()->showTab(Tab::Explore);
            w.close();  // saves the session's window and layout
        }
        MainWindow again;
        again.docks()->restoreSession();
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY(!again.findChild<QDockWidget*>("logDock")->isVisible());
        QVERIFY(again.findChild<QDockWidget*>("runsDock")->isFloating());
        again.docks()->resetLayout();
    }

    // The first-run welcome: non-blocking, remembered, and three one-click ways in, each doing what
    // its sentence says: training the default experiment live, the bundled models side by side,
    // and a finding's sweep running in the Experiments tab.
    void welcomeOffersThreeWaysIn()
    {
        QSettings().remove("welcomed");
        QSettings().setValue("runsFolder", m_dir.filePath("welcome-runs"));
        MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.docks()->showTab(Tab::Train);
        const auto click = [&w](const char* name) {
            QDialog* box = w.showWelcome();
            if (!box || !box->isVisible()) return false;
            auto* button = box->findChild<QCommandLinkButton*>(name);
            if (!button || button->description().isEmpty()) return false;
            QTest::mouseClick(button, Qt::LeftButton);
            return !box->isVisible();
        };
        QVERIFY(QSettings().value("welcomed").toBool() == false);
        QDialog* box = w.showWelcome();
        QVERIFY(QSettings().value("welcomed").toBool());
        QCOMPARE(box->findChildren<QCommandLinkButton*>().size(), 3);
        if (qEnvironmentVariableIsSet("PARROT_SHOTS")) box->grab().save(QDir(qEnvironmentVariable("PARROT_SHOTS")).filePath("welcome.png"));
        box->close();

        QVERIFY(click("welcomeExplore"));
        QCOMPARE(w.docks()->currentPanelName(), QString("Explore"));

        QVERIFY(click("welcomeTrain"));
        QCOMPARE(w.docks()->currentPanelName(), QString("Train"));
        QCOMPARE(w.settings()->config().name, QString("copy-hard-alibi"));
        QTRY_VERIFY_WITH_TIMEOUT(w.train()->isTraining(), 10000);
        w.trainPanel()->stopButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(!w.train()->isTraining(), 30000);

        w.experiments()->setExecutable(PARROT_EXE);  // the runs are this app's train processes, not this test's
        QVERIFY(click("welcomeFinding"));
        QCOMPARE(w.docks()->currentPanelName(), QString("Experiments"));
        QCOMPARE(w.experiments()->presetBox()->currentText(), QString("length-generalisation"));
        QVERIFY(w.experiments()->isRunning());
        w.experiments()->cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!w.experiments()->isRunning(), 30000);
    }

    // File → Open reads off the GUI thread with a busy bar; Esc cancels and keeps the current model.
    void openingACheckpointRunsOffTheGuiThread()
    {
        const QString file = path("tiny.safetensors");
        Model::create(test::tinyConfig()).save(file);
        MainWindow w;
        w.show();
        QSignalSpy opened(w.train(), &TrainController::checkpointOpened);
        w.train()->openCheckpointInBackground(file);
        QVERIFY(w.train()->isOpening());
        QVERIFY(w.trainPanel()->stopButton()->isEnabled());
        QVERIFY(opened.wait(30000));
        QCOMPARE(opened.last().first().toBool(), true);
        QVERIFY(!w.train()->model().isNull());
        QCOMPARE(w.train()->model().config().name, test::tinyConfig().name);
        // cancelled: the model opened before stays
        const Model before = w.train()->model();
        w.train()->openCheckpointInBackground(file);
        QTest::mouseClick(w.trainPanel()->stopButton(), Qt::LeftButton);
        QVERIFY(opened.wait(30000));
        QCOMPARE(opened.last().first().toBool(), false);
        QCOMPARE(w.train()->model().summary(), before.summary());
        // a broken file: a message, the model kept
        test::writeAll(path("broken.safetensors"), "not a checkpoint at all");
        w.train()->openCheckpointInBackground(path("broken.safetensors"));
        QVERIFY(opened.wait(30000));
        QCOMPARE(opened.last().first().toBool(), false);
        QVERIFY(!w.train()->model().isNull());
    }

    void themesFollowTheChoice()
    {
        applyTheme("dark");
        QVERIFY(darkPlots());
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 128);
        QCustomPlot plot;
        plot.show();  // polished: takes the theme
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        QVERIFY(plot.xAxis->tickLabelColor().lightness() > 128);
        applyTheme("light");
        QVERIFY(!darkPlots());
        QCOMPARE(plot.xAxis->tickLabelColor(), QColor(Qt::black));
        applyTheme("system");
    }

    // The look-inside figures from the command line (a heatmap with its colour bar and token
    // labels; the construction's curves and legend): at 192 and 288 DPI the 96-DPI drawing finer,
    // and no text of their SVG outside the figure.
    void inspectFiguresAtAnyDpi()
    {
        const QList<QStringList> cases{
            {"inspect", "--bundled", "mamba", "--length", "12", "--seed", "1", "--figure", "implicit"},
            {"inspect", "--construction", "3", "--figure", "construction", "--lengths", "10,50", "--samples", "4"}};
        for (const QStringList& base : cases) {
            const QString name = base[base.indexOf("--figure") + 1];
            QImage one;
            for (const int dpi : {96, 192, 288}) {
                const QString out = path(QString("%1-%2.png").arg(name).arg(dpi));
                const auto r = test::runCli(base + QStringList{"--out", out, "--size", "450x300", "--dpi", QString::number(dpi)});
                QVERIFY2(r.code == 0, qPrintable(name + ": " + r.err));
                const QImage image(out);
                if (dpi == 96) {
                    one = image;
                    QCOMPARE(one.size(), QSize(600, 400));
                    continue;
                }
                QCOMPARE(image.size(), one.size() * (dpi / 96));
                const Difference d = difference(one, image.scaled(one.size(), Qt::IgnoreAspectRatio, Qt::SmoothTransformation));
                QVERIFY2(d.mean < 4 && d.worstBlock < 40,
                         qPrintable(QString("%1 at %2 dpi shrunk against 96: mean %3, worst block %4").arg(name).arg(dpi).arg(d.mean).arg(d.worstBlock)));
            }
            const QString svg = path(name + ".svg");
            const auto r = test::runCli(base + QStringList{"--out", svg, "--size", "450x300"});
            QVERIFY2(r.code == 0, qPrintable(name + ": " + r.err));
            QVERIFY2(textsOutside(svg).isEmpty(), qPrintable(name + ": " + textsOutside(svg).join("; ")));
        }
    }

    // `export --figure mechanisms`: one run's loss above its heads' lookup scores in every format,
    // its texts inside the figure; a run without mechanisms.csv (scoring off) refused with a line
    // naming the file, and still listed by `runs`; a folder of several runs refused.
    void mechanismsFigure()
    {
        const QString runs = path("mechanism-runs"), scored = runs + "/scored", off = runs + "/off";
        const QStringList small{"--steps", "40", "--set", "model.d_model=32", "--set", "model.heads=4", "--set", "model.num_masked_heads=2",
                                "--set", "train.eval_every=0", "--set", "task.eval_samples=8", "--set", "train.mechanism_every=10"};
        auto r = test::runCli(QStringList{"train", "--preset", "copy-tiny", "--out", scored} + small);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        for (const QString ext : {"png", "pdf", "svg", "csv"}) {
            const QString out = path("mechanisms." + ext);
            r = test::runCli({"export", "--run", scored, "--figure", "mechanisms", "--out", out, "--size", "600x500", "--dpi", "96"});
            QVERIFY2(r.code == 0, qPrintable(ext + ": " + r.err));
            QVERIFY(QFileInfo(out).size() > 0);
            if (ext == "png") checkPng(out, 800, 667);
            if (ext == "pdf") checkPdf(out, 600, 500);
            if (ext == "svg") {
                checkSvg(out, 600, 500, {"training loss", "lookup score", "step", "the other 7 heads", "previous-token"});
                QVERIFY2(textsOutside(out).isEmpty(), qPrintable(textsOutside(out).join("; ")));
            }
            if (ext == "csv") {
                const QStringList rows = readText(out).split('\n', Qt::SkipEmptyParts);
                QCOMPARE(rows.first(), QString("series,x,y,value"));
                QVERIFY(rows.filter(QRegularExpression("^\"?training loss")).size() >= 4);       // the loss every 10 steps
                QVERIFY(rows.filter(QRegularExpression("^\"?L[01] H[0-3]")).size() >= 5 * 8);  // each head at steps 0-40
            }
        }
        r = test::runCli(QStringList{"train", "--preset", "copy-tiny", "--out", off} + small.mid(0, small.size() - 2) +
                         QStringList{"--set", "train.mechanism_every=0"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        test::expectCliError(test::runCli({"export", "--run", off, "--figure", "mechanisms", "--out", path("off.png")}),
                             "has no mechanisms.csv");
        test::expectCliError(test::runCli({"export", "--run", runs, "--figure", "mechanisms", "--out", path("both.png")}),
                             "draws one run");
        r = test::runCli({"runs", "--dir", runs});
        QVERIFY2(r.code == 0 && r.out.contains("off") && r.out.contains("scored"), qPrintable(r.out + r.err));
        r = test::runCli({"export", "--run", off, "--figure", "loss", "--out", path("off-loss.png")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
    }

    // `parrotscope export` on a run folder: each figure in each format, and its refusals.
    void exportCommandWritesEveryFigure()
    {
        const QString run = path("run");
        auto r = test::runCli({"train", "--preset", "copy-tiny", "--out", run, "--steps", "20", "--set", "model.d_model=32", "--set",
                               "model.heads=4", "--set", "model.num_masked_heads=2", "--set", "train.eval_every=10", "--set",
                               "task.eval_samples=8", "--set", "train.eval_samples=8"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        for (const QString figure : {"loss", "accuracy", "efficiency", "panel"})
            for (const QString ext : {"png", "pdf", "svg", "csv"}) {
                const QString out = path(figure + "." + ext);
                r = test::runCli({"export", "--run", run, "--figure", figure, "--out", out, "--size", "600x400", "--dpi", "96",
                                  "--font-size", "11", "--line-width", "1.5"});
                QVERIFY2(r.code == 0, qPrintable(figure + "." + ext + ": " + r.err));
                if (ext == "png") checkPng(out, 800, 533);  // 600 x 400 points at 96 dpi
                if (ext == "pdf") checkPdf(out, 600, 400);
                if (ext == "svg") {
                    checkSvg(out, 600, 400, {figure == "loss" ? "training step" : "answer accuracy"});
                    if (figure == "accuracy") checkSvg(out, 600, 400, {"training range"});  // the shaded band is named
                    const QStringList outside = textsOutside(out);
                    QVERIFY2(outside.isEmpty(), qPrintable(figure + ": " + outside.join("; ")));
                }
                if (ext == "csv") {
                    const QStringList rows = readText(out).split('\n', Qt::SkipEmptyParts);
                    QVERIFY(rows.size() > 1);
                    QCOMPARE(rows.first(), figure == "panel" ? QString("plot,series,x,y,value") : QString("series,x,y,std"));
                }
            }
        r = test::runCli({"export", "--run", run, "--figure", "capacity", "--out", path("capacity.svg"), "--size", "500x320"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(textsOutside(path("capacity.svg")).isEmpty(), qPrintable(textsOutside(path("capacity.svg")).join("; ")));
        // the same figures drawn here: counting axes in whole numbers, legends off the data
        const std::vector<RunRecord> runs{loadRun(run)};
        for (const QString figure : {"length", "efficiency", "loss", "capacity"}) {
            QCustomPlot plot;
            plot.resize(layoutSize(600, 400));
            drawComparison(plot, runs, figure, {.measure = [](const ExperimentConfig& c) { return Model::measure(c); }});
            plot.replot();
            if (figure != "capacity") QVERIFY2(integerTicks(*plot.xAxis), qPrintable(figure + ": " + tickText(*plot.xAxis)));
            QVERIFY2(pointsUnderLegend(plot).isEmpty(), qPrintable(figure + ": " + pointsUnderLegend(plot).join("; ")));
        }
        r = test::runCli({"export", "--run", run, "--figure", "table", "--out", path("table.csv")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(readText(path("table.csv")).startsWith("task,model,grade,value,runs,detail\ncopy,"));
        test::expectCliError(test::runCli({"export", "--run", run, "--figure", "table", "--out", path("table.png")}), "exports as CSV");
        test::expectCliError(test::runCli({"export", "--run", run, "--figure", "heads", "--out", path("x.png")}), "--figure: expected one of");
        test::expectCliError(test::runCli({"export", "--run", path("nowhere"), "--figure", "loss", "--out", path("x.png")}), "no such run folder");
        test::expectCliError(test::runCli({"export", "--run", run, "--figure", "loss", "--out", path("x.png"), "--dpi", "5000"}), "--dpi");
    }
};

QTEST_MAIN(TestExport)
#include "tst_export.moc"
