// The commands that describe what the app has and holds: `presets`, `models`, `tasks`, `sample`
// (a task's generated examples), `config` (a resolved configuration, or every numeric setting)
// and `info` (what a checkpoint file is).
#include "cli.h"

#include "base/configfields.h"
#include "base/error.h"
#include "base/experiments/sweep.h"
#include "base/io/checkpointinfo.h"
#include "base/io/jsonfile.h"
#include "base/modelcatalog.h"
#include "base/presets.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "core/model.h"
#include "args.h"
#include "clicommon.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cmath>
#include <random>

namespace parrot {

int cmdPresets(Args& a)
{
    a.done();
    for (const QString& name : presetNames()) {
        const ExperimentConfig c = loadPreset(name);
        // first sentence; "et al." does not end one
        static const QRegularExpression sentenceEnd("(?<!al)\\.\\s");
        const QRegularExpressionMatch m = sentenceEnd.match(c.description);
        const QString first = m.hasMatch() ? c.description.left(m.capturedStart() + 1) : c.description;
        out() << QString("%1  %2").arg(name, -18).arg(first) << (name == defaultPresetName() ? "  [default]" : "") << "\n";
    }
    out() << "\nsweeps (parrotscope sweep --preset NAME --out DIR):\n";
    for (const QString& name : sweepPresetNames()) {
        const QJsonObject sweep = readJsonObject(sweepPresetFile(name), "a bundled sweep preset");
        out() << QString("%1  %2\n").arg(name, -22).arg(sweep["description"].toString());
    }
    return 0;
}

int cmdModels(Args& a)
{
    const bool json = a.flag("--json");
    a.done();
    const QJsonArray catalog = modelCatalogJson();
    if (json) {
        out() << QJsonDocument(catalog).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto v : catalog) {
        const QJsonObject f = v.toObject();
        out() << QString("%1  %2\n").arg(f["kind"].toString(), -12).arg(f["description"].toString());
        QStringList opts;
        const QJsonObject o = f["options"].toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            opts << QString("%1=%2").arg(it.key(), QString::fromUtf8(QJsonDocument(QJsonArray{it.value()}).toJson(QJsonDocument::Compact)).mid(1).chopped(1));
        out() << QString(14, ' ') << "options: " << opts.join(" ") << "\n";
        for (const auto p : f["positions"].toArray())
            out() << QString(14, ' ') << QString("positions=%1: %2\n").arg(p.toObject()["positions"].toString(), p.toObject()["description"].toString());
    }
    out() << "choose one with --set model.kind=KIND (and its options with --set model.OPTION=VALUE)\n";
    return 0;
}

int cmdTasks(Args& a)
{
    const bool json = a.flag("--json");
    a.done();
    QJsonArray all;
    for (const TaskInfo& t : taskCatalog()) {
        ExperimentConfig c;  // the task's own laptop-scale defaults, as the window loads them
        c.task = taskDefaults(t.id);
        const QJsonObject defaultsJson = toJson(c)["task"].toObject();
        QJsonObject options;
        QStringList keys = {"min_len", "max_len", "context_len", "eval_lengths", "eval_samples"};
        if (!t.characters && !t.vectors) keys.prepend("vocab_size");
        keys += t.options;
        for (const QString& k : keys) options.insert(k, defaultsJson[k]);
        all.append(QJsonObject{{"kind", t.id}, {"label", t.label}, {"description", t.description},
                               {"difficulty", t.difficulty}, {"character_vocabulary", t.characters},
                               {"inputs", t.vectors ? "vectors" : "tokens"}, {"options", options}});
    }
    if (json) {
        out() << QJsonDocument(all).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto v : all) {
        const QJsonObject t = v.toObject();
        out() << QString("%1  %2\n").arg(t["kind"].toString(), -15).arg(t["description"].toString());
        QStringList opts;
        for (const QString& k : t["options"].toObject().keys())
            if (findTask(t["kind"].toString())->options.contains(k) || k == "vocab_size")
                opts << QString("%1=%2").arg(k, QString::fromUtf8(QJsonDocument(QJsonArray{t["options"].toObject()[k]}).toJson(QJsonDocument::Compact)).mid(1).chopped(1));
        out() << QString(17, ' ') << "min_len/max_len count: " << t["difficulty"].toString()
              << (opts.isEmpty() ? QString() : "; options: " + opts.join(" ")) << "\n";
    }
    out() << "choose one with --set task.kind=KIND; parrotscope sample --task KIND shows examples\n";
    return 0;
}

namespace {

QString roleName(Role r)
{
    switch (r) {
    case Role::Pad: return "pad";
    case Role::Prompt: return "prompt";
    case Role::Separator: return "separator";
    case Role::Query: return "query";
    case Role::Answer: return "answer";
    case Role::End: return "end";
    }
    return "?";
}

// In-context prompts: one line per pair, x then y (scored pairs marked), or JSON.
int printVectorSamples(const TaskConfig& t, int count, int length, std::mt19937_64& rng, bool json)
{
    const std::unique_ptr<IclTask> task = IclTask::create(t);
    const int pairs = length > 0 ? length : std::uniform_int_distribution<int>(t.minLen, t.maxLen)(rng);
    const std::vector<IclPrompt> ps = task->prompts(count, pairs, rng);
    auto numbers = [](const float* v, int n) {
        QStringList s;
        for (int i = 0; i < n; ++i) s << QString::number(v[i], 'f', 2);
        return s;
    };
    QJsonArray all;
    for (const IclPrompt& p : ps) {
        if (json) {
            QJsonArray xs, ys, scored;
            for (int i = 0; i < p.pairs; ++i) {
                QJsonArray x, y;
                for (const QString& v : numbers(&p.x[size_t(i) * p.d], p.d)) x.append(v.toDouble());
                for (const QString& v : numbers(&p.y[size_t(i) * p.dOut], p.dOut)) y.append(v.toDouble());
                xs.append(x);
                ys.append(y);
                scored.append(bool(p.scored[size_t(i)]));
            }
            all.append(QJsonObject{{"x", xs}, {"y", ys}, {"scored", scored}});
            continue;
        }
        out() << QString("prompt of %1 pairs (d %2; * = scored: predicted from the pairs before it)\n").arg(p.pairs).arg(p.d);
        for (int i = 0; i < p.pairs; ++i)
            out() << QString("  %1 %2  x = [%3]  y = %4\n").arg(p.scored[size_t(i)] ? "*" : " ").arg(i + 1, 3)
                         .arg(numbers(&p.x[size_t(i) * p.d], p.d).join(" "))
                         .arg(p.dOut == 1 ? numbers(&p.y[size_t(i)], 1).join("") : "[" + numbers(&p.y[size_t(i) * p.dOut], p.dOut).join(" ") + "]");
    }
    if (json) out() << QJsonDocument(all).toJson(QJsonDocument::Compact) << "\n";
    return 0;
}

}  // namespace

int cmdSample(Args& a)
{
    const QString taskName = a.value("--task");
    ExperimentConfig c;
    if (!taskName.isNull()) {
        if (!a.value("--preset").isNull() || !a.value("--config").isNull())
            throw Error("sample: give --task, or --preset / --config, not both");
        if (!findTask(taskName)) throw Error(QString("--task: unknown task \"%1\" (see parrotscope tasks)").arg(taskName));
        c = loadPreset(defaultPresetName());
        c.task = taskDefaults(taskName);
        applyOverrides(c, a.values("--set"));
    } else {
        c = experimentFrom(a);
    }
    const int count = a.integer("--count");
    const int length = a.integer("--length");
    const int seed = a.integer("--seed");
    const bool json = a.flag("--json");
    a.done();
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    if (isVectorTask(c.task.kind)) return printVectorSamples(c.task, count, length, rng, json);
    const std::unique_ptr<TokenTask> task = TokenTask::create(c.task);
    const bool characters = findTask(c.task.kind)->characters;
    QJsonArray all;
    for (int i = 0; i < count; ++i) {
        const Example e = length > 0 ? task->example(length, rng) : task->example(rng);
        if (json) {
            QJsonArray ids, text, roles;
            for (size_t k = 0; k < e.tokens.size(); ++k) {
                ids.append(e.tokens[k]);
                text.append(task->text(e.tokens[k]));
                roles.append(roleName(e.roles[k]));
            }
            all.append(QJsonObject{{"tokens", ids}, {"text", text}, {"roles", roles}});
            continue;
        }
        // The example, then the answer alone: letters spaced, characters run together.
        const QString sep = characters ? "" : " ";
        QStringList whole, answer;
        for (size_t k = 0; k < e.tokens.size(); ++k) {
            whole << task->text(e.tokens[k]);
            if (e.roles[k] == Role::Answer) answer << task->text(e.tokens[k]);
        }
        auto plain = [&](const QStringList& parts) { return parts.join(sep).replace(QString::fromUtf8("\u2423"), " "); };
        out() << plain(whole) << "\n" << "  answer: " << plain(answer) << "\n";
    }
    if (json) out() << QJsonDocument(all).toJson(QJsonDocument::Compact) << "\n";
    return 0;
}

namespace {

// The numeric settings as base/configfields.h defines them, with the defaults of a config that
// sets nothing: the reference for --set and config files.
int describeConfig(bool json)
{
    const QJsonObject defaults = toJson(ExperimentConfig{});
    const auto defaultOf = [&](const QString& key) {
        QJsonValue v = defaults;
        for (const QString& part : key.split('.')) v = v.toObject().value(part);
        return v;
    };
    QJsonArray fields;
    for (const IntField& f : intFieldTable()) {
        QJsonObject o{{"key", f.key}, {"label", f.label}, {"type", "integer"}, {"min", double(f.lo)}, {"tip", f.tip},
                      {"default", defaultOf(f.key)}};
        if (f.hi != kUnbounded) o["max"] = double(f.hi);
        if (*f.zero) o["zero"] = f.zero;
        fields.append(o);
    }
    for (const RealField& f : realFieldTable()) {
        QJsonObject o{{"key", f.key}, {"label", f.label}, {"type", "real"}, {"min", f.lo}, {"min_excluded", f.loOpen},
                      {"range", f.expected}, {"tip", f.tip}, {"default", defaultOf(f.key)}};
        if (std::isfinite(f.hi)) {
            o["max"] = f.hi;
            o["max_excluded"] = f.hiOpen;
        }
        fields.append(o);
    }
    if (json) {
        out() << QJsonDocument(QJsonObject{{"fields", fields}}).toJson(QJsonDocument::Indented);
        return 0;
    }
    out() << "Numeric settings (--set KEY=VALUE, or the config file's JSON); the others are listed by\n"
             "`parrotscope models` and `parrotscope tasks`.\n\n";
    for (const QJsonValue& v : fields) {
        const QJsonObject o = v.toObject();
        QString range = o["type"].toString() == "real" ? o["range"].toString()
                        : o.contains("max") ? QString("%1..%2").arg(o["min"].toInteger()).arg(o["max"].toInteger())
                                            : QString(">= %1").arg(o["min"].toInteger());
        if (o.contains("zero")) range += " (" + o["zero"].toString() + ")";
        const QJsonValue d = o["default"];
        QStringList items;
        for (const QJsonValue& x : d.toArray()) items << QString::number(x.toDouble(), 'g', 10);
        const QString shown = d.isDouble() ? QString::number(d.toDouble(), 'g', 10) : d.isArray() ? items.join(',') : d.toVariant().toString();
        out() << QString("%1  %2, %3; default %4\n    %5\n").arg(o["key"].toString(), -26).arg(o["label"].toString(), range, shown,
                                                                                                 o["tip"].toString());
    }
    return 0;
}

}  // namespace

int cmdConfig(Args& a)
{
    if (a.flag("--describe")) {
        const bool json = a.flag("--json");
        a.done();
        return describeConfig(json);
    }
    const ExperimentConfig c = experimentFrom(a);
    a.done();
    out() << QJsonDocument(toJson(c)).toJson(QJsonDocument::Indented);
    return 0;
}

int cmdInfo(Args& a)
{
    const bool json = a.flag("--json");
    const QString path = a.positional();
    a.done();
    if (path.isEmpty()) throw Error("info: a checkpoint FILE is required");
    CheckpointInfo info = inspectCheckpoint(path);
    if (info.runnable) {  // it claims to be ours: confirm the app can build and load it
        try {
            const Model m = Model::load(path);
            if (info.architecture == "parrotscope") info.recognised = m.summary();
        } catch (const Error& e) {
            info.runnable = false;
            info.problem = e.message();
        }
    }
    if (json) {
        out() << QJsonDocument(info.toJson()).toJson(QJsonDocument::Indented);
    } else {
        out() << path << "\n  format: " << info.format << "\n  recognised as: " << (info.recognised.isEmpty() ? "-" : info.recognised) << "\n";
        out() << "  runs in the app: " << (info.runnable ? "yes" : "no") << "\n";
        if (!info.problem.isEmpty()) out() << "  why not: " << info.problem << "\n";
        if (!info.tensors.empty()) {
            out() << QString("  %1 tensors, %2 bytes:\n").arg(info.tensors.size()).arg(info.totalBytes);
            for (const TensorSummary& t : info.tensors) {
                QStringList shape;
                for (int64_t d : t.shape) shape << QString::number(d);
                out() << QString("    %1  %2 [%3]").arg(t.name, -40).arg(t.dtype, -4).arg(shape.join(", "));
                if (t.floating) out() << QString("  mean %1 std %2 min %3 max %4").arg(t.mean, 0, 'g', 3).arg(t.std, 0, 'g', 3).arg(t.min, 0, 'g', 3).arg(t.max, 0, 'g', 3);
                out() << "\n";
            }
        }
    }
    return info.problem.isEmpty() ? 0 : 2;
}

}  // namespace parrot
