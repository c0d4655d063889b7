// Importers against an independent reference: tests/data/make_import_refs.py (Debian's
// python3-torch) wrote a tiny mamba_ssm MambaLMHeadModel and the logits of its own plain-loop
// forward pass; the app must reproduce them to 1e-4 from every form of the file, and refuse the
// forms it does not read with a message that says what to do.
#include "error.h"
#include "io/checkpointinfo.h"
#include "model.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

namespace {

const QString kData = QStringLiteral(PARROT_TEST_DATA "/mamba_tiny");

}  // namespace

class TestImport : public QObject {
    Q_OBJECT
private:
    QJsonObject m_refs;
    std::vector<int> m_tokens;

private slots:
    void initTestCase()
    {
        m_refs = QJsonDocument::fromJson(test::readAll(kData + "/refs.json")).object();
        for (const auto& t : m_refs["tokens"].toArray()) m_tokens.push_back(t.toInt());
        QVERIFY(m_tokens.size() > 4);
    }

    void mambaSsmLogitsMatchTheReference_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("ref");
        QTest::newRow("F32") << "model.safetensors" << "model.safetensors";
        QTest::newRow("F16") << "model-f16.safetensors" << "model-f16.safetensors";
        QTest::newRow("BF16") << "model-bf16.safetensors" << "model-bf16.safetensors";
        QTest::newRow("sharded") << "sharded/model.safetensors.index.json" << "model.safetensors";
    }

    void mambaSsmLogitsMatchTheReference()
    {
        QFETCH(QString, file);
        QFETCH(QString, ref);
        const Model m = Model::load(kData + "/" + file);
        QCOMPARE(m.config().model.kind, QString("mamba"));
        QCOMPARE(m.config().model.dModel, 16);
        QCOMPARE(m.config().model.layers, 2);
        QCOMPARE(m.config().model.dState, 4);
        const int T = int(m_tokens.size());
        const std::vector<float> got = m.logits(m_tokens, 1, T);
        const QJsonArray want = m_refs[ref].toArray();
        QCOMPARE(want.size(), T);
        const int V = int(got.size()) / T;
        QCOMPARE(V, want[0].toArray().size());  // 30 padded to 32
        double worst = 0, scale = 0;
        for (int t = 0; t < T; ++t)
            for (int v = 0; v < V; ++v) {
                const double w = want[t].toArray()[v].toDouble();
                worst = std::max(worst, std::abs(double(got[size_t(t) * V + v]) - w));
                scale = std::max(scale, std::abs(w));
            }
        qInfo("%s: largest difference %.2e (logits up to %.2f)", qPrintable(file), worst, scale);
        QVERIFY(scale > 0.1);  // the reference is not trivially small
        QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
    }

    // An imported model evaluates like a native one (the copy task with its vocabulary).
    void importedModelsEvaluate()
    {
        const auto r = test::runCli({"eval", "--checkpoint", kData + "/model.safetensors", "--lengths", "2,3", "--samples", "8", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("string_accuracy") || r.out.contains("stringAccuracy") || r.out.contains("lengths"));
        const auto info = test::runCli({"info", kData + "/model-bf16.safetensors", "--json"});
        QCOMPARE(info.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(info.out.toUtf8()).object();
        QCOMPARE(o["architecture"].toString(), QString("mamba_ssm"));
        QCOMPARE(o["tensors"].toArray().size(), 22);
        QCOMPARE(o["tensors"].toArray()[0].toObject()["dtype"].toString(), QString("BF16"));
    }

    // What it cannot read yet, it names, with what to do.
    void refusalsSayWhy()
    {
        const struct {
            QString file, says;
        } cases[] = {
            {"pytorch_model.bin", "convert it to safetensors"},
            {"ordered_dict.bin", "dict(state_dict)"},
        };
        for (const auto& c : cases) {
            try {
                Model::load(kData + "/" + c.file);
                QFAIL(qPrintable(c.file + " loaded"));
            } catch (const Error& e) {
                QVERIFY2(e.message().contains(c.file), qPrintable(e.message()));
            }
            const CheckpointInfo info = inspectCheckpoint(kData + "/" + c.file);
            QVERIFY2(info.problem.contains(c.says), qPrintable(info.problem));
        }
        QTemporaryDir dir;
        // no config.json beside the weights
        QFile::copy(kData + "/model.safetensors", dir.filePath("model.safetensors"));
        try {
            Model::load(dir.filePath("model.safetensors"));
            QFAIL("loaded without config.json");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("config.json"), qPrintable(e.message()));
        }
        // a config that does not match the weights: the shape mismatch, expected vs found
        QJsonObject c = QJsonDocument::fromJson(test::readAll(kData + "/config.json")).object();
        QJsonObject ssm = c["ssm_cfg"].toObject();
        ssm["d_state"] = 8;
        c["ssm_cfg"] = ssm;
        test::writeAll(dir.filePath("config.json"), QJsonDocument(c).toJson());
        try {
            Model::load(dir.filePath("model.safetensors"));
            QFAIL("loaded with a wrong d_state");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("wrong shape") && e.message().contains("A_log (expected [32, 8], found [32, 4])"),
                     qPrintable(e.message()));
        }
        c["ssm_cfg"] = QJsonObject{{"layer", "Mamba2"}};
        test::writeAll(dir.filePath("config.json"), QJsonDocument(c).toJson());
        QVERIFY_THROWS_EXCEPTION(Error, Model::load(dir.filePath("model.safetensors")));
    }
};

QTEST_GUILESS_MAIN(TestImport)
#include "tst_import.moc"
