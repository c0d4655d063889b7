#include "core/modelimpl.h"

#include "base/error.h"
#include "base/io/importers.h"
#include "base/io/safetensors.h"
#include "base/modelcatalog.h"
#include "base/tasks/taskcatalog.h"
#include "base/version.h"
#include "core/device.h"
#include "core/eval/evaluate.h"
#include "core/eval/generate.h"
#include "core/models/dense.h"
#include "core/models/gateddeltanet.h"
#include "core/models/mamba.h"
#include "core/models/mamba2.h"
#include "core/models/stateshrink.h"
#include "core/models/transformer.h"
#include "core/train/losses.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QRegularExpression>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace parrot {

namespace {

double availableMemoryBytes()
{
    QFile f("/proc/meminfo");
    if (!f.open(QIODevice::ReadOnly)) return 0;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (line.startsWith("MemAvailable:")) return line.simplified().split(' ').value(1).toDouble() * 1024.0;
    return 0;
}

std::shared_ptr<Model::Impl> makeImpl(const ExperimentConfig& config, torch::ScalarType storage = torch::kFloat)
{
    const QStringList problems = validate(config);
    if (!problems.isEmpty()) throw Error(problems.join("; "));
    const torch::Device device = preferredDevice();
    // on a GPU, its memory (the driver's total) bounds the model, else the machine's available memory
    const double gpuBytes = device.is_cuda() ? chosenGpuMemoryBytes() : 0.0;
    const int weightBytes = storage == torch::kFloat ? 4 : 2;
    const QString tooLarge = Model::memoryProblem(config, gpuBytes > 0 ? gpuBytes : availableMemoryBytes(), weightBytes);
    if (!tooLarge.isEmpty()) throw Error(gpuBytes > 0 ? tooLarge + " (the memory of the GPU, " + deviceDescription() + ")" : tooLarge);
    auto impl = std::make_shared<Model::Impl>();
    impl->config = config;
    impl->device = device;
    try {
        torch::manual_seed(uint64_t(config.seed));
        WeightStorage held(storage);
        impl->net = buildModel(config);
        impl->net->to(impl->device);
    } catch (const c10::Error& e) {
        throw Error(QString("cannot build the model: %1").arg(QString::fromUtf8(e.what_without_backtrace()).section('\n', 0, 0)));
    }
    return impl;
}

// The 16-bit type most of a checkpoint's matrices are stored as, or kFloat.
torch::ScalarType storedAs(const SafetensorsFile& file)
{
    QMap<QString, double> elements;
    for (const TensorRecord& t : file.tensors)
        if (t.shape.size() == 2) elements[t.dtype] += double(t.elementCount());
    double total = 0;
    for (double e : elements) total += e;
    if (elements.value("F16") > 0.5 * total) return torch::kHalf;
    if (elements.value("BF16") > 0.5 * total) return torch::kBFloat16;
    return torch::kFloat;
}

torch::ScalarType chosenStorage(WeightDtype choice, const SafetensorsFile& file)
{
    switch (choice) {
    case WeightDtype::Float32: return torch::kFloat;
    case WeightDtype::Float16: return torch::kHalf;
    case WeightDtype::BFloat16: return torch::kBFloat16;
    case WeightDtype::Auto: break;
    }
    const torch::ScalarType stored = storedAs(file);
    return stored != torch::kFloat && sixteenBitRunsFast(preferredDevice()) ? stored : torch::kFloat;
}

bool finite16(const uint16_t* v, int64_t n, bool bf16)
{
    const uint16_t exponent = bf16 ? 0x7f80 : 0x7c00;
    for (int64_t i = 0; i < n; ++i)
        if ((v[i] & exponent) == exponent) return false;
    return true;
}

bool finite32(const float* v, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(v[i])) return false;
    return true;
}

// A record's values into a parameter of its shape, converted to the parameter's dtype a block
// at a time (never a whole float32 copy of a large matrix); false when a value is NaN or infinite.
bool copyInto(const torch::Tensor& param, const TensorRecord& rec, const QString& what)
{
    const int64_t n = rec.elementCount();
    const bool onCpu = param.device().is_cpu() && param.is_contiguous();
    const bool sixteen = isSixteenBit(param);
    const bool bf16 = param.scalar_type() == torch::kBFloat16;
    if (onCpu && sixteen && rec.dtype == (bf16 ? "BF16" : "F16")) {  // as stored: the bytes themselves
        if (rec.data.size() != n * 2) throw Error(what + ": its bytes do not match its dtype and shape");
        const auto* v = reinterpret_cast<const uint16_t*>(rec.data.constData());
        if (!finite16(v, n, bf16)) return false;
        if (rec.rowOrder.empty()) {
            std::memcpy(param.data_ptr(), v, size_t(n) * 2);
        } else {  // an importer's reordering (GPT-NeoX's fused QKV rows)
            const int64_t rows = int64_t(rec.rowOrder.size()), rowElems = n / rows;
            auto* out = static_cast<uint16_t*>(param.data_ptr());
            for (int64_t r = 0; r < rows; ++r)
                std::memcpy(out + r * rowElems, v + rec.rowOrder[size_t(r)] * rowElems, size_t(rowElems) * 2);
        }
        return true;
    }
    if (onCpu && !sixteen) {
        float* out = param.data_ptr<float>();
        convertToFloat32(rec, 0, n, out, what);
        return finite32(out, n);
    }
    constexpr int64_t kBlock = int64_t(1) << 20;
    std::vector<float> block(size_t(std::min(n, kBlock)));
    auto flat = param.view({-1});
    for (int64_t a = 0; a < n; a += kBlock) {
        const int64_t k = std::min(kBlock, n - a);
        convertToFloat32(rec, a, k, block.data(), what);
        if (!finite32(block.data(), k)) return false;
        flat.narrow(0, a, k).copy_(torch::from_blob(block.data(), {k}, torch::kFloat32));
    }
    return true;
}

QString jsonText(const QJsonObject& o) { return QString::fromUtf8(QJsonDocument(o).toJson(QJsonDocument::Compact)); }

}  // namespace

QString Model::memoryProblem(const ExperimentConfig& config, double availableBytes, int weightBytes)
{
    // Training: weights, gradients and AdamW's two moments, 16 bytes a parameter before
    // activations. A pretrained language model is only run here: its weights, 4 bytes a
    // parameter as float32, 2 held in 16 bits.
    const bool runOnly = isTextTask(config.task.kind);
    const double parameters = estimatedParameters(config), needed = parameters * (runOnly ? double(weightBytes) : 16.0);
    if (availableBytes <= 0 || needed <= 0.8 * availableBytes) return {};
    const auto bytes = [](double b) {
        return b >= 1e9 ? QString("%1 GB").arg(b / 1e9, 0, 'f', 2) : QString("%1 MB").arg(b / 1e6, 0, 'f', 1);
    };
    const QString held = weightBytes == 2 ? "as 16-bit weights" : "as float32 weights";
    return QString("model too large for this machine: %1 M parameters need about %2 %3, more than 80% of the %4 of memory "
                   "available; %5")
        .arg(parameters / 1e6, 0, 'f', 2).arg(bytes(needed), runOnly ? held : "for training", bytes(availableBytes),
                                              runOnly ? (weightBytes == 2 ? "close other programs or choose a smaller model"
                                                                          : "hold it in 16 bits (--dtype bfloat16), close other programs or choose a smaller model")
                                                      : "reduce model.d_model or model.layers");
}

Model Model::create(const ExperimentConfig& config)
{
    Model m;
    m.d = makeImpl(config);
    return m;
}

Model Model::continuedAs(const ExperimentConfig& config) const
{
    if (!d) throw Error("no model to continue");
    const QStringList changed = overridesBetween(d->config, config).filter(QRegularExpression("^model\\."));
    if (!changed.isEmpty())
        throw Error(QString("the settings describe another model than this one (%1); only a fresh model can train with them")
                        .arg(changed.join(", ")));
    Model m;
    m.d = makeImpl(config);
    m.d->step = d->step;
    std::lock_guard lock(d->mutex);
    torch::NoGradGuard noGrad;
    auto mine = d->net->named_parameters();
    for (auto& p : m.d->net->named_parameters()) {
        const torch::Tensor* from = mine.find(p.key());
        if (!from || from->sizes() != p.value().sizes())
            throw Error(QString("the task does not fit this model's weights: %1 would be %2, the model's is %3 (task.vocab_size, task.dims)")
                            .arg(QString::fromStdString(p.key()), shapeText(p.value().sizes().vec()),
                                 from ? shapeText(from->sizes().vec()) : QString("missing")));
        p.value().copy_(*from);
    }
    return m;
}

const ExperimentConfig& Model::config() const
{
    static const ExperimentConfig none;
    return d ? d->config : none;
}

long long Model::step() const { return d ? d->step : 0; }

QString Model::weightDtype() const
{
    if (!d) return "float32";
    for (const auto& p : d->net->parameters()) {
        if (p.scalar_type() == torch::kHalf) return "float16";
        if (p.scalar_type() == torch::kBFloat16) return "bfloat16";
    }
    return "float32";
}

bool Model::autoKeepsSixteenBits() { return sixteenBitRunsFast(preferredDevice()); }

long long Model::parameterCount() const
{
    if (!d) return 0;
    long long n = 0;
    for (const auto& p : d->net->parameters()) n += p.numel();
    return n;
}

ModelSize Model::size() const
{
    if (!d) return {};
    const StateSize s = d->net->stateSize();
    return {parameterCount(), s.floats, s.floatsPerToken};
}

ModelSize Model::measure(const ExperimentConfig& config, double maxParameters)
{
    const double estimate = estimatedParameters(config);
    if (estimate > maxParameters)
        throw Error(QString("about %1 M parameters (too large to count here)").arg(estimate / 1e6, 0, 'f', 0));
    return create(config).size();
}

ExperimentConfig Model::matchParameters(const ExperimentConfig& config, long long target)
{
    const QStringList problems = validate(config);
    if (!problems.isEmpty()) throw Error(problems.join("; "));
    if (target < 1) throw Error(QString("matching parameters: the target must be positive, got %1").arg(target));
    const ModelConfig& m = config.model;
    int step = familyOf(m).attention ? 2 * int(m.heads) : 8;  // even head dims, as RoPE wants
    if (familyOf(m).options.contains("n_groups")) {  // whole heads of the inner width, in whole groups
        const int unit = m.headDim * m.nGroups;
        step = std::lcm(step, unit / std::gcd(unit, m.expand));
    } else if (familyOf(m).options.contains("head_dim")) {  // whole heads of d_model
        step = std::lcm(step, m.headDim);
    }
    ExperimentConfig c = config;
    // The parameter count grows with the width: bisect over multiples of the step, treating a
    // width too large to build as too many parameters (models are built to be counted: up to a
    // few times the target, so a target past measure()'s usual 20M can be met).
    const double countable = countingLimit(target);
    auto count = [&](int k) -> double {
        c.model.dModel = k * step;
        try {
            return double(measure(c, countable).parameters);
        } catch (const Error&) {
            return std::numeric_limits<double>::infinity();
        }
    };
    int lo = 1, hi = std::max(1, 4096 / step);
    if (count(lo) >= double(target)) hi = lo;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (count(mid) <= double(target)) lo = mid;
        else hi = mid - 1;
    }
    // lo: the largest width at or under the target (or the smallest there is); the next may be nearer.
    const double below = count(lo), above = count(lo + 1);
    const int best = std::abs(above - double(target)) < std::abs(below - double(target)) ? lo + 1 : lo;
    const double got = count(best);
    if (!std::isfinite(got) || std::abs(got - double(target)) > 0.5 * double(target))
        throw Error(QString("matching parameters: no width of %1 gives about %2 parameters (nearest: %3)")
                        .arg(describeModel(m)).arg(target).arg(std::isfinite(got) ? QString::number(got, 'f', 0) : "too large"));
    c.model.dModel = best * step;
    return c;
}

QString Model::summary() const
{
    if (!d) return "no model";
    return QString("%1, %2, step %3").arg(describeModel(d->config.model), size().describe()).arg(d->step);
}

void Model::save(const QString& path) const
{
    if (!d) throw Error(QString("%1: there is no model to save").arg(path));
    std::lock_guard lock(d->mutex);
    writeSafetensors(path, checkpointTensors(*d));
}

SafetensorsFile checkpointTensors(const Model::Impl& d)
{
    SafetensorsFile file;
    const QJsonObject cfg = toJson(d.config);
    file.metadata.insert("format", "parrotscope");
    file.metadata.insert("format_version", "1");
    file.metadata.insert("app_version", appVersion());
    file.metadata.insert("step", QString::number(d.step));
    file.metadata.insert("experiment", jsonText({{"name", cfg["name"]}, {"description", cfg["description"]}, {"seed", cfg["seed"]}}));
    file.metadata.insert("task", jsonText(cfg["task"].toObject()));
    file.metadata.insert("model", jsonText(cfg["model"].toObject()));
    file.metadata.insert("train", jsonText(cfg["train"].toObject()));
    for (const auto& p : d.net->named_parameters()) file.tensors.insert(QString::fromStdString(p.key()), floatRecord(p.value()));
    return file;
}

TensorRecord floatRecord(const torch::Tensor& tensor)
{
    const auto t = tensor.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    TensorRecord rec;
    rec.dtype = "F32";
    rec.shape = t.sizes().vec();
    rec.data = QByteArray(static_cast<const char*>(t.data_ptr()), qsizetype(t.numel() * sizeof(float)));
    return rec;
}

namespace {

// A checkpoint Model::save wrote: its config and step from the metadata. A run's resume file
// (train/resume.h) is a checkpoint too: its training state, which is not weights, leaves `file`.
ExperimentConfig ownCheckpointConfig(const QString& path, SafetensorsFile& file, long long& step)
{
    if (file.metadata.value("format_version") != "1")
        throw Error(QString("%1: checkpoint format version '%2' is not supported (expected 1)")
                        .arg(path, file.metadata.value("format_version")));
    auto section = [&](const QString& key) {
        QJsonParseError err;
        const QJsonDocument doc = QJsonDocument::fromJson(file.metadata.value(key).toUtf8(), &err);
        if (!file.metadata.contains(key) || err.error != QJsonParseError::NoError || !doc.isObject())
            throw Error(QString("%1: __metadata__.%2 is missing or not a JSON object").arg(path, key));
        return doc.object();
    };
    QJsonObject cfg = section("experiment");
    cfg.insert("task", section("task"));
    cfg.insert("model", section("model"));
    cfg.insert("train", section("train"));
    const ExperimentConfig config = experimentFromJson(cfg, path + " (__metadata__)");
    bool stepOk = false;
    step = file.metadata.value("step").toLongLong(&stepOk);
    if (!stepOk || step < 0) throw Error(QString("%1: __metadata__.step is not a non-negative integer").arg(path));
    if (file.metadata.contains("train_state"))
        for (auto it = file.tensors.begin(); it != file.tensors.end();)
            it = it.key().startsWith("train_state.") ? file.tensors.erase(it) : std::next(it);
    return config;
}

// The config must describe about as many values as the file holds: a damaged or hostile
// config is refused before a model of its size is built.
void checkConfigAgainstFile(const QString& path, const ExperimentConfig& config, const SafetensorsFile& file)
{
    double values = 0;
    for (const TensorRecord& t : file.tensors) values += double(t.elementCount());
    if (estimatedParameters(config) > 2 * values + 1e5)
        throw Error(QString("%1: its config describes about %2 parameters, the file holds only %3 values")
                        .arg(path).arg(estimatedParameters(config), 0, 'g', 3).arg(values, 0, 'g', 3));
}

// Each parameter of `net` from its tensor in `file`, named in messages as the file names it
// (`imported`). Throws every problem with the tensors at once, the first few of each kind.
void copyParameters(SequenceModel& net, const SafetensorsFile& file, const ImportedCheckpoint& imported, const ExperimentConfig& config,
                    const QString& path, const std::function<bool(int, int)>& progress)
{
    torch::NoGradGuard noGrad;
    QStringList expected, missing, mismatched, unexpected;
    const auto parameters = net->named_parameters();
    int copied = 0;
    for (auto& p : parameters) {
        if (progress && !progress(copied++, int(parameters.size()))) throw Error("loading cancelled");
        const QString name = QString::fromStdString(p.key());
        const QString shown = imported.sourceName(name);  // the file's own name in messages
        expected << name;
        auto it = file.tensors.find(name);
        if (it == file.tensors.end()) {
            missing << shown;
            continue;
        }
        const TensorRecord& rec = it.value();
        if (rec.shape != p.value().sizes().vec()) {
            mismatched << QString("%1 (expected %2, found %3)").arg(shown, shapeText(p.value().sizes().vec()), shapeText(rec.shape));
            continue;
        }
        if (!copyInto(p.value(), rec, QString("%1: tensor '%2'").arg(path, shown)))  // F16, BF16, F64 converted
            throw Error(QString("%1: tensor '%2' holds NaN or infinite values").arg(path, shown));
        releaseMappedPages(rec);  // its pages back to the page cache: the model holds the values now
    }
    for (auto it = file.tensors.begin(); it != file.tensors.end(); ++it) {
        // a tied output layer saved anyway (mamba_ssm writes lm_head.weight next to the embedding it shares)
        const bool tiedCopy = it.key() == "lm_head.weight" && config.model.tieEmbeddings;
        if (!expected.contains(it.key()) && !tiedCopy) unexpected << imported.sourceName(it.key());
    }
    QStringList problems;
    auto list = [&](const QString& what, const QStringList& names) {
        if (names.isEmpty()) return;
        problems << QString("%1 %2: %3%4").arg(names.size()).arg(what, names.mid(0, 4).join(", "), names.size() > 4 ? ", …" : "");
    };
    list("missing tensor(s) the config's model has", missing);
    list("tensor(s) of the wrong shape", mismatched);
    list("unexpected tensor(s), not part of the model its config describes", unexpected);
    if (!problems.isEmpty()) throw Error(QString("%1: %2").arg(path, problems.join("; ")));
}

}  // namespace

Model Model::load(const QString& given, const std::function<bool(int, int)>& progress, WeightDtype dtype)
{
    const QString path = QFileInfo(given).isDir() ? checkpointInFolder(given) : given;  // a HuggingFace folder: its weights
    SafetensorsFile file = readCheckpointTensors(path);  // one file, a sharded index's shards, or a torch.save zip
    ExperimentConfig config;
    ImportedCheckpoint imported;  // for another program's checkpoint: how its names map
    long long step = 0;
    if (file.metadata.value("format") == "parrotscope") {
        config = ownCheckpointConfig(path, file, step);
    } else {
        imported = importCheckpoint(path, file);  // another program's checkpoint, or a clear refusal
        config = imported.config;
        file = std::move(imported.tensors);
    }
    checkConfigAgainstFile(path, config, file);
    Model m;
    m.d = makeImpl(config, chosenStorage(dtype, file));
    m.d->step = step;
    copyParameters(m.d->net, file, imported, config, path, progress);
    return m;
}

std::vector<float> Model::logits(const std::vector<int>& tokens, int batch, int time) const
{
    if (!d) throw Error("no model");
    if (batch < 1 || time < 1 || tokens.size() != size_t(batch) * size_t(time))
        throw Error(QString("logits: expected %1 x %2 tokens, got %3").arg(batch).arg(time).arg(tokens.size()));
    if (isVectorTask(d->config.task.kind)) throw Error("logits: this model reads vectors (in-context learning), not tokens");
    const int vocab = taskVocabSize(d->config.task);
    for (int t : tokens)
        if (t < 0 || t >= vocab) throw Error(QString("logits: token id %1 outside the vocabulary 0..%2").arg(t).arg(vocab - 1));
    std::lock_guard lock(d->mutex);
    torch::NoGradGuard noGrad;
    std::vector<int64_t> ids(tokens.begin(), tokens.end());
    auto out = d->net->forward(toTensor(ids, batch, time, d->device)).to(torch::kCPU).contiguous();
    return std::vector<float>(out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
}

QString Model::ablationProblem(const HeadAblation& ablation) const
{
    if (!d) return "no model";
    if (ablation.isEmpty()) return {};
    const ModelConfig& mc = d->config.model;
    // attention heads, or the recurrent heads of Mamba-2 and Gated DeltaNet
    const int heads = d->net->as<TransformerImpl>() ? mc.heads : recurrentHeads(mc);
    if (heads == 0)
        return QString("head ablation: a %1 has no heads of its own to switch off (a Transformer, Mamba-2 and Gated DeltaNet have)")
            .arg(describeModel(mc));
    for (const auto& [layer, head] : ablation.heads)
        if (layer < 0 || layer >= mc.layers || head < 0 || head >= heads)
            return QString("head ablation: the model has no head %1.%2 (layers 0..%3, heads 0..%4)")
                .arg(layer).arg(head).arg(mc.layers - 1).arg(heads - 1);
    return {};
}

Model::StateLayout Model::stateLayout() const
{
    StateLayout l;
    if (!d) return l;
    for (const auto& m : d->net->modules(false)) {
        if (const auto* mixer = dynamic_cast<const MambaMixerImpl*>(m.get())) {
            const MambaOptions& o = mixer->options();
            l.otherFloats += o.dInner() * (o.dConv - 1);
            if (o.selective) {
                l.channels.push_back(o.dInner());
                l.dState = int(o.dState);
            }
        } else if (const auto* m2 = dynamic_cast<const Mamba2MixerImpl*>(m.get())) {  // a channel: a row of a head's P x N state
            const Mamba2Options& o = m2->options();
            l.otherFloats += o.convChannels() * (o.dConv - 1);
            l.channels.push_back(o.dInner());
            l.dState = int(o.dState);
        } else if (const auto* gdn = dynamic_cast<const GatedDeltaNetMixerImpl*>(m.get())) {  // a channel: a value column of a head's K x V state
            const GatedDeltaNetOptions& o = gdn->options();
            l.otherFloats += (2 * o.keyDim() + o.valueDim()) * (o.dConv - 1);
            l.channels.push_back(o.valueDim());
            l.dState = int(o.headDim);
        } else if (const auto* s4 = dynamic_cast<const S4DKernelImpl*>(m.get())) {
            l.channels.push_back(s4->log_dt.size(0));
            l.dState = int(s4->A_log.size(1));
        }
    }
    l.grows = size().stateFloatsPerToken > 0;
    return l;
}

QString Model::shrinkProblem(const StateShrink& shrink) const
{
    if (!d) return "no model";
    if (shrink.isEmpty()) return {};
    const StateLayout l = stateLayout();
    if (l.channels.empty())
        return QString("state shrinking: a %1 has no state-space layers (Mamba, Mamba-2, Gated DeltaNet, S4D and the hybrids have)")
            .arg(describeModel(d->config.model));
    if (shrink.mode == StateShrink::Mode::Dims && (shrink.dims < 1 || shrink.dims > l.dState))
        return QString("state shrinking: %1 state dimensions asked, the model has %2").arg(shrink.dims).arg(l.dState);
    if (shrink.mode == StateShrink::Mode::Channels && !(shrink.fraction > 0 && shrink.fraction <= 1))
        return QString("state shrinking: channel fraction %1, expected above 0 and at most 1").arg(shrink.fraction);
    if (shrink.mode == StateShrink::Mode::Bits && (shrink.bits < 1 || shrink.bits > 16))
        return QString("state shrinking: %1 bits, expected 1..16").arg(shrink.bits);
    return {};
}

double Model::stateBits(const StateShrink& shrink) const
{
    const StateLayout l = stateLayout();
    if (l.grows) return 0;
    const StateShrinkScope scope(shrink);  // keptChannels() rounds as the layers do
    const bool quantised = shrink.mode == StateShrink::Mode::Bits;
    const double perEntry = quantised ? shrink.bits : 32;
    const int dims = shrink.mode == StateShrink::Mode::Dims ? std::min(shrink.dims, l.dState) : l.dState;
    double bits = double(l.otherFloats) * 32;
    for (long long c : l.channels) bits += double(keptChannels(c)) * dims * perEntry + (quantised ? double(c) * 32 : 0);
    return bits;
}

StateShrunk::StateShrunk(const Model& model, const StateShrink& shrink) : m_shrink(shrink)
{
    const QString problem = model.shrinkProblem(m_shrink);
    if (!problem.isEmpty()) throw Error(problem);
    m_previous = StateShrinkScope::exchange(&m_shrink);
}

StateShrunk::~StateShrunk() { StateShrinkScope::exchange(m_previous); }

HeadsOff::HeadsOff(const Model& model, const HeadAblation& ablation) : m_ablation(ablation)
{
    const QString problem = model.ablationProblem(m_ablation);
    if (!problem.isEmpty()) throw Error(problem);
    m_previous = HeadAblationScope::exchange(&m_ablation);
}

HeadsOff::~HeadsOff() { HeadAblationScope::exchange(m_previous); }

std::vector<float> Model::logits(const std::vector<int>& tokens, int batch, int time, const HeadAblation& ablation) const
{
    const QString problem = ablationProblem(ablation);
    if (!problem.isEmpty()) throw Error(problem);
    const HeadAblationScope scope(ablation);
    return logits(tokens, batch, time);
}

std::vector<float> Model::tokenLosses(const std::vector<int>& tokens) const
{
    if (!d) throw Error("no model");
    if (isVectorTask(d->config.task.kind)) throw Error("token losses: this model reads vectors (in-context learning), not tokens");
    const int vocab = taskVocabSize(d->config.task);
    for (int t : tokens)
        if (t < 0 || t >= vocab) throw Error(QString("token losses: token id %1 outside the vocabulary 0..%2").arg(t).arg(vocab - 1));
    const ModelConfig& mc = d->config.model;
    if (mc.positions == "learned" && (long long)tokens.size() > mc.maxPositions)
        throw Error(QString("token losses: %1 tokens pass the model's %2 learned positions").arg(tokens.size()).arg(mc.maxPositions));
    try {
        return parrot::tokenLosses(*d, tokens);
    } catch (const c10::Error& e) {
        throw Error(QString("token losses: %1").arg(QString::fromUtf8(e.what_without_backtrace()).section('\n', 0, 0)));
    }
}

AttentionMaps Model::attention(const std::vector<int>& tokens) const { return probe(tokens).attention; }

namespace {

// (1, T, C) tensors -> T x C matrices labelled with their block index.
std::vector<ProbeMatrix> probeMatrices(const std::vector<torch::Tensor>& ts, const std::vector<int>& layers)
{
    std::vector<ProbeMatrix> out;
    for (size_t i = 0; i < ts.size(); ++i) {
        const auto t = ts[i].select(0, 0).to(torch::kCPU, torch::kFloat).contiguous();
        ProbeMatrix m;
        m.layer = layers[i];
        m.rows = int(t.size(0));
        m.cols = int(t.size(1));
        m.values.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
        out.push_back(std::move(m));
    }
    return out;
}

// (1, H, T, T) tensors, one per layer -> layers x heads x T x T.
AttentionMaps attentionMaps(const std::vector<torch::Tensor>& layers, int T, const std::vector<QString>& tokens)
{
    AttentionMaps a;
    a.layers = int(layers.size());
    a.heads = a.layers > 0 ? int(layers[0].size(1)) : 0;
    a.length = T;
    a.tokens = tokens;
    if (a.layers > 0) {
        auto all = torch::stack(layers).to(torch::kCPU, torch::kFloat).contiguous();  // (layers, 1, H, T, T)
        a.weights.assign(all.data_ptr<float>(), all.data_ptr<float>() + all.numel());
    }
    return a;
}

}  // namespace

ModelProbes Model::probe(const std::vector<int>& tokens, const std::function<bool()>& keepGoing) const
{
    if (!d) throw Error("no model");
    if (isVectorTask(d->config.task.kind))
        throw Error("probe: this model reads vectors (in-context learning), not tokens; its inside views are not there yet");
    const int T = int(tokens.size());
    if (T < 1) throw Error("probe: no tokens");
    // a language model's ids are its tokenizer's (labelled by number here: LanguageModel decodes them)
    const bool text = isTextTask(d->config.task.kind);
    const std::unique_ptr<TokenTask> task = text ? nullptr : TokenTask::create(d->config.task);
    const int vocab = text ? taskVocabSize(d->config.task) : task->vocabSize();
    for (int t : tokens)
        if (t < 0 || t >= vocab) throw Error(QString("probe: token id %1 outside the vocabulary").arg(t));
    std::lock_guard lock(d->mutex);
    torch::NoGradGuard noGrad;
    std::vector<int64_t> ids(tokens.begin(), tokens.end());
    Probes probes;
    probes.keepGoing = keepGoing;
    const auto logits = d->net->forward(toTensor(ids, 1, T, d->device), &probes);  // (1, T, V)
    ModelProbes out;
    for (int t : tokens) out.tokens.push_back(text ? QString::number(t) : task->text(t));
    const auto best = logits.select(0, 0).argmax(-1).to(torch::kCPU, torch::kLong).contiguous();
    out.predictions.assign(best.data_ptr<int64_t>(), best.data_ptr<int64_t>() + best.numel());
    out.attention = attentionMaps(probes.attention, T, out.tokens);
    out.attentionLayers = probes.attentionLayer;
    out.effectiveAttention = familyOf(d->config.model).effectiveAttention;
    std::vector<torch::Tensor> implicit;
    for (const auto& m : probes.implicitAttention) implicit.push_back(m.unsqueeze(1));  // (1, 1, T, T): one head
    out.implicitAttention = attentionMaps(implicit, T, out.tokens);
    out.implicitLayers = probes.implicitLayer;
    out.stateNorm = probeMatrices(probes.stateNorm, probes.stateLayer);
    out.delta = probeMatrices(probes.delta, probes.deltaLayer);
    return out;
}

std::vector<int> Model::generate(const std::vector<int>& prompt, int maxNewTokens, int stopToken,
                                 const std::function<bool(int, int)>& keepGoing) const
{
    return generateWith(prompt, maxNewTokens, stopToken, keepGoing, {}, -1);
}

std::vector<int> Model::generateUntil(const std::vector<int>& prompt, int maxNewTokens, int stopToken,
                                      const std::function<bool(const std::vector<int>&)>& done, int suppressFirst) const
{
    return generateWith(prompt, maxNewTokens, stopToken, {}, done, suppressFirst);
}

std::vector<int> Model::generateWith(const std::vector<int>& prompt, int maxNewTokens, int stopToken,
                                     const std::function<bool(int, int)>& keepGoing,
                                     const std::function<bool(const std::vector<int>&)>& done, int suppressFirst) const
{
    if (!d) throw Error("no model");
    if (prompt.empty()) throw Error("generate: the prompt has no tokens");
    if (maxNewTokens < 0 || maxNewTokens > 100000) throw Error(QString("generate: %1 new tokens: expected 0..100000").arg(maxNewTokens));
    if (isVectorTask(d->config.task.kind)) throw Error("generate: this model reads vectors (in-context learning), not tokens");
    if (isReadOutTask(d->config.task.kind))
        throw Error("generate: this model decodes a sequence from its last token (MAD's compression); it does not predict next tokens");
    const int vocab = taskVocabSize(d->config.task);
    for (int t : prompt)
        if (t < 0 || t >= vocab) throw Error(QString("generate: token id %1 outside the vocabulary 0..%2").arg(t).arg(vocab - 1));
    const ModelConfig& mc = d->config.model;
    const long long longest = (long long)prompt.size() + maxNewTokens;
    if (mc.positions == "learned" && longest > mc.maxPositions)
        throw Error(QString("generate: %1 prompt tokens and %2 new ones pass the model's %3 learned positions")
                        .arg(prompt.size()).arg(maxNewTokens).arg(mc.maxPositions));
    try {
        return generateGreedy(*d, prompt, maxNewTokens, stopToken, keepGoing, done, suppressFirst);
    } catch (const c10::Error& e) {
        throw Error(QString("generate: %1").arg(QString::fromUtf8(e.what_without_backtrace()).section('\n', 0, 0)));
    }
}

LengthCurve Model::evaluate(const std::vector<int>& lengths, int samples, unsigned long long seed,
                            const std::function<bool(int, int)>& keepGoing) const
{
    if (!d) throw Error("no model to evaluate");
    if (samples < 1) throw Error(QString("evaluation samples: expected >= 1, got %1").arg(samples));
    for (int len : lengths)
        if (len < 1 || len > 10000) throw Error(QString("evaluation length %1: expected 1..10000").arg(len));
    if (isVectorTask(d->config.task.kind)) return evaluateInContext(*d, lengths, samples, seed, keepGoing);
    return evaluateTokens(*d, lengths, samples, seed, keepGoing);
}

LengthCurve Model::evaluate(const TaskConfig& task, const std::vector<int>& lengths, int samples, unsigned long long seed,
                            const std::function<bool(int, int)>& keepGoing) const
{
    if (!d) throw Error("no model to evaluate");
    if (isVectorTask(task.kind) || isVectorTask(d->config.task.kind))
        throw Error(QString("evaluation on task %1: only token tasks are evaluated on a task other than the model's own").arg(task.kind));
    if (taskVocabSize(task) != taskVocabSize(d->config.task))
        throw Error(QString("evaluation on task %1: its vocabulary has %2 tokens, the model's %3").arg(task.kind)
                        .arg(taskVocabSize(task)).arg(taskVocabSize(d->config.task)));
    if (samples < 1) throw Error(QString("evaluation samples: expected >= 1, got %1").arg(samples));
    for (int len : lengths)
        if (len < 1 || len > 10000) throw Error(QString("evaluation length %1: expected 1..10000").arg(len));
    return evaluateTokens(*d, lengths, samples, seed, keepGoing, &task);
}

}  // namespace parrot
