// How responsive the GUI thread is, measured from inside: a timer on that thread asks to fire every
// kIntervalMs, and each tick records how late it came (the time since the previous tick less the
// interval). Anything that holds the thread (a long replot, a file read, building a model) delays
// the next tick by as long as it held it, so the lateness is the stall a user would have felt.
// Ticks are grouped under a phase label, so a driver (bench/bench_gui_latency) can ask for the
// longest and the 99th-percentile stall of each thing it did.
//
// Off by default: no timer exists until start(), so a normal session pays nothing. The window
// starts one with `parrotscope --measure-latency` or PARROTSCOPE_MEASURE_LATENCY=1
// (latencyRequested) and prints summary() to stderr when it closes.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>

#include <vector>

class QTimer;

namespace parrot {

class LatencyProbe : public QObject {
    Q_OBJECT
public:
    // 5 ms: fine enough to see a 16 ms frame missed, coarse enough that the probe's own ticks
    // cost the thread well under 1% of its time.
    static constexpr int kIntervalMs = 5;

    // The stall a user notices as a hitch: the goal is none over it, anywhere.
    static constexpr double kLongStallMs = 50;

    // A stall over kLongStallMs: when it ended (seconds into its phase), how long it was, and how
    // much of the interval the GUI thread spent on the CPU. Busy for most of it: the thread's own
    // work held it. Busy for little of it: it was waiting (for a core another process had, for the
    // disk, for a lock), which a loaded machine shows as jitter.
    struct LongStall {
        double atS = 0;
        double ms = 0;
        double cpuMs = -1;  // -1 where the thread's CPU clock cannot be read
    };

    // A phase's figures. Stalls are in milliseconds; ticks counts the ticks recorded in it.
    struct Stats {
        QString phase;
        int ticks = 0;
        double longestMs = 0;
        double p99Ms = 0;
        double longestAtS = 0;  // seconds into the phase at which the longest stall ended
        std::vector<LongStall> longStalls;  // every stall over kLongStallMs, in order
    };

    explicit LatencyProbe(QObject* parent = nullptr);
    ~LatencyProbe() override;

    // Must be called on the thread being measured (the GUI thread). The first tick's lateness is
    // counted from start(); start() on a running probe only keeps it running; stop() keeps what
    // was recorded.
    void start();
    void stop();
    bool isRunning() const;

    // Later ticks count under `phase` (a stall is counted in the phase in which it ends, so set
    // the phase before starting the work it names). The first phase is "window".
    void setPhase(const QString& phase);
    QString phase() const { return m_phases[m_current].name; }

    // Every phase that recorded a tick, in the order they were first set.
    std::vector<Stats> stats() const;
    Stats stats(const QString& phase) const;  // zero ticks for a phase never set
    Stats overall() const;                   // all phases together, named "all"
    void clear();                            // forget every tick (the phases stay)

    // "GUI thread: 1234 ticks, longest stall 12.3 ms, 99th percentile 4.5 ms"
    QString summary() const;

    // Whether the user asked for the probe: the flag, or PARROTSCOPE_MEASURE_LATENCY set to
    // anything but "", "0", "false" or "no".
    static bool latencyRequested(bool flag);

private:
    struct Phase {
        QString name;
        std::vector<float> stallsMs;
        qint64 startNs = -1;  // the clock when the phase was set
        float longestMs = -1;  // -1 before its first tick
        double longestAtS = 0;
        std::vector<LongStall> longStalls;
    };
    void tick();
    static Stats statsOf(const Phase& p);

    QTimer* m_timer = nullptr;
    QElapsedTimer m_clock;
    qint64 m_lastNs = -1;  // the previous tick's time, or start()'s
    qint64 m_lastCpuNs = -1;  // the GUI thread's CPU time then
    std::vector<Phase> m_phases;
    size_t m_current = 0;
};

}  // namespace parrot
