#include "base/experiments/sweeprunner.h"

#include "base/error.h"
#include "base/io/jsonfile.h"
#include "base/io/runfolder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QThread>

#include <algorithm>

namespace parrot {

struct SweepRunner::Job {
    std::unique_ptr<QProcess> process;
    const SweepRun* run = nullptr;
    std::unique_ptr<QFile> log;
    QElapsedTimer clock;
    double fraction = 0;  // of this run's steps, from its "step i/n" lines
    QByteArray pending;   // a partial line
};

SweepRunner::SweepRunner(SweepPlan plan, QString executable, int jobs, QObject* parent)
    : QObject(parent), m_plan(std::move(plan)), m_exe(std::move(executable)), m_jobs(std::max(1, jobs))
{
}

SweepRunner::~SweepRunner()
{
    for (auto& j : m_running) {
        j->process->disconnect(this);
        j->process->kill();
        j->process->waitForFinished(3000);
    }
}

int SweepRunner::threadsPerJob() const
{
    return std::max(1, std::max(1, QThread::idealThreadCount()) / m_jobs);  // the cores shared between the jobs
}

double SweepRunner::elapsedSeconds() const { return m_clock.isValid() ? m_clock.elapsed() / 1000.0 : 0.0; }

int SweepRunner::prepare()
{
    // A finished run made from other settings (the sweep file or --set changed since) is neither
    // skipped silently nor thrown away: the user decides.
    QStringList stale;
    for (const SweepRun& r : m_plan.runs) {
        if (runStatus(r.runDir) != "finished") continue;
        const QJsonObject made = readJsonObject(QDir(r.runDir).filePath("config.json"), "a finished run's config");
        if (made.value("experiment").toObject() != toJson(r.config)) stale << r.name;
    }
    if (!stale.isEmpty()) {
        // a folder shrunk with --set: how to resume it as it was made
        const std::optional<SweepPlan> index = readSweepIndex(m_plan.outDir);
        const QString made = index && index->overrides != m_plan.overrides
                                 ? QString(" (it was made with %1)").arg(index->overrides.isEmpty() ? QString("no --set")
                                                                                                    : "--set " + index->overrides.join(" --set "))
                                 : QString();
        throw Error(QString("%1: %2 finished run%3 (%4%5) were made with other settings than the sweep gives now; "
                            "choose another folder, give the settings it was made with%8, or delete %6 to redo %7")
                        .arg(m_plan.outDir).arg(stale.size()).arg(stale.size() == 1 ? "" : "s")
                        .arg(stale.mid(0, 3).join(", "), stale.size() > 3 ? ", ..." : "")
                        .arg(stale.size() == 1 ? "that run's folder" : "those runs' folders", stale.size() == 1 ? "it" : "them", made));
    }
    writeSweepFiles(m_plan);
    m_todo.clear();
    for (const SweepRun& r : m_plan.runs) {
        if (runStatus(r.runDir) == "finished" || m_leaveAlone.contains(r.name)) continue;
        RunFolder::checkNotInUse(r.runDir);  // another sweep process on the same folder
        if (sweepRunResumable(r)) {
            m_todo.push_back(&r);
            continue;
        }
        if (QFileInfo::exists(r.runDir) && !QDir(r.runDir).removeRecursively())
            throw Error(QString("%1: cannot clear the unfinished run").arg(r.runDir));
        m_todo.push_back(&r);
    }
    if (!QDir(m_plan.outDir).mkpath("logs")) throw Error(QString("%1: cannot create logs/").arg(m_plan.outDir));
    m_prepared = true;
    return int(m_todo.size());
}

QStringList SweepRunner::toDoNames() const
{
    QStringList names;
    for (const SweepRun* r : m_todo) names << r->name;
    return names;
}

void SweepRunner::start()
{
    if (m_started) return;
    if (!m_prepared) prepare();
    m_started = true;
    m_clock.start();
    m_lastReport.start();
    launchMore();
    if (m_running.empty()) finish(false);
}

void SweepRunner::launchMore()
{
    while (m_next < m_todo.size() && int(m_running.size()) < m_jobs) {
        auto job = std::make_unique<Job>();
        Job* j = job.get();
        j->run = m_todo[m_next++];
        j->process = std::make_unique<QProcess>();
        j->process->setProcessChannelMode(QProcess::MergedChannels);
        j->log = std::make_unique<QFile>(QDir(m_plan.outDir).filePath("logs/" + j->run->name + ".log"));
        if (!j->log->open(QIODevice::WriteOnly | QIODevice::Truncate)) j->log.reset();
        connect(j->process.get(), &QProcess::readyReadStandardOutput, this, [this, j] { onOutput(j); });
        connect(j->process.get(), &QProcess::finished, this, [this, j] { onExit(j); });
        connect(j->process.get(), &QProcess::errorOccurred, this, [this, j](QProcess::ProcessError e) {
            if (e == QProcess::FailedToStart) onExit(j);
        });
        m_running.push_back(std::move(job));
        emit runStarted(j->run->name);
        j->clock.start();
        j->process->start(m_exe, sweepRunArguments(*j->run, threadsPerJob()));
    }
}

void SweepRunner::onOutput(Job* j)
{
    const QByteArray data = j->process->readAllStandardOutput();
    if (j->log) j->log->write(data);
    j->pending += data;
    static const QRegularExpression step("^step (\\d+)/(\\d+)");
    qsizetype nl;
    while ((nl = j->pending.indexOf('\n')) >= 0) {
        const QString line = QString::fromUtf8(j->pending.left(nl));
        j->pending.remove(0, nl + 1);
        const auto m = step.match(line);
        if (m.hasMatch() && m.captured(2).toDouble() > 0) j->fraction = m.captured(1).toDouble() / m.captured(2).toDouble();
    }
    if (m_lastReport.elapsed() > 300) reportProgress();
}

void SweepRunner::onExit(Job* j)
{
    const auto it = std::find_if(m_running.begin(), m_running.end(), [j](const auto& p) { return p.get() == j; });
    if (it == m_running.end() || m_done) return;  // FailedToStart and finished can both arrive
    onOutput(j);
    if (j->log && j->process->error() == QProcess::FailedToStart)
        j->log->write(QString("could not start %1: %2\n").arg(m_exe, j->process->errorString()).toUtf8());
    const QString status = runStatus(j->run->runDir);
    ++m_finished;
    if (status != "finished") ++m_failed;
    const QString name = j->run->name;
    const double seconds = j->clock.elapsed() / 1000.0;
    std::unique_ptr<Job> done = std::move(*it);
    m_running.erase(it);
    done->process->disconnect(this);
    done->process.release()->deleteLater();  // not inside its own signal
    emit runFinished(name, status, seconds);
    reportProgress();
    launchMore();
    if (m_running.empty()) finish(false);
}

void SweepRunner::reportProgress()
{
    m_lastReport.restart();
    if (m_todo.empty()) {
        emit progress(1.0, 0.0);
        return;
    }
    double done = m_finished;
    for (const auto& j : m_running) done += j->fraction;
    const double fraction = std::clamp(done / double(m_todo.size()), 0.0, 1.0);
    const double eta = fraction > 0.02 ? elapsedSeconds() / fraction * (1 - fraction) : -1.0;
    emit progress(fraction, eta);
}

void SweepRunner::cancel()
{
    if (!m_started || m_done) return;
    for (auto& j : m_running) {
        j->process->disconnect(this);
        j->process->kill();
        j->process->waitForFinished(3000);
    }
    m_running.clear();
    finish(true);
}

void SweepRunner::finish(bool cancelled)
{
    if (m_done) return;
    m_done = true;
    try {
        writeSweepIndex(m_plan);  // the statuses, now (prepare() wrote the configs)
    } catch (const Error&) {
        // the runs themselves are written; only the index's statuses are stale
    }
    emit finished(m_failed, cancelled);
}

}  // namespace parrot
