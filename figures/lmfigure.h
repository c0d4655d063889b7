// The copy paper's figure 1 shape for pretrained language models: accuracy of each loaded model
// against the test's size (phone-book entries or text tokens), binomial error bars; drawn by
// `parrotscope lm-eval --out` and the Pretrained tab alike.
#pragma once

#include "figures/export.h"
#include "base/types.h"

#include <QString>

#include <vector>

class QCustomPlot;

namespace parrot {

struct LmSeries {
    QString name;          // e.g. "pythia-160m"
    QString architecture;  // "GPT-NeoX" or "Mamba": the colour family
    LengthCurve curve;
};

// Draws the curves on `plot` (replacing what it showed) and returns them as CSV
// (model,size,accuracy,stderr,token_accuracy,token_stderr).
QString drawLmCurves(QCustomPlot& plot, const std::vector<LmSeries>& series, const QString& testId);
// Writes the figure to PNG, PDF, SVG or CSV by the file's extension. Throws parrot::Error.
void renderLmCurves(const std::vector<LmSeries>& series, const QString& testId, const QString& outFile, int width = 800,
                    int height = 500, const ExportOptions& style = {});

}  // namespace parrot
