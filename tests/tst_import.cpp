// Importers against an independent reference: tests/data/make_import_refs.py (Debian's
// python3-torch) wrote tiny mamba_ssm and GPT-NeoX models (HuggingFace's class and the copy
// paper's NoPE / ALiBi / Hard-ALiBi classes) and the logits of its own plain-loop forward passes;
// the app must reproduce them to 1e-4 from every form of the file (safetensors in F32 / F16 /
// BF16, a sharded index, a torch.save zip holding a plain dict), and refuse the forms it does not
// read with a message that says what to do.
#include "base/error.h"
#include "base/io/checkpointinfo.h"
#include "base/io/importers.h"
#include "base/io/torchzip.h"
#include "core/model.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <random>

using namespace parrot;

namespace {

const QString kData = QStringLiteral(PARROT_TEST_DATA);

struct Refs {
    QJsonObject json;
    std::vector<int> tokens;
};

Refs readRefs(const QString& path)
{
    Refs r;
    r.json = QJsonDocument::fromJson(test::readAll(path)).object();
    for (const auto& t : r.json["tokens"].toArray()) r.tokens.push_back(t.toInt());
    return r;
}

// The largest absolute difference between the model's logits and the reference's.
double worstDifference(const Model& m, const Refs& refs, const QString& ref, double* scale)
{
    const int T = int(refs.tokens.size());
    const std::vector<float> got = m.logits(refs.tokens, 1, T);
    const QJsonArray want = refs.json[ref].toArray();
    if (want.size() != T || int(got.size()) != T * want[0].toArray().size()) return INFINITY;
    const int V = int(got.size()) / T;
    double worst = 0;
    *scale = 0;
    for (int t = 0; t < T; ++t)
        for (int v = 0; v < V; ++v) {
            const double w = want[t].toArray()[v].toDouble();
            worst = std::max(worst, std::abs(double(got[size_t(t) * V + v]) - w));
            *scale = std::max(*scale, std::abs(w));
        }
    return worst;
}

// Pickle pieces (protocol 2) for crafted torch.save archives.
QByteArray pstr(const QByteArray& s)
{
    QByteArray b("X");
    const quint32 n = quint32(s.size());
    b.append(char(n & 0xff)).append(char(n >> 8 & 0xff)).append(char(n >> 16 & 0xff)).append(char(n >> 24));
    return b + s;
}
QByteArray pint(int v) { return QByteArray("K") + char(v); }
// {name: a float tensor of `size` with `stride` on storage "0" of `numel` floats}
QByteArray tensorDictPickle(const QByteArray& name, const QList<int>& size, const QList<int>& stride, int numel)
{
    QByteArray sizes("("), strides("(");
    for (int s : size) sizes += pint(s);
    for (int s : stride) strides += pint(s);
    return QByteArray("\x80\x02}(", 4) + pstr(name) + "ctorch._utils\n_rebuild_tensor_v2\n((" + pstr("storage") +
           "ctorch\nFloatStorage\n" + pstr("0") + pstr("cpu") + pint(numel) + "tQ" + pint(0) + sizes + "t" + strides + "t" +
           QByteArray("\x89", 1) + "ccollections\nOrderedDict\n)RtRu.";
}

QByteArray floats(int n)
{
    QByteArray b;
    for (int i = 0; i < n; ++i) {
        const float f = float(i);
        b.append(reinterpret_cast<const char*>(&f), 4);
    }
    return b;
}

}  // namespace

class TestImport : public QObject {
    Q_OBJECT
private:
    Refs m_mamba, m_neox;

private slots:
    void initTestCase()
    {
        m_mamba = readRefs(kData + "/mamba_tiny/refs.json");
        m_neox = readRefs(kData + "/neox_tiny/refs.json");
        QVERIFY(m_mamba.tokens.size() > 4 && m_neox.tokens.size() > 4);
    }

    void logitsMatchTheReference_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("refs");
        QTest::addColumn<QString>("ref");
        QTest::newRow("mamba F32") << "mamba_tiny/model.safetensors" << "mamba" << "model.safetensors";
        QTest::newRow("mamba F16") << "mamba_tiny/model-f16.safetensors" << "mamba" << "model-f16.safetensors";
        QTest::newRow("mamba BF16") << "mamba_tiny/model-bf16.safetensors" << "mamba" << "model-bf16.safetensors";
        QTest::newRow("mamba sharded") << "mamba_tiny/sharded/model.safetensors.index.json" << "mamba" << "model.safetensors";
        QTest::newRow("mamba torch.save dict") << "mamba_tiny/pytorch_model.bin" << "mamba" << "model.safetensors";
        QTest::newRow("pythia safetensors") << "neox_tiny/pythia/model.safetensors" << "neox" << "pythia";
        QTest::newRow("pythia pytorch_model.bin") << "neox_tiny/pythia/pytorch_model.bin" << "neox" << "pythia";
        QTest::newRow("copy paper Hard-ALiBi") << "neox_tiny/hard_alibi/model.safetensors" << "neox" << "hard_alibi";
        QTest::newRow("copy paper ALiBi") << "neox_tiny/alibi/model.safetensors" << "neox" << "alibi";
        QTest::newRow("copy paper NoPE") << "neox_tiny/nope/model.safetensors" << "neox" << "nope";
        QTest::newRow("own Transformer torch.save dict") << "own_tiny/pytorch_model.bin" << "neox" << "pythia";
    }

    void logitsMatchTheReference()
    {
        QFETCH(QString, file);
        QFETCH(QString, refs);
        QFETCH(QString, ref);
        const Model m = Model::load(kData + "/" + file);
        double scale = 0;
        const double worst = worstDifference(m, refs == "mamba" ? m_mamba : m_neox, ref, &scale);
        qInfo("%s: largest difference %.2e (logits up to %.2f)", qPrintable(file), worst, scale);
        QVERIFY(scale > 0.1);  // the reference is not trivially small
        QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
    }

    // Each variant's configuration comes from its config.json, and the variants really differ:
    // the same weights give other logits under another class.
    // Checkpoints written by HuggingFace's own classes (save_pretrained of a random
    // GPTNeoXForCausalLM and MambaForCausalLM, tests/data/make_hf_refs.py): the logits at each
    // prompt's last position as transformers computed them.
    void huggingFaceClassesMatchTransformers_data()
    {
        QTest::addColumn<QString>("name");
        QTest::newRow("GPTNeoXForCausalLM") << "neox";
        QTest::newRow("MambaForCausalLM (the -hf layout)") << "mamba";
    }
    void huggingFaceClassesMatchTransformers()
    {
        QFETCH(QString, name);
        const Model m = Model::load(kData + "/hf_tiny/" + name + "/model.safetensors");
        QFile f(kData + "/hf_tiny/model_refs.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonArray cases = QJsonDocument::fromJson(f.readAll()).object()[name].toArray();
        QCOMPARE(cases.size(), 4);
        for (const auto c : cases) {
            std::vector<int> ids;
            for (const auto v : c.toObject()["ids"].toArray()) ids.push_back(v.toInt());
            const int T = int(ids.size());
            const std::vector<float> got = m.logits(ids, 1, T);
            const QJsonArray want = c.toObject()["last_logits"].toArray();
            const int V = int(want.size());
            QCOMPARE(int(got.size()), T * V);
            double worst = 0;
            for (int v = 0; v < V; ++v) worst = std::max(worst, std::abs(double(got[size_t(T - 1) * V + v]) - want[v].toDouble()));
            QVERIFY2(worst < 1e-4, qPrintable(QString("%1 tokens: logits differ by %2").arg(T).arg(worst)));
        }
    }

    // Greedy continuations (16 tokens) as transformers' generate() made them, with the KV cache or
    // the recurrent state.
    void huggingFaceGreedyContinuationsMatch_data() { huggingFaceClassesMatchTransformers_data(); }
    void huggingFaceGreedyContinuationsMatch()
    {
        QFETCH(QString, name);
        const Model m = Model::load(kData + "/hf_tiny/" + name + "/model.safetensors");
        QFile f(kData + "/hf_tiny/model_refs.json");
        QVERIFY(f.open(QIODevice::ReadOnly));
        for (const auto c : QJsonDocument::fromJson(f.readAll()).object()[name].toArray()) {
            std::vector<int> ids, want;
            for (const auto v : c.toObject()["ids"].toArray()) ids.push_back(v.toInt());
            for (const auto v : c.toObject()["greedy"].toArray()) want.push_back(v.toInt());
            QCOMPARE(m.generate(ids, int(want.size())), want);
        }
        QVERIFY_THROWS_EXCEPTION(Error, m.generate({}, 4));
        QVERIFY_THROWS_EXCEPTION(Error, m.generate({100000}, 4));
    }

    void gptNeoxConfigurations()
    {
        const Model pythia = Model::load(kData + "/neox_tiny/pythia/model.safetensors");
        const ModelConfig& p = pythia.config().model;
        QCOMPARE(p.kind, QString("transformer"));
        QCOMPARE(p.positions, QString("rope"));
        QCOMPARE(p.rotaryFraction, 0.5);
        QVERIFY(p.parallelResidual && !p.repeatPassDims && !p.tieEmbeddings);
        QCOMPARE(pythia.config().task.vocabSize, 26);  // 30 tokens: the copy task's 4 specials and 26 letters
        const ModelConfig h = Model::load(kData + "/neox_tiny/hard_alibi/model.safetensors").config().model;
        QCOMPARE(h.positions, QString("hard_alibi"));
        QCOMPARE(h.numMaskedHeads, 2);
        QVERIFY(h.repeatPassDims);
        const ModelConfig n = Model::load(kData + "/neox_tiny/nope/model.safetensors").config().model;
        QVERIFY(!n.parallelResidual);
        QCOMPARE(n.layerNormEps, 1e-4);
        for (const char* a : {"pythia", "hard_alibi", "alibi"})
            for (const char* b : {"hard_alibi", "alibi", "nope"}) {
                if (QString(a) == b) continue;
                const QJsonArray x = m_neox.json[a].toArray(), y = m_neox.json[b].toArray();
                double diff = 0;
                for (int t = 0; t < x.size(); ++t)
                    for (int v = 0; v < x[t].toArray().size(); ++v)
                        diff = std::max(diff, std::abs(x[t].toArray()[v].toDouble() - y[t].toArray()[v].toDouble()));
                QVERIFY2(diff > 1e-2, qPrintable(QString("%1 vs %2: %3").arg(a, b).arg(diff)));
            }
    }

    // Imported models evaluate and inspect like native ones.
    void importedModelsEvaluate()
    {
        for (const QString file : {"mamba_tiny/model.safetensors", "neox_tiny/pythia/pytorch_model.bin", "neox_tiny/hard_alibi/model.safetensors"}) {
            const auto r = test::runCli({"eval", "--checkpoint", kData + "/" + file, "--lengths", "2,3", "--samples", "8", "--json"});
            QVERIFY2(r.code == 0, qPrintable(r.err));
            const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
            QVERIFY2(!o.isEmpty(), qPrintable(r.out));
        }
        const auto info = test::runCli({"info", kData + "/mamba_tiny/model-bf16.safetensors", "--json"});
        QCOMPARE(info.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(info.out.toUtf8()).object();
        QCOMPARE(o["architecture"].toString(), QString("mamba_ssm"));
        QCOMPARE(o["tensors"].toArray().size(), 22);
        QCOMPARE(o["tensors"].toArray()[0].toObject()["dtype"].toString(), QString("BF16"));
        const auto neox = test::runCli({"info", kData + "/neox_tiny/pythia/pytorch_model.bin"});
        QCOMPARE(neox.code, 0);
        QVERIFY2(neox.out.contains("pytorch zip") && neox.out.contains("GPT-NeoX") && neox.out.contains("runs in the app: yes"),
                 qPrintable(neox.out));
        const CheckpointInfo hard = inspectCheckpoint(kData + "/neox_tiny/hard_alibi/model.safetensors");
        QVERIFY2(hard.recognised.contains("GPTNeoXHardAlibiForCausalLM") && hard.recognised.contains("2 masked heads"),
                 qPrintable(hard.recognised));
    }

    // torch.save's zip: strides followed, buffers of old HuggingFace files skipped, every kind of
    // tensor read in its dtype.
    void torchZipReader()
    {
        const SafetensorsFile f = readTorchZip(kData + "/neox_tiny/pythia/pytorch_model.bin");
        QCOMPARE(f.tensors.size(), 34);
        QCOMPARE(f.tensors["gpt_neox.layers.0.attention.bias"].dtype, QString("BOOL"));
        QCOMPARE(f.tensors["gpt_neox.layers.0.attention.masked_bias"].shape, std::vector<int64_t>{});
        // embed_out was saved as a transposed view of a transposed copy: the same values as the safetensors file
        const SafetensorsFile st = readSafetensors(kData + "/neox_tiny/pythia/model.safetensors");
        QCOMPARE(f.tensors["embed_out.weight"].data, st.tensors["embed_out.weight"].data);
        QCOMPARE(f.tensors["gpt_neox.embed_in.weight"].data, st.tensors["gpt_neox.embed_in.weight"].data);
        // a crafted transposed 2 x 3 view of 6 floats
        QTemporaryDir dir;
        const QString path = dir.filePath("t.bin");
        test::writeAll(path, test::storedZip({{"t/data.pkl", tensorDictPickle("w", {2, 3}, {1, 2}, 6)}, {"t/data/0", floats(6)}}));
        const SafetensorsFile t = readTorchZip(path);
        const std::vector<float> v = toFloat32(t.tensors["w"], "w");
        QCOMPARE(v, (std::vector<float>{0, 2, 4, 1, 3, 5}));
    }

    // info and the Inspect tab: a model's configuration lists only what its family has, and a file
    // of random bytes is one of an unknown format, said once, not a broken safetensors file.
    void infoShowsWhatAFileIs()
    {
        QTemporaryDir dir;
        ExperimentConfig mamba = test::smallConfig("mamba");
        QCOMPARE(mamba.model.positions, QString("hard_alibi"));  // saved with every field, Transformer ones too
        const QString mambaFile = dir.filePath("mamba.safetensors");
        Model::create(mamba).save(mambaFile);
        const auto info = test::runCli({"info", mambaFile, "--json"});
        QCOMPARE(info.code, 0);
        const QJsonObject model = QJsonDocument::fromJson(info.out.toUtf8()).object()["config"].toObject()["model"].toObject();
        QCOMPARE(model["kind"].toString(), QString("mamba"));
        for (const char* key : {"d_model", "layers", "d_state", "expand", "d_conv"}) QVERIFY2(model.contains(key), key);
        for (const char* key : {"positions", "heads", "num_masked_heads", "mlp_ratio", "rotary_fraction"}) QVERIFY2(!model.contains(key), key);
        QVERIFY(inspectCheckpoint(mambaFile).config["model"].toObject() == model);  // what the Inspect tab shows

        ExperimentConfig rope = test::smallConfig("transformer");
        rope.model.positions = "rope";
        rope.model.numMaskedHeads = 0;
        const QString ropeFile = dir.filePath("rope.safetensors");
        Model::create(rope).save(ropeFile);
        const QJsonObject ropeModel = inspectCheckpoint(ropeFile).config["model"].toObject();
        QVERIFY(ropeModel.contains("heads") && ropeModel.contains("rotary_fraction") && !ropeModel.contains("d_state"));
        QVERIFY(!ropeModel.contains("num_masked_heads"));  // Hard-ALiBi's only
        QCOMPARE(inspectCheckpoint(kData + "/../../resources/checkpoints/copy-hard-alibi.safetensors").config["model"].toObject()["num_masked_heads"].toInt(), 4);

        QByteArray noise(4096, 0);
        std::mt19937 rng(17);
        for (char& c : noise) c = char(rng() & 0xff);
        const QString noiseFile = dir.filePath("noise.safetensors");  // the name says nothing
        QVERIFY(test::writeAll(noiseFile, noise));
        const CheckpointInfo n = inspectCheckpoint(noiseFile);
        QCOMPARE(n.format, QString("unknown"));
        QVERIFY(!n.runnable);
        const auto text = test::runCli({"info", noiseFile});
        QCOMPARE(text.code, 2);
        QVERIFY2(text.out.contains("format: unknown") && text.out.contains("why not: not a format the app reads: its first bytes") &&
                     !text.out.contains("format: safetensors") && !text.out.contains("not a safetensors file"),
                 qPrintable(text.out));
        QCOMPARE(int(text.out.count("unknown")), 1);
    }

    // What it cannot read, it names, with what to do; and a file's own tensor names in the messages.
    void refusalsSayWhy()
    {
        QTemporaryDir dir;
        auto craft = [&](const QString& name, const QByteArray& bytes) {
            const QString path = dir.filePath(name);
            test::writeAll(path, bytes);
            return path;
        };
        const struct {
            QString path, says;
        } cases[] = {
            {kData + "/mamba_tiny/ordered_dict.bin", "re-save it as dict(state_dict)"},
            {craft("module.bin", test::storedZip({{"m/data.pkl", QByteArray("\x80\x02" "c__main__\nNet\nq\x00)\x81q\x01.", 23)}})),
             "pickles __main__.Net"},
            {craft("script.pt", test::storedZip({{"s/data.pkl", "\x80\x02}."}, {"s/constants.pkl", "\x80\x02)."}, {"s/code/m.py", "x"}})),
             "TorchScript"},
            {craft("compressed.bin", test::storedZip({{"c/data.pkl", "\x80\x02}."}}, 8)), "compressed"},
            {craft("past.bin", test::storedZip({{"p/data.pkl", tensorDictPickle("w", {8}, {1}, 4)}, {"p/data/0", floats(4)}})),
             "more elements than its storage"},
            {craft("stride.bin", test::storedZip({{"p/data.pkl", tensorDictPickle("w", {2, 2}, {1, 4}, 4)}, {"p/data/0", floats(4)}})),
             "reaches past its storage"},
            {craft("nostorage.bin", test::storedZip({{"p/data.pkl", tensorDictPickle("w", {2}, {1}, 2)}})), "lacks"},
            {craft("step.bin", test::storedZip({{"p/data.pkl", QByteArray("\x80\x02}") + pstr("step") + "K\x05s."}})),
             "entry 'step' is an integer, not a tensor"},
            // torch.save(model.state_dict()): an OrderedDict with its _metadata set by BUILD
            {craft("state_dict.bin", test::storedZip({{"o/data.pkl", QByteArray("\x80\x02" "ccollections\nOrderedDict\nq\x00)Rq\x01}q\x02" "b.", 38)}})),
             "re-save it as dict(state_dict)"},
            // a million nested tuples, and a list that holds itself: refused, freed without recursion
            {craft("deep.bin", test::storedZip({{"d/data.pkl", QByteArray("\x80\x02N", 3) + QByteArray(999'990, '\x85') + "."}})),
             "holds a tuple, not a dict"},
            {craft("cycle.bin", test::storedZip({{"c/data.pkl", QByteArray("\x80\x02]q\x00h\x00" "a.", 9)}})), "holds a list, not a dict"},
            {craft("values.bin", test::storedZip({{"v/data.pkl", QByteArray("\x80\x02", 2) + QByteArray(1'100'000, 'N') + "."}})),
             "not a state dict"},
            {craft("legacy.pt", QByteArray("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.", 15)), "legacy"},
            {craft("truncated.bin", test::readAll(kData + "/neox_tiny/pythia/pytorch_model.bin").left(30000)), "zip"},
        };
        for (const auto& c : cases) {
            try {
                Model::load(c.path);
                QFAIL(qPrintable(c.path + " loaded"));
            } catch (const Error& e) {
                QVERIFY2(e.message().contains(c.path) && e.message().contains(c.says), qPrintable(e.message()));
            }
            const CheckpointInfo info = inspectCheckpoint(c.path);
            QVERIFY2(!info.runnable && info.problem.contains(c.says), qPrintable(info.problem));
        }
        QCOMPARE(inspectCheckpoint(dir.filePath("module.bin")).recognised, QString("a whole pickled object (__main__.Net)"));
        QCOMPARE(inspectCheckpoint(dir.filePath("script.pt")).format, QString("torchscript"));
        QCOMPARE(inspectCheckpoint(dir.filePath("legacy.pt")).format, QString("pytorch legacy"));

        // no config.json beside the weights
        QFile::copy(kData + "/mamba_tiny/model.safetensors", dir.filePath("model.safetensors"));
        try {
            Model::load(dir.filePath("model.safetensors"));
            QFAIL("loaded without config.json");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("config.json"), qPrintable(e.message()));
        }
        // a config that does not match the weights: the shape mismatch, expected vs found
        QJsonObject c = QJsonDocument::fromJson(test::readAll(kData + "/mamba_tiny/config.json")).object();
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

        // GPT-NeoX: a tensor missing, one extra, one of the wrong shape — named as the file names them
        QDir().mkpath(dir.filePath("neox"));
        SafetensorsFile neox = readSafetensors(kData + "/neox_tiny/pythia/model.safetensors");
        neox.tensors.remove("gpt_neox.layers.1.mlp.dense_4h_to_h.bias");
        neox.tensors.insert("gpt_neox.layers.0.attention.extra", neox.tensors["gpt_neox.final_layer_norm.bias"]);
        neox.tensors["gpt_neox.layers.0.attention.dense.bias"].shape = {4, 4};
        writeSafetensors(dir.filePath("neox/model.safetensors"), neox);
        QJsonObject nc = QJsonDocument::fromJson(test::readAll(kData + "/neox_tiny/pythia/config.json")).object();
        test::writeAll(dir.filePath("neox/config.json"), QJsonDocument(nc).toJson());
        try {
            Model::load(dir.filePath("neox/model.safetensors"));
            QFAIL("loaded a damaged GPT-NeoX file");
        } catch (const Error& e) {
            const QString m = e.message();
            QVERIFY2(m.contains("1 missing tensor(s) the config's model has: gpt_neox.layers.1.mlp.dense_4h_to_h.bias"), qPrintable(m));
            QVERIFY2(m.contains("gpt_neox.layers.0.attention.dense.bias (expected [16], found [4, 4])"), qPrintable(m));
            QVERIFY2(m.contains("unexpected tensor(s)") && m.contains("gpt_neox.layers.0.attention.extra"), qPrintable(m));
        }
        // an activation or class the app does not have, by name
        const struct {
            QString key;
            QJsonValue value;
            QString says;
        } configs[] = {
            {"hidden_act", "relu", "hidden_act is \"relu\""},
            {"architectures", QJsonArray{"GPTNeoXMoEForCausalLM"}, "architectures names GPTNeoXMoEForCausalLM"},
            {"rotary_pct", 0.75, "odd number of dims"},
            {"vocab_size", 31, "config.json says [31, 16]"},
        };
        for (const auto& bad : configs) {
            QJsonObject o = nc;
            o[bad.key] = bad.value;
            test::writeAll(dir.filePath("neox/config.json"), QJsonDocument(o).toJson());
            try {
                Model::load(dir.filePath("neox/model.safetensors"));
                QFAIL(qPrintable("loaded with " + bad.key));
            } catch (const Error& e) {
                QVERIFY2(e.message().contains(bad.says), qPrintable(e.message()));
            }
        }
        // an unknown architecture
        SafetensorsFile unknown;
        unknown.tensors.insert("encoder.weight", neox.tensors["gpt_neox.final_layer_norm.bias"]);
        QDir().mkpath(dir.filePath("unknown"));
        writeSafetensors(dir.filePath("unknown/model.safetensors"), unknown);
        try {
            Model::load(dir.filePath("unknown/model.safetensors"));
            QFAIL("loaded an unknown architecture");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains("unknown architecture"), qPrintable(e.message()));
        }
    }
};

QTEST_GUILESS_MAIN(TestImport)

#include "tst_import.moc"
