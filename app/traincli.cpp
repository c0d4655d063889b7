// `train` (a run folder, fresh or resumed) and `eval` (a checkpoint's accuracy against length).
#include "cli.h"

#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/tasks/taskcatalog.h"
#include "core/model.h"
#include "core/train/trainer.h"
#include "args.h"
#include "clicommon.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <csignal>
#include <optional>

namespace parrot {

namespace {

QString seconds(double s)
{
    if (s >= 3600) return QString("%1h%2m").arg(int(s / 3600)).arg(int(s / 60) % 60, 2, 10, QChar('0'));
    if (s >= 60) return QString("%1m%2s").arg(int(s / 60)).arg(int(s) % 60, 2, 10, QChar('0'));
    return QString("%1s").arg(s, 0, 'f', 1);
}

QString curveLine(const LengthCurve& c)
{
    return c.summary();
}

TrainControl* g_control = nullptr;
void onSigint(int) { if (g_control) g_control->cancel = true; }

}  // namespace

int cmdTrain(Args& a)
{
    // --resume RUN_DIR [--steps N] [--extend-schedule] [--set train.KEY=VALUE]...: the run goes on
    const QString resumeDir = a.value("--resume");
    std::optional<ResumePlan> plan;
    ExperimentConfig c;
    QString outDir;
    if (!resumeDir.isNull()) {
        ResumeOptions o;
        o.extendSchedule = a.flag("--extend-schedule");
        o.sets = a.values("--set");
        const QString steps = a.value("--steps");
        if (!steps.isNull()) {
            bool ok = false;
            o.steps = steps.toLongLong(&ok);
            if (!ok || o.steps < 1) throw Error(QString("--steps: expected a positive number of steps, got \"%1\"").arg(steps));
        }
        if (!a.value("--out").isNull() || !a.value("--preset").isNull() || !a.value("--config").isNull() || !a.value("--seed").isNull())
            throw Error("train --resume: the run folder is its own output and holds its own settings; "
                        "leave out --out, --preset, --config and --seed");
        a.done();
        plan = planResume(resumeDir, o);
        c = plan->model.config();
        outDir = plan->runDir;
        out() << plan->description << "\n";
    } else {
        c = experimentFrom(a);
        outDir = a.value("--out");
        a.done();
        if (outDir.isEmpty()) throw Error("train: --out DIR is required (the run folder to write)");
        RunFolder::checkFree(outDir);  // before anything is printed or built
    }
    Model model = plan ? plan->model : Model::create(c);
    out() << "training " << model.summary() << "\n";
    const TaskInfo* info = findTask(c.task.kind);
    out() << "task: " << info->label << ", " << info->difficulty << " " << c.task.minLen << ".." << c.task.maxLen
          << ", rows of " << c.task.contextLen << " tokens; run folder " << QDir(outDir).absolutePath() << "\n";
    out().flush();

    TrainControl control;
    g_control = &control;
    // Ctrl+C, and SIGTERM (Slurm's scancel and time limit, a system shutting down): stop at the
    // step, write the resume file, so that train --resume (or the sweep again) goes on from there
    std::signal(SIGINT, onSigint);
    std::signal(SIGTERM, onSigint);
    TrainCallbacks cb;
    cb.progressIntervalMs = 1000;
    cb.progress = [](const TrainProgress& p) {
        out() << QString("step %1/%2  loss %3  lr %4  %5 tok/s  elapsed %6  ETA %7")
                     .arg(p.step).arg(p.totalSteps).arg(p.loss, 0, 'f', 4).arg(p.lr, 0, 'e', 2)
                     .arg(p.tokensPerSecond, 0, 'f', 0).arg(seconds(p.elapsedSeconds), seconds(p.etaSeconds))
              << "\n";
        out().flush();
    };
    cb.evaluated = [](const LengthCurve& cv) {
        out() << "eval step " << cv.step << ": " << curveLine(cv) << "\n";
        out().flush();
    };
    cb.log = [](const QString& s) { out() << s << "\n"; out().flush(); };
    const TrainOutcome o = plan ? resumeTraining(*plan, control, cb) : train(model, outDir, control, cb);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    g_control = nullptr;
    if (o.status == TrainOutcome::Status::Failed) throw Error(o.message);
    out() << statusName(o.status) << ": " << o.message << "\n";
    if (!o.checkpoint.isEmpty()) out() << "checkpoint: " << o.checkpoint << "\n";
    out().flush();
    return o.status == TrainOutcome::Status::Finished ? 0 : (o.status == TrainOutcome::Status::Cancelled ? 130 : 2);
}

int cmdEval(Args& a)
{
    const QString path = a.value("--checkpoint");
    const QString lengthsText = a.value("--lengths");
    const int samples = a.integer("--samples");
    const int seed = a.integer("--seed");
    const bool json = a.flag("--json");
    a.done();
    if (path.isEmpty()) throw Error("eval: --checkpoint FILE is required");
    const std::vector<int> requested = lengthsText.isEmpty() ? std::vector<int>{} : parseLengthList(lengthsText, "--lengths");
    const Model model = Model::load(path);
    const std::vector<int> lengths = requested.empty() ? evaluationLengths(model.config().task) : requested;
    const LengthCurve c = model.evaluate(lengths, samples > 0 ? samples : model.config().task.evalSamples, unsigned(seed));
    const TaskInfo* info = findTask(model.config().task.kind);
    if (json) {  // the one JSON form of a curve (lengthCurveJson, as run folders' curves.json), with its task and file
        QJsonObject o = lengthCurveJson(c);
        o.insert("task", model.config().task.kind);
        o.insert("checkpoint", QFileInfo(path).absoluteFilePath());
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    if (c.isError()) {  // in-context regression: error after each number of examples, and the baselines
        out() << model.summary() << "\n";
        out() << "task: " << info->label << "; squared error / dimension after each number of in-context examples\n";
        QString head = QString("%1  %2").arg("examples", 8).arg("model", 15);
        for (const QString& n : c.baselineNames) head += QString("  %1").arg(n, 13);
        out() << head << "\n";
        for (size_t i = 0; i < c.lengths.size(); ++i) {
            QString row = QString("%1  %2 +- %3").arg(c.lengths[i], 8).arg(c.error[i], 7, 'f', 3).arg(c.errorStdErr[i], 5, 'f', 3);
            for (size_t b = 0; b < c.baselineNames.size(); ++b) row += QString("  %1").arg(c.baselineError[b][i], 13, 'f', 3);
            out() << row << "\n";
        }
        out() << "(" << c.samples << " prompts)\n";
        return 0;
    }
    {
        out() << model.summary() << "\n";
        out() << "task: " << info->label << "; accuracy of whole answers and of answer tokens, +- one standard error\n";
        out() << QString("%1  %2  %3\n").arg(info->difficulty, 16).arg("answer acc", 16).arg("token acc", 16);
        for (size_t i = 0; i < c.lengths.size(); ++i)
            out() << QString("%1  %2% +- %3  %4% +- %5\n").arg(c.lengths[i], 16)
                         .arg(100 * c.stringAccuracy[i], 6, 'f', 1).arg(100 * c.stringStdErr[i], 4, 'f', 1)
                         .arg(100 * c.charAccuracy[i], 6, 'f', 1).arg(100 * c.charStdErr[i], 4, 'f', 1);
        out() << "(" << c.samples << " examples at each point)\n";
    }
    return 0;
}

}  // namespace parrot
