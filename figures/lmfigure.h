// The copy paper's figure 1 shape for pretrained language models: accuracy of each loaded model
// against the test's size (phone-book entries or text tokens), binomial error bars; drawn by
// `parrotscope lm-eval --out` and the Pretrained tab alike.
#pragma once

#include "base/types.h"
#include "figures/export.h"

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
// The copy paper's point drawn: each model at (its perplexity on a text, its accuracy on a
// retrieval test at one size). A lower perplexity does not buy retrieval: Mamba sits left of
// Pythia and below it. Returns the data as CSV (model,architecture,perplexity,loss,size,accuracy,stderr).
struct LossRetrievalPoint {
    QString name, architecture;
    double perplexity = 0, loss = 0;
    double accuracy = 0, stdErr = 0;  // the test's own measure at `size` (F1 for question answering)
};
QString drawLossVsRetrieval(QCustomPlot& plot, const std::vector<LossRetrievalPoint>& points, const QString& testId, int size);
void renderLossVsRetrieval(const std::vector<LossRetrievalPoint>& points, const QString& testId, int size, const QString& outFile,
                           int width = 800, int height = 500, const ExportOptions& style = {});
// The point of `series` at `size` (the test's own measure and its error), or false when it has none.
bool measureAt(const LmSeries& series, const QString& testId, int size, double* value, double* stdErr);
// The largest size at which every series has a point; 0 when there is none.
int largestCommonSize(const std::vector<LmSeries>& series, const QString& testId);
// Writes the figure to PNG, PDF, SVG or CSV by the file's extension. Throws parrot::Error.
void renderLmCurves(const std::vector<LmSeries>& series, const QString& testId, const QString& outFile, int width = 800,
                    int height = 500, const ExportOptions& style = {});

}  // namespace parrot
