#include "cli.h"

#include "args.h"

#include "core/analysis/inside.h"
#include "base/analysis/lookup.h"
#include "base/io/jsonfile.h"
#include "base/figurecatalog.h"
#include "figures/constructionfigure.h"
#include "figures/insidefigure.h"
#include "figures/mechanismplot.h"
#include "base/config.h"
#include "base/configfields.h"
#include "core/diagnostics.h"
#include "core/eval/lmtests.h"
#include "base/ablation.h"
#include "core/analysis/causal.h"
#include "figures/causalfigure.h"
#include "base/error.h"
#include "base/experiments/sweep.h"
#include "base/experiments/results.h"
#include "base/experiments/slurm.h"
#include "base/experiments/sweeprunner.h"
#include "figures/figures.h"
#include "base/io/checkpointinfo.h"
#include "base/io/runfolder.h"
#include "core/model.h"
#include "base/modelcatalog.h"
#include "base/presets.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "core/text/languagemodel.h"
#include "core/train/trainer.h"
#include "base/version.h"
#include "base/io/textfile.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSaveFile>
#include <QTextStream>
#include <QThread>

#include <qcustomplot.h>

#include <cmath>
#include <csignal>
#include <optional>
#include <random>

namespace parrot {

QTextStream& out()
{
    static QTextStream s(stdout);
    return s;
}

namespace {

QString seconds(double s)
{
    if (s >= 3600) return QString("%1h%2m").arg(int(s / 3600)).arg(int(s / 60) % 60, 2, 10, QChar('0'));
    if (s >= 60) return QString("%1m%2s").arg(int(s / 60)).arg(int(s) % 60, 2, 10, QChar('0'));
    return QString("%1s").arg(s, 0, 'f', 1);
}

QString curveLine(const LengthCurve& c)
{
    return c.summary();
}

ExperimentConfig experimentFrom(Args& a)
{
    const QString preset = a.value("--preset");
    const QString config = a.value("--config");
    ExperimentConfig c = resolveExperiment(preset, config);
    QStringList sets = a.values("--set");
    const QString steps = a.value("--steps");
    if (!steps.isNull()) sets << "train.steps=" + steps;
    const QString seed = a.value("--seed");
    if (!seed.isNull()) sets << "seed=" + seed;
    applyOverrides(c, sets);
    // --match-params N | FAMILY: the width at which this model has N parameters, or as many as
    // FAMILY has with the same settings.
    const QString match = a.value("--match-params");
    if (!match.isNull()) {
        bool number = false;
        long long target = match.toLongLong(&number);
        if (!number) {
            ExperimentConfig other = c;
            other.model.kind = match;
            const QStringList problems = validate(other);
            if (!problems.isEmpty()) throw Error(QString("--match-params %1: %2").arg(match, problems.join("; ")));
            target = Model::measure(other).parameters;
        }
        c = Model::matchParameters(c, target);
        QTextStream(stderr) << QString("matched: d_model %1 gives %2 parameters (target %3)\n")
                                   .arg(c.model.dModel).arg(Model::measure(c, Model::countingLimit(target)).parameters).arg(target);
    }
    return c;
}

TrainControl* g_control = nullptr;
void onSigint(int) { if (g_control) g_control->cancel = true; }

}  // namespace

int cmdTrain(Args& a)
{
    // --resume RUN_DIR [--steps N] [--extend-schedule] [--set train.KEY=VALUE]...: the run goes on
    const QString resumeDir = a.value("--resume");
    std::optional<ResumePlan> plan;
    ExperimentConfig c;
    QString outDir;
    if (!resumeDir.isNull()) {
        ResumeOptions o;
        o.extendSchedule = a.flag("--extend-schedule");
        o.sets = a.values("--set");
        const QString steps = a.value("--steps");
        if (!steps.isNull()) {
            bool ok = false;
            o.steps = steps.toLongLong(&ok);
            if (!ok || o.steps < 1) throw Error(QString("--steps: expected a positive number of steps, got \"%1\"").arg(steps));
        }
        if (!a.value("--out").isNull() || !a.value("--preset").isNull() || !a.value("--config").isNull() || !a.value("--seed").isNull())
            throw Error("train --resume: the run folder is its own output and holds its own settings; "
                        "leave out --out, --preset, --config and --seed");
        a.done();
        plan = planResume(resumeDir, o);
        c = plan->model.config();
        outDir = plan->runDir;
        out() << plan->description << "\n";
    } else {
        c = experimentFrom(a);
        outDir = a.value("--out");
        a.done();
        if (outDir.isEmpty()) throw Error("train: --out DIR is required (the run folder to write)");
        RunFolder::checkFree(outDir);  // before anything is printed or built
    }
    Model model = plan ? plan->model : Model::create(c);
    out() << "training " << model.summary() << "\n";
    const TaskInfo* info = findTask(c.task.kind);
    out() << "task: " << info->label << ", " << info->difficulty << " " << c.task.minLen << ".." << c.task.maxLen
          << ", rows of " << c.task.contextLen << " tokens; run folder " << QDir(outDir).absolutePath() << "\n";
    out().flush();

    TrainControl control;
    g_control = &control;
    // Ctrl+C, and SIGTERM (Slurm's scancel and time limit, a system shutting down): stop at the
    // step, write the resume file, so that train --resume (or the sweep again) goes on from there
    std::signal(SIGINT, onSigint);
    std::signal(SIGTERM, onSigint);
    TrainCallbacks cb;
    cb.progressIntervalMs = 1000;
    cb.progress = [](const TrainProgress& p) {
        out() << QString("step %1/%2  loss %3  lr %4  %5 tok/s  elapsed %6  ETA %7")
                     .arg(p.step).arg(p.totalSteps).arg(p.loss, 0, 'f', 4).arg(p.lr, 0, 'e', 2)
                     .arg(p.tokensPerSecond, 0, 'f', 0).arg(seconds(p.elapsedSeconds), seconds(p.etaSeconds))
              << "\n";
        out().flush();
    };
    cb.evaluated = [](const LengthCurve& cv) {
        out() << "eval step " << cv.step << ": " << curveLine(cv) << "\n";
        out().flush();
    };
    cb.log = [](const QString& s) { out() << s << "\n"; out().flush(); };
    const TrainOutcome o = plan ? resumeTraining(*plan, control, cb) : train(model, outDir, control, cb);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    g_control = nullptr;
    if (o.status == TrainOutcome::Status::Failed) throw Error(o.message);
    out() << statusName(o.status) << ": " << o.message << "\n";
    if (!o.checkpoint.isEmpty()) out() << "checkpoint: " << o.checkpoint << "\n";
    out().flush();
    return o.status == TrainOutcome::Status::Finished ? 0 : (o.status == TrainOutcome::Status::Cancelled ? 130 : 2);
}

int cmdEval(Args& a)
{
    const QString path = a.value("--checkpoint");
    const QString lengthsText = a.value("--lengths");
    const int samples = a.integer("--samples", 0, 1, 1000000);
    const int seed = a.integer("--seed", 1234, 0, 2147483647);
    const bool json = a.flag("--json");
    a.done();
    if (path.isEmpty()) throw Error("eval: --checkpoint FILE is required");
    const std::vector<int> requested = lengthsText.isEmpty() ? std::vector<int>{} : parseLengthList(lengthsText, "--lengths");
    const Model model = Model::load(path);
    const std::vector<int> lengths = requested.empty() ? evaluationLengths(model.config().task) : requested;
    const LengthCurve c = model.evaluate(lengths, samples > 0 ? samples : model.config().task.evalSamples, unsigned(seed));
    const TaskInfo* info = findTask(model.config().task.kind);
    if (json) {  // the one JSON form of a curve (lengthCurveJson, as run folders' curves.json), with its task and file
        QJsonObject o = lengthCurveJson(c);
        o.insert("task", model.config().task.kind);
        o.insert("checkpoint", QFileInfo(path).absoluteFilePath());
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    if (c.isError()) {  // in-context regression: error after each number of examples, and the baselines
        out() << model.summary() << "\n";
        out() << "task: " << info->label << "; squared error / dimension after each number of in-context examples\n";
        QString head = QString("%1  %2").arg("examples", 8).arg("model", 15);
        for (const QString& n : c.baselineNames) head += QString("  %1").arg(n, 13);
        out() << head << "\n";
        for (size_t i = 0; i < c.lengths.size(); ++i) {
            QString row = QString("%1  %2 +- %3").arg(c.lengths[i], 8).arg(c.error[i], 7, 'f', 3).arg(c.errorStdErr[i], 5, 'f', 3);
            for (size_t b = 0; b < c.baselineNames.size(); ++b) row += QString("  %1").arg(c.baselineError[b][i], 13, 'f', 3);
            out() << row << "\n";
        }
        out() << "(" << c.samples << " prompts)\n";
        return 0;
    }
    {
        out() << model.summary() << "\n";
        out() << "task: " << info->label << "; accuracy of whole answers and of answer tokens, +- one standard error\n";
        out() << QString("%1  %2  %3\n").arg(info->difficulty, 16).arg("answer acc", 16).arg("token acc", 16);
        for (size_t i = 0; i < c.lengths.size(); ++i)
            out() << QString("%1  %2% +- %3  %4% +- %5\n").arg(c.lengths[i], 16)
                         .arg(100 * c.stringAccuracy[i], 6, 'f', 1).arg(100 * c.stringStdErr[i], 4, 'f', 1)
                         .arg(100 * c.charAccuracy[i], 6, 'f', 1).arg(100 * c.charStdErr[i], 4, 'f', 1);
        out() << "(" << c.samples << " examples at each point)\n";
    }
    return 0;
}

namespace {

QString roleName(Role r)
{
    switch (r) {
    case Role::Pad: return "pad";
    case Role::Prompt: return "prompt";
    case Role::Separator: return "separator";
    case Role::Query: return "query";
    case Role::Answer: return "answer";
    case Role::End: return "end";
    }
    return "?";
}

}  // namespace

int cmdTasks(Args& a)
{
    const bool json = a.flag("--json");
    a.done();
    QJsonArray all;
    for (const TaskInfo& t : taskCatalog()) {
        ExperimentConfig c;  // the task's own laptop-scale defaults, as the window loads them
        c.task = taskDefaults(t.id);
        const QJsonObject defaultsJson = toJson(c)["task"].toObject();
        QJsonObject options;
        QStringList keys = {"min_len", "max_len", "context_len", "eval_lengths", "eval_samples"};
        if (!t.characters && !t.vectors) keys.prepend("vocab_size");
        keys += t.options;
        for (const QString& k : keys) options.insert(k, defaultsJson[k]);
        all.append(QJsonObject{{"kind", t.id}, {"label", t.label}, {"description", t.description},
                               {"difficulty", t.difficulty}, {"character_vocabulary", t.characters},
                               {"inputs", t.vectors ? "vectors" : "tokens"}, {"options", options}});
    }
    if (json) {
        out() << QJsonDocument(all).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto v : all) {
        const QJsonObject t = v.toObject();
        out() << QString("%1  %2\n").arg(t["kind"].toString(), -15).arg(t["description"].toString());
        QStringList opts;
        for (const QString& k : t["options"].toObject().keys())
            if (findTask(t["kind"].toString())->options.contains(k) || k == "vocab_size")
                opts << QString("%1=%2").arg(k, QString::fromUtf8(QJsonDocument(QJsonArray{t["options"].toObject()[k]}).toJson(QJsonDocument::Compact)).mid(1).chopped(1));
        out() << QString(17, ' ') << "min_len/max_len count: " << t["difficulty"].toString()
              << (opts.isEmpty() ? QString() : "; options: " + opts.join(" ")) << "\n";
    }
    out() << "choose one with --set task.kind=KIND; parrotscope sample --task KIND shows examples\n";
    return 0;
}

namespace {

// In-context prompts: one line per pair, x then y (scored pairs marked), or JSON.
int printVectorSamples(const TaskConfig& t, int count, int length, std::mt19937_64& rng, bool json)
{
    const std::unique_ptr<IclTask> task = IclTask::create(t);
    const int pairs = length > 0 ? length : std::uniform_int_distribution<int>(t.minLen, t.maxLen)(rng);
    const std::vector<IclPrompt> ps = task->prompts(count, pairs, rng);
    auto numbers = [](const float* v, int n) {
        QStringList s;
        for (int i = 0; i < n; ++i) s << QString::number(v[i], 'f', 2);
        return s;
    };
    QJsonArray all;
    for (const IclPrompt& p : ps) {
        if (json) {
            QJsonArray xs, ys, scored;
            for (int i = 0; i < p.pairs; ++i) {
                QJsonArray x, y;
                for (const QString& v : numbers(&p.x[size_t(i) * p.d], p.d)) x.append(v.toDouble());
                for (const QString& v : numbers(&p.y[size_t(i) * p.dOut], p.dOut)) y.append(v.toDouble());
                xs.append(x);
                ys.append(y);
                scored.append(bool(p.scored[size_t(i)]));
            }
            all.append(QJsonObject{{"x", xs}, {"y", ys}, {"scored", scored}});
            continue;
        }
        out() << QString("prompt of %1 pairs (d %2; * = scored: predicted from the pairs before it)\n").arg(p.pairs).arg(p.d);
        for (int i = 0; i < p.pairs; ++i)
            out() << QString("  %1 %2  x = [%3]  y = %4\n").arg(p.scored[size_t(i)] ? "*" : " ").arg(i + 1, 3)
                         .arg(numbers(&p.x[size_t(i) * p.d], p.d).join(" "))
                         .arg(p.dOut == 1 ? numbers(&p.y[size_t(i)], 1).join("") : "[" + numbers(&p.y[size_t(i) * p.dOut], p.dOut).join(" ") + "]");
    }
    if (json) out() << QJsonDocument(all).toJson(QJsonDocument::Compact) << "\n";
    return 0;
}

}  // namespace

int cmdSample(Args& a)
{
    const QString taskName = a.value("--task");
    ExperimentConfig c;
    if (!taskName.isNull()) {
        if (!a.value("--preset").isNull() || !a.value("--config").isNull())
            throw Error("sample: give --task, or --preset / --config, not both");
        if (!findTask(taskName)) throw Error(QString("--task: unknown task \"%1\" (see parrotscope tasks)").arg(taskName));
        c = loadPreset(defaultPresetName());
        c.task = taskDefaults(taskName);
        applyOverrides(c, a.values("--set"));
    } else {
        c = experimentFrom(a);
    }
    const int count = a.integer("--count", 3, 1, 10000);
    const int length = a.integer("--length", 0, 1, 100000);
    const int seed = a.integer("--seed", 1, 0, 2147483647);
    const bool json = a.flag("--json");
    a.done();
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    if (isVectorTask(c.task.kind)) return printVectorSamples(c.task, count, length, rng, json);
    const std::unique_ptr<TokenTask> task = TokenTask::create(c.task);
    const bool characters = findTask(c.task.kind)->characters;
    QJsonArray all;
    for (int i = 0; i < count; ++i) {
        const Example e = length > 0 ? task->example(length, rng) : task->example(rng);
        if (json) {
            QJsonArray ids, text, roles;
            for (size_t k = 0; k < e.tokens.size(); ++k) {
                ids.append(e.tokens[k]);
                text.append(task->text(e.tokens[k]));
                roles.append(roleName(e.roles[k]));
            }
            all.append(QJsonObject{{"tokens", ids}, {"text", text}, {"roles", roles}});
            continue;
        }
        // The example, then the answer alone: letters spaced, characters run together.
        const QString sep = characters ? "" : " ";
        QStringList whole, answer;
        for (size_t k = 0; k < e.tokens.size(); ++k) {
            whole << task->text(e.tokens[k]);
            if (e.roles[k] == Role::Answer) answer << task->text(e.tokens[k]);
        }
        auto plain = [&](const QStringList& parts) { return parts.join(sep).replace(QString::fromUtf8("\u2423"), " "); };
        out() << plain(whole) << "\n" << "  answer: " << plain(answer) << "\n";
    }
    if (json) out() << QJsonDocument(all).toJson(QJsonDocument::Compact) << "\n";
    return 0;
}

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
            Args train({"--resume", r.runDir});
            return cmdTrain(train);
        }
        if (QFileInfo::exists(r.runDir) && !QDir(r.runDir).removeRecursively()) throw Error(QString("%1: cannot clear the unfinished run").arg(r.runDir));
        Args train({"--config", r.configPath, "--out", r.runDir});
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
    p.cpusPerTask = a.integer("--cpus-per-task", p.cpusPerTask, 1, 1024);
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

}  // namespace

int cmdSweep(Args& a)
{
    const QString statusDir = a.value("--status"), cancelDir = a.value("--cancel");
    const bool json = a.flag("--json");
    const int slurmTask = a.integer("--slurm-task", -1, 0, 10000000);
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
    const bool slurm = a.flag("--slurm");
    const QString saveAs = a.value("--save-cluster");
    const bool clusterOptions = slurm || !saveAs.isNull();
    const ClusterProfile profile0 = clusterOptions ? profileFrom(a) : ClusterProfile{};
    const QString preset = a.value("--preset");
    const QString config = a.value("--config");
    const QString file = preset.isEmpty() ? config : sweepPresetFile(preset);
    const QString outDir = a.value("--out");
    const int jobs = a.integer("--jobs", 1, 1, 256);
    const bool print = a.flag("--print-commands");
    const QStringList sets = a.values("--set");
    a.done();
    ClusterProfile profile = profile0;
    if (!saveAs.isNull()) {
        profile.name = saveAs;
        saveClusterProfile(profile);
        out() << "saved cluster profile " << saveAs << " (" << profile.describe() << ") in " << clustersFile() << "\n";
        if (!slurm && file.isEmpty() && outDir.isEmpty()) return 0;
    }
    if (file.isEmpty() || outDir.isEmpty()) throw Error("sweep: --config SWEEP.json (or --preset NAME) and --out DIR are required");
    SweepPlan plan0 = loadSweep(file, outDir);
    overrideSweep(plan0, sets);
    if (slurm) {
        if (print || jobs != 1) throw Error("sweep --slurm: Slurm schedules the runs; leave out --jobs and --print-commands");
        const QString name = plan0.name, dir = plan0.outDir;
        const SlurmSubmitted s = submitSweep(std::move(plan0), profile, QCoreApplication::applicationFilePath());
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
    SweepRunner runner(std::move(plan0), QCoreApplication::applicationFilePath(), jobs);
    const int todo = runner.prepare();
    const SweepPlan& plan = runner.plan();
    if (print) {
        for (const SweepRun& r : plan.runs) {
            if (runStatus(r.runDir) == "finished") continue;
            QStringList words{shellQuote(QCoreApplication::applicationFilePath())};
            for (const QString& w : sweepRunArguments(r, 1)) words << shellQuote(w);
            out() << words.join(' ') << "\n";
        }
        QTextStream(stderr) << todo << " of " << plan.runs.size() << " runs to do; index: "
                            << QDir(plan.outDir).filePath("index.json") << "\n";
        return 0;
    }
    if (!plan.description.isEmpty()) out() << describeChanged(plan.description, plan.overrides) << "\n";
    out() << "sweep " << plan.name << ": " << plan.runs.size() << " runs, " << (plan.runs.size() - size_t(todo))
          << " already finished; " << jobs << " at a time, " << runner.threadsPerJob() << " threads each\n";
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
    return runner.failedCount() == 0 ? 0 : 2;
}


// "WIDTHxHEIGHT" in points (1/72 inch, every format), or the defaults when empty.
std::pair<int, int> parseSize(const QString& size, int width, int height)
{
    if (size.isEmpty()) return {width, height};
    const QStringList wh = size.split('x');
    bool ok1 = false, ok2 = false;
    if (wh.size() == 2) {
        width = wh[0].toInt(&ok1);
        height = wh[1].toInt(&ok2);
    }
    if (!ok1 || !ok2) throw Error(QString("--size: expected WIDTHxHEIGHT in points, got \"%1\"").arg(size));
    return {width, height};
}

// --dpi, --font-size and --line-width of every figure command.
ExportOptions figureStyle(Args& a)
{
    ExportOptions o;
    o.dpi = a.integer("--dpi", o.dpi, 36, 1200);
    o.fontPt = a.number("--font-size", 0, 1, 72);
    o.lineWidth = a.number("--line-width", 0, 0.1, 20);
    return o;
}

namespace {

// The copy paper's construction measured against its bound (inspect --construction --figure construction).
void renderConstructionFigure(int n, int letters, const std::vector<int>& lengths, int samples, const QString& outFile, int width, int height,
                              const ExportOptions& style)
{
    checkFigureFile(outFile, width, height);
    ConstructionCurves c{letters, {}, {}};
    for (int k = std::max(1, n - 3); k <= n; ++k) {
        c.orders.push_back(k);
        c.curves.push_back(CopyConstruction({k, letters}).evaluate(lengths, samples, 1));
    }
    QCustomPlot plot;
    plot.setBackground(Qt::white);
    plot.resize(layoutSize(width, height));
    const QString csv = drawConstruction(plot, c);
    savePlot(plot, outFile, width, height, "two-layer copy construction", csv, style);
    for (size_t i = 0; i < c.orders.size(); ++i) out() << "n = " << c.orders[i] << ": " << c.curves[i].summary() << "\n";
}

}  // namespace

// Attention heads of a copy model on one input, or of a pretrained language model on a text
// prompt: n-gram lookup scores and labels (base/analysis/lookup.h).
// inspect --ablate: the predictions with and without the heads, side by side.
int printAblation(const InsideSubject& s, const std::vector<int>& tokens, const QString& text, const HeadAblation& ablation, bool json,
                  const TaskInput* task)
{
    const auto scoreOf = [&](const std::vector<int>& predictions) {
        return task ? InsideSubject::score(*task, predictions) : s.score(tokens, predictions);
    };
    // what each position should produce: a task example's answers (MQAR reads filler in their place)
    const std::vector<int>& expected = task ? task->example.tokens : tokens;
    const std::vector<int> plain = s.predictions(tokens);
    const CopyScore before = scoreOf(plain);
    const LanguageModel* lm = s.languageModel();
    const QString continuation = lm ? lm->generate(text, 16).text : QString();
    std::vector<int> cut;
    QString cutContinuation;
    {
        const SubjectHeadsOff off(s, ablation);
        cut = s.predictions(tokens);
        if (lm) cutContinuation = lm->generate(text, 16).text;
    }
    const CopyScore after = scoreOf(cut);
    const ModelProbes labels = s.probe(tokens);
    const std::unique_ptr<TokenTask> taskText = task ? TokenTask::create(evaluationTask(s.model().config().task)) : nullptr;
    const auto label = [&](int id) {
        if (lm) return lm->tokenizer.decode({id}, true).replace('\n', "\\n");
        if (taskText) return id >= 0 && id < taskText->vocabSize() ? taskText->text(id) : QString::number(id);
        return id >= 0 && id < CopyVocab{s.letters()}.size() ? CopyVocab{s.letters()}.text(id) : QString::number(id);
    };
    // the positions that are scored: where a prediction that is never right counts as wrong
    const CopyScore scored = scoreOf(std::vector<int>(tokens.size(), -1));
    const QString off = ablation.heads.size() == 1 ? "the head" : "the heads";
    const auto shown = [](QString t) { return t.replace('\n', "\\n").replace('\r', "\\r"); };
    QJsonArray changed;
    QStringList lines;
    for (size_t t = 0; t < after.wrong.size(); ++t) {
        if (plain[t] == cut[t] || t + 1 >= tokens.size() || t >= scored.wrong.size() || !scored.wrong[t]) continue;
        const int want = task && task->readsOut ? expected[t] : expected[t + 1];
        changed.append(QJsonObject{{"position", int(t)}, {"expected", label(want)}, {"plain", label(plain[t])},
                                   {"ablated", label(cut[t])}, {"right_before", !before.wrong[t]}, {"right_after", !after.wrong[t]}});
        lines << QString("  %1  %2 -> expected %3, predicts %4 %5, with %6 off %7 %8")
                     .arg(t, 4).arg(t < labels.tokens.size() ? labels.tokens[t] : QString(), label(want), label(plain[t]), before.wrong[t] ? "✗" : "✓",
                          off, label(cut[t]), after.wrong[t] ? "✗" : "✓");
    }
    QJsonArray heads;
    for (const auto& [l, h] : ablation.heads) heads.append(QString("%1.%2").arg(l).arg(h));
    if (json) {
        QJsonObject o{{"ablation", QJsonObject{{"method", ablationMethodName(ablation.method)}, {"heads", heads}}},
                      {"answers", before.answers}, {"right", before.right}, {"right_ablated", after.right}, {"changed", changed}};
        if (lm) o["continuation"] = continuation, o["continuation_ablated"] = cutContinuation;
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    out() << s.name() << ": " << ablation.describe() << " (a forward-time mask; the weights are untouched)\n";
    out() << QString("%1 %2 of %3 %4; with %5 off %6 of %3\n")
                 .arg(lm ? "predicts" : task ? "answers" : "copies").arg(before.right).arg(before.answers)
                 .arg(lm ? "copyable tokens (the next token after a repeated n-gram)" : "answer tokens", off).arg(after.right);
    if (!lines.isEmpty()) out() << "answers that change:\n" << lines.join('\n') << "\n";
    if (lm) out() << "greedy continuation: " << shown(continuation) << "\n" << QString("with %1 off: ").arg(off).leftJustified(21) << shown(cutContinuation) << "\n";
    return 0;
}

// inspect --head-importance: each head switched off alone, the drops sorted.
int printHeadImportance(const InsideSubject& s, const HeadImportanceRequest& r, bool json, const QString& outFile, int width, int height,
                        const ExportOptions& style)
{
    const HeadImportance hi = measureHeadImportance(s, r);
    if (!outFile.isEmpty()) renderHeadImportance(hi, outFile, width, height, style);
    if (json) {
        QJsonArray rows;
        for (const HeadImportanceRow& h : hi.rows)
            rows.append(QJsonObject{{"layer", h.layer}, {"head", h.head}, {"label", h.label}, {"order", h.order}, {"lookup", h.lookup},
                                    {"answer_accuracy", h.answer}, {"answer_stderr", h.answerErr}, {"answer_drop", h.answerDrop},
                                    {"answer_drop_stderr", h.answerDropErr}, {"token_accuracy", h.token}, {"token_stderr", h.tokenErr},
                                    {"token_drop", h.tokenDrop}, {"token_drop_stderr", h.tokenDropErr}});
        QJsonObject o{{"subject", hi.subject}, {"task", hi.task}, {"length", hi.length}, {"samples", hi.samples},
                      {"seed", QString::number(hi.seed)}, {"method", hi.method}, {"layers", hi.layers}, {"heads", hi.heads},
                      {"answer_accuracy", hi.answer}, {"answer_stderr", hi.answerErr}, {"token_accuracy", hi.token},
                      {"token_stderr", hi.tokenErr}, {"rows", rows}};
        if (!outFile.isEmpty()) o["figure"] = QFileInfo(outFile).absoluteFilePath();
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    out() << QString("%1: %2 at length %3, %4 examples (seed %5); each head %6 alone\n")
                 .arg(hi.subject, hi.task).arg(hi.length).arg(hi.samples).arg(hi.seed).arg(hi.method == "zero" ? "zeroed" : "replaced by its mean");
    out() << QString("full model: answers %1% ± %2, tokens %3% ± %4\n")
                 .arg(hi.answer * 100, 0, 'f', 1).arg(hi.answerErr * 100, 0, 'f', 1).arg(hi.token * 100, 0, 'f', 1).arg(hi.tokenErr * 100, 0, 'f', 1);
    out() << "head   answer drop        token drop         lookup  label\n";
    for (const HeadImportanceRow& h : hi.rows)
        out() << QString("%1  %2 ± %3  %4 ± %5  %6  %7\n")
                     .arg(QString("%1.%2").arg(h.layer).arg(h.head), -5)
                     .arg(QString::number(h.answerDrop * 100, 'f', 1) + "%", 7).arg(QString::number(h.answerDropErr * 100, 'f', 1) + "%", -7)
                     .arg(QString::number(h.tokenDrop * 100, 'f', 1) + "%", 7).arg(QString::number(h.tokenDropErr * 100, 'f', 1) + "%", -7)
                     .arg(h.label.isEmpty() ? QString("–") : QString::number(h.lookup, 'f', 2), 6).arg(h.label);
    if (!outFile.isEmpty()) out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
    return 0;
}

// inspect --state-sweep: accuracy against length for each state setting, beside its bound.
int printStateSweep(const StateSweep& sw, bool json, const QString& outFile, int width, int height, const ExportOptions& style)
{
    if (!outFile.isEmpty()) renderStateSweep(sw, outFile, width, height, style);
    if (json) {
        QJsonArray points;
        for (const StateSweepPoint& p : sw.points) {
            QJsonArray lengths, acc, tok;
            for (size_t i = 0; i < p.curve.lengths.size(); ++i)
                lengths.append(p.curve.lengths[i]), acc.append(p.curve.stringAccuracy[i]), tok.append(p.curve.charAccuracy[i]);
            points.append(QJsonObject{{"setting", p.label}, {"state_bits", p.stateBits}, {"bound_length", p.boundLength},
                                      {"longest_copied", p.longestCopied}, {"lengths", lengths}, {"answer_accuracy", acc}, {"token_accuracy", tok}});
        }
        QJsonObject o{{"subject", sw.subject}, {"mode", sw.mode}, {"task", sw.task}, {"alphabet", sw.vocab}, {"samples", sw.samples},
                      {"seed", QString::number(sw.seed)}, {"points", points}};
        if (!outFile.isEmpty()) o["figure"] = QFileInfo(outFile).absoluteFilePath();
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    const QLocale en(QLocale::English);
    out() << QString("%1: state sweep (%2) on %3, %4 examples a length\n").arg(sw.subject, sw.mode, sw.task).arg(sw.samples);
    out() << "setting                        state bits   bound L   longest copied (>= 90%)   accuracy\n";
    for (const StateSweepPoint& p : sw.points)
        out() << QString("%1 %2 %3 %4   %5\n").arg(p.label, -30).arg(en.toString(p.stateBits, 'f', 0), 10)
                     .arg(p.boundLength > 0 ? en.toString(p.boundLength, 'f', 0) : QString("–"), 9).arg(p.longestCopied, 14)
                     .arg(p.curve.summary());
    if (!outFile.isEmpty()) out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
    return 0;
}

int cmdInspect(Args& a)
{
    const QString path = a.value("--checkpoint");
    const QString bundled = a.value("--bundled");
    const QString modelDir = a.value("--model");
    const QString prompt = a.value("--prompt");
    const QString lmTest = a.value("--lm-test");
    const int constructionN = a.integer("--construction", 0, 1, 8);
    const int letters = a.integer("--letters", 26, 2, 52);
    const QString input = a.value("--input");
    const int length = a.integer("--length", 0, 1, 4000);
    const int seed = a.integer("--seed", 1, 0, 2147483647);
    const bool duplicated = a.flag("--repeat-ngram");
    const bool json = a.flag("--json");
    const QString figure = a.value("--figure");
    const QString outFile = a.value("--out");
    const int layer = a.integer("--layer", -1, 0, 1000);
    const int head = a.integer("--head", -1, 0, 1000);
    const bool logScale = a.flag("--log");
    const auto [width, height] = parseSize(a.value("--size"), 900, 800);
    const ExportOptions style = figureStyle(a);
    const QString lengthsText = a.value("--lengths");
    const int samples = a.integer("--samples", 100, 1, 100000);
    const QString ablate = a.value("--ablate"), ablationMethod = a.value("--ablation");
    const bool importance = a.flag("--head-importance");
    const QString importanceTask = a.value("--task");
    const QString sweepMode = a.value("--state-sweep");
    const QString sweepValues = a.value("--values");
    a.done();
    if (importance && !sweepMode.isNull()) throw Error("inspect: --head-importance and --state-sweep are two runs; give one");
    if ((importance || !sweepMode.isNull()) && (!ablate.isNull() || !figure.isEmpty()))
        throw Error("inspect: --head-importance and --state-sweep draw their own figure with --out; leave out --ablate and --figure");
    if (!importanceTask.isNull() && !importance) throw Error("inspect: --task is for --head-importance");
    if (!sweepValues.isNull() && sweepMode.isNull()) throw Error("inspect: --values is for --state-sweep dims|channels|bits");
    if (!sweepMode.isNull() && outFile.isEmpty() && !json) throw Error("inspect --state-sweep: give --out FILE (.png, .pdf, .svg or .csv) or --json");
    if (!outFile.isEmpty() && (importance || !sweepMode.isNull())) checkFigureFile(outFile, width, height);
    HeadAblation ablation;
    if (!ablate.isNull()) {
        ablation.heads = parseHeadList(ablate);
        ablation.method = ablationMethod.isNull() ? HeadAblation::Method::Zero : ablationMethodFromName(ablationMethod);
    } else if (!ablationMethod.isNull() && !importance) {
        throw Error("inspect: --ablation zero|mean needs --ablate LAYER.HEAD[,LAYER.HEAD...] or --head-importance");
    }
    if (int(!path.isEmpty()) + int(!bundled.isEmpty()) + int(constructionN > 0) + int(!modelDir.isEmpty()) != 1)
        throw Error("inspect: give one of --checkpoint FILE, --bundled hard-alibi|mamba, --construction N, --model DIR");
    if (modelDir.isEmpty() && (!prompt.isNull() || !lmTest.isEmpty()))
        throw Error("inspect: --prompt and --lm-test are for a pretrained model's folder (--model DIR)");
    if (!modelDir.isEmpty() && !importance && int(!prompt.isNull()) + int(!lmTest.isEmpty()) != 1)
        throw Error("inspect --model: give the text, --prompt TEXT, or one of the zero-shot tests' prompts, --lm-test "
                    "phonebook|copy-text|shuffled-text [--length L] [--seed S]");
    if (!lmTest.isEmpty()) checkLmTest(lmTest);
    if (!figure.isEmpty() && outFile.isEmpty()) throw Error("inspect: --figure needs --out FILE (.png, .pdf, .svg or .csv)");
    if (figure.isEmpty() && !outFile.isEmpty() && !importance && sweepMode.isNull())
        throw Error("inspect: --out needs --figure " + figureIds(InspectFigure).join('|'));
    if (!figure.isEmpty()) checkFigure(figure, InspectFigure);
    InsideSubject subject;
    if (constructionN > 0) {
        subject = InsideSubject(ConstructionOptions{constructionN, letters});
    } else if (!bundled.isEmpty()) {
        try {
            const BundledCheckpoint& b = findBundled(bundled);
            subject = InsideSubject::load(b.path, b.label);
        } catch (const Error& e) {
            throw Error("--bundled: " + e.message());
        }
    } else if (!modelDir.isEmpty()) {
        subject = InsideSubject::loadLanguageModel(modelDir);
    } else {
        subject = InsideSubject::load(path);
    }
    if (!ablation.isEmpty()) {
        if (figure == "capacity") throw Error("inspect --ablate: --figure capacity measures the model as trained; draw a look-inside figure instead");
        if (figure == "construction") throw Error("inspect --ablate: --figure construction draws the construction as designed; draw a look-inside figure instead");
        const QString why = subject.ablationProblem(ablation);
        if (!why.isEmpty()) throw Error("inspect --ablate: " + why);
    }
    if (importance) {
        HeadImportanceRequest r;
        r.task = importanceTask;
        r.length = length;
        r.samples = samples;
        r.seed = static_cast<unsigned long long>(seed);
        r.method = ablationMethod.isNull() ? HeadAblation::Method::Zero : ablationMethodFromName(ablationMethod);
        return printHeadImportance(subject, r, json, outFile, width, height, style);
    }
    if (!sweepMode.isNull()) {
        if (subject.isConstruction() || subject.readsText())
            throw Error("inspect --state-sweep: needs a trained state-space model (--checkpoint FILE or --bundled mamba)");
        const StateShrink::Mode mode = stateShrinkModeFromName(sweepMode);
        std::vector<StateShrink> settings;
        for (const QString& v : sweepValues.split(',', Qt::SkipEmptyParts)) {
            bool ok = false;
            const double x = v.trimmed().toDouble(&ok);
            if (!ok) throw Error(QString("--values: '%1' is not a number").arg(v.trimmed()));
            if (mode == StateShrink::Mode::Channels) settings.push_back(StateShrink::keepChannels(x));
            else if (x != std::floor(x)) throw Error(QString("--values: '%1' is not a whole number").arg(v.trimmed()));
            else settings.push_back(mode == StateShrink::Mode::Dims ? StateShrink::keepDims(int(x)) : StateShrink::quantise(int(x)));
        }
        const std::vector<int> lengths = lengthsText.isEmpty() ? std::vector<int>{} : parseLengthList(lengthsText, "--lengths");
        const StateSweep sw = measureStateSweep(subject.model(), subject.name(), mode, settings, lengths, samples, static_cast<unsigned long long>(seed));
        return printStateSweep(sw, json, outFile, width, height, style);
    }
    if (figure == "construction") {
        if (!subject.isConstruction()) throw Error("--figure construction: needs --construction N (the n-gram order)");
        const std::vector<int> lengths = parseLengthList(lengthsText.isEmpty() ? QString("10,25,50,100,150,200") : lengthsText, "--lengths");
        renderConstructionFigure(constructionN, letters, lengths, samples, outFile, width, height, style);
        out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
        return 0;
    }
    if (figure == "capacity") {
        if (subject.isConstruction()) throw Error("--figure capacity: needs a trained model (its state size), not the construction");
        if (subject.readsText()) throw Error("--figure capacity: needs a copy model; for a pretrained one, `parrotscope lm-eval`");
        RunRecord run;
        run.dir = subject.name();
        run.config = subject.model().config();
        run.curves.push_back(subject.model().evaluate(evaluationLengths(run.config.task), samples, static_cast<unsigned long long>(seed)));
        run.status = "finished";
        renderComparison({run}, "capacity", outFile, width, height, {}, style);
        out() << subject.name() << ": " << run.curves.back().summary() << "\n";
        out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
        return 0;
    }
    // a model of another token task than copying (MQAR, n-gram lookup, MAD's) reads an example of its task
    std::optional<TaskInput> task;
    if (!subject.isConstruction() && !subject.readsText() && !subject.copyProblem().isEmpty()) {
        if (!input.isNull()) throw Error("inspect --input: " + subject.copyProblem().section(':', 0, 0) + "; give --length L --seed S for an example of its task");
        if (duplicated) throw Error("inspect --repeat-ngram: a copy input's option; this model was trained on " + subject.model().config().task.kind);
        task = subject.taskInput(length > 0 ? length : evaluationTask(subject.model().config().task).maxLen, static_cast<unsigned long long>(seed));
    }
    const QString problem = task ? QString() : subject.inputProblem(subject.readsText());
    if (!problem.isEmpty()) throw Error("inspect: " + problem);
    std::vector<int> tokens;
    QString expected;  // a zero-shot test's answer
    QString text = prompt;
    if (task) {
        tokens = task->tokens;
    } else if (const LanguageModel* lm = subject.languageModel()) {
        if (!lmTest.isEmpty()) {
            std::mt19937_64 rng(static_cast<unsigned long long>(seed));
            const LmPrompt p = makeLmPrompt(lmTest, length > 0 ? length : 10, lm->tokenizer, rng);
            text = lm->tokenizer.decode(p.ids);
            expected = p.answer;
        }
        tokens = subject.encode(text);
    } else if (!input.isNull()) {
        tokens = copyInput(input, subject.letters());
    } else {
        const int len = length > 0 ? length : subject.isConstruction() ? 40 : subject.model().config().task.maxLen;
        tokens = randomCopyInput(len, subject.letters(), static_cast<unsigned long long>(seed), duplicated ? "copy_dup_ngram" : "copy", 3);
    }
    const TaskInput* example = task ? &*task : nullptr;
    if (!ablation.isEmpty() && figure.isEmpty()) return printAblation(subject, tokens, text, ablation, json, example);
    if (!figure.isEmpty()) {
        std::optional<SubjectHeadsOff> off;  // a figure of the model with the heads switched off
        if (!ablation.isEmpty()) off.emplace(subject, ablation);
        out() << "wrote " << renderInside(lookInside(subject, tokens, example), InsideFigureRequest{figure, layer, head, logScale, width, height, style}, outFile) << "\n";
        return 0;
    }
    const QString architecture = subject.architecture();
    const ModelProbes probes = subject.probe(tokens);
    QJsonArray labels;
    for (const QString& t : probes.tokens) labels.append(t);
    // a language model: what it predicts where a lookup could copy, and what it answers
    QJsonObject answer;
    if (const LanguageModel* lm = subject.languageModel()) {
        const CopyScore sc = subject.score(tokens, probes.predictions);
        answer = QJsonObject{{"copyable_tokens", sc.answers}, {"copyable_right", sc.right},
                             {"continuation", lm->generate(text, 16).text}};
        if (!expected.isEmpty()) answer["expected"] = expected;
        if (!json) {
            out() << QString("%1 tokens; predicts %2 of the %3 copyable tokens (the next token after a %4-gram seen once before)\n")
                         .arg(tokens.size()).arg(sc.right).arg(sc.answers).arg(kTextCopyOrder);
            out() << "greedy continuation: " << QJsonValue(answer["continuation"]).toString().replace('\n', "\\n") << "\n";
            if (!expected.isEmpty()) out() << "expected: " << expected << "\n";
        }
    }
    const auto withAnswer = [&answer](QJsonObject o) {
        if (!answer.isEmpty()) o["answer"] = answer;
        return o;
    };
    if (probes.attention.layers == 0) {
        if (json) {
            out() << QJsonDocument(withAnswer({{"tokens", labels}, {"heads", QJsonArray()},
                                               {"note", "no attention heads: " + architecture}}))
                         .toJson(QJsonDocument::Compact) << "\n";
        } else {
            out() << "no attention heads in this model (" << architecture << "); try --figure implicit or --figure state\n";
        }
        return 0;
    }
    const auto [begin, end] = task ? InsideSubject::lookupQueries(*task) : subject.lookupQueries(tokens);
    const LookupAnalysis an = analyseLookup(probes.attention, tokens, begin, end);
    // An order no query could look up (n longer than the input, or every n-gram ambiguous) has no
    // score: null in JSON, a dash in text, never a measured 0.
    auto orders = [](const HeadLookup& h, const auto& v) {
        QJsonArray arr;
        for (int n = 1; n <= kMaxLookupOrder; ++n)
            arr.append(h.scored[size_t(n)] > 0 ? QJsonValue(std::round(v[size_t(n)] * 1e4) / 1e4) : QJsonValue());
        return arr;
    };
    if (json) {
        QJsonArray heads, ambiguous;
        for (const HeadLookup& h : an.heads)
            heads.append(QJsonObject{{"layer", probes.attentionLayers[size_t(h.layer)]}, {"head", h.head}, {"label", h.label},
                                     {"order", h.order}, {"lookup", orders(h, h.lookup)}, {"match", orders(h, h.match)},
                                     {"previous_token", h.previousToken}, {"current_token", h.currentToken}, {"first_token", h.firstToken}, {"entropy", h.entropy}});
        for (int n = 1; n <= kMaxLookupOrder; ++n) ambiguous.append(an.ambiguous[size_t(n)]);
        out() << QJsonDocument(withAnswer({{"tokens", labels}, {"queries", QJsonArray{an.queryBegin, an.queryEnd}},
                                           {"ambiguous", ambiguous}, {"heads", heads}}))
                     .toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    QStringList shown;
    for (const auto v : labels) shown << v.toString();
    out() << "input: " << shown.join(' ') << "\n";
    out() << "lookup[n]: attention on the token after the earlier occurrence of the last n tokens (n = 1..8; "
             "- where no query has a unique earlier n-gram to look up)\n";
    for (const HeadLookup& h : an.heads) {
        QStringList l;
        for (int n = 1; n <= kMaxLookupOrder; ++n) l << (h.scored[size_t(n)] > 0 ? QString::number(h.lookup[size_t(n)], 'f', 2) : QString("   -"));
        out() << QString("layer %1 head %2  %3  lookup %4  prev %5  first %6  entropy %7\n")
                     .arg(probes.attentionLayers[size_t(h.layer)]).arg(h.head).arg(h.label, -26).arg(l.join(' '))
                     .arg(h.previousToken, 0, 'f', 2).arg(h.firstToken, 0, 'f', 2).arg(h.entropy, 0, 'f', 2);
    }
    return 0;
}

int cmdInfo(Args& a)
{
    const bool json = a.flag("--json");
    const QString path = a.positional();
    a.done();
    if (path.isEmpty()) throw Error("info: a checkpoint FILE is required");
    CheckpointInfo info = inspectCheckpoint(path);
    if (info.runnable) {  // it claims to be ours: confirm the app can build and load it
        try {
            const Model m = Model::load(path);
            if (info.architecture == "parrotscope") info.recognised = m.summary();
        } catch (const Error& e) {
            info.runnable = false;
            info.problem = e.message();
        }
    }
    if (json) {
        out() << QJsonDocument(info.toJson()).toJson(QJsonDocument::Indented);
    } else {
        out() << path << "\n  format: " << info.format << "\n  recognised as: " << (info.recognised.isEmpty() ? "-" : info.recognised) << "\n";
        out() << "  runs in the app: " << (info.runnable ? "yes" : "no") << "\n";
        if (!info.problem.isEmpty()) out() << "  why not: " << info.problem << "\n";
        if (!info.tensors.empty()) {
            out() << QString("  %1 tensors, %2 bytes:\n").arg(info.tensors.size()).arg(info.totalBytes);
            for (const TensorSummary& t : info.tensors) {
                QStringList shape;
                for (int64_t d : t.shape) shape << QString::number(d);
                out() << QString("    %1  %2 [%3]").arg(t.name, -40).arg(t.dtype, -4).arg(shape.join(", "));
                if (t.floating) out() << QString("  mean %1 std %2 min %3 max %4").arg(t.mean, 0, 'g', 3).arg(t.std, 0, 'g', 3).arg(t.min, 0, 'g', 3).arg(t.max, 0, 'g', 3);
                out() << "\n";
            }
        }
    }
    return info.problem.isEmpty() ? 0 : 2;
}

int cmdCompare(Args& a)
{
    const QStringList dirs = a.list("--runs");
    const QString figure = a.value("--figure");
    const QString outFile = a.value("--out");
    const QString size = a.value("--size");
    const QString log = a.value("--log");
    const int precision = a.integer("--precision", 8, 1, 64);
    const ExportOptions style = figureStyle(a);
    a.done();
    if (!log.isEmpty() && log != "x" && log != "y" && log != "xy")
        throw Error(QString("--log: expected x, y or xy, got \"%1\"").arg(log));
    if (dirs.isEmpty() || figure.isEmpty() || outFile.isEmpty())
        throw Error("compare: --runs DIR..., --figure and --out FILE are required");
    const auto [width, height] = parseSize(size, 800, 500);
    std::vector<RunRecord> runs;
    for (const QString& d : dirs) {
        if (!QFileInfo(d).isDir()) throw Error(QString("%1: no such run folder").arg(d));
        runs.push_back(loadRun(d));
    }
    renderComparison(runs, figure, outFile, width, height, FigureOptions{log.contains('x'), log.contains('y'), precision}, style);
    out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << " (" << runs.size() << " runs)\n";
    return 0;
}

// The figures of a run folder, or of every run under a folder (a sweep), for papers.
int cmdExport(Args& a)
{
    const QString dir = a.value("--run");
    const QString figure = a.value("--figure");
    const QString outFile = a.value("--out");
    const QString log = a.value("--log");
    const int precision = a.integer("--precision", 8, 1, 64);
    const auto [width, height] = parseSize(a.value("--size"), figure == "panel" ? 1400 : 800, figure == "mechanisms" ? 700 : 500);
    ExportOptions style = figureStyle(a);
    a.done();
    if (dir.isEmpty() || figure.isEmpty() || outFile.isEmpty()) throw Error("export: --run DIR, --figure NAME and --out FILE are required");
    if (!log.isEmpty() && log != "x" && log != "y" && log != "xy") throw Error(QString("--log: expected x, y or xy, got \"%1\"").arg(log));
    checkFigure(figure, ExportFigure);
    if (!QFileInfo(dir).isDir()) throw Error(QString("%1: no such run folder").arg(dir));
    int skipped = 0;
    const std::vector<RunRecord> runs = loadRunsUnder(dir, &skipped);
    if (runs.empty()) throw Error(QString("%1: no run folders (config.json and metrics.csv) under it").arg(dir));
    style.width = width;
    style.height = height;
    checkExport(outFile, style);
    const FigureOptions options{log.contains('x'), log.contains('y'), precision};
    if (figure == "table") {
        if (!outFile.endsWith(".csv", Qt::CaseInsensitive)) throw Error(QString("%1: the results table exports as CSV (.csv)").arg(outFile));
        const ResultsTable t = tabulate(runs, ResultPoint::InRange);
        if (t.tasks.isEmpty()) throw Error(QString("%1: no evaluated runs to tabulate").arg(dir));
        writeTextFile(outFile, t.toCsv(), "the table");
    } else if (figure == "mechanisms") {
        // one run's loss above its heads' lookup scores: the run itself, or the one run under DIR
        if (runs.size() != 1)
            throw Error(QString("--figure mechanisms: draws one run, and %1 holds %2; give one of them as --run").arg(dir).arg(runs.size()));
        renderMechanisms(runs.front(), loadMechanisms(runs.front().dir), outFile, width, height, style);
    } else if (figure == "panel") {
        // training loss beside the final evaluation, one figure
        const bool icl = !runs.front().curves.empty() && runs.front().curves.back().isError();
        QCustomPlot loss, eval;
        loss.setObjectName("loss");
        eval.setObjectName(icl ? "icl" : "length");
        drawComparison(loss, runs, "loss", options);
        drawComparison(eval, runs, eval.objectName(), options);
        // CSV too: the schema of every figure of several plots (plot,series,x,y,value)
        exportPlots({{&loss, QRect(0, 0, width / 2, height), "loss"}, {&eval, QRect(width / 2, 0, width - width / 2, height), eval.objectName()}},
                    outFile, style, "Parrotscope: " + QFileInfo(dir).fileName());
    } else {
        renderComparison(runs, figure == "accuracy" ? "length" : figure, outFile, width, height, options, style);
    }
    out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << " (" << runs.size() << " run" << (runs.size() == 1 ? "" : "s")
          << (skipped ? QString(", %1 unreadable skipped").arg(skipped) : QString()) << ")\n";
    return 0;
}

int cmdRuns(Args& a)
{
    const QString dir = a.value("--dir");
    const bool json = a.flag("--json");
    const bool table = a.flag("--table");
    const QString at = a.value("--at");
    a.done();
    if (!at.isEmpty() && at != "in-range" && at != "longest")
        throw Error(QString("--at: expected in-range or longest, got \"%1\"").arg(at));
    if (dir.isEmpty()) throw Error("runs: --dir DIR is required");
    if (!QFileInfo(dir).isDir()) throw Error(QString("%1: no such folder").arg(dir));
    if (table) {
        const ResultsTable t = tabulate(loadRunsUnder(dir), at == "longest" ? ResultPoint::Longest : ResultPoint::InRange);
        if (t.tasks.isEmpty()) throw Error(QString("%1: no evaluated runs to tabulate").arg(dir));
        out() << t.toText() << "\n" << gradeRules() << "\n";
        return 0;
    }
    int skipped = 0;
    QJsonArray all;
    for (const RunRecord& r : loadRunsUnder(dir, &skipped)) {
        // the step and final evaluation as result.json has them (a run stopped early has no final curve)
        const QJsonObject result = readJsonObjectIfValid(QDir(r.dir).filePath("result.json")).value_or(QJsonObject());
        all.append(QJsonObject{{"dir", QDir(dir).relativeFilePath(r.dir)}, {"task", r.config.task.kind},
                               {"model", r.config.model.kind}, {"positions", r.config.model.positions},
                               {"seed", r.config.seed}, {"steps", result["step"]},
                               {"status", r.status.isEmpty() ? QString("unfinished") : r.status},
                               {"final", result["final"]}});
    }
    if (json) {
        out() << QJsonDocument(all).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto v : all) {
        const QJsonObject o = v.toObject();
        ModelConfig m;
        m.kind = o["model"].toString();
        m.positions = o["positions"].toString();
        const QString model = architectureKey(m);
        out() << QString("%1  %2  %3  seed %4  %5  %6\n").arg(o["dir"].toString(), -28).arg(o["task"].toString(), -14)
                     .arg(model, -22).arg(o["seed"].toInt()).arg(o["status"].toString(), -10)
                     .arg(o["final"].toObject()["summary"].toString());
    }
    out() << all.size() << " runs" << (skipped ? QString(", %1 unreadable skipped").arg(skipped) : QString()) << "\n";
    return 0;
}

int cmdPresets(Args& a)
{
    a.done();
    for (const QString& name : presetNames()) {
        const ExperimentConfig c = loadPreset(name);
        // first sentence; "et al." does not end one
        static const QRegularExpression sentenceEnd("(?<!al)\\.\\s");
        const QRegularExpressionMatch m = sentenceEnd.match(c.description);
        const QString first = m.hasMatch() ? c.description.left(m.capturedStart() + 1) : c.description;
        out() << QString("%1  %2").arg(name, -18).arg(first) << (name == defaultPresetName() ? "  [default]" : "") << "\n";
    }
    out() << "\nsweeps (parrotscope sweep --preset NAME --out DIR):\n";
    for (const QString& name : sweepPresetNames()) {
        const QJsonObject sweep = readJsonObject(sweepPresetFile(name), "a bundled sweep preset");
        out() << QString("%1  %2\n").arg(name, -22).arg(sweep["description"].toString());
    }
    return 0;
}

int cmdModels(Args& a)
{
    const bool json = a.flag("--json");
    a.done();
    const QJsonArray catalog = modelCatalogJson();
    if (json) {
        out() << QJsonDocument(catalog).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto v : catalog) {
        const QJsonObject f = v.toObject();
        out() << QString("%1  %2\n").arg(f["kind"].toString(), -12).arg(f["description"].toString());
        QStringList opts;
        const QJsonObject o = f["options"].toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            opts << QString("%1=%2").arg(it.key(), QString::fromUtf8(QJsonDocument(QJsonArray{it.value()}).toJson(QJsonDocument::Compact)).mid(1).chopped(1));
        out() << QString(14, ' ') << "options: " << opts.join(" ") << "\n";
        for (const auto p : f["positions"].toArray())
            out() << QString(14, ' ') << QString("positions=%1: %2\n").arg(p.toObject()["positions"].toString(), p.toObject()["description"].toString());
    }
    out() << "choose one with --set model.kind=KIND (and its options with --set model.OPTION=VALUE)\n";
    return 0;
}

namespace {

// The numeric settings as base/configfields.h defines them, with the defaults of a config that
// sets nothing: the reference for --set and config files.
int describeConfig(bool json)
{
    const QJsonObject defaults = toJson(ExperimentConfig{});
    const auto defaultOf = [&](const QString& key) {
        QJsonValue v = defaults;
        for (const QString& part : key.split('.')) v = v.toObject().value(part);
        return v;
    };
    QJsonArray fields;
    for (const IntField& f : intFieldTable()) {
        QJsonObject o{{"key", f.key}, {"label", f.label}, {"type", "integer"}, {"min", double(f.lo)}, {"tip", f.tip},
                      {"default", defaultOf(f.key)}};
        if (f.hi != kUnbounded) o["max"] = double(f.hi);
        if (*f.zero) o["zero"] = f.zero;
        fields.append(o);
    }
    for (const RealField& f : realFieldTable()) {
        QJsonObject o{{"key", f.key}, {"label", f.label}, {"type", "real"}, {"min", f.lo}, {"min_excluded", f.loOpen},
                      {"range", f.expected}, {"tip", f.tip}, {"default", defaultOf(f.key)}};
        if (std::isfinite(f.hi)) {
            o["max"] = f.hi;
            o["max_excluded"] = f.hiOpen;
        }
        fields.append(o);
    }
    if (json) {
        out() << QJsonDocument(QJsonObject{{"fields", fields}}).toJson(QJsonDocument::Indented);
        return 0;
    }
    out() << "Numeric settings (--set KEY=VALUE, or the config file's JSON); the others are listed by\n"
             "`parrotscope models` and `parrotscope tasks`.\n\n";
    for (const QJsonValue& v : fields) {
        const QJsonObject o = v.toObject();
        QString range = o["type"].toString() == "real" ? o["range"].toString()
                        : o.contains("max") ? QString("%1..%2").arg(o["min"].toInteger()).arg(o["max"].toInteger())
                                            : QString(">= %1").arg(o["min"].toInteger());
        if (o.contains("zero")) range += " (" + o["zero"].toString() + ")";
        const QJsonValue d = o["default"];
        QStringList items;
        for (const QJsonValue& x : d.toArray()) items << QString::number(x.toDouble(), 'g', 10);
        const QString shown = d.isDouble() ? QString::number(d.toDouble(), 'g', 10) : d.isArray() ? items.join(',') : d.toVariant().toString();
        out() << QString("%1  %2, %3; default %4\n    %5\n").arg(o["key"].toString(), -26).arg(o["label"].toString(), range, shown,
                                                                                                 o["tip"].toString());
    }
    return 0;
}

}  // namespace

int cmdConfig(Args& a)
{
    if (a.flag("--describe")) {
        const bool json = a.flag("--json");
        a.done();
        return describeConfig(json);
    }
    const ExperimentConfig c = experimentFrom(a);
    a.done();
    out() << QJsonDocument(toJson(c)).toJson(QJsonDocument::Indented);
    return 0;
}

}  // namespace parrot
