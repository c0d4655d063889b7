#include "io/checkpointinfo.h"

#include "error.h"
#include "io/importers.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>

#include <cmath>
#include <set>

namespace parrot {

namespace {

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

QJsonObject companionConfig(const QString& path)
{
    QFile f(QFileInfo(path).dir().filePath("config.json"));
    if (f.size() > kMaxIndex || !f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
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
        const QJsonObject m = info.config["model"].toObject();
        info.recognised = QString("Parrotscope checkpoint: %1%2, %3 layers, d_model %4, trained on %5 to step %6")
                              .arg(m["kind"].toString(), m["kind"].toString() == "transformer" ? " (" + m["positions"].toString() + ")" : QString())
                              .arg(m["layers"].toInt()).arg(m["d_model"].toInt())
                              .arg(info.config["task"].toObject()["kind"].toString(), info.metadata.value("step"));
        info.runnable = true;
        return;
    }
    info.config = companionConfig(info.path);
    if (info.architecture == "mamba_ssm") {
        info.recognised = "mamba_ssm MambaLMHeadModel (backbone.layers.N.mixer.*)";
        try {
            const ExperimentConfig c = importedConfig(info.path, st);
            info.recognised += QString(": %1 layers, d_model %2, d_state %3, vocabulary %4").arg(c.model.layers).arg(c.model.dModel)
                                   .arg(c.model.dState).arg(c.task.vocabSize + 4);
            info.runnable = true;
        } catch (const Error& e) {
            info.problem = e.message();
        }
    } else if (info.architecture == "gpt_neox") {
        info.recognised = "HuggingFace GPT-NeoX (the Pythia family)";
        info.problem = "importing GPT-NeoX checkpoints into the app is not built yet (its tensors can be inspected)";
    } else {
        info.recognised = "safetensors of an unknown architecture";
        info.problem = "unknown architecture: its tensor names match none of Parrotscope, mamba_ssm or GPT-NeoX";
    }
}

// The names of the entries of a zip archive, from its central directory (bounds-checked), and the
// bytes of the entry whose name ends with `want` (torch.save stores entries uncompressed; a
// zip64 size is read as "up to 4 MB", enough to scan a pickle's opcodes).
QStringList zipEntries(const QByteArray& z, const QString& want, QByteArray* found)
{
    QStringList names;
    const qint64 n = z.size();
    auto u16 = [&](qint64 at) { return at >= 0 && at + 2 <= n ? qint64(quint8(z[at])) | qint64(quint8(z[at + 1])) << 8 : -1; };
    auto u32 = [&](qint64 at) {
        return at >= 0 && at + 4 <= n ? qint64(quint8(z[at])) | qint64(quint8(z[at + 1])) << 8 | qint64(quint8(z[at + 2])) << 16 |
                                            qint64(quint8(z[at + 3])) << 24
                                      : -1;
    };
    // the end-of-central-directory record: within the last 64 KB + 22 bytes
    qint64 eocd = -1;
    for (qint64 i = n - 22; i >= 0 && i >= n - 65557; --i)
        if (z[i] == 'P' && z.mid(i, 4) == QByteArray("PK\x05\x06", 4)) {
            eocd = i;
            break;
        }
    if (eocd < 0) return names;
    const qint64 count = u16(eocd + 10);
    qint64 at = u32(eocd + 16);
    for (qint64 k = 0; k < count && at >= 0 && at + 46 <= n && names.size() < 100000; ++k) {
        if (z.mid(at, 4) != QByteArray("PK\x01\x02", 4)) break;
        const qint64 method = u16(at + 10), size = u32(at + 20), nameLen = u16(at + 28), extraLen = u16(at + 30),
                     commentLen = u16(at + 32), local = u32(at + 42);
        if (nameLen < 0 || extraLen < 0 || commentLen < 0 || at + 46 + nameLen > n) break;
        const QString name = QString::fromUtf8(z.mid(at + 46, nameLen));
        names << name;
        if (found && method == 0 && name.endsWith(want) && local >= 0 && z.mid(local, 4) == QByteArray("PK\x03\x04", 4)) {
            const qint64 data = local + 30 + u16(local + 26) + u16(local + 28);
            const qint64 length = size == 0xffffffffLL ? 4 * 1024 * 1024 : size;
            if (data >= 0 && data <= n) *found = z.mid(data, std::min(length, n - data));
        }
        at += 46 + nameLen + extraLen + commentLen;
    }
    return names;
}

// The GLOBAL references ("module.name") of a protocol-2 pickle, in order, without running it.
QStringList pickleGlobals(const QByteArray& p)
{
    QStringList out;
    for (qint64 i = 0; i + 1 < p.size() && out.size() < 1000; ++i) {
        if (p[i] != 'c') continue;
        const qint64 a = p.indexOf('\n', i + 1);
        if (a < 0 || a - i > 200) continue;
        const qint64 b = p.indexOf('\n', a + 1);
        if (b < 0 || b - a > 200) continue;
        const QByteArray module = p.mid(i + 1, a - i - 1), name = p.mid(a + 1, b - a - 1);
        auto identifier = [](const QByteArray& s) {
            if (s.isEmpty()) return false;
            for (char c : s)
                if (!(std::isalnum(uchar(c)) || c == '_' || c == '.')) return false;
            return true;
        };
        if (identifier(module) && identifier(name)) {
            out << QString::fromLatin1(module + "." + name);
            i = b;
        }
    }
    return out;
}

void fromPytorchZip(CheckpointInfo& info)
{
    QFile f(info.path);
    if (!f.open(QIODevice::ReadOnly)) {
        info.problem = "cannot read the file";
        return;
    }
    const QByteArray z = f.readAll();
    QByteArray pickle;
    const QStringList names = zipEntries(z, "data.pkl", &pickle);
    bool script = false;
    for (const QString& n : names) script = script || n.endsWith("constants.pkl") || n.contains("/code/");
    if (script) {
        info.format = "torchscript";
        info.recognised = "a TorchScript archive (torch.jit.save)";
        info.problem = "TorchScript archives hold code, which the app never runs: save the model's state dict instead, "
                       "e.g. safetensors.torch.save_file(model.state_dict(), \"model.safetensors\")";
        return;
    }
    info.format = "pytorch zip";
    if (pickle.isEmpty()) {
        info.recognised = "a zip archive without a data.pkl";
        info.problem = "not a torch.save archive (no data.pkl among its entries)";
        return;
    }
    const QStringList globals = pickleGlobals(pickle);
    static const std::set<QString> stateDict{"collections.OrderedDict", "torch._utils._rebuild_tensor_v2", "torch._utils._rebuild_parameter",
                                             "torch.FloatStorage", "torch.HalfStorage", "torch.BFloat16Storage", "torch.DoubleStorage",
                                             "torch.LongStorage", "torch.IntStorage", "torch.BoolStorage", "torch.ByteStorage"};
    for (const QString& g : globals)
        if (!stateDict.count(g)) {
            info.recognised = QString("a whole pickled object (%1)").arg(g);
            info.problem = QString("the file pickles %1, which loading would have to run: save its state dict instead, "
                                   "torch.save(dict(model.state_dict()), ...) or as safetensors").arg(g);
            return;
        }
    // protocol 2: \x80 \x02, then the top-level object: '}' EMPTY_DICT, or a GLOBAL OrderedDict
    const bool ordered = pickle.size() > 2 && pickle[2] == 'c' && globals.value(0) == "collections.OrderedDict";
    if (ordered) {
        info.recognised = "a raw OrderedDict pickle (torch.save(model.state_dict()))";
        info.problem = "re-save it as dict(state_dict): torch.save(dict(model.state_dict()), path), or as safetensors "
                       "(reading PyTorch zip archives is not built yet either way)";
    } else {
        info.recognised = "a PyTorch zip archive holding a plain dict (torch.save)";
        info.problem = "reading PyTorch zip archives is not built yet: convert it to safetensors "
                       "(safetensors.torch.save_file(state_dict, \"model.safetensors\"))";
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
        if (start.startsWith("PK\x03\x04")) {
            fromPytorchZip(info);
        } else if (start.size() >= 4 && quint8(start[0]) == 0x80 && quint8(start[1]) == 0x02 && quint8(start[2]) == 0x8a) {
            info.format = "pytorch legacy";
            info.recognised = "a legacy (before PyTorch 1.6) torch.save file";
            info.problem = "the legacy torch.save format is not read: re-save it with a current PyTorch as safetensors "
                           "(safetensors.torch.save_file(state_dict, \"model.safetensors\"))";
        } else if (start.trimmed().startsWith('{') && fi.size() <= kMaxIndex) {
            info.format = "safetensors index";  // model.safetensors.index.json: every shard it names
            fromSafetensors(info, readCheckpointTensors(path));
        } else if (start.size() >= 8) {
            info.format = "safetensors";
            fromSafetensors(info, readSafetensors(path));
        } else {
            info.problem = QString("not a checkpoint: %1 bytes, too short for any format the app reads").arg(fi.size());
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
