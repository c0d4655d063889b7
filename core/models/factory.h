// Builds the sequence model an experiment describes.
#pragma once

#include "base/config.h"
#include "core/models/sequencemodel.h"

namespace parrot {

SequenceModel buildModel(const ExperimentConfig& c);  // throws parrot::Error for a family without a builder

}  // namespace parrot
