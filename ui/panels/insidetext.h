// The words an Explore pane (insidepane.h) puts under its map, as functions of what it shows: a
// head's lookup scores, what a view other than attention draws, and how many answers the model
// got right. Plain functions of values, so tests read them without a pane.
#pragma once

#include "base/analysis/lookup.h"
#include "core/analysis/inside.h"

#include <QString>
#include <QStringList>

class QFontMetrics;

namespace parrot {

// The line under a map: whole (rich text), and its short form for a short pane, a line for the
// map and one for the answers (plain text).
struct InsideInfo {
    QString whole;
    QStringList brief;
};

// No map in this view: says so once the subject has been probed (`probed`), else nothing.
InsideInfo noMapInfo(bool probed);
// An analysed attention head: its label and scores, its lookup and match scores at every n-gram
// order beside the ambiguous queries of each; in brief, those at its best order.
InsideInfo headInfo(const HeadLookup& head, const LookupAnalysis& analysis);
// What the implicit-attention, state-norm and step-size views draw (nothing for another view).
InsideInfo viewInfo(const QString& view);

// The model's answers to the input shown.
struct AnswersShown {
    bool readsText = false;            // a language model on a text prompt
    QString task;                      // the kind of the task example read, "" for a copy input or a prompt
    const CopyScore* score = nullptr;  // the predictions scored; nullptr: none
    QString ablation;                  // the heads switched off (HeadAblation::describe), "" for none
    CopyScore plainScore;              // with every head, while some are off
    int tokens = 0;                    // the prompt's tokens (a language model)
    QString continuation;              // a language model's greedy answer
    QString plainContinuation;         // with every head
};
// `map` with the answers after it: how many are right (with every head too, while some are off),
// and a language model's continuation.
InsideInfo withAnswers(InsideInfo map, const AnswersShown& answers);

// A short pane's form of `info`: each of its brief lines elided to `width` pixels, as rich text.
QString briefHtml(const InsideInfo& info, const QFontMetrics& metrics, int width);

}  // namespace parrot
