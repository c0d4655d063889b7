// Sweeps: a grid of runs from one file, resumable, spread over local processes or printed as
// one independent command per run for a cluster scheduler.
//
//   {
//     "name": "positions",                       // optional; names the index
//     "preset": "copy-tiny"                       // or "experiment": { ...a config... } or "config": "file.json"
//     "set": {"train.steps": 600},                // optional overrides for every run
//     "variants": [                               // optional named override sets (one axis)
//       {"label": "nope", "set": {"model.positions": "nope"}},
//       {"label": "mamba", "set": {"model.kind": "mamba"}}
//     ],
//     "grid": {"seed": [1, 2, 3], "train.lr": [0.001, 0.003]},  // optional: every combination
//     "figure": "length",                         // optional: the comparison figure that shows it
//     "minutes": 7,                               // optional: what the whole sweep took on 2 cores, 2 jobs
//     "thorough": {"lr": [0.001, 0.003, 0.01, 0.03], "lr_by_kind": {"lstm": [...]}, "seeds": [1, 2, 3]},
//                                                 // optional: sweep --thorough's grid (else Zoology's)
//     "scales": {"paper": {"description": "...", "set": {...}, "variants": {"mamba": {...}}}}
//   }                                             // optional: sweep --scale NAME's overrides, over
//                                                 // every run's and then over each variant's own
//
// Runs are variants x grid points, named "<label>[_key-value...]"; each gets <out>/configs/NAME.json
// (the resolved experiment) and the run folder <out>/runs/NAME. <out>/index.json lists them.
#pragma once

#include "base/config.h"

#include <QString>
#include <QStringList>

#include <map>
#include <optional>
#include <vector>

namespace parrot {

// sweep --thorough: each model (a run of the plain sweep, its seed and learning rate left out)
// trains at every rate of a grid and every seed, and is shown at the rate that does best on
// held-out prompts (experiments/bestrate.h).
struct ThoroughGrid {
    std::vector<double> lr;                           // every model's rates, unless its family has its own
    std::map<QString, std::vector<double>> lrByKind;  // model.kind -> its rates
    std::vector<int> seeds;
    const std::vector<double>& ratesFor(const QString& kind) const;
    int runsPerModel(const QString& kind) const { return int(ratesFor(kind).size() * seeds.size()); }
    // "learning rates 0.001, 0.003, 0.01, 0.03 (lstm: 0.003, 0.01) x seeds 1, 2, 3"
    QString describe() const;
};
// Zoology's grid (Arora et al. 2023: 4 log-spaced rates from 1e-3 to 3e-2, every model) and seeds 1, 2 and 3.
ThoroughGrid zoologyGrid();

struct SweepRun {
    QString name;
    QString model;          // thorough sweeps: the run's model, named as in the plain sweep; else empty
    QStringList overrides;  // KEY=VALUE, in order, over the base
    ExperimentConfig config;
    QString configPath;     // <out>/configs/NAME.json
    QString runDir;         // <out>/runs/NAME
};

struct SweepPlan {
    QString name;
    QString description;
    QString figure = "length";  // length | efficiency | efficiency-time | icl (figures/figures.h)
    QString source;             // the sweep file it was read from (":/sweeps/NAME.json" for a bundled one)
    QString outDir;
    // --set over the sweep file for every run (a shrunken sweep), recorded in index.json ("set")
    // so the folder resumes with the settings it was made with.
    QStringList overrides;
    std::vector<SweepRun> runs;
    std::optional<ThoroughGrid> thorough;  // set for a thorough sweep (recorded in index.json)
    QString scale;                         // the sweep file's scale it was made at ("paper"); "" for its own
    QStringList scales;                    // the scales the sweep file offers
    double minutes = 0;                    // the file's "minutes": the plain sweep on 2 cores; 0 when not given
};

struct SweepOptions {
    bool thorough = false;
    QString scale;  // one of the file's "scales", or "" (also "laptop") for the file's own settings
};

// Reads and expands a sweep file; every run's config is validated. Throws parrot::Error
// naming the file and field (unknown keys, bad values, an empty grid axis, duplicate names).
// `thorough`: every run becomes one per learning rate and seed of the file's "thorough" grid
// (zoologyGrid() without one), named "<run>_lr-<rate>_seed-<seed>"; the file's own seed and
// train.lr axes give way to it.
// `options.scale`: the file's scale of that name applied (its description replaces the file's).
SweepPlan loadSweep(const QString& file, const QString& outDir, const SweepOptions& options = {});

// Adds KEY=VALUE overrides to every run of a loaded plan (e.g. a shrunken preset:
// train.steps=40) and to plan.overrides. Throws parrot::Error naming the run and the override.
void overrideSweep(SweepPlan& plan, const QStringList& overrides);

// The overrides of a quick look: every run's train.steps divided by `divisor` (at least 1), its
// warm-up, evaluation and autosave intervals with it, so the curves keep their number of points
// (intervals of 0, never, are left out). Empty for 1. Throws parrot::Error when the runs do not
// share these settings.
QStringList quickLookOverrides(const SweepPlan& plan, int divisor);

// What index.json says of a sweep folder: its name, description, figure, source, overrides and
// runs (names and folders; their configs are not read), or nullopt when there is no readable index.
std::optional<SweepPlan> readSweepIndex(const QString& outDir);

// Writes <out>/configs/*.json and <out>/index.json (with each run's status from result.json).
void writeSweepFiles(const SweepPlan& plan);
// index.json alone (the runs' statuses as they are now), when the configs are already written.
void writeSweepIndex(const SweepPlan& plan);

// Sweeps bundled with the app (resources/sweeps/*.json), by name; the file of one (":/sweeps/...").
QStringList sweepPresetNames();
QString sweepPresetFile(const QString& name);  // throws parrot::Error for an unknown name

// The command that runs one run on its own (for --print-commands and for local jobs): `train
// --resume` for a run stopped or killed part way (sweepRunResumable), else a fresh `train`.
QStringList sweepRunArguments(const SweepRun& run, int threads);
// A word as a POSIX shell reads it back, on one line: bare when safe, else single-quoted, a
// line break written as $'\n' (so it also stays one line inside a comment).
QString shellQuote(const QString& word);
// A run that stopped or was killed part way with a resume file and the settings the sweep gives
// now: running the sweep again goes on with it rather than starting it over.
bool sweepRunResumable(const SweepRun& run);

}  // namespace parrot
