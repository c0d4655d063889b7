// Sweeps on a Slurm cluster: the sweep's unfinished runs submitted as one job array with
// `sbatch`, their states read back from `squeue` / `sacct` (or `scontrol` where accounting is
// off) and the run folders, resubmission of what is neither finished nor queued, and `scancel`.
// Assumed: the sweep folder is on a filesystem the nodes share, and the nodes run the same
// parrotscope build (ClusterProfile::executable, or this one's path).
//
// DIR/slurm/ holds what was submitted, for people to read and rerun:
//   job-N.sh      the batch script (the same for every submission: it reads its arguments)
//   job-N.runs    the runs of that array, one name a line, array task i = line i + 1
//   jobs.json     every submission: job id, time, cluster profile, runs
// Each array task runs `parrotscope sweep --slurm-task I --list DIR/slurm/job-N.runs`: one run,
// resumed from its autosave when it has one (as a local sweep does), its output in
// DIR/logs/slurm-JOB_TASK.log. Paths reach the script only as its arguments, quoted by the
// shell that sbatch starts, never as shell code.
#pragma once

#include "base/experiments/sweep.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <map>
#include <vector>

namespace parrot {

// A named set of sbatch options, kept in clustersFile() for the command line and the window.
struct ClusterProfile {
    QString name;
    QString partition, account, time, memory, gres;  // sbatch's --partition, --account, --time, --mem, --gres
    int cpusPerTask = 1;
    QStringList extraLines;  // "#SBATCH ..." lines copied into the batch script
    QString executable;      // parrotscope on the nodes; "" = the one submitting
    bool usesGpu() const { return gres.contains("gpu"); }  // its runs pass --device cuda
    QJsonObject toJson() const;
    // Throws parrot::Error naming the field that is wrong.
    static ClusterProfile fromJson(const QJsonObject& o, const QString& name);
    QString describe() const;  // "partition debug, 1 CPU a run, time 00:10:00"
};

QString clustersFile();  // $XDG_CONFIG_HOME/Parrotscope/clusters.json (~/.config/...)
// Throws parrot::Error naming the file when it is not valid JSON or a profile is malformed.
std::vector<ClusterProfile> loadClusterProfiles();
// Throws parrot::Error naming the profiles there are.
ClusterProfile findClusterProfile(const QString& name);
// Adds or replaces the profile of that name, keeping the others; written atomically.
void saveClusterProfile(const ClusterProfile& profile);
// The "#SBATCH ..." lines of a file (blank lines and # comments skipped). Throws parrot::Error
// naming the line that is neither.
QStringList readSbatchLines(const QString& file);

struct SlurmSubmission {
    QString job;  // the array's job id
    QDateTime submitted;
    QString cluster;  // the profile's name
    QStringList runs;
    QString script, list;  // DIR/slurm/job-N.sh and .runs
};
// DIR/slurm/jobs.json, oldest first; empty when the sweep was never submitted.
std::vector<SlurmSubmission> readSubmissions(const QString& sweepDir);

// What Slurm says of one array task.
struct SlurmTaskState {
    QString state;     // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY, ...
    QString reason;    // Slurm's reason (squeue's %r, sacct's or scontrol's Reason), "" for none
    QString exitCode;  // "0:0"
};
// "JOB_TASK" -> state for the array jobs given, from squeue (queued and running tasks), then sacct
// or scontrol (tasks that ended and that the controller still remembers). Tasks no command knows
// are left out. Throws parrot::Error when squeue cannot be run or reach the controller.
std::map<QString, SlurmTaskState> querySlurm(const QStringList& jobs);

// One run of a submitted sweep as the status command shows it.
struct SweepRunState {
    QString name;
    QString state;   // finished, diverged, failed, cancelled, running, pending, stopped (part done, nothing queued), not submitted
    QString task;    // "JOB_TASK" of its latest submission, "" if never submitted
    QString detail;  // Slurm's reason, the log to read, or what the folder says
    long long step = 0, steps = 0;
    double accuracy = -1;  // the last evaluation's answer accuracy at task.max_len, -1 if none yet
};
// Every run of the sweep folder's index. Throws parrot::Error for a folder that is not a sweep,
// or when Slurm cannot be asked about submitted jobs.
std::vector<SweepRunState> sweepStatus(const QString& sweepDir);

// Writes the script and list, runs sbatch (its options from `profile`, --array, --output,
// --chdir), records the submission in jobs.json and index.json, and returns the job id. Throws
// parrot::Error with sbatch's own message when it refuses.
QString submitSweepRuns(const SweepPlan& plan, const QStringList& runs, const ClusterProfile& profile, const QString& executable);

// What submitSweep did: the job ("" when nothing was left to submit), the runs in it, the
// sweep's runs in all, and those left alone because they were queued or running.
struct SlurmSubmitted {
    QString job;
    QStringList runs;
    int total = 0, busy = 0;
};
// The command line's and the window's submission: asks Slurm about the folder's earlier jobs,
// leaves their queued and running runs alone (and clears the lock of a run whose task Slurm says
// ended), prepares the rest as a local sweep would (SweepRunner::prepare) and submits what is
// left to do with submitSweepRuns. Throws parrot::Error as those do.
SlurmSubmitted submitSweep(SweepPlan plan, const ClusterProfile& profile, const QString& executable);

// scancel for every job of the sweep that still has tasks queued or running; returns their ids.
QStringList cancelSweepJobs(const QString& sweepDir);

}  // namespace parrot
