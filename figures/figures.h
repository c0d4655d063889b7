// Comparison figures of finished runs, rendered without a window: the same overlays the run
// views draw, as PNG, PDF, SVG or the plotted data as CSV (`parrotscope compare`).
//   length      answer accuracy against length (final evaluations), mean +- std over seeds,
//               the training range shaded
//   efficiency  accuracy at task.max_len against examples seen, over training
//   efficiency-time  the same against the wall time of training (mean over seeds)
//   icl         in-context error against examples (final evaluations), with the baselines
//   capacity    the copy paper's bound: bits of the string against each model's state in bits,
//               the crossings, the longest length each copied, and the copy-error bound
//   frontier    associative-recall accuracy at the largest number of pairs evaluated against
//               each model's state in bits (Zoology / Based, Arora et al.), with the bound of a
//               state too small to hold every value
// Runs that differ only in their seed are one series; one colour per architecture.
#pragma once

#include "base/io/runfolder.h"
#include "figures/export.h"

#include <QColor>
#include <QString>

#include <functional>
#include <vector>

class QCustomPlot;

namespace parrot {

QColor architectureColour(const QString& architecture);

struct FigureOptions {
    bool logX = false;  // logarithmic axes, from just below the smallest positive value drawn
    bool logY = false;
    int precision = 8;  // capacity, frontier: the effective bits per state float of the dashed lines
    // capacity, frontier: the size of the model a run's config describes, which the caller
    // measures (Model::measure); the figures only draw it
    std::function<ModelSize(const ExperimentConfig&)> measure;
};

// Draws the figure on `plot` (replacing what it showed) and returns the plotted data as CSV.
// Throws parrot::Error for an unknown figure or runs without the data the figure needs.
QString drawComparison(QCustomPlot& plot, const std::vector<RunRecord>& runs, const QString& figure,
                       const FigureOptions& options = {});

// Throws parrot::Error for an unknown figure or extension, runs without the data the figure
// needs, or a file that cannot be written.
void renderComparison(const std::vector<RunRecord>& runs, const QString& figure, const QString& outFile,
                      int width = 800, int height = 500, const FigureOptions& options = {}, const ExportOptions& style = {});

// Throws parrot::Error unless the file is .png/.pdf/.svg/.csv and the size 100..10000 each way.
void checkFigureFile(const QString& outFile, int width, int height);
// Writes a drawn plot to PNG, PDF or SVG (figures/export.h, with `style`'s DPI, font size and line
// width), or `csv`, the figure's own table, to a .csv file, by the file's extension. Throws
// parrot::Error when it cannot be written.
void savePlot(QCustomPlot& plot, const QString& outFile, int width, int height, const QString& title, const QString& csv,
              const ExportOptions& style = {});

}  // namespace parrot
