// Builds the sequence model an experiment describes.
#pragma once

#include "config.h"
#include "models/sequencemodel.h"

namespace parrot {

SequenceModel buildModel(const ExperimentConfig& c);

}  // namespace parrot
