#include "base/io/importers.h"

#include "base/error.h"
#include "base/io/jsonfile.h"
#include "base/io/torchzip.h"
#include "base/tasks/taskcatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <QJsonDocument>
#include <QJsonObject>

#include <QJsonArray>
#include <QRegularExpression>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace parrot {

namespace {

constexpr qint64 kMaxJson = 64 * 1024 * 1024;

// A model folder's JSON file; its absence is said in the folder's terms.
QJsonObject readModelJson(const QString& path, const QString& what)
{
    if (!QFileInfo::exists(path)) throw Error(QString("%1: no %2 beside the weights").arg(path, what));
    return readJsonObject(path, what, kMaxJson);
}

// Typed reads of a config.json's values, each error naming the file and the key.
struct JsonConfig {
    QString path;
    QJsonObject o;

    QJsonValue value(const QString& key) const { return o.value(key); }
    bool has(const QString& key) const { return !o.value(key).isUndefined() && !o.value(key).isNull(); }
    int integer(const QString& key, int fallback, int lo, int hi) const { return integerIn(o, key, key, fallback, lo, hi); }
    int integerIn(const QJsonObject& in, const QString& key, const QString& shown, int fallback, int lo, int hi) const
    {
        const QJsonValue v = in.value(key);
        if (v.isUndefined() || v.isNull()) {
            if (fallback == kRequired) throw Error(QString("%1: %2 is required").arg(path, shown));
            return fallback;
        }
        const double d = v.toDouble(-1);
        // the range first: converting a double past int's range to an int is undefined
        if (!v.isDouble() || !(d >= lo && d <= hi) || d != std::floor(d))
            throw Error(QString("%1: %2: expected an integer in %3..%4, got %5").arg(path, shown).arg(lo).arg(hi).arg(v.toVariant().toString()));
        return int(d);
    }
    double number(const QString& key, double fallback, double lo, double hi) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined() || v.isNull()) return fallback;
        if (!v.isDouble() || !(v.toDouble() >= lo && v.toDouble() <= hi))
            throw Error(QString("%1: %2: expected a number in %3..%4, got %5").arg(path, key).arg(lo).arg(hi).arg(v.toVariant().toString()));
        return v.toDouble();
    }
    bool boolean(const QString& key, bool fallback) const
    {
        const QJsonValue v = o.value(key);
        if (v.isUndefined() || v.isNull()) return fallback;
        if (!v.isBool()) throw Error(QString("%1: %2: expected true or false, got %3").arg(path, key, v.toVariant().toString()));
        return v.toBool();
    }
    static constexpr int kRequired = std::numeric_limits<int>::min();
};

// The task an imported model runs: a folder with a tokenizer.json holds a pretrained language
// model, which reads its tokenizer's ids (any vocabulary, the "text" task); without one, the ids
// are the copy task's (0-3 its specials, the rest letters), as the copy paper's checkpoints are.
void setVocabulary(ExperimentConfig& e, int tokens, const QString& path)
{
    e.seed = 0;
    if (QFileInfo::exists(QFileInfo(path).dir().filePath("tokenizer.json"))) {
        if (tokens < 2) throw Error(QString("%1: a vocabulary of %2 tokens").arg(path).arg(tokens));
        e.task.kind = kTextTask;
        e.task.vocabSize = tokens;
        return;
    }
    if (tokens - 4 < 2 || tokens - 4 > 1024)
        throw Error(QString("%1: a vocabulary of %2 tokens and no tokenizer.json beside it: without a tokenizer the app runs models "
                            "of 6 to 1,028 tokens (its copy task's specials and letters); `parrotscope info` shows this one's tensors")
                        .arg(path).arg(tokens));
    e.task.kind = "copy";
    e.task.vocabSize = tokens - 4;
}

const TensorRecord& required(const SafetensorsFile& file, const QString& name, const QString& path)
{
    const auto it = file.tensors.find(name);
    if (it == file.tensors.end()) throw Error(QString("%1: tensor '%2' is missing").arg(path, name));
    return it.value();
}

// GPT-NeoX tensor names and the app's Transformer names; '#' is the layer number.
const std::vector<std::pair<QString, QString>>& neoxNames()
{
    static const std::vector<std::pair<QString, QString>> names = {
        {"gpt_neox.embed_in.weight", "wte.weight"},
        {"gpt_neox.final_layer_norm.weight", "ln_f.weight"},
        {"gpt_neox.final_layer_norm.bias", "ln_f.bias"},
        {"embed_out.weight", "lm_head.weight"},
        {"gpt_neox.layers.#.input_layernorm.weight", "h.#.ln_1.weight"},
        {"gpt_neox.layers.#.input_layernorm.bias", "h.#.ln_1.bias"},
        {"gpt_neox.layers.#.post_attention_layernorm.weight", "h.#.ln_2.weight"},
        {"gpt_neox.layers.#.post_attention_layernorm.bias", "h.#.ln_2.bias"},
        {"gpt_neox.layers.#.attention.query_key_value.weight", "h.#.attn.c_attn.weight"},
        {"gpt_neox.layers.#.attention.query_key_value.bias", "h.#.attn.c_attn.bias"},
        {"gpt_neox.layers.#.attention.dense.weight", "h.#.attn.c_proj.weight"},
        {"gpt_neox.layers.#.attention.dense.bias", "h.#.attn.c_proj.bias"},
        {"gpt_neox.layers.#.mlp.dense_h_to_4h.weight", "h.#.mlp.c_fc.weight"},
        {"gpt_neox.layers.#.mlp.dense_h_to_4h.bias", "h.#.mlp.c_fc.bias"},
        {"gpt_neox.layers.#.mlp.dense_4h_to_h.weight", "h.#.mlp.c_proj.weight"},
        {"gpt_neox.layers.#.mlp.dense_4h_to_h.bias", "h.#.mlp.c_proj.bias"},
    };
    return names;
}

// `name` under the other side's pattern, or "" when no pattern matches.
QString mapName(const QString& name, bool toApp)
{
    static const QRegularExpression layer("\\.(\\d+)\\.");
    const QRegularExpressionMatch m = layer.match(name);
    const QString number = m.hasMatch() ? m.captured(1) : QString();
    for (const auto& [theirs, ours] : neoxNames()) {
        const QString& from = toApp ? theirs : ours;
        const QString& to = toApp ? ours : theirs;
        if (QString(from).replace('#', number) == name) return QString(to).replace('#', number);
    }
    return {};
}

// Buffers older GPT-NeoX checkpoints carry: the causal mask, its fill value and the rotary
// frequencies, all recomputed by the app.
bool neoxBuffer(const QString& name)
{
    return name.endsWith(".attention.bias") || name.endsWith(".attention.masked_bias") || name.endsWith(".rotary_emb.inv_freq");
}

// GPT-NeoX's fused QKV rows are [head][q|k|v][dim]; the app's are [q|k|v][head][dim].
TensorRecord reorderQkv(const TensorRecord& t, int heads, int headDim)
{
    const int64_t rows = int64_t(3) * heads * headDim;
    if (t.shape.empty() || t.shape[0] != rows || dtypeSize(t.dtype) == 0 || !t.rowOrder.empty()) return t;  // the shape check reports it
    TensorRecord out = t;  // shares the bytes (a mapped file's stay unread): only the order of its rows changes
    out.rowOrder.resize(size_t(rows));
    for (int h = 0; h < heads; ++h)
        for (int j = 0; j < 3; ++j)
            for (int d = 0; d < headDim; ++d)
                out.rowOrder[size_t((int64_t(j) * heads + h) * headDim + d)] = (int64_t(h) * 3 + j) * headDim + d;
    return out;
}

// HuggingFace's MambaForCausalLM (the state-spaces/mamba-*-hf checkpoints): mamba_ssm's tensors
// but for `backbone.embeddings` (mamba_ssm: `backbone.embedding`), and a MambaConfig of other
// keys (hidden_size, state_size, conv_kernel, time_step_rank, ...) without vocabulary padding.
ImportedCheckpoint importHfMamba(const QString& path, const SafetensorsFile& file)
{
    const QString configPath = QFileInfo(path).dir().filePath("config.json");
    const JsonConfig c{configPath, readModelJson(configPath, "config.json (HuggingFace's MambaConfig)")};
    ImportedCheckpoint out;
    out.architecture = "hf_mamba";
    ExperimentConfig& e = out.config;
    e.name = "imported-" + QFileInfo(path).completeBaseName();
    e.description = QString("HuggingFace MambaForCausalLM checkpoint imported from %1").arg(path);
    ModelConfig& m = e.model;
    m.kind = "mamba";
    m.dModel = c.integer("hidden_size", JsonConfig::kRequired, 1, 8192);
    m.layers = c.integer("num_hidden_layers", JsonConfig::kRequired, 1, 256);
    m.dState = c.integer("state_size", 16, 1, 256);
    m.dConv = c.integer("conv_kernel", 4, 1, 64);
    m.expand = c.integer("expand", 2, 1, 16);
    m.tieEmbeddings = c.boolean("tie_word_embeddings", true);
    m.mambaMlpRatio = 0;
    // time_step_rank: MambaConfig writes "auto" resolved, as a number
    const int rank = c.integer("time_step_rank", (m.dModel + 15) / 16, 1, 4096);
    m.dtRank = rank == (m.dModel + 15) / 16 ? 0 : rank;
    m.projBias = c.boolean("use_bias", false);
    m.convBias = c.boolean("use_conv_bias", true);
    // residual_in_fp32 keeps the residual stream in float32 under 16-bit weights: the app runs in
    // float32 throughout, so either value computes the same.
    const QString act = c.value("hidden_act").toString("silu");
    if (act != "silu") throw Error(QString("%1: hidden_act is \"%2\": Mamba's mixer uses SiLU").arg(configPath, act));
    const double eps = c.number("layer_norm_epsilon", 1e-5, 0, 1);
    if (std::abs(eps - 1e-5) > 1e-12)
        throw Error(QString("%1: layer_norm_epsilon %2: the app's Mamba RMSNorms use mamba_ssm's 1e-5").arg(configPath).arg(eps));
    const int vocab = c.integer("vocab_size", JsonConfig::kRequired, 1, 1 << 24);
    const TensorRecord& emb = required(file, "backbone.embeddings.weight", path);
    if (emb.shape.size() != 2 || emb.shape[0] != vocab || emb.shape[1] != m.dModel)
        throw Error(QString("%1: backbone.embeddings.weight has shape %2, config.json says [%3, %4] (vocab_size, hidden_size)")
                        .arg(path, shapeText(emb.shape)).arg(vocab).arg(m.dModel));
    setVocabulary(e, vocab, path);
    for (auto it = file.tensors.begin(); it != file.tensors.end(); ++it)
        out.tensors.tensors.insert(it.key() == "backbone.embeddings.weight" ? QString("backbone.embedding.weight") : it.key(), it.value());
    out.tensors.metadata = file.metadata;
    out.recognised = QString("HuggingFace MambaForCausalLM: %1").arg(describeModel(m));
    return out;
}

ImportedCheckpoint importMamba(const QString& path, const SafetensorsFile& file)
{
    if (file.tensors.contains("backbone.embeddings.weight")) return importHfMamba(path, file);
    const JsonConfig c{QFileInfo(path).dir().filePath("config.json"),
                       readModelJson(QFileInfo(path).dir().filePath("config.json"), "config.json (mamba_ssm's MambaConfig)")};
    const QJsonObject ssm = c.value("ssm_cfg").toObject();
    if (ssm.value("layer").toString("Mamba1") != "Mamba1")
        throw Error(QString("%1: ssm_cfg.layer is %2: only Mamba-1 layers are imported").arg(c.path, ssm.value("layer").toString()));
    if (!c.boolean("rms_norm", true)) throw Error(QString("%1: rms_norm is false: only RMSNorm models are imported").arg(c.path));
    ImportedCheckpoint out;
    out.architecture = "mamba_ssm";
    out.tensors = file;
    ExperimentConfig& e = out.config;
    e.name = "imported-" + QFileInfo(path).completeBaseName();
    e.description = QString("mamba_ssm checkpoint imported from %1").arg(path);
    ModelConfig& m = e.model;
    m.kind = "mamba";
    m.dModel = c.integer("d_model", JsonConfig::kRequired, 1, 8192);
    m.layers = c.integer("n_layer", JsonConfig::kRequired, 1, 256);
    m.dState = c.integerIn(ssm, "d_state", "ssm_cfg.d_state", 16, 1, 256);
    m.dConv = c.integerIn(ssm, "d_conv", "ssm_cfg.d_conv", 4, 1, 64);
    m.expand = c.integerIn(ssm, "expand", "ssm_cfg.expand", 2, 1, 16);
    m.tieEmbeddings = c.boolean("tie_embeddings", true);
    const int intermediate = c.integer("d_intermediate", 0, 0, 1 << 20);
    if (intermediate % m.dModel != 0)
        throw Error(QString("%1: d_intermediate %2 is not a multiple of d_model %3").arg(c.path).arg(intermediate).arg(m.dModel));
    m.mambaMlpRatio = intermediate / m.dModel;
    const int vocab = c.integer("vocab_size", JsonConfig::kRequired, 1, 1 << 24), multiple = c.integer("pad_vocab_size_multiple", 8, 1, 1 << 16);
    const int padded = (vocab + multiple - 1) / multiple * multiple;
    const TensorRecord& emb = required(file, "backbone.embedding.weight", path);
    if (emb.shape.size() != 2 || emb.shape[0] != padded || emb.shape[1] != m.dModel)
        throw Error(QString("%1: backbone.embedding.weight has shape %2, config.json says [%3, %4] (vocab_size %5 padded to a multiple of %6)")
                        .arg(path, shapeText(emb.shape))
                        .arg(padded).arg(m.dModel).arg(vocab).arg(multiple));
    setVocabulary(e, padded, path);
    out.recognised = QString("mamba_ssm MambaLMHeadModel: %1").arg(describeModel(m));
    return out;
}

ImportedCheckpoint importNeox(const QString& path, const SafetensorsFile& file)
{
    const QString configPath = QFileInfo(path).dir().filePath("config.json");
    const JsonConfig c{configPath, readModelJson(configPath, "config.json (HuggingFace's GPTNeoXConfig)")};
    // which class wrote it: HuggingFace's, or one of the copy paper's (Jelassi et al., 2024)
    QString cls = c.value("architectures").toArray().at(0).toString();
    if (cls.isEmpty()) cls = c.has("num_masked_heads") ? "GPTNeoXHardAlibiForCausalLM" : "GPTNeoXForCausalLM";
    static const QMap<QString, QString> classes = {{"GPTNeoXForCausalLM", "rope"}, {"GPTNeoXNoPEForCausalLM", "nope"},
                                                   {"GPTNeoXAlibiForCausalLM", "alibi"}, {"GPTNeoXHardAlibiForCausalLM", "hard_alibi"}};
    if (!classes.contains(cls))
        throw Error(QString("%1: architectures names %2; the GPT-NeoX classes imported are %3").arg(configPath, cls, classes.keys().join(", ")));
    const QString act = c.value("hidden_act").toString("gelu");
    if (act != "gelu")
        throw Error(QString("%1: hidden_act is \"%2\": only the exact GELU (\"gelu\") of Pythia and the copy paper is imported").arg(configPath, act));
    if (!c.boolean("attention_bias", true))
        throw Error(QString("%1: attention_bias is false: only GPT-NeoX attention with biases is imported").arg(configPath));
    ImportedCheckpoint out;
    out.architecture = "gpt_neox";
    ExperimentConfig& e = out.config;
    e.name = "imported-" + QFileInfo(path).completeBaseName();
    e.description = QString("GPT-NeoX checkpoint (%1) imported from %2").arg(cls, path);
    ModelConfig& m = e.model;
    m.kind = "transformer";
    m.positions = classes.value(cls);
    m.dModel = c.integer("hidden_size", JsonConfig::kRequired, 1, 8192);
    m.heads = c.integer("num_attention_heads", JsonConfig::kRequired, 1, 1024);
    m.layers = c.integer("num_hidden_layers", JsonConfig::kRequired, 1, 64);
    if (m.dModel % m.heads != 0)
        throw Error(QString("%1: hidden_size %2 is not a multiple of num_attention_heads %3").arg(configPath).arg(m.dModel).arg(m.heads));
    const int intermediate = c.integer("intermediate_size", 4 * m.dModel, 1, 1 << 20);
    if (intermediate % m.dModel != 0 || intermediate / m.dModel > 16)
        throw Error(QString("%1: intermediate_size %2 is not 1 to 16 times hidden_size %3, which the app's MLP needs")
                        .arg(configPath).arg(intermediate).arg(m.dModel));
    m.mlpRatio = intermediate / m.dModel;
    m.rotaryFraction = c.number("rotary_pct", 0.25, 1e-9, 1.0);
    m.rotaryBase = c.number("rotary_emb_base", 10000, 1.0 + 1e-9, 1e9);
    m.layerNormEps = c.number("layer_norm_eps", 1e-5, 1e-12, 0.5);
    m.parallelResidual = c.boolean("use_parallel_residual", true);
    m.tieEmbeddings = c.boolean("tie_word_embeddings", false);
    m.maxPositions = c.integer("max_position_embeddings", 2048, 1, 1000000);
    m.repeatPassDims = m.positions != "rope";  // the copy paper's classes count the unrotated dims twice
    m.numMaskedHeads = m.positions == "hard_alibi" ? c.integer("num_masked_heads", JsonConfig::kRequired, 0, m.heads) : 0;
    const int headDim = m.dModel / m.heads;
    if (m.positions == "rope" && int(m.rotaryFraction * headDim) % 2 != 0)
        throw Error(QString("%1: rotary_pct %2 of a head of %3 dims rotates an odd number of dims").arg(configPath).arg(m.rotaryFraction).arg(headDim));
    if (m.positions == "alibi" && (m.heads & (m.heads - 1)) != 0)
        throw Error(QString("%1: %2 heads: the copy paper's ALiBi class builds its slopes for a power-of-two number of heads only")
                        .arg(configPath).arg(m.heads));
    const TensorRecord& emb = required(file, "gpt_neox.embed_in.weight", path);
    const int vocab = c.integer("vocab_size", JsonConfig::kRequired, 1, 1 << 24);
    if (emb.shape.size() != 2 || emb.shape[0] != vocab || emb.shape[1] != m.dModel)
        throw Error(QString("%1: gpt_neox.embed_in.weight has shape %2, config.json says [%3, %4] (vocab_size, hidden_size)")
                        .arg(path, shapeText(emb.shape)).arg(vocab).arg(m.dModel));
    setVocabulary(e, vocab, path);
    for (auto it = file.tensors.begin(); it != file.tensors.end(); ++it) {
        if (neoxBuffer(it.key())) continue;
        const QString name = mapName(it.key(), true);
        if (name.isEmpty()) {
            out.tensors.tensors.insert(it.key(), it.value());  // reported as unexpected under its own name
            continue;
        }
        out.tensors.tensors.insert(name, name.endsWith("attn.c_attn.weight") || name.endsWith("attn.c_attn.bias")
                                             ? reorderQkv(it.value(), m.heads, headDim) : it.value());
    }
    out.tensors.metadata = file.metadata;
    out.recognised = cls == "GPTNeoXForCausalLM" ? QString("HuggingFace GPT-NeoX (Pythia family): %1").arg(describeModel(m))
                                                 : QString("the copy paper's %1: %2").arg(cls, describeModel(m));
    return out;
}

}  // namespace

QString checkpointInFolder(const QString& dir)
{
    const QDir d(dir);
    if (!d.exists()) throw Error(QString("%1: no such folder").arg(dir));
    for (const char* name : {"model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json"})
        if (QFileInfo(d.filePath(name)).isFile()) return d.filePath(name);
    throw Error(QString("%1: no weights in this folder (expected model.safetensors, model.safetensors.index.json, pytorch_model.bin "
                        "or pytorch_model.bin.index.json, as HuggingFace's save_pretrained writes)").arg(dir));
}

SafetensorsFile readCheckpointTensors(const QString& path)
{
    if (QFileInfo(path).isDir()) return readCheckpointTensors(checkpointInFolder(path));
    if (looksLikeZip(path)) return readTorchZip(path);
    if (looksLikeLegacyTorch(path)) throw Error(QString("%1: %2").arg(path, legacyTorchAdvice()));
    if (!path.endsWith(".json")) return readSafetensors(path);
    const QJsonObject index = readModelJson(path, "index");
    if (!index.value("weight_map").isObject())
        throw Error(QString("%1: not a safetensors index (no \"weight_map\" object)").arg(path));
    const QJsonObject map = index.value("weight_map").toObject();
    std::set<QString> files;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const QString file = it.value().toString();
        if (file.isEmpty() || file.contains('/') || file.contains('\\') || file == ".." || file.contains(QChar(0)))
            throw Error(QString("%1: weight_map: tensor '%2' names the shard '%3', expected a file name beside the index").arg(path, it.key(), file));
        files.insert(file);
    }
    SafetensorsFile merged;
    const QDir dir = QFileInfo(path).dir();
    for (const QString& file : files) {
        const QString shardPath = dir.filePath(file);  // safetensors shards, or pytorch_model-0000N.bin zips
        const SafetensorsFile shard = looksLikeZip(shardPath) ? readTorchZip(shardPath) : readSafetensors(shardPath);
        for (auto it = shard.metadata.begin(); it != shard.metadata.end(); ++it) merged.metadata.insert(it.key(), it.value());
        for (auto it = shard.tensors.begin(); it != shard.tensors.end(); ++it) {
            if (map.value(it.key()).toString() != file)
                throw Error(QString("%1: tensor '%2' is in %3, the index says %4").arg(path, it.key(), file, map.value(it.key()).toString("nowhere")));
            merged.tensors.insert(it.key(), it.value());
        }
    }
    for (auto it = map.begin(); it != map.end(); ++it)
        if (!merged.tensors.contains(it.key()))
            throw Error(QString("%1: weight_map: tensor '%2' is not in its shard %3").arg(path, it.key(), it.value().toString()));
    return merged;
}

QString checkpointArchitecture(const SafetensorsFile& file)
{
    if (file.metadata.value("format") == "parrotscope") return "parrotscope";
    for (auto it = file.tensors.begin(); it != file.tensors.end(); ++it) {
        const QString& n = it.key();
        if (n.startsWith("backbone.layers.") && n.contains(".mixer.")) return "mamba_ssm";
        if (n.startsWith("gpt_neox.")) return "gpt_neox";
    }
    return {};
}

QString ImportedCheckpoint::sourceName(const QString& appName) const
{
    if (architecture == "hf_mamba") return appName == "backbone.embedding.weight" ? QString("backbone.embeddings.weight") : appName;
    if (architecture != "gpt_neox") return appName;
    const QString theirs = mapName(appName, false);
    return theirs.isEmpty() ? appName : theirs;
}

ImportedCheckpoint importCheckpoint(const QString& path, const SafetensorsFile& file)
{
    // a state dict of the app's own architectures, its experiment config beside it
    const QString configPath = QFileInfo(path).dir().filePath("config.json");
    if (QFileInfo::exists(configPath)) {
        const QJsonObject o = readModelJson(configPath, "config.json");
        if (o.value("model").isObject()) {
            ImportedCheckpoint out;
            out.architecture = "parrotscope-config";
            out.config = experimentFromJson(o, configPath);
            const QStringList problems = validate(out.config);
            if (!problems.isEmpty()) throw Error(QString("%1: %2").arg(configPath, problems.join("; ")));
            out.tensors = file;
            out.recognised = QString("a state dict of the app's %1, its experiment config in config.json").arg(describeModel(out.config.model));
            return out;
        }
    }
    const QString arch = checkpointArchitecture(file);
    if (arch == "mamba_ssm") return importMamba(path, file);
    if (arch == "gpt_neox") return importNeox(path, file);
    throw Error(QString("%1: unknown architecture: not a Parrotscope checkpoint (no \"format\": \"parrotscope\" in its metadata, no experiment "
                        "config.json beside it) and its tensor names match neither mamba_ssm (backbone.layers.N.mixer.*) nor GPT-NeoX (gpt_neox.*)")
                    .arg(path));
}

}  // namespace parrot
