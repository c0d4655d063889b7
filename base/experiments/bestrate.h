// A thorough sweep's results: each model at the learning rate that did best on held-out prompts
// (result.json's "validation": fresh prompts at the longest training length, never the test
// prompts or lengths), with every seed of that rate, so the figures draw their seed bands and the
// results table grades the mean. The rate is chosen by the mean over seeds; a diverged run counts
// as the worst score, so a rate that diverges on one seed is marked down, not ignored.
#pragma once

#include "base/experiments/sweep.h"
#include "base/io/runfolder.h"

#include <QString>

#include <map>
#include <vector>

namespace parrot {

struct RateTrial {
    double lr = 0;
    std::vector<double> scores;  // per ended run: held-out accuracy, or minus the in-context error
    int diverged = 0, pending = 0, unchecked = 0;  // unchecked: finished without a held-out check
    double mean() const;         // NaN when no run ended; a diverged run counts as the worst score
};

struct RateChoice {
    QString model;                 // the run name of the plain sweep
    bool error = false;            // scored by in-context error (lower is better)
    std::vector<RateTrial> trials;  // by rate, ascending
    double lr = 0;                  // chosen; 0 when no rate has an ended run
    bool atEdge = false;            // the chosen rate is the grid's lowest or highest
    bool complete = false;          // every run of every rate ended
    // "0.01", "0.03 (top of the grid)", "0.003 (so far: 7 of 12 runs)"
    QString rateText() const;
    // "0.001: 42% · 0.003: 88% · 0.01: 97% · 0.03: diverged 2 of 3": each rate's held-out mean
    QString trialsText() const;
};

struct BestRates {
    std::vector<RateChoice> choices;
    std::vector<RunRecord> runs;              // the finished runs at each model's chosen rate
    std::map<QString, QString> rateOfRunDir;  // those runs' folders -> RateChoice::rateText()
    // One line per model, for the command line and the window: the rate chosen and each rate's score.
    QString toText() const;
};

// `finished`: the plan's finished runs as loaded (the others' statuses are read from their folders).
BestRates chooseBestRates(const SweepPlan& plan, const std::vector<RunRecord>& finished);

// What a folder's results are drawn and graded from: every run under `dir`, or, for a thorough
// sweep's folder (its index.json says so), each model's runs at its chosen rate; `rates` receives
// the choice then (empty choices otherwise).
std::vector<RunRecord> loadResultRuns(const QString& dir, BestRates* rates = nullptr, int* skipped = nullptr);

}  // namespace parrot
