#include "base/experiments/sweep.h"

#include "base/devicechoice.h"
#include "base/error.h"
#include "base/figurecatalog.h"
#include "base/io/jsonfile.h"
#include "base/io/runfolder.h"
#include "base/io/textfile.h"
#include "base/modelcatalog.h"
#include "base/presets.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace parrot {

namespace {

QStringList overridesOf(const QJsonObject& set, const QString& where)
{
    QStringList out;
    for (auto it = set.begin(); it != set.end(); ++it) {
        if (it.value().isObject() || it.value().isNull())
            throw Error(QString("%1.%2: expected a number, string, boolean or list").arg(where, it.key()));
        out << it.key() + "=" + overrideText(it.value());
    }
    return out;
}

// A file-name-safe token for a value.
QString token(const QString& s)
{
    QString t = s;
    t.replace(QRegularExpression("[^A-Za-z0-9.]+"), "-");
    return t;
}

using Variants = std::vector<std::pair<QString, QStringList>>;        // file-name token, overrides
using Axes = std::vector<std::pair<QString, std::vector<QString>>>;   // key, values

// The experiment a sweep file's runs start from: its one "preset", "experiment" or "config".
ExperimentConfig sweepBase(const QJsonObject& o, const QString& file)
{
    static const QSet<QString> known = {"name", "description", "preset", "experiment", "config", "set", "variants", "grid", "figure", "thorough", "scales", "minutes"};
    for (const QString& k : o.keys())
        if (!known.contains(k)) throw Error(QString("%1: %2: unknown key (expected one of %3)").arg(file, k, QStringList(known.values()).join(", ")));
    const int bases = int(o.contains("preset")) + int(o.contains("experiment")) + int(o.contains("config"));
    if (bases != 1) throw Error(QString("%1: give exactly one of \"preset\", \"experiment\" or \"config\"").arg(file));
    try {
        if (o.contains("preset")) return loadPreset(o["preset"].toString());
        if (o.contains("config")) return loadConfigFile(QFileInfo(file).dir().filePath(o["config"].toString()));
        return experimentFromJson(o["experiment"].toObject(), "experiment");
    } catch (const Error& e) {
        throw Error(QString("%1: %2").arg(file, e.message()));
    }
}

// One axis of named variants, or a single unnamed one.
Variants variantsOf(const QJsonObject& o, const QString& file)
{
    Variants variants;
    for (const auto v : o["variants"].toArray()) {
        const QJsonObject vo = v.toObject();
        const QString label = vo["label"].toString();
        if (label.isEmpty()) throw Error(QString("%1: variants: every variant needs a \"label\"").arg(file));
        variants.push_back({token(label), overridesOf(vo["set"].toObject(), "variants." + label + ".set")});
    }
    if (variants.empty()) variants.push_back({QString(), {}});
    return variants;
}

// A thorough sweep's own axes replace the file's seed and learning-rate ones.
Axes gridAxes(const QJsonObject& o, const QString& file, bool thorough)
{
    Axes axes;
    const QJsonObject grid = o["grid"].toObject();
    for (auto it = grid.begin(); it != grid.end(); ++it) {
        if (thorough && (it.key() == "seed" || it.key() == "train.lr")) continue;
        if (!it.value().isArray() || it.value().toArray().isEmpty())
            throw Error(QString("%1: grid.%2: expected a non-empty list of values").arg(file, it.key()));
        std::vector<QString> values;
        for (const auto v : it.value().toArray()) values.push_back(overrideText(v));
        axes.push_back({it.key(), values});
    }
    return axes;
}

// The run of one variant (`label`, its `sets`) at one grid point (`index` into each axis): its
// overrides after the sweep's `common` ones, and its name from the variant and the axes that vary.
SweepRun namedRun(const QStringList& common, const QString& label, const QStringList& sets, const Axes& axes,
                  const std::vector<size_t>& index)
{
    SweepRun run;
    QStringList nameParts;
    if (!label.isEmpty()) nameParts << label;
    run.overrides = common + sets;
    for (size_t a = 0; a < axes.size(); ++a) {
        const QString& key = axes[a].first;
        const QString& value = axes[a].second[index[a]];
        run.overrides << key + "=" + value;
        if (axes[a].second.size() > 1)  // "seed-2", "lr-0.003"; a grid of kinds by the kind alone ("mamba")
            nameParts << (key.endsWith(".kind") ? token(value) : token(key.section('.', -1)) + "-" + token(value));
    }
    run.name = nameParts.isEmpty() ? QString("run") : nameParts.join('_');
    return run;
}

// A named run's config (`base` with its overrides) and where it is written.
void placeRun(SweepRun& run, const SweepPlan& plan, const ExperimentConfig& base, const QString& file)
{
    run.config = base;
    try {
        applyOverrides(run.config, run.overrides);
    } catch (const Error& e) {
        throw Error(QString("%1: run %2: %3").arg(file, run.name, e.message()));
    }
    run.config.name = plan.name + "/" + run.name;
    run.configPath = QDir(plan.outDir).filePath("configs/" + run.name + ".json");
    run.runDir = QDir(plan.outDir).filePath("runs/" + run.name);
}

std::vector<double> ratesOf(const QJsonValue& v, const QString& where)
{
    std::vector<double> rates;
    for (const auto r : v.toArray()) {
        if (!r.isDouble() || !(r.toDouble() > 0) || r.toDouble() > 10)
            throw Error(QString("%1: expected learning rates in (0, 10], got %2").arg(where, overrideText(r)));
        rates.push_back(r.toDouble());
    }
    if (!v.isArray() || rates.empty()) throw Error(QString("%1: expected a non-empty list of learning rates").arg(where));
    if (rates.size() > 16) throw Error(QString("%1: %2 rates; at most 16").arg(where).arg(rates.size()));
    std::sort(rates.begin(), rates.end());
    rates.erase(std::unique(rates.begin(), rates.end()), rates.end());
    return rates;
}

// The file's "thorough" grid over zoologyGrid()'s defaults.
ThoroughGrid thoroughGridOf(const QJsonObject& o, const QString& file)
{
    ThoroughGrid g = zoologyGrid();
    const QJsonObject t = o["thorough"].toObject();
    if (o.contains("thorough") && !o["thorough"].isObject()) throw Error(QString("%1: thorough: expected an object").arg(file));
    for (const QString& k : t.keys())
        if (k != "lr" && k != "lr_by_kind" && k != "seeds")
            throw Error(QString("%1: thorough.%2: unknown key (expected lr, lr_by_kind, seeds)").arg(file, k));
    if (t.contains("lr")) g.lr = ratesOf(t["lr"], file + ": thorough.lr");
    const QJsonObject byKind = t["lr_by_kind"].toObject();
    for (auto it = byKind.begin(); it != byKind.end(); ++it) {
        if (!findFamily(it.key())) throw Error(QString("%1: thorough.lr_by_kind.%2: no such model family").arg(file, it.key()));
        g.lrByKind[it.key()] = ratesOf(it.value(), file + ": thorough.lr_by_kind." + it.key());
    }
    if (t.contains("seeds")) {
        g.seeds.clear();
        for (const auto s : t["seeds"].toArray()) {
            if (!s.isDouble() || s.toDouble() < 0 || s.toDouble() != std::floor(s.toDouble()))
                throw Error(QString("%1: thorough.seeds: expected whole numbers >= 0, got %2").arg(file, overrideText(s)));
            if (std::find(g.seeds.begin(), g.seeds.end(), s.toInt()) == g.seeds.end()) g.seeds.push_back(s.toInt());
        }
        if (g.seeds.empty()) throw Error(QString("%1: thorough.seeds: expected a non-empty list").arg(file));
        if (g.seeds.size() > 16) throw Error(QString("%1: thorough.seeds: %2 seeds; at most 16").arg(file).arg(g.seeds.size()));
    }
    return g;
}

struct Scale {
    QString name, description;
    QStringList set;                    // over every run
    QMap<QString, QStringList> variants;  // variant token -> over its own
    QStringList only;                   // the variants (tokens) it keeps; empty: all
    QJsonObject grid;                   // axes that replace the file's of the same key
};

// The file's scale `name` ("" or "laptop": none). Throws parrot::Error naming an unknown scale or a bad key.
Scale scaleOf(const QJsonObject& o, const QString& file, const QString& name)
{
    const QJsonObject scales = o["scales"].toObject();
    for (auto it = scales.begin(); it != scales.end(); ++it) {
        for (const QString& k : it.value().toObject().keys())
            if (k != "description" && k != "set" && k != "variants" && k != "only" && k != "grid")
                throw Error(QString("%1: scales.%2.%3: unknown key (expected description, set, variants, only, grid)").arg(file, it.key(), k));
    }
    if (name.isEmpty() || name == "laptop") return {};
    if (!scales.contains(name))
        throw Error(QString("%1: no scale \"%2\" (%3)").arg(file, name,
                        scales.isEmpty() ? QString("this sweep has only its own") : "it has laptop, " + scales.keys().join(", ")));
    const QJsonObject s = scales[name].toObject();
    Scale out{name, s["description"].toString(), overridesOf(s["set"].toObject(), "scales." + name + ".set"), {}, {}, s["grid"].toObject()};
    const QJsonObject variants = s["variants"].toObject();
    for (auto it = variants.begin(); it != variants.end(); ++it)
        out.variants[token(it.key())] = overridesOf(it.value().toObject(), "scales." + name + ".variants." + it.key());
    for (const auto v : s["only"].toArray()) out.only << token(v.toString());
    return out;
}

// A thorough sweep's runs of one model (`run`, placed): one per rate and seed.
std::vector<SweepRun> thoroughRuns(const SweepRun& run, const ThoroughGrid& g)
{
    std::vector<SweepRun> out;
    for (double lr : g.ratesFor(run.config.model.kind))
        for (int seed : g.seeds) {
            SweepRun r = run;
            r.model = run.name;
            const QString rate = overrideText(QJsonValue(lr));
            r.name = QString("%1_lr-%2_seed-%3").arg(run.name, token(rate)).arg(seed);
            r.overrides << "train.lr=" + rate << QString("seed=%1").arg(seed);
            out.push_back(r);
        }
    return out;
}

// The line a thorough sweep's description ends with: its runs and, from the file's "minutes", its time.
QString thoroughCost(const SweepPlan& plan, int plainRuns)
{
    const double factor = double(plan.runs.size()) / plainRuns;
    QString s = QString("\n\nThorough: each model at %1, %2 runs, %3x the plain sweep's %4")
                    .arg(plan.thorough->describe()).arg(plan.runs.size()).arg(factor, 0, 'g', 3).arg(plainRuns);
    if (plan.minutes > 0) {
        const double minutes = plan.minutes * factor;
        s += QString(": about %1 on 2 cores with 2 jobs (the plain sweep took %2 min)")
                 .arg(minutes >= 90 ? QString("%1 h").arg(minutes / 60, 0, 'f', 1) : QString("%1 min").arg(minutes, 0, 'f', 0))
                 .arg(plan.minutes, 0, 'g', 3);
    }
    return s + ".";
}

QJsonObject thoroughJson(const ThoroughGrid& g)
{
    auto list = [](const std::vector<double>& v) {
        QJsonArray a;
        for (double x : v) a.append(x);
        return a;
    };
    QJsonObject byKind;
    for (const auto& [kind, rates] : g.lrByKind) byKind[kind] = list(rates);
    QJsonArray seeds;
    for (int s : g.seeds) seeds.append(s);
    return QJsonObject{{"lr", list(g.lr)}, {"lr_by_kind", byKind}, {"seeds", seeds}};
}

}  // namespace

const std::vector<double>& ThoroughGrid::ratesFor(const QString& kind) const
{
    const auto it = lrByKind.find(kind);
    return it != lrByKind.end() ? it->second : lr;
}

QString ThoroughGrid::describe() const
{
    auto list = [](const std::vector<double>& v) {
        QStringList s;
        for (double x : v) s << QString::number(x, 'g', 3);
        return s.join(", ");
    };
    QStringList kinds;
    for (const auto& [kind, rates] : lrByKind) kinds << QString("%1: %2").arg(kind, list(rates));
    QStringList seedList;
    for (int s : seeds) seedList << QString::number(s);
    return QString("learning rates %1%2 x seeds %3")
        .arg(list(lr), kinds.isEmpty() ? QString() : " (" + kinds.join("; ") + ")", seedList.join(", "));
}

ThoroughGrid zoologyGrid() { return ThoroughGrid{{0.001, 0.003, 0.01, 0.03}, {}, {1, 2, 3}}; }

SweepPlan loadSweep(const QString& file, const QString& outDir, const SweepOptions& options)
{
    const bool thorough = options.thorough;
    const QJsonObject o = readJsonObject(file, "the sweep file");
    const ExperimentConfig base = sweepBase(o, file);
    const Scale scale = scaleOf(o, file, options.scale);
    const QStringList common = overridesOf(o["set"].toObject(), "set") + scale.set;
    Variants variants = variantsOf(o, file);
    for (auto& [label, sets] : variants) sets += scale.variants.value(label);
    if (!scale.only.isEmpty()) {
        for (const QString& kept : scale.only)
            if (std::none_of(variants.begin(), variants.end(), [&](const auto& v) { return v.first == kept; }))
                throw Error(QString("%1: scales.%2.only: no variant %3").arg(file, scale.name, kept));
        std::erase_if(variants, [&](const auto& v) { return !scale.only.contains(v.first); });
    }
    QJsonObject withScale = o;
    QJsonObject axesOfFile = o["grid"].toObject();
    for (auto it = scale.grid.begin(); it != scale.grid.end(); ++it) axesOfFile[it.key()] = it.value();
    withScale["grid"] = axesOfFile;
    const Axes axes = gridAxes(withScale, file, thorough);
    const ThoroughGrid grid = thoroughGridOf(o, file);  // read, so a bad one is named, in either mode

    SweepPlan plan;
    plan.name = o["name"].toString(QFileInfo(file).completeBaseName());
    plan.description = scale.description.isEmpty() ? o["description"].toString() : scale.description;
    plan.figure = o["figure"].toString("length");
    plan.source = file.startsWith(":") ? file : QFileInfo(file).absoluteFilePath();
    plan.scale = scale.name;
    plan.scales = o["scales"].toObject().keys();
    plan.minutes = scale.name.isEmpty() ? o["minutes"].toDouble() : 0;  // a scale says its own cost
    checkFigure(plan.figure, SweepFigure, file + ": figure");
    plan.outDir = QDir(outDir).absolutePath();
    if (thorough) plan.thorough = grid;
    int plainRuns = 0;
    QSet<QString> names;
    for (const auto& [label, variantSets] : variants) {
        std::vector<size_t> index(axes.size(), 0);
        while (true) {
            SweepRun run = namedRun(common, label, variantSets, axes, index);
            if (names.contains(run.name)) throw Error(QString("%1: two runs would both be named %2").arg(file, run.name));
            names.insert(run.name);
            placeRun(run, plan, base, file);
            if (!thorough) {
                plan.runs.push_back(run);
            } else {
                for (SweepRun& r : thoroughRuns(run, grid)) {
                    placeRun(r, plan, base, file);
                    plan.runs.push_back(r);
                }
                ++plainRuns;
            }
            // next grid point
            size_t a = 0;
            while (a < axes.size() && ++index[a] == axes[a].second.size()) index[a++] = 0;
            if (a == axes.size()) break;
        }
    }
    if (thorough && plainRuns > 0) {  // the plain sweep also ran each model at its file's seeds and rates
        for (const QString& k : {QString("seed"), QString("train.lr")})
            plainRuns *= std::max<int>(1, int(axesOfFile[k].toArray().size()));
        plan.description += thoroughCost(plan, plainRuns);
    }
    return plan;
}

void writeSweepFiles(const SweepPlan& plan)
{
    QDir out(plan.outDir);
    if (!out.mkpath("configs") || !out.mkpath("runs")) throw Error(QString("%1: cannot create the sweep folder").arg(plan.outDir));
    for (const SweepRun& r : plan.runs) {
        // A config already written as it is now is left alone: each QSaveFile commit waits for the
        // disk (fsync), and a sweep run again rewrote every one (the window's Run waited on them).
        const QByteArray json = QJsonDocument(toJson(r.config)).toJson();
        QFile existing(r.configPath);
        if (existing.open(QIODevice::ReadOnly) && existing.readAll() == json) continue;
        writeFileAtomically(r.configPath, json, "a run's config");
    }
    writeSweepIndex(plan);
}

void writeSweepIndex(const SweepPlan& plan)
{
    QDir out(plan.outDir);
    QJsonArray runs;
    for (const SweepRun& r : plan.runs) {
        QJsonArray overrides;
        for (const QString& s : r.overrides) overrides.append(s);
        QJsonObject run{{"name", r.name}, {"dir", "runs/" + r.name}, {"config", "configs/" + r.name + ".json"},
                        {"overrides", overrides}, {"status", runStatus(r.runDir)}};
        if (!r.model.isEmpty()) run["model"] = r.model;
        runs.append(run);
    }
    QJsonObject doc{{"parrotscope_sweep", 1}, {"name", plan.name}, {"description", plan.description},
                    {"figure", plan.figure}, {"source", plan.source},
                    {"set", QJsonArray::fromStringList(plan.overrides)}, {"runs", runs}};
    if (plan.thorough) doc["thorough"] = thoroughJson(*plan.thorough);
    if (!plan.scale.isEmpty()) doc["scale"] = plan.scale;
    // a submitted sweep's Slurm jobs (experiments/slurm.h) stay recorded
    if (const auto before = readJsonObjectIfValid(out.filePath("index.json")); before && before->contains("slurm"))
        doc["slurm"] = before->value("slurm");
    writeFileAtomically(out.filePath("index.json"), QJsonDocument(doc).toJson(), "the sweep's index");
}

void overrideSweep(SweepPlan& plan, const QStringList& overrides)
{
    for (SweepRun& run : plan.runs) {
        const QString name = run.config.name;
        try {
            applyOverrides(run.config, overrides);
        } catch (const Error& e) {
            throw Error(QString("run %1: %2").arg(run.name, e.message()));
        }
        run.config.name = name;
        run.overrides += overrides;
    }
    plan.overrides += overrides;
}

QStringList quickLookOverrides(const SweepPlan& plan, int divisor)
{
    if (divisor <= 1 || plan.runs.empty()) return {};
    const TrainConfig& first = plan.runs.front().config.train;
    for (const SweepRun& r : plan.runs) {
        const TrainConfig& t = r.config.train;
        if (t.steps != first.steps || t.warmupSteps != first.warmupSteps || t.evalEvery != first.evalEvery
            || t.checkpointEvery != first.checkpointEvery)
            throw Error(QString("quick look: the runs differ in train.steps or its intervals (%1: %2 steps, %3: %4); "
                                "shrink this sweep with --set instead")
                            .arg(plan.runs.front().name).arg(first.steps).arg(r.name).arg(t.steps));
    }
    // The intervals shrink with the steps but stay at least 1; one of 0 (never) stays as it is, unnamed,
    // so the description lists only what changed.
    auto scaled = [divisor](int n) { return std::max(1, int(std::lround(double(n) / divisor))); };
    QStringList sets{QString("train.steps=%1").arg(scaled(first.steps))};
    if (first.warmupSteps > 0) sets << QString("train.warmup_steps=%1").arg(first.warmupSteps / divisor);
    if (first.evalEvery > 0) sets << QString("train.eval_every=%1").arg(scaled(first.evalEvery));
    if (first.checkpointEvery > 0) sets << QString("train.checkpoint_every=%1").arg(scaled(first.checkpointEvery));
    return sets;
}

std::optional<SweepPlan> readSweepIndex(const QString& outDir)
{
    const QString path = QDir(outDir).filePath("index.json");
    if (!QFileInfo::exists(path)) return std::nullopt;  // a folder no sweep has written to yet
    const QJsonObject o = readJsonObject(path, "the sweep's index");
    if (!o.contains("parrotscope_sweep")) return std::nullopt;
    SweepPlan plan;
    plan.name = o["name"].toString();
    plan.description = o["description"].toString();
    plan.figure = o["figure"].toString("length");
    plan.source = o["source"].toString();
    plan.scale = o["scale"].toString();
    plan.outDir = QDir(outDir).absolutePath();
    for (const auto v : o["set"].toArray()) plan.overrides << v.toString();
    if (o["thorough"].isObject()) {
        try {
            plan.thorough = thoroughGridOf(o, path);
        } catch (const Error&) {  // a damaged grid: the runs still name their models
            plan.thorough = zoologyGrid();
        }
    }
    for (const auto v : o["runs"].toArray()) {
        SweepRun r;
        r.name = v.toObject()["name"].toString();
        r.model = v.toObject()["model"].toString();
        for (const auto s : v.toObject()["overrides"].toArray()) r.overrides << s.toString();
        if (r.name.isEmpty() || r.name.contains('/') || r.name.startsWith('.')) continue;  // only folders under runs/
        r.runDir = QDir(plan.outDir).filePath("runs/" + r.name);
        r.configPath = QDir(plan.outDir).filePath("configs/" + r.name + ".json");
        plan.runs.push_back(r);
    }
    return plan;
}

QStringList sweepPresetNames()
{
    QStringList names;
    for (const QString& f : QDir(":/sweeps").entryList({"*.json"}, QDir::Files, QDir::Name)) names << QFileInfo(f).completeBaseName();
    return names;
}

QString sweepPresetFile(const QString& name)
{
    const QString file = ":/sweeps/" + name + ".json";
    if (!QFileInfo::exists(file))
        throw Error(QString("unknown sweep preset '%1' (bundled: %2)").arg(name, sweepPresetNames().join(", ")));
    return file;
}

bool sweepRunResumable(const SweepRun& run)
{
    const QString status = runStatus(run.runDir);
    if ((!status.isEmpty() && status != "cancelled") || !QFileInfo::exists(resumeFilePath(run.runDir))) return false;
    const auto made = readJsonObjectIfValid(QDir(run.runDir).filePath("config.json"));
    return made && made->value("experiment").toObject() == toJson(run.config);
}

QStringList sweepRunArguments(const SweepRun& run, int threads)
{
    // each run on the device this process uses (a GPU is shared by the jobs)
    const QString t = QString::number(std::max(1, threads));
    if (sweepRunResumable(run)) return {"train", "--resume", run.runDir, "--threads", t, "--device", deviceChoice()};
    return {"train", "--config", run.configPath, "--out", run.runDir, "--threads", t, "--device", deviceChoice()};
}

QString shellQuote(const QString& word)
{
    static const QRegularExpression safe("^[A-Za-z0-9_./=:,+-]+$");
    if (safe.match(word).hasMatch()) return word;
    QString q = word;
    q.replace("'", "'\\''").replace("\n", "'$'\\n''").replace("\r", "'$'\\r''");
    return "'" + q + "'";
}

}  // namespace parrot
