#include "ui/panels/thumbnailgrid.h"

#include "base/figurecatalog.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace parrot {

namespace {

// Places widgets in lines of a vertical layout, each line as wide as the room there is.
class Flow {
public:
    Flow(QVBoxLayout* lines, int room, int thumbWidth) : m_lines(lines), m_room(room), m_thumbWidth(thumbWidth) {}
    int used() const { return m_used; }  // of the line being filled
    void place(QWidget* w, bool label)
    {
        // (a button's size hint before it is polished counts a caption it will not show)
        const int width = label ? w->sizeHint().width() + m_lines->spacing() : m_thumbWidth;
        // a label starts a line when it and one thumbnail do not fit on this one
        if (!m_line || (m_used > 0 && m_used + width + (label ? m_thumbWidth : 0) > m_room)) {
            m_line = new QHBoxLayout;
            m_line->setSpacing(m_lines->spacing());
            m_line->addStretch(1);
            m_lines->addLayout(m_line);
            m_used = 0;
        }
        m_line->insertWidget(m_line->count() - 1, w);
        m_used += width;
    }

private:
    QVBoxLayout* m_lines;
    int m_room, m_thumbWidth;
    QHBoxLayout* m_line = nullptr;
    int m_used = 0;
};

}  // namespace

ThumbnailGrid::ThumbnailGrid(QWidget* parent) : QWidget(parent)
{
    // the grid, then a stretch: the thumbnails sit on the left
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    auto* grid = new QWidget(this);
    row->addWidget(grid);
    m_flow = new QVBoxLayout;  // a short pane's lines of thumbnails, in place of the grid
    m_flow->setSpacing(2);
    row->addLayout(m_flow);
    row->addStretch(1);
    m_grid = new QGridLayout(grid);
    m_grid->setContentsMargins(0, 0, 0, 0);
    m_grid->setSpacing(2);
}

void ThumbnailGrid::clear()
{
    for (QToolButton* b : m_buttons) b->deleteLater();
    m_buttons.clear();
    for (QLabel* l : m_rowLabels) l->deleteLater();
    m_rowLabels.clear();
    while (QLayoutItem* line = m_flow->takeAt(0)) delete line;  // the lines' items, not the widgets
}

void ThumbnailGrid::build(const InsideView& view, bool shortPane, int room)
{
    clear();
    const bool attention = view.view == views::attention;
    const bool many = view.maps.size() > size_t(kManyMaps);
    const bool flow = flows(shortPane, view.maps.size());
    const bool compact = many || flow;
    m_side = many ? kSmallThumbnail : flow ? kFlowThumbnail : kThumbnail;
    Flow lines(m_flow, room, m_side + 8 + m_flow->spacing());
    int lastRow = -1;
    for (size_t i = 0; i < view.maps.size(); ++i) {
        const int row = attention ? view.layers[i] : int(i) / 8, col = (attention ? view.heads[i] : int(i) % 8) + (compact ? 1 : 0);
        if (compact && row != lastRow && (attention || !flow)) {
            QLabel* label = rowLabel(view, i, row);
            if (flow) label->setContentsMargins(lines.used() > 0 ? 6 : 0, 0, 2, 0);  // a layer's heads read as a group
            if (flow) lines.place(label, true);
            else m_grid->addWidget(label, row, 0);
            lastRow = row;
        }
        QToolButton* b = thumbnail(view, i, compact);
        if (flow) lines.place(b, false);
        else m_grid->addWidget(b, row, col);
    }
}

QLabel* ThumbnailGrid::rowLabel(const InsideView& view, size_t map, int row)
{
    const bool attention = view.view == views::attention;
    const int lastInRow = attention ? -1 : int(std::min(view.maps.size(), size_t(row + 1) * 8)) - 1;
    auto* label = new QLabel(attention ? tr("L%1").arg(view.blocks[map]) : tr("%1–%2").arg(view.blocks[map]).arg(view.blocks[size_t(lastInRow)]),
                             this);
    label->setToolTip(attention ? tr("layer %1: its heads from 0 on").arg(view.blocks[map]) : tr("blocks"));
    m_rowLabels.push_back(label);
    return label;
}

QToolButton* ThumbnailGrid::thumbnail(const InsideView& view, size_t map, bool compact)
{
    auto* b = new QToolButton(this);
    b->setToolButtonStyle(compact ? Qt::ToolButtonIconOnly : Qt::ToolButtonTextUnderIcon);
    b->setIconSize(QSize(m_side, m_side));
    b->setText(view.captions[map].section('\n', 0, 0));
    b->setToolTip(view.captions[map]);
    b->setCheckable(true);
    b->setAutoRaise(true);
    if (view.highlighted[map]) b->setStyleSheet(QString("QToolButton { border: %1px solid #ff7f0e; }").arg(compact ? 2 : 3));
    connect(b, &QToolButton::clicked, this, [this, map] { emit clicked(int(map)); });
    if (view.view == views::attention) {
        b->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(b, &QToolButton::customContextMenuRequested, this, [this, map, b](const QPoint& at) { emit menuRequested(int(map), b->mapToGlobal(at)); });
    }
    m_buttons.push_back(b);
    return b;
}

void ThumbnailGrid::paint(const InsideView& view, const HeatmapStyle& style, const std::vector<bool>& off, const QString& offNote)
{
    for (size_t i = 0; i < m_buttons.size(); ++i) {
        QImage image = heatmapImage(view.maps[i], style, QSize(m_side, m_side));
        const bool isOff = i < off.size() && off[i];
        if (isOff) {  // a switched-off head: faded, crossed out in red
            image = image.convertToFormat(QImage::Format_Grayscale8).convertToFormat(QImage::Format_ARGB32);
            QPainter paint(&image);
            paint.fillRect(image.rect(), QColor(255, 255, 255, 120));
            paint.setPen(QPen(QColor(214, 39, 40), std::max(2, m_side / 10)));
            paint.drawLine(2, 2, image.width() - 3, image.height() - 3);
            paint.drawLine(2, image.height() - 3, image.width() - 3, 2);
        }
        m_buttons[i]->setIcon(QPixmap::fromImage(image));
        m_buttons[i]->setToolTip(view.captions[i] + (isOff ? offNote : QString()));
    }
}

void ThumbnailGrid::setSelected(int map)
{
    for (size_t i = 0; i < m_buttons.size(); ++i) m_buttons[i]->setChecked(int(i) == map);
}

}  // namespace parrot
