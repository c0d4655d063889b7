// Runs a sweep's unfinished runs as child processes (`parrotscope train ...`, N at a time),
// event-driven, so the window and the command line drive the same scheduler: progress from the
// children's "step i/n" lines, an ETA, and cancel (the children are killed; their half-written
// folders are redone next time).
#pragma once

#include "base/experiments/sweep.h"

#include <QElapsedTimer>
#include <QObject>

#include <memory>
#include <vector>

class QFile;
class QProcess;

namespace parrot {

class SweepRunner : public QObject {
    Q_OBJECT
public:
    // `executable`: the parrotscope binary the runs are started with.
    SweepRunner(SweepPlan plan, QString executable, int jobs, QObject* parent = nullptr);
    ~SweepRunner() override;

    // Writes configs/ and index.json and removes what unfinished runs left behind (a run failed
    // or diverged is done again; one cut short or cancelled with a resume file and the plan's
    // settings is resumed: sweepRunResumable). Returns the number of runs left to do.
    // Throws parrot::Error when the folder cannot be written, or when finished runs in it were
    // made with other settings than the plan's (nothing is removed then).
    int prepare();
    // Runs prepare() neither checks nor touches nor counts: those queued or running elsewhere
    // (a Slurm job array's tasks). Call before prepare().
    void leaveAlone(const QStringList& names) { m_leaveAlone = names; }
    // The names of the runs prepare() found to do, in the plan's order.
    QStringList toDoNames() const;
    // Starts the runs prepare() found (prepare() first if it was not called). finished() follows,
    // also when nothing was left to do.
    void start();
    // Kills the running children; finished(…, true) follows at once.
    void cancel();

    bool isRunning() const { return m_started && !m_done; }
    const SweepPlan& plan() const { return m_plan; }
    int toDo() const { return int(m_todo.size()); }
    int finishedCount() const { return m_finished; }
    int failedCount() const { return m_failed; }
    int threadsPerJob() const;
    double elapsedSeconds() const;

signals:
    void runStarted(const QString& name);
    // status: runStatus() of the folder afterwards ("finished", "diverged", ..., "" for a crash)
    void runFinished(const QString& name, const QString& status, double seconds);
    // fraction of the work done (runs, and steps within the running ones), ETA in seconds (-1: unknown)
    void progress(double fraction, double etaSeconds);
    void finished(int failed, bool cancelled);

private:
    struct Job;
    void launchMore();
    void onOutput(Job* job);
    void onExit(Job* job);
    void reportProgress();
    void finish(bool cancelled);

    SweepPlan m_plan;
    QString m_exe;
    int m_jobs;
    std::vector<const SweepRun*> m_todo;
    std::vector<std::unique_ptr<Job>> m_running;
    size_t m_next = 0;
    int m_finished = 0, m_failed = 0;
    bool m_prepared = false, m_started = false, m_done = false;
    QElapsedTimer m_clock, m_lastReport;
    QStringList m_leaveAlone;
};

}  // namespace parrot
