// The figures, written once: what `--figure` accepts in compare, export and inspect, what a
// sweep's "figure" may name, and what the Experiments tab offers. Drawing is the figure code's
// (figures/figures.cpp and friends); this table says which figures exist, where each may be asked
// for and what data it needs. Plain C++, no torch.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

// Where a figure may be asked for; a figure is in one or more.
enum FigureScope : unsigned {
    CompareFigure = 1,   // `compare --runs ... --figure`: runs overlaid
    ExportFigure = 2,    // `export --run DIR --figure`
    InspectFigure = 4,   // `inspect ... --figure`: one model on one input
    SweepFigure = 8,     // a sweep's "figure" and the Experiments tab's picker
    LmEvalFigure = 16,   // `lm-eval ... --figure` and the Pretrained tab: pretrained language models
};

struct FigureKind {
    QString id;
    QString title;  // as the Experiments tab's picker and the figure's heading say it
    QString needs;  // what runs or input it draws from
    unsigned scopes = 0;
};

const std::vector<FigureKind>& figureCatalog();
const FigureKind* findFigure(const QString& id);  // nullptr when there is none

// The look-inside views' ids, as their catalogue entries spell them: code that picks a view
// compares with these, never with a string of its own.
namespace views {
inline const QString attention = QStringLiteral("attention");  // attention heads (or effective attention)
inline const QString implicit = QStringLiteral("implicit");    // a selective scan's implicit attention
inline const QString state = QStringLiteral("state");          // hidden-state norms
inline const QString delta = QStringLiteral("delta");          // selection step sizes
}  // namespace views
// The ids of the figures in `scope`, in catalogue order.
QStringList figureIds(FigureScope scope);
// Throws parrot::Error "<where>: expected one of ..., got "<id>"" unless `id` is a figure of `scope`.
void checkFigure(const QString& id, FigureScope scope, const QString& where = "--figure");

}  // namespace parrot
