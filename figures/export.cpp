#include "figures/export.h"

#include "base/error.h"
#include "base/io/textfile.h"

#include <QApplication>
#include <QBuffer>
#include <QEventLoop>
#include <QFileInfo>
#include <QScreen>
#include <QPageSize>
#include <QPdfWriter>
#include <QSvgGenerator>
#include <QThread>
#include <QWidget>
#include <qcustomplot.h>

#include <cmath>
#include <exception>
#include <functional>

namespace parrot {

namespace {

bool g_dark = false;

// Every axis of a plot: its axis rects' and its colour scales'.
QList<QCPAxis*> allAxes(QCustomPlot& plot)
{
    QList<QCPAxis*> axes;
    for (QCPAxisRect* r : plot.axisRects()) axes += r->axes();
    for (QCPLayoutElement* e : plot.plotLayout()->elements(true))
        if (auto* s = qobject_cast<QCPColorScale*>(e)) axes << s->axis();
    return axes;
}

QList<QCPTextElement*> textElements(QCustomPlot& plot)
{
    QList<QCPTextElement*> out;
    for (QCPLayoutElement* e : plot.plotLayout()->elements(true))
        if (auto* t = qobject_cast<QCPTextElement*>(e)) out << t;
    return out;
}

QFont sized(QFont f, double pt)
{
    if (pt > 0) f.setPointSizeF(pt);
    return f;
}

// Fonts, line widths and theme changed for one export, and put back afterwards, so the view on
// screen never changes.
class ExportStyle {
public:
    ExportStyle(QCustomPlot& plot, const ExportOptions& o) : m_plot(plot)
    {
        if (o.white) applyPlotTheme(plot, false);
        for (QCPAxis* a : allAxes(plot)) {
            m_axes.push_back({a, a->labelFont(), a->tickLabelFont()});
            a->setLabelFont(sized(a->labelFont(), o.fontPt));
            a->setTickLabelFont(sized(a->tickLabelFont(), o.fontPt));
        }
        for (QCPTextElement* t : textElements(plot)) {
            m_texts.push_back({t, t->font()});
            t->setFont(sized(t->font(), o.fontPt * 1.15));  // titles a little larger than the rest
        }
        if (plot.legend) {
            m_legendVisible = plot.legend->visible();
            if (plot.legend->itemCount() == 0) plot.legend->setVisible(false);  // an empty box means nothing on paper
            m_legendFont = plot.legend->font();
            plot.legend->setFont(sized(plot.legend->font(), o.fontPt));
            for (int i = 0; i < plot.legend->itemCount(); ++i)
                if (auto* item = plot.legend->item(i)) {
                    m_legendItems.push_back({item, item->font()});
                    item->setFont(sized(item->font(), o.fontPt));
                }
        }
        for (int i = 0; i < plot.itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(plot.item(i))) {
                m_itemTexts.push_back({t, t->font()});
                t->setFont(sized(t->font(), o.fontPt));
            }
        if (o.lineWidth > 0)
            for (int i = 0; i < plot.plottableCount(); ++i) {
                QCPAbstractPlottable* p = plot.plottable(i);
                if (!qobject_cast<QCPGraph*>(p) && !qobject_cast<QCPCurve*>(p)) continue;
                if (p->pen().style() == Qt::NoPen) continue;
                m_pens.push_back({p, p->pen()});
                QPen pen = p->pen();
                pen.setWidthF(o.lineWidth * layoutPixelsPerPoint());
                p->setPen(pen);
            }
    }
    ~ExportStyle()
    {
        applyPlotTheme(m_plot, g_dark);
        for (const auto& a : m_axes) {
            a.axis->setLabelFont(a.label);
            a.axis->setTickLabelFont(a.ticks);
        }
        for (const auto& [t, f] : m_texts) t->setFont(f);
        if (m_plot.legend) {
            m_plot.legend->setFont(m_legendFont);
            m_plot.legend->setVisible(m_legendVisible);
        }
        for (const auto& [item, f] : m_legendItems) item->setFont(f);
        for (const auto& [t, f] : m_itemTexts) t->setFont(f);
        for (const auto& [p, pen] : m_pens) p->setPen(pen);
        m_plot.replot(QCustomPlot::rpQueuedReplot);
    }

private:
    struct AxisFonts {
        QCPAxis* axis;
        QFont label, ticks;
    };
    QCustomPlot& m_plot;
    std::vector<AxisFonts> m_axes;
    std::vector<std::pair<QCPTextElement*, QFont>> m_texts;
    QFont m_legendFont;
    bool m_legendVisible = false;
    std::vector<std::pair<QCPAbstractLegendItem*, QFont>> m_legendItems;
    std::vector<std::pair<QCPItemText*, QFont>> m_itemTexts;
    std::vector<std::pair<QCPAbstractPlottable*, QPen>> m_pens;
};

QString number(double v) { return std::isfinite(v) ? QString::number(v, 'g', 9) : QString(); }

// Draws the plots onto a painter whose coordinates are layout pixels (figureLayoutDpi); each
// plot is laid out at its rectangle's size in those pixels, with the fonts Qt measures at that DPI.
bool paintPlots(QCPPainter& painter, const std::vector<PlacedPlot>& plots, const ExportOptions& o,
                const std::function<bool(int, int)>& progress)
{
    painter.setMode(QCPPainter::pmNonCosmetic);  // hairlines scale with the figure instead of staying one device pixel
    if (o.white) painter.fillRect(QRect(QPoint(0, 0), layoutSize(o.width, o.height)), Qt::white);
    int done = 0;
    for (const PlacedPlot& p : plots) {
        {
            ExportStyle style(*p.plot, o);  // restored before `progress` lets events (and redraws) run
            painter.save();
            const QSize at = layoutSize(p.rect.x(), p.rect.y()), size = layoutSize(p.rect.width(), p.rect.height());
            painter.translate(at.width(), at.height());
            p.plot->toPainter(&painter, size.width(), size.height());
            painter.restore();
        }
        if (progress && !progress(++done, int(plots.size()))) return false;
    }
    return true;
}

[[noreturn]] void cannotWrite(const QString& path, const QString& why = {})
{
    throw Error(QString("%1: cannot write the figure%2").arg(path, why.isEmpty() ? QString() : " (" + why + ")"));
}

}  // namespace

void checkExport(const QString& path, const ExportOptions& o)
{
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext != "png" && ext != "pdf" && ext != "svg" && ext != "csv")
        throw Error(QString("%1: expected a .png, .pdf, .svg or .csv file").arg(path));
    if (o.width < 100 || o.height < 100 || o.width > 10000 || o.height > 10000)
        throw Error(QString("figure size %1 x %2: expected 100..10000 points each way").arg(o.width).arg(o.height));
    if (o.dpi < 36 || o.dpi > 1200) throw Error(QString("dpi %1: expected 36..1200").arg(o.dpi));
    if (o.fontPt < 0 || o.fontPt > 72) throw Error(QString("font size %1: expected 1..72 points (0 keeps the view's)").arg(o.fontPt));
    if (o.lineWidth < 0 || o.lineWidth > 20) throw Error(QString("line width %1: expected up to 20 points (0 keeps the view's)").arg(o.lineWidth));
    if (ext == "png" && double(imageSize(o).width()) * imageSize(o).height() > 400e6)
        throw Error(QString("%1 x %2 at %3 dpi is over 400 million pixels: lower the DPI or the size").arg(o.width).arg(o.height).arg(o.dpi));
    const QFileInfo dir(QFileInfo(path).absolutePath());
    if (!dir.isDir()) throw Error(QString("%1: the folder %2 does not exist").arg(path, dir.filePath()));
}

QString plotName(const QCustomPlot& plot)
{
    if (!plot.objectName().isEmpty()) return plot.objectName();
    for (QCPLayoutElement* e : plot.plotLayout()->elements(true))
        if (auto* t = qobject_cast<QCPTextElement*>(e))
            if (!t->text().isEmpty()) return t->text().section('\n', 0, 0);
    return "plot";
}

QString plotCsv(QCustomPlot& plot)
{
    QString csv = "series,x,y,value\n";
    for (int i = 0; i < plot.plottableCount(); ++i) {
        QCPAbstractPlottable* p = plot.plottable(i);
        if (!p->visible()) continue;
        const QString name = csvField(p->name().isEmpty() ? QString("series %1").arg(i + 1) : p->name().simplified());  // a legend's line breaks are spaces
        if (auto* g = qobject_cast<QCPGraph*>(p)) {
            for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
                csv += QString("%1,%2,%3,\n").arg(name, number(it->key), number(it->value));
        } else if (auto* c = qobject_cast<QCPCurve*>(p)) {
            for (auto it = c->data()->constBegin(); it != c->data()->constEnd(); ++it)
                csv += QString("%1,%2,%3,\n").arg(name, number(it->key), number(it->value));
        } else if (auto* b = qobject_cast<QCPBars*>(p)) {
            for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it)
                csv += QString("%1,%2,%3,\n").arg(name, number(it->key), number(it->value));
        } else if (auto* m = qobject_cast<QCPColorMap*>(p)) {
            QCPColorMapData* d = m->data();
            for (int y = 0; y < d->valueSize(); ++y)
                for (int x = 0; x < d->keySize(); ++x) {
                    double key = 0, value = 0;
                    d->cellToCoord(x, y, &key, &value);
                    csv += QString("%1,%2,%3,%4\n").arg(name, number(key), number(value), number(d->cell(x, y)));
                }
        }
    }
    return csv;
}

DrawnFigure drawFigure(const std::vector<PlacedPlot>& plots, const QString& path, const ExportOptions& o, const QString& title,
                       const std::function<bool(int, int)>& progress)
{
    DrawnFigure f;
    f.path = path;
    checkExport(path, o);
    if (plots.empty()) throw Error(QString("%1: nothing to export (no plot is visible)").arg(path));
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == "csv") {
        QString csv = plots.size() > 1 ? "plot,series,x,y,value\n" : QString();
        for (size_t i = 0; i < plots.size(); ++i) {
            const QString body = plotCsv(*plots[i].plot);
            if (plots.size() == 1) {
                csv = body;
                break;
            }
            const QString name = csvField(plots[i].name.isEmpty() ? plotName(*plots[i].plot) : plots[i].name);
            for (const QString& line : body.split('\n', Qt::SkipEmptyParts).mid(1)) csv += name + "," + line + "\n";
            if (progress && !progress(int(i) + 1, int(plots.size()))) {
                f.complete = false;
                return f;
            }
        }
        f.csv = csv;
        f.kind = DrawnFigure::Kind::Csv;
        return f;
    }
    // Every format is drawn in memory; writeFigure puts it in place in one step (writeFileAtomically),
    // so a cancelled or failed export leaves what was there.
    bool complete = false;
    if (ext == "png") {
        f.kind = DrawnFigure::Kind::Png;
        f.image = renderImage(plots, o, progress, &complete);
        if (f.image.isNull()) cannotWrite(path, "not enough memory for the image");
    } else {
        f.kind = DrawnFigure::Kind::Vector;
        // vector formats: drawn as vectors, without QCustomPlot's cached pixmaps
        auto paintVector = [&](QPaintDevice& device) {
            QCPPainter painter;
            if (!painter.begin(&device)) cannotWrite(path);
            painter.setMode(QCPPainter::pmVectorized);
            painter.setMode(QCPPainter::pmNoCaching);
            complete = paintPlots(painter, plots, o, progress);
            painter.end();
        };
        const QString shownTitle = title.isEmpty() ? QString("Parrotscope figure") : title;
        // vector devices at the layout DPI: a point of the page is a point of the figure
        const int dpi = figureLayoutDpi();
        QBuffer buffer(&f.bytes);
        buffer.open(QIODevice::WriteOnly);
        if (ext == "pdf") {
            QPdfWriter pdf(&buffer);
            pdf.setCreator("Parrotscope");
            pdf.setTitle(shownTitle);
            pdf.setResolution(dpi);
            pdf.setPageSize(QPageSize(QSizeF(o.width, o.height), QPageSize::Point));
            pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
            paintVector(pdf);
        } else {
            const QSize size = layoutSize(o.width, o.height);
            QSvgGenerator svg;
            svg.setOutputDevice(&buffer);
            svg.setResolution(dpi);
            svg.setSize(size);
            svg.setViewBox(QRect(QPoint(0, 0), size));
            svg.setTitle(shownTitle);
            svg.setDescription("Written by Parrotscope");
            paintVector(svg);
        }
    }
    f.complete = complete;
    return f;
}

void writeFigure(const DrawnFigure& f)
{
    if (!f.complete) return;
    if (f.kind == DrawnFigure::Kind::Csv) return writeTextFile(f.path, f.csv, "the figure");
    QByteArray png;
    if (f.kind == DrawnFigure::Kind::Png) {
        QBuffer buffer(&png);
        buffer.open(QIODevice::WriteOnly);
        if (!f.image.save(&buffer, "PNG")) cannotWrite(f.path, "the image could not be encoded");
    }
    writeFileAtomically(f.path, f.kind == DrawnFigure::Kind::Png ? png : f.bytes, "the figure");
}

void exportPlots(const std::vector<PlacedPlot>& plots, const QString& path, const ExportOptions& o, const QString& title,
                 const std::function<bool(int, int)>& progress)
{
    writeFigure(drawFigure(plots, path, o, title, progress));
}

void exportPlot(QCustomPlot& plot, const QString& path, const ExportOptions& o, const QString& title)
{
    exportPlots({{&plot, QRect(0, 0, o.width, o.height), plotName(plot)}}, path, o, title.isEmpty() ? plotName(plot) : title);
}

std::vector<PlacedPlot> panelPlots(QWidget* panel, int width, int height)
{
    std::vector<PlacedPlot> out;
    if (!panel) return out;
    QRect bounds;
    for (QCustomPlot* p : panel->findChildren<QCustomPlot*>()) {
        if (!p->isVisibleTo(panel) || p->width() < 20 || p->height() < 20) continue;
        const QRect r(p->mapTo(panel, QPoint(0, 0)), p->size());
        bounds = bounds.united(r);
        out.push_back({p, r, plotName(*p)});
    }
    if (out.empty()) return out;
    std::stable_sort(out.begin(), out.end(), [](const PlacedPlot& a, const PlacedPlot& b) {  // reading order: rows (40 px bands), then left to right
        return std::pair(a.rect.top() / 40, a.rect.left()) < std::pair(b.rect.top() / 40, b.rect.left());
    });
    const double sx = double(width) / bounds.width(), sy = double(height) / bounds.height();
    for (PlacedPlot& p : out) {
        const QRect r = p.rect.translated(-bounds.topLeft());
        p.rect = QRect(int(std::lround(r.x() * sx)), int(std::lround(r.y() * sy)), int(std::lround(r.width() * sx)),
                       int(std::lround(r.height() * sy)));
    }
    return out;
}

int figureLayoutDpi()
{
    const QScreen* screen = QGuiApplication::primaryScreen();
    return screen ? int(std::lround(screen->logicalDotsPerInchY())) : 96;
}

double layoutPixelsPerPoint() { return figureLayoutDpi() / 72.0; }

QSize layoutSize(int width, int height)
{
    const double k = layoutPixelsPerPoint();
    return QSize(int(std::lround(width * k)), int(std::lround(height * k)));
}

QSize imageSize(const ExportOptions& o) { return QSize(int(std::lround(o.width * o.dpi / 72.0)), int(std::lround(o.height * o.dpi / 72.0))); }

QImage renderImage(const std::vector<PlacedPlot>& plots, const ExportOptions& o, const std::function<bool(int, int)>& progress,
                   bool* complete)
{
    if (complete) *complete = false;
    const QSize size = imageSize(o);
    if (double(size.width()) * size.height() > 400e6) return {};  // as checkExport: no image over 400 million pixels
    QImage image(size, QImage::Format_ARGB32);
    if (image.isNull()) return image;
    image.fill(o.white ? Qt::white : Qt::transparent);
    // While painting, the image has the layout's DPI, so a font's points become the pixels the
    // layout made room for; the painter's scale alone takes the figure to the asked DPI.
    auto setDpi = [&image](double dpi) {
        image.setDotsPerMeterX(int(std::lround(dpi / 0.0254)));
        image.setDotsPerMeterY(int(std::lround(dpi / 0.0254)));
    };
    const int layoutDpi = figureLayoutDpi();
    setDpi(layoutDpi);
    QCPPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.scale(double(o.dpi) / layoutDpi, double(o.dpi) / layoutDpi);
    const bool done = paintPlots(painter, plots, o, progress);
    painter.end();
    setDpi(o.dpi);
    if (complete) *complete = done;
    return image;
}

QImage plotImage(QCustomPlot& plot, const ExportOptions& o)
{
    return renderImage({{&plot, QRect(0, 0, o.width, o.height), {}}}, o);
}

bool darkPlots() { return g_dark; }

void applyPlotTheme(QCustomPlot& plot, bool dark)
{
    const QColor fg = dark ? QColor(220, 220, 220) : Qt::black, bg = dark ? QColor(37, 37, 38) : Qt::white;
    const QColor grid = dark ? QColor(80, 80, 80) : QColor(200, 200, 200), subGrid = dark ? QColor(55, 55, 55) : QColor(230, 230, 230);
    plot.setBackground(bg);
    for (QCPAxisRect* r : plot.axisRects())  // a filled axis rect (white behind the curves) takes the theme's background
        if (r->backgroundBrush().style() != Qt::NoBrush) r->setBackground(QBrush(bg));
    for (QCPAxis* a : allAxes(plot)) {
        for (auto [get, set] : {std::pair{&QCPAxis::basePen, &QCPAxis::setBasePen}, std::pair{&QCPAxis::tickPen, &QCPAxis::setTickPen},
                                std::pair{&QCPAxis::subTickPen, &QCPAxis::setSubTickPen}}) {
            QPen pen = (a->*get)();
            pen.setColor(fg);
            (a->*set)(pen);
        }
        a->setLabelColor(fg);
        a->setTickLabelColor(fg);
        QPen g = a->grid()->pen();
        if (g.style() != Qt::NoPen) {
            g.setColor(grid);
            a->grid()->setPen(g);
        }
        QPen sg = a->grid()->subGridPen();
        if (sg.style() != Qt::NoPen) {
            sg.setColor(subGrid);
            a->grid()->setSubGridPen(sg);
        }
        QPen z = a->grid()->zeroLinePen();
        if (z.style() != Qt::NoPen) {
            z.setColor(grid);
            a->grid()->setZeroLinePen(z);
        }
    }
    for (QCPTextElement* t : textElements(plot)) t->setTextColor(fg);
    if (plot.legend) {
        plot.legend->setTextColor(fg);
        QColor lb = bg;
        lb.setAlpha(plot.legend->brush().color().alpha() ? plot.legend->brush().color().alpha() : 255);
        plot.legend->setBrush(lb);
        plot.legend->setBorderPen(QPen(dark ? QColor(110, 110, 110) : QColor(160, 160, 160)));
        for (int i = 0; i < plot.legend->itemCount(); ++i)
            if (auto* item = plot.legend->item(i)) item->setTextColor(fg);
    }
    for (int i = 0; i < plot.itemCount(); ++i)
        if (auto* t = qobject_cast<QCPItemText*>(plot.item(i))) t->setColor(fg);
}

void setDarkPlots(bool dark)
{
    g_dark = dark;
    for (QWidget* w : QApplication::allWidgets())
        if (auto* p = qobject_cast<QCustomPlot*>(w)) {
            applyPlotTheme(*p, dark);
            p->replot(QCustomPlot::rpQueuedReplot);
        }
}

namespace {

class ThemeWatcher : public QObject {
public:
    explicit ThemeWatcher(bool followSystem) : m_follow(followSystem) {}
    bool eventFilter(QObject* o, QEvent* e) override
    {
        if (e->type() == QEvent::Polish)
            if (auto* p = qobject_cast<QCustomPlot*>(o)) applyPlotTheme(*p, g_dark);
        if (m_follow && e->type() == QEvent::ApplicationPaletteChange && o == qApp) setDarkPlots(systemIsDark());
        return false;
    }
    static bool systemIsDark() { return QApplication::palette().color(QPalette::Window).lightness() < 128; }

private:
    bool m_follow;
};

}  // namespace

void installPlotTheme(bool followSystem)
{
    static ThemeWatcher* watcher = nullptr;
    if (watcher) {
        qApp->removeEventFilter(watcher);
        delete watcher;
    }
    watcher = new ThemeWatcher(followSystem);
    qApp->installEventFilter(watcher);
    if (followSystem) setDarkPlots(ThemeWatcher::systemIsDark());
}

}  // namespace parrot
