#include "clicommon.h"

#include "base/error.h"
#include "base/presets.h"
#include "core/model.h"
#include "args.h"

namespace parrot {

QTextStream& out()
{
    static QTextStream s(stdout);
    return s;
}

ExperimentConfig experimentFrom(Args& a)
{
    const QString preset = a.value("--preset");
    const QString config = a.value("--config");
    ExperimentConfig c = resolveExperiment(preset, config);
    QStringList sets = a.values("--set");
    const QString steps = a.value("--steps");
    if (!steps.isNull()) sets << "train.steps=" + steps;
    const QString seed = a.value("--seed");
    if (!seed.isNull()) sets << "seed=" + seed;
    applyOverrides(c, sets);
    // --match-params N | FAMILY: the width at which this model has N parameters, or as many as
    // FAMILY has with the same settings.
    const QString match = a.value("--match-params");
    if (!match.isNull()) {
        bool number = false;
        long long target = match.toLongLong(&number);
        if (!number) {
            ExperimentConfig other = c;
            other.model.kind = match;
            const QStringList problems = validate(other);
            if (!problems.isEmpty()) throw Error(QString("--match-params %1: %2").arg(match, problems.join("; ")));
            target = Model::measure(other).parameters;
        }
        c = Model::matchParameters(c, target);
        QTextStream(stderr) << QString("matched: d_model %1 gives %2 parameters (target %3)\n")
                                   .arg(c.model.dModel).arg(Model::measure(c, Model::countingLimit(target)).parameters).arg(target);
    }
    return c;
}

std::pair<int, int> parseSize(const QString& size)
{
    return parseSize(size, 0, 0);
}

// "WIDTHxHEIGHT" in points (1/72 inch, every format), or the defaults when empty.
std::pair<int, int> parseSize(const QString& size, int width, int height)
{
    if (size.isEmpty()) return {width, height};
    const QStringList wh = size.split('x');
    bool ok1 = false, ok2 = false;
    if (wh.size() == 2) {
        width = wh[0].toInt(&ok1);
        height = wh[1].toInt(&ok2);
    }
    if (!ok1 || !ok2) throw Error(QString("--size: expected WIDTHxHEIGHT in points, got \"%1\"").arg(size));
    return {width, height};
}

// --dpi, --font-size and --line-width of every figure command.
ExportOptions figureStyle(Args& a)
{
    ExportOptions o;
    o.dpi = a.integer("--dpi");
    o.fontPt = a.number("--font-size");
    o.lineWidth = a.number("--line-width");
    return o;
}

FigureOptions comparisonOptions(const QString& log, int precision)
{
    if (!log.isEmpty() && log != "x" && log != "y" && log != "xy") throw Error(QString("--log: expected x, y or xy, got \"%1\"").arg(log));
    return {log.contains('x'), log.contains('y'), precision, [](const ExperimentConfig& c) { return Model::measure(c); }};
}

}  // namespace parrot
