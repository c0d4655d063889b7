// One way for the UI to run work off the GUI thread. A panel owns a BackgroundJob per kind of
// work (evaluation, a checkpoint read, a probe) and starts functions on it:
//
//     m_job.start([=](JobContext& job) { return model.evaluate(lengths, ..., [&](int d, int t) {
//                      job.progress(d, t);
//                      return !job.cancelled(); }); },
//                 [this](const LengthCurve& c) { show(c); },
//                 [this](const QString& error) { showError(error); });
//
// The work runs on its own thread and receives copies, never widgets. Whatever it returns or
// throws (the first line of the exception's message) comes back on the GUI thread by a queued
// call, but only while that start() is still the current one: a newer start(), or cancel(), makes
// it stale, and a stale job's result, error and progress are dropped. stop() keeps it current:
// the work sees cancelled(), returns what it has, and that partial result is delivered.
// Progress is coalesced: however fast the work reports, at most one delivery is queued at a
// time, and it carries the latest value. The destructor cancels every job still running and
// waits for its thread, so the owner needs no wait of its own, and nothing is called afterwards.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

class QThread;

namespace parrot {

class BackgroundJob;

namespace detail {
struct JobRun;
}

// What the work sees of its job, on the worker thread.
class JobContext {
public:
    // stop() or cancel() was called, a newer start() replaced this job, or its owner is going away.
    bool cancelled() const;
    // `done` of `total` (both >= 0); arrives as BackgroundJob::progress on the GUI thread.
    void progress(int done, int total);

private:
    friend class BackgroundJob;
    JobContext(BackgroundJob* job, std::shared_ptr<detail::JobRun> run) : m_job(job), m_run(std::move(run)) {}
    BackgroundJob* m_job;
    std::shared_ptr<detail::JobRun> m_run;
};

class BackgroundJob : public QObject {
    Q_OBJECT
public:
    using ErrorHandler = std::function<void(const QString& message)>;

    explicit BackgroundJob(QObject* parent = nullptr);
    ~BackgroundJob() override;

    // Runs `work(JobContext&)` on a new thread; then, on the GUI thread, `onResult(result)` (or
    // `onResult()` for work that returns nothing) or `onError(message)`, and finished().
    // A job already running becomes stale: it is cancelled and what it returns is dropped.
    template <typename Work, typename OnResult>
    void start(Work work, OnResult onResult, ErrorHandler onError = {});

    // Asks the current job to end early; what it returns is still delivered.
    void stop();
    // Asks the current job to end and drops whatever it returns or throws.
    void cancel();
    // A job was started and has not delivered (nor been cancelled) yet.
    bool isRunning() const { return m_current != nullptr; }
    // stop() was called on the job running now or, inside its callbacks, on the one delivering.
    bool stopRequested() const { return m_stopRequested; }

signals:
    void progress(int done, int total);
    void finished();  // the current job delivered its result or error

private:
    friend class JobContext;
    void launch(std::function<void(JobContext&)> work, std::function<void()> deliver, ErrorHandler onError);
    void postProgress(const std::shared_ptr<detail::JobRun>& run);
    void deliverProgress(const std::shared_ptr<detail::JobRun>& run);
    void deliver(QThread* thread, const std::shared_ptr<detail::JobRun>& run, const std::function<void()>& onResult,
                 const ErrorHandler& onError);

    quint64 m_generation = 0;               // bumped by start() and cancel(): older jobs are stale
    std::shared_ptr<detail::JobRun> m_current;  // the job whose result is still wanted
    bool m_stopRequested = false;
    std::vector<QThread*> m_threads;        // every thread not yet finished, stale ones included
};

template <typename Work, typename OnResult>
void BackgroundJob::start(Work work, OnResult onResult, ErrorHandler onError)
{
    using Result = std::invoke_result_t<Work&, JobContext&>;
    if constexpr (std::is_void_v<Result>) {
        launch([work = std::move(work)](JobContext& job) mutable { work(job); },
               [onResult = std::move(onResult)]() mutable { onResult(); }, std::move(onError));
    } else {
        // Written by the worker, read on the GUI thread after the worker has finished.
        auto result = std::make_shared<std::optional<Result>>();
        launch([work = std::move(work), result](JobContext& job) mutable { result->emplace(work(job)); },
               [onResult = std::move(onResult), result]() mutable { onResult(std::move(**result)); }, std::move(onError));
    }
}

}  // namespace parrot
