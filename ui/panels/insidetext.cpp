#include "ui/panels/insidetext.h"

#include "base/figurecatalog.h"

#include <QCoreApplication>
#include <QFontMetrics>

namespace parrot {

namespace {

// The context of these texts' translations.
struct InsideText {
    Q_DECLARE_TR_FUNCTIONS(InsideText)
};

QString score2(double x) { return QString::number(x, 'f', 2); }

// The line break a continuation shows as ⏎, so that it reads on one line.
QString oneLine(QString text) { return text.replace('\n', QChar(0x23CE)); }

}  // namespace

InsideInfo noMapInfo(bool probed)
{
    const QString text = probed ? InsideText::tr("Nothing to show in this view.") : QString();
    return {text, {text}};
}

InsideInfo headInfo(const HeadLookup& h, const LookupAnalysis& analysis)
{
    QString lookup, matched, ambiguous;
    int best = 0;
    for (int k = 1; k <= kMaxLookupOrder; ++k) {
        const size_t n = size_t(k);
        lookup += QString("<td>%1</td>").arg(h.scored[n] ? score2(h.lookup[n]) : QString("–"));
        matched += QString("<td>%1</td>").arg(h.scored[n] ? score2(h.match[n]) : QString("–"));
        ambiguous += QString("<td>%1</td>").arg(analysis.ambiguous[n]);
        if (h.scored[n] && (best == 0 || h.lookup[n] > h.lookup[size_t(best)] + 0.01)) best = k;  // the lowest order near the best
    }
    InsideInfo info;
    info.whole = InsideText::tr("<b>%1</b> — previous-token %2, current %3, first-token %4, entropy %5"
                    "<table cellspacing=4><tr><td>n</td><td>1</td><td>2</td><td>3</td><td>4</td><td>5</td><td>6</td><td>7</td><td>8</td></tr>"
                    "<tr><td>lookup</td>%6</tr><tr><td>match</td>%7</tr><tr><td>ambiguous queries</td>%8</tr></table>")
                     .arg(h.label).arg(h.previousToken, 0, 'f', 2).arg(h.currentToken, 0, 'f', 2).arg(h.firstToken, 0, 'f', 2)
                     .arg(h.entropy, 0, 'f', 2).arg(lookup, matched, ambiguous);
    info.brief << (best > 0 ? InsideText::tr("%1 — lookup %2, match %3 at n = %4; previous-token %5")
                                  .arg(h.label).arg(h.lookup[size_t(best)], 0, 'f', 2).arg(h.match[size_t(best)], 0, 'f', 2).arg(best)
                                  .arg(h.previousToken, 0, 'f', 2)
                            : InsideText::tr("%1 — previous-token %2, entropy %3").arg(h.label).arg(h.previousToken, 0, 'f', 2).arg(h.entropy, 0, 'f', 2));
    return info;
}

InsideInfo viewInfo(const QString& view)
{
    if (view == views::implicit)
        return {InsideText::tr("The selective scan is linear in its input: y_t = Σ_s α[t,s] u_s + D u_t per channel. Shown: |α| averaged over "
                   "the channels (the skip D and the gate are left out). Compare its rows with a lookup head's single bright cell."),
                {InsideText::tr("|α| of y_t = Σ_s α[t,s] u_s + D u_t, averaged over the channels")}};
    QString text;
    if (view == views::state)
        text = InsideText::tr("Per-channel norm of the hidden state after each token (LSTM: |h| then |c| channels; Mamba-2: a head's head_dim x "
                  "d_state state; Gated DeltaNet: a head's key x value state).");
    else if (view == views::delta)
        text = InsideText::tr("The step size Δ after softplus (Mamba: per channel; Mamba-2: per head): large Δ lets a token in and forgets the "
                  "past; small Δ keeps the state.");
    return {text, {text}};
}

InsideInfo withAnswers(InsideInfo map, const AnswersShown& a)
{
    QString info = map.whole, answers;
    if (const CopyScore* score = a.score) {
        if (a.readsText) {
            info += InsideText::tr("<br>Predicts %1 of the %2 copyable tokens of this prompt (the next token after a %3-gram seen once "
                       "before, as it followed then; rows marked ✗ are wrong).")
                        .arg(score->right).arg(score->answers).arg(kTextCopyOrder);
            answers = InsideText::tr("Predicts %1 of %2 copyable tokens").arg(score->right).arg(score->answers);
        } else if (!a.task.isEmpty()) {
            info += InsideText::tr("<br>Answers %1 of %2 of this %3 example's answer tokens (rows marked ✗ are wrong).")
                        .arg(score->right).arg(score->answers).arg(a.task.toHtmlEscaped());
            answers = InsideText::tr("Answers %1 of %2").arg(score->right).arg(score->answers);
        } else {
            info += InsideText::tr("<br>Copies %1 of %2 letters of this input (rows marked ✗ are wrong).").arg(score->right).arg(score->answers);
            answers = InsideText::tr("Copies %1 of %2 letters").arg(score->right).arg(score->answers);
        }
        if (!a.ablation.isEmpty() && a.plainScore.answers == score->answers) {
            info += InsideText::tr(" <b>With %1</b>; with every head: %2 of %3.").arg(a.ablation.toHtmlEscaped()).arg(a.plainScore.right).arg(a.plainScore.answers);
            answers += InsideText::tr(" with %1; with every head: %2").arg(a.ablation).arg(a.plainScore.right);
        }
    }
    if (a.readsText && a.tokens > 0) {
        const QString continuation = oneLine(a.continuation);
        info += InsideText::tr("<br>%1 tokens. Greedy continuation: <b>%2</b>").arg(a.tokens).arg(continuation.toHtmlEscaped());
        answers += (answers.isEmpty() ? QString() : QString("; ")) + InsideText::tr("continues: %1").arg(continuation);
        if (!a.ablation.isEmpty()) info += InsideText::tr("<br>With every head: <b>%1</b>").arg(oneLine(a.plainContinuation).toHtmlEscaped());
    }
    InsideInfo out;
    out.whole = info;
    for (const QString& line : map.brief + QStringList{answers})
        if (!line.isEmpty()) out.brief << line;
    return out;
}

QString briefHtml(const InsideInfo& info, const QFontMetrics& metrics, int width)
{
    QStringList lines;
    for (const QString& line : info.brief) lines << metrics.elidedText(line, Qt::ElideRight, width).toHtmlEscaped();
    return lines.join("<br>");
}

}  // namespace parrot
