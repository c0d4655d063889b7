// The run folders' commands: `runs` (a folder's runs and their results table), `compare` (runs
// overlaid as one figure) and `export` (a run's figures for a paper).
#include "cli.h"

#include "base/error.h"
#include "base/experiments/bestrate.h"
#include "base/experiments/results.h"
#include "base/figurecatalog.h"
#include "base/io/jsonfile.h"
#include "base/io/runfolder.h"
#include "base/io/textfile.h"
#include "base/modelcatalog.h"
#include "figures/figures.h"
#include "figures/mechanismplot.h"
#include "args.h"
#include "clicommon.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <qcustomplot.h>

namespace parrot {

int cmdRuns(Args& a)
{
    const QString dir = a.value("--dir");
    const bool json = a.flag("--json");
    const bool table = a.flag("--table");
    const QString at = a.value("--at");
    a.done();
    if (!at.isEmpty() && at != "in-range" && at != "longest")
        throw Error(QString("--at: expected in-range or longest, got \"%1\"").arg(at));
    if (dir.isEmpty()) throw Error("runs: --dir DIR is required");
    if (!QFileInfo(dir).isDir()) throw Error(QString("%1: no such folder").arg(dir));
    if (table) {
        BestRates rates;
        const std::vector<RunRecord> runs = loadResultRuns(dir, &rates);
        const ResultsTable t = tabulate(runs, at == "longest" ? ResultPoint::Longest : ResultPoint::InRange, rates.rateOfRunDir);
        if (t.tasks.isEmpty()) throw Error(QString("%1: no evaluated runs to tabulate").arg(dir));
        out() << t.toText() << "\n" << gradeRules() << "\n";
        if (!rates.choices.empty()) out() << "\n" << rates.toText();
        return 0;
    }
    int skipped = 0;
    QJsonArray all;
    for (const RunRecord& r : loadRunsUnder(dir, &skipped)) {
        // the step and final evaluation as result.json has them (a run stopped early has no final curve)
        const QJsonObject result = readJsonObjectIfValid(QDir(r.dir).filePath("result.json")).value_or(QJsonObject());
        all.append(QJsonObject{{"dir", QDir(dir).relativeFilePath(r.dir)}, {"task", r.config.task.kind},
                               {"model", r.config.model.kind}, {"positions", r.config.model.positions},
                               {"seed", r.config.seed}, {"steps", result["step"]},
                               {"status", r.status.isEmpty() ? QString("unfinished") : r.status},
                               {"final", result["final"]}});
    }
    if (json) {
        out() << QJsonDocument(all).toJson(QJsonDocument::Indented);
        return 0;
    }
    for (const auto v : all) {
        const QJsonObject o = v.toObject();
        ModelConfig m;
        m.kind = o["model"].toString();
        m.positions = o["positions"].toString();
        const QString model = architectureKey(m);
        out() << QString("%1  %2  %3  seed %4  %5  %6\n").arg(o["dir"].toString(), -28).arg(o["task"].toString(), -14)
                     .arg(model, -22).arg(o["seed"].toInt()).arg(o["status"].toString(), -10)
                     .arg(o["final"].toObject()["summary"].toString());
    }
    out() << all.size() << " runs" << (skipped ? QString(", %1 unreadable skipped").arg(skipped) : QString()) << "\n";
    return 0;
}

int cmdCompare(Args& a)
{
    const QStringList dirs = a.list("--runs");
    const QString figure = a.value("--figure");
    const QString outFile = a.value("--out");
    const QString size = a.text("--size");
    const QString log = a.value("--log");
    const int precision = a.integer("--precision");
    const ExportOptions style = figureStyle(a);
    a.done();
    const FigureOptions options = comparisonOptions(log, precision);
    if (dirs.isEmpty() || figure.isEmpty() || outFile.isEmpty())
        throw Error("compare: --runs DIR..., --figure and --out FILE are required");
    const auto [width, height] = parseSize(size);
    std::vector<RunRecord> runs;
    for (const QString& d : dirs) {
        if (!QFileInfo(d).isDir()) throw Error(QString("%1: no such run folder").arg(d));
        runs.push_back(loadRun(d));
    }
    renderComparison(runs, figure, outFile, width, height, options, style);
    out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << " (" << runs.size() << " runs)\n";
    return 0;
}

// The figures of a run folder, or of every run under a folder (a sweep), for papers.
int cmdExport(Args& a)
{
    const QString dir = a.value("--run");
    const QString figure = a.value("--figure");
    const QString outFile = a.value("--out");
    const QString log = a.value("--log");
    const int precision = a.integer("--precision");
    const auto [width, height] = parseSize(a.value("--size"), figure == "panel" ? 1400 : 800, figure == "mechanisms" ? 700 : 500);
    ExportOptions style = figureStyle(a);
    a.done();
    if (dir.isEmpty() || figure.isEmpty() || outFile.isEmpty()) throw Error("export: --run DIR, --figure NAME and --out FILE are required");
    const FigureOptions options = comparisonOptions(log, precision);
    checkFigure(figure, ExportFigure);
    if (!QFileInfo(dir).isDir()) throw Error(QString("%1: no such run folder").arg(dir));
    int skipped = 0;
    BestRates rates;  // a thorough sweep's folder: each model at its best rate
    const std::vector<RunRecord> runs = loadResultRuns(dir, &rates, &skipped);
    if (runs.empty()) throw Error(QString("%1: no run folders (config.json and metrics.csv) under it").arg(dir));
    style.width = width;
    style.height = height;
    checkExport(outFile, style);
    if (figure == "table") {
        if (!outFile.endsWith(".csv", Qt::CaseInsensitive)) throw Error(QString("%1: the results table exports as CSV (.csv)").arg(outFile));
        const ResultsTable t = tabulate(runs, ResultPoint::InRange, rates.rateOfRunDir);
        if (t.tasks.isEmpty()) throw Error(QString("%1: no evaluated runs to tabulate").arg(dir));
        writeTextFile(outFile, t.toCsv(), "the table");
    } else if (figure == "mechanisms") {
        // one run's loss above its heads' lookup scores: the run itself, or the one run under DIR
        if (runs.size() != 1)
            throw Error(QString("--figure mechanisms: draws one run, and %1 holds %2; give one of them as --run").arg(dir).arg(runs.size()));
        renderMechanisms(runs.front(), loadMechanisms(runs.front().dir), outFile, width, height, style);
    } else if (figure == "panel") {
        // training loss beside the final evaluation, one figure
        const bool icl = !runs.front().curves.empty() && runs.front().curves.back().isError();
        QCustomPlot loss, eval;
        loss.setObjectName("loss");
        eval.setObjectName(icl ? "icl" : "length");
        drawComparison(loss, runs, "loss", options);
        drawComparison(eval, runs, eval.objectName(), options);
        // CSV too: the schema of every figure of several plots (plot,series,x,y,value)
        exportPlots({{&loss, QRect(0, 0, width / 2, height), "loss"}, {&eval, QRect(width / 2, 0, width - width / 2, height), eval.objectName()}},
                    outFile, style, "Parrotscope: " + QFileInfo(dir).fileName());
    } else {
        renderComparison(runs, figure == "accuracy" ? "length" : figure, outFile, width, height, options, style);
    }
    out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << " (" << runs.size() << " run" << (runs.size() == 1 ? "" : "s")
          << (skipped ? QString(", %1 unreadable skipped").arg(skipped) : QString()) << ")\n";
    return 0;
}

}  // namespace parrot
