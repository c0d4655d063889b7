// The torch.save zip reader and its restricted unpickler on arbitrary bytes, through the same
// entry points as a user's pytorch_model.bin: the inspector (which must not throw) and the
// checkpoint reader (which reads or refuses); every tensor returned converts within its bytes.
#include "base/io/checkpointinfo.h"
#include "base/io/importers.h"
#include "base/io/torchzip.h"
#include "fuzzinput.h"

using namespace parrot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QString path = fuzz::writeInput(data, size, "pytorch_model.bin");
    (void)inspectCheckpoint(path).toJson();
    (void)looksLikeLegacyTorch(path);
    fuzz::readOrRefuse([&] {
        TorchZipKind kind;
        const SafetensorsFile file = readTorchZip(path, &kind);
        for (auto it = file.tensors.cbegin(); it != file.tensors.cend(); ++it)
            fuzz::readOrRefuse([&] {
                const std::vector<float> values = toFloat32(it.value(), it.key());
                if (int64_t(values.size()) != it.value().elementCount()) fuzz::fail("toFloat32 returned the wrong count for " + it.key());
            });
    });
    return 0;
}
