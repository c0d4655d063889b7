// An Explore pane's thumbnails: one per map of the view shown (insidefigure.h's InsideView), to
// pick the map drawn large. Attention: a row per layer, a column per head, n-gram lookup heads
// outlined. Many maps (a pretrained model's 144 heads or 24 blocks): smaller thumbnails without
// captions (they are in the tooltips and the map's title) and a label heading each row, so a
// laptop's half-screen pane holds a row. A short pane (a laptop's screen) drops the captions and
// flows the layers one after the other across the pane's width, each behind its label, for the
// enlarged map's height. The pane decides which (InsidePane::resizeEvent); the grid lays out.
#pragma once

#include "figures/heatmap.h"
#include "figures/insidefigure.h"

#include <QWidget>

#include <vector>

class QGridLayout;
class QLabel;
class QToolButton;
class QVBoxLayout;

namespace parrot {

class ThumbnailGrid : public QWidget {
    Q_OBJECT
public:
    static constexpr int kThumbnail = 32;       // a head's thumbnail, in pixels: two layers of them stay short
    static constexpr int kSmallThumbnail = 22;  // when there are more than kManyMaps maps
    static constexpr int kFlowThumbnail = 26;   // in a short pane
    static constexpr int kManyMaps = 16;

    explicit ThumbnailGrid(QWidget* parent = nullptr);
    // A short pane flows its thumbnails in lines unless there are many.
    static bool flows(bool shortPane, size_t maps) { return shortPane && maps <= kManyMaps; }
    // A thumbnail per map of `view` (their pictures: paint), in a grid, or in lines `room` pixels
    // wide when flows(shortPane, ...).
    void build(const InsideView& view, bool shortPane, int room);
    // Their pictures in `style`; a map `off` (its head switched off) faded and crossed out, `offNote`
    // after its tooltip.
    void paint(const InsideView& view, const HeatmapStyle& style, const std::vector<bool>& off, const QString& offNote);
    void setSelected(int map);
    const std::vector<QToolButton*>& buttons() const { return m_buttons; }  // one per map

signals:
    void clicked(int map);
    // An attention head's context menu, at `globalPos`.
    void menuRequested(int map, const QPoint& globalPos);

private:
    void clear();
    QToolButton* thumbnail(const InsideView& view, size_t map, bool compact);
    QLabel* rowLabel(const InsideView& view, size_t map, int row);

    QGridLayout* m_grid = nullptr;
    QVBoxLayout* m_flow = nullptr;  // a short pane's thumbnails, in lines as wide as the pane
    std::vector<QToolButton*> m_buttons;
    std::vector<QLabel*> m_rowLabels;  // heading each row of small thumbnails
    int m_side = kThumbnail;
};

}  // namespace parrot
