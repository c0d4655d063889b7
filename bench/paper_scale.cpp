// paper_scale: a bundled sweep's paper scale (sweep --scale paper) run in this process, one run
// after another, on the device the models are built on (a GPU where there is one), for the GPU
// check (packaging/gpu-check.sh), which builds the core without the window or the command line.
// Prints each run's outcome, the results table and, for training-efficiency, each model's
// examples to 90% against the Transformer's: the gap the copy paper measures.
// Usage: paper_scale SWEEP OUT_DIR [--set KEY=VALUE]... [--device auto|cpu|cuda] [--estimate N]
//   --estimate N: train N steps of each run and print what the whole scale would take here
//   (the median time of a step x its steps), without finishing any run.
#include "trainerstep.h"

#include "base/devicechoice.h"
#include "base/error.h"
#include "base/experiments/results.h"
#include "base/experiments/sweep.h"
#include "base/io/runfolder.h"
#include "core/device.h"
#include "core/model.h"
#include "core/train/trainer.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>

#include <cstdio>
#include <map>

using namespace parrot;

namespace {

void print(const QString& s) { std::fputs(qPrintable(s), stdout), std::fflush(stdout); }

int estimate(const SweepPlan& plan, int steps)
{
    double total = 0;
    for (const SweepRun& run : plan.runs) {
        const bench::StepTime t = bench::trainerStep(run.config, deviceChoice(), 1, steps);
        if (!t.problem.isEmpty()) throw Error(QString("%1: %2").arg(run.name, t.problem));
        const double s = t.seconds;
        const double evals = run.config.train.evalEvery > 0 ? double(run.config.train.steps) / run.config.train.evalEvery : 0;
        print(QString("%1: %2 ms a step x %3 steps = %4 min (+ %5 evaluations)\n")
                  .arg(run.name).arg(1000 * s, 0, 'f', 1).arg(run.config.train.steps).arg(s * run.config.train.steps / 60, 0, 'f', 1)
                  .arg(evals, 0, 'f', 0));
        total += s * run.config.train.steps;
    }
    print(QString("the whole scale, training alone: about %1 h on %2\n").arg(total / 3600, 0, 'f', 1).arg(deviceDescription()));
    return 0;
}

int runAll(const SweepPlan& plan)
{
    QElapsedTimer clock;
    clock.start();
    std::vector<RunRecord> records;
    for (const SweepRun& run : plan.runs) {
        if (runStatus(run.runDir) != "finished") {
            QDir(run.runDir).removeRecursively();
            Model model = Model::create(run.config);
            TrainControl control;
            const TrainOutcome o = train(model, run.runDir, control, {});
            print(QString("%1: %2 (%3 s so far)\n").arg(run.name, o.message).arg(clock.elapsed() / 1000.0, 0, 'f', 0));
        }
        records.push_back(loadRun(run.runDir));
    }
    const ResultsTable t = tabulate(records, ResultPoint::InRange);
    print("\n" + t.toText());
    // The gap: each model's examples to 90% (the mean over its runs) over the first model's.
    std::map<QString, std::vector<long long>> reached;
    std::map<QString, long long> seen;
    QStringList order;
    for (const RunRecord& r : records) {
        const QString model = r.config.name.section('/', 1).section('_', 0, 0);
        if (!order.contains(model)) order << model;
        reached[model].push_back(examplesToReach(r));
        if (!r.metrics.empty()) seen[model] = std::max(seen[model], r.metrics.back().examples);
    }
    auto mean = [](const std::vector<long long>& v) {  // -1 unless every run reached it
        double s = 0;
        for (long long x : v) {
            if (x < 0) return -1.0;
            s += double(x);
        }
        return v.empty() ? -1.0 : s / double(v.size());
    };
    const QString first = order.isEmpty() ? QString() : order.front();
    const double reference = first.isEmpty() ? -1 : mean(reached[first]);
    if (reference <= 0 && !first.isEmpty())
        print(QString("examples to 90%: %1 did not reach 90% within %2 examples: no gap to measure\n").arg(first).arg(seen[first]));
    else
        for (const QString& m : order.mid(1)) {
            const double e = mean(reached[m]);
            print(e > 0 ? QString("examples to 90%: %1 / %2 = %3x\n").arg(m, first).arg(e / reference, 0, 'f', 1)
                        : QString("examples to 90%: %1 did not reach 90% within %2 examples: more than %3x %4\n")
                              .arg(m).arg(seen[m]).arg(double(seen[m]) / reference, 0, 'f', 1).arg(first));
        }
    print(QString("%1 in %2 min on %3\n").arg(plan.name).arg(clock.elapsed() / 60000.0, 0, 'f', 1).arg(deviceDescription()));
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QStringList args = app.arguments().mid(1);
    if (args.size() < 2) {
        std::fputs("usage: paper_scale SWEEP OUT_DIR [--set KEY=VALUE]... [--device auto|cpu|cuda] [--estimate N]\n", stderr);
        return 2;
    }
    try {
        const QString sweep = args.takeFirst(), out = args.takeFirst();
        QStringList sets;
        int estimateSteps = 0;
        while (!args.isEmpty()) {
            const QString a = args.takeFirst();
            if (args.isEmpty()) throw Error(QString("%1: expected a value").arg(a));
            if (a == "--set") sets << args.takeFirst();
            else if (a == "--device") setDeviceChoice(args.takeFirst());
            else if (a == "--estimate") estimateSteps = args.takeFirst().toInt();
            else throw Error(QString("%1: unknown option").arg(a));
        }
        SweepPlan plan = loadSweep(QFile::exists(sweep) ? sweep : sweepPresetFile(sweep), out, {.scale = "paper"});
        overrideSweep(plan, sets);
        print(QString("%1 at paper scale: %2 runs on %3\n").arg(plan.name).arg(plan.runs.size()).arg(deviceDescription()));
        return estimateSteps > 0 ? estimate(plan, estimateSteps) : runAll(plan);
    } catch (const Error& e) {
        std::fprintf(stderr, "paper_scale: %s\n", qPrintable(e.message()));
        return 2;
    }
}
