#include "base/figurecatalog.h"

#include "base/error.h"

namespace parrot {

const std::vector<FigureKind>& figureCatalog()
{
    static const std::vector<FigureKind> figures{
        {"loss", "Training loss", "runs' metrics.csv (training loss by step)", CompareFigure | ExportFigure},
        {"accuracy", "Accuracy against length", "runs' final evaluations (export's name for the length figure)", ExportFigure},
        {"length", "Accuracy against length", "runs' final evaluations at each length", CompareFigure | ExportFigure | SweepFigure},
        {"efficiency", "Training efficiency (examples)", "runs' evaluations at task.max_len during training",
         CompareFigure | ExportFigure | SweepFigure},
        {"efficiency-time", "Training efficiency (wall time)", "runs' evaluations at task.max_len during training",
         CompareFigure | ExportFigure | SweepFigure},
        {"icl", "In-context error against examples", "in-context regression runs' final error curves",
         CompareFigure | ExportFigure | SweepFigure},
        {"attention", "Attention", "a model with attention heads on one input", InspectFigure},
        {"implicit", "Implicit attention", "a Mamba model on one input", InspectFigure},
        {"state", "State norms", "a recurrent model on one input", InspectFigure},
        {"delta", "Step sizes Δ", "a Mamba model on one input", InspectFigure},
        {"capacity", "State capacity (the copy bound)", "copy runs: each model's state size and longest copied length",
         CompareFigure | ExportFigure | SweepFigure | InspectFigure},
        {"frontier", "Recall against state size", "associative-recall runs evaluated at several numbers of pairs",
         CompareFigure | ExportFigure | SweepFigure},
        {"panel", "Loss beside accuracy", "runs' metrics.csv and final evaluations", ExportFigure},
        {"table", "Results table", "evaluated runs (CSV only)", ExportFigure},
        {"mechanisms", "Mechanisms during training", "one run's mechanisms.csv", ExportFigure},
        {"construction", "The construction against its bound", "the two-layer copy construction (--construction N)", InspectFigure},
        {"curves", "Zero-shot test against size", "pretrained models on one zero-shot test at several sizes", LmEvalFigure},
        {"loss-vs-retrieval", "Perplexity against retrieval",
         "pretrained models: perplexity on a text, and a zero-shot test's accuracy at one size", LmEvalFigure},
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
