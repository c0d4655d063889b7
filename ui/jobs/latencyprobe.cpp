#include "ui/jobs/latencyprobe.h"

#include <QTimer>

#include <algorithm>
#include <cmath>

#include <time.h>

namespace parrot {

namespace {

// The calling thread's CPU time in nanoseconds, or -1.
qint64 threadCpuNs()
{
#ifdef CLOCK_THREAD_CPUTIME_ID
    timespec t{};
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) return qint64(t.tv_sec) * 1000000000 + t.tv_nsec;
#endif
    return -1;
}

}  // namespace

LatencyProbe::LatencyProbe(QObject* parent) : QObject(parent) { m_phases.push_back({"window", {}, -1, -1, 0, {}}); }

LatencyProbe::~LatencyProbe() = default;

void LatencyProbe::start()
{
    if (!m_timer) {
        m_timer = new QTimer(this);
        // A coarse timer may be moved by up to 5% to batch wake-ups, which would read as lateness.
        m_timer->setTimerType(Qt::PreciseTimer);
        m_timer->setInterval(kIntervalMs);
        connect(m_timer, &QTimer::timeout, this, &LatencyProbe::tick);
    }
    if (m_timer->isActive()) return;
    if (!m_clock.isValid()) m_clock.start();
    if (m_phases[m_current].startNs < 0) m_phases[m_current].startNs = m_clock.nsecsElapsed();
    // Counted from now: whatever holds the thread before the first tick is a stall too (the
    // window's first show, when the probe starts before it). The time spent stopped is not.
    m_lastNs = m_clock.nsecsElapsed();
    m_lastCpuNs = threadCpuNs();
    m_timer->start();
}

void LatencyProbe::stop()
{
    if (m_timer) m_timer->stop();
}

bool LatencyProbe::isRunning() const { return m_timer && m_timer->isActive(); }

void LatencyProbe::setPhase(const QString& phase)
{
    const auto found = std::find_if(m_phases.begin(), m_phases.end(), [&](const Phase& p) { return p.name == phase; });
    if (found == m_phases.end()) {
        m_phases.push_back({phase, {}, -1, -1, 0, {}});
        m_current = m_phases.size() - 1;
    } else {
        m_current = size_t(found - m_phases.begin());
    }
    if (m_clock.isValid()) m_phases[m_current].startNs = m_clock.nsecsElapsed();
}

void LatencyProbe::tick()
{
    const qint64 now = m_clock.nsecsElapsed();
    const qint64 cpu = threadCpuNs();
    if (m_lastNs >= 0) {
        // A tick on time is 0 late; one early (timers may fire a little ahead) is not a negative stall.
        const double stall = std::max(0.0, double(now - m_lastNs) / 1e6 - kIntervalMs);
        Phase& p = m_phases[m_current];
        const double atS = double(now - std::max<qint64>(p.startNs, 0)) / 1e9;
        p.stallsMs.push_back(float(stall));
        if (float(stall) > p.longestMs) {
            p.longestMs = float(stall);
            p.longestAtS = atS;
        }
        if (stall > kLongStallMs) p.longStalls.push_back({atS, stall, cpu >= 0 && m_lastCpuNs >= 0 ? double(cpu - m_lastCpuNs) / 1e6 : -1});
    }
    m_lastNs = now;
    m_lastCpuNs = cpu;
}

LatencyProbe::Stats LatencyProbe::statsOf(const Phase& p)
{
    Stats s;
    s.phase = p.name;
    std::vector<float> stalls = p.stallsMs;
    s.ticks = int(stalls.size());
    if (stalls.empty()) return s;
    std::sort(stalls.begin(), stalls.end());
    s.longestMs = stalls.back();
    // the nearest-rank percentile: the smallest stall at least 99% of the ticks do not exceed
    const size_t rank = size_t(std::ceil(0.99 * double(stalls.size())));
    s.p99Ms = stalls[std::max<size_t>(rank, 1) - 1];
    s.longestAtS = p.longestAtS;
    s.longStalls = p.longStalls;
    return s;
}

std::vector<LatencyProbe::Stats> LatencyProbe::stats() const
{
    std::vector<Stats> all;
    for (const Phase& p : m_phases)
        if (!p.stallsMs.empty()) all.push_back(statsOf(p));
    return all;
}

LatencyProbe::Stats LatencyProbe::stats(const QString& phase) const
{
    for (const Phase& p : m_phases)
        if (p.name == phase) return statsOf(p);
    Stats none;
    none.phase = phase;
    return none;
}

LatencyProbe::Stats LatencyProbe::overall() const
{
    Phase all;
    all.name = "all";
    for (const Phase& p : m_phases) {
        all.stallsMs.insert(all.stallsMs.end(), p.stallsMs.begin(), p.stallsMs.end());
        all.longStalls.insert(all.longStalls.end(), p.longStalls.begin(), p.longStalls.end());
    }
    Stats s = statsOf(all);
    s.longestAtS = 0;  // seconds into different phases mean nothing together
    return s;
}

void LatencyProbe::clear()
{
    for (Phase& p : m_phases) {
        p.stallsMs.clear();
        p.longestMs = -1;
        p.longestAtS = 0;
        p.longStalls.clear();
    }
    if (m_clock.isValid()) m_lastNs = m_clock.nsecsElapsed();
    m_lastCpuNs = threadCpuNs();
}

QString LatencyProbe::summary() const
{
    const Stats s = overall();
    return QString("GUI thread: %1 ticks of %2 ms, longest stall %3 ms, 99th percentile %4 ms")
        .arg(s.ticks)
        .arg(kIntervalMs)
        .arg(s.longestMs, 0, 'f', 1)
        .arg(s.p99Ms, 0, 'f', 1);
}

bool LatencyProbe::latencyRequested(bool flag)
{
    if (flag) return true;
    const QString v = qEnvironmentVariable("PARROTSCOPE_MEASURE_LATENCY").trimmed().toLower();
    return !v.isEmpty() && v != "0" && v != "false" && v != "no";
}

}  // namespace parrot
