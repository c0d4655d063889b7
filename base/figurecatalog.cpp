#include "base/figurecatalog.h"

#include "base/error.h"

namespace parrot {

const std::vector<FigureKind>& figureCatalog()
{
    static const std::vector<FigureKind> figures{
        {.id = "loss", .title = "Training loss", .needs = "runs' metrics.csv (training loss by step)",
         .scopes = CompareFigure | ExportFigure},
        {.id = "accuracy", .title = "Accuracy against length",
         .needs = "runs' final evaluations (export's name for the length figure)", .scopes = ExportFigure},
        {.id = "length", .title = "Accuracy against length", .needs = "runs' final evaluations at each length",
         .scopes = CompareFigure | ExportFigure | SweepFigure},
        {.id = "efficiency", .title = "Training efficiency (examples)",
         .needs = "runs' evaluations at task.max_len during training",
         .scopes = CompareFigure | ExportFigure | SweepFigure},
        {.id = "efficiency-time", .title = "Training efficiency (wall time)",
         .needs = "runs' evaluations at task.max_len during training",
         .scopes = CompareFigure | ExportFigure | SweepFigure},
        {.id = "icl", .title = "In-context error against examples",
         .needs = "in-context regression runs' final error curves",
         .scopes = CompareFigure | ExportFigure | SweepFigure},
        {.id = "attention", .title = "Attention", .needs = "a model with attention heads on one input",
         .scopes = InspectFigure},
        {.id = "implicit", .title = "Implicit attention", .needs = "a Mamba model on one input",
         .scopes = InspectFigure},
        {.id = "state", .title = "State norms", .needs = "a recurrent model on one input", .scopes = InspectFigure},
        {.id = "delta", .title = "Step sizes Δ", .needs = "a Mamba model on one input", .scopes = InspectFigure},
        {.id = "capacity", .title = "State capacity (the copy bound)",
         .needs = "copy runs: each model's state size and longest copied length",
         .scopes = CompareFigure | ExportFigure | SweepFigure | InspectFigure},
        {.id = "frontier", .title = "Recall against state size",
         .needs = "associative-recall runs evaluated at several numbers of pairs",
         .scopes = CompareFigure | ExportFigure | SweepFigure},
        {.id = "panel", .title = "Loss beside accuracy", .needs = "runs' metrics.csv and final evaluations",
         .scopes = ExportFigure},
        {.id = "table", .title = "Results table", .needs = "evaluated runs (CSV only)", .scopes = ExportFigure},
        {.id = "mechanisms", .title = "Mechanisms during training", .needs = "one run's mechanisms.csv",
         .scopes = ExportFigure},
        {.id = "construction", .title = "The construction against its bound",
         .needs = "the two-layer copy construction (--construction N)", .scopes = InspectFigure},
        {.id = "curves", .title = "Zero-shot test against size",
         .needs = "pretrained models on one zero-shot test at several sizes", .scopes = LmEvalFigure},
        {.id = "loss-vs-retrieval", .title = "Perplexity against retrieval",
         .needs = "pretrained models: perplexity on a text, and a zero-shot test's accuracy at one size",
         .scopes = LmEvalFigure},
    };
    return figures;
}

const FigureKind* findFigure(const QString& id)
{
    for (const FigureKind& f : figureCatalog())
        if (f.id == id) return &f;
    return nullptr;
}

QStringList figureIds(FigureScope scope)
{
    QStringList ids;
    for (const FigureKind& f : figureCatalog())
        if (f.scopes & scope) ids << f.id;
    return ids;
}

void checkFigure(const QString& id, FigureScope scope, const QString& where)
{
    const FigureKind* f = findFigure(id);
    if (!f || !(f->scopes & scope))
        throw Error(QString("%1: expected one of %2, got \"%3\"").arg(where, figureIds(scope).join(", "), id));
}

}  // namespace parrot
