// The look-inside views (attention, implicit attention, state norm, step size: see
// ui/panels/explorerpanel.h) as data, the heatmaps an Explore pane shows, and one of them drawn as a
// figure without a window for `parrotscope inspect --figure`, beside the run comparisons of
// figures.h.
#pragma once

#include "base/analysis/lookup.h"
#include "core/analysis/inside.h"
#include "figures/export.h"
#include "figures/heatmap.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

// What one pane shows, as data: the heatmaps of a view of a subject's probes for an input.
struct InsideView {
    QString view;                   // "attention", "implicit", "state", "delta"
    std::vector<HeatmapData> maps;  // one per thumbnail, layer-major
    std::vector<QString> captions;  // "L1 H4", with the head's label for attention
    std::vector<int> layers, heads;  // indices into the probes' maps
    std::vector<int> blocks;         // the model block each map belongs to
    std::vector<bool> highlighted;  // n-gram lookup heads
};
// The views a subject's probes have ("attention" when there are attention maps, and so on).
QStringList viewsOf(const ModelProbes& p);
// Builds a view (throws parrot::Error for a view the probes do not have). `analysis` labels the
// attention heads when given; all-zero heads (the construction's unused ones) are left out. Rows
// `wrong` marks (a wrong answer: InsideSubject::score; empty or of another length: none) are
// marked ✗.
InsideView buildView(const ModelProbes& p, const QString& view, const LookupAnalysis* analysis, const std::vector<bool>& wrong);
QString viewTitle(const QString& view);  // the figure catalogue's title of a view (figurecatalog.h)

// Draws one view of a subject's look at an input (lookInside, core/analysis/inside.h) without a
// window (`parrotscope inspect --figure`): "attention" (a head: by default the strongest n-gram
// lookup head, with the lookup marks; for a model without attention, its implicit attention),
// "implicit", "state", "delta" (a block: by default the last). PNG, PDF, SVG, or the matrix as CSV.
// Returns what was drawn, for people. Throws parrot::Error for a view the look does not have, a
// layer or head out of range, a bad file.
struct InsideFigureRequest {
    QString figure = "attention";
    int layer = -1, head = -1;  // -1: chosen as above
    bool logScale = false;
    int width = 900, height = 800;
    ExportOptions style;  // DPI, font size, line width
};
QString renderInside(const InsideLook& look, const InsideFigureRequest& request, const QString& outFile);

}  // namespace parrot
