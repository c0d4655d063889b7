#include "core/models/factory.h"

#include "base/error.h"
#include "base/modelcatalog.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "core/model.h"
#include "core/models/gateddeltanet.h"
#include "core/models/hybrid.h"
#include "core/models/lstm.h"
#include "core/models/mamba.h"
#include "core/models/mamba2.h"
#include "core/models/s4d.h"
#include "core/models/transformer.h"

#include <map>

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
    mamba.dtRankOverride = m.dtRank;
    mamba.projBias = m.projBias;
    mamba.convBias = m.convBias;
    return mamba;
}

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

SequenceModel buildMamba(const ExperimentConfig& c) { return buildMambaBlocks(c, true); }
SequenceModel buildS4Mamba(const ExperimentConfig& c) { return buildMambaBlocks(c, false); }

SequenceModel buildMamba2(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    Mamba2LMOptions o;
    o.mixer.dModel = m.dModel;
    o.mixer.dState = m.dState;
    o.mixer.headDim = m.headDim;
    o.mixer.expand = m.expand;
    o.mixer.nGroups = m.nGroups;
    o.mixer.dConv = m.dConv;
    o.mixer.chunkSize = m.chunkSize;
    o.vocabSize = taskVocabSize(c.task);
    o.layers = m.layers;
    o.tieEmbeddings = m.tieEmbeddings;
    return std::make_shared<Mamba2LMImpl>(o);
}

SequenceModel buildGatedDeltaNet(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    GatedDeltaNetLMOptions o;
    o.mixer.dModel = m.dModel;
    o.mixer.headDim = m.headDim;
    o.mixer.expandV = m.expand;
    o.mixer.dConv = m.dConv;
    o.mixer.chunkSize = m.chunkSize;
    o.mixer.forgetGate = m.forgetGate;
    o.vocabSize = taskVocabSize(c.task);
    o.layers = m.layers;
    o.tieEmbeddings = m.tieEmbeddings;
    return std::make_shared<GatedDeltaNetLMImpl>(o);
}

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
    o.shortConv = m.shortConv;
    o.mambaFormer = !familyOf(m).learnedPositions;
    o.tieEmbeddings = m.tieEmbeddings;
    o.mamba = mixerOptions(m);
    return std::make_shared<HybridLMImpl>(o);
}

using Builder = SequenceModel (*)(const ExperimentConfig&);

// The network of each family in the catalogue (base/modelcatalog.cpp), by its id.
const std::map<QString, Builder>& builders()
{
    static const std::map<QString, Builder> table{
        {"transformer", buildTransformer}, {"mamba", buildMamba}, {"mamba2", buildMamba2}, {"gated_deltanet", buildGatedDeltaNet}, {"lstm", buildLstm}, {"s4d", buildS4d},
        {"s4_mamba", buildS4Mamba},        {"hybrid", buildHybrid}, {"mambaformer", buildHybrid},
    };
    return table;
}

}  // namespace

bool canBuild(const QString& family) { return builders().count(family) > 0; }

SequenceModel buildModel(const ExperimentConfig& c)
{
    const ModelFamily& family = familyOf(c.model);
    const auto builder = builders().find(family.id);
    if (builder == builders().end()) throw Error(QString("model family '%1' has no builder (core/models/factory.cpp)").arg(family.id));
    SequenceModel net = builder->second(c);
    // In-context learning on vectors: no vocabulary (an empty embedding), a linear read-in of
    // the d-dim x and y tokens and a read-out of the prediction.
    if (isVectorTask(c.task.kind)) net->addVectorIO(c.task.dims, IclTask::create(c.task)->outputDims(), c.model.dModel);
    // MAD's compression: the sequence decoded from the representation at `|` (tasks/madtasks.h).
    if (isReadOutTask(c.task.kind)) net->addReadOut(c.model.dModel, CopyVocab::Sep);
    return net;
}

}  // namespace parrot
