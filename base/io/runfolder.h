// A run folder: config.json (experiment + environment), metrics.csv, checkpoints/.
#pragma once

#include "base/config.h"
#include "base/types.h"

#include <QDateTime>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QLockFile>
#include <QString>

#include <memory>

namespace parrot {

class RunFolder {
public:
    // Creates `dir` (and parents) and writes config.json. Refuses a folder that already
    // holds a run (config.json or metrics.csv), so nothing a user had is overwritten. A run that
    // trains an existing model further names where it came from in `continuesFrom`
    // ({"checkpoint": path, "step": n}), written as config.json's continues_from.
    RunFolder(const QString& dir, const ExperimentConfig& config, const QJsonObject& environment,
              const QJsonObject& continuesFrom = {});
    // Throws parrot::Error when `dir` already holds a run (what the constructor refuses).
    static void checkFree(const QString& dir);

    // Reopens the run in `dir` to train on from `step` (resume): metrics.csv and curves.json keep
    // what was recorded up to `step` (rows and evaluations past it, a torn last line and a second
    // row for one step are dropped: the resumed run writes them again), result.json goes, and
    // config.json gets `config` and `resumed` appended to its "resumed" list. Each file is
    // replaced atomically.
    struct Reopen {
        long long step = 0;
        QJsonObject resumed;
    };
    RunFolder(const QString& dir, const ExperimentConfig& config, const Reopen& reopen);
    ~RunFolder();
    // Throws parrot::Error when a live process trains the run in `dir`: a RunFolder holds the
    // folder's run.lock while it exists (a killed process's lock is stale and taken over).
    static void checkNotInUse(const QString& dir);

    QString dir() const { return m_dir; }
    QString checkpointPath() const;  // checkpoints/last.safetensors

    // One metrics.csv row; eval columns are filled when `eval` is given.
    void appendMetrics(const TrainProgress& p, const LengthCurve* eval);
    // mechanisms.csv: one row per head of a scoring (the header with the first).
    void appendMechanisms(const MechanismScores& m);
    // checkpoints/snapshots/step-NNNNNN.safetensors: where the weights at `step` are kept.
    QString snapshotPath(long long step) const;
    // The scorings kept when the folder was reopened (resume), for what the run goes on from.
    const std::vector<MechanismScores>& mechanismsSoFar() const { return m_mechanismsSoFar; }
    // curves.json: every evaluation of the run, for the plots.
    void appendCurve(const LengthCurve& c);
    // result.json, written last: how the run ended and its final evaluation. A folder without
    // it is a run that never finished (sweeps redo those).
    void finish(const TrainOutcome& outcome, double wallSeconds);

private:
    void openMetrics(const ExperimentConfig& config, bool append);
    void lock();
    QString m_dir;
    std::unique_ptr<QLockFile> m_lock;
    std::vector<int> m_evalLengths;
    bool m_prefixCurve = false;  // an in-context task scored after every number of examples
    std::unique_ptr<QFile> m_metrics;
    std::unique_ptr<QFile> m_mechanisms;
    std::vector<MechanismScores> m_mechanismsSoFar;
    QJsonArray m_curves;
};

// A run folder read back, for comparisons and the run browser.
struct RunRecord {
    QString dir;
    ExperimentConfig config;
    QString status;                  // result.json's, or "" for an unfinished run
    std::vector<LengthCurve> curves;  // every evaluation, in order (curves.json)
    LengthCurve validation;           // result.json's held-out check (TrainOutcome::validation); empty if none
    struct Row {
        long long step = 0, examples = 0;
        double wallSeconds = 0, loss = 0;
        double target = -1;  // answer accuracy at task.max_len (error for in-context regression), -1 if not evaluated
    };
    std::vector<Row> metrics;        // metrics.csv
    // Model and positions, the colour key of the comparison plots: "transformer/hard_alibi", "mamba".
    QString architecture() const;
};
// Throws parrot::Error naming the file when config.json is missing or unreadable; curves and
// metrics that are missing or malformed are left empty.
RunRecord loadRun(const QString& dir);

// Every run folder under `dir` (any depth; a folder with config.json and metrics.csv), sorted by
// path. Folders that cannot be read are skipped and counted in `skipped` when given.
std::vector<RunRecord> loadRunsUnder(const QString& dir, int* skipped = nullptr);

// mechanisms.csv (see README, "Run folders"): a header, then one row per head per scoring:
//   step,layer,head,kind,lookup1,lookup2,lookup3,previous_token,label
// kind is "attention" or "implicit"; scores are in [0, 1]; label as HeadScore::label.
QString mechanismsCsvHeader();
// A run folder's scorings, in step order. Throws parrot::Error naming the file when it is missing
// ("has no mechanisms.csv": a run trained with train.mechanism_every = 0, on a task or model
// without heads, or by a version without it) or a row cannot be read (its line number).
std::vector<MechanismScores> loadMechanisms(const QString& runDir);
// The first scoring at or above `threshold` whose step follows one below it: where the lookup
// forms; -1 when it never crosses. kLookupForms is the threshold the run's snapshots use.
inline constexpr double kLookupForms = 0.5;
long long lookupFormsAt(const std::vector<MechanismScores>& scorings, double threshold = kLookupForms);

// A run's checkpoints to step through: its snapshots (checkpoints/snapshots/step-*.safetensors)
// and last.safetensors, in step order. `note` says "lookup forms" at the first snapshot at or past
// the crossing of kLookupForms and "before" at the one before it (when mechanisms.csv can be read),
// "last" for last.safetensors. Empty for a folder without snapshots.
struct RunSnapshot {
    long long step = 0;
    QString path;
    QString note;
    QString label() const;  // "step 1,600 (lookup forms)"
};
std::vector<RunSnapshot> runSnapshots(const QString& runDir);
// The run folder a checkpoint lies in (its checkpoints/ or checkpoints/snapshots/), or "" when it
// lies in none.
QString runFolderOf(const QString& checkpoint);

// What result.json says of a run folder: "finished", "cancelled", "diverged", "failed", or ""
// when there is no (readable) result.json.
QString runStatus(const QString& dir);

// A run whose process ended without closing it (the window crashed or was killed, the machine lost
// power): its run.lock is still there, the process the lock names is gone from this machine, and
// it has no result.json. The window offers to continue such runs at its next start.
struct InterruptedRun {
    QString dir;
    QString name;         // the experiment's name, from config.json
    long long step = -1;  // the step its resume file holds; -1 when it stopped before its first save
    QDateTime stoppedAround;  // when its resume file (or its lock) was last written
};
// The interrupted runs directly under `root` (the window's runs folder: sweeps' runs are resumed
// by their sweep), newest first. Nothing is changed: a lock is judged on a copy of it, by the rule
// RunFolder applies when it takes one over (its process is not running on this host). A lock from
// another host, or from a process still running, is never reported.
std::vector<InterruptedRun> interruptedRuns(const QString& root);
// Dismisses an interrupted run: its stale run.lock goes, and it is an ordinary stopped run (the
// Runs tab still resumes it). False, with nothing changed, when the lock is held by a live process
// or is not there.
bool dismissInterruptedRun(const QString& dir);

// A fresh, unused folder name under `root`: <root>/<yyyyMMdd-hhmmss>-<name>[-n].
QString newRunDir(const QString& root, const QString& name);
QString resumeFilePath(const QString& runDir);  // <runDir>/checkpoints/resume.safetensors

}  // namespace parrot
