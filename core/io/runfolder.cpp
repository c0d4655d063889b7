#include "runfolder.h"

#include "modelcatalog.h"
#include "tasks/icltask.h"

#include "error.h"

#include <QDateTime>
#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QRegularExpression>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

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

    QSaveFile cfg(d.filePath("config.json"));
    QJsonObject doc{{"parrotscope_run", 1}, {"experiment", toJson(config)}, {"environment", environment}};
    if (!continuesFrom.isEmpty()) doc.insert("continues_from", continuesFrom);
    if (!cfg.open(QIODevice::WriteOnly) || cfg.write(QJsonDocument(doc).toJson()) < 0 || !cfg.commit())
        throw Error(QString("%1: cannot write config.json (%2)").arg(m_dir, cfg.errorString()));

    openMetrics(config, false);
}

namespace {

void writeAtomically(const QString& path, const QByteArray& data)
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) < 0 || !f.commit())
        throw Error(QString("%1: cannot write (%2)").arg(path, f.errorString()));
}

QJsonObject readJsonObject(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) throw Error(QString("%1: cannot read (%2)").arg(path, f.errorString()));
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        throw Error(QString("%1: not a JSON object (%2)").arg(path, err.errorString()));
    return doc.object();
}

}  // namespace

RunFolder::RunFolder(const QString& dir, const ExperimentConfig& config, const Reopen& reopen)
    : m_dir(QDir(dir).absolutePath()), m_evalLengths(evaluationLengths(config.task))
{
    const QDir d(m_dir);
    lock();
    QJsonObject doc = readJsonObject(d.filePath("config.json"));
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
        for (const auto v : readJsonObject(d.filePath("curves.json")).value("length_curves").toArray())
            if (v.toObject().value("step").toInteger() <= reopen.step) curves.append(v);
    }
    m_curves = curves;

    writeAtomically(d.filePath("config.json"), QJsonDocument(doc).toJson());
    writeAtomically(d.filePath("metrics.csv"), kept);
    if (QFileInfo::exists(d.filePath("curves.json")))
        writeAtomically(d.filePath("curves.json"), QJsonDocument(QJsonObject{{"length_curves", m_curves}}).toJson());
    if (QFileInfo::exists(d.filePath("result.json")) && !QFile::remove(d.filePath("result.json")))
        throw Error(QString("%1: cannot remove result.json").arg(m_dir));
    d.mkpath("checkpoints");
    openMetrics(config, true);
}

RunFolder::~RunFolder() = default;

void RunFolder::lock()
{
    m_lock = std::make_unique<QLockFile>(QDir(m_dir).filePath("run.lock"));
    m_lock->setStaleLockTime(0);  // only a dead owner's lock is stale, however long a run takes
    if (!m_lock->tryLock(0)) {
        qint64 pid = 0;
        QString host, app;
        m_lock->getLockInfo(&pid, &host, &app);
        throw Error(QString("%1: process %2 on %3 is training this run; wait for it or stop it first").arg(m_dir).arg(pid).arg(host));
    }
}

void RunFolder::checkNotInUse(const QString& dir)
{
    QLockFile probe(QDir(dir).filePath("run.lock"));
    probe.setStaleLockTime(0);
    if (probe.tryLock(0)) return probe.unlock();
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
    QSaveFile f(QDir(m_dir).filePath("curves.json"));
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(QJsonObject{{"length_curves", m_curves}}).toJson()) < 0
        || !f.commit())
        throw Error(QString("%1: cannot write curves.json (%2)").arg(m_dir, f.errorString()));
}

void RunFolder::finish(const TrainOutcome& o, double wallSeconds)
{
    QJsonArray lengths, values;
    for (size_t i = 0; i < o.finalCurve.lengths.size(); ++i) {
        lengths.append(o.finalCurve.lengths[i]);
        values.append(o.finalCurve.valueAt(i));
    }
    const QJsonObject doc{{"status", statusName(o.status).toLower()}, {"step", o.step}, {"wall_time_s", wallSeconds},
                          {"message", o.message}, {"checkpoint", o.checkpoint},
                          {"final", QJsonObject{{"metric", o.finalCurve.metric}, {"lengths", lengths}, {"values", values},
                                                {"summary", o.finalCurve.summary()}}}};
    QSaveFile f(QDir(m_dir).filePath("result.json"));
    if (!f.open(QIODevice::WriteOnly) || f.write(QJsonDocument(doc).toJson()) < 0 || !f.commit())
        throw Error(QString("%1: cannot write result.json (%2)").arg(m_dir, f.errorString()));
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
    r.status = runStatus(dir);
    QFile cf(QDir(dir).filePath("curves.json"));
    if (cf.open(QIODevice::ReadOnly)) {
        for (const auto v : QJsonDocument::fromJson(cf.readAll()).object()["length_curves"].toArray())
            if (auto c = lengthCurveFromJson(v.toObject())) r.curves.push_back(std::move(*c));
    }
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

QString runStatus(const QString& dir)
{
    QFile f(QDir(dir).filePath("result.json"));
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object().value("status").toString();
}

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
