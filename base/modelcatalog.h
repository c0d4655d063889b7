// The model families and the Transformer's positional schemes, written once. Config validation,
// the factory, size estimates, descriptions, `parrotscope models`, the window's pickers, the
// figures' colours and the benchmarks all read these tables: adding a family is one entry here
// plus its class in core/models/ and its builder in core/models/factory.cpp's table (see
// docs/ARCHITECTURE.md). Torch-free: part of the base library.
#pragma once

#include <QJsonArray>
#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

struct ExperimentConfig;
struct ModelConfig;

struct ModelFamily {
    QString id;           // the config value, e.g. "mamba"
    QString label;        // e.g. "Mamba"
    QString tip;          // one sentence
    QStringList options;  // model.* keys this family uses
    bool attention = false;  // attention heads (model.heads; attention maps in the explorer)
    bool positions = false;  // model.positions chooses a scheme (the Transformer)
    bool learnedPositions = false;  // always learned absolute positions (needs max_positions >= context)
    bool stateSpace = false;        // a state-space layer: d_state and expand apply
    bool selectiveScan = false;     // Mamba's selective scan: implicit attention (explorer, mechanisms.csv)
    // A recurrent layer whose heads' effective attention (the map from inputs to outputs, unrolled
    // from the state) the explorer shows and scores as it does attention heads
    bool effectiveAttention = false;
    // Such a layer's width that model.head_dim splits into heads (the maps it shows per layer), and
    // that width in words for messages; null for the other families.
    int (*headsWidth)(const ModelConfig& m) = nullptr;
    const char* headsWidthText = "";
    unsigned colour = 0x646464;     // 0xRRGGBB in figures (Okabe-Ito where there are enough)
    // Roughly the parameters of one layer at width C = d_model (the memory guard before building).
    double (*layerParameters)(const ModelConfig& m, double C) = nullptr;
    // "Mamba, 2 layers, d_model 64, d_state 16, expand 2"
    QString (*describe)(const ModelConfig& m) = nullptr;
};

struct PositionScheme {
    QString id;     // model.positions, e.g. "hard_alibi"
    QString label;  // "Hard-ALiBi"
    QString brief;  // within a description: "Hard-ALiBi", "learned positions"
    QString tip;
    unsigned colour = 0x646464;  // a Transformer's colour in figures depends on its scheme
};

const std::vector<ModelFamily>& modelFamilies();
// The heads of a family whose recurrent layer has heads (headsWidth / head_dim), else 0.
int recurrentHeads(const ModelConfig& m);
// The heads a layer shows and switches off: attention's (model.heads), or the recurrent ones.
int headsPerLayer(const ModelConfig& m);
const std::vector<PositionScheme>& positionSchemes();
// nullptr when there is no such family or scheme.
const ModelFamily* findFamily(const QString& id);
const PositionScheme* findPositions(const QString& id);
// Roughly the parameters a config describes, without building it (embeddings, learned position
// tables and the family's layers): a guard against sizes that cannot fit, not a count
// (Model::parameterCount is exact). Throws parrot::Error for an unknown family.
double estimatedParameters(const ExperimentConfig& c);
// The family of a config; throws parrot::Error naming the choices when there is none.
const ModelFamily& familyOf(const ModelConfig& m);
QStringList familyIds();
QStringList familiesWithOption(const QString& option);  // the families whose options hold it
QStringList positionIds();

// What tells models apart in a comparison, and keys their colour: "transformer/hard_alibi" for
// families with a positional scheme, else the family's id ("mamba").
QString architectureKey(const ModelConfig& m);
// 0xRRGGBB of an architecture key (grey when unknown).
unsigned architectureRgb(const QString& key);

// A config's model section (JSON) with only what its family has: the kind and the family's
// options (num_masked_heads only with Hard-ALiBi positions). An unknown kind comes back whole.
QJsonObject familyModelJson(const QJsonObject& model);

// Every family with its options and their defaults (from ModelConfig's defaults).
QJsonArray modelCatalogJson();

}  // namespace parrot
