// What this build runs on: versions, BLAS, threads, device. For --diagnostics, Help -> About
// and every run folder's config.json.
#pragma once

#include <QJsonObject>
#include <QString>

namespace parrot {

struct Diagnostics {
    QString appVersion;
    QString qtVersion;
    QString torchVersion;
    QString blas;      // the BLAS library actually loaded in this process
    bool blasIsReference = false;
    int threads = 1;   // torch intra-op threads
    int cores = 1;
    QString device;    // "CPU" or "CUDA (n GPUs)"
};

Diagnostics diagnostics();
QString diagnosticsText(const Diagnostics& d);
QJsonObject environmentJson();

// Sets torch's intra-op threads: `requested` > 0 as given, 0 for all cores
// (docs/CONTRIBUTING.md trap 2: torch starts with 1 thread on 2 cores). Returns the count in use.
// The choice is remembered: OpenMP keeps the count per thread, so training and evaluation
// call applyThreads() on their own worker threads.
int configureThreads(int requested);
int applyThreads();

}  // namespace parrot
