// The families' builders, declared without torch so the catalogue (modelcatalog.cpp) can name
// them; defined in factory.cpp. Each turns an experiment's ModelConfig into its options.
#pragma once

#include <memory>

namespace parrot {

struct ExperimentConfig;
class SequenceModelImpl;

std::shared_ptr<SequenceModelImpl> buildTransformer(const ExperimentConfig& c);
std::shared_ptr<SequenceModelImpl> buildMamba(const ExperimentConfig& c);
std::shared_ptr<SequenceModelImpl> buildS4Mamba(const ExperimentConfig& c);
std::shared_ptr<SequenceModelImpl> buildLstm(const ExperimentConfig& c);
std::shared_ptr<SequenceModelImpl> buildS4d(const ExperimentConfig& c);
std::shared_ptr<SequenceModelImpl> buildHybrid(const ExperimentConfig& c);  // the standard hybrid and MambaFormer

}  // namespace parrot
