// The tasks, written once: what task.kind accepts, what the window's picker and `parrotscope
// tasks` show, what a task's evaluation reports (its metric, chance, the shape of its curve) and
// its laptop-scale defaults. Adding a task is one entry here plus its generator (a TokenTask in
// tokentask.cpp or an IclTask in icltask.cpp); see docs/ARCHITECTURE.md. Plain C++, no torch.
#pragma once

#include "base/config.h"

#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

struct TaskInfo {
    QString id;
    QString label;
    QString description;  // one or two sentences: format and what it tests
    QString difficulty;   // what min_len / max_len / eval lengths count, e.g. "string length"
    QStringList options;  // task.* keys it uses besides the common ones
    bool characters = false;  // a fixed character vocabulary (task.vocab_size unused)
    bool vectors = false;     // an in-context-learning task on vectors (tasks/icltask.h), not tokens
    // What its evaluation reports: "accuracy" (higher is better) or "error" (in-context regression:
    // squared error over the dimension, lower is better).
    QString metric = "accuracy";
    // Evaluated on one prompt length, after every number of in-context examples (regression,
    // parity), rather than once per length.
    bool promptCurve = false;
    // Graded and drawn per answer token rather than per whole answer (MAD's tasks and MQAR: a
    // sequence's answers are independent queries; MAD and Zoology report the accuracy per query).
    bool tokenScored = false;
    // Read out at one token rather than predicted token by token (MAD's compression): the model's
    // representation at the row's last `|` is decoded at every position by an MLP
    // (SequenceModelImpl::addReadOut), and position t is scored against the row's own token t.
    bool readOut = false;
    // The accuracy of guessing, drawn where it is visibly above zero and used in grading.
    double (*chance)(const TaskConfig& t) = nullptr;
    // Laptop-scale settings (ranges, context, evaluation lengths, options) over copy's defaults:
    // what the window and `sample --task` switch to when the task changes.
    void (*defaults)(TaskConfig& t) = nullptr;
};

const std::vector<TaskInfo>& taskCatalog();
const TaskInfo* findTask(const QString& id);  // nullptr when there is none
QStringList taskIds();
bool isVectorTask(const QString& kind);
bool isReadOutTask(const QString& kind);  // TaskInfo::readOut of a kind (false for unknown kinds)
// Token associative recall with keys from the first half of the letters and values from the
// second (mqar, mad_recall): what the recall frontier figure plots.
bool isRecallTask(const QString& kind);
QStringList recallTaskIds();
// A task's defaults (taskDefaults("copy") is TaskConfig{}); unknown kinds get copy's.
TaskConfig taskDefaults(const QString& kind);
// 0 for tasks (and kinds) without a meaningful chance level.
double chanceLevel(const TaskConfig& t);

// A pretrained language model's task: text through its own tokenizer, task.vocab_size its
// embedding rows (any number). Not a catalogue entry: nothing generates it and nothing trains on
// it; such models are run by generation and the zero-shot tests (eval/lmtests.h).
inline const QString kTextTask = QStringLiteral("text");
inline bool isTextTask(const QString& kind) { return kind == kTextTask; }

}  // namespace parrot
