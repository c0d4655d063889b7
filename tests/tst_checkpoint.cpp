// Safetensors checkpoints: the file layout, exact round trips, and malformed files
// rejected with a message that names the problem.
#include "base/error.h"
#include "base/io/safetensors.h"
#include "core/model.h"
#include "testutil.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

namespace {

std::vector<int> someTokens()
{
    return {1, 4, 5, 6, 2, 4, 5, 6, 3, 1, 7, 2, 7};
}

}  // namespace

class TestCheckpoint : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_good;  // a valid checkpoint written in initTestCase
    Model m_model;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    // Expects Model::load(file) to throw an Error whose message contains `expected`.
    void expectRejected(const QString& file, const QString& expected)
    {
        const QByteArray before = test::readAll(file);
        try {
            Model::load(file);
            QFAIL(qPrintable("accepted " + file));
        } catch (const Error& e) {
            QVERIFY2(e.message().contains(expected), qPrintable(e.message()));
            QVERIFY2(e.message().contains(QFileInfo(file).fileName()), qPrintable(e.message()));
        }
        QCOMPARE(test::readAll(file), before);  // never modified
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        ExperimentConfig c = test::tinyConfig();
        c.model.dModel = 32;
        m_model = Model::create(c);
        m_good = path("good.safetensors");
        m_model.save(m_good);
    }

    void fileFollowsTheSafetensorsLayout()
    {
        const QByteArray bytes = test::readAll(m_good);
        QVERIFY(bytes.size() > 8);
        quint64 n = 0;
        for (int i = 7; i >= 0; --i) n = (n << 8) | quint8(bytes[i]);
        QVERIFY(8 + n < quint64(bytes.size()));
        const QJsonObject header = QJsonDocument::fromJson(bytes.mid(8, qsizetype(n))).object();
        QVERIFY(!header.isEmpty());
        const QJsonObject meta = header["__metadata__"].toObject();
        QCOMPARE(meta["format"].toString(), QString("parrotscope"));
        QCOMPARE(meta["step"].toString(), QString("0"));
        QVERIFY(!meta["app_version"].toString().isEmpty());
        for (const char* key : {"model", "task", "train"})
            QVERIFY2(QJsonDocument::fromJson(meta[key].toString().toUtf8()).isObject(), key);
        QCOMPARE(QJsonDocument::fromJson(meta["model"].toString().toUtf8()).object()["d_model"].toInt(), 32);
        // every tensor is F32 with a byte range that matches its shape, ranges tile the data
        qint64 total = 0;
        for (auto it = header.begin(); it != header.end(); ++it) {
            if (it.key() == "__metadata__") continue;
            const QJsonObject t = it.value().toObject();
            QCOMPARE(t["dtype"].toString(), QString("F32"));
            qint64 count = 4;
            for (const auto d : t["shape"].toArray()) count *= d.toInteger();
            QCOMPARE(t["data_offsets"].toArray()[1].toInteger() - t["data_offsets"].toArray()[0].toInteger(), count);
            total += count;
        }
        QCOMPARE(qint64(bytes.size()) - 8 - qint64(n), total);
        QVERIFY(header.contains("wte.weight") && header.contains("h.1.attn.c_attn.weight") && header.contains("lm_head.weight"));
    }

    void roundTripGivesIdenticalLogits()
    {
        const Model loaded = Model::load(m_good);
        QCOMPARE(loaded.parameterCount(), m_model.parameterCount());
        QCOMPARE(toJson(loaded.config()), toJson(m_model.config()));
        const auto tokens = someTokens();
        QCOMPARE(loaded.logits(tokens, 1, int(tokens.size())), m_model.logits(tokens, 1, int(tokens.size())));
    }

    void saveIsAtomicAndReplacesOnlyWhenComplete()
    {
        const QString target = path("replace.safetensors");
        QVERIFY(test::writeAll(target, "old contents"));
        m_model.save(target);
        QVERIFY(test::readAll(target) == test::readAll(m_good));
        // no temporary files left beside it
        QCOMPARE(QDir(m_dir.path()).entryList({"replace*"}, QDir::Files).size(), 1);
        QVERIFY_THROWS_EXCEPTION(Error, m_model.save(path("no/such/folder/x.safetensors")));
    }

    void missingFileIsNamed() { expectRejected(path("absent.safetensors"), "no such file"); }

    void truncatedFileIsRejected()
    {
        const QString f = path("short.safetensors");
        QVERIFY(test::writeAll(f, QByteArray("\x10\x00\x00", 3)));
        expectRejected(f, "only 3 bytes");
    }

    void headerLengthPastTheEndIsRejected()
    {
        const QString f = path("longheader.safetensors");
        QByteArray b = test::readAll(m_good).left(200);
        b[5] = char(0x7f);  // a header length of petabytes
        QVERIFY(test::writeAll(f, b));
        expectRejected(f, "exceeds the file size");
    }

    void garbageHeaderIsRejected()
    {
        const QString f = path("garbage.safetensors");
        QByteArray b(8, '\0');
        b[0] = 12;
        b += "{not json!!}";
        QVERIFY(test::writeAll(f, b));
        expectRejected(f, "not a JSON object");
    }

    void cutDataIsRejected()
    {
        const QString f = path("cut.safetensors");
        const QByteArray full = test::readAll(m_good);
        QVERIFY(test::writeAll(f, full.left(full.size() - 100)));
        expectRejected(f, "lie outside");
    }

    void foreignSafetensorsIsNamed()
    {
        SafetensorsFile s;
        s.tensors.insert("weight", TensorRecord{"F32", {2}, QByteArray(8, '\0'), {}, {}});
        const QString f = path("foreign.safetensors");
        writeSafetensors(f, s);
        expectRejected(f, "not a Parrotscope checkpoint");
    }

    void shapeMismatchIsNamed()
    {
        SafetensorsFile s = readSafetensors(m_good);
        TensorRecord& t = s.tensors["wte.weight"];
        t.shape = {t.shape[0] / 2, t.shape[1] * 2};
        const QString f = path("shape.safetensors");
        writeSafetensors(f, s);
        expectRejected(f, "wrong shape: wte.weight (expected [30, 32], found [15, 64])");
    }

    void missingAndExtraTensorsAreNamed()
    {
        SafetensorsFile s = readSafetensors(m_good);
        s.tensors.remove("h.0.mlp.c_fc.bias");
        const QString f = path("missing.safetensors");
        writeSafetensors(f, s);
        expectRejected(f, "1 missing tensor(s) the config's model has: h.0.mlp.c_fc.bias");

        s = readSafetensors(m_good);
        s.tensors.insert("h.9.attn.c_attn.weight", TensorRecord{"F32", {1}, QByteArray(4, '\0'), {}, {}});
        const QString g = path("extra.safetensors");
        writeSafetensors(g, s);
        expectRejected(g, "unexpected tensor(s), not part of the model its config describes: h.9.attn.c_attn.weight");
    }

    void invalidConfigInMetadataIsNamed()
    {
        SafetensorsFile s = readSafetensors(m_good);
        s.metadata["model"] = R"({"layers": 2, "depth": 7})";
        const QString f = path("config.safetensors");
        writeSafetensors(f, s);
        expectRejected(f, "model.depth: unknown key");
    }

    void nonFiniteWeightsAreNamed()
    {
        SafetensorsFile s = readSafetensors(m_good);
        QByteArray& data = s.tensors["ln_f.weight"].data;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        memcpy(data.data(), &nan, sizeof nan);
        const QString f = path("nan.safetensors");
        writeSafetensors(f, s);
        expectRejected(f, "NaN or infinite");
    }

    void overlappingOffsetsAreRejected()
    {
        // Two tensors claiming the same bytes, written by hand.
        const QByteArray json = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
        QByteArray b(8, '\0');
        b[0] = char(json.size());
        b += json + QByteArray(4, '\0');
        const QString f = path("overlap.safetensors");
        QVERIFY(test::writeAll(f, b));
        expectRejected(f, "overlap");
    }

    // A folder is read as a HuggingFace model folder: without weights it names what it lacks.
    void aFolderWithoutWeightsIsNotACheckpoint() { expectRejected(m_dir.path(), "no weights in this folder"); }
};

QTEST_GUILESS_MAIN(TestCheckpoint)
#include "tst_checkpoint.moc"
