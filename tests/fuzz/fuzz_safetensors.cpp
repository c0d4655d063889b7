// The safetensors reader (header and body) and the checkpoint inspector on arbitrary bytes: the
// inspector must describe any file without throwing; the reader must read it or refuse it, and
// every tensor it returns must convert to float32 (or be refused by dtype) within its bytes.
#include "base/io/checkpointinfo.h"
#include "base/io/safetensors.h"
#include "fuzzinput.h"

using namespace parrot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QString path = fuzz::writeInput(data, size, "model.safetensors");
    const CheckpointInfo info = inspectCheckpoint(path);
    (void)info.toJson();
    fuzz::readOrRefuse([&] {
        const SafetensorsFile file = readSafetensors(path);
        for (auto it = file.tensors.cbegin(); it != file.tensors.cend(); ++it)
            fuzz::readOrRefuse([&] {
                const std::vector<float> values = toFloat32(it.value(), it.key());
                if (int64_t(values.size()) != it.value().elementCount()) fuzz::fail("toFloat32 returned the wrong count for " + it.key());
            });
    });
    return 0;
}
