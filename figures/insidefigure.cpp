#include "figures/insidefigure.h"

#include "base/error.h"
#include "base/figurecatalog.h"
#include "figures/figures.h"

#include <qcustomplot.h>
#include "base/tasks/tokentask.h"

#include <algorithm>

namespace parrot {

QStringList viewsOf(const ModelProbes& p)
{
    QStringList v;
    if (p.attention.layers > 0) v << views::attention;
    if (p.implicitAttention.layers > 0) v << views::implicit;
    if (!p.stateNorm.empty()) v << views::state;
    if (!p.delta.empty()) v << views::delta;
    return v;
}

QString viewTitle(const QString& view)
{
    const FigureKind* f = findFigure(view);
    return f ? f->title : view;
}

namespace {

QStringList tokenLabels(const std::vector<QString>& tokens, const std::vector<bool>& wrong = {})
{
    QStringList l;
    for (size_t i = 0; i < tokens.size(); ++i) l << (i < wrong.size() && wrong[i] ? tokens[i] + " ✗" : tokens[i]);
    return l;
}

HeatmapData attentionMap(const AttentionMaps& a, int layer, int head, const QStringList& rows, const QStringList& cols,
                         const std::vector<int>& markedRows)
{
    HeatmapData d;
    d.rows = d.cols = a.length;
    d.values.assign(a.weights.begin() + ptrdiff_t((size_t(layer) * a.heads + head) * a.length * a.length),
                    a.weights.begin() + ptrdiff_t((size_t(layer) * a.heads + head + 1) * a.length * a.length));
    d.rowLabels = rows;
    d.colLabels = cols;
    d.markedRows = markedRows;
    return d;
}

}  // namespace

InsideView buildView(const ModelProbes& p, const QString& view, const LookupAnalysis* analysis, const std::vector<bool>& marked)
{
    if (!viewsOf(p).contains(view)) throw Error(QString("this model has no %1 view").arg(viewTitle(view).toLower()));
    InsideView v;
    v.view = view;
    // marks made for another input (a pane whose input changed while it was loading) mark nothing
    const std::vector<bool> wrong = marked.size() == p.tokens.size() ? marked : std::vector<bool>{};
    const QStringList rows = tokenLabels(p.tokens, wrong), cols = tokenLabels(p.tokens);
    std::vector<int> wrongRows;
    for (size_t i = 0; i < wrong.size(); ++i)
        if (wrong[i]) wrongRows.push_back(int(i));
    if (view == views::attention || view == views::implicit) {
        const AttentionMaps& a = view == views::attention ? p.attention : p.implicitAttention;
        const std::vector<int>& blocks = view == views::attention ? p.attentionLayers : p.implicitLayers;
        for (int l = 0; l < a.layers; ++l)
            for (int h = 0; h < a.heads; ++h) {
                HeatmapData d = attentionMap(a, l, h, rows, cols, wrongRows);
                if (std::all_of(d.values.begin(), d.values.end(), [](float x) { return x == 0; })) continue;  // an unused head
                const int block = l < int(blocks.size()) ? blocks[size_t(l)] : l;
                QString caption = view == views::attention ? QString("L%1 H%2").arg(block).arg(h) : QString("block %1").arg(block);
                bool lookup = false;
                if (analysis && view == views::attention) {
                    const HeadLookup& hl = analysis->heads[size_t(l) * a.heads + h];
                    caption += "\n" + hl.label;
                    lookup = hl.kind == HeadKind::NgramLookup;
                }
                d.title = view == views::attention ? QString(p.effectiveAttention ? "effective attention (|M|, rows scaled to 1), layer %1 head %2"
                                                                             : "attention, layer %1 head %2").arg(block).arg(h)
                                              : QString("implicit attention of block %1 (mean |α| over channels)").arg(block);
                v.maps.push_back(std::move(d));
                v.captions.push_back(caption);
                v.layers.push_back(l);
                v.heads.push_back(h);
                v.blocks.push_back(block);
                v.highlighted.push_back(lookup);
            }
    } else {
        const std::vector<ProbeMatrix>& ms = view == views::state ? p.stateNorm : p.delta;
        for (size_t i = 0; i < ms.size(); ++i) {
            const ProbeMatrix& m = ms[i];
            HeatmapData d;
            d.rows = m.rows;
            d.cols = m.cols;
            d.values = m.values;
            d.rowLabels = rows;
            d.markedRows = wrongRows;
            d.rowTitle = "position";
            d.colTitle = "channel";
            d.title = QString("%1 of block %2").arg(view == views::state ? "hidden-state norm" : "step size Δ").arg(m.layer);
            v.maps.push_back(std::move(d));
            v.captions.push_back(QString("block %1").arg(m.layer));
            v.layers.push_back(int(i));
            v.heads.push_back(0);
            v.blocks.push_back(m.layer);
            v.highlighted.push_back(false);
        }
    }
    return v;
}

namespace {

// Which map of `v` a figure shows: the one asked for, else the strongest lookup head, else the last block.
int chosenMap(const InsideView& v, const InsideLook& look, const LookupAnalysis* analysis, const InsideFigureRequest& r)
{
    const ModelProbes& p = look.probes;
    if (r.layer >= 0 || r.head >= 0) {
        const int heads = v.view == views::attention ? p.attention.heads : 1;
        int index = -1;
        for (size_t i = 0; i < v.maps.size(); ++i)
            if (v.blocks[i] == std::max(0, r.layer) && v.heads[i] == std::max(0, r.head)) index = int(i);
        if (index < 0)
            throw Error(QString("no %1 map at layer %2, head %3 (%4 heads per layer)").arg(v.view).arg(r.layer).arg(std::max(0, r.head)).arg(heads));
        return index;
    }
    if (analysis) {
        std::vector<int> shown;  // the maps' heads, as indices into the analysis
        for (size_t i = 0; i < v.maps.size(); ++i) shown.push_back(v.layers[i] * p.attention.heads + v.heads[i]);
        return int(std::find(shown.begin(), shown.end(), strongestLookupHead(*analysis, shown)) - shown.begin());
    }
    return int(v.maps.size()) - 1;
}

// A heatmap's values as CSV, a row per position, headed by the token labels.
QString heatmapCsv(const HeatmapData& d)
{
    QString csv = QString("%1/%2").arg(d.rowTitle, d.colTitle);
    for (int c = 0; c < d.cols; ++c) csv += "," + (c < d.colLabels.size() ? d.colLabels[c] : QString::number(c));
    csv += "\n";
    for (int row = 0; row < d.rows; ++row) {
        csv += row < d.rowLabels.size() ? d.rowLabels[row] : QString::number(row);
        for (int c = 0; c < d.cols; ++c) csv += "," + QString::number(double(d.at(row, c)), 'g', 6);
        csv += "\n";
    }
    return csv;
}

}  // namespace

QString renderInside(const InsideLook& look, const InsideFigureRequest& r, const QString& outFile)
{
    checkFigureFile(outFile, r.width, r.height);
    const ModelProbes& p = look.probes;
    const QStringList has = viewsOf(p);
    QString view = r.figure, note;
    if (view == views::attention && !has.contains(views::attention) && has.contains(views::implicit)) {
        view = views::implicit;
        note = QString(" (%1 has no attention heads: its implicit attention instead)").arg(look.architecture);
    }
    if (!has.contains(view))
        throw Error(QString("%1 has no %2 view (it has: %3)").arg(look.name, view, has.isEmpty() ? "none" : has.join(", ")));
    const LookupAnalysis* analysis = view == views::attention && look.analysis ? &*look.analysis : nullptr;
    const InsideView v = buildView(p, view, analysis, look.score.wrong);
    const int index = chosenMap(v, look, analysis, r);
    HeatmapView heatmap;
    heatmap.resize(layoutSize(r.width, r.height));
    HeatmapStyle style;
    style.logScale = r.logScale;
    heatmap.setStyle(style);
    heatmap.setData(v.maps[size_t(index)]);
    int order = 0;
    bool match = false;
    if (analysis) {
        const HeadLookup& h = analysis->heads[size_t(v.layers[size_t(index)]) * p.attention.heads + size_t(v.heads[size_t(index)])];
        order = h.order;
        match = h.kind == HeadKind::NgramMatch;
    }
    if (view == views::attention || view == views::implicit) {
        // a task's keys are single tokens (MQAR, MAD's recall): marks of a 1-gram lookup, on its queries only
        std::vector<std::pair<int, int>> marks, warnings;
        const auto [begin, end] = look.queries;
        lookupMarksIn(look.tokens, begin, end, order > 0 ? order : look.task ? 1 : 2, match, marks, warnings);
        if (look.task) {
            keepAnsweredQueries(*look.task, marks);
            keepAnsweredQueries(*look.task, warnings);
        }
        heatmap.setMarks(marks, warnings);
    }
    const HeatmapData& d = v.maps[size_t(index)];
    heatmap.plot()->replot();
    savePlot(*heatmap.plot(), outFile, r.width, r.height, d.title, heatmapCsv(d), r.style);
    return QString("%1: %2%3 -> %4").arg(look.name, d.title + (order > 0 ? QString(" [%1]").arg(v.captions[size_t(index)].section('\n', 1)) : QString()), note, outFile);
}

}  // namespace parrot
