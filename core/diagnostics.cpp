#include "core/diagnostics.h"

#include "base/version.h"
#include "core/blockcache.h"
#include "core/device.h"
#include "core/kernels/attnkernel.h"
#include "core/kernels/dense16kernel.h"
#include "core/kernels/fastpaths.h"
#include "core/kernels/scankernel.h"

#include <QFile>
#include <QSysInfo>
#include <QtGlobal>

#include <atomic>
#include <thread>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

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
        const QString core = openBlasCore();
        for (const Known& k : known)
            if (path.contains(k.needle))
                return core.isEmpty() ? QString("%1 (%2)").arg(k.name, path) : QString("%1, %2 kernels (%3)").arg(k.name, core, path);
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
    d.device = deviceDescription();
    d.kernels = QString("scan %1, attention %2, 16-bit weights %3")
                    .arg(scan::haveAvx512() ? "AVX-512" : scan::haveAvx2() ? "AVX2" : "baseline", attn::haveAvx2() ? "AVX2" : "baseline",
                         dense16::haveAvx2F16c() ? "AVX2" : "baseline");
    if (const char* cap = std::getenv("PARROT_CPU_KERNELS"); cap && *cap) d.kernels += QString(" (PARROT_CPU_KERNELS=%1)").arg(cap);
    if (d.device == "CPU" && cudaDeviceCount() > 0)
        d.device += QString(" (%1 GPU%2 not chosen)").arg(cudaDeviceCount()).arg(cudaDeviceCount() == 1 ? "" : "s");
    else if (d.device == "CPU" && !torchHasCuda())
        d.device += " (this LibTorch has no CUDA)";
    return d;
}

QString diagnosticsText(const Diagnostics& d)
{
    return QString("Parrotscope %1\n"
                   "Qt:       %2\n"
                   "LibTorch: %3\n"
                   "BLAS:     %4\n"
                   "Kernels:  %5\n"
                   "Threads:  %6 of %7 cores\n"
                   "Device:   %8\n"
                   "System:   %9\n")
        .arg(d.appVersion, d.qtVersion, d.torchVersion, d.blas, d.kernels)
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


QString openBlasCore()
{
    using CoreName = char* (*)();
    const auto name = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
    return name ? QString::fromLatin1(name()).trimmed() : QString();
}

namespace {

// OpenMP's worker threads spin between parallel regions (libgomp: 300,000 rounds) before they
// sleep. With torch on every core, any other work on the machine (the window's own thread,
// plot updates, a compiler) takes a core from a spinning thread and each region waits for it;
// cutting the spinning short keeps a loaded machine's steps near a quiet one's and costs a quiet
// machine nothing (docs/CONTRIBUTING.md, trap 13, has the measurement).
bool shortenOpenMpSpin()
{
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return false;
    setenv("GOMP_SPINCOUNT", "20000", 1);
    return true;
}

}  // namespace

void restartWithLibrarySettings(char** argv, bool restart)
{
    if (shortenOpenMpSpin() && restart) execv("/proc/self/exe", argv);  // returns only on failure: carry on as loaded
}

int configureThreads(int requested)
{
    installBlockCache();  // large tensors reused from step to step (blockcache.h)
    g_threads = requested > 0 ? requested : int(std::max(1u, std::thread::hardware_concurrency()));
    return applyThreads();
}

void flushDenormals() { at::globalContext().setFlushDenormal(true); }

int applyThreads()
{
    flushDenormals();
    const int n = g_threads.load() > 0 ? g_threads.load() : int(std::max(1u, std::thread::hardware_concurrency()));
    if (at::get_num_threads() != n) at::set_num_threads(n);
    return at::get_num_threads();
}

}  // namespace parrot
