// Mechanism scores during training: the probe's queries and pooling, mechanisms.csv with its rows
// at the expected steps and the snapshots a run keeps, training unchanged by the scoring (the
// same weights bit for bit with it on and off), Mamba's implicit attention scored, the timeline
// continuous across a resume, old and damaged run folders read with clear messages, and the
// lookup score of a copying Transformer rising as it learns to copy.
#include "base/analysis/mechanisms.h"
#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/io/safetensors.h"
#include "core/analysis/inside.h"
#include "core/model.h"
#include "core/train/mechanismprobe.h"
#include "core/train/trainer.h"
#include "testutil.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>

using namespace parrot;

namespace {

// A small run that scores its heads every `every` steps, autosaving every 5.
ExperimentConfig scoredRun(const QString& kind, int steps, int every)
{
    ExperimentConfig c = test::smallConfig(kind, steps);
    c.train.mechanismEvery = every;
    c.train.checkpointEvery = 5;
    c.task.evalSamples = 8;
    return c;
}

TrainOutcome trainIn(const ExperimentConfig& c, const QString& dir, std::vector<MechanismScores>* told = nullptr, long long stopAt = 0)
{
    Model m = Model::create(c);
    TrainControl control;
    TrainCallbacks cb;
    cb.progressIntervalMs = 0;
    cb.progress = [&](const TrainProgress& p) { if (stopAt > 0 && p.step >= stopAt) control.cancel = true; };
    if (told) cb.mechanisms = [told](const MechanismScores& s) { told->push_back(s); };
    return train(m, dir, control, cb);
}

std::vector<long long> stepsOf(const std::vector<MechanismScores>& scorings)
{
    std::vector<long long> steps;
    for (const MechanismScores& s : scorings) steps.push_back(s.step);
    return steps;
}

// The log-spaced steps, and the two on each side of where the lookup formed, if it did.
std::set<long long> expectedSnapshots(std::set<long long> logSpaced, const std::vector<MechanismScores>& scorings, long long every)
{
    if (const long long formed = lookupFormsAt(scorings); formed >= 0) logSpaced.insert({formed - every, formed});
    return logSpaced;
}

std::set<long long> snapshotSteps(const QString& dir)
{
    std::set<long long> steps;
    for (const RunSnapshot& s : runSnapshots(dir))
        if (s.path.contains("/snapshots/")) steps.insert(s.step);
    return steps;
}

}  // namespace

class TestMechanisms : public QObject {
    Q_OBJECT
private slots:
    // A copy example's scored queries are the Explore tab's (copyQueries); an MQAR example's run
    // from its first query to its last answer; pooling one analysis with itself changes nothing,
    // and pooling weighs each input by the queries it had.
    void queriesAndPooling()
    {
        std::mt19937_64 rng(3);
        TaskConfig t;
        const Example copy = TokenTask::create(t)->evalExample(12, rng);
        QCOMPARE(scoredQueries(copy), copyQueries(copy.tokens, CopyVocab::Sep));
        t.kind = "mqar";
        t.vocabSize = 16;
        t.minLen = t.maxLen = 4;
        const Example mqar = TokenTask::create(t)->evalExample(4, rng);
        const auto [begin, end] = scoredQueries(mqar);
        QVERIFY(begin > 0 && end > begin && end < int(mqar.tokens.size()));
        QCOMPARE(mqar.roles[size_t(begin) + 1], Role::Answer);
        QVERIFY(mqar.roles[size_t(end)] == Role::Answer || mqar.roles[size_t(end)] == Role::End);
        QCOMPARE(scoredQueries(Example{}), (std::pair<int, int>{0, 0}));

        // one head reading the token after each letter's earlier copy (a perfect 1-gram lookup),
        // one the previous token; analysed on two copy inputs of different lengths
        const auto analyse = [](const Example& e) {
            const int T = int(e.tokens.size());
            AttentionMaps m;
            m.layers = 1;
            m.heads = 2;
            m.length = T;
            m.weights.assign(size_t(2) * T * T, 0.f);
            for (int q = 0; q < T; ++q) {
                const std::vector<int> found = earlierOccurrences(e.tokens, q, 1);
                const int lookup = found.size() == 1 ? found[0] + 1 : q;
                m.weights[size_t(q) * T + size_t(lookup)] = 1;
                m.weights[(size_t(T) + q) * T + size_t(std::max(0, q - 1))] = 1;
            }
            const auto [b, e2] = scoredQueries(e);
            return analyseLookup(m, e.tokens, b, e2);
        };
        const Example shorter = TokenTask::create(TaskConfig{})->evalExample(5, rng);
        const LookupAnalysis a = analyse(copy), b = analyse(shorter);
        const std::vector<HeadLookup> same = poolLookups({a, a});
        for (size_t h = 0; h < 2; ++h) {
            QCOMPARE(same[h].label, a.heads[h].label);
            QCOMPARE(same[h].lookup[1], a.heads[h].lookup[1]);
            QCOMPARE(same[h].previousToken, a.heads[h].previousToken);
        }
        const std::vector<HeadLookup> both = poolLookups({a, b});
        QVERIFY2(both[0].kind == HeadKind::NgramLookup && both[0].label.startsWith("n-gram lookup"), qPrintable(both[0].label));
        QVERIFY(both[0].lookup[1] > 0.99);
        QCOMPARE(both[1].label, QString("previous-token"));
        QCOMPARE(both[0].scored[1], a.heads[0].scored[1] + b.heads[0].scored[1]);
        const double qa = a.queryEnd - a.queryBegin, qb = b.queryEnd - b.queryBegin;
        QVERIFY(std::abs(both[0].previousToken - (a.heads[0].previousToken * qa + b.heads[0].previousToken * qb) / (qa + qb)) < 1e-12);
        const HeadScore s = headScore(both[1], 3, false);
        QCOMPARE(s.name(), QString("L3 H1"));
        QCOMPARE(s.label, QString("previous-token"));
        QVERIFY(s.previousToken > 0.99);
        QCOMPARE(headScore(both[0], 2, true).name(), QString("block 2 (implicit)"));

        // which runs score: token tasks with attention, a selective scan or recurrent heads, when asked
        ExperimentConfig c;
        QVERIFY(mechanismsApply(c));
        c.train.mechanismEvery = 0;
        QVERIFY(!mechanismsApply(c));
        c.train.mechanismEvery = 20;
        for (const QString kind : {"lstm", "s4d", "s4_mamba"}) {
            c.model.kind = kind;
            QVERIFY2(!mechanismsApply(c), qPrintable(kind));
        }
        for (const QString kind : {"mamba", "mamba2", "gated_deltanet", "hybrid", "mambaformer"}) {
            c.model.kind = kind;
            QVERIFY2(mechanismsApply(c), qPrintable(kind));
        }
        c.task.kind = "linear_regression";
        QVERIFY(!mechanismsApply(c));
    }

    // A two-layer Transformer scored every 10 steps of 60: mechanisms.csv has every head (2 x 4)
    // at steps 0, 10, ..., 60, as the callback told them, scores in [0, 1] with labels; snapshots
    // at the log-spaced steps 0, 10, 20 and 40; the listing ends with the last checkpoint.
    void trainingWritesTheTimelineAndSnapshots()
    {
        QTemporaryDir tmp;
        const QString dir = tmp.filePath("run");
        std::vector<MechanismScores> told;
        const TrainOutcome o = trainIn(scoredRun("transformer", 60, 10), dir, &told);
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        const std::vector<MechanismScores> read = loadMechanisms(dir);
        QCOMPARE(stepsOf(read), (std::vector<long long>{0, 10, 20, 30, 40, 50, 60}));
        QCOMPARE(stepsOf(told), stepsOf(read));
        QVERIFY(test::readAll(dir + "/mechanisms.csv").startsWith(mechanismsCsvHeader().toUtf8() + "\n"));
        for (size_t i = 0; i < read.size(); ++i) {
            QCOMPARE(int(read[i].heads.size()), 8);
            for (size_t h = 0; h < read[i].heads.size(); ++h) {
                const HeadScore& r = read[i].heads[h];
                const HeadScore& t = told[i].heads[h];
                QCOMPARE(r.implicit, false);
                QCOMPARE(r.layer, int(h) / 4);
                QCOMPARE(r.head, int(h) % 4);
                QVERIFY(!r.label.isEmpty());
                QCOMPARE(r.label, t.label);
                for (double v : {r.lookup[0], r.lookup[1], r.lookup[2], r.previousToken}) QVERIFY(v >= 0 && v <= 1);
                for (size_t n = 0; n < 3; ++n) QVERIFY(std::abs(r.lookup[n] - t.lookup[n]) <= 5e-5);
            }
        }
        // the scores move as the model trains
        bool moved = false;
        for (size_t h = 0; h < 8; ++h)
            moved |= read.front().heads[h].lookup[0] != read.back().heads[h].lookup[0] ||
                     read.front().heads[h].previousToken != read.back().heads[h].previousToken;
        QVERIFY(moved);
        QCOMPARE(snapshotSteps(dir), expectedSnapshots({0, 10, 20, 40}, read, 10));
        const std::vector<RunSnapshot> shots = runSnapshots(dir);
        QCOMPARE(shots.back().note, QString("last"));
        QCOMPARE(shots.back().step, 60LL);
        QCOMPARE(Model::load(shots[2].path).step(), 20LL);
        QCOMPARE(shots[2].label(), QString("step 20"));
        QCOMPARE(runFolderOf(shots[2].path), QDir(dir).absolutePath());
        QCOMPARE(runFolderOf(dir + "/checkpoints/last.safetensors"), QDir(dir).absolutePath());
        QCOMPARE(runFolderOf(tmp.filePath("elsewhere.safetensors")), QString());
    }

    // The same seed gives the same weights, bit for bit, with the heads scored every 5 steps or
    // never: the probe draws from neither the data's generator nor Torch's and trains nothing.
    void scoringDoesNotChangeTraining_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::newRow("transformer") << "transformer";
        QTest::newRow("mamba") << "mamba";
        QTest::newRow("hybrid") << "hybrid";
    }
    void scoringDoesNotChangeTraining()
    {
        QFETCH(QString, kind);
        QTemporaryDir tmp;
        ExperimentConfig on = scoredRun(kind, 30, 5), off = on;
        off.train.mechanismEvery = 0;
        QCOMPARE(trainIn(on, tmp.filePath("on")).status, TrainOutcome::Status::Finished);
        QCOMPARE(trainIn(off, tmp.filePath("off")).status, TrainOutcome::Status::Finished);
        QVERIFY(QFile::exists(tmp.filePath("on/mechanisms.csv")));
        QVERIFY(!QFile::exists(tmp.filePath("off/mechanisms.csv")));
        QVERIFY(!QDir(tmp.filePath("off/checkpoints/snapshots")).exists());
        QVERIFY(test::tensorBytes(tmp.filePath("on/checkpoints/last.safetensors")) == test::tensorBytes(tmp.filePath("off/checkpoints/last.safetensors")));
        const QString metricsOn = QString::fromUtf8(test::readAll(tmp.filePath("on/metrics.csv")));
        const QString metricsOff = QString::fromUtf8(test::readAll(tmp.filePath("off/metrics.csv")));
        const auto losses = [](const QString& csv) {
            QStringList out;
            for (const QString& line : csv.split('\n', Qt::SkipEmptyParts)) out << line.section(',', 4, 4);
            return out;
        };
        QCOMPARE(losses(metricsOn), losses(metricsOff));
    }

    // Mamba's selective-scan blocks are scored on their implicit attention, one row per block;
    // a hybrid has both kinds.
    void mambaWritesImplicitAttentionRows()
    {
        QTemporaryDir tmp;
        QCOMPARE(trainIn(scoredRun("mamba", 10, 5), tmp.filePath("mamba")).status, TrainOutcome::Status::Finished);
        const std::vector<MechanismScores> mamba = loadMechanisms(tmp.filePath("mamba"));
        QCOMPARE(stepsOf(mamba), (std::vector<long long>{0, 5, 10}));
        for (const MechanismScores& s : mamba) {
            QCOMPARE(int(s.heads.size()), 2);  // two blocks
            for (int b = 0; b < 2; ++b) {
                QVERIFY(s.heads[size_t(b)].implicit);
                QCOMPARE(s.heads[size_t(b)].layer, b);
                QCOMPARE(s.heads[size_t(b)].head, 0);
                // its |alpha| rows as shares of the row: some on the token to copy, none past 1
                QVERIFY(s.heads[size_t(b)].bestLookup() > 0 && s.heads[size_t(b)].bestLookup() < 1);
            }
        }
        QVERIFY(test::readAll(tmp.filePath("mamba/mechanisms.csv")).contains(",implicit,"));
        QCOMPARE(trainIn(scoredRun("hybrid", 5, 5), tmp.filePath("hybrid")).status, TrainOutcome::Status::Finished);
        int attention = 0, implicit = 0;
        for (const HeadScore& h : loadMechanisms(tmp.filePath("hybrid")).back().heads) (h.implicit ? implicit : attention)++;
        QVERIFY(attention >= 4 && implicit >= 1);
        // LSTM: nothing to score, no file
        QCOMPARE(trainIn(scoredRun("lstm", 5, 5), tmp.filePath("lstm")).status, TrainOutcome::Status::Finished);
        QVERIFY(!QFile::exists(tmp.filePath("lstm/mechanisms.csv")));
    }

    // The scores in mechanisms.csv are the Explore tab's: the probe examples (drawn as the probe
    // draws them) looked inside with Model::probe, one at a time, analysed by analyseLookup (Mamba's
    // implicit maps as shares of each row, on the first few examples) and pooled give the rows of
    // step 0, from its snapshot.
    void scoresAreTheExploreTabs_data() { scoringDoesNotChangeTraining_data(); }
    void scoresAreTheExploreTabs()
    {
        QFETCH(QString, kind);
        QTemporaryDir tmp;
        const ExperimentConfig c = scoredRun(kind, 5, 5);
        QCOMPARE(trainIn(c, tmp.filePath("run")).status, TrainOutcome::Status::Finished);
        const MechanismScores csv = loadMechanisms(tmp.filePath("run")).front();
        QCOMPARE(csv.step, 0LL);
        const Model start = Model::load(tmp.filePath("run/checkpoints/snapshots/step-000000.safetensors"));
        const bool scan = kind != "transformer";
        std::mt19937_64 rng(MechanismProbe::kSeed);
        const auto task = TokenTask::create(c.task);
        std::vector<LookupAnalysis> attention, implicit;
        for (int i = 0; i < MechanismProbe::kExamples; ++i) {
            const Example e = task->evalExample(c.task.maxLen, rng);
            const auto [begin, end] = scoredQueries(e);
            ModelProbes p = start.probe(e.tokens);
            if (p.attention.layers > 0) attention.push_back(analyseLookup(p.attention, e.tokens, begin, end));
            QCOMPARE(p.implicitAttention.layers > 0, scan);
            if (p.implicitAttention.layers > 0 && i < MechanismProbe::kImplicitExamples) {  // the costly maps, of the first few
                AttentionMaps& m = p.implicitAttention;
                for (size_t row = 0; row < m.weights.size() / size_t(m.length); ++row) {
                    double sum = 0;
                    for (int k = 0; k < m.length; ++k) sum += m.weights[row * size_t(m.length) + size_t(k)];
                    for (int k = 0; k < m.length; ++k) m.weights[row * size_t(m.length) + size_t(k)] /= float(std::max(sum, 1e-12));
                }
                implicit.push_back(analyseLookup(m, e.tokens, begin, end));
            }
        }
        std::vector<HeadLookup> expected = poolLookups(attention);
        for (const HeadLookup& h : poolLookups(implicit)) expected.push_back(h);
        QCOMPARE(csv.heads.size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(csv.heads[i].label, expected[i].label);
            for (size_t n = 1; n <= 3; ++n)
                QVERIFY2(std::abs(csv.heads[i].lookup[n - 1] - expected[i].lookup[n]) < 2e-4,
                         qPrintable(QString("%1, n = %2: %3 in the file, %4 from the probes").arg(csv.heads[i].name()).arg(n)
                                        .arg(csv.heads[i].lookup[n - 1]).arg(expected[i].lookup[n])));
            QVERIFY(std::abs(csv.heads[i].previousToken - expected[i].previousToken) < 2e-4);
        }
    }

    // Stopped at step 17 and resumed (after a kill that tore the file's last line and left a
    // snapshot past the resume point): mechanisms.csv has each step once, in order, with no gap,
    // and is the uninterrupted run's, byte for byte; so are its snapshots.
    void resumeKeepsTheTimelineContinuous()
    {
        QTemporaryDir tmp;
        const ExperimentConfig c = scoredRun("transformer", 40, 5);
        const QString whole = tmp.filePath("whole"), parts = tmp.filePath("parts");
        QCOMPARE(trainIn(c, whole).status, TrainOutcome::Status::Finished);
        QCOMPARE(trainIn(c, parts, nullptr, 17).status, TrainOutcome::Status::Cancelled);
        QCOMPARE(stepsOf(loadMechanisms(parts)), (std::vector<long long>{0, 5, 10, 15}));
        QFile torn(parts + "/mechanisms.csv");
        QVERIFY(torn.open(QIODevice::Append));
        torn.write("20,0,1,attention,0.1");  // a kill mid-row
        torn.close();
        QVERIFY(QFile::copy(parts + "/checkpoints/snapshots/step-000010.safetensors", parts + "/checkpoints/snapshots/step-000035.safetensors"));
        ResumePlan plan = planResume(parts);
        QCOMPARE(plan.fromStep, 17LL);  // where it stopped
        TrainControl go;
        std::vector<MechanismScores> told;
        TrainCallbacks cb;
        cb.mechanisms = [&](const MechanismScores& s) { told.push_back(s); };
        const TrainOutcome o = resumeTraining(plan, go, cb);
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        QCOMPARE(stepsOf(told), (std::vector<long long>{20, 25, 30, 35, 40}));
        QCOMPARE(stepsOf(loadMechanisms(parts)), (std::vector<long long>{0, 5, 10, 15, 20, 25, 30, 35, 40}));
        QCOMPARE(test::readAll(parts + "/mechanisms.csv"), test::readAll(whole + "/mechanisms.csv"));
        // the log-spaced ones as uninterrupted, the one left past the resume point gone (a lookup
        // forming right after the resume has its "before" at the resume point, 17)
        const long long formed = lookupFormsAt(loadMechanisms(whole));
        QCOMPARE(snapshotSteps(whole), expectedSnapshots({0, 5, 10, 20, 40}, loadMechanisms(whole), 5));
        std::set<long long> resumed = expectedSnapshots({0, 5, 10, 20, 40}, loadMechanisms(whole), 5);
        if (formed == 20) resumed.erase(15), resumed.insert(17);
        QCOMPARE(snapshotSteps(parts), resumed);
        QVERIFY(test::tensorBytes(parts + "/checkpoints/snapshots/step-000020.safetensors") ==
                test::tensorBytes(whole + "/checkpoints/snapshots/step-000020.safetensors"));
    }

    // A run without mechanisms.csv (mechanism_every 0, or a folder from before it existed) still
    // loads; asking for its scores names the file; a damaged file names its line; its snapshots
    // are still listed without notes.
    void oldAndDamagedFoldersAreClear()
    {
        QTemporaryDir tmp;
        ExperimentConfig c = scoredRun("transformer", 10, 0);
        const QString old = tmp.filePath("old");
        QCOMPARE(trainIn(c, old).status, TrainOutcome::Status::Finished);
        const RunRecord r = loadRun(old);
        QCOMPARE(int(r.metrics.size()), 1);
        QCOMPARE(r.status, QString("finished"));
        QVERIFY(runSnapshots(old).empty());
        try {
            loadMechanisms(old);
            QFAIL("loaded scores of a run without them");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("has no mechanisms.csv") && e.message().contains(QDir(old).absolutePath()), qPrintable(e.message()));
        }
        const QString damaged = tmp.filePath("damaged");
        c.train.mechanismEvery = 5;
        QCOMPARE(trainIn(c, damaged).status, TrainOutcome::Status::Finished);
        QByteArray text = test::readAll(damaged + "/mechanisms.csv");
        QVERIFY(test::writeAll(damaged + "/mechanisms.csv", text.replace("\n5,", "\n5,x,")));
        try {
            loadMechanisms(damaged);
            QFAIL("read a damaged file");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("mechanisms.csv: line ") && e.message().contains("scores in [0, 1]"), qPrintable(e.message()));
        }
        const std::vector<RunSnapshot> shots = runSnapshots(damaged);
        QVERIFY(shots.size() >= 2);
        for (const RunSnapshot& s : shots) QVERIFY(s.note.isEmpty() || s.note == "last");
        QVERIFY(test::writeAll(damaged + "/mechanisms.csv", "step,something,else\n0,1\n"));
        QVERIFY_THROWS_EXCEPTION(Error, loadMechanisms(damaged));
    }

    // The copy-tiny run (a two-layer Hard-ALiBi Transformer copying strings of 1-8 letters, 600
    // steps): its best lookup score starts near chance and ends well above it, at a head labelled
    // an n-gram lookup, and the run keeps the snapshots on each side of the step it formed.
    void lookupScoreRisesAsTheModelLearnsToCopy()
    {
        QTemporaryDir tmp;
        ExperimentConfig c = loadPreset("copy-tiny");
        c.train.evalEvery = 0;
        c.train.mechanismEvery = 25;
        c.task.evalSamples = 32;
        const QString dir = tmp.filePath("run");
        const TrainOutcome o = trainIn(c, dir);
        QVERIFY2(o.status == TrainOutcome::Status::Finished, qPrintable(o.message));
        QVERIFY2(o.finalCurve.stringAccuracyAt(8) >= 0.8, qPrintable(o.finalCurve.summary()));
        const std::vector<MechanismScores> s = loadMechanisms(dir);
        QCOMPARE(int(s.size()), c.train.steps / c.train.mechanismEvery + 1);
        const double start = s.front().bestLookup(), end = s.back().bestLookup();
        qInfo("best lookup score %.3f at step 0, %.3f at step %lld", start, end, s.back().step);
        QVERIFY2(start < 0.35, qPrintable(QString::number(start)));
        QVERIFY2(end >= 0.6 && end >= start + 0.3, qPrintable(QString::number(end)));
        const auto& heads = s.back().heads;
        const HeadScore& best = *std::max_element(heads.begin(), heads.end(), [](const HeadScore& a, const HeadScore& b) {
            return a.bestLookup() < b.bestLookup();
        });
        QVERIFY2(best.label.startsWith("n-gram lookup"), qPrintable(best.label));
        const long long formed = lookupFormsAt(s);
        QVERIFY(formed > 0);
        QStringList notes;
        for (const RunSnapshot& r : runSnapshots(dir)) notes << r.label();
        QVERIFY2(notes.contains(QString("step %1 (lookup forms)").arg(formed)) &&
                     notes.contains(QString("step %1 (before)").arg(formed - c.train.mechanismEvery)),
                 qPrintable(notes.join(" · ")));
    }
};

QTEST_GUILESS_MAIN(TestMechanisms)
#include "tst_mechanisms.moc"
