// Soak: many short training runs back to back, through the window's worker (a TrainWorker on its
// own QThread, as MainWindow runs one) and through a sweep (SweepRunner, as the Experiments tab
// and `parrotscope sweep` run one: each run a `train` process, this process the parent), printing
// this process's resident memory after each run, its peak (VmHWM), and the growth per run fitted
// over the second half of the runs (the first ones warm caches and allocators up; a leak shows as
// steady growth after that).
//
// Usage: bench_soak [--runs N] [--steps N] [--app PATH]   (PATH: the parrotscope to run sweeps with)
#include "base/config.h"
#include "base/experiments/sweep.h"
#include "base/experiments/sweeprunner.h"
#include "base/presets.h"
#include "core/train/trainworker.h"

#include <QCoreApplication>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QThread>

#include <cstdio>
#include <vector>

using namespace parrot;

namespace {

// A field of /proc/self/status in megabytes (VmRSS, VmHWM).
double statusMb(const char* field)
{
    QFile f("/proc/self/status");
    if (!f.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith(field)) return line.simplified().split(' ').value(1).toDouble() / 1024.0;
    return 0;
}

// Least-squares slope of y over its index, from `from` on, in y's unit per run.
double slope(const std::vector<double>& y, size_t from)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = from; i < y.size(); ++i) {
        n += 1;
        sx += double(i);
        sy += y[i];
        sxx += double(i) * double(i);
        sxy += double(i) * y[i];
    }
    const double d = n * sxx - sx * sx;
    return d > 0 ? (n * sxy - sx * sy) / d : 0;
}

void report(const char* what, const std::vector<double>& rss)
{
    if (rss.empty()) return;
    std::printf("%s: %zu runs; resident memory after the first %.1f MB, after the last %.1f MB, peak so far %.1f MB\n", what,
                rss.size(), rss.front(), rss.back(), statusMb("VmHWM:"));
    const double perRun = slope(rss, rss.size() / 2) * 1024.0;
    std::printf("%s: growth over the second half %+.1f KB per run (%+.1f MB over %zu runs)%s\n", what, perRun,
                perRun * double(rss.size() - rss.size() / 2) / 1024.0, rss.size() - rss.size() / 2,
                std::abs(perRun) < 64 ? ": flat" : ": GROWING");
}

}  // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    int runs = 100, steps = 30;
    QString exe = QDir(QCoreApplication::applicationDirPath()).filePath("../app/parrotscope");
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); i += 2) {
        if (args[i] == "--runs") runs = args[i + 1].toInt();
        else if (args[i] == "--steps") steps = args[i + 1].toInt();
        else if (args[i] == "--app") exe = args[i + 1];
        else {
            std::fprintf(stderr, "bench_soak: unknown option %s\nusage: bench_soak [--runs N] [--steps N] [--app PATH]\n", qPrintable(args[i]));
            return 2;
        }
    }
    if (runs < 4 || steps < 1) {
        std::fprintf(stderr, "bench_soak: --runs must be at least 4 and --steps at least 1\n");
        return 2;
    }
    registerMetaTypes();
    QTemporaryDir work;
    ExperimentConfig c = loadPreset("copy-tiny");
    c.train.steps = steps;
    c.train.evalEvery = steps / 2;
    c.train.checkpointEvery = steps / 3;
    c.task.evalSamples = 32;

    // 1. The window's worker: a fresh model, a run folder, a thread, the queued signals.
    std::vector<double> rss;
    for (int r = 0; r < runs; ++r) {
        c.seed = r + 1;
        auto* worker = new TrainWorker(Model::create(c), work.filePath(QString("worker/%1").arg(r)));
        QThread thread;
        worker->moveToThread(&thread);
        QEventLoop loop;
        long long progressEvents = 0;
        QObject::connect(&thread, &QThread::started, worker, &TrainWorker::run);
        QObject::connect(worker, &TrainWorker::progress, &loop, [&] { ++progressEvents; });
        QObject::connect(worker, &TrainWorker::finished, &loop, [&](const TrainOutcome& o) {
            if (o.status != TrainOutcome::Status::Finished) std::fprintf(stderr, "run %d: %s\n", r, qPrintable(o.message));
            loop.quit();
        });
        QObject::connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
        thread.start();
        loop.exec();
        thread.quit();
        thread.wait();
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        rss.push_back(statusMb("VmRSS:"));
        if ((r + 1) % 10 == 0) std::printf("worker run %d: %.1f MB resident\n", r + 1, rss.back()), std::fflush(stdout);
    }
    report("window's worker", rss);

    // 2. A sweep of the same runs, one seed each, 2 at a time.
    if (!QFile::exists(exe)) {
        std::fprintf(stderr, "bench_soak: %s is missing: build the app or give --app\n", qPrintable(exe));
        return 1;
    }
    QJsonArray seeds;
    for (int r = 0; r < runs; ++r) seeds.append(r + 1);
    const QJsonObject sweep{{"name", "soak"}, {"experiment", toJson(c)}, {"grid", QJsonObject{{"seed", seeds}}}};
    const QString file = work.filePath("soak.json");
    QFile out(file);
    if (!out.open(QIODevice::WriteOnly) || out.write(QJsonDocument(sweep).toJson()) < 0) return 1;
    out.close();
    SweepRunner runner(loadSweep(file, work.filePath("sweep")), exe, 2);
    std::vector<double> sweepRss;
    QEventLoop loop;
    QObject::connect(&runner, &SweepRunner::runFinished, &loop, [&](const QString& name, const QString& status, double) {
        if (status != "finished") std::fprintf(stderr, "%s: %s\n", qPrintable(name), qPrintable(status));
        sweepRss.push_back(statusMb("VmRSS:"));
        if (sweepRss.size() % 10 == 0) std::printf("sweep run %zu: %.1f MB resident\n", sweepRss.size(), sweepRss.back()), std::fflush(stdout);
    });
    QObject::connect(&runner, &SweepRunner::finished, &loop, &QEventLoop::quit);
    runner.start();
    if (runner.isRunning()) loop.exec();
    report("sweep (this process runs it)", sweepRss);
    return 0;
}
