#include "ui/jobs/backgroundjob.h"

#include <QPointer>
#include <QThread>

#include <algorithm>
#include <exception>
#include <limits>

namespace parrot {

namespace detail {

// One start(): shared by the GUI side and its worker thread.
struct JobRun {
    static constexpr quint64 kNoProgress = std::numeric_limits<quint64>::max();
    quint64 generation = 0;
    std::atomic<bool> cancelled{false};
    // The latest (done, total) not yet delivered, packed so the two never tear; kNoProgress
    // when nothing is waiting, which is also how the worker knows whether to queue a delivery.
    std::atomic<quint64> progress{kNoProgress};
    // Written by the worker before it finishes, read on the GUI thread after.
    bool failed = false;
    QString error;
};

}  // namespace detail

using detail::JobRun;

bool JobContext::cancelled() const { return m_run->cancelled.load(); }

void JobContext::progress(int done, int total)
{
    const quint64 packed = (quint64(quint32(done)) << 32) | quint32(total);
    // Only the report that finds the slot empty queues a delivery; later ones overwrite the value
    // it will pick up, so a tight loop costs one queued event, not one per call.
    if (m_run->progress.exchange(packed) == JobRun::kNoProgress) m_job->postProgress(m_run);
}

BackgroundJob::BackgroundJob(QObject* parent) : QObject(parent) {}

BackgroundJob::~BackgroundJob()
{
    cancel();
    for (QThread* t : m_threads) {
        t->wait();
        delete t;  // what it queued is addressed to this object, and is dropped with it
    }
}

void BackgroundJob::stop()
{
    if (!m_current) return;
    m_current->cancelled = true;
    m_stopRequested = true;
}

void BackgroundJob::cancel()
{
    if (m_current) m_current->cancelled = true;
    m_current.reset();
    m_stopRequested = false;
    ++m_generation;
}

void BackgroundJob::launch(std::function<void(JobContext&)> work, std::function<void()> onResult, ErrorHandler onError)
{
    cancel();
    auto run = std::make_shared<JobRun>();
    run->generation = m_generation;
    m_current = run;
    // The thread never touches the owner: it reaches this object only to queue progress, and
    // the destructor waits for it, so `this` outlives it.
    QThread* thread = QThread::create([this, run, work = std::move(work)]() mutable {
        JobContext context(this, run);
        try {
            work(context);
        } catch (const std::exception& e) {
            run->failed = true;
            run->error = QString::fromUtf8(e.what()).section('\n', 0, 0);
        } catch (...) {
            run->failed = true;
            run->error = tr("unknown error");
        }
    });
    m_threads.push_back(thread);
    // Queued (the thread emits it): lands after every progress delivery the work queued.
    connect(thread, &QThread::finished, this,
            [this, thread, run, onResult = std::move(onResult), onError = std::move(onError)] { deliver(thread, run, onResult, onError); });
    thread->start();
}

void BackgroundJob::deliver(QThread* thread, const std::shared_ptr<JobRun>& run, const std::function<void()>& onResult,
                            const ErrorHandler& onError)
{
    m_threads.erase(std::remove(m_threads.begin(), m_threads.end(), thread), m_threads.end());
    thread->deleteLater();
    if (run->generation != m_generation) return;  // replaced or cancelled
    // No longer running before the callbacks run, so they may start the next job.
    m_current.reset();
    QPointer<BackgroundJob> self(this);  // a callback may delete the owner, and this with it
    if (run->failed) {
        if (onError) onError(run->error);
    } else {
        onResult();
    }
    if (self) emit finished();
}

void BackgroundJob::postProgress(const std::shared_ptr<JobRun>& run)
{
    QMetaObject::invokeMethod(this, [this, run] { deliverProgress(run); }, Qt::QueuedConnection);
}

void BackgroundJob::deliverProgress(const std::shared_ptr<JobRun>& run)
{
    const quint64 packed = run->progress.exchange(JobRun::kNoProgress);
    if (packed == JobRun::kNoProgress || run->generation != m_generation) return;
    emit progress(int(quint32(packed >> 32)), int(quint32(packed)));
}

}  // namespace parrot
