#include "factory.h"

#include "modelcatalog.h"
#include "models/builders.h"

#include "models/hybrid.h"
#include "models/lstm.h"
#include "models/mamba.h"
#include "models/s4d.h"
#include "models/transformer.h"
#include "tasks/icltask.h"
#include "tasks/tokentask.h"

namespace parrot {

namespace {

MambaOptions mixerOptions(const ModelConfig& m)
{
    MambaOptions mamba;
    mamba.dModel = m.dModel;
    mamba.dState = m.dState;
    mamba.dConv = m.dConv;
    mamba.expand = m.expand;
    mamba.mimetic = m.init == "mimetic";
    return mamba;
}

}  // namespace

SequenceModel buildTransformer(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    TransformerOptions o;
    o.vocabSize = taskVocabSize(c.task);
    o.dModel = m.dModel;
    o.heads = m.heads;
    o.layers = m.layers;
    o.mlpRatio = m.mlpRatio;
    o.positions = positionsFromName(m.positions.toStdString());
    o.numMaskedHeads = o.positions == Positions::HardAlibi ? m.numMaskedHeads : 0;
    o.rotaryFraction = m.rotaryFraction;
    o.maxPositions = m.maxPositions;
    o.tieEmbeddings = m.tieEmbeddings;
    o.parallelResidual = m.parallelResidual;
    o.layerNormEps = m.layerNormEps;
    o.rotaryBase = m.rotaryBase;
    o.repeatPassDims = m.repeatPassDims;
    o.shortConv = m.shortConv;
    return std::make_shared<TransformerImpl>(o);
}

namespace {

// Mamba's blocks with the selective scan, or (S4-Mamba) with a time-invariant S4D kernel.
SequenceModel buildMambaBlocks(const ExperimentConfig& c, bool selective)
{
    const ModelConfig& m = c.model;
    MambaLMOptions o;
    o.mixer = mixerOptions(m);
    o.mixer.selective = selective;
    o.vocabSize = taskVocabSize(c.task);
    o.layers = m.layers;
    o.mlpRatio = m.mambaMlpRatio;
    o.tieEmbeddings = m.tieEmbeddings;
    return std::make_shared<MambaLMImpl>(o);
}

}  // namespace

SequenceModel buildMamba(const ExperimentConfig& c) { return buildMambaBlocks(c, true); }
SequenceModel buildS4Mamba(const ExperimentConfig& c) { return buildMambaBlocks(c, false); }

SequenceModel buildLstm(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    LstmOptions o;
    o.vocabSize = taskVocabSize(c.task);
    o.dModel = m.dModel;
    o.layers = m.layers;
    o.tieEmbeddings = m.tieEmbeddings;
    return std::make_shared<LstmLMImpl>(o);
}

SequenceModel buildS4d(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    S4DLMOptions o;
    o.vocabSize = taskVocabSize(c.task);
    o.dModel = m.dModel;
    o.dState = m.dState;
    o.layers = m.layers;
    o.expand = m.expand;
    o.tieEmbeddings = m.tieEmbeddings;
    return std::make_shared<S4DLMImpl>(o);
}

// The standard hybrid (learned positions) or MambaFormer (a Mamba block first, no positions).
SequenceModel buildHybrid(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    HybridOptions o;
    o.vocabSize = taskVocabSize(c.task);
    o.dModel = m.dModel;
    o.heads = m.heads;
    o.layers = m.layers;
    o.maxPositions = m.maxPositions;
    o.mambaFormer = !familyOf(m).learnedPositions;
    o.tieEmbeddings = m.tieEmbeddings;
    o.mamba = mixerOptions(m);
    return std::make_shared<HybridLMImpl>(o);
}

SequenceModel buildModel(const ExperimentConfig& c)
{
    SequenceModel net = familyOf(c.model).build(c);
    // In-context learning on vectors: no vocabulary (an empty embedding), a linear read-in of
    // the d-dim x and y tokens and a read-out of the prediction.
    if (isVectorTask(c.task.kind)) net->addVectorIO(c.task.dims, IclTask::create(c.task)->outputDims(), c.model.dModel);
    // MAD's compression: the sequence decoded from the representation at `|` (tasks/madtasks.h).
    if (isReadOutTask(c.task.kind)) net->addReadOut(c.model.dModel, CopyVocab::Sep);
    return net;
}

}  // namespace parrot
