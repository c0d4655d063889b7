#include "base/experiments/slurm.h"

#include "base/error.h"
#include "base/experiments/sweeprunner.h"
#include "base/io/jsonfile.h"
#include "base/io/runfolder.h"
#include "base/io/textfile.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

namespace parrot {

namespace {

struct Ran {
    int code = -1;
    QString out, err;
};

// A Slurm command run with its arguments as they are (no shell); throws parrot::Error when it
// cannot be started or does not end within `timeoutMs`.
Ran runCommand(const QString& program, const QStringList& args, int timeoutMs = 60000)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted(10000))
        throw Error(QString("cannot run %1 (%2): is Slurm's client installed and on PATH?").arg(program, p.errorString()));
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(2000);
        throw Error(QString("%1 did not answer within %2 s").arg(program).arg(timeoutMs / 1000));
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError()).trimmed()};
}

QString slurmDir(const QString& sweepDir) { return QDir(sweepDir).filePath("slurm"); }

// "0-3,5,7-9%2" -> 0 1 2 3 5 7 8 9
std::vector<int> taskIds(QString spec)
{
    std::vector<int> out;
    spec = spec.section('%', 0, 0);
    for (const QString& part : spec.split(',', Qt::SkipEmptyParts)) {
        const QStringList ab = part.split('-');
        bool ok1 = false, ok2 = true;
        const int a = ab.value(0).toInt(&ok1), b = ab.size() > 1 ? ab.value(1).toInt(&ok2) : a;
        if (ok1 && ok2 && b >= a && b - a < 100000)
            for (int i = a; i <= b; ++i) out.push_back(i);
    }
    return out;
}

// `scontrol show job --oneliner JOB`'s records as key -> value maps.
std::vector<std::map<QString, QString>> scontrolRecords(const QString& text)
{
    std::vector<std::map<QString, QString>> out;
    for (const QString& line : text.split('\n', Qt::SkipEmptyParts)) {
        std::map<QString, QString> kv;
        for (const QString& word : line.split(' ', Qt::SkipEmptyParts)) {
            const int eq = word.indexOf('=');
            if (eq > 0) kv[word.left(eq)] = word.mid(eq + 1);
        }
        if (kv.count("JobId")) out.push_back(kv);
    }
    return out;
}

QString logOf(const QString& task) { return QString("logs/slurm-%1.log").arg(task); }


}  // namespace

QJsonObject ClusterProfile::toJson() const
{
    QJsonObject o{{"cpus_per_task", cpusPerTask}};
    const auto put = [&o](const char* key, const QString& v) {
        if (!v.isEmpty()) o[key] = v;
    };
    put("partition", partition);
    put("account", account);
    put("time", time);
    put("mem", memory);
    put("gres", gres);
    put("executable", executable);
    if (!extraLines.isEmpty()) o["sbatch_lines"] = QJsonArray::fromStringList(extraLines);
    return o;
}

ClusterProfile ClusterProfile::fromJson(const QJsonObject& o, const QString& name)
{
    ClusterProfile p;
    p.name = name;
    static const QStringList known{"partition", "account", "time", "mem", "gres", "executable", "cpus_per_task", "sbatch_lines"};
    for (const QString& k : o.keys())
        if (!known.contains(k)) throw Error(QString("cluster profile %1: unknown field %2 (fields: %3)").arg(name, k, known.join(", ")));
    const auto text = [&](const char* key) {
        const QJsonValue v = o.value(key);
        if (!v.isUndefined() && !v.isString()) throw Error(QString("cluster profile %1: %2 must be a string").arg(name, key));
        const QString s = v.toString();
        if (s.contains('\n')) throw Error(QString("cluster profile %1: %2 has a line break").arg(name, key));
        return s;
    };
    p.partition = text("partition");
    p.account = text("account");
    p.time = text("time");
    p.memory = text("mem");
    p.gres = text("gres");
    p.executable = text("executable");
    const QJsonValue cpus = o.value("cpus_per_task");
    if (!cpus.isUndefined() && (!cpus.isDouble() || cpus.toDouble() < 1 || cpus.toDouble() > 1024 || cpus.toDouble() != std::floor(cpus.toDouble())))
        throw Error(QString("cluster profile %1: cpus_per_task must be a whole number 1..1024").arg(name));
    p.cpusPerTask = cpus.isUndefined() ? 1 : cpus.toInt();
    for (const auto v : o.value("sbatch_lines").toArray()) {
        const QString line = v.toString();
        if (!line.startsWith("#SBATCH ") || line.contains('\n'))
            throw Error(QString("cluster profile %1: sbatch_lines holds '%2', not one '#SBATCH ...' line").arg(name, line));
        p.extraLines << line;
    }
    return p;
}

QString ClusterProfile::describe() const
{
    QStringList parts;
    if (!partition.isEmpty()) parts << "partition " + partition;
    if (!account.isEmpty()) parts << "account " + account;
    parts << QString("%1 CPU%2 a run").arg(cpusPerTask).arg(cpusPerTask == 1 ? "" : "s");
    if (!memory.isEmpty()) parts << "memory " + memory;
    if (!time.isEmpty()) parts << "time " + time;
    if (!gres.isEmpty()) parts << "gres " + gres;
    if (!extraLines.isEmpty()) parts << QString("%1 more #SBATCH line%2").arg(extraLines.size()).arg(extraLines.size() == 1 ? "" : "s");
    return parts.join(", ");
}

QString clustersFile()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation)).filePath("Parrotscope/clusters.json");
}

std::vector<ClusterProfile> loadClusterProfiles()
{
    const QString file = clustersFile();
    if (!QFileInfo::exists(file)) return {};
    const QJsonObject o = readJsonObject(file, "the cluster profiles");
    std::vector<ClusterProfile> out;
    for (const QString& name : o.keys()) {
        if (!o.value(name).isObject()) throw Error(QString("%1: cluster profile %2 is not an object").arg(file, name));
        try {
            out.push_back(ClusterProfile::fromJson(o.value(name).toObject(), name));
        } catch (const Error& e) {
            throw Error(file + ": " + e.message());
        }
    }
    return out;
}

ClusterProfile findClusterProfile(const QString& name)
{
    QStringList names;
    for (const ClusterProfile& p : loadClusterProfiles()) {
        if (p.name == name) return p;
        names << p.name;
    }
    throw Error(QString("no cluster profile '%1' in %2 (%3)").arg(name, clustersFile(), names.isEmpty() ? QString("none saved yet: --save-cluster NAME")
                                                                                                   : "profiles: " + names.join(", ")));
}

void saveClusterProfile(const ClusterProfile& profile)
{
    static const QRegularExpression okName("^[A-Za-z0-9_.-]{1,64}$");
    if (!okName.match(profile.name).hasMatch())
        throw Error(QString("cluster profile name '%1': use letters, digits, '.', '_' and '-'").arg(profile.name));
    const QString file = clustersFile();
    QJsonObject all = QFileInfo::exists(file) ? readJsonObject(file, "the cluster profiles") : QJsonObject();
    all[profile.name] = profile.toJson();
    if (!QDir().mkpath(QFileInfo(file).absolutePath())) throw Error(QString("cannot create %1").arg(QFileInfo(file).absolutePath()));
    writeFileAtomically(file, QJsonDocument(all).toJson(), "the cluster profiles");
}

QStringList readSbatchLines(const QString& file)
{
    QStringList out;
    int n = 0;
    for (const QString& raw : readTextFile(file, "the #SBATCH lines").split('\n')) {
        ++n;
        const QString line = raw.trimmed();
        if (line.isEmpty()) continue;
        if (line.startsWith("#SBATCH ")) out << line;
        else if (!line.startsWith('#') || line.startsWith("#!")) throw Error(QString("%1:%2: '%3' is not an #SBATCH line").arg(file).arg(n).arg(line));
    }
    return out;
}

std::vector<SlurmSubmission> readSubmissions(const QString& sweepDir)
{
    const QString file = QDir(slurmDir(sweepDir)).filePath("jobs.json");
    std::vector<SlurmSubmission> out;
    if (!QFileInfo::exists(file)) return out;
    for (const auto v : readJsonObject(file, "the sweep's Slurm jobs").value("submissions").toArray()) {
        const QJsonObject o = v.toObject();
        SlurmSubmission s;
        s.job = o["job"].toString();
        s.submitted = QDateTime::fromString(o["submitted"].toString(), Qt::ISODate);
        s.cluster = o["cluster"].toString();
        s.runs = QJsonValue(o["runs"]).toVariant().toStringList();
        s.script = o["script"].toString();
        s.list = o["list"].toString();
        if (!s.job.isEmpty()) out.push_back(s);
    }
    return out;
}

std::map<QString, SlurmTaskState> querySlurm(const QStringList& jobs)
{
    std::map<QString, SlurmTaskState> out;
    for (const QString& job : jobs) {
        const Ran sc = runCommand("scontrol", {"show", "job", "--oneliner", job});
        if (sc.code == 0) {
            for (const auto& kv : scontrolRecords(sc.out)) {
                const auto get = [&kv](const char* k) { const auto it = kv.find(k); return it == kv.end() ? QString() : it->second; };
                const QString arrayJob = get("ArrayJobId").isEmpty() ? get("JobId") : get("ArrayJobId");
                const QString reason = get("Reason") == "None" ? QString() : get("Reason");
                for (int t : taskIds(get("ArrayTaskId").isEmpty() ? QString("0") : get("ArrayTaskId")))
                    out[arrayJob + "_" + QString::number(t)] = {get("JobState"), reason, get("ExitCode")};
            }
            continue;
        }
        if (!sc.err.contains("Invalid job id"))
            throw Error(QString("scontrol show job %1: %2").arg(job, sc.err.isEmpty() ? QString("exit code %1").arg(sc.code) : sc.err));
        // forgotten by the controller: the accounting database, where there is one
        const Ran sa = runCommand("sacct", {"--noheader", "--parsable2", "--jobs", job, "--format", "JobID,State,ExitCode,Reason"});
        if (sa.code != 0) continue;
        for (const QString& line : sa.out.split('\n', Qt::SkipEmptyParts)) {
            const QStringList f = line.split('|');
            if (f.size() < 4 || f[0].contains('.')) continue;  // job steps (.batch, .extern)
            const QString state = f[1].section(' ', 0, 0), reason = f[3] == "None" ? QString() : f[3];
            if (f[0].contains('[')) {  // a pending range never started: 12_[0-3]
                const QString range = f[0].section('[', 1).section(']', 0, 0);
                for (int t : taskIds(range)) out[job + "_" + QString::number(t)] = {state, reason, f[2]};
            } else {
                out[f[0]] = {state, reason, f[2]};
            }
        }
    }
    return out;
}

std::vector<SweepRunState> sweepStatus(const QString& sweepDir)
{
    const std::optional<SweepPlan> plan = readSweepIndex(sweepDir);
    if (!plan) throw Error(QString("%1: not a sweep folder (no index.json written by parrotscope sweep)").arg(sweepDir));
    const std::vector<SlurmSubmission> subs = readSubmissions(sweepDir);
    std::map<QString, QString> latest;  // run -> JOB_TASK of its last submission
    QStringList jobs;
    for (const SlurmSubmission& s : subs) {
        jobs << s.job;
        for (int i = 0; i < s.runs.size(); ++i) latest[s.runs[i]] = s.job + "_" + QString::number(i);
    }
    const std::map<QString, SlurmTaskState> slurm = jobs.isEmpty() ? std::map<QString, SlurmTaskState>{} : querySlurm(jobs);
    std::vector<SweepRunState> out;
    for (const SweepRun& r : plan->runs) {
        SweepRunState s;
        s.name = r.name;
        s.task = latest.count(r.name) ? latest[r.name] : QString();
        const QString folder = runStatus(r.runDir);
        try {
            const RunRecord rec = loadRun(r.runDir);
            s.steps = rec.config.train.steps;
            if (!rec.metrics.empty()) s.step = rec.metrics.back().step;
            for (auto it = rec.metrics.rbegin(); it != rec.metrics.rend() && s.accuracy < 0; ++it)
                if (it->target >= 0) s.accuracy = it->target;
        } catch (const Error&) {
            // not started, or cleared for a fresh start
        }
        const auto known = slurm.find(s.task);
        const QString st = known == slurm.end() ? QString() : known->second.state;
        const QString why = known == slurm.end() ? QString() : known->second.reason;
        const QString log = s.task.isEmpty() ? QString() : logOf(s.task);
        if (folder == "finished" || folder == "diverged") {
            s.state = folder;
        } else if (st == "PENDING" || st == "REQUEUED" || st == "SUSPENDED") {
            s.state = "pending";
            s.detail = why;
        } else if (st == "RUNNING" || st == "CONFIGURING" || st == "COMPLETING") {
            s.state = "running";
            s.detail = log;
        } else if (st == "CANCELLED" || st == "TIMEOUT" || st == "PREEMPTED" || folder == "cancelled") {
            s.state = "cancelled";
            s.detail = (st == "TIMEOUT" ? QString("time limit") : st == "PREEMPTED" ? QString("preempted") : QString("cancelled")) +
                       (QFileInfo::exists(resumeFilePath(r.runDir)) ? "; resumes from its autosave when submitted again" : "");
        } else if (!st.isEmpty()) {  // FAILED, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, or COMPLETED without finishing
            s.state = "failed";
            s.detail = QString("Slurm: %1%2, exit code %3; see %4").arg(st, why.isEmpty() ? QString() : ", " + why, known->second.exitCode, log);
        } else if (!s.task.isEmpty()) {  // the controller forgot it and there is no accounting
            s.state = s.step > 0 ? "cancelled" : "failed";
            s.detail = "Slurm no longer knows the task; see " + log;
        } else {
            s.state = folder == "failed" ? "failed" : "not submitted";
        }
        out.push_back(s);
    }
    return out;
}

QString submitSweepRuns(const SweepPlan& plan, const QStringList& runs, const ClusterProfile& profile, const QString& executable)
{
    if (runs.isEmpty()) throw Error("nothing to submit");
    const QDir dir(plan.outDir);
    if (!dir.mkpath("slurm") || !dir.mkpath("logs")) throw Error(QString("%1: cannot create slurm/ and logs/").arg(plan.outDir));
    std::vector<SlurmSubmission> subs = readSubmissions(plan.outDir);
    const int n = int(subs.size()) + 1;
    const QString script = QDir(slurmDir(plan.outDir)).filePath(QString("job-%1.sh").arg(n));
    const QString list = QDir(slurmDir(plan.outDir)).filePath(QString("job-%1.runs").arg(n));
    QString logs = dir.filePath("logs");
    logs.replace('%', "%%");  // sbatch reads % as a pattern
    QString name = plan.name;
    name.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "-");
    QStringList args{"--parsable", "--job-name=parrotscope-" + name, QString("--array=0-%1").arg(runs.size() - 1),
                     "--output=" + logs + "/slurm-%A_%a.log", "--chdir=" + plan.outDir, QString("--cpus-per-task=%1").arg(profile.cpusPerTask)};
    if (!profile.partition.isEmpty()) args << "--partition=" + profile.partition;
    if (!profile.account.isEmpty()) args << "--account=" + profile.account;
    if (!profile.time.isEmpty()) args << "--time=" + profile.time;
    if (!profile.memory.isEmpty()) args << "--mem=" + profile.memory;
    if (!profile.gres.isEmpty()) args << "--gres=" + profile.gres;
    args << script << (profile.executable.isEmpty() ? executable : profile.executable) << list << (profile.usesGpu() ? "cuda" : "cpu");
    QStringList command{"sbatch"};
    for (const QString& a : args) command << shellQuote(a);
    QString text = "#!/bin/bash\n"
                   "# One run of a Parrotscope sweep per array task: the run on line SLURM_ARRAY_TASK_ID + 1 of the list.\n"
                   "# Arguments: 1 the parrotscope executable, 2 the list of runs, 3 the device (cpu or cuda).\n"
                   "# Submitted (and submitted again by hand) with:\n# " + command.join(' ') + "\n";
    for (const QString& line : profile.extraLines) text += line + "\n";
    text += "exec \"$1\" sweep --slurm-task \"$SLURM_ARRAY_TASK_ID\" --list \"$2\" --device \"$3\" --threads \"${SLURM_CPUS_PER_TASK:-1}\"\n";
    writeFileAtomically(script, text.toUtf8(), "the batch script");
    QFile::setPermissions(script, QFile::permissions(script) | QFileDevice::ExeOwner);
    writeTextFile(list, runs.join('\n') + '\n', "the list of runs");
    const Ran r = runCommand("sbatch", args);
    const QString job = r.out.trimmed().section(';', 0, 0);
    if (r.code != 0 || job.isEmpty() || !job.front().isDigit()) {
        QFile::remove(list);
        QString why = r.err.isEmpty() ? r.out.trimmed() : r.err;
        why.replace("sbatch: error: ", "").replace('\n', "; ");
        throw Error(QString("sbatch refused the sweep: %1").arg(why));
    }
    // the record: jobs.json (every submission) and index.json (the latest and the history)
    QJsonArray all;
    const QString jobsFile = QDir(slurmDir(plan.outDir)).filePath("jobs.json");
    if (QFileInfo::exists(jobsFile)) all = readJsonObject(jobsFile, "the sweep's Slurm jobs").value("submissions").toArray();
    all.append(QJsonObject{{"job", job}, {"submitted", QDateTime::currentDateTimeUtc().toString(Qt::ISODate)}, {"cluster", profile.name},
                           {"runs", QJsonArray::fromStringList(runs)}, {"script", "slurm/" + QFileInfo(script).fileName()},
                           {"list", "slurm/" + QFileInfo(list).fileName()}});
    writeFileAtomically(jobsFile, QJsonDocument(QJsonObject{{"submissions", all}}).toJson(), "the sweep's Slurm jobs");
    QJsonArray history;
    for (const auto v : all) history.append(v.toObject()["job"]);
    const QString indexFile = dir.filePath("index.json");
    QJsonObject index = readJsonObject(indexFile, "the sweep's index");
    index["slurm"] = QJsonObject{{"job", job}, {"jobs", history}, {"cluster", profile.name}};
    writeFileAtomically(indexFile, QJsonDocument(index).toJson(), "the sweep's index");
    return job;
}

SlurmSubmitted submitSweep(SweepPlan plan, const ClusterProfile& profile, const QString& executable)
{
    SlurmSubmitted out;
    QStringList busy;
    if (QFileInfo::exists(QDir(plan.outDir).filePath("index.json")))
        for (const SweepRunState& r : sweepStatus(plan.outDir)) {
            if (r.state == "pending" || r.state == "running") busy << r.name;
            else if (!r.task.isEmpty()) QFile::remove(QDir(plan.outDir).filePath("runs/" + r.name + "/run.lock"));  // a task killed elsewhere
        }
    SweepRunner runner(std::move(plan), executable, 1);
    runner.leaveAlone(busy);
    runner.prepare();
    out.runs = runner.toDoNames();
    out.total = int(runner.plan().runs.size());
    out.busy = int(busy.size());
    if (!out.runs.isEmpty()) out.job = submitSweepRuns(runner.plan(), out.runs, profile, executable);
    return out;
}

QStringList cancelSweepJobs(const QString& sweepDir)
{
    QStringList jobs, cancelled;
    for (const SlurmSubmission& s : readSubmissions(sweepDir)) jobs << s.job;
    if (jobs.isEmpty()) throw Error(QString("%1: this sweep was never submitted to Slurm").arg(sweepDir));
    const std::map<QString, SlurmTaskState> states = querySlurm(jobs);
    for (const QString& job : jobs) {
        bool active = false;
        for (const auto& [task, s] : states)
            if (task.startsWith(job + "_") && (s.state == "PENDING" || s.state == "RUNNING" || s.state == "CONFIGURING" || s.state == "REQUEUED"))
                active = true;
        if (!active) continue;
        const Ran r = runCommand("scancel", {job});
        if (r.code != 0) throw Error(QString("scancel %1: %2").arg(job, r.err));
        cancelled << job;
    }
    return cancelled;
}

}  // namespace parrot
