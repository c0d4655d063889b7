#include "core/device.h"

#include "base/error.h"
#include "core/modelimpl.h"

#include <QRegularExpression>

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace parrot {

namespace {

// A GPU's name and memory from the CUDA driver (libcuda.so.1, there wherever a GPU is usable),
// asked directly: Torch's C++ API has no call for them without its CUDA headers, which Debian's
// CPU-only LibTorch lacks. Empty where the driver or the call is missing.
struct GpuFacts {
    QString name;
    double bytes = 0;
};

GpuFacts askDriver(int index)
{
    using Init = int (*)(unsigned);
    using Get = int (*)(int*, int);
    using Name = int (*)(char*, int, int);
    using Memory = int (*)(size_t*, int);
    static void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver) return {};
    const auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
    const auto get = reinterpret_cast<Get>(dlsym(driver, "cuDeviceGet"));
    const auto name = reinterpret_cast<Name>(dlsym(driver, "cuDeviceGetName"));
    const auto memory = reinterpret_cast<Memory>(dlsym(driver, "cuDeviceTotalMem_v2"));
    int device = 0;
    if (!init || !get || !name || init(0) != 0 || get(&device, index) != 0) return {};
    GpuFacts facts;
    char text[256] = {};
    if (name(text, int(sizeof text) - 1, device) == 0) facts.name = QString::fromLocal8Bit(text).trimmed();
    size_t total = 0;
    if (memory && memory(&total, device) == 0) facts.bytes = double(total);
    return facts;
}

// The driver asked once per GPU: a GPU's name and memory do not change, and the status bar asks
// for them with every refresh.
GpuFacts gpuFacts(int index)
{
    static std::mutex mutex;
    static std::map<int, GpuFacts> known;
    std::lock_guard lock(mutex);
    auto it = known.find(index);
    if (it == known.end()) it = known.emplace(index, askDriver(index)).first;
    return it->second;
}

QString gpuLabel(int index)
{
    const GpuFacts f = gpuFacts(index);
    QString label = f.name.isEmpty() ? QString("GPU %1").arg(index) : f.name;
    if (f.bytes > 0) label += QString(", %1 GB").arg(f.bytes / 1e9, 0, 'f', 1);
    return label;
}

// -1 for the CPU, else the GPU index `spec` names (after deviceProblem() found nothing wrong).
int gpuIndex(const QString& spec)
{
    if (spec == "cpu") return -1;
    if (spec == "auto") return cudaDeviceCount() > 0 ? 0 : -1;
    return spec == "cuda" ? 0 : spec.mid(5).toInt();
}

}  // namespace

bool torchHasCuda()
{
    // libtorch_cuda is loaded with libtorch when the build has CUDA; RTLD_NOLOAD only looks.
    static const bool has = [] {
        void* lib = dlopen("libtorch_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
        if (lib) dlclose(lib);
        return lib != nullptr;
    }();
    return has;
}

int cudaDeviceCount()
{
    static const int count = torch::cuda::is_available() ? int(torch::cuda::device_count()) : 0;
    return count;
}

QString deviceProblem(const QString& spec)
{
    static const QRegularExpression cuda("^cuda(:(\\d{1,3}))?$");
    const auto m = cuda.match(spec);
    if (spec == "auto" || spec == "cpu") return {};
    if (!m.hasMatch()) return QString("unknown device '%1' (expected auto, cpu, cuda or cuda:N)").arg(spec);
    if (!torchHasCuda() && cudaDeviceCount() == 0)
        return QString("device '%1' asked for, but this build's LibTorch (%2) has no CUDA; use --device cpu, or build against "
                       "the PyTorch wheel's LibTorch (packaging/torch-from-pip.sh)")
            .arg(spec, QStringLiteral(TORCH_VERSION));
    const int count = cudaDeviceCount();
    if (count == 0) return QString("device '%1' asked for, but no CUDA GPU is visible to this process (check the driver and CUDA_VISIBLE_DEVICES); use --device cpu").arg(spec);
    const int index = m.captured(2).isEmpty() ? 0 : m.captured(2).toInt();
    if (index >= count)
        return QString("device '%1' asked for, but this machine has %2 GPU%3 (cuda:0%4)")
            .arg(spec).arg(count).arg(count == 1 ? "" : "s", count == 1 ? QString() : QString("..cuda:%1").arg(count - 1));
    return {};
}

void setDeviceChoice(const QString& spec)
{
    const QString problem = deviceProblem(spec);
    if (!problem.isEmpty()) throw Error(problem);
    storeDeviceChoice(spec);
}

QString deviceDescription()
{
    const int index = gpuIndex(deviceChoice());
    return index < 0 ? QString("CPU") : QString("CUDA:%1, %2").arg(index).arg(gpuLabel(index));
}

double chosenGpuMemoryBytes()
{
    const int index = gpuIndex(deviceChoice());
    return index < 0 ? 0.0 : gpuFacts(index).bytes;
}

std::vector<DeviceOption> deviceOptions()
{
    std::vector<DeviceOption> options{
        {"auto", QString("Automatic (%1)").arg(cudaDeviceCount() > 0 ? "the first GPU" : "CPU: no GPU here")}, {"cpu", "CPU"}};
    for (int i = 0; i < cudaDeviceCount(); ++i) options.push_back({QString("cuda:%1").arg(i), QString("cuda:%1: %2").arg(i).arg(gpuLabel(i))});
    return options;
}

torch::Device preferredDevice()
{
    const int index = gpuIndex(deviceChoice());
    return index < 0 ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, c10::DeviceIndex(index));
}

}  // namespace parrot
