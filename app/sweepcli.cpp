// `sweep`: a grid of experiments run here (resumable), printed as commands, submitted to Slurm as
// one job array, or its status and cancellation; and the array task a Slurm node runs.
#include "cli.h"

#include "base/error.h"
#include "base/experiments/bestrate.h"
#include "base/experiments/results.h"
#include "base/experiments/slurm.h"
#include "base/experiments/sweep.h"
#include "base/experiments/sweeprunner.h"
#include "base/io/runfolder.h"
#include "base/io/textfile.h"
#include "core/device.h"
#include "args.h"
#include "clicommon.h"
#include "commands.h"

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>

#include <map>
#include <optional>

namespace parrot {

namespace {

// sweep --slurm-task I --list FILE: on a node, array task I of a submitted sweep runs its run
// (line I + 1 of the list) as a local sweep would: resumed from its autosave when it has one.
int runSlurmTask(int task, const QString& list)
{
    const QStringList names = readTextFile(list, "the list of runs").split('\n', Qt::SkipEmptyParts);
    if (task < 0 || task >= names.size()) throw Error(QString("%1: no run for array task %2 (%3 runs)").arg(list).arg(task).arg(names.size()));
    const QString sweepDir = QFileInfo(QFileInfo(list).absolutePath()).absolutePath();  // DIR/slurm/job-N.runs
    const std::optional<SweepPlan> plan = readSweepIndex(sweepDir);
    if (!plan) throw Error(QString("%1: not a sweep folder").arg(sweepDir));
    for (SweepRun r : plan->runs) {
        if (r.name != names[task]) continue;
        r.config = loadConfigFile(r.configPath);
        out() << "array task " << task << ": run " << r.name << " of " << sweepDir << "\n";
        if (runStatus(r.runDir) == "finished") {
            out() << r.name << " is finished already\n";
            return 0;
        }
        if (sweepRunResumable(r)) {
            Args train = argsFor("train", {"--resume", r.runDir});
            return cmdTrain(train);
        }
        if (QFileInfo::exists(r.runDir) && !QDir(r.runDir).removeRecursively()) throw Error(QString("%1: cannot clear the unfinished run").arg(r.runDir));
        Args train = argsFor("train", {"--config", r.configPath, "--out", r.runDir});
        return cmdTrain(train);
    }
    throw Error(QString("%1: the sweep has no run %2").arg(sweepDir, names[task]));
}

// The cluster profile a submission uses: --cluster NAME's, with the options given over it.
ClusterProfile profileFrom(Args& a)
{
    const QString name = a.value("--cluster");
    ClusterProfile p = name.isNull() ? ClusterProfile{} : findClusterProfile(name);
    const auto take = [&a](const char* option, QString& field) {
        const QString v = a.value(option);
        if (!v.isNull()) field = v;
    };
    take("--partition", p.partition);
    take("--account", p.account);
    take("--time", p.time);
    take("--mem", p.memory);
    take("--gres", p.gres);
    take("--executable", p.executable);
    p.cpusPerTask = a.integer("--cpus-per-task", p.cpusPerTask);
    const QString lines = a.value("--sbatch-lines");
    if (!lines.isNull()) p.extraLines = readSbatchLines(lines);
    if (!p.executable.isEmpty()) p.executable = QFileInfo(p.executable).absoluteFilePath();
    return p;
}

int printSweepStatus(const QString& dir, bool json)
{
    const std::vector<SweepRunState> runs = sweepStatus(dir);
    const std::vector<SlurmSubmission> subs = readSubmissions(dir);
    std::map<QString, int> count;
    for (const SweepRunState& r : runs) ++count[r.state];
    if (json) {
        QJsonArray rows, jobs;
        for (const SweepRunState& r : runs)
            rows.append(QJsonObject{{"name", r.name}, {"state", r.state}, {"task", r.task}, {"detail", r.detail}, {"step", r.step},
                                    {"steps", r.steps}, {"accuracy", r.accuracy >= 0 ? QJsonValue(r.accuracy) : QJsonValue()}});
        for (const SlurmSubmission& s : subs)
            jobs.append(QJsonObject{{"job", s.job}, {"submitted", s.submitted.toString(Qt::ISODate)}, {"cluster", s.cluster}, {"runs", s.runs.size()}});
        QJsonObject counts;
        for (const auto& [k, v] : count) counts[k] = v;
        out() << QJsonDocument(QJsonObject{{"sweep", QDir(dir).absolutePath()}, {"runs", rows}, {"jobs", jobs}, {"counts", counts}})
                     .toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    QStringList ids;
    for (const SlurmSubmission& s : subs) ids << s.job;
    out() << QDir(dir).absolutePath() << (ids.isEmpty() ? QString(": never submitted to Slurm") : ": Slurm jobs " + ids.join(", ")) << "\n";
    out() << QString("%1 %2 %3 %4 %5\n").arg("run", -24).arg("state", -14).arg("step", -12).arg("accuracy", -9).arg("detail");
    for (const SweepRunState& r : runs)
        out() << QString("%1 %2 %3 %4 %5\n").arg(r.name, -24).arg(r.state, -14)
                     .arg(r.steps > 0 ? QString("%1/%2").arg(r.step).arg(r.steps) : QString("-"), -12)
                     .arg(r.accuracy >= 0 ? QString::number(r.accuracy * 100, 'f', 1) + "%" : QString("-"), -9).arg(r.detail);
    QStringList summary;
    for (const auto& [k, v] : count) summary << QString("%1 %2").arg(v).arg(k);
    out() << summary.join(", ") << "\n";
    return 0;
}

// sweep --slurm: the unfinished runs (not queued or running) submitted as one job array.
int submitToSlurm(SweepPlan plan, const ClusterProfile& profile)
{
    const QString name = plan.name, dir = plan.outDir;
    const SlurmSubmitted s = submitSweep(std::move(plan), profile, QCoreApplication::applicationFilePath());
    if (s.job.isEmpty()) {
        out() << "sweep " << name << ": nothing to submit (" << s.total - s.busy << " finished, " << s.busy << " queued or running)\n";
        return 0;
    }
    out() << "submitted " << s.runs.size() << " of " << s.total << " runs as Slurm job array " << s.job << " ("
          << (profile.name.isEmpty() ? QString() : profile.name + ": ") << profile.describe() << ")"
          << (s.busy == 0 ? QString() : QString("; %1 still queued or running").arg(s.busy))
          << "\nstatus: parrotscope sweep --status " << shellQuote(dir) << "\n";
    out() << s.job << "\n";
    return 0;
}

// sweep --print-commands: one independent command per unfinished run, for another scheduler.
int printRunCommands(const SweepPlan& plan, int todo)
{
    for (const SweepRun& r : plan.runs) {
        if (runStatus(r.runDir) == "finished") continue;
        QStringList words{shellQuote(QCoreApplication::applicationFilePath())};
        for (const QString& w : sweepRunArguments(r, 1)) words << shellQuote(w);
        out() << words.join(' ') << "\n";
    }
    QTextStream(stderr) << todo << " of " << plan.runs.size() << " runs to do; index: " << QDir(plan.outDir).filePath("index.json") << "\n";
    return 0;
}

// A thorough sweep's outcome: each model at its best rate, graded, and the rate each model got.
void printBestRates(const QString& dir)
{
    BestRates rates;
    const std::vector<RunRecord> runs = loadResultRuns(dir, &rates);
    const ResultsTable t = tabulate(runs, ResultPoint::InRange, rates.rateOfRunDir);
    if (!t.tasks.isEmpty()) out() << "\n" << t.toText();
    out() << "\n" << rates.toText();
}

// The unfinished runs here, `jobs` at a time, a line as each ends; exit code 2 when one failed.
int runHere(SweepRunner& runner, int todo, int jobs)
{
    const SweepPlan& plan = runner.plan();
    if (!plan.description.isEmpty()) out() << describeChanged(plan.description, plan.overrides) << "\n";
    out() << "sweep " << plan.name << ": " << plan.runs.size() << " runs, " << (plan.runs.size() - size_t(todo))
          << " already finished; " << jobs << " at a time, " << runner.threadsPerJob() << " threads each\n";
    if (plan.thorough) out() << "thorough: each model at " << plan.thorough->describe() << "\n";
    if (!plan.scale.isEmpty() && deviceDescription().startsWith("CPU"))
        out() << "note: the " << plan.scale << " scale is sized for a GPU and this machine trains on its CPU: "
              << "the description above says how long that takes\n";
    out().flush();
    QEventLoop loop;
    QObject::connect(&runner, &SweepRunner::runFinished, [&](const QString& name, const QString& status, double seconds) {
        const double eta = runner.elapsedSeconds() / runner.finishedCount() * (todo - runner.finishedCount());
        out() << QString("[%1/%2] %3: %4 in %5 s; ETA %6 s\n").arg(runner.finishedCount()).arg(todo).arg(name)
                     .arg(status.isEmpty() ? "failed (see logs/" + name + ".log)" : status)
                     .arg(seconds, 0, 'f', 1).arg(eta, 0, 'f', 0);
        out().flush();
    });
    QObject::connect(&runner, &SweepRunner::finished, &loop, &QEventLoop::quit);
    QTimer::singleShot(0, &runner, &SweepRunner::start);
    loop.exec();
    out() << "sweep " << plan.name << ": " << (plan.runs.size() - size_t(runner.failedCount())) << " of " << plan.runs.size()
          << " runs finished in " << QString::number(runner.elapsedSeconds(), 'f', 1) << " s; index: "
          << QDir(plan.outDir).filePath("index.json") << "\n";
    if (plan.thorough) printBestRates(plan.outDir);
    return runner.failedCount() == 0 ? 0 : 2;
}

// The sweep's modes that need no sweep file: a node's array task, --status and --cancel; -1 when
// the command line asks for none of them.
int sweepFolderMode(Args& a)
{
    const QString statusDir = a.value("--status"), cancelDir = a.value("--cancel");
    const bool json = a.flag("--json");
    const int slurmTask = a.integer("--slurm-task");
    const QString list = a.value("--list");
    if (slurmTask >= 0 || !list.isNull()) {
        a.done();
        if (slurmTask < 0 || list.isNull()) throw Error("sweep --slurm-task I --list FILE: both, as the batch script passes them");
        return runSlurmTask(slurmTask, list);
    }
    if (!statusDir.isNull()) {
        a.done();
        return printSweepStatus(statusDir, json);
    }
    if (!cancelDir.isNull()) {
        a.done();
        const QStringList jobs = cancelSweepJobs(cancelDir);
        out() << (jobs.isEmpty() ? QString("no job of %1 is queued or running").arg(cancelDir) : "cancelled Slurm jobs " + jobs.join(", ")) << "\n";
        return 0;
    }
    return -1;
}

}  // namespace

int cmdSweep(Args& a)
{
    if (const int code = sweepFolderMode(a); code >= 0) return code;
    const bool slurm = a.flag("--slurm");
    const QString saveAs = a.value("--save-cluster");
    const bool clusterOptions = slurm || !saveAs.isNull();
    ClusterProfile profile = clusterOptions ? profileFrom(a) : ClusterProfile{};
    const QString preset = a.value("--preset");
    const QString config = a.value("--config");
    const QString file = preset.isEmpty() ? config : sweepPresetFile(preset);
    const QString outDir = a.value("--out");
    const int jobs = a.integer("--jobs");
    const bool print = a.flag("--print-commands");
    const QStringList sets = a.values("--set");
    const bool thorough = a.flag("--thorough");
    const QString scale = a.value("--scale");
    a.done();
    if (!saveAs.isNull()) {
        profile.name = saveAs;
        saveClusterProfile(profile);
        out() << "saved cluster profile " << saveAs << " (" << profile.describe() << ") in " << clustersFile() << "\n";
        if (!slurm && file.isEmpty() && outDir.isEmpty()) return 0;
    }
    if (file.isEmpty() || outDir.isEmpty()) throw Error("sweep: --config SWEEP.json (or --preset NAME) and --out DIR are required");
    SweepPlan plan = loadSweep(file, outDir, {.thorough = thorough, .scale = scale});
    overrideSweep(plan, sets);
    if (slurm) {
        if (print || jobs != 1) throw Error("sweep --slurm: Slurm schedules the runs; leave out --jobs and --print-commands");
        return submitToSlurm(std::move(plan), profile);
    }
    SweepRunner runner(std::move(plan), QCoreApplication::applicationFilePath(), jobs);
    const int todo = runner.prepare();
    if (print) return printRunCommands(runner.plan(), todo);
    return runHere(runner, todo, jobs);
}

}  // namespace parrot
