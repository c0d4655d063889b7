#include "base/io/checkpointinfo.h"

#include "base/error.h"
#include "base/io/importers.h"
#include "base/io/jsonfile.h"
#include "base/io/torchzip.h"
#include "base/modelcatalog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <set>

namespace parrot {

namespace {

// " (hard_alibi)" for a family with a positional scheme, else nothing.
QString schemeNote(const QJsonObject& model)
{
    const ModelFamily* f = findFamily(model["kind"].toString());
    return f && f->positions ? " (" + model["positions"].toString() + ")" : QString();
}

constexpr qint64 kMaxIndex = 64 * 1024 * 1024;  // an index file is a small JSON

QByteArray head(const QString& path, qint64 n)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.read(n) : QByteArray();
}

TensorSummary summarise(const QString& name, const TensorRecord& t)
{
    TensorSummary s;
    s.name = name;
    s.dtype = t.dtype;
    s.shape = t.shape;
    s.bytes = t.data.size();
    s.floating = t.dtype == "F32" || t.dtype == "F16" || t.dtype == "BF16" || t.dtype == "F64";
    if (!s.floating || t.elementCount() == 0) return s;
    const std::vector<float> v = toFloat32(t, name);
    double sum = 0, sq = 0;
    s.min = INFINITY;
    s.max = -INFINITY;
    for (float x : v) {
        sum += x;
        sq += double(x) * x;
        s.min = std::min(s.min, double(x));
        s.max = std::max(s.max, double(x));
    }
    s.mean = sum / double(v.size());
    s.std = std::sqrt(std::max(0.0, sq / double(v.size()) - s.mean * s.mean));
    return s;
}

// Safetensors by its first bytes: a header length that fits the file, then a JSON object. Random
// bytes and other formats fail this, so they are not reported as a broken safetensors file.
bool looksLikeSafetensors(const QByteArray& start, qint64 size)
{
    if (start.size() < 9) return false;
    quint64 headerLen = 0;
    for (int i = 7; i >= 0; --i) headerLen = (headerLen << 8) | quint8(start[i]);
    return headerLen >= 2 && headerLen <= quint64(size - 8) && start[8] == '{';
}

QJsonObject companionConfig(const QString& path)
{
    // a config.json beside a checkpoint is optional context (a run folder's, or HuggingFace's):
    // when it cannot be read, the checkpoint is still described, and the log says why
    const QString config = QFileInfo(path).dir().filePath("config.json");
    if (QFileInfo(config).size() > kMaxIndex) {
        qWarning("%s: ignored: larger than a config", qPrintable(config));
        return {};
    }
    return readJsonObjectIfValid(config).value_or(QJsonObject());
}

void fromSafetensors(CheckpointInfo& info, const SafetensorsFile& st)
{
    info.metadata = st.metadata;
    for (auto it = st.tensors.begin(); it != st.tensors.end(); ++it) {
        info.tensors.push_back(summarise(it.key(), it.value()));
        info.totalBytes += it.value().data.size();
    }
    info.architecture = checkpointArchitecture(st);
    if (info.architecture == "parrotscope") {
        for (const char* key : {"task", "model", "train"})
            info.config.insert(key, QJsonDocument::fromJson(info.metadata.value(key).toUtf8()).object());
        // every ModelConfig field is saved; a Mamba's heads and positions mean nothing
        info.config.insert("model", familyModelJson(info.config["model"].toObject()));
        const QJsonObject m = info.config["model"].toObject();
        info.recognised = QString("Parrotscope checkpoint: %1%2, %3 layers, d_model %4, trained on %5 to step %6")
                              .arg(m["kind"].toString(), schemeNote(m))
                              .arg(m["layers"].toInt()).arg(m["d_model"].toInt())
                              .arg(info.config["task"].toObject()["kind"].toString(), info.metadata.value("step"));
        info.runnable = true;
        return;
    }
    info.config = companionConfig(info.path);
    try {
        const ImportedCheckpoint imported = importCheckpoint(info.path, st);
        info.architecture = imported.architecture;
        info.recognised = imported.recognised;
        info.runnable = true;
    } catch (const Error& e) {
        if (info.architecture == "mamba_ssm")
            info.recognised = st.tensors.contains("backbone.embeddings.weight") ? "HuggingFace MambaForCausalLM (backbone.embeddings, backbone.layers.N.mixer.*)"
                                                                                 : "mamba_ssm MambaLMHeadModel (backbone.layers.N.mixer.*)";
        else if (info.architecture == "gpt_neox") info.recognised = "HuggingFace GPT-NeoX (gpt_neox.*)";
        else info.recognised = "tensors of an unknown architecture";
        info.problem = e.message();
    }
}

void fromPytorchZip(CheckpointInfo& info)
{
    TorchZipKind kind;
    try {
        const SafetensorsFile st = readTorchZip(info.path, &kind);
        info.format = kind.format;
        fromSafetensors(info, st);
        info.recognised = kind.recognised + "; " + info.recognised;
    } catch (const Error&) {
        info.format = kind.format;
        info.recognised = kind.recognised;
        throw;
    }
}

}  // namespace

CheckpointInfo inspectCheckpoint(const QString& path)
{
    const QFileInfo fi(path);
    if (!fi.exists()) throw Error(QString("%1: no such file").arg(path));
    if (fi.isDir()) throw Error(QString("%1: is a folder, expected a checkpoint file").arg(path));
    CheckpointInfo info;
    info.path = path;
    info.format = "unknown";
    const QByteArray start = head(path, 16);
    try {
        if (looksLikeZip(path)) {
            fromPytorchZip(info);
        } else if (looksLikeLegacyTorch(path)) {
            info.format = "pytorch legacy";
            info.recognised = "a legacy (before PyTorch 1.6) torch.save file";
            info.problem = legacyTorchAdvice();
        } else if (start.trimmed().startsWith('{') && fi.size() <= kMaxIndex) {
            info.format = "safetensors index";  // model.safetensors.index.json: every shard it names
            fromSafetensors(info, readCheckpointTensors(path));
        } else if (looksLikeSafetensors(start, fi.size())) {
            info.format = "safetensors";
            fromSafetensors(info, readSafetensors(path));
        } else if (fi.size() < 9) {
            info.problem = QString("not a checkpoint: %1 bytes, too short for any format the app reads").arg(fi.size());
        } else {
            info.problem = QString("not a format the app reads: its first bytes (%1) are not those of a safetensors file, "
                                   "a PyTorch zip archive or a pickle; save the model with safetensors or torch.save")
                               .arg(QString::fromLatin1(start.left(8).toHex(' ')));
        }
    } catch (const Error& e) {
        info.problem = e.message();
        info.runnable = false;
    }
    if (info.format == "unknown" && info.problem.isEmpty()) info.problem = "not a checkpoint format the app reads";
    return info;
}

std::vector<float> tensorValues(const QString& path, const QString& tensor)
{
    const SafetensorsFile f = readCheckpointTensors(path);
    if (!f.tensors.contains(tensor)) throw Error(QString("%1: no tensor '%2'").arg(path, tensor));
    return toFloat32(f.tensors[tensor], tensor);
}

QJsonObject CheckpointInfo::toJson() const
{
    QJsonArray ts;
    for (const TensorSummary& t : tensors) {
        QJsonArray shape;
        for (int64_t d : t.shape) shape.append(qint64(d));
        QJsonObject o{{"name", t.name}, {"dtype", t.dtype}, {"shape", shape}, {"bytes", qint64(t.bytes)}};
        if (t.floating) {
            o.insert("mean", t.mean);
            o.insert("std", t.std);
            o.insert("min", t.min);
            o.insert("max", t.max);
        }
        ts.append(o);
    }
    QJsonObject meta;
    for (auto it = metadata.begin(); it != metadata.end(); ++it) meta.insert(it.key(), it.value());
    return {{"path", path}, {"format", format}, {"recognised", recognised}, {"architecture", architecture}, {"runnable", runnable},
            {"problem", problem}, {"config", config}, {"metadata", meta}, {"tensors", ts}, {"total_bytes", qint64(totalBytes)}};
}

}  // namespace parrot
