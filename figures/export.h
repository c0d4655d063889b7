// Figures for talks and papers: any plot of the app (every view is a QCustomPlot: curves,
// heatmaps with their colour bar, capacity, histograms), or several plots of a panel laid out
// as on screen, written as PNG (a chosen size and DPI), PDF and SVG (vector: text stays text,
// with legend, axis titles and colour bar) or their data as CSV. Exports are white and
// printer-friendly whatever the window's theme; font size and line width can be set for the
// figure without touching the view. Also the plot theme (light / dark) the window uses.
//
// One unit for every format: sizes, font sizes and line widths are points (1/72 inch). A figure
// is laid out once, at the DPI font metrics use (figureLayoutDpi), and only then scaled, so a
// PNG at any DPI is the PDF's drawing in pixels: 720 x 450 pt is 960 x 600 px at 96 DPI and
// 1920 x 1200 px at 192, and a 10 pt label is as tall, in inches, in every format.
#pragma once

#include <QImage>
#include <QRect>
#include <QSize>
#include <QString>

#include <functional>
#include <vector>

class QCustomPlot;
class QWidget;

namespace parrot {

struct ExportOptions {
    int width = 800;          // the figure's size in points (1/72 inch), in every format
    int height = 500;
    int dpi = 192;            // PNG only: pixels per inch; the image is width * dpi / 72 pixels wide
    double fontPt = 0;        // every text of the figure at this size; 0 keeps the view's fonts
    double lineWidth = 0;     // every curve this wide (points); 0 keeps the view's
    bool white = true;        // white background, black axes and text, whatever the window's theme
};

// The DPI figures are laid out at: the one Qt's font metrics use (the primary screen's logical
// DPI; 96 on the offscreen platform), so that the room QCustomPlot makes for a text is the room
// the text takes when drawn.
int figureLayoutDpi();
// Points to layout pixels (figureLayoutDpi / 72), and the pixels a figure of width x height
// points is laid out in (what a plot drawn only for a file is resized to).
double layoutPixelsPerPoint();
QSize layoutSize(int width, int height);
// A PNG's pixels: width x height points at the DPI (width * dpi / 72 wide).
QSize imageSize(const ExportOptions& options);

// A plot placed in a figure of several: its rectangle in the figure's coordinates (points).
struct PlacedPlot {
    QCustomPlot* plot = nullptr;
    QRect rect;
    QString name;
};

// Throws parrot::Error unless the extension is png/pdf/svg/csv, the size is 100..10000 points
// each way and the DPI 36..1200.
void checkExport(const QString& path, const ExportOptions& options);

// One plot, by the file's extension. Throws parrot::Error naming the file when it cannot be written.
void exportPlot(QCustomPlot& plot, const QString& path, const ExportOptions& options, const QString& title = {});
// Several plots as one figure of options.width x options.height; CSV: every plot's data with a
// "plot" column. `progress(done, total)` is called after each plot and returns false to cancel
// (the file is then not written).
void exportPlots(const std::vector<PlacedPlot>& plots, const QString& path, const ExportOptions& options, const QString& title = {},
                 const std::function<bool(int, int)>& progress = {});

// The same in two halves, so that a window can keep drawing while the file is written: drawing
// touches the plots and runs on the GUI thread (a PDF or SVG is drawn into memory); writing
// touches no widget and may run on any thread (it encodes a PNG and puts the bytes in place at
// once, through a temporary file renamed over the target, so a write that fails on a read-only,
// full or removed folder throws parrot::Error naming the file and leaves what was there). A
// cancelled drawing (complete false) writes nothing.
struct DrawnFigure {
    enum class Kind { Png, Vector, Csv };
    Kind kind = Kind::Png;
    QString path;     // the target
    QByteArray bytes; // PDF, SVG
    QImage image;     // PNG
    QString csv;      // CSV
    bool complete = true;
};
DrawnFigure drawFigure(const std::vector<PlacedPlot>& plots, const QString& path, const ExportOptions& options,
                       const QString& title = {}, const std::function<bool(int, int)>& progress = {});
void writeFigure(const DrawnFigure& figure);

// The visible plots under `panel`, placed as on screen and scaled to fill width x height.
std::vector<PlacedPlot> panelPlots(QWidget* panel, int width, int height);
// A name for a plot in menus and file names: its object name, else its title, else "plot".
QString plotName(const QCustomPlot& plot);

// Every plottable's data: "series,x,y,value" (graphs, curves and bars: x, y; colour maps: the
// cell's centre x, y and its value). Names with commas or quotes are quoted.
QString plotCsv(QCustomPlot& plot);
// Plots drawn as one image of width x height points at the DPI, i.e. width * dpi / 72 pixels wide,
// with the DPI in the image (PNG export and the clipboard); null when over 400 million pixels or
// out of memory. `complete` is false when `progress` cancelled.
QImage renderImage(const std::vector<PlacedPlot>& plots, const ExportOptions& options,
                   const std::function<bool(int, int)>& progress = {}, bool* complete = nullptr);
QImage plotImage(QCustomPlot& plot, const ExportOptions& options);  // one plot filling the image

// The plots' theme: axes, grid, text and background colours (series colours are the data's and
// stay). Plots take the current theme when they are first shown (installPlotTheme).
bool darkPlots();
void setDarkPlots(bool dark);  // re-themes every plot of the application and replots it
void applyPlotTheme(QCustomPlot& plot, bool dark);
// Watches the application: each QCustomPlot gets the theme when it is polished, and the theme
// follows the system palette when `followSystem` (a dark window palette means dark plots).
void installPlotTheme(bool followSystem);

}  // namespace parrot
