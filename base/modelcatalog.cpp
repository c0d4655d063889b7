#include "base/modelcatalog.h"

#include "base/cataloguelookup.h"
#include "base/config.h"
#include "base/error.h"
#include "base/tasks/tokentask.h"

#include <QJsonObject>

namespace parrot {

namespace {

// Per-layer parameters at width C: attention 4 C^2 (c_attn, c_proj), an MLP 2 r C^2, a Mamba
// mixer about 3 expand C^2 (in_proj 2 expand C^2, out_proj expand C^2).
double attentionParameters(const ModelConfig& m, double C) { return 4 * C * C + m.shortConv * C; }
double mambaMixerParameters(const ModelConfig& m, double C) { return 3 * m.expand * C * C; }

QString ssmText(const ModelConfig& m)
{
    return QString("d_state %1, expand %2%3").arg(m.dState).arg(m.expand).arg(m.init == "mimetic" ? ", mimetic init" : "");
}

// mamba_ssm's Mamba2: in_proj C x (2 Di + 2 G N + H), out_proj Di x C, the convolution, the norm
double mamba2MixerParameters(const ModelConfig& m, double C)
{
    const double Di = double(m.expand) * C, N = m.dState, G = m.nGroups, H = m.headDim > 0 ? Di / m.headDim : 0;
    return C * (2 * Di + 2 * G * N + H) + Di * C + (Di + 2 * G * N) * (m.dConv + 1) + 3 * H + Di + C;
}

QString describeMamba2(const ModelConfig& m)
{
    const int heads = recurrentHeads(m);
    return QString("Mamba-2, %1 layers, d_model %2, %3 heads of %4, d_state %5%6")
        .arg(m.layers).arg(m.dModel).arg(heads).arg(m.headDim).arg(m.dState)
        .arg(m.nGroups > 1 ? QString(", %1 groups").arg(m.nGroups) : QString());
}

// fla's GatedDeltaNet at H = C / K heads of key width K and value width V = expand K: q, k, g and v
// projections, b and a (one per head), the three short convolutions, o_norm and o_proj
double gatedDeltaNetParameters(const ModelConfig& m, double C)
{
    const double K = m.headDim, H = K > 0 ? C / K : 0, Dk = H * K, Dv = Dk * m.expand;
    return C * (2 * Dk + 2 * Dv) + Dv * C + C * H * (m.forgetGate ? 2 : 1) + (2 * Dk + Dv) * m.dConv + K * m.expand
           + (m.forgetGate ? 2 * H : 0) + C;
}

QString describeGatedDeltaNet(const ModelConfig& m)
{
    const int heads = recurrentHeads(m);
    return QString("%1, %2 layers, d_model %3, %4 heads of %5 x %6")
        .arg(m.forgetGate ? "Gated DeltaNet" : "DeltaNet (no gate)").arg(m.layers).arg(m.dModel).arg(heads).arg(m.headDim)
        .arg(m.expand * m.headDim);
}

QString describeTransformer(const ModelConfig& m)
{
    const PositionScheme* scheme = findPositions(m.positions);
    QString pos = scheme ? scheme->brief : m.positions;
    if (m.positions == "hard_alibi") pos += QString(", %1 masked heads").arg(m.numMaskedHeads);
    if (m.positions == "rope") pos += QString(", %1 of each head rotated").arg(m.rotaryFraction);
    if (m.repeatPassDims) pos += ", copy paper's attention";
    return QString("Transformer (%1), %2 layers, d_model %3, %4 heads%5%6")
        .arg(pos).arg(m.layers).arg(m.dModel).arg(m.heads).arg(m.parallelResidual ? ", parallel residual" : "")
        .arg(m.shortConv > 0 ? QString(", short conv %1").arg(m.shortConv) : QString());
}

// "Mamba, 2 layers, d_model 64, d_state 16, expand 2", with the family's label.
QString describeStateSpace(const ModelConfig& m)
{
    return QString("%1, %2 layers, d_model %3, %4").arg(familyOf(m).label).arg(m.layers).arg(m.dModel).arg(ssmText(m));
}

QString describeHybrid(const ModelConfig& m)
{
    const QString name = familyOf(m).learnedPositions ? "Hybrid (attention + Mamba, learned positions)" : familyOf(m).label;
    return QString("%1, %2 layer pairs, d_model %3, %4 heads%5, %6")
        .arg(name).arg(m.layers).arg(m.dModel).arg(m.heads)
        .arg(m.shortConv > 0 ? QString(", short conv %1 before attention").arg(m.shortConv) : QString(), ssmText(m));
}

double transformerLayerParameters(const ModelConfig& m, double C) { return attentionParameters(m, C) + 2 * m.mlpRatio * C * C; }
double mambaLayerParameters(const ModelConfig& m, double C) { return mambaMixerParameters(m, C) + 3 * m.mambaMlpRatio * C * C; }
double hybridLayerParameters(const ModelConfig& m, double C) { return attentionParameters(m, C) + mambaMixerParameters(m, C); }

}  // namespace

// One entry per family: a table, longer than a screen as the families are many.
const std::vector<ModelFamily>& modelFamilies()
{
    static const QStringList common = {"layers", "d_model", "tie_embeddings"};
    static const QStringList ssm = {"d_state", "d_conv", "expand"};
    static const QStringList selective = {"dt_rank", "proj_bias", "conv_bias"};  // the selective mixer's details
    static const std::vector<ModelFamily> families{
        {.id = "transformer",
         .label = "Transformer",
         .tip = "Decoder-only, pre-LayerNorm Transformer; its positional scheme is chosen by model.positions.",
         .options = common + QStringList{"positions", "heads", "num_masked_heads", "mlp_ratio", "rotary_fraction", "max_positions",
                                         "parallel_residual", "layer_norm_eps", "rotary_base", "repeat_pass_dims", "short_conv"},
         .attention = true,
         .positions = true,
         .layerParameters = transformerLayerParameters,
         .describe = describeTransformer},
        {.id = "mamba",
         .label = "Mamba",
         .tip = "Mamba blocks (selective state space, fused scan): a fixed-size state, the copy paper's GSSM.",
         .options = common + ssm + selective + QStringList{"mamba_mlp_ratio", "init"},
         .stateSpace = true,
         .selectiveScan = true,
         .colour = 0xD55E00,
         .layerParameters = mambaLayerParameters,
         .describe = describeStateSpace},
        {.id = "mamba2",
         .label = "Mamba-2",
         .tip = "Mamba-2 blocks (Dao and Gu 2024, SSD): one scalar decay per head and a head_dim x d_state state "
                "per head, a fixed-size state; mamba_ssm's parameter names.",
         .options = common + QStringList{"d_state", "d_conv", "expand", "head_dim", "n_groups", "chunk_size"},
         .stateSpace = true,
         .effectiveAttention = true,
         .headsWidth = [](const ModelConfig& m) { return m.expand * m.dModel; },
         .headsWidthText = "the inner width expand x d_model",
         .colour = 0xE377C2,
         .layerParameters = mamba2MixerParameters,
         .describe = describeMamba2},
        {.id = "gated_deltanet",
         .label = "Gated DeltaNet",
         .tip = "Gated DeltaNet blocks (Yang et al. 2025): the delta rule writes each value under its key, "
                "replacing what the key held, and a gate decays the state; a fixed-size state; fla's names.",
         .options = common + QStringList{"d_conv", "expand", "head_dim", "chunk_size", "forget_gate"},
         .effectiveAttention = true,
         .headsWidth = [](const ModelConfig& m) { return m.dModel; },
         .headsWidthText = "d_model",
         .colour = 0x17BECF,
         .layerParameters = gatedDeltaNetParameters,
         .describe = describeGatedDeltaNet},
        {.id = "lstm",
         .label = "LSTM",
         .tip = "An LSTM language model, the copy paper's recurrent baseline: a state of 2 x hidden x layers.",
         .options = common,
         .colour = 0x787878,
         .layerParameters = [](const ModelConfig&, double C) { return 8 * C * C; },
         .describe = [](const ModelConfig& m) { return QString("LSTM, %1 layers, hidden %2").arg(m.layers).arg(m.dModel); }},
        {.id = "s4d",
         .label = "S4D",
         .tip = "Diagonal, time-invariant state space layers (S4D-real) with GELU and projections.",
         .options = common + QStringList{"d_state", "expand"},
         .stateSpace = true,
         .colour = 0x8C564B,
         .layerParameters = [](const ModelConfig& m, double C) { return 2 * m.expand * C * C; },
         .describe = describeStateSpace},
        {.id = "s4_mamba",
         .label = "S4-Mamba",
         .tip = "The Mamba block with a time-invariant S4D kernel in place of the selective scan (Park et al.).",
         .options = common + ssm + QStringList{"mamba_mlp_ratio"},
         .stateSpace = true,
         .colour = 0xBCBD22,
         .layerParameters = mambaLayerParameters,
         .describe = describeStateSpace},
        {.id = "hybrid",
         .label = "Hybrid",
         .tip = "Attention and Mamba blocks alternating, learned absolute positions (Park et al., standard hybrid).",
         .options = common + ssm + QStringList{"heads", "max_positions", "init", "short_conv"},
         .attention = true,
         .learnedPositions = true,
         .stateSpace = true,
         .selectiveScan = true,
         .colour = 0x9467BD,
         .layerParameters = hybridLayerParameters,
         .describe = describeHybrid},
        {.id = "mambaformer",
         .label = "MambaFormer",
         .tip = "One Mamba block first, then attention and Mamba alternating, no positional encoding (Park et al.).",
         .options = common + ssm + QStringList{"heads", "init", "short_conv"},
         .attention = true,
         .stateSpace = true,
         .selectiveScan = true,
         .colour = 0x000000,
         .layerParameters = hybridLayerParameters,
         .describe = describeHybrid},
    };
    return families;
}

int recurrentHeads(const ModelConfig& m)
{
    const ModelFamily* f = findFamily(m.kind);
    return f && f->headsWidth && m.headDim > 0 ? f->headsWidth(m) / m.headDim : 0;
}

int headsPerLayer(const ModelConfig& m)
{
    const ModelFamily* f = findFamily(m.kind);
    return f && f->attention ? m.heads : recurrentHeads(m);
}

const std::vector<PositionScheme>& positionSchemes()
{
    static const std::vector<PositionScheme> schemes = {
        {"hard_alibi", "Hard-ALiBi", "Hard-ALiBi",
         "Copy paper: head i < masked heads sees only the last i+1 tokens; the others see everything before.", 0x0072B2},
        {"nope", "NoPE (causal mask only)", "NoPE", "No positional information beyond the causal mask.", 0xE69F00},
        {"learned", "Learned absolute", "learned positions",
         "GPT-2 style position embeddings added to the tokens; limited to max_positions.", 0x56B4E9},
        {"rope", "RoPE", "RoPE", "Rotary embeddings (GPT-NeoX style) on a fraction of each head's dimensions (rotary_fraction).",
         0x009E73},
        {"alibi", "ALiBi", "ALiBi", "Linear distance penalties with slopes 2^(-8h/H), h = 1..H.", 0xCC79A7},
    };
    return schemes;
}

const ModelFamily* findFamily(const QString& id) { return findById(modelFamilies(), id); }

const PositionScheme* findPositions(const QString& id) { return findById(positionSchemes(), id); }

const ModelFamily& familyOf(const ModelConfig& m)
{
    if (const ModelFamily* f = findFamily(m.kind)) return *f;
    throw Error(QString("model.kind: expected one of %1, got \"%2\"").arg(familyIds().join(", "), m.kind));
}

double estimatedParameters(const ExperimentConfig& c)
{
    const ModelConfig& m = c.model;
    const ModelFamily& f = familyOf(m);
    const double C = m.dModel, V = taskVocabSize(c.task);
    const bool positionTable = f.learnedPositions || (f.positions && m.positions == "learned");
    const double readOut = isReadOutTask(c.task.kind) ? 2 * (C * C + C) + 3 * 2 * C : 0.0;  // the decoder's 2 linears, 3 norms
    return V * C * (m.tieEmbeddings ? 1 : 2) + (positionTable ? m.maxPositions * C : 0.0) + m.layers * f.layerParameters(m, C) + readOut;
}

QStringList familyIds() { return idsOf(modelFamilies()); }

QStringList familiesWithOption(const QString& option)
{
    QStringList ids;
    for (const ModelFamily& f : modelFamilies())
        if (f.options.contains(option)) ids << f.id;
    return ids;
}

QStringList positionIds() { return idsOf(positionSchemes()); }

QString architectureKey(const ModelConfig& m)
{
    const ModelFamily* f = findFamily(m.kind);
    return f && f->positions ? m.kind + "/" + m.positions : m.kind;
}

unsigned architectureRgb(const QString& key)
{
    const qsizetype slash = key.indexOf('/');
    const ModelFamily* f = findFamily(slash < 0 ? key : key.left(slash));
    if (!f) return 0x646464;
    if (!f->positions) return f->colour;
    const PositionScheme* p = slash < 0 ? nullptr : findPositions(key.mid(slash + 1));
    return p ? p->colour : f->colour;
}

QJsonObject familyModelJson(const QJsonObject& model)
{
    const ModelFamily* f = findFamily(model["kind"].toString());
    if (!f) return model;
    QJsonObject out{{"kind", model["kind"]}};
    for (const QString& key : f->options)
        if (model.contains(key) && (key != "num_masked_heads" || model["positions"].toString() == "hard_alibi"))
            out.insert(key, model[key]);
    return out;
}

QJsonArray modelCatalogJson()
{
    const QJsonObject defaults = toJson(ExperimentConfig{})["model"].toObject();
    QJsonArray out;
    for (const ModelFamily& f : modelFamilies()) {
        QJsonObject options;
        for (const QString& key : f.options) options.insert(key, defaults.value(key));
        QJsonObject entry{{"kind", f.id}, {"name", f.label}, {"description", f.tip}, {"options", options}};
        if (f.positions) {
            QJsonArray positions;
            for (const PositionScheme& p : positionSchemes())
                positions.append(QJsonObject{{"positions", p.id}, {"name", p.label}, {"description", p.tip}});
            entry.insert("positions", positions);
        }
        out.append(entry);
    }
    return out;
}

}  // namespace parrot
