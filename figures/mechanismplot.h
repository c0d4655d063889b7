// The mechanism timeline: every head's lookup score (analysis/mechanisms.h: its attention on the
// token after the earlier occurrence of the current n-gram, the best of n = 1, 2, 3) against the
// training step, drawn under the loss on the same step axis, so the loss's plateau and the jump of
// the head that learns to look up are seen together. One line per head: the strongest (the highest
// lookup score at the latest scoring) highlighted and named as the Explore tab names and labels
// heads ("L1 H3", "n-gram lookup (order 2)"), the others pale; the head with the highest
// previous-token score dashed; a vertical line where the best lookup score first reaches 0.5.
// Live during training (one scoring at a time, replotted after a 40 ms single-shot timer), and as a
// figure of a run folder without a window (`parrotscope export --figure mechanisms`).
#pragma once

#include "base/io/runfolder.h"
#include "base/types.h"
#include "figures/export.h"

#include <QTimer>
#include <QWidget>

#include <vector>

class QCPAxisRect;
class QCPItemStraightLine;
class QCPTextElement;
class QCustomPlot;

namespace parrot {

class MechanismPlot : public QWidget {
    Q_OBJECT
public:
    explicit MechanismPlot(QWidget* parent = nullptr);

    void clear();
    void addScores(const MechanismScores& s);  // the next scoring of the run
    // Its step axis follows `loss`'s range, its axis rect lined up under loss's, and the step the
    // lookup forms marked on `loss` too; `loss` may shrink to this plot's height.
    void followSteps(QCustomPlot* loss);
    int scoringCount() const { return int(m_scorings.size()); }
    const std::vector<MechanismScores>& scorings() const { return m_scorings; }
    // The highlighted head's name and label ("L1 H3 · n-gram lookup (order 2)"), "" before any scores.
    QString strongestHead() const;
    QString key() const;  // the line above the plot that names the highlighted lines
    long long formedAt() const { return m_formedAt; }  // the step the lookup formed, -1 before
    QCustomPlot* plot() const { return m_plot; }

signals:
    void redrawn();

private:
    void redraw();
    QCustomPlot* m_plot;
    QCPTextElement* m_key;  // the line styles named, in place of a legend (the plot is short)
    QCustomPlot* m_loss = nullptr;
    QCPItemStraightLine* m_lossMarker = nullptr;
    std::vector<MechanismScores> m_scorings;
    long long m_formedAt = -1;
    QTimer m_replot;
};

// Draws `scorings` in `rect` of `plot` (its bottom and left axes), with legend entries in the
// plot's legend: what MechanismPlot shows. Returns what it drew: the step the lookup formed (-1:
// never) and the names of the highlighted lines (empty before any scores).
struct TimelineDrawn {
    long long formedAt = -1;
    QString strongest, previous;  // "L1 H3 · n-gram lookup (order 2): 0.91", "L0 H1 · previous-token score: 0.78"
    int others = 0;               // the pale lines
};
TimelineDrawn drawMechanismTimeline(QCustomPlot& plot, QCPAxisRect* rect, const std::vector<MechanismScores>& scorings);

// The figure of a run folder: its training loss (metrics.csv) above its timeline (mechanisms.csv),
// one step axis, as PNG, PDF, SVG or the plotted data as CSV (series,x,y,value). Throws
// parrot::Error naming the file a run lacks, or for a file that cannot be written.
void renderMechanisms(const RunRecord& run, const std::vector<MechanismScores>& scorings, const QString& outFile, int width,
                      int height, const ExportOptions& style = {});

}  // namespace parrot
