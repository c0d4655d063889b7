// The causal tests' figures (core/analysis/causal.h), drawn without a window for the command line
// and inside the Explore tab's dialogs:
//   head importance  layer x head, each cell the drop in whole answers right when that head
//                    alone is switched off (a diverging scale: red hurts, blue helps), the
//                    lookup heads' cells marked with their order
//   state sweep      copy accuracy against string length (log axis) for each state setting,
//                    and beside each, dashed in its colour, the copy paper's bound for that
//                    state: at most 2^m of the |V|^L strings copied, so accuracy <= 2^(m - L log2|V|)
#pragma once

#include "core/analysis/causal.h"
#include "figures/export.h"

class QCustomPlot;

namespace parrot {

// Both draw on `plot` (replacing what it showed) and return the plotted data as CSV.
QString drawHeadImportance(QCustomPlot& plot, const HeadImportance& importance);
QString drawStateSweep(QCustomPlot& plot, const StateSweep& sweep);
// Draw and write to .png/.pdf/.svg/.csv; throws parrot::Error for a file that cannot be written.
void renderHeadImportance(const HeadImportance& importance, const QString& outFile, int width, int height, const ExportOptions& style = {});
void renderStateSweep(const StateSweep& sweep, const QString& outFile, int width, int height, const ExportOptions& style = {});

}  // namespace parrot
