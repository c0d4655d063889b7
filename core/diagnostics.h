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
    QString blas;      // the BLAS library actually loaded in this process, with OpenBLAS's kernels
    bool blasIsReference = false;
    int threads = 1;   // torch intra-op threads
    int cores = 1;
    QString device;    // deviceDescription(), and why not a GPU where one could be expected
    QString kernels;   // the vector build each CPU kernel runs (PARROT_CPU_KERNELS caps it)
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

// Flush-to-zero and denormals-are-zero on the calling thread (x86's MXCSR; threads started from it
// afterwards inherit it). Numbers below 1.2e-38 become 0: a step whose activations or gradients
// fall there (sharp attention, or a run at a high learning rate) otherwise runs its matrix
// products many times slower. Called first thing in main() and by applyThreads().
void flushDenormals();

// Settings the libraries read once, when they are loaded, so they must be in the environment
// before the process starts; call first thing in main(). Where one is missing the process sets
// it, so that every process it starts inherits it, and, when `restart`, starts itself again
// (execv, once: the second start finds it set) so that this process has it too. A command that
// runs no model's math on the CPU's threads passes `restart` false and saves a second start
// (about half a second of CPU). A setting the user made is never changed. The reason is in the .cpp.
//  - GOMP_SPINCOUNT=20000 unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set.
void restartWithLibrarySettings(char** argv, bool restart = true);

// OpenBLAS's kernel set in this process ("Cooperlake", "Haswell", ...; OPENBLAS_CORETYPE
// overrides its own choice), or "" when the BLAS is not OpenBLAS. `--diagnostics` shows it.
QString openBlasCore();

}  // namespace parrot
