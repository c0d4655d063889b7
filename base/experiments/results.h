// A results table like Park et al.'s Table 1: tasks x models, each cell graded from the runs'
// final evaluations (seeds averaged), with the value and the rule behind the grade.
//
// Grades (documented in the GUI's tooltip and the README):
//   accuracy (copy, n-gram lookup, MQAR, phone book, sparse parity, vector MQAR):
//     pass    mean answer accuracy >= 90% (MAD's tasks and MQAR, whose sequences hold many
//             independent answers: the accuracy per answer token, as MAD and Zoology score them)
//     partial at least halfway from chance to perfect (chance: 50% for sparse parity, else 0%)
//     fail    below that
//   in-context regression error (squared error / d after the most examples):
//     pass    within 0.1 x the zero predictor's error of the best classical baseline
//     partial below half the zero predictor's error (it learned something from the context)
//     fail    otherwise
// Where the accuracy is read: at the longest training length ("in range") or at the longest
// length evaluated ("longest"; the length-generalisation view).
#pragma once

#include "base/io/runfolder.h"

#include <QString>
#include <QStringList>

#include <cmath>
#include <map>
#include <vector>

namespace parrot {

enum class Grade { Pass, Partial, Fail, None };
enum class ResultPoint { InRange, Longest };

QString gradeSymbol(Grade g);  // ✓ ▲ ✗, or "" for None
QString gradeRules();           // the thresholds above, one paragraph, for tooltips and --help

struct ResultCell {
    Grade grade = Grade::None;
    double value = std::nan("");  // mean over the runs
    int runs = 0;
    QString detail;  // "accuracy 93.8% at length 8 (2 runs: 91%, 97%); pass: >= 90%"
    // Training efficiency (accuracy tasks evaluated during training): for each run, the examples
    // seen when its accuracy at task.max_len first reached 90%, or -1 when it never did.
    std::vector<long long> examplesTo90;
    long long examplesSeen = 0;  // the most any of its runs saw
    QString rate;                // a thorough sweep's: the learning rate its runs were chosen at (bestrate.h)
};

// The accuracy a run is graded and drawn by at point i of curve c: per answer token for the tasks
// that score so (MAD's and MQAR: a sequence holds many independent queries), else per whole answer.
double gradedAccuracy(const RunRecord& r, const LengthCurve& c, size_t i);

// The examples a run had seen when its accuracy at task.max_len (metrics.csv) first reached
// `threshold`; -1 when it never did or was never evaluated during training.
long long examplesToReach(const RunRecord& r, double threshold = 0.9);
// "19.2k, 22.4k" or "not within 64k": a cell's examplesTo90 for people.
QString examplesToText(const ResultCell& c);

struct ResultsTable {
    QStringList tasks;   // rows: the evaluated task (with n for n-gram tasks)
    QStringList models;  // columns: the architecture (with the model's size when one architecture comes in several)
    std::vector<std::vector<ResultCell>> cells;  // [task][model]
    // Plain text, aligned, "✓ 93.8%" per cell, then the examples each model needed to reach 90%
    // where it was evaluated during training; for the command line.
    QString toText() const;
    // One row per task and model: task,model,grade,value,runs,detail (grade: pass / partial /
    // fail / none; value: accuracy in 0..1 or the in-context error).
    QString toCsv() const;
};

// Runs without an evaluation are left out. `rateOfRunDir` (a thorough sweep's BestRates): the
// rate each run was chosen at, named in its cell.
ResultsTable tabulate(const std::vector<RunRecord>& runs, ResultPoint point = ResultPoint::InRange,
                      const std::map<QString, QString>& rateOfRunDir = {});

}  // namespace parrot
