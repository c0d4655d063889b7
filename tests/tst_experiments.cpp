// Experiments: the results table's grades, evaluation probes (task.eval_kind), sweep overrides,
// the sweep runner's cancel and resume, every bundled sweep preset shrunk and run end to end, and
// the direction of the papers' findings after short training (the runs trained together, longest first).
#include "testutil.h"

#include "base/error.h"
#include "base/experiments/results.h"
#include "base/experiments/sweep.h"
#include "base/experiments/sweeprunner.h"
#include "base/io/runfolder.h"
#include "core/model.h"
#include "ui/panels/experimentspanel.h"

#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <map>

#include <qcustomplot.h>

using namespace parrot;

namespace {

// A finished run's record with one final evaluation: accuracies at `lengths`, or an error curve.
RunRecord accuracyRun(const QString& kind, const QString& model, std::vector<int> lengths, std::vector<double> acc, int maxLen)
{
    RunRecord r;
    r.config.task.kind = kind;
    r.config.task.maxLen = maxLen;
    r.config.model.kind = model;
    LengthCurve c;
    c.lengths = std::move(lengths);
    c.stringAccuracy = acc;
    c.charAccuracy = acc;
    r.curves.push_back(c);
    r.status = "finished";
    return r;
}

RunRecord errorRun(const QString& model, double error, double zero, double best)
{
    RunRecord r;
    r.config.task.kind = "linear_regression";
    r.config.model.kind = model;
    LengthCurve c;
    c.metric = "error";
    c.lengths = {0, 10, 20};
    c.error = {zero, 0.5, error};
    c.errorStdErr = {0, 0, 0};
    c.baselineNames = {"least squares", "zero"};
    c.baselineError = {{zero, 0.1, best}, {zero, zero, zero}};
    r.curves.push_back(c);
    return r;
}

QStringList shrink()  // every bundled preset in seconds: a few steps, a few samples
{
    return {"--set", "train.steps=6", "--set", "train.warmup_steps=2", "--set", "train.eval_every=3", "--set", "train.eval_samples=8",
            "--set", "task.eval_samples=8", "--set", "model.d_model=32", "--set", "model.heads=4", "--set", "model.num_masked_heads=2"};
}

}  // namespace

class TestExperiments : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void gradesFollowTheDocumentedThresholds_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<double>("accuracy");
        QTest::addColumn<int>("grade");
        QTest::newRow("copy 95%") << "copy" << 0.95 << int(Grade::Pass);
        QTest::newRow("copy 90%") << "copy" << 0.90 << int(Grade::Pass);
        QTest::newRow("copy 60%") << "copy" << 0.60 << int(Grade::Partial);
        QTest::newRow("copy 40%") << "copy" << 0.40 << int(Grade::Fail);
        QTest::newRow("parity 70%: below halfway from chance") << "sparse_parity" << 0.70 << int(Grade::Fail);
        QTest::newRow("parity 80%") << "sparse_parity" << 0.80 << int(Grade::Partial);
        QTest::newRow("parity 92%") << "sparse_parity" << 0.92 << int(Grade::Pass);
    }
    void gradesFollowTheDocumentedThresholds()
    {
        QFETCH(QString, kind);
        QFETCH(double, accuracy);
        QFETCH(int, grade);
        // Graded at the longest training length (8), not at the longest length evaluated (16).
        const ResultsTable t = tabulate({accuracyRun(kind, "lstm", {4, 8, 16}, {1.0, accuracy, 0.0}, 8)});
        QCOMPARE(t.tasks.size(), 1);
        QCOMPARE(t.cells[0][0].value, accuracy);
        QCOMPARE(int(t.cells[0][0].grade), grade);
        const ResultsTable longest = tabulate({accuracyRun(kind, "lstm", {4, 8, 16}, {1.0, accuracy, 0.0}, 8)}, ResultPoint::Longest);
        QCOMPARE(longest.cells[0][0].value, 0.0);
        QCOMPARE(int(longest.cells[0][0].grade), int(Grade::Fail));
    }

    void errorGradesAreRelativeToTheBaselines()
    {
        // zero predictor 1.0, least squares 0.05: pass <= 0.15, partial <= 0.5
        const ResultsTable t = tabulate({errorRun("transformer", 0.12, 1.0, 0.05), errorRun("mamba", 0.3, 1.0, 0.05),
                                         errorRun("lstm", 0.8, 1.0, 0.05)});
        QCOMPARE(t.models.size(), 3);
        QCOMPARE(int(t.cells[0][0].grade), int(Grade::Pass));
        QCOMPARE(int(t.cells[0][1].grade), int(Grade::Partial));
        QCOMPARE(int(t.cells[0][2].grade), int(Grade::Fail));
        QVERIFY2(t.cells[0][0].detail.contains("0.120") && t.cells[0][0].detail.contains("best baseline 0.050"), qPrintable(t.cells[0][0].detail));
    }

    void seedsAreAveragedAndSizesSplitColumns()
    {
        RunRecord a = accuracyRun("copy", "mamba", {8}, {1.0}, 8), b = accuracyRun("copy", "mamba", {8}, {0.7}, 8);
        const ResultsTable t = tabulate({a, b, accuracyRun("suffix_ngram", "transformer", {8}, {0.2}, 8)});
        QCOMPARE(t.tasks, (QStringList{"copy", "suffix_ngram (n=3)"}));
        QCOMPARE(t.models.size(), 2);
        QCOMPARE(t.cells[0][0].runs, 2);
        QCOMPARE(t.cells[0][0].value, 0.85);
        QCOMPARE(int(t.cells[0][0].grade), int(Grade::Partial));
        QCOMPARE(t.cells[1][0].runs, 0);  // no mamba run on the suffix task
        QVERIFY(t.toText().contains("\u25B2 85.0%"));
        // one architecture in two sizes: a column each, named by the model
        b.config.model.dState = 2;
        const ResultsTable sizes = tabulate({a, b});
        QCOMPARE(sizes.models.size(), 2);
        QCOMPARE(sizes.models, (QStringList{"mamba d128 N16", "mamba d128 N2"}));
    }

    // MQAR's sequences hold many independent queries: graded per query (token), like MAD's tasks,
    // not by whether all of a sequence's answers are right; copy stays per whole answer.
    void mqarIsGradedPerQuery()
    {
        RunRecord mqar = accuracyRun("mqar", "mamba", {8}, {0.0}, 8), copy = accuracyRun("copy", "mamba", {8}, {0.0}, 8);
        mqar.curves.back().charAccuracy = {0.95};
        copy.curves.back().charAccuracy = {0.95};
        const ResultsTable t = tabulate({mqar, copy});
        QCOMPARE(t.tasks, (QStringList{"mqar", "copy"}));
        QCOMPARE(t.cells[0][0].value, 0.95);
        QCOMPARE(int(t.cells[0][0].grade), int(Grade::Pass));
        QCOMPARE(t.cells[1][0].value, 0.0);
    }

    // Training efficiency in the table: the examples each run had seen when its accuracy at the
    // training length first reached 90% (metrics.csv's evaluations), or "not within" the most seen.
    void examplesToNinetyPercentArePerRun()
    {
        auto withEvaluations = [](const QString& model, std::vector<double> targets) {
            RunRecord r = accuracyRun("copy", model, {10}, {targets.back()}, 10);
            long long step = 0;
            for (double t : targets) {
                step += 50;
                r.metrics.push_back({step, step * 64, 0.0, 1.0, t});
                r.metrics.push_back({step + 10, (step + 10) * 64, 0.0, 1.0, -1});  // a row without an evaluation
            }
            return r;
        };
        const RunRecord fast = withEvaluations("transformer", {0.2, 0.95, 0.85, 0.97});  // 90% first at step 100
        const RunRecord slow = withEvaluations("transformer", {0.1, 0.5, 0.91, 0.99});   // at step 150
        const RunRecord never = withEvaluations("lstm", {0.0, 0.0, 0.1, 0.2});
        QCOMPARE(examplesToReach(fast), 6400LL);
        QCOMPARE(examplesToReach(slow), 9600LL);
        QCOMPARE(examplesToReach(never), -1LL);
        QCOMPARE(examplesToReach(slow, 0.4), 6400LL);
        const ResultsTable t = tabulate({fast, slow, never});
        QCOMPARE(t.cells[0][0].examplesTo90, (std::vector<long long>{6400, 9600}));
        QCOMPARE(t.cells[0][1].examplesTo90, (std::vector<long long>{-1}));
        const QString text = t.toText();
        QVERIFY2(text.contains("copy, transformer/hard_alibi: 6.4k, 9.6k") && text.contains("copy, lstm: not within 13.4k"), qPrintable(text));
        QVERIFY(t.cells[0][0].detail.contains("90% reached after 6.4k, 9.6k examples"));
        // a run evaluated only at the end says nothing about its speed
        const ResultsTable once = tabulate({accuracyRun("copy", "mamba", {10}, {1.0}, 10)});
        QVERIFY(once.cells[0][0].examplesTo90.empty() && !once.toText().contains("reached 90%"));
    }

    // task.eval_kind evaluates a copy model on another token task with the same vocabulary.
    void evalKindIsValidated()
    {
        ExperimentConfig c = test::tinyConfig();
        applyOverrides(c, {"task.eval_kind=copy_dup_ngram", "task.ngram=2", "task.eval_lengths=4,8"});
        QCOMPARE(evaluationTask(c.task).kind, QString("copy_dup_ngram"));
        QCOMPARE(evaluationTask(c.task).maxLen, 8);
        QCOMPARE(c.task.kind, QString("copy"));
        auto problem = [&](const QStringList& sets) {
            ExperimentConfig e = test::tinyConfig();
            try {
                applyOverrides(e, sets);
            } catch (const Error& err) {
                return err.message();
            }
            return QString();
        };
        QVERIFY(problem({"task.eval_kind=linear_regression"}).contains("task.eval_kind: expected a token task"));
        QVERIFY(problem({"task.eval_kind=text_copy"}).contains("different vocabulary"));
        QVERIFY(problem({"task.eval_kind=copy_dup_ngram", "task.ngram=3"}).contains("length 2"));  // eval length 2 < 2n
        // and the evaluation really uses it: a copy checkpoint scored on duplicated n-grams
        ExperimentConfig e = test::tinyConfig(1);
        applyOverrides(e, {"task.eval_kind=copy_dup_ngram", "task.ngram=2", "task.eval_lengths=4,8"});
        const LengthCurve curve = Model::create(e).evaluate({4, 8}, 4, 1);
        QCOMPARE(curve.lengths, (std::vector<int>{4, 8}));
    }

    void overridesApplyToEveryRun()
    {
        SweepPlan plan = loadSweep(sweepPresetFile("length-generalisation"), m_dir.filePath("o"));
        overrideSweep(plan, {"train.steps=7"});
        for (const SweepRun& r : plan.runs) {
            QCOMPARE(r.config.train.steps, 7LL);
            QVERIFY(r.config.name.startsWith("length-generalisation/"));
            QCOMPARE(r.overrides.last(), QString("train.steps=7"));
        }
        QCOMPARE(plan.overrides, QStringList{"train.steps=7"});
        writeSweepFiles(plan);  // the folder remembers them, to resume with
        QCOMPARE(readSweepIndex(plan.outDir)->overrides, QStringList{"train.steps=7"});
        try {
            overrideSweep(plan, {"train.steps=-1"});
            QFAIL("accepted a bad override");
        } catch (const Error& e) {
            QVERIFY2(e.message().startsWith("run nope_seed-1: train.steps"), qPrintable(e.message()));
        }
    }

    // A quick look divides every run's steps and its intervals; runs that differ in steps take none.
    void quickLookDividesTheSteps()
    {
        const SweepPlan plan = loadSweep(sweepPresetFile("length-generalisation"), ".");  // 600 steps, warm-up 50, eval every 200
        QVERIFY(quickLookOverrides(plan, 1).isEmpty());
        QCOMPARE(quickLookOverrides(plan, 4),
                 (QStringList{"train.steps=150", "train.warmup_steps=12", "train.eval_every=50"}));  // autosaves were off: no change to name
        QCOMPARE(quickLookOverrides(plan, 10), (QStringList{"train.steps=60", "train.warmup_steps=5", "train.eval_every=20"}));
        const QString file = m_dir.filePath("varied.json");
        QVERIFY(test::writeAll(file, R"({"name": "varied", "preset": "copy-tiny", "grid": {"train.steps": [10, 20]}})"));
        try {
            quickLookOverrides(loadSweep(file, "."), 4);
            QFAIL("a quick look over runs of different lengths");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("differ in train.steps"), qPrintable(e.message()));
        }
    }

    // The Experiments tab says what it holds: the sweep file it opened, a quick look's own settings
    // (not the full sweep's measured numbers), the precision only beside the figure it changes, and
    // no axes or legend of a figure it is not drawing.
    void panelShowsWhatItHolds()
    {
        ExperimentsPanel p;
        const QString runs = m_dir.filePath("panel-runs");
        p.setRunsFolder(runs);
        p.resize(1100, 700);
        QVERIFY(p.selectPreset("length-generalisation"));
        QCOMPARE(p.presetBox()->currentText(), QString("length-generalisation"));
        QVERIFY(p.descriptionLabel()->text().contains("Measured"));
        QVERIFY(!p.precisionBox()->isVisibleTo(&p));
        p.figureBox()->setCurrentIndex(p.figureBox()->findData("capacity"));
        QVERIFY(p.precisionBox()->isVisibleTo(&p));
        p.figureBox()->setCurrentIndex(p.figureBox()->findData("length"));
        QVERIFY(!p.precisionBox()->isVisibleTo(&p));

        p.setStepsDivisor(10);
        QCOMPARE(p.overrides(), quickLookOverrides(p.plan(), 10));
        QCOMPARE(p.outDir(), QDir(runs).filePath("sweeps/length-generalisation-quick10"));  // never mixed with the full runs
        const QString quick = p.descriptionLabel()->text();
        QVERIFY2(quick.contains("Changed: train.steps=60") && !quick.contains("Measured") && !quick.contains("78%"), qPrintable(quick));
        p.setStepsDivisor(1);
        QVERIFY(p.descriptionLabel()->text().contains("Measured"));
        QCOMPARE(p.outDir(), QDir(runs).filePath("sweeps/length-generalisation"));

        const QString file = m_dir.filePath("mine.json");
        QVERIFY(test::writeAll(file, R"({"name": "mine", "description": "Two seeds of copy-tiny.", "preset": "copy-tiny",
                                         "grid": {"seed": [1, 2]}})"));
        QVERIFY(p.openSweepFile(file));
        QCOMPARE(p.presetBox()->currentText(), QString("File: mine.json"));
        QCOMPARE(p.plan().name, QString("mine"));
        QCOMPARE(p.descriptionLabel()->text(), QString("Two seeds of copy-tiny."));
        QVERIFY(!p.figure()->legend->visible() && !p.figure()->xAxis->visible() && !p.figure()->yAxis->visible());
        QCOMPARE(p.figure()->itemCount(), 1);  // the note that nothing has finished
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) p.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/experiments-file.png");
        QVERIFY(p.selectPreset("state-size"));
        QCOMPARE(p.presetBox()->currentText(), QString("state-size"));
        QCOMPARE(p.plan().name, QString("state-size"));

        QVERIFY(test::writeAll(m_dir.filePath("varied.json"), R"({"name": "varied", "preset": "copy-tiny", "grid": {"train.steps": [10, 20]}})"));
        QVERIFY(p.openSweepFile(m_dir.filePath("varied.json")));
        auto* steps = qobject_cast<QStandardItemModel*>(p.stepsBox()->model());
        QVERIFY(!steps->item(p.stepsBox()->findData(4))->isEnabled());
        QCOMPARE(p.stepsBox()->currentData().toInt(), 1);

        // a folder of one's own sweep file: the box names the folder, and choosing that entry again
        // reopens the folder (not the file's default folder)
        const QString folder = m_dir.filePath("mine-folder");
        writeSweepFiles(loadSweep(file, folder));
        QVERIFY(p.openSweepFolder(folder));
        QCOMPARE(p.presetBox()->currentText(), QString("Folder: mine-folder"));
        QCOMPARE(p.outDir(), folder);
        QVERIFY(p.selectPreset("state-size"));
        p.presetBox()->setCurrentIndex(p.presetBox()->findText("Folder: mine-folder"));
        QCOMPARE(p.plan().name, QString("mine"));
        QCOMPARE(p.outDir(), folder);
    }

    // A sweep shrunk on the command line records its --set in index.json; the Experiments tab takes
    // them from the folder and resumes it with them, rather than refusing its runs as made otherwise.
    void shrunkFolderResumesInTheWindow()
    {
        const QString out = m_dir.filePath("shrunk");
        QStringList sets;
        for (int i = 1; i < shrink().size(); i += 2) sets << shrink()[i];
        const test::CliResult cli = test::runCli(QStringList{"sweep", "--preset", "ngram-lookup", "--out", out, "--jobs", "2"} + shrink(), 600000);
        QVERIFY2(cli.code == 0, qPrintable(cli.out + cli.err));
        QVERIFY2(cli.out.contains("Changed: train.steps=6") && !cli.out.contains("Measured"), qPrintable(cli.out));
        QCOMPARE(readSweepIndex(out)->overrides, sets);
        // resumed from the command line without them: refused, saying what it was made with
        const test::CliResult plain = test::runCli({"sweep", "--preset", "ngram-lookup", "--out", out}, 60000);
        QCOMPARE(plain.code, 1);  // a run-time refusal, not a usage error
        QVERIFY2(plain.err.contains("made with --set " + sets.join(" --set ")), qPrintable(plain.err));
        const SweepPlan plan = loadSweep(sweepPresetFile("ngram-lookup"), out);
        QVERIFY(QFile::remove(plan.runs[0].runDir + "/result.json"));  // one run cut short, to resume

        ExperimentsPanel p;
        p.setExecutable(PARROT_EXE);
        p.setRunsFolder(m_dir.filePath("shrunk-runs"));
        QSignalSpy errors(&p, &ExperimentsPanel::errorMessage);
        QVERIFY(p.selectPreset("ngram-lookup"));
        p.setOutDir(out);
        QCOMPARE(p.overrides(), sets);
        QVERIFY2(p.stepsBox()->currentText().startsWith("custom: train.steps=6"), qPrintable(p.stepsBox()->currentText()));
        const QString text = p.descriptionLabel()->text();
        QVERIFY2(text.contains("train.steps=6") && !text.contains("Measured"), qPrintable(text));
        QCOMPARE(p.resultRuns(), int(plan.runs.size()) - 1);
        QVERIFY(p.figure()->legend->visible() && p.figure()->xAxis->visible());
        QSignalSpy done(&p, &ExperimentsPanel::sweepFinished);
        QVERIFY(p.run());
        QVERIFY(done.wait(300000));
        QCOMPARE(done[0][0].toInt(), 0);
        QCOMPARE(errors.count(), 0);
        QCOMPARE(p.resultRuns(), int(plan.runs.size()));
    }

    // A quick look from the window: its own folder, every run a tenth of the steps, recorded for
    // resuming; until a run finishes the figure says so instead of showing another sweep's axes.
    void quickLookRunsShrunkInItsOwnFolder()
    {
        ExperimentsPanel p;
        p.setExecutable(PARROT_EXE);
        p.setRunsFolder(m_dir.filePath("quick-runs"));
        p.resize(1100, 700);
        p.show();
        QVERIFY(p.selectPreset("state-size"));
        p.setStepsDivisor(10);
        QSignalSpy done(&p, &ExperimentsPanel::sweepFinished);
        QVERIFY(p.run());
        QVERIFY(p.isRunning() && !p.stepsBox()->isEnabled());
        QVERIFY(!p.figure()->legend->visible() && !p.figure()->xAxis->visible());
        QVERIFY(p.outDir().endsWith("state-size-quick10"));
        const QJsonObject config = QJsonDocument::fromJson(test::readAll(p.outDir() + "/configs/d128-N16.json")).object();
        QCOMPARE(config["train"].toObject()["steps"].toInt(), 250);  // 2,500 / 10
        QCOMPARE(readSweepIndex(p.outDir())->overrides, quickLookOverrides(p.plan(), 10));
        QTest::qWait(3000);  // the progress line moves
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) p.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/experiments-quick.png");
        p.cancel();
        QCOMPARE(done.size(), 1);
        QCOMPARE(done[0][1].toBool(), true);
    }

    // Cancel kills the running children; the next prepare() finds their runs to redo.
    void runnerCancelsAndResumes()
    {
        SweepPlan plan = loadSweep(sweepPresetFile("length-generalisation"), m_dir.filePath("cancel"));
        overrideSweep(plan, {"train.steps=100000", "model.d_model=32", "model.heads=4", "model.num_masked_heads=2"});
        SweepRunner runner(plan, PARROT_EXE, 2);
        QCOMPARE(runner.prepare(), 16);
        QSignalSpy progress(&runner, &SweepRunner::progress), finished(&runner, &SweepRunner::finished);
        runner.start();
        QVERIFY(runner.isRunning());
        QTRY_VERIFY_WITH_TIMEOUT(progress.size() > 0 && progress.last()[0].toDouble() > 0, 60000);  // steps are being reported
        runner.cancel();
        QCOMPARE(finished.size(), 1);
        QCOMPARE(finished[0][1].toBool(), true);
        QVERIFY(!runner.isRunning());
        QCOMPARE(runStatus(plan.runs[0].runDir), QString());  // killed: no result.json
        SweepRunner again(plan, PARROT_EXE, 1);
        QCOMPARE(again.prepare(), 16);
        QVERIFY(!QFileInfo::exists(plan.runs[0].runDir));  // its half-written folder was cleared
    }

    // A finished run whose settings differ from what the sweep now gives is not skipped as if it
    // were the same run, and not deleted: prepare() refuses and says which runs and what to do.
    void changedSettingsAreNotSilentlyResumed()
    {
        const QString out = m_dir.filePath("stale");
        QStringList args = {"sweep", "--preset", "length-generalisation", "--out", out, "--jobs", "2"};
        args += shrink();
        const test::CliResult first = test::runCli(args, 600000);
        QVERIFY2(first.code == 0, qPrintable(first.out + first.err));
        SweepPlan plan = loadSweep(sweepPresetFile("length-generalisation"), out);
        QStringList sets;
        for (int i = 1; i < shrink().size(); i += 2) sets << shrink()[i];
        overrideSweep(plan, sets);
        QCOMPARE(SweepRunner(plan, PARROT_EXE, 1).prepare(), 0);  // the same settings: all done
        overrideSweep(plan, {"train.lr=0.0005"});
        try {
            SweepRunner(plan, PARROT_EXE, 1).prepare();
            QFAIL("resumed runs made with other settings");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("16 finished runs (nope_seed-1, nope_seed-2, rope_seed-1, ...) were made with other settings"),
                     qPrintable(e.message()));
        }
        QCOMPARE(runStatus(plan.runs[0].runDir), QString("finished"));  // nothing was removed
        const test::CliResult cli = test::runCli(QStringList{"sweep", "--preset", "length-generalisation", "--out", out, "--set", "train.lr=0.0005"});
        test::expectCliError(cli, "other settings");
    }

    // Every bundled preset, shrunk to a few steps, runs end to end; its figure and table render.
    void everyPresetRunsShrunken_data()
    {
        QTest::addColumn<QString>("preset");
        for (const QString& name : sweepPresetNames()) QTest::newRow(qPrintable(name)) << name;
    }
    void everyPresetRunsShrunken()
    {
        QFETCH(QString, preset);
        const SweepPlan plan = loadSweep(sweepPresetFile(preset), ".");
        QVERIFY2(plan.description.contains("Measured"), "the description holds the measured outcome");
        const QString out = m_dir.filePath("preset-" + preset);
        const test::CliResult r = test::runCli(QStringList{"sweep", "--preset", preset, "--out", out, "--jobs", "2"} + shrink(), 600000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(QString("%1 of %1 runs finished").arg(plan.runs.size())), qPrintable(r.out));
        const test::CliResult table = test::runCli({"runs", "--dir", out, "--table"});
        QVERIFY2(table.code == 0, qPrintable(table.err));
        QVERIFY2(table.out.contains("task") && table.out.contains("\u2713 mean answer accuracy"), qPrintable(table.out));
        const QString png = m_dir.filePath(preset + ".png");
        QStringList runs;
        for (const SweepRun& run : plan.runs) runs << out + "/runs/" + run.name;
        const test::CliResult fig = test::runCli(QStringList{"compare", "--runs"} + runs + QStringList{"--figure", plan.figure, "--out", png});
        QVERIFY2(fig.code == 0, qPrintable(fig.err));
        QCOMPARE(QImage(png).size(), QSize(2133, 1333));  // 800 x 500 points at 192 dpi
        const QString logPng = m_dir.filePath(preset + "-log.png");  // log axes, where a user wants them
        const test::CliResult logFig = test::runCli(QStringList{"compare", "--runs"} + runs +
                                                    QStringList{"--figure", plan.figure, "--log", "xy", "--out", logPng, "--size", "400x300"});
        QVERIFY2(logFig.code == 0, qPrintable(logFig.err));
        QCOMPARE(QImage(logPng).size(), QSize(1067, 800));
        test::expectCliError(test::runCli(QStringList{"compare", "--runs"} + runs + QStringList{"--figure", plan.figure, "--log", "z", "--out", logPng}),
                             "--log: expected x, y or xy");
        if (preset == "recall-frontier") {  // one point per model at its state in bits, and the bound
            const QString csv = m_dir.filePath("frontier.csv");
            const test::CliResult fr = test::runCli(QStringList{"compare", "--runs"} + runs + QStringList{"--figure", "frontier", "--out", csv});
            QVERIFY2(fr.code == 0, qPrintable(fr.err));
            std::map<QString, double> bits;
            for (const QString& line : QString::fromUtf8(test::readAll(csv)).split('\n').mid(1)) {
                const QStringList f = line.split(',');
                if (f.size() == 4 && !f[0].startsWith("\"bound")) bits[f[0].mid(1).chopped(1)] = f[1].toDouble();
            }
            // shrunk to d_model 32, the two d_state 16 Mambas are one series (as are the two
            // LSTMs): 7 points with Mamba-2 and Gated DeltaNet; Mamba's state grows with d_state,
            // the KV cache outgrows them all
            QCOMPARE(int(bits.size()), 7);
            const auto at = [&](const QString& part) {  // a series' label names its first run, then "(n seeds)"
                for (const auto& [name, b] : bits)
                    if (name.section(' ', 0, 0).endsWith(part) || name.startsWith(part)) return b;
                return -1.0;
            };
            QVERIFY(at("-N1") > 0 && at("-N1") < at("-N4") && at("-N4") < at("-N16"));
            QVERIFY(at("transformer") > at("-N16") && at("lstm") > 0 && at("lstm") < at("-N1"));
            QVERIFY(at("mamba2-d64") > 0 && at("gated-deltanet-d64") > 0 && at("transformer") > at("gated-deltanet-d64"));
            QVERIFY(QString::fromUtf8(test::readAll(csv)).contains("\"bound at 32 bits\""));
        }
        if (preset == "state-size") {  // the capacity view of the same runs: one crossing per fixed-state model
            const QString csv = m_dir.filePath("capacity.csv");
            const test::CliResult cap = test::runCli(QStringList{"compare", "--runs"} + runs +
                                                     QStringList{"--figure", "capacity", "--precision", "8", "--out", csv});
            QVERIFY2(cap.code == 0, qPrintable(cap.err));
            const QString data = QString::fromUtf8(test::readAll(csv));
            // shrunk to d_model 32, the five Mambas are two (d_state 2 and 16), beside two Mamba-2s
            // (d_state 2 and 16) and two Gated DeltaNets (keys of 2 and 16)
            QCOMPARE(int(data.count(",crossing,")), 6);
            QVERIFY(data.contains("copy error bound"));
        }
    }

private:
    // The direction checks below read runs of the bundled sweeps (some cut short) and two runs of
    // copy-tiny. They are trained once, all together, longest first, two at a time, so that both
    // cores stay busy to the last run; each check then reads its own. A run that failed leaves its
    // record out, and the checks that read it fail, naming it.
    std::map<QString, RunRecord> m_pool;  // by "<sweep>/<run name>": how the checks ask for them
    bool m_poolTrained = false;

    void trainPool()
    {
        if (m_poolTrained) return;
        m_poolTrained = true;
        // copy-tiny, short: Hard-ALiBi against an LSTM on strings of 1-8; and copy-tiny itself
        const QString lengthFile = m_dir.filePath("direction.json"), copierFile = m_dir.filePath("copier.json");
        QVERIFY(test::writeAll(lengthFile, R"({
            "preset": "copy-tiny",
            "set": {"train.steps": 600, "train.eval_every": 0, "train.checkpoint_every": 0,
                    "task.eval_lengths": [8, 16], "task.eval_samples": 64},
            "variants": [{"label": "hard-alibi", "set": {}}, {"label": "lstm", "set": {"model.kind": "lstm", "train.lr": 0.01}}]
        })"));
        QVERIFY(test::writeAll(copierFile, R"({"preset": "copy-tiny", "set": {"train.eval_every": 0, "train.checkpoint_every": 0},
                                              "variants": [{"label": "copier", "set": {}}]})"));
        struct Want {
            QString sweep, file;  // file: a bundled sweep's when empty
            QStringList names;
            int steps;  // 0: the sweep's own
            std::vector<double> cost;
        };
        const std::vector<Want> wants = {
            {"recall-frontier", "", {"transformer", "mamba-d64-N1"}, 1000, {150, 190}},
            {"icl-suite", "", {"parity-transformer", "parity-mamba"}, 1750, {150, 190}},
            {"training-efficiency", "", {"hard-alibi_seed-1", "mamba_seed-1"}, 0, {100, 145}},
            {"ngram-lookup", "", {"mamba-prefix_seed-1", "mamba-suffix_seed-1"}, 0, {70, 70}},
            {"mad-suite", "", {"recall_transformer", "recall_mamba", "recall_lstm"}, 600, {55, 55, 55}},
            {"mimetic-init", "", {"copy-default_seed-1", "copy-mimetic_seed-1"}, 0, {50, 50}},
            {"copy-600", lengthFile, {"hard-alibi", "lstm"}, 0, {45, 45}},
            {"copy-tiny", copierFile, {"copier"}, 0, {30}},
        };
        struct Entry {
            double cost;  // its seconds on one core, measured: the order they are started in
            QString key;
            SweepRun run;
        };
        std::vector<Entry> entries;
        const QString outDir = m_dir.filePath("directions");
        for (const Want& w : wants) {
            const SweepPlan plan = loadSweep(w.file.isEmpty() ? sweepPresetFile(w.sweep) : w.file, m_dir.filePath("direction-" + w.sweep));
            for (int i = 0; i < w.names.size(); ++i) {
                const auto it = std::find_if(plan.runs.begin(), plan.runs.end(), [&](const SweepRun& r) { return r.name == w.names[i]; });
                QVERIFY2(it != plan.runs.end(), qPrintable(w.sweep + " has no run " + w.names[i]));
                SweepRun run = *it;
                if (w.steps > 0) run.config.train.steps = w.steps;
                run.name = w.sweep + "__" + run.name;
                run.configPath = outDir + "/configs/" + run.name + ".json";
                entries.push_back({w.cost[size_t(i)], w.sweep + "/" + w.names[i], run});
            }
        }
        std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.cost > b.cost; });
        SweepPlan pool;
        pool.name = "directions";
        pool.outDir = outDir;
        for (const Entry& e : entries) pool.runs.push_back(e.run);
        SweepRunner runner(pool, PARROT_EXE, 2);
        QSignalSpy finished(&runner, &SweepRunner::finished);
        runner.start();
        // about 15 minutes on 2 idle cores; the bound leaves room for a busy machine under the
        // test's own limit (tests/CMakeLists.txt)
        const bool done = finished.wait(2300000);
        for (const Entry& e : entries)
            if (runStatus(e.run.runDir) == "finished") m_pool[e.key] = loadRun(e.run.runDir);
        QVERIFY2(done, "the direction runs did not all finish in 2,300 s");
    }

    // The pool's records of `keys` ("<sweep>/<run>"), in that order; empty (and a message) when
    // one of them did not finish.
    std::vector<RunRecord> poolRuns(const QStringList& keys)
    {
        trainPool();
        std::vector<RunRecord> out;
        for (const QString& key : keys) {
            const auto it = m_pool.find(key);
            if (it == m_pool.end()) {
                qWarning("%s did not finish: see %s", qPrintable(key), qPrintable(m_dir.filePath("directions/logs")));
                return {};
            }
            out.push_back(it->second);
        }
        return out;
    }

private slots:
    // The copy paper's length generalisation, in its robust form: after a short training on
    // strings of 1-8, Hard-ALiBi copies strings of 16 far better than an LSTM.
    void hardAlibiGeneralisesBeyondAnLstm()
    {
        const auto runs = poolRuns({"copy-600/hard-alibi", "copy-600/lstm"});
        QCOMPARE(runs.size(), size_t(2));
        const double h16 = runs[0].curves.back().stringAccuracyAt(16), l16 = runs[1].curves.back().stringAccuracyAt(16);
        qInfo("accuracy at 16 (2x the training length): Hard-ALiBi %.3f, LSTM %.3f", h16, l16);
        QVERIFY2(h16 > l16 + 0.2, qPrintable(QString("Hard-ALiBi %1, LSTM %2").arg(h16).arg(l16)));
    }

    // After copy-tiny's training, a Hard-ALiBi Transformer has learned heads that read the token
    // after the earlier occurrence of the current one: `inspect` finds and labels them.
    void trainedCopierHasLookupHeads()
    {
        QCOMPARE(poolRuns({"copy-tiny/copier"}).size(), size_t(1));
        const QString checkpoint = m_dir.filePath("direction-copy-tiny/runs/copier/checkpoints/last.safetensors");
        const test::CliResult r = test::runCli({"inspect", "--checkpoint", checkpoint, "--length", "8", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject doc = QJsonDocument::fromJson(r.out.toUtf8()).object();
        const QJsonArray heads = doc["heads"].toArray();
        QCOMPARE(heads.size(), 16);  // 2 layers x 8 heads
        int lookups = 0;
        double best = 0;
        for (const auto h : heads) {
            const QJsonObject o = h.toObject();
            if (o["label"].toString().startsWith("n-gram lookup")) ++lookups;
            best = std::max(best, o["lookup"].toArray()[1].toDouble());  // n = 2
        }
        qInfo("lookup heads: %d, best 2-gram lookup score %.2f", lookups, best);
        QVERIFY(lookups >= 1);
        QVERIFY(best > 0.6);
        // the user's own string, and the errors a user can make
        QCOMPARE(test::runCli({"inspect", "--checkpoint", checkpoint, "--input", "parrot"}).code, 0);
        test::expectCliError(test::runCli({"inspect", "--checkpoint", checkpoint, "--input", "Parrot!"}),
                             "'P' is not in the alphabet of 26 letters");
        test::expectCliError(test::runCli({"inspect", "--checkpoint", m_dir.filePath("none.safetensors")}), "none.safetensors");
    }

    // The n-gram lookup finding on Mamba's side: with the key before the string (prefix) a fixed
    // state only has to watch for it; with the key after (suffix) it must have kept the whole string.
    void mambaLooksUpPrefixKeysNotSuffixKeys()
    {
        const auto runs = poolRuns({"ngram-lookup/mamba-prefix_seed-1", "ngram-lookup/mamba-suffix_seed-1"});
        QCOMPARE(runs.size(), size_t(2));
        const double p12 = runs[0].curves.back().stringAccuracyAt(12), s12 = runs[1].curves.back().stringAccuracyAt(12);
        qInfo("Mamba answer accuracy at 12: prefix key %.3f, suffix key %.3f", p12, s12);
        QVERIFY2(p12 > s12 + 0.3, qPrintable(QString("prefix %1, suffix %2").arg(p12).arg(s12)));
    }

    // Per-answer-token accuracy of a run's final evaluation at `length` (-1 when not evaluated there).
    static double perQueryAt(const RunRecord& r, int length)
    {
        const LengthCurve& c = r.curves.back();
        for (size_t i = 0; i < c.lengths.size(); ++i)
            if (c.lengths[i] == length) return c.charAccuracy[i];
        return -1.0;
    }

    // Park et al.'s sparse-parity contrast (icl-suite's parity row, cut from 2,500 steps to 1,750):
    // Mamba finds the pair of coordinates in context, the Transformer stays near chance.
    void mambaLearnsSparseParityInContextTheTransformerDoesNot()
    {
        const auto runs = poolRuns({"icl-suite/parity-transformer", "icl-suite/parity-mamba"});
        QCOMPARE(runs.size(), size_t(2));
        auto last = [](const RunRecord& r) { return r.curves.back().stringAccuracy.back(); };
        const double t = last(runs[0]), m = last(runs[1]);
        qInfo("sparse parity after 39 examples: Transformer %.3f, Mamba %.3f", t, m);
        // 0.84-0.91 for Mamba across OpenBLAS's kernel choices (AVX2 or AVX-512), about 0.6 for the
        // Transformer: the margin, not the third digit, is the finding
        QVERIFY2(m >= 0.8 && t <= 0.7 && m >= t + 0.15, qPrintable(QString("Transformer %1, Mamba %2").arg(t).arg(m)));
    }

    // The copy paper's training efficiency (training-efficiency, seed 1): the Transformer copies
    // strings of 12 at 90% after fewer examples than Mamba.
    void transformerLearnsToCopyFromFewerExamplesThanMamba()
    {
        const auto runs = poolRuns({"training-efficiency/hard-alibi_seed-1", "training-efficiency/mamba_seed-1"});
        QCOMPARE(runs.size(), size_t(2));
        const long long t = examplesToReach(runs[0]), m = examplesToReach(runs[1]);
        qInfo("examples to 90%% at length 12: Transformer %lld, Mamba %lld", t, m);
        QVERIFY2(t > 0 && (m < 0 || t < m), qPrintable(QString("Transformer %1, Mamba %2").arg(t).arg(m)));
    }

    // Trockman et al.'s mimetic initialisation (mimetic-init, seed 1): at equal steps, Mamba
    // started near linear attention learns to copy strings of 8 that the default initialisation
    // has not learned at all.
    void mimeticInitLetsMambaLearnToCopy()
    {
        const auto runs = poolRuns({"mimetic-init/copy-default_seed-1", "mimetic-init/copy-mimetic_seed-1"});
        QCOMPARE(runs.size(), size_t(2));
        const double plain = runs[0].curves.back().stringAccuracyAt(8), mimetic = runs[1].curves.back().stringAccuracyAt(8);
        qInfo("copy accuracy at 8: default %.3f, mimetic %.3f", plain, mimetic);
        QVERIFY2(mimetic >= 0.8 && plain <= 0.3, qPrintable(QString("default %1, mimetic %2").arg(plain).arg(mimetic)));
    }

    // MAD's in-context recall (mad-suite's recall row, cut from 2,000 steps to 600; graded per
    // answer token, as MAD scores): attention (with the suite's short convolution) and Mamba recall
    // the values of keys seen earlier in the sequence, the LSTM stays near chance (1 in 8).
    void attentionAndMambaRecallInContextTheLstmDoesNot()
    {
        const auto runs = poolRuns({"mad-suite/recall_transformer", "mad-suite/recall_mamba", "mad-suite/recall_lstm"});
        QCOMPARE(runs.size(), size_t(3));
        const double t = perQueryAt(runs[0], 64), m = perQueryAt(runs[1], 64), l = perQueryAt(runs[2], 64);
        qInfo("in-context recall per token at 64: Transformer %.3f, Mamba %.3f, LSTM %.3f", t, m, l);
        QVERIFY2(t >= 0.9 && m >= 0.5 && l >= 0 && l <= 0.25, qPrintable(QString("Transformer %1, Mamba %2, LSTM %3").arg(t).arg(m).arg(l)));
    }

    // Zoology's finding on recall-frontier's task (MQAR, 4-16 pairs, tested at 32; cut to 1,000
    // steps): attention recalls every pair, and Mamba with the smallest state trails it far behind
    // (the LSTM's place below attention is mad-suite's check above).
    void attentionRecallsAboveEverySmallStateModel()
    {
        const auto runs = poolRuns({"recall-frontier/transformer", "recall-frontier/mamba-d64-N1"});
        QCOMPARE(runs.size(), size_t(2));
        const double t = perQueryAt(runs[0], 32), m = perQueryAt(runs[1], 32);
        qInfo("MQAR per query at 32 pairs: Transformer %.3f, Mamba d_state 1 %.3f", t, m);
        QVERIFY2(t >= 0.9 && t > m + 0.3, qPrintable(QString("Transformer %1, Mamba N1 %2").arg(t).arg(m)));
    }
};

QTEST_MAIN(TestExperiments)
#include "tst_experiments.moc"
