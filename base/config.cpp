#include "base/config.h"

#include "base/configfields.h"
#include "base/error.h"
#include "base/io/jsonfile.h"
#include "base/modelcatalog.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <limits>

namespace parrot {
namespace {

// One list of fields per struct, shared by JSON writing, strict reading and --set.
template <class Task, class V> void visitFields(Task& c, V&& v, const TaskConfig*)
{
    v("kind", c.kind);
    v("vocab_size", c.vocabSize);
    v("min_len", c.minLen);
    v("max_len", c.maxLen);
    v("context_len", c.contextLen);
    v("eval_lengths", c.evalLengths);
    v("eval_samples", c.evalSamples);
    v("ngram", c.ngram);
    v("answer_len", c.answerLen);
    v("shuffle_words", c.shuffleWords);
    v("dims", c.dims);
    v("sparsity", c.sparsity);
    v("outlier_prob", c.outlierProb);
    v("noise_fraction", c.noiseFraction);
    v("noise_vocab", c.noiseVocab);
    v("motif", c.motif);
    v("copy_tokens", c.copyTokens);
    v("train_examples", c.trainExamples);
    v("eval_kind", c.evalKind);
}

template <class Model, class V> void visitFields(Model& c, V&& v, const ModelConfig*)
{
    v("kind", c.kind);
    v("positions", c.positions);
    v("layers", c.layers);
    v("d_model", c.dModel);
    v("heads", c.heads);
    v("num_masked_heads", c.numMaskedHeads);
    v("mlp_ratio", c.mlpRatio);
    v("rotary_fraction", c.rotaryFraction);
    v("max_positions", c.maxPositions);
    v("d_state", c.dState);
    v("d_conv", c.dConv);
    v("expand", c.expand);
    v("mamba_mlp_ratio", c.mambaMlpRatio);
    v("head_dim", c.headDim);
    v("n_groups", c.nGroups);
    v("chunk_size", c.chunkSize);
    v("forget_gate", c.forgetGate);
    v("tie_embeddings", c.tieEmbeddings);
    v("parallel_residual", c.parallelResidual);
    v("layer_norm_eps", c.layerNormEps);
    v("rotary_base", c.rotaryBase);
    v("repeat_pass_dims", c.repeatPassDims);
    v("short_conv", c.shortConv);
    v("init", c.init);
    v("dt_rank", c.dtRank);
    v("proj_bias", c.projBias);
    v("conv_bias", c.convBias);
}

template <class Train, class V> void visitFields(Train& c, V&& v, const TrainConfig*)
{
    v("steps", c.steps);
    v("batch_size", c.batchSize);
    v("lr", c.lr);
    v("schedule", c.schedule);
    v("min_lr_ratio", c.minLrRatio);
    v("warmup_steps", c.warmupSteps);
    v("weight_decay", c.weightDecay);
    v("beta1", c.beta1);
    v("beta2", c.beta2);
    v("grad_clip", c.gradClip);
    v("eval_every", c.evalEvery);
    v("eval_samples", c.evalSamples);
    v("checkpoint_every", c.checkpointEvery);
    v("log_every", c.logEvery);
    v("mechanism_every", c.mechanismEvery);
    v("target_accuracy", c.targetAccuracy);
    v("curriculum_dims", c.curriculumDims);
    v("curriculum_steps", c.curriculumSteps);
    v("precision", c.precision);
}

template <class S, class V> void visitStruct(S& c, V&& v)
{
    visitFields(c, std::forward<V>(v), static_cast<const std::remove_const_t<S>*>(nullptr));
}

template <class E, class V> void visitTop(E& c, V&& v)
{
    v("name", c.name);
    v("description", c.description);
    v("seed", c.seed);
}

QJsonValue toValue(const QString& s) { return s; }
QJsonValue toValue(int i) { return i; }
QJsonValue toValue(qint64 i) { return i; }
QJsonValue toValue(double d) { return d; }
QJsonValue toValue(bool b) { return b; }
QJsonValue toValue(const std::vector<int>& v)
{
    QJsonArray a;
    for (int x : v) a.append(x);
    return a;
}

QString typeName(const QJsonValue& v)
{
    switch (v.type()) {
    case QJsonValue::Null: return "null";
    case QJsonValue::Bool: return "a boolean";
    case QJsonValue::Double: return "a number";
    case QJsonValue::String: return "a string";
    case QJsonValue::Array: return "an array";
    case QJsonValue::Object: return "an object";
    default: return "nothing";
    }
}

[[noreturn]] void wrongType(const QString& key, const char* expected, const QJsonValue& v)
{
    throw Error(QString("%1: expected %2, got %3").arg(key, expected, typeName(v)));
}

qint64 integerFrom(const QString& key, const QJsonValue& v, double lo, double hi, const char* what)
{
    if (!v.isDouble()) wrongType(key, what, v);
    const double d = v.toDouble();
    if (std::floor(d) != d || d < lo || d > hi)
        throw Error(QString("%1: expected %2, got %3").arg(key, what).arg(d));
    return static_cast<qint64>(d);
}

void fromValue(const QString& key, const QJsonValue& v, QString& out)
{
    if (!v.isString()) wrongType(key, "a string", v);
    out = v.toString();
}
void fromValue(const QString& key, const QJsonValue& v, int& out)
{
    out = static_cast<int>(integerFrom(key, v, std::numeric_limits<int>::min(),
                                       std::numeric_limits<int>::max(), "an integer"));
}
void fromValue(const QString& key, const QJsonValue& v, qint64& out)
{
    out = integerFrom(key, v, -9.007199254740992e15, 9.007199254740992e15, "an integer");
}
void fromValue(const QString& key, const QJsonValue& v, double& out)
{
    if (!v.isDouble()) wrongType(key, "a number", v);
    out = v.toDouble();
}
void fromValue(const QString& key, const QJsonValue& v, bool& out)
{
    if (!v.isBool()) wrongType(key, "a boolean (true or false)", v);
    out = v.toBool();
}
void fromValue(const QString& key, const QJsonValue& v, std::vector<int>& out)
{
    if (!v.isArray()) wrongType(key, "an array of integers", v);
    out.clear();
    const QJsonArray a = v.toArray();
    for (qsizetype i = 0; i < a.size(); ++i) {
        int x = 0;
        fromValue(QString("%1[%2]").arg(key).arg(i), a[i], x);
        out.push_back(x);
    }
}

// Parses a command-line string into the field's type.
template <class T> void fromText(const QString& key, const QString& text, T& out)
{
    const QString t = text.trimmed();
    QJsonValue v;
    if constexpr (std::is_same_v<T, QString>) {
        v = text;
    } else if constexpr (std::is_same_v<T, bool>) {
        if (t == "true" || t == "1" || t == "on" || t == "yes") v = true;
        else if (t == "false" || t == "0" || t == "off" || t == "no") v = false;
        else throw Error(QString("%1: expected true or false, got '%2'").arg(key, text));
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
        QString body = t;
        if (body.startsWith('[') && body.endsWith(']')) body = body.mid(1, body.size() - 2);
        QJsonArray a;
        for (const QString& part : body.split(',', Qt::SkipEmptyParts)) {
            bool ok = false;
            const int x = part.trimmed().toInt(&ok);
            if (!ok) throw Error(QString("%1: expected a comma-separated list of integers, got '%2'").arg(key, text));
            a.append(x);
        }
        v = a;
    } else {
        bool ok = false;
        const double d = t.toDouble(&ok);
        if (!ok) throw Error(QString("%1: expected a number, got '%2'").arg(key, text));
        v = d;
    }
    fromValue(key, v, out);
}

template <class S> QJsonObject sectionToJson(const S& s)
{
    QJsonObject o;
    visitStruct(s, [&](const char* name, const auto& field) { o.insert(name, toValue(field)); });
    return o;
}

template <class S> QStringList fieldNames(S& s)
{
    QStringList names;
    visitStruct(s, [&](const char* name, auto&) { names << name; });
    return names;
}

template <class S> void sectionFromJson(S& s, const QJsonObject& o, const QString& prefix)
{
    const QStringList known = fieldNames(s);
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!known.contains(it.key()))
            throw Error(QString("%1.%2: unknown key (expected one of: %3)").arg(prefix, it.key(), known.join(", ")));
    visitStruct(s, [&](const char* name, auto& field) {
        if (o.contains(name)) fromValue(prefix + "." + name, o.value(name), field);
    });
}

template <class S> bool sectionOverride(S& s, const QString& field, const QString& key, const QString& text)
{
    bool found = false;
    visitStruct(s, [&](const char* name, auto& f) {
        if (field == name) {
            fromText(key, text, f);
            found = true;
        }
    });
    if (!found)
        throw Error(QString("%1: unknown key (expected one of: %2)").arg(key, fieldNames(s).join(", ")));
    return found;
}

}  // namespace

QJsonObject toJson(const ExperimentConfig& c)
{
    QJsonObject o;
    visitTop(c, [&](const char* name, const auto& field) { o.insert(name, toValue(field)); });
    o.insert("task", sectionToJson(c.task));
    o.insert("model", sectionToJson(c.model));
    o.insert("train", sectionToJson(c.train));
    return o;
}

ExperimentConfig experimentFromJson(const QJsonObject& o, const QString& origin)
{
    const QString where = origin.isEmpty() ? QString() : origin + ": ";
    ExperimentConfig c;
    try {
        static const QStringList sections = {"task", "model", "train"};
        QStringList topNames;
        visitTop(c, [&](const char* name, auto&) { topNames << name; });
        for (auto it = o.begin(); it != o.end(); ++it) {
            if (topNames.contains(it.key())) {
                visitTop(c, [&](const char* name, auto& field) {
                    if (it.key() == name) fromValue(name, it.value(), field);
                });
            } else if (sections.contains(it.key())) {
                if (!it.value().isObject()) wrongType(it.key(), "an object", it.value());
            } else {
                throw Error(QString("%1: unknown key (expected one of: %2)")
                                .arg(it.key(), (topNames + sections).join(", ")));
            }
        }
        sectionFromJson(c.task, o.value("task").toObject(), "task");
        sectionFromJson(c.model, o.value("model").toObject(), "model");
        sectionFromJson(c.train, o.value("train").toObject(), "train");
    } catch (const Error& e) {
        throw Error(where + e.message());
    }
    const QStringList problems = validate(c);
    if (!problems.isEmpty()) throw Error(where + problems.join("; "));
    return c;
}

TaskConfig evaluationTask(const TaskConfig& t)
{
    TaskConfig e = t;
    if (t.evalKind.isEmpty()) return e;
    // Only evaluation lengths are drawn from it (one example per row): its training range is the
    // longest of them, and the packing context is unused.
    e.kind = t.evalKind;
    e.minLen = e.maxLen = evaluationLengths(t).back();
    e.contextLen = 65536;
    return e;
}

namespace {

// What validate() finds, and the checks it finds it with.
struct Problems {
    QStringList list;
    void need(bool ok, const QString& msg)
    {
        if (!ok) list << msg;
    }
    void add(const QString& problem)
    {
        if (!problem.isEmpty()) list << problem;
    }
    void inRange(const char* key, long long value) { add(rangeProblem(key, value)); }  // the range of configfields.h
    void inRealRange(const char* key, double value) { add(rangeProblem(realField(key), value)); }
};

// A token task checks the rest of its settings itself: its kind, vocabulary, options, room in the
// context, and whether each evaluation length can be generated.
void checkTokenTask(const TaskConfig& t, Problems& p)
{
    try {
        if (isVectorTask(t.kind)) throw Error(QString());  // checked below
        TokenTask::create(t);
        const TaskConfig e = evaluationTask(t);
        if (!t.evalKind.isEmpty()) {
            if (isVectorTask(e.kind) || !findTask(e.kind))
                throw Error(QString("task.eval_kind: expected a token task, got \"%1\"").arg(e.kind));
            if (taskVocabSize(e) != taskVocabSize(t))
                throw Error(QString("task.eval_kind: %1 has a different vocabulary from %2").arg(e.kind, t.kind));
        }
        const std::unique_ptr<TokenTask> task = TokenTask::create(e);
        for (int len : evaluationLengths(t)) {  // the first one that cannot be generated
            const QString problem = task->checkDifficulty(len);
            if (!problem.isEmpty()) {
                p.list << "task.eval_lengths: " + problem;
                break;
            }
        }
    } catch (const Error& e) {
        if (!e.message().isEmpty()) p.list << e.message();
    }
    if (isVectorTask(t.kind)) {
        try {
            IclTask::create(t);
        } catch (const Error& e) {
            p.list << e.message();
        }
    }
}

void validateTask(const TaskConfig& t, Problems& p)
{
    p.inRange("task.min_len", t.minLen);
    p.need(t.maxLen >= t.minLen, QString("task.max_len: expected >= task.min_len (%1), got %2").arg(t.minLen).arg(t.maxLen));
    p.need(!t.evalLengths.empty(), "task.eval_lengths: expected at least one length");
    for (int len : t.evalLengths)
        p.inRange("task.eval_lengths", len);
    if (isTextTask(t.kind))
        p.need(t.vocabSize >= 2 && t.vocabSize <= (1 << 24), QString("task.vocab_size: a language model's vocabulary of 2..16,777,216 tokens, got %1").arg(t.vocabSize));
    else if (p.list.isEmpty())
        checkTokenTask(t, p);
    p.need(t.evalSamples >= 1, QString("task.eval_samples: expected >= 1, got %1").arg(t.evalSamples));
}

// The heads, positions and attention settings.
void validateAttention(const ExperimentConfig& c, const ModelFamily* family, Problems& p)
{
    const ModelConfig& m = c.model;
    const bool attention = family && family->attention;
    const bool schemes = family && family->positions;  // the Transformer's model.positions
    p.need(findPositions(m.positions),
           QString("model.positions: expected one of %1, got \"%2\"").arg(positionIds().join(", "), m.positions));
    p.inRange("model.layers", m.layers);
    p.inRange("model.d_model", m.dModel);
    p.inRange("model.heads", m.heads);
    if (attention) {
        p.need(m.heads >= 1 && m.dModel % m.heads == 0,
               QString("model.d_model: expected a multiple of model.heads (%1), got %2").arg(m.heads).arg(m.dModel));
        p.need(m.numMaskedHeads >= 0 && m.numMaskedHeads <= m.heads,
               QString("model.num_masked_heads: expected 0..model.heads (%1), got %2").arg(m.heads).arg(m.numMaskedHeads));
        p.inRange("model.mlp_ratio", m.mlpRatio);
    }
    p.inRealRange("model.rotary_fraction", m.rotaryFraction);
    if (schemes && m.positions == "rope" && m.heads >= 1 && m.dModel % m.heads == 0)
        p.need(int(m.rotaryFraction * (m.dModel / m.heads)) >= 2,
               QString("model.rotary_fraction: %1 of a head of %2 dims rotates fewer than 2 dims").arg(m.rotaryFraction).arg(m.dModel / m.heads));
    p.inRealRange("model.layer_norm_eps", m.layerNormEps);
    p.inRealRange("model.rotary_base", m.rotaryBase);
    p.inRange("model.max_positions", m.maxPositions);
    if ((schemes && m.positions == "learned") || (family && family->learnedPositions))
        p.need(m.maxPositions >= c.task.contextLen,
               QString("model.max_positions: expected >= task.context_len (%1), got %2").arg(c.task.contextLen).arg(m.maxPositions));
}

// The state-space and recurrent mixers' settings.
void validateMixers(const ModelConfig& m, const ModelFamily* family, Problems& p)
{
    p.inRange("model.d_state", m.dState);
    p.inRange("model.d_conv", m.dConv);
    p.need(m.shortConv == 0 || (m.shortConv >= 2 && m.shortConv <= 16),
           QString("model.short_conv: expected 0 (none) or a width of 2..16, got %1").arg(m.shortConv));
    p.inRange("model.expand", m.expand);
    p.need(m.init == "default" || m.init == "mimetic", QString("model.init: expected default or mimetic, got \"%1\"").arg(m.init));
    if (m.init == "mimetic")
        p.need(family && family->options.contains("init"),
               QString("model.init: mimetic initialisation is for Mamba's selective mixers (%1), not %2")
                   .arg(familiesWithOption("init").join(", "), m.kind));
    p.inRange("model.mamba_mlp_ratio", m.mambaMlpRatio);
    p.inRange("model.head_dim", m.headDim);
    p.inRange("model.n_groups", m.nGroups);
    p.inRange("model.chunk_size", m.chunkSize);
    if (family && family->headsWidth && m.headDim >= 1) {
        const long long width = family->headsWidth(m);
        p.need(width % m.headDim == 0, QString("model.head_dim: %1 does not divide %2 = %3 into heads")
                                           .arg(m.headDim).arg(family->headsWidthText).arg(width));
        if (family->options.contains("n_groups") && m.nGroups >= 1 && width % m.headDim == 0)
            p.need((width / m.headDim) % m.nGroups == 0,
                   QString("model.n_groups: %1 does not divide the %2 heads (%3 / head_dim)").arg(m.nGroups).arg(width / m.headDim)
                       .arg(family->headsWidthText));
    }
    p.inRange("model.dt_rank", m.dtRank);
}

void validateModel(const ExperimentConfig& c, Problems& p)
{
    const ModelFamily* family = findFamily(c.model.kind);
    p.need(family, QString("model.kind: expected one of %1, got \"%2\"").arg(familyIds().join(", "), c.model.kind));
    validateAttention(c, family, p);
    validateMixers(c.model, family, p);
}

void validateTraining(const ExperimentConfig& c, Problems& p)
{
    const TrainConfig& r = c.train;
    p.inRange("train.steps", r.steps);
    p.inRange("train.batch_size", r.batchSize);
    p.inRealRange("train.lr", r.lr);
    p.need(r.schedule == "cosine" || r.schedule == "linear" || r.schedule == "constant",
           QString("train.schedule: expected \"cosine\", \"linear\" or \"constant\", got \"%1\"").arg(r.schedule));
    p.inRealRange("train.min_lr_ratio", r.minLrRatio);
    p.inRange("train.warmup_steps", r.warmupSteps);
    p.inRealRange("train.weight_decay", r.weightDecay);
    p.inRealRange("train.beta1", r.beta1);
    p.inRealRange("train.beta2", r.beta2);
    p.inRealRange("train.grad_clip", r.gradClip);
    p.inRange("train.eval_every", r.evalEvery);
    p.inRange("train.eval_samples", r.evalSamples);
    p.inRange("train.checkpoint_every", r.checkpointEvery);
    p.inRange("train.log_every", r.logEvery);
    p.inRange("train.mechanism_every", r.mechanismEvery);
    p.inRealRange("train.target_accuracy", r.targetAccuracy);
    p.need(r.targetAccuracy == 0 || !isVectorTask(c.task.kind),
           "train.target_accuracy: in-context-learning tasks report an error, not a string accuracy; set it to 0");
    p.need(r.targetAccuracy == 0 || r.evalEvery > 0, "train.target_accuracy: needs periodic evaluations (train.eval_every > 0)");
    if (r.curriculumDims != 0) {
        p.need(isVectorTask(c.task.kind), "train.curriculum_dims: a curriculum applies to the in-context-learning tasks; set it to 0");
        p.need(r.curriculumDims >= 1 && r.curriculumDims <= c.task.dims,
               QString("train.curriculum_dims: expected 1..task.dims (%1), or 0 for none, got %2").arg(c.task.dims).arg(r.curriculumDims));
        p.need(r.curriculumSteps >= 1, QString("train.curriculum_steps: expected >= 1 with a curriculum, got %1").arg(r.curriculumSteps));
    }
    p.need(r.curriculumSteps >= 0, QString("train.curriculum_steps: expected >= 0, got %1").arg(r.curriculumSteps));
    p.need(r.precision == "fp32" || r.precision == "bf16",
           QString("train.precision: expected \"fp32\" or \"bf16\", got \"%1\"").arg(r.precision));
}

}  // namespace

QStringList validate(const ExperimentConfig& c)
{
    Problems p;
    validateTask(c.task, p);
    validateModel(c, p);
    validateTraining(c, p);
    p.inRange("seed", c.seed);
    return p.list;
}

void applyOverride(ExperimentConfig& c, const QString& assignment)
{
    const qsizetype eq = assignment.indexOf('=');
    if (eq <= 0) throw Error(QString("--set %1: expected key=value, e.g. model.layers=4").arg(assignment));
    const QString key = assignment.left(eq).trimmed();
    const QString text = assignment.mid(eq + 1);
    const QStringList path = key.split('.');
    if (path.size() == 1) {
        bool found = false;
        visitTop(c, [&](const char* name, auto& f) {
            if (key == name) { fromText(key, text, f); found = true; }
        });
        if (!found) throw Error(QString("%1: unknown key (expected name, description, seed or task.*, model.*, train.*)").arg(key));
    } else if (path.size() == 2 && path[0] == "task") {
        sectionOverride(c.task, path[1], key, text);
    } else if (path.size() == 2 && path[0] == "model") {
        sectionOverride(c.model, path[1], key, text);
    } else if (path.size() == 2 && path[0] == "train") {
        sectionOverride(c.train, path[1], key, text);
    } else {
        throw Error(QString("%1: unknown key (expected name, description, seed or task.*, model.*, train.*)").arg(key));
    }
}

void applyOverrides(ExperimentConfig& c, const QStringList& assignments)
{
    for (const QString& a : assignments) applyOverride(c, a);
    const QStringList problems = validate(c);
    if (!problems.isEmpty()) throw Error(problems.join("; "));
}

QString overrideText(const QJsonValue& v)
{
    if (v.isString()) return v.toString();
    if (v.isBool()) return v.toBool() ? "true" : "false";
    if (v.isDouble()) return QString::number(v.toDouble(), 'g', 12);
    if (v.isArray()) {
        QStringList parts;
        for (const auto x : v.toArray()) parts << overrideText(x);
        return parts.join(',');
    }
    return QString::fromUtf8(QJsonDocument(QJsonArray{v}).toJson(QJsonDocument::Compact)).mid(1).chopped(1);
}

QStringList overridesBetween(const ExperimentConfig& from, const ExperimentConfig& to)
{
    QStringList out;
    if (from.seed != to.seed) out << QString("seed=%1").arg(to.seed);
    auto section = [&out](const QString& prefix, const auto& a, const auto& b) {
        const QJsonObject ja = sectionToJson(a), jb = sectionToJson(b);
        for (const QString& name : fieldNames(a))  // in field order, as the files list them
            if (ja[name] != jb[name]) out << QString("%1.%2=%3").arg(prefix, name, overrideText(jb[name]));
    };
    section("task", from.task, to.task);
    section("model", from.model, to.model);
    section("train", from.train, to.train);
    return out;
}

QString describeChanged(const QString& description, const QStringList& changes)
{
    if (changes.isEmpty()) return description;
    qsizetype measured = -1;  // the presets' and sweeps' words for their outcome
    for (const char* word : {"Measured", "Calibrated"})
        if (const qsizetype at = description.indexOf(word); at >= 0 && (measured < 0 || at < measured)) measured = at;
    const QString what = (measured < 0 ? description : description.left(measured)).trimmed();
    return QString("%1%2Changed: %3%4.")
        .arg(what, what.isEmpty() ? QString() : QString(" "), changes.join(", "),
             measured < 0 ? QString() : QString("; the measured outcome of the full description is for its own settings"));
}

QString describeModel(const ModelConfig& m)
{
    const ModelFamily* f = findFamily(m.kind);
    return f ? f->describe(m) : QString("unknown model kind \"%1\"").arg(m.kind);
}

QString describeTask(const TaskConfig& t)
{
    const TaskInfo* info = findTask(t.kind);
    return info ? QString("%1 (%2 %3-%4)").arg(info->label, info->difficulty).arg(t.minLen).arg(t.maxLen)
                : QString("unknown task kind \"%1\"").arg(t.kind);
}

std::vector<int> evaluationLengths(const TaskConfig& t)
{
    std::vector<int> lengths = t.evalLengths;
    lengths.push_back(t.maxLen);
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    return lengths;
}

std::vector<int> parseLengthList(const QString& text, const QString& field)
{
    std::vector<int> lengths;
    static const QRegularExpression separators("[,\\s]+");
    for (const QString& part : text.split(separators, Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = part.toInt(&ok);
        if (!ok || n < 1 || n > kMaxLength)
            throw Error(QString("%1: '%2' is not a length in 1..%3 (expected e.g. 10,20,40)").arg(field, part).arg(kMaxLength));
        lengths.push_back(n);
    }
    if (lengths.empty()) throw Error(QString("%1: expected at least one length, e.g. 10,20,40").arg(field));
    return lengths;
}

ExperimentConfig loadConfigFile(const QString& path)
{
    const QJsonObject doc = readJsonObject(path, "the experiment config");
    // A run folder's config.json wraps the experiment with the environment it ran in.
    if (doc.contains("parrotscope_run")) {
        const QJsonValue e = doc.value("experiment");
        if (!e.isObject()) throw Error(QString("%1: run config has no \"experiment\" object").arg(path));
        return experimentFromJson(e.toObject(), path);
    }
    return experimentFromJson(doc, path);
}

}  // namespace parrot
