#include "base/io/runfolder.h"

#include "base/error.h"
#include "base/io/jsonfile.h"
#include "base/io/safetensors.h"
#include "base/io/textfile.h"
#include "base/modelcatalog.h"
#include "base/tasks/icltask.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QRegularExpression>
#include <QLockFile>
#include <QSaveFile>
#include <QTemporaryDir>
#include <QThread>

#include <algorithm>
#include <set>
#include <tuple>

namespace parrot {

void RunFolder::checkFree(const QString& dir)
{
    const QDir d(dir);
    if (d.exists("config.json") || d.exists("metrics.csv"))
        throw Error(QString("%1: already holds a run (config.json or metrics.csv); choose a new folder").arg(d.absolutePath()));
}

RunFolder::RunFolder(const QString& dir, const ExperimentConfig& config, const QJsonObject& environment, const QJsonObject& continuesFrom)
    : m_dir(QDir(dir).absolutePath()), m_evalLengths(evaluationLengths(config.task))
{
    QDir d(m_dir);
    checkFree(m_dir);
    if (!d.mkpath("checkpoints")) throw Error(QString("%1: cannot create the run folder").arg(m_dir));
    lock();

    QJsonObject doc{{"parrotscope_run", 1}, {"experiment", toJson(config)}, {"environment", environment}};
    if (!continuesFrom.isEmpty()) doc.insert("continues_from", continuesFrom);
    writeFileAtomically(d.filePath("config.json"), QJsonDocument(doc).toJson(), "the run's config");

    openMetrics(config, false);
}

namespace {

// One row of mechanisms.csv into its step and head; false when it cannot be read.
bool parseMechanismRow(const QString& line, long long& step, HeadScore& h)
{
    // the label, last, may be quoted (csvField); the numbers before it never are
    const QStringList cells = line.section(',', 0, 7).split(',');
    QString label = line.section(',', 8);
    if (cells.size() != 8 || line.count(',') < 8) return false;
    if (label.startsWith('"')) {
        if (label.size() < 2 || !label.endsWith('"')) return false;
        label = label.mid(1, label.size() - 2).replace("\"\"", "\"");
    }
    bool ok[8] = {};
    step = cells[0].toLongLong(&ok[0]);
    h.layer = cells[1].toInt(&ok[1]);
    h.head = cells[2].toInt(&ok[2]);
    ok[3] = cells[3] == "attention" || cells[3] == "implicit";
    h.implicit = cells[3] == "implicit";
    for (int n = 0; n < 3; ++n) h.lookup[size_t(n)] = cells[4 + n].toDouble(&ok[4 + n]);
    h.previousToken = cells[7].toDouble(&ok[7]);
    h.label = label;
    if (!std::all_of(std::begin(ok), std::end(ok), [](bool b) { return b; }) || step < 0 || h.layer < 0 || h.head < 0) return false;
    for (double v : {h.lookup[0], h.lookup[1], h.lookup[2], h.previousToken})
        if (!(v >= 0 && v <= 1)) return false;
    return true;
}

// Rows into scorings: consecutive rows of one step are one scoring.
void addMechanismRow(std::vector<MechanismScores>& out, long long step, const HeadScore& h)
{
    if (out.empty() || out.back().step != step) out.push_back(MechanismScores{step, {}});
    out.back().heads.push_back(h);
}

long long snapshotStep(const QString& fileName)
{
    static const QRegularExpression name("^step-(\\d+)\\.safetensors$");
    const auto m = name.match(fileName);
    return m.hasMatch() ? m.captured(1).toLongLong() : -1;
}

}  // namespace

RunFolder::RunFolder(const QString& dir, const ExperimentConfig& config, const Reopen& reopen)
    : m_dir(QDir(dir).absolutePath()), m_evalLengths(evaluationLengths(config.task))
{
    const QDir d(m_dir);
    lock();
    QJsonObject doc = readJsonObject(d.filePath("config.json"), "the run's config");
    doc.insert("experiment", toJson(config));
    QJsonArray resumed = doc.value("resumed").toArray();
    resumed.append(reopen.resumed);
    doc.insert("resumed", resumed);

    // metrics.csv: the header, then the rows up to the step, whole and one a step
    QFile in(d.filePath("metrics.csv"));
    if (!in.open(QIODevice::ReadOnly | QIODevice::Text)) throw Error(QString("%1: cannot read metrics.csv (%2)").arg(m_dir, in.errorString()));
    const QByteArray all = in.readAll();
    in.close();
    QList<QByteArray> lines = all.split('\n');
    if (!all.endsWith('\n')) lines.removeLast();  // torn by a kill mid-write
    QByteArray kept;
    long long last = -1;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QByteArray& line = lines[i];
        if (line.isEmpty()) continue;
        if (i == 0) {
            kept += line + '\n';
            continue;
        }
        if (line.count(',') != lines[0].count(',')) continue;
        bool ok = false;
        const long long step = line.left(line.indexOf(',')).toLongLong(&ok);
        if (!ok || step > reopen.step || step <= last) continue;
        last = step;
        kept += line + '\n';
    }
    if (kept.isEmpty()) throw Error(QString("%1: metrics.csv has no header").arg(m_dir));

    QJsonArray curves;
    if (QFileInfo::exists(d.filePath("curves.json"))) {
        for (const auto v : readJsonObject(d.filePath("curves.json"), "the run's accuracy curves").value("length_curves").toArray())
            if (v.toObject().value("step").toInteger() <= reopen.step) curves.append(v);
    }
    m_curves = curves;

    // mechanisms.csv: the scorings up to the step, each head once; the snapshots past it go (the
    // resumed run writes what it reaches again)
    QByteArray keptMechanisms;
    if (QFile mf(d.filePath("mechanisms.csv")); mf.open(QIODevice::ReadOnly | QIODevice::Text)) {
        const QByteArray text = mf.readAll();
        QList<QByteArray> rows = text.split('\n');
        if (!text.endsWith('\n')) rows.removeLast();
        std::set<std::tuple<long long, bool, int, int>> seen;
        for (qsizetype i = 0; i < rows.size(); ++i) {
            long long step = 0;
            HeadScore h;
            if (i == 0) keptMechanisms = (mechanismsCsvHeader() + '\n').toUtf8();
            if (i == 0 || !parseMechanismRow(QString::fromUtf8(rows[i]), step, h) || step > reopen.step) continue;
            if (!seen.insert({step, h.implicit, h.layer, h.head}).second) continue;
            if (!m_mechanismsSoFar.empty() && step < m_mechanismsSoFar.back().step) continue;
            addMechanismRow(m_mechanismsSoFar, step, h);
            keptMechanisms += rows[i] + '\n';
        }
    }
    for (const QFileInfo& f : QDir(d.filePath("checkpoints/snapshots")).entryInfoList({"step-*.safetensors"}, QDir::Files))
        if (snapshotStep(f.fileName()) > reopen.step && !QFile::remove(f.filePath()))
            throw Error(QString("%1: cannot remove the snapshot past the resume point").arg(f.filePath()));

    writeFileAtomically(d.filePath("config.json"), QJsonDocument(doc).toJson(), "the run's config");
    writeFileAtomically(d.filePath("metrics.csv"), kept, "the run's metrics");
    if (!keptMechanisms.isEmpty()) writeFileAtomically(d.filePath("mechanisms.csv"), keptMechanisms, "the run's mechanism scores");
    if (QFileInfo::exists(d.filePath("curves.json")))
        writeFileAtomically(d.filePath("curves.json"), QJsonDocument(QJsonObject{{"length_curves", m_curves}}).toJson(),
                            "the run's accuracy curves");
    if (QFileInfo::exists(d.filePath("result.json")) && !QFile::remove(d.filePath("result.json")))
        throw Error(QString("%1: cannot remove result.json").arg(m_dir));
    d.mkpath("checkpoints");
    openMetrics(config, true);
}

RunFolder::~RunFolder() = default;

namespace {

// A lock file that says nobody holds it: its owner was killed between creating it and writing
// its process id (QLockFile does the two one after the other). A live owner writes the id at
// once, so a file still without one a moment later is a remnant; it is removed. True when one was.
bool removeUnownedLock(QLockFile& lock, const QString& path)
{
    if (!QFileInfo::exists(path)) return false;  // no lock at all (a run not started): nothing to wait for
    qint64 pid = 0;
    QString host, app;
    if (lock.getLockInfo(&pid, &host, &app) && pid > 0) return false;
    QThread::msleep(200);
    if (lock.getLockInfo(&pid, &host, &app) && pid > 0) return false;
    return lock.removeStaleLockFile();
}

}  // namespace

void RunFolder::lock()
{
    const QString path = QDir(m_dir).filePath("run.lock");
    m_lock = std::make_unique<QLockFile>(path);
    m_lock->setStaleLockTime(0);  // only a dead owner's lock is stale, however long a run takes
    if (!m_lock->tryLock(0) && !(removeUnownedLock(*m_lock, path) && m_lock->tryLock(0))) {
        qint64 pid = 0;
        QString host, app;
        m_lock->getLockInfo(&pid, &host, &app);
        throw Error(QString("%1: process %2 on %3 is training this run; wait for it or stop it first").arg(m_dir).arg(pid).arg(host));
    }
}

void RunFolder::checkNotInUse(const QString& dir)
{
    const QString path = QDir(dir).filePath("run.lock");
    if (!QFileInfo::exists(path)) return;  // nobody has locked it (or the run does not exist yet)
    QLockFile probe(path);
    probe.setStaleLockTime(0);
    if (probe.tryLock(0) || (removeUnownedLock(probe, path) && probe.tryLock(0))) return probe.unlock();
    qint64 pid = 0;
    QString host, app;
    probe.getLockInfo(&pid, &host, &app);
    if (probe.error() == QLockFile::LockFailedError)
        throw Error(QString("%1: process %2 on %3 is training this run; wait for it or stop it first").arg(dir).arg(pid).arg(host));
}

void RunFolder::openMetrics(const ExperimentConfig& config, bool append)
{
    // In-context regression and parity evaluate one prompt length after every number of
    // examples: one column, the measure after the most examples; curves.json has the rest.
    const TaskInfo* task = findTask(config.task.kind);
    m_prefixCurve = task && task->promptCurve;
    m_metrics = std::make_unique<QFile>(QDir(m_dir).filePath("metrics.csv"));
    if (!m_metrics->open((append ? QIODevice::Append : QIODevice::WriteOnly) | QIODevice::Text))
        throw Error(QString("%1: cannot write metrics.csv (%2)").arg(m_dir, m_metrics->errorString()));
    if (append) return;
    QStringList header{"step", "examples_seen", "train_time_s", "wall_s", "loss", "lr", "tokens_per_s"};
    if (m_prefixCurve) {
        header << task->metric + "_last";
    } else {
        for (int len : m_evalLengths) header << QString("string_acc_%1").arg(len);
        for (int len : m_evalLengths) header << QString("char_acc_%1").arg(len);
    }
    m_metrics->write((header.join(',') + '\n').toUtf8());
    m_metrics->flush();
}

QString RunFolder::checkpointPath() const { return QDir(m_dir).filePath("checkpoints/last.safetensors"); }

QString RunFolder::snapshotPath(long long step) const
{
    return QDir(m_dir).filePath(QString("checkpoints/snapshots/step-%1.safetensors").arg(step, 6, 10, QChar('0')));
}

QString mechanismsCsvHeader() { return "step,layer,head,kind,lookup1,lookup2,lookup3,previous_token,label"; }

void RunFolder::appendMechanisms(const MechanismScores& m)
{
    const QString path = QDir(m_dir).filePath("mechanisms.csv");
    if (!m_mechanisms) {
        const bool fresh = !QFileInfo::exists(path);
        m_mechanisms = std::make_unique<QFile>(path);
        if (!m_mechanisms->open(QIODevice::Append | QIODevice::Text))
            throw Error(QString("%1: cannot write mechanisms.csv (%2)").arg(m_dir, m_mechanisms->errorString()));
        if (fresh) m_mechanisms->write((mechanismsCsvHeader() + '\n').toUtf8());
    }
    QByteArray rows;
    for (const HeadScore& h : m.heads)
        rows += QString("%1,%2,%3,%4,%5,%6,%7,%8,%9\n")
                    .arg(m.step).arg(h.layer).arg(h.head).arg(h.implicit ? "implicit" : "attention")
                    .arg(h.lookup[0], 0, 'f', 4).arg(h.lookup[1], 0, 'f', 4).arg(h.lookup[2], 0, 'f', 4)
                    .arg(h.previousToken, 0, 'f', 4).arg(csvField(h.label))
                    .toUtf8();
    if (m_mechanisms->write(rows) < 0 || !m_mechanisms->flush())
        throw Error(QString("%1: cannot write mechanisms.csv (%2); is the disk full?").arg(m_dir, m_mechanisms->errorString()));
}

void RunFolder::appendMetrics(const TrainProgress& p, const LengthCurve* eval)
{
    QStringList row{QString::number(p.step), QString::number(p.examplesSeen), QString::number(p.elapsedSeconds, 'f', 3),
                    QString::number(p.wallSeconds, 'f', 3),
                    QString::number(p.loss, 'g', 6), QString::number(p.lr, 'g', 6),
                    QString::number(p.tokensPerSecond, 'f', 0)};
    if (m_prefixCurve) row << (eval && !eval->lengths.empty() ? QString::number(eval->valueAt(eval->lengths.size() - 1), 'f', 4) : QString());
    for (int pass = 0; pass < 2 && !m_prefixCurve; ++pass)
        for (int len : m_evalLengths) {
            QString cell;
            if (eval)
                for (size_t i = 0; i < eval->lengths.size(); ++i)
                    if (eval->lengths[i] == len)
                        cell = QString::number(pass == 0 ? eval->stringAccuracy[i] : eval->charAccuracy[i], 'f', 4);
            row << cell;
        }
    if (m_metrics->write((row.join(',') + '\n').toUtf8()) < 0 || !m_metrics->flush())
        throw Error(QString("%1: cannot write metrics.csv (%2); is the disk full?").arg(m_dir, m_metrics->errorString()));
}

void RunFolder::appendCurve(const LengthCurve& c)
{
    m_curves.append(lengthCurveJson(c));
    writeFileAtomically(QDir(m_dir).filePath("curves.json"), QJsonDocument(QJsonObject{{"length_curves", m_curves}}).toJson(),
                        "the run's accuracy curves");
}

void RunFolder::finish(const TrainOutcome& o, double wallSeconds)
{
    QJsonArray lengths, values;
    for (size_t i = 0; i < o.finalCurve.lengths.size(); ++i) {
        lengths.append(o.finalCurve.lengths[i]);
        values.append(o.finalCurve.valueAt(i));
    }
    QJsonObject doc{{"status", statusName(o.status).toLower()}, {"step", o.step}, {"wall_time_s", wallSeconds},
                          {"message", o.message}, {"checkpoint", o.checkpoint},
                          {"final", QJsonObject{{"metric", o.finalCurve.metric}, {"lengths", lengths}, {"values", values},
                                                {"summary", o.finalCurve.summary()}}}};
    if (!o.validation.empty()) doc["validation"] = lengthCurveJson(o.validation);
    writeFileAtomically(QDir(m_dir).filePath("result.json"), QJsonDocument(doc).toJson(), "the run's result");
}

QString RunRecord::architecture() const
{
    return architectureKey(config.model);
}

std::vector<RunRecord> loadRunsUnder(const QString& dir, int* skipped)
{
    QStringList dirs;
    QDirIterator it(dir, {"config.json"}, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString runDir = QFileInfo(it.next()).absolutePath();
        if (QFileInfo::exists(QDir(runDir).filePath("metrics.csv"))) dirs << runDir;  // not a sweep's configs/
    }
    dirs.sort();
    std::vector<RunRecord> runs;
    for (const QString& d : dirs) {
        try {
            runs.push_back(loadRun(d));
        } catch (const Error&) {
            if (skipped) ++*skipped;
        }
    }
    return runs;
}

RunRecord loadRun(const QString& dir)
{
    RunRecord r;
    r.dir = QDir(dir).absolutePath();
    r.config = loadConfigFile(QDir(dir).filePath("config.json"));
    // result.json once: the status as runStatus() reads it, and the held-out check
    if (const auto result = readJsonObjectIfValid(QDir(dir).filePath("result.json"))) {
        r.status = result->value("status").toString();
        if (auto v = lengthCurveFromJson(result->value("validation").toObject())) r.validation = std::move(*v);
    }
    if (const auto curves = readJsonObjectIfValid(QDir(dir).filePath("curves.json")))
        for (const auto v : curves->value("length_curves").toArray())
            if (auto c = lengthCurveFromJson(v.toObject())) r.curves.push_back(std::move(*c));
    QFile mf(QDir(dir).filePath("metrics.csv"));
    if (mf.open(QIODevice::ReadOnly | QIODevice::Text)) {
        const QStringList lines = QString::fromUtf8(mf.readAll()).split('\n', Qt::SkipEmptyParts);
        if (!lines.isEmpty()) {
            const QStringList header = lines.first().split(',');
            const int target = std::max<int>({int(header.indexOf(QString("string_acc_%1").arg(r.config.task.maxLen))),
                                              int(header.indexOf("error_last")), int(header.indexOf("accuracy_last"))});
            // By name: runs written before the wall_s column named their training time wall_time_s.
            const int trainTime = std::max<int>(int(header.indexOf("train_time_s")), int(header.indexOf("wall_time_s")));
            const int loss = int(header.indexOf("loss"));
            for (const QString& line : lines.mid(1)) {
                const QStringList cells = line.split(',');
                if (cells.size() < 6 || trainTime < 0 || loss < 0 || std::max(trainTime, loss) >= cells.size()) continue;
                RunRecord::Row row;
                row.step = cells[0].toLongLong();
                row.examples = cells[1].toLongLong();
                row.wallSeconds = cells[trainTime].toDouble();
                row.loss = cells[loss].toDouble();
                if (target >= 0 && target < cells.size() && !cells[target].isEmpty()) row.target = cells[target].toDouble();
                r.metrics.push_back(row);
            }
        }
    }
    return r;
}

std::vector<MechanismScores> loadMechanisms(const QString& runDir)
{
    const QString path = QDir(runDir).filePath("mechanisms.csv");
    QFile f(path);
    if (!f.exists())
        throw Error(QString("%1: has no mechanisms.csv (a run scores its heads with train.mechanism_every > 0, on a token task, "
                            "with attention or Mamba blocks)").arg(QDir(runDir).absolutePath()));
    if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) throw Error(QString("%1: cannot read (%2)").arg(path, f.errorString()));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n');
    if (lines.isEmpty() || lines.first().trimmed() != mechanismsCsvHeader())
        throw Error(QString("%1: expected the header %2").arg(path, mechanismsCsvHeader()));
    std::vector<MechanismScores> out;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        if (lines[i].isEmpty()) continue;
        long long step = 0;
        HeadScore h;
        if (!parseMechanismRow(lines[i], step, h))
            throw Error(QString("%1: line %2 is not a row of %3 with scores in [0, 1]").arg(path).arg(i + 1).arg(mechanismsCsvHeader()));
        if (!out.empty() && step < out.back().step)
            throw Error(QString("%1: line %2 goes back to step %3 after step %4").arg(path).arg(i + 1).arg(step).arg(out.back().step));
        addMechanismRow(out, step, h);
    }
    return out;
}

long long lookupFormsAt(const std::vector<MechanismScores>& scorings, double threshold)
{
    for (size_t i = 1; i < scorings.size(); ++i)
        if (scorings[i].bestLookup() >= threshold && scorings[i - 1].bestLookup() < threshold) return scorings[i].step;
    return -1;
}

QString RunSnapshot::label() const
{
    const QString s = QString("step %1").arg(QLocale(QLocale::English).toString(step));
    return note.isEmpty() ? s : QString("%1 (%2)").arg(s, note);
}

std::vector<RunSnapshot> runSnapshots(const QString& runDir)
{
    const QDir d(runDir);
    std::vector<RunSnapshot> out;
    for (const QFileInfo& f : QDir(d.filePath("checkpoints/snapshots")).entryInfoList({"step-*.safetensors"}, QDir::Files, QDir::Name))
        if (const long long step = snapshotStep(f.fileName()); step >= 0) out.push_back({step, f.absoluteFilePath(), {}});
    if (out.empty()) return out;
    std::sort(out.begin(), out.end(), [](const RunSnapshot& a, const RunSnapshot& b) { return a.step < b.step; });
    long long forms = -1;
    try {
        forms = lookupFormsAt(loadMechanisms(runDir));
    } catch (const Error&) {
        // the steps without notes
    }
    for (size_t i = 0; i < out.size() && forms >= 0; ++i)
        if (out[i].step >= forms) {
            out[i].note = "lookup forms";
            if (i > 0) out[i - 1].note = "before";
            break;
        }
    const QString last = d.filePath("checkpoints/last.safetensors");
    if (QFileInfo::exists(last)) {
        long long step = -1;
        try {
            step = readSafetensors(last).metadata.value("step", "-1").toLongLong();
        } catch (const Error&) {
            // a damaged autosave is not offered
        }
        if (step > out.back().step) out.push_back({step, QFileInfo(last).absoluteFilePath(), "last"});
        else if (step == out.back().step && out.back().note.isEmpty()) out.back().note = "last";
    }
    return out;
}

QString runFolderOf(const QString& checkpoint)
{
    QDir d = QFileInfo(checkpoint).absoluteDir();
    if (d.dirName() == "snapshots") d.cdUp();
    if (d.dirName() != "checkpoints" || !d.cdUp()) return {};
    return d.exists("config.json") && d.exists("metrics.csv") ? d.absolutePath() : QString();
}

QString runStatus(const QString& dir)
{
    const auto result = readJsonObjectIfValid(QDir(dir).filePath("result.json"));  // none while the run is alive
    return result ? result->value("status").toString() : QString();
}

namespace {

// Whether the process that holds `lockPath` is gone from this machine, judged by QLockFile's own
// rule on a copy of the file, so the run's lock itself is left as it is.
bool lockOwnerGone(const QString& lockPath)
{
    QLockFile original(lockPath);
    qint64 pid = 0;
    QString host, app;
    if (!original.getLockInfo(&pid, &host, &app) || pid <= 0) return false;  // unreadable, or being written now
    QTemporaryDir scratch;
    const QString copy = scratch.filePath("run.lock");
    if (!scratch.isValid() || !QFile::copy(lockPath, copy)) return false;
    QLockFile probe(copy);
    probe.setStaleLockTime(0);  // stale only when its process is gone, as RunFolder::lock decides
    return probe.tryLock(0);
}

}  // namespace

std::vector<InterruptedRun> interruptedRuns(const QString& root)
{
    std::vector<InterruptedRun> out;
    const QFileInfoList children = QDir(root).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QFileInfo& child : children) {
        const QDir dir(child.absoluteFilePath());
        if (!dir.exists("run.lock") || !dir.exists("config.json") || dir.exists("result.json")) continue;
        if (!lockOwnerGone(dir.filePath("run.lock"))) continue;
        InterruptedRun r;
        r.dir = dir.absolutePath();
        const auto config = readJsonObjectIfValid(dir.filePath("config.json"));
        r.name = config ? config->value("experiment").toObject().value("name").toString() : QString();
        if (r.name.isEmpty()) r.name = dir.dirName();
        const QString resume = resumeFilePath(r.dir);
        r.stoppedAround = QFileInfo(dir.filePath("run.lock")).lastModified();
        if (QFileInfo::exists(resume)) {
            try {
                r.step = readSafetensors(resume).metadata.value("step", "-1").toLongLong();
                r.stoppedAround = std::max(r.stoppedAround, QFileInfo(resume).lastModified());
            } catch (const Error&) {
                r.step = -1;  // a damaged resume file: resuming says what is wrong with it
            }
        }
        out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](const InterruptedRun& a, const InterruptedRun& b) { return a.stoppedAround > b.stoppedAround; });
    return out;
}

bool dismissInterruptedRun(const QString& dir)
{
    const QString path = QDir(dir).filePath("run.lock");
    if (!QFileInfo::exists(path) || !lockOwnerGone(path)) return false;
    return QFile::remove(path);
}

QString resumeFilePath(const QString& runDir) { return QDir(runDir).filePath("checkpoints/resume.safetensors"); }

QString newRunDir(const QString& root, const QString& name)
{
    QString safe = name;
    safe.replace(QRegularExpression("[^A-Za-z0-9_.-]+"), "-");
    const QString base = QDir(root).filePath(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss") + "-" + safe);
    QString dir = base;
    for (int n = 2; QFileInfo::exists(dir); ++n) dir = base + "-" + QString::number(n);
    return dir;
}

}  // namespace parrot
