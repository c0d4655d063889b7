// sweep --thorough: the learning-rate grid and seeds each model is trained at, the held-out check
// a finished run writes, the choice of each model's best rate on it (never on the test prompts),
// and a small thorough sweep end to end on the command line and in the Experiments tab.
#include "testutil.h"

#include "base/error.h"
#include "base/experiments/bestrate.h"
#include "base/experiments/results.h"
#include "base/experiments/sweep.h"
#include "base/io/jsonfile.h"
#include "base/io/runfolder.h"
#include "ui/panels/experimentspanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

namespace {

const char* kSweep = R"({"name": "rates", "preset": "copy-tiny", "minutes": 2,
  "set": {"train.steps": 12, "train.warmup_steps": 2, "train.eval_every": 6, "train.eval_samples": 8, "task.eval_samples": 8,
          "task.eval_lengths": [8, 12], "train.checkpoint_every": 0, "model.d_model": 32, "model.heads": 4, "model.num_masked_heads": 2},
  "variants": [{"label": "attn", "set": {}}, {"label": "lstm", "set": {"model.kind": "lstm"}}],
  "grid": {"seed": [7, 8], "train.lr": [0.5]},
  "thorough": {"lr": [0.001, 0.01, 0.1], "lr_by_kind": {"lstm": [0.003, 0.03]}, "seeds": [1, 2]}})";

// A finished run of `run` (its folder written as a trainer writes one) whose test evaluation at
// the training length is `test` and whose held-out check is `heldOut`.
RunRecord finishedRun(const SweepRun& run, double test, double heldOut, double loss = 0.5)
{
    RunRecord r;
    r.dir = QDir(run.runDir).absolutePath();
    r.config = run.config;
    r.status = "finished";
    LengthCurve c;
    c.addAccuracy(run.config.task.maxLen, qRound(test * 100), 100, qRound(test * 100), 100);
    r.curves.push_back(c);
    r.validation.addAccuracy(run.config.task.maxLen, qRound(heldOut * 100), 100, qRound(heldOut * 100), 100);
    RunRecord::Row row;
    row.loss = loss;
    r.metrics.push_back(row);
    return r;
}

const RateChoice* choiceOf(const BestRates& b, const QString& model)
{
    for (const RateChoice& c : b.choices)
        if (c.model == model) return &c;
    return nullptr;
}

}  // namespace

class TestThorough : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString sweepFile(const QString& name, const QString& text)
    {
        const QString f = m_dir.filePath(name);
        if (!test::writeAll(f, text.toUtf8())) return {};
        return f;
    }

private slots:
    // Each model of the plain sweep becomes one run per rate and seed; the file's own seed and rate
    // axes give way, and a family with its own grid gets it.
    void eachModelTrainsAtEveryRateAndSeed()
    {
        const QString file = sweepFile("rates.json", kSweep);
        const SweepPlan plain = loadSweep(file, m_dir.filePath("plain"));
        QCOMPARE(plain.runs.size(), size_t(4));  // 2 variants x 2 seeds
        QVERIFY(!plain.thorough);
        const SweepPlan plan = loadSweep(file, m_dir.filePath("thorough"), {.thorough = true});
        QVERIFY(plan.thorough);
        QCOMPARE(plan.runs.size(), size_t(3 * 2 + 2 * 2));
        QStringList names;
        for (const SweepRun& r : plan.runs) names << r.name;
        QVERIFY2(names.contains("attn_lr-0.01_seed-2") && names.contains("lstm_lr-0.03_seed-1") && !names.contains("lstm_lr-0.01_seed-1"),
                 qPrintable(names.join(' ')));
        for (const SweepRun& r : plan.runs) {
            QCOMPARE(r.model, r.name.section('_', 0, 0));
            QVERIFY(r.config.seed == 1 || r.config.seed == 2);
            QCOMPARE(QString::number(r.config.train.lr, 'g', 3), r.name.section("_lr-", 1).section('_', 0, 0));
            QCOMPARE(r.config.train.steps, 12);  // the file's "set" still applies
        }
        QVERIFY(plan.thorough->describe().contains("lstm: 0.003, 0.03"));
        // the description ends with the cost, from the plain sweep's minutes on 2 cores
        QVERIFY2(plan.description.endsWith("10 runs, 2.5x the plain sweep's 4: about 5 min on 2 cores with 2 jobs (the plain sweep took 2 min)."),
                 qPrintable(plan.description));
        QVERIFY(!plain.description.contains("Thorough"));

        // index.json keeps the grid and each run's model, so a folder reopened knows it is thorough
        writeSweepFiles(plan);
        const std::optional<SweepPlan> index = readSweepIndex(plan.outDir);
        QVERIFY(index && index->thorough);
        QCOMPARE(index->thorough->seeds, (std::vector<int>{1, 2}));
        QCOMPARE(index->runs.size(), plan.runs.size());
        QCOMPARE(index->runs[3].model, plan.runs[3].model);
        QVERIFY(index->runs[3].overrides.contains("train.lr=0.01"));
    }

    void zoologysGridWithoutOne()
    {
        const QString file = sweepFile("zoo.json", R"({"name": "zoo", "preset": "copy-tiny"})");
        const SweepPlan plan = loadSweep(file, m_dir.filePath("zoo"), {.thorough = true});
        QCOMPARE(plan.runs.size(), size_t(4 * 3));
        QCOMPARE(plan.thorough->lr, (std::vector<double>{0.001, 0.003, 0.01, 0.03}));
    }

    void aBadGridIsNamed_data()
    {
        QTest::addColumn<QString>("thorough");
        QTest::addColumn<QString>("named");
        QTest::newRow("empty rates") << R"({"lr": []})" << "thorough.lr";
        QTest::newRow("negative rate") << R"({"lr": [0.01, -1]})" << "thorough.lr";
        QTest::newRow("rate as text") << R"({"lr": ["fast"]})" << "thorough.lr";
        QTest::newRow("unknown family") << R"({"lr_by_kind": {"gpt": [0.01]}})" << "thorough.lr_by_kind.gpt";
        QTest::newRow("fractional seed") << R"({"seeds": [1.5]})" << "thorough.seeds";
        QTest::newRow("unknown key") << R"({"rates": [0.01]})" << "thorough.rates";
        QTest::newRow("not an object") << R"([0.01])" << "thorough";
    }
    void aBadGridIsNamed()
    {
        QFETCH(QString, thorough);
        QFETCH(QString, named);
        const QString file = sweepFile("bad.json", QString(R"({"name": "bad", "preset": "copy-tiny", "thorough": %1})").arg(thorough));
        for (bool mode : {false, true}) {  // named whichever way the file is run
            try {
                loadSweep(file, m_dir.filePath("bad"), {.thorough = mode});
                QFAIL("a bad thorough grid was accepted");
            } catch (const Error& e) {
                QVERIFY2(e.message().contains(named), qPrintable(e.message()));
            }
        }
    }

    // A sweep's scale: its overrides over every run and over each variant's own, the variants it
    // keeps, its axes in place of the file's, its description; an unknown one is named.
    void aScaleOverridesTheSweep()
    {
        const QString file = sweepFile("scaled.json", QString(kSweep).replace(R"("thorough":)", R"("scales": {"paper": {
            "description": "Bigger.", "set": {"model.d_model": 64, "train.steps": 20}, "variants": {"lstm": {"model.d_model": 48}},
            "only": ["lstm"], "grid": {"seed": [3]}}}, "thorough":)"));
        const SweepPlan plain = loadSweep(file, m_dir.filePath("plain"));
        QCOMPARE(plain.scales, QStringList{"paper"});
        QVERIFY(plain.scale.isEmpty());
        const SweepPlan paper = loadSweep(file, m_dir.filePath("paper"), {.scale = "paper"});
        QCOMPARE(paper.scale, QString("paper"));
        QCOMPARE(paper.description, QString("Bigger."));
        QCOMPARE(paper.runs.size(), size_t(1));  // the lstm alone, at seed 3 alone
        QCOMPARE(paper.runs[0].config.model.dModel, 48);
        QCOMPARE(paper.runs[0].config.train.steps, 20);
        QCOMPARE(paper.runs[0].config.seed, 3);
        QCOMPARE(loadSweep(file, m_dir.filePath("laptop"), {.scale = "laptop"}).runs.size(), plain.runs.size());
        writeSweepFiles(paper);
        QCOMPARE(readSweepIndex(paper.outDir)->scale, QString("paper"));
        try {
            loadSweep(file, m_dir.filePath("x"), {.scale = "huge"});
            QFAIL("an unknown scale was accepted");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("no scale \"huge\"") && e.message().contains("laptop, paper"), qPrintable(e.message()));
        }
        // the bundled paper scales read, and name the GPU they are sized for
        for (const QString& bundled : {"training-efficiency", "length-generalisation"}) {
            const SweepPlan p = loadSweep(sweepPresetFile(bundled), m_dir.filePath(bundled), {.scale = "paper"});
            QVERIFY2(p.description.contains("GPU") && p.description.contains("CPU cores it would take"), qPrintable(p.description));
            QCOMPARE(p.runs.size(), size_t(3));
        }

        ExperimentsPanel panel;
        QVERIFY(panel.selectPreset("training-efficiency"));
        QVERIFY(!panel.scaleBox()->isHidden());
        panel.scaleBox()->setCurrentIndex(panel.scaleBox()->findData("paper"));
        QCOMPARE(panel.plan().scale, QString("paper"));
        QVERIFY(panel.outDir().endsWith("training-efficiency-paper"));
        QVERIFY2(panel.descriptionLabel()->text().startsWith("No GPU here"), qPrintable(panel.descriptionLabel()->text()));
        QVERIFY(panel.selectPreset("mad-suite"));  // another experiment starts at its own scale, and has no other
        QVERIFY(panel.plan().scale.isEmpty());
        QVERIFY(panel.scaleBox()->isHidden());
    }

    // The rate is chosen on the held-out check, not on the test evaluation: here the test prompts
    // favour 0.001 and the held-out ones 0.01.
    void theRateIsChosenOnHeldOutPrompts()
    {
        const SweepPlan plan = loadSweep(sweepFile("rates.json", kSweep), m_dir.filePath("choose"), {.thorough = true});
        std::vector<RunRecord> runs;
        for (const SweepRun& r : plan.runs) {
            if (r.model != "attn") continue;
            const double lr = r.config.train.lr;
            runs.push_back(finishedRun(r, lr == 0.001 ? 1.0 : 0.5, lr == 0.01 ? 0.9 : 0.6));
        }
        const BestRates b = chooseBestRates(plan, runs);
        const RateChoice* attn = choiceOf(b, "attn");
        QVERIFY(attn);
        QCOMPARE(attn->lr, 0.01);
        QVERIFY(!attn->atEdge);
        QVERIFY(attn->complete);
        QCOMPARE(attn->trials.size(), size_t(3));
        QVERIFY2(attn->trialsText().contains("0.01: 90.0%") && attn->trialsText().contains("0.001: 60.0%"), qPrintable(attn->trialsText()));
        QCOMPARE(b.runs.size(), size_t(2));  // both seeds of the chosen rate
        for (const RunRecord& r : b.runs) QCOMPARE(r.config.train.lr, 0.01);

        // the lstm has no run yet: no rate, and nothing drawn for it
        const RateChoice* lstm = choiceOf(b, "lstm");
        QVERIFY(lstm && lstm->lr == 0 && !lstm->complete);
        QVERIFY(b.toText().contains("lstm: none yet"));

        // the table names the rate in the cell
        const ResultsTable t = tabulate(b.runs, ResultPoint::InRange, b.rateOfRunDir);
        QCOMPARE(t.cells[0][0].rate, QString("0.01"));
        QVERIFY2(t.toText().contains("lr 0.01"), qPrintable(t.toText()));
        QVERIFY(t.cells[0][0].detail.contains("learning rate 0.01"));
    }

    // A best rate at the grid's edge is flagged; a rate with a diverged seed counts that seed as the
    // worst, so it is not chosen on its other seeds alone; runs still to come are said.
    void edgesDivergenceAndPendingRunsAreSaid()
    {
        const SweepPlan plan = loadSweep(sweepFile("rates.json", kSweep), m_dir.filePath("edges"), {.thorough = true});
        std::vector<RunRecord> runs;
        for (const SweepRun& r : plan.runs) {
            if (r.model != "attn") continue;
            const double lr = r.config.train.lr;
            if (lr == 0.01 && r.config.seed == 2) {  // diverged: result.json says so, as the trainer writes it
                QVERIFY(QDir().mkpath(r.runDir));
                QVERIFY(test::writeAll(QDir(r.runDir).filePath("result.json"), R"({"status": "diverged"})"));
                continue;
            }
            runs.push_back(finishedRun(r, 0.5, lr == 0.01 ? 1.0 : lr == 0.1 ? 0.8 : 0.3));
        }
        BestRates b = chooseBestRates(plan, runs);
        const RateChoice* attn = choiceOf(b, "attn");
        QCOMPARE(attn->lr, 0.1);  // 0.01's other seed is perfect, but one seed diverged
        QVERIFY(attn->atEdge);
        QVERIFY2(attn->rateText().contains("top of the grid"), qPrintable(attn->rateText()));
        QVERIFY2(attn->trialsText().contains("diverged 1 of 2"), qPrintable(attn->trialsText()));
        const ResultsTable t = tabulate(b.runs, ResultPoint::InRange, b.rateOfRunDir);
        QVERIFY2(t.toText().contains("lr 0.1!") && t.toText().contains("edge of the grid"), qPrintable(t.toText()));

        // one lstm rate finished, the other pending: a provisional choice, said as such
        for (const SweepRun& r : plan.runs)
            if (r.model == "lstm" && r.config.train.lr == 0.003) runs.push_back(finishedRun(r, 0.2, 0.2));
        b = chooseBestRates(plan, runs);
        const RateChoice* lstm = choiceOf(b, "lstm");
        QCOMPARE(lstm->lr, 0.003);
        QVERIFY2(lstm->rateText().contains("so far: 2 of 4 runs"), qPrintable(lstm->rateText()));
        QVERIFY2(lstm->trialsText().contains("0.03: pending"), qPrintable(lstm->trialsText()));
    }

    // A real thorough sweep on the command line: every run writes its held-out check (prompts of
    // its own, at the longest training length), the sweep prints the table with each model's rate,
    // `runs --table` and the figures read the folder as thorough, and the window shows the same.
    void aThoroughSweepEndToEnd()
    {
        const QString file = sweepFile("small.json", QString(kSweep).replace(R"("lr_by_kind": {"lstm": [0.003, 0.03]}, )", ""));
        const QString out = m_dir.filePath("small");
        const test::CliResult cli = test::runCli({"sweep", "--config", file, "--out", out, "--jobs", "2", "--thorough"}, 600000);
        QVERIFY2(cli.code == 0, qPrintable(cli.out + cli.err));
        QVERIFY2(cli.out.contains("thorough: each model at learning rates 0.001, 0.01, 0.1 x seeds 1, 2"), qPrintable(cli.out));
        QVERIFY2(cli.out.contains("learning rate chosen per model on held-out prompts") && cli.out.contains("  attn: ")
                     && cli.out.contains("  lstm: "),
                 qPrintable(cli.out));

        const RunRecord one = loadRun(QDir(out).filePath("runs/attn_lr-0.01_seed-1"));
        QCOMPARE(one.validation.lengths, std::vector<int>{one.config.task.maxLen});
        QCOMPARE(one.validation.samples, one.config.task.evalSamples);
        const QJsonObject result = readJsonObject(QDir(one.dir).filePath("result.json"), "result");
        QVERIFY(result.contains("validation"));
        QCOMPARE(one.curves.back().lengths, (std::vector<int>{8, 12}));  // the test evaluation is the run's own, apart

        BestRates rates;
        const std::vector<RunRecord> shown = loadResultRuns(out, &rates);
        QCOMPARE(rates.choices.size(), size_t(2));
        QCOMPARE(shown.size(), size_t(4));  // 2 models x 2 seeds, at one rate each
        for (const RateChoice& c : rates.choices) QVERIFY(c.complete && c.lr > 0);

        const test::CliResult table = test::runCli({"runs", "--dir", out, "--table"});
        QVERIFY2(table.code == 0 && table.out.contains(" lr ") && table.out.contains("held-out"), qPrintable(table.out + table.err));
        const test::CliResult csv = test::runCli({"export", "--run", out, "--figure", "table", "--out", m_dir.filePath("t.csv")});
        QVERIFY2(csv.code == 0, qPrintable(csv.out + csv.err));
        QVERIFY(test::readAll(m_dir.filePath("t.csv")).contains("the best on held-out prompts"));

        ExperimentsPanel p;
        p.resize(1100, 700);
        QVERIFY(p.openSweepFolder(out));
        QVERIFY(p.thoroughBox()->isChecked());
        QCOMPARE(p.plan().runs.size(), size_t(12));
        QVERIFY(!p.ratesLabel()->isHidden());
        QVERIFY2(p.ratesLabel()->text().contains("attn:"), qPrintable(p.ratesLabel()->text()));
        auto* table2 = p.findChild<QTableWidget*>("resultsTable");
        QVERIFY(table2 && table2->rowCount() == 1 && table2->columnCount() == 2);
        QVERIFY2(table2->item(0, 0)->text().contains("lr "), qPrintable(table2->item(0, 0)->text()));
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) {
            p.showResultsTable(true);
            p.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/experiments-thorough.png");
        }

        // unticked: the plain sweep in a folder of its own, never mixed with the thorough runs
        p.thoroughBox()->setChecked(false);
        QCOMPARE(p.plan().runs.size(), size_t(4));
        QVERIFY(!p.plan().thorough);
        QVERIFY(p.outDir() != out);
        QVERIFY(p.ratesLabel()->isHidden());
        p.thoroughBox()->setChecked(true);
        QVERIFY(p.outDir().endsWith("-thorough"));
        QCOMPARE(p.plan().runs.size(), size_t(12));
    }
};

QTEST_MAIN(TestThorough)
#include "tst_thorough.moc"
