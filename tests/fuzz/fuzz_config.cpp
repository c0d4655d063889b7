// Experiment configs and sweep files on arbitrary bytes, through the same validation as the
// window's Open and the command line's --config and sweep: read as an experiment config, then
// validated; read as a sweep file (grid expanded, every run validated), then shrunk as a quick
// look does, then thorough and at each of its scales. Each must read or refuse with a message.
#include "base/config.h"
#include "base/experiments/sweep.h"
#include "base/io/jsonfile.h"
#include "fuzzinput.h"

using namespace parrot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QString path = fuzz::writeInput(data, size, "config.json");
    fuzz::readOrRefuse([&] {
        const ExperimentConfig c = experimentFromJson(readJsonObject(path, "experiment config"), path);
        (void)validate(c);
        (void)toJson(c);
    });
    fuzz::readOrRefuse([&] {
        SweepPlan plan = loadSweep(path, fuzz::scratch().filePath("sweep-out"));
        (void)quickLookOverrides(plan, 4);
        overrideSweep(plan, {"train.steps=3"});
        // thorough, and at each scale the file offers
        (void)loadSweep(path, fuzz::scratch().filePath("sweep-out"), {.thorough = true});
        for (const QString& scale : plan.scales) (void)loadSweep(path, fuzz::scratch().filePath("sweep-out"), {.scale = scale});
    });
    return 0;
}
