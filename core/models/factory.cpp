#include "factory.h"

#include "models/hybrid.h"
#include "models/lstm.h"
#include "models/mamba.h"
#include "models/s4d.h"
#include "models/transformer.h"
#include "tasks/icltask.h"
#include "tasks/tokentask.h"

namespace parrot {

namespace {

SequenceModel buildFamily(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    const int64_t V = taskVocabSize(c.task);
    MambaOptions mamba;
    mamba.dModel = m.dModel;
    mamba.dState = m.dState;
    mamba.dConv = m.dConv;
    mamba.expand = m.expand;
    if (m.kind == "transformer") {
        TransformerOptions o;
        o.vocabSize = V;
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
        return std::make_shared<TransformerImpl>(o);
    }
    if (m.kind == "mamba" || m.kind == "s4_mamba") {
        MambaLMOptions o;
        o.mixer = mamba;
        o.mixer.selective = m.kind == "mamba";
        o.vocabSize = V;
        o.layers = m.layers;
        o.mlpRatio = m.mambaMlpRatio;
        o.tieEmbeddings = m.tieEmbeddings;
        return std::make_shared<MambaLMImpl>(o);
    }
    if (m.kind == "lstm") {
        LstmOptions o;
        o.vocabSize = V;
        o.dModel = m.dModel;
        o.layers = m.layers;
        o.tieEmbeddings = m.tieEmbeddings;
        return std::make_shared<LstmLMImpl>(o);
    }
    if (m.kind == "s4d") {
        S4DLMOptions o;
        o.vocabSize = V;
        o.dModel = m.dModel;
        o.dState = m.dState;
        o.layers = m.layers;
        o.expand = m.expand;
        o.tieEmbeddings = m.tieEmbeddings;
        return std::make_shared<S4DLMImpl>(o);
    }
    HybridOptions o;  // "hybrid" | "mambaformer", checked by validate()
    o.vocabSize = V;
    o.dModel = m.dModel;
    o.heads = m.heads;
    o.layers = m.layers;
    o.maxPositions = m.maxPositions;
    o.mambaFormer = m.kind == "mambaformer";
    o.tieEmbeddings = m.tieEmbeddings;
    o.mamba = mamba;
    return std::make_shared<HybridLMImpl>(o);
}

}  // namespace

SequenceModel buildModel(const ExperimentConfig& c)
{
    SequenceModel net = buildFamily(c);
    // In-context learning on vectors: no vocabulary (an empty embedding), a linear read-in of
    // the d-dim x and y tokens and a read-out of the prediction.
    if (isVectorTask(c.task.kind)) net->addVectorIO(c.task.dims, IclTask::create(c.task)->outputDims(), c.model.dModel);
    return net;
}

}  // namespace parrot
