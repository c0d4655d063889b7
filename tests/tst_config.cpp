#include "base/config.h"
#include "base/configfields.h"
#include "base/error.h"
#include "base/presets.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>

using namespace parrot;

class TestConfig : public QObject {
    Q_OBJECT
private slots:
    void defaultsAreValid()
    {
        QVERIFY2(validate(ExperimentConfig{}).isEmpty(), qPrintable(validate(ExperimentConfig{}).join("; ")));
    }

    void everyPresetLoadsAndValidates()
    {
        const QStringList names = presetNames();
        QVERIFY(names.contains(defaultPresetName()));
        QVERIFY(names.size() >= 3);
        for (const QString& n : names) {
            const ExperimentConfig c = loadPreset(n);
            QCOMPARE(c.name, n);
            QVERIFY2(!c.description.isEmpty(), qPrintable(n));
            QVERIFY(validate(c).isEmpty());
        }
    }

    void jsonRoundTripIsExact()
    {
        ExperimentConfig c = loadPreset("copy-nope");
        c.task.evalLengths = {3, 7, 11};
        c.train.lr = 0.00123;
        c.model.tieEmbeddings = true;
        const QJsonObject once = toJson(c);
        const QJsonObject twice = toJson(experimentFromJson(once));
        QCOMPARE(twice, once);
        QCOMPARE(once["task"].toObject()["eval_lengths"].toArray().size(), 3);
    }

    void partialObjectKeepsDefaults()
    {
        const ExperimentConfig c = experimentFromJson(QJsonObject{{"model", QJsonObject{{"layers", 3}}}});
        QCOMPARE(c.model.layers, 3);
        QCOMPARE(c.model.dModel, ModelConfig{}.dModel);
    }

    void unknownKeysAreErrorsNamingTheKey_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("key");
        QTest::newRow("top") << QByteArray(R"({"sead": 3})") << "sead";
        QTest::newRow("task") << QByteArray(R"({"task": {"max_length": 3}})") << "task.max_length";
        QTest::newRow("model") << QByteArray(R"({"model": {"n_layer": 3}})") << "model.n_layer";
        QTest::newRow("train") << QByteArray(R"({"train": {"learning_rate": 0.1}})") << "train.learning_rate";
    }
    void unknownKeysAreErrorsNamingTheKey()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, key);
        try {
            experimentFromJson(QJsonDocument::fromJson(json).object(), "x.json");
            QFAIL("accepted an unknown key");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains(key) && e.message().contains("unknown key") && e.message().startsWith("x.json"),
                     qPrintable(e.message()));
        }
    }

    void wrongTypesAreErrorsNamingTheKey_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<QString>("expected");
        QTest::newRow("string for int") << QByteArray(R"({"model": {"layers": "two"}})") << "model.layers: expected an integer";
        QTest::newRow("fraction for int") << QByteArray(R"({"task": {"max_len": 2.5}})") << "task.max_len: expected an integer";
        QTest::newRow("number for string") << QByteArray(R"({"train": {"schedule": 1}})") << "train.schedule: expected a string";
        QTest::newRow("list item") << QByteArray(R"({"task": {"eval_lengths": [1, "x"]}})") << "task.eval_lengths[1]";
        QTest::newRow("section not object") << QByteArray(R"({"model": 3})") << "model: expected an object";
        QTest::newRow("bool") << QByteArray(R"({"model": {"tie_embeddings": 1}})") << "model.tie_embeddings: expected a boolean";
    }
    void wrongTypesAreErrorsNamingTheKey()
    {
        QFETCH(QByteArray, json);
        QFETCH(QString, expected);
        QVERIFY_THROWS_EXCEPTION(Error, experimentFromJson(QJsonDocument::fromJson(json).object()));
        try {
            experimentFromJson(QJsonDocument::fromJson(json).object());
        } catch (const Error& e) {
            QVERIFY2(e.message().contains(expected), qPrintable(e.message()));
        }
    }

    void invalidValuesAreNamed()
    {
        ExperimentConfig c;
        c.task.maxLen = 40;  // needs 83 tokens, context is 64
        c.model.heads = 6;   // 128 is not a multiple of 6
        const QStringList p = validate(c);
        QCOMPARE(p.size(), 2);
        QVERIFY(p[0].startsWith("task.context_len"));
        QVERIFY(p[1].startsWith("model.d_model"));
        ExperimentConfig conv;  // a short convolution needs a window of two or more tokens
        conv.model.shortConv = 1;
        QCOMPARE(validate(conv), QStringList{"model.short_conv: expected 0 (none) or a width of 2..16, got 1"});
        conv.model.shortConv = 3;
        QVERIFY(validate(conv).isEmpty());
        // the mechanism scores' interval: 0 turns them off, below is named
        ExperimentConfig m;
        applyOverrides(m, {"train.mechanism_every=0"});
        QCOMPARE(m.train.mechanismEvery, 0);
        QCOMPARE(experimentFromJson(toJson(m)).train.mechanismEvery, 0);
        m.train.mechanismEvery = -5;
        QCOMPARE(validate(m), QStringList{"train.mechanism_every: expected >= 0 (0 = off), got -5"});
    }

    // A whole-number setting's range is its configfields.h entry: validate() accepts its ends and
    // names the value just outside them in the entry's words.
    void rangesComeFromTheFieldTable_data()
    {
        QTest::addColumn<QString>("key");
        for (const char* key : {"model.layers", "model.d_model", "model.d_state", "model.expand", "model.mamba_mlp_ratio",
                                "train.steps", "train.batch_size", "train.warmup_steps", "train.eval_every", "train.log_every"})
            QTest::newRow(key) << QString(key);
    }
    void rangesComeFromTheFieldTable()
    {
        QFETCH(QString, key);
        const IntField& f = intField(qPrintable(key));
        QVERIFY(f.formMax >= f.lo && f.formMax <= f.hi && *f.tip);
        auto problemsAt = [&](long long v) {
            ExperimentConfig c;
            applyOverride(c, key + "=" + QString::number(v));
            return validate(c);
        };
        const QString range = rangeProblem(f, f.lo - 1).section(", got", 0, 0);  // "KEY: expected LO..HI"
        QVERIFY2(range.startsWith(key + ": expected "), qPrintable(range));
        auto refusesAsOutOfRange = [&](long long v) {
            const QStringList p = problemsAt(v);
            return std::any_of(p.begin(), p.end(), [&](const QString& m) { return m.startsWith(range); });
        };
        QVERIFY(!refusesAsOutOfRange(f.lo));
        QVERIFY(problemsAt(f.lo - 1).contains(rangeProblem(f, f.lo - 1)));
        if (f.hi != kUnbounded) {
            QVERIFY(!refusesAsOutOfRange(f.hi));
            QVERIFY(problemsAt(f.hi + 1).contains(rangeProblem(f, f.hi + 1)));
        }
    }

    void overridesKeepTypes()
    {
        ExperimentConfig c;
        applyOverrides(c, {"model.layers=4", "task.max_len=30", "task.eval_lengths=10,20,60", "train.lr=3e-4",
                           "model.positions=nope", "model.tie_embeddings=true", "seed=9", "task.context_len=70", "task.eval_lengths=[10, 20, 60]"});
        QCOMPARE(c.model.layers, 4);
        QCOMPARE(c.task.maxLen, 30);
        QCOMPARE(c.task.evalLengths, (std::vector<int>{10, 20, 60}));
        QCOMPARE(c.train.lr, 3e-4);
        QCOMPARE(c.model.positions, QString("nope"));
        QVERIFY(c.model.tieEmbeddings);
        QCOMPARE(c.seed, 9);
        QCOMPARE(c.task.contextLen, 70);
    }

    // What a checkpoint or a run changed of its preset, as --set lines that give it back.
    void overridesBetweenGiveTheConfigBack()
    {
        const ExperimentConfig preset = loadPreset("copy-tiny");
        ExperimentConfig changed = preset;
        applyOverrides(changed, {"model.kind=mamba", "model.d_model=96", "train.lr=0.003", "task.eval_lengths=4,8,16", "seed=7"});
        changed.name = "another name";  // names and descriptions are not settings
        const QStringList sets = overridesBetween(preset, changed);
        QCOMPARE(sets, (QStringList{"seed=7", "task.eval_lengths=4,8,16", "model.kind=mamba", "model.d_model=96", "train.lr=0.003"}));
        ExperimentConfig back = preset;
        applyOverrides(back, sets);
        QVERIFY(overridesBetween(back, changed).isEmpty());
        QCOMPARE(toJson(back)["model"], toJson(changed)["model"]);
        QVERIFY(overridesBetween(preset, preset).isEmpty());
    }

    // A description whose measured outcome no longer holds says what changed instead.
    void changedDescriptionsDropTheMeasuredOutcome()
    {
        const QString d = "Copying with a Transformer. Measured on 2 cores: 96% at length 8.";
        QCOMPARE(describeChanged(d, {}), d);
        const QString shrunk = describeChanged(d, {"train.steps=60"});
        QVERIFY2(shrunk.startsWith("Copying with a Transformer. Changed: train.steps=60"), qPrintable(shrunk));
        QVERIFY2(!shrunk.contains("96%") && shrunk.contains("measured outcome"), qPrintable(shrunk));
        QCOMPARE(describeChanged("A sweep of mine.", {"seed=2"}), QString("A sweep of mine. Changed: seed=2."));
        QVERIFY(!describeChanged("Copying. Calibrated on 2 cores: 91% at step 800.", {"seed=2"}).contains("91%"));
    }

    void overridesValidateOnlyAtTheEnd()
    {
        ExperimentConfig c;
        // max_len 40 alone does not fit the 64-token context; the next override fixes it.
        applyOverrides(c, {"task.max_len=40", "task.context_len=128"});
        QCOMPARE(c.task.maxLen, 40);
        QVERIFY_THROWS_EXCEPTION(Error, applyOverrides(c, {"task.max_len=80"}));
    }

    void badOverridesNameTheKey_data()
    {
        QTest::addColumn<QString>("assignment");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown field") << "model.depth=3" << "model.depth: unknown key";
        QTest::newRow("unknown section") << "optim.lr=3" << "optim.lr: unknown key";
        QTest::newRow("not a number") << "model.layers=many" << "model.layers: expected a number";
        QTest::newRow("fraction for int") << "model.layers=2.5" << "model.layers: expected an integer";
        QTest::newRow("bad bool") << "model.tie_embeddings=maybe" << "model.tie_embeddings: expected true or false";
        QTest::newRow("no equals") << "model.layers" << "expected key=value";
        QTest::newRow("invalid value") << "model.positions=sinusoidal" << "model.positions";
    }
    void badOverridesNameTheKey()
    {
        QFETCH(QString, assignment);
        QFETCH(QString, expected);
        ExperimentConfig c;
        try {
            applyOverrides(c, {assignment});
            QFAIL("accepted a bad override");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains(expected), qPrintable(e.message()));
        }
    }

    void evaluationAlwaysIncludesTheLongestTrainingLength()
    {
        TaskConfig t;
        t.maxLen = 12;
        t.evalLengths = {40, 5, 20, 5};
        QCOMPARE(evaluationLengths(t), (std::vector<int>{5, 12, 20, 40}));
        t.evalLengths = {12};
        QCOMPARE(evaluationLengths(t), (std::vector<int>{12}));
    }

    void lengthListsParseOrNameTheField()
    {
        QCOMPARE(parseLengthList("10, 20 40,80", "--lengths"), (std::vector<int>{10, 20, 40, 80}));
        for (const char* bad : {"", "10,x", "0", "20000", "-3"}) {
            try {
                parseLengthList(bad, "--lengths");
                QFAIL(bad);
            } catch (const Error& e) {
                QVERIFY2(e.message().startsWith("--lengths: "), qPrintable(e.message()));
            }
        }
    }

    void configFilesAndRunConfigsLoad()
    {
        QTemporaryDir dir;
        const QString plain = dir.filePath("plain.json");
        ExperimentConfig c;
        c.model.layers = 3;
        QVERIFY(test::writeAll(plain, QJsonDocument(toJson(c)).toJson()));
        QCOMPARE(loadConfigFile(plain).model.layers, 3);

        const QString run = dir.filePath("run.json");
        QVERIFY(test::writeAll(run, QJsonDocument(QJsonObject{{"parrotscope_run", 1}, {"experiment", toJson(c)},
                                                              {"environment", QJsonObject{{"threads", 2}}}}).toJson()));
        QCOMPARE(loadConfigFile(run).model.layers, 3);

        const QString broken = dir.filePath("broken.json");
        QVERIFY(test::writeAll(broken, "{\"model\": {"));
        try {
            loadConfigFile(broken);
            QFAIL("accepted broken JSON");
        } catch (const Error& e) {
            QVERIFY(e.message().contains(broken) && e.message().contains("not valid JSON"));
        }
        try {
            loadConfigFile(dir.filePath("missing.json"));
            QFAIL("accepted a missing file");
        } catch (const Error& e) {
            QVERIFY(e.message().contains("no such file"));
        }
    }

    void unknownPresetIsNamed()
    {
        try {
            loadPreset("copy-everything");
            QFAIL("accepted an unknown preset");
        } catch (const Error& e) {
            QVERIFY(e.message().contains("copy-everything") && e.message().contains(defaultPresetName()));
        }
    }
};

QTEST_GUILESS_MAIN(TestConfig)
#include "tst_config.moc"
