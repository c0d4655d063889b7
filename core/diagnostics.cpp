#include "diagnostics.h"

#include "version.h"
#include "kernels/fastpaths.h"

#include <QFile>
#include <QSysInfo>
#include <QtGlobal>

#include <atomic>
#include <thread>

#include <malloc.h>

namespace parrot {

QString appVersion() { return QStringLiteral(PARROT_VERSION); }

namespace {

// Which BLAS the dynamic loader picked (Debian switches libblas.so.3 by alternatives).
QString loadedBlas(bool& reference)
{
    reference = false;
    QFile maps("/proc/self/maps");
    if (!maps.open(QIODevice::ReadOnly)) return "unknown (no /proc/self/maps)";
    const QString text = QString::fromUtf8(maps.readAll());
    struct Known { const char* needle; const char* name; };
    static const Known known[] = {{"openblas-openmp", "OpenBLAS (OpenMP)"}, {"openblas-pthread", "OpenBLAS (pthreads)"},
                                  {"openblas-serial", "OpenBLAS (serial)"}, {"libopenblas", "OpenBLAS"},
                                  {"libmkl", "Intel MKL"}, {"blis", "BLIS"}, {"atlas", "ATLAS"}};
    for (const QString& line : text.split('\n')) {
        const qsizetype slash = line.indexOf('/');
        if (slash < 0 || (!line.contains("blas", Qt::CaseInsensitive) && !line.contains("mkl"))) continue;
        const QString path = line.mid(slash).trimmed();
        for (const Known& k : known)
            if (path.contains(k.needle)) return QString("%1 (%2)").arg(k.name, path);
        if (path.contains("/blas/libblas")) {
            reference = true;
            return QString("reference BLAS, slow: install libopenblas0-openmp (%1)").arg(path);
        }
    }
    return "none loaded";
}

}  // namespace

Diagnostics diagnostics()
{
    Diagnostics d;
    d.appVersion = appVersion();
    d.qtVersion = qVersion();
    d.torchVersion = QStringLiteral(TORCH_VERSION);
    d.blas = loadedBlas(d.blasIsReference);
    d.threads = at::get_num_threads();
    d.cores = int(std::max(1u, std::thread::hardware_concurrency()));
    d.device = torch::cuda::is_available() ? QString("CUDA (%1 GPU%2)").arg(torch::cuda::device_count())
                                                 .arg(torch::cuda::device_count() == 1 ? "" : "s")
                                           : QString("CPU");
    return d;
}

QString diagnosticsText(const Diagnostics& d)
{
    return QString("Parrotscope %1\n"
                   "Qt:       %2\n"
                   "LibTorch: %3\n"
                   "BLAS:     %4\n"
                   "Threads:  %5 of %6 cores\n"
                   "Device:   %7\n"
                   "System:   %8\n")
        .arg(d.appVersion, d.qtVersion, d.torchVersion, d.blas)
        .arg(d.threads).arg(d.cores)
        .arg(d.device, QSysInfo::prettyProductName());
}

QJsonObject environmentJson()
{
    const Diagnostics d = diagnostics();
    return QJsonObject{{"app_version", d.appVersion}, {"qt_version", d.qtVersion}, {"torch_version", d.torchVersion},
                       {"blas", d.blas}, {"threads", d.threads}, {"cores", d.cores}, {"device", d.device},
                       {"system", QSysInfo::prettyProductName()}};
}

namespace {
std::atomic<int> g_threads{0};
}

namespace {

// Training allocates and frees the same large activations every step. glibc hands blocks above
// its mmap threshold back to the kernel when freed, and trims the heap's top, so each step
// page-faulted its activations in again (about a tenth of a training step's time in perf, in the
// kernel's page-fault and clearing paths). Keeping freed memory in the heap avoids that; resident
// memory stays at the run's peak, which it reaches in the first step anyway.
void keepFreedMemory()
{
    static const bool once = [] {
        if (!fastPaths()) return false;  // PARROT_REFERENCE_PATHS=1: the allocator as before, for A/B runs
        mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's upper limit on 64-bit
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        return true;
    }();
    (void)once;
}

}  // namespace

int configureThreads(int requested)
{
    keepFreedMemory();
    g_threads = requested > 0 ? requested : int(std::max(1u, std::thread::hardware_concurrency()));
    return applyThreads();
}

int applyThreads()
{
    const int n = g_threads.load() > 0 ? g_threads.load() : int(std::max(1u, std::thread::hardware_concurrency()));
    if (at::get_num_threads() != n) at::set_num_threads(n);
    return at::get_num_threads();
}

}  // namespace parrot
