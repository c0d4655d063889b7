// Loading never trusts a file: every format the app tells apart gets its own clear message, half
// precision loads, sharded indexes are followed, and 5,000+ mutated files (truncations, bit flips,
// bad JSON, huge or negative lengths, overlapping or out-of-range offsets, wrong dtypes) neither
// crash nor hang `inspectCheckpoint` and `Model::load`: each either loads or throws parrot::Error
// with a message.
#include "base/error.h"
#include "base/io/checkpointinfo.h"
#include "base/io/safetensors.h"
#include "core/model.h"
#include "fuzzmutations.h"
#include "testutil.h"

#include <QDir>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>

#include <bit>
#include <cmath>
#include <random>

using namespace parrot;

namespace {

const QString kData = QStringLiteral(PARROT_TEST_DATA);

}  // namespace

class TestFuzz : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString m_good;

    QString path(const QString& name) const { return m_dir.filePath(name); }

    // A mutated file through both readers: the inspector never throws for a file's contents and
    // explains a refusal; Model::load loads it or throws parrot::Error with a message. Returns
    // what went wrong, "" when nothing did.
    static QString readBoth(const QString& p, const QString& what, int& loaded, int& refused)
    {
        try {
            const CheckpointInfo info = inspectCheckpoint(p);
            if (!info.runnable && info.problem.isEmpty()) return "inspectCheckpoint refused without a reason: " + what;
        } catch (const std::exception& e) {
            return QString("inspectCheckpoint threw on %1: %2").arg(what, e.what());
        }
        try {
            Model::load(p);
            ++loaded;
        } catch (const Error& e) {
            if (e.message().trimmed().isEmpty()) return "Model::load refused without a message: " + what;
            ++refused;
        } catch (const std::exception& e) {
            return QString("Model::load threw a non-parrot exception on %1: %2").arg(what, e.what());
        }
        return {};
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_good = path("good.safetensors");
        Model::create(test::tinyConfig()).save(m_good);
    }

    // F16, BF16 and F64 tensors are converted on load; the logits stay within their precision.
    void halfPrecisionLoads()
    {
        const Model original = Model::load(m_good);
        const std::vector<int> tokens{1, 4, 5, 6, 2, 4, 5};
        const std::vector<float> want = original.logits(tokens, 1, 7);
        for (const QString dtype : {"F16", "BF16", "F64"}) {
            SafetensorsFile f = readSafetensors(m_good);
            for (TensorRecord& t : f.tensors) {
                const std::vector<float> v = toFloat32(t, "t");
                QByteArray data;
                for (float x : v) {
                    if (dtype == "F64") {
                        const double d = x;
                        data.append(reinterpret_cast<const char*>(&d), 8);
                    } else if (dtype == "BF16") {
                        const uint32_t bits = std::bit_cast<uint32_t>(x);
                        const uint16_t b = uint16_t((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);  // round to nearest even
                        data.append(reinterpret_cast<const char*>(&b), 2);
                    } else {
                        // float -> half for the small values of a fresh model: normal range only
                        const uint32_t bits = std::bit_cast<uint32_t>(x);
                        const int e = int((bits >> 23) & 0xff) - 127 + 15;
                        uint16_t h = uint16_t((bits >> 16) & 0x8000);
                        if (e > 0 && e < 31) h |= uint16_t(e << 10 | ((bits >> 13) & 0x3ff));
                        data.append(reinterpret_cast<const char*>(&h), 2);
                    }
                }
                t.dtype = dtype;
                t.data = data;
            }
            const QString p = path("half-" + dtype + ".safetensors");
            writeSafetensors(p, f);
            const std::vector<float> got = Model::load(p).logits(tokens, 1, 7);
            double worst = 0;
            for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, double(std::abs(got[i] - want[i])));
            qInfo("%s: largest logit difference %.2e", qPrintable(dtype), worst);
            QVERIFY2(worst < (dtype == "F64" ? 1e-6 : 5e-2), qPrintable(dtype));
        }
        QCOMPARE(halfToFloat(0x3c00), 1.0f);
        QCOMPARE(halfToFloat(0xc000), -2.0f);
        QCOMPARE(halfToFloat(0x0001), std::ldexp(1.0f, -24));  // the smallest subnormal
        QVERIFY(std::isinf(halfToFloat(0x7c00)));
        QCOMPARE(bfloat16ToFloat(0x3f80), 1.0f);
        // integers are not weights
        SafetensorsFile f = readSafetensors(m_good);
        f.tensors.first().dtype = "I32";
        const QString p = path("ints.safetensors");
        writeSafetensors(p, f);
        try {
            Model::load(p);
            QFAIL("loaded integer weights");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("I32") && e.message().contains(f.tensors.firstKey()), qPrintable(e.message()));
        }
    }

    // The inspector reads what a file is: ours, sharded, a PyTorch zip of each kind, TorchScript,
    // the legacy format, a mamba_ssm or GPT-NeoX state dict; each refusal says why and what to do.
    void everyFormatIsToldApart()
    {
        CheckpointInfo ours = inspectCheckpoint(m_good);
        QCOMPARE(ours.format, QString("safetensors"));
        QCOMPARE(ours.architecture, QString("parrotscope"));
        QVERIFY(ours.runnable);
        QVERIFY(ours.problem.isEmpty());
        const SafetensorsFile good = readSafetensors(m_good);
        QCOMPARE(int(ours.tensors.size()), int(good.tensors.size()));
        // statistics: the embedding is random, a fresh norm's weight is all ones
        bool randomSeen = false, onesSeen = false;
        for (const TensorSummary& t : ours.tensors) {
            randomSeen = randomSeen || (t.name.contains("wte") && t.std > 0.01 && t.min < 0 && t.max > 0);
            onesSeen = onesSeen || (t.name.contains("ln") && t.name.endsWith("weight") && t.mean == 1 && t.std == 0);
        }
        QVERIFY(randomSeen);
        QVERIFY(onesSeen);

        // sharded: two shards and an index
        SafetensorsFile a, b;
        int i = 0;
        QJsonObject map;
        for (auto it = good.tensors.begin(); it != good.tensors.end(); ++it, ++i) {
            (i % 2 ? a : b).tensors.insert(it.key(), it.value());
            map.insert(it.key(), i % 2 ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors");
        }
        writeSafetensors(path("model-00001-of-00002.safetensors"), a);
        writeSafetensors(path("model-00002-of-00002.safetensors"), b);
        const QString index = path("model.safetensors.index.json");
        test::writeAll(index, QJsonDocument(QJsonObject{{"metadata", QJsonObject{}}, {"weight_map", map}}).toJson());
        const CheckpointInfo sharded = inspectCheckpoint(index);
        QCOMPARE(sharded.format, QString("safetensors index"));
        QCOMPARE(int(sharded.tensors.size()), int(good.tensors.size()));
        map.insert("ghost.weight", "model-00001-of-00002.safetensors");
        test::writeAll(index, QJsonDocument(QJsonObject{{"weight_map", map}}).toJson());
        QVERIFY(inspectCheckpoint(index).problem.contains("ghost.weight"));

        // names tell the architecture
        SafetensorsFile mamba;
        mamba.tensors.insert("backbone.layers.0.mixer.A_log", good.tensors.first());
        writeSafetensors(path("mamba.safetensors"), mamba);
        QCOMPARE(inspectCheckpoint(path("mamba.safetensors")).architecture, QString("mamba_ssm"));
        SafetensorsFile neox;
        neox.tensors.insert("gpt_neox.layers.0.attention.query_key_value.weight", good.tensors.first());
        writeSafetensors(path("neox.safetensors"), neox);
        QCOMPARE(inspectCheckpoint(path("neox.safetensors")).architecture, QString("gpt_neox"));

        const struct {
            QString name;
            QByteArray bytes;
            QString format, says;
        } cases[] = {
            {"ordered.bin", test::storedZip({{"archive/data.pkl", QByteArray("\x80\x02" "ccollections\nOrderedDict\nq\x00)Rq\x01.", 34)}}), "pytorch zip", "dict(state_dict)"},
            {"plain.bin", test::storedZip({{"archive/data.pkl", QByteArray("\x80\x02}q\x00.", 6)}}), "pytorch zip", "unknown architecture"},
            {"module.bin", test::storedZip({{"archive/data.pkl", QByteArray("\x80\x02" "c__main__\nNet\nq\x00)\x81q\x01.", 23)}}), "pytorch zip", "__main__.Net"},
            {"script.pt", test::storedZip({{"archive/constants.pkl", "x"}, {"archive/code/__torch__/m.py", "def f(): pass"}}), "torchscript", "never runs"},
            {"legacy.pt", QByteArray("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15), "pytorch legacy", "legacy"},
            {"tiny.bin", QByteArray("abc"), "unknown", "too short"},
            {"index.json", QByteArray("{\"weight_map\": {\"a\": \"../../etc/passwd\"}}"), "safetensors index", "beside the index"},
        };
        for (const auto& c : cases) {
            test::writeAll(path(c.name), c.bytes);
            const CheckpointInfo info = inspectCheckpoint(path(c.name));
            QVERIFY2(info.format == c.format, qPrintable(c.name + ": " + info.format));
            QVERIFY2(info.problem.contains(c.says), qPrintable(c.name + ": " + info.problem));
            QVERIFY(!info.runnable);
            // and the loader refuses it with a message too
            QVERIFY_THROWS_EXCEPTION(Error, Model::load(path(c.name)));
        }
        QVERIFY_THROWS_EXCEPTION(Error, inspectCheckpoint(path("does-not-exist.safetensors")));
    }

    // 5,000+ mutated files: no crash, no hang, a clear error each time it does not load.
    void mutatedFilesNeverCrashTheLoaders()
    {
        const QByteArray good = test::readAll(m_good);
        std::mt19937_64 rng(20261129);
        int loaded = 0, refused = 0;
        QElapsedTimer slowest;
        qint64 worstMs = 0;
        const int kMutations = 5200;
        for (int n = 0; n < kMutations; ++n) {
            QString what;
            const QByteArray f = test::mutate(good, n, rng, what);
            const QString p = path(QString("fuzz-%1.safetensors").arg(n % 16));
            QVERIFY(test::writeAll(p, f));
            slowest.start();
            const QString fault = readBoth(p, what, loaded, refused);
            QVERIFY2(fault.isEmpty(), qPrintable(fault));
            worstMs = std::max(worstMs, slowest.elapsed());
        }
        qInfo("%d mutated files: %d loaded (harmless mutations), %d refused with a message; slowest %lld ms", kMutations, loaded,
              refused, worstMs);
        QCOMPARE(loaded + refused, kMutations);
        QVERIFY(refused > kMutations / 2);
        QVERIFY2(worstMs < 20000, "a file took over 20 s: a hang");
    }

    // The same for torch.save zips (mutations aimed at the whole file, its pickle, and its central
    // directory in turn) and for a sharded index: each loads or is refused with a message.
    void mutatedZipsAndIndexesNeverCrashTheLoaders()
    {
        QDir().mkpath(path("zip"));
        QFile::copy(kData + "/neox_tiny/pythia/config.json", path("zip/config.json"));
        const QByteArray good = test::readAll(kData + "/neox_tiny/pythia/pytorch_model.bin");
        QVERIFY(good.size() > 1000);
        const qint64 pickle = good.indexOf(QByteArray("\x80\x02", 2)), pickleEnd = good.indexOf("PK\x03\x04", pickle);
        const qint64 directory = good.indexOf("PK\x01\x02");
        QVERIFY(pickle > 0 && pickleEnd > pickle && directory > pickleEnd);
        QDir().mkpath(path("index"));
        for (const QString f : {"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
            QFile::copy(kData + "/mamba_tiny/sharded/" + f, path("index/" + f));
        const QByteArray index = test::readAll(kData + "/mamba_tiny/sharded/model.safetensors.index.json");
        std::mt19937_64 rng(20261130);
        int loaded = 0, refused = 0;
        qint64 worstMs = 0;
        QElapsedTimer timer;
        const int kZips = 3000, kIndexes = 300;
        for (int n = 0; n < kZips + kIndexes; ++n) {
            QString what;
            QString p;
            if (n < kZips) {
                const qint64 lo = n % 3 == 0 ? 0 : n % 3 == 1 ? pickle : directory, hi = n % 3 == 1 ? pickleEnd : good.size();
                p = path("zip/pytorch_model.bin");
                QVERIFY(test::writeAll(p, test::mutateBytes(good, n / 3, rng, what, lo, hi)));
            } else {
                p = path("index/model.safetensors.index.json");
                QVERIFY(test::writeAll(p, test::mutateBytes(index, n, rng, what)));
            }
            timer.start();
            const QString fault = readBoth(p, what, loaded, refused);
            QVERIFY2(fault.isEmpty(), qPrintable(fault));
            worstMs = std::max(worstMs, timer.elapsed());
        }
        qInfo("%d mutated zips and indexes: %d loaded (harmless mutations), %d refused with a message; slowest %lld ms",
              kZips + kIndexes, loaded, refused, worstMs);
        QVERIFY(refused > (kZips + kIndexes) / 3);
        QVERIFY2(worstMs < 20000, "a file took over 20 s: a hang");
    }
};

QTEST_GUILESS_MAIN(TestFuzz)
#include "tst_fuzz.moc"
