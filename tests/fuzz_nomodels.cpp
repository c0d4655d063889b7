// fuzz_asan builds the file readers and the config without torch; the model catalogue they use
// names the families' builders (core/models/factory.cpp, torch). The harness reads files and
// never builds a model, so here the builders only say so if something ever asks.
#include "error.h"
#include "models/builders.h"

namespace parrot {

namespace {
[[noreturn]] std::shared_ptr<SequenceModelImpl> noModels() { throw Error("fuzz_asan is built without torch: it builds no models"); }
}  // namespace

std::shared_ptr<SequenceModelImpl> buildTransformer(const ExperimentConfig&) { noModels(); }
std::shared_ptr<SequenceModelImpl> buildMamba(const ExperimentConfig&) { noModels(); }
std::shared_ptr<SequenceModelImpl> buildS4Mamba(const ExperimentConfig&) { noModels(); }
std::shared_ptr<SequenceModelImpl> buildLstm(const ExperimentConfig&) { noModels(); }
std::shared_ptr<SequenceModelImpl> buildS4d(const ExperimentConfig&) { noModels(); }
std::shared_ptr<SequenceModelImpl> buildHybrid(const ExperimentConfig&) { noModels(); }

}  // namespace parrot
