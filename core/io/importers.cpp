#include "io/importers.h"

#include "error.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <set>

namespace parrot {

namespace {

constexpr qint64 kMaxJson = 64 * 1024 * 1024;

QJsonObject readJsonObject(const QString& path, const QString& what)
{
    QFile f(path);
    if (!f.exists()) throw Error(QString("%1: no %2 beside the weights").arg(path, what));
    if (f.size() > kMaxJson) throw Error(QString("%1: %2 of %3 bytes, too large for a JSON config").arg(path, what).arg(f.size()));
    if (!f.open(QIODevice::ReadOnly)) throw Error(QString("%1: cannot read (%2)").arg(path, f.errorString()));
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject())
        throw Error(QString("%1: not a JSON object (%2 at byte %3)").arg(path, err.errorString()).arg(err.offset));
    return doc.object();
}

}  // namespace

SafetensorsFile readCheckpointTensors(const QString& path)
{
    if (!path.endsWith(".json")) return readSafetensors(path);
    const QJsonObject index = readJsonObject(path, "index");
    if (!index.value("weight_map").isObject())
        throw Error(QString("%1: not a safetensors index (no \"weight_map\" object)").arg(path));
    const QJsonObject map = index.value("weight_map").toObject();
    std::set<QString> files;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const QString file = it.value().toString();
        if (file.isEmpty() || file.contains('/') || file.contains('\\') || file == "..")
            throw Error(QString("%1: weight_map: tensor '%2' names the shard '%3', expected a file name beside the index").arg(path, it.key(), file));
        files.insert(file);
    }
    SafetensorsFile merged;
    const QDir dir = QFileInfo(path).dir();
    for (const QString& file : files) {
        const SafetensorsFile shard = readSafetensors(dir.filePath(file));
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

ExperimentConfig importedConfig(const QString& path, const SafetensorsFile& file)
{
    const QString arch = checkpointArchitecture(file);
    if (arch == "gpt_neox")
        throw Error(QString("%1: a GPT-NeoX (Pythia) checkpoint: importing GPT-NeoX is not built yet (parrotscope info shows its tensors)").arg(path));
    if (arch != "mamba_ssm")
        throw Error(QString("%1: unknown architecture: not a Parrotscope checkpoint (no \"format\": \"parrotscope\" in its metadata) "
                            "and its tensor names match neither mamba_ssm (backbone.layers.N.mixer.*) nor GPT-NeoX (gpt_neox.*)")
                        .arg(path));
    const QString configPath = QFileInfo(path).dir().filePath("config.json");
    const QJsonObject c = readJsonObject(configPath, "config.json (mamba_ssm's MambaConfig)");
    const QJsonObject ssm = c.value("ssm_cfg").toObject();
    auto integer = [&](const QJsonObject& o, const QString& key, int fallback, int lo, int hi) {
        const QJsonValue v = o.value(key);
        if (v.isUndefined() || v.isNull()) return fallback;
        const double d = v.toDouble(-1);
        if (!v.isDouble() || d != double(int(d)) || d < lo || d > hi)
            throw Error(QString("%1: %2: expected an integer in %3..%4, got %5").arg(configPath, key).arg(lo).arg(hi).arg(v.toVariant().toString()));
        return int(d);
    };
    if (ssm.value("layer").toString("Mamba1") != "Mamba1")
        throw Error(QString("%1: ssm_cfg.layer is %2: only Mamba-1 layers are imported").arg(configPath, ssm.value("layer").toString()));
    if (!c.value("rms_norm").toBool(true)) throw Error(QString("%1: rms_norm is false: only RMSNorm models are imported").arg(configPath));
    ExperimentConfig e;
    e.name = "imported-" + QFileInfo(path).completeBaseName();
    e.description = QString("mamba_ssm checkpoint imported from %1").arg(path);
    ModelConfig& m = e.model;
    m.kind = "mamba";
    m.dModel = integer(c, "d_model", -1, 1, 8192);
    m.layers = integer(c, "n_layer", -1, 1, 256);
    if (m.dModel < 0 || m.layers < 0) throw Error(QString("%1: d_model and n_layer are required").arg(configPath));
    m.dState = integer(ssm, "d_state", 16, 1, 256);
    m.dConv = integer(ssm, "d_conv", 4, 1, 64);
    m.expand = integer(ssm, "expand", 2, 1, 16);
    m.tieEmbeddings = c.value("tie_embeddings").toBool(true);
    const int intermediate = integer(c, "d_intermediate", 0, 0, 1 << 20);
    if (intermediate % m.dModel != 0)
        throw Error(QString("%1: d_intermediate %2 is not a multiple of d_model %3").arg(configPath).arg(intermediate).arg(m.dModel));
    m.mambaMlpRatio = intermediate / m.dModel;
    const int vocab = integer(c, "vocab_size", -1, 1, 1 << 24), multiple = integer(c, "pad_vocab_size_multiple", 8, 1, 1 << 16);
    if (vocab < 0) throw Error(QString("%1: vocab_size is required").arg(configPath));
    const int padded = (vocab + multiple - 1) / multiple * multiple;
    const auto emb = file.tensors.find("backbone.embedding.weight");
    if (emb == file.tensors.end()) throw Error(QString("%1: tensor 'backbone.embedding.weight' is missing").arg(path));
    if (emb->shape.size() != 2 || emb->shape[0] != padded || emb->shape[1] != m.dModel)
        throw Error(QString("%1: backbone.embedding.weight has shape %2, config.json says [%3, %4] (vocab_size %5 padded to a multiple of %6)")
                        .arg(path, shapeText(emb->shape))
                        .arg(padded).arg(m.dModel).arg(vocab).arg(multiple));
    if (padded - 4 < 2 || padded - 4 > 1024)
        throw Error(QString("%1: a vocabulary of %2 tokens: the app runs models of 6 to 1,028 tokens (its copy task's specials and "
                            "letters); `parrotscope info` shows this one's tensors").arg(path).arg(padded));
    e.task.kind = "copy";
    e.task.vocabSize = padded - 4;
    e.seed = 0;
    return e;
}

}  // namespace parrot
