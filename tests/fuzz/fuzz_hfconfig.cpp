// A model folder's config.json on arbitrary bytes, through the importers, beside real weights of
// each architecture the app imports (HuggingFace's Mamba, mamba_ssm's Mamba, GPT-NeoX/Pythia, from
// the test fixtures): the importer must map the weights or refuse with a message, and the
// inspector must describe the folder without throwing.
#include "base/io/checkpointinfo.h"
#include "base/io/importers.h"
#include "fuzzinput.h"

#include <vector>

using namespace parrot;

namespace {
struct Folder {
    QString weights;        // the weights file, copied into a folder of the harness's own
    SafetensorsFile file;   // read once
};

const std::vector<Folder>& folders()
{
    static const std::vector<Folder> all = [] {
        std::vector<Folder> out;
        for (const char* source : {"hf_tiny/mamba", "mamba_tiny", "neox_tiny/pythia"}) {
            const QString dir = QString(source).replace('/', '-');
            fuzz::scratch().mkpath(dir);
            const QString weights = fuzz::writeFile(dir + "/model.safetensors", fuzz::readFile(QString(PARROT_TEST_DATA "/%1/model.safetensors").arg(source)));
            out.push_back({weights, readCheckpointTensors(weights)});
        }
        return out;
    }();
    return all;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QByteArray config(reinterpret_cast<const char*>(data), qsizetype(size));
    for (const Folder& f : folders()) {
        fuzz::writeFile(QFileInfo(f.weights).dir().dirName() + "/config.json", config);
        fuzz::readOrRefuse([&] {
            const ImportedCheckpoint imported = importCheckpoint(f.weights, f.file);
            (void)imported.sourceName("app");
        });
        (void)inspectCheckpoint(f.weights).toJson();
    }
    return 0;
}
