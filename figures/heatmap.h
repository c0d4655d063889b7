// The heatmap every look-inside view draws with: a matrix (rows x columns) on a perceptually
// uniform colour map built from colour stops, token labels on both axes, a colour bar, hover
// read-out, a row locked by clicking, optional marks on top (expected lookup positions), a
// linear or logarithmic colour scale with an adjustable range. Also the thumbnails' images.
#pragma once

#include <QImage>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QCPRange;
class QCPGraph;
class QCPItemRect;
class QCPTextElement;
class QLabel;

namespace parrot {

// Colour maps from their published stops (viridis and magma, van der Walt & Smith, matplotlib),
// linearly interpolated in sRGB between nine stops.
struct Colormap {
    static QStringList names();                   // "viridis", "magma", "grey"
    static QColor at(const QString& name, double t);  // t in [0, 1]; unknown names are viridis
};

struct HeatmapData {
    int rows = 0, cols = 0;
    std::vector<float> values;  // rows x cols, row-major
    QStringList rowLabels, colLabels;  // tokens (or numbers); may be empty
    std::vector<int> markedRows;       // rows marked ✗ left of the map, and labelled first (wrong answers)
    QString title, rowTitle = "query", colTitle = "key";
    float at(int r, int c) const { return values[size_t(r) * cols + c]; }
};

struct HeatmapStyle {
    QString colormap = "viridis";
    bool logScale = false;
    bool autoRange = true;    // min / max of the data (log: the smallest positive value)
    double min = 0, max = 1;  // used when autoRange is false
};

// An image of the matrix, one pixel per cell scaled to `size` (no axes), for thumbnails.
QImage heatmapImage(const HeatmapData& d, const HeatmapStyle& style, QSize size);

// Which of `count` cells along an axis of `length` pixels carry a label, when each label needs
// `spacing` pixels: every cell when they all fit; else first the cells in `keep` (in their order)
// that do not touch one already chosen, then as many evenly spaced others as fit between them
// without touching them; with `roundSteps` (numbered cells),
// those others are the multiples of 1, 2 or 5 times a power of ten that fit.
std::vector<int> labelledCells(int count, double length, double spacing, const std::vector<int>& keep = {}, bool roundSteps = false);

class HeatmapView : public QWidget {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget* parent = nullptr);
    void setData(const HeatmapData& data);
    void setStyle(const HeatmapStyle& style);
    const HeatmapData& data() const { return m_data; }
    const HeatmapStyle& style() const { return m_style; }
    // Marks drawn over cells (row, column): circles for `marks`, crosses for `warnings`.
    void setMarks(const std::vector<std::pair<int, int>>& marks, const std::vector<std::pair<int, int>>& warnings = {});
    const std::vector<std::pair<int, int>>& marks() const { return m_markCells; }
    int lockedRow() const { return m_lockedRow; }
    void lockRow(int row);  // -1 unlocks
    QString readout() const;  // the hover / locked-row line under the map
    QCustomPlot* plot() const { return m_plot; }
    // The displayed range of the colour scale.
    std::pair<double, double> range() const;
    // Keeps a minimum height that gives each of up to `rows` rows half a label's room: cells that
    // can be read and every other row labelled (0: the plot's own minimum). Given more height, the
    // view takes it and labels every row that fits.
    void setReadableRows(int rows);
    // The height the view is to fit in (0: none). When its readable rows need more, it keeps a
    // third of a label's room a row instead (every third row labelled), and needs more only below that.
    void setFitHeight(int height);
    // The cells labelled on each axis now (those in view when zoomed).
    std::vector<int> labelledRows() const;
    std::vector<int> labelledColumns() const;
    // Zoom (Ctrl + wheel, or here) and pan (drag) a long input's map; a new map is shown whole.
    void zoomTo(int firstRow, int lastRow, int firstCol, int lastCol);
    void resetZoom();
    bool zoomed() const;

signals:
    void rowLocked(int row);  // -1 when unlocked
    void hovered(int row, int col);

protected:
    void resizeEvent(QResizeEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    void redraw();
    void keepInside();  // the ranges clamped to the map, then relabelled
    QCPRange fullRange(Qt::Orientation o) const;
    bool relabel();  // whether other cells are labelled than before
    void fitRows();
    void onMove(int x, int y);
    void onClick(int x, int y);
    std::pair<int, int> cellAt(int x, int y) const;

    QCustomPlot* m_plot = nullptr;
    QCPColorMap* m_map = nullptr;
    QCPColorScale* m_scale = nullptr;
    QCPGraph* m_marks = nullptr;
    std::vector<std::pair<int, int>> m_markCells;  // what m_marks draws
    QCPGraph* m_warnings = nullptr;
    QCPGraph* m_wrong = nullptr;  // the ✗ column of the marked rows
    bool gutter() const;          // whether the map has that column
    QCPItemRect* m_lock = nullptr;
    QCPTextElement* m_title = nullptr;
    QLabel* m_readout = nullptr;
    HeatmapData m_data;
    HeatmapStyle m_style;
    int m_lockedRow = -1;
    QString m_hoverText;
    std::vector<int> m_rowCells, m_colCells;  // labelled
    int m_relabelPasses = 0;  // layouts redone for the labels since the data or size changed
    int m_readableRows = 0;
    int m_fitHeight = 0;
    QPoint m_pressedAt;
    bool m_clamping = false;
};

}  // namespace parrot
