// Pretrained language models: a HuggingFace folder loaded with its tokenizer (and everything a
// folder can get wrong), the memory-mapped safetensors reader, the copy paper's zero-shot tests
// (phone book, copy text, shuffled text: prompt layout and scoring) and the `generate` and
// `lm-eval` commands, on the tiny GPT-NeoX and Mamba folders that tests/data/make_hf_refs.py
// wrote with HuggingFace's own libraries.
#include "base/error.h"
#include "base/io/safetensors.h"
#include "base/tasks/taskcatalog.h"
#include "base/text/squad.h"
#include "core/eval/lmtests.h"
#include "core/text/languagemodel.h"
#include "core/train/trainer.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <set>

using namespace parrot;
using namespace parrot::test;

namespace {

QString fixture(const QString& name) { return QString(PARROT_TEST_DATA) + "/hf_tiny/" + name; }

// A writable copy of a fixture folder, to break.
QString copyFolder(const QString& from, const QString& to)
{
    QDir().mkpath(to);
    for (const QString& f : QDir(from).entryList(QDir::Files)) QFile::copy(from + "/" + f, to + "/" + f);
    return to;
}

QString errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.message();
    }
    return QString();
}

QJsonArray modelRefs(const QString& which)
{
    return QJsonDocument::fromJson(readAll(fixture("model_refs.json"))).object().value(which).toArray();
}

}  // namespace

class TestLmTests : public QObject {
    Q_OBJECT

private slots:
    void loadsBothFolders()
    {
        const LanguageModel neox = LanguageModel::load(fixture("neox"));
        QCOMPARE(neox.architecture, QString("GPT-NeoX"));
        QCOMPARE(neox.name, QString("neox"));
        QCOMPARE(neox.contextLength, 256);  // max_position_embeddings
        QCOMPARE(neox.model.config().task.vocabSize, 600);
        QVERIFY(neox.summary().contains("context 256 tokens"));
        const LanguageModel mamba = LanguageModel::load(fixture("mamba"));
        QCOMPARE(mamba.architecture, QString("Mamba"));
        QCOMPARE(mamba.contextLength, 0);
        QVERIFY(mamba.summary().contains("no context limit"));
        // per-tensor progress, and a cancel that stops the load
        int calls = 0, total = 0;
        LanguageModel::load(fixture("neox"), [&](int, int t) { ++calls, total = t; return true; });
        QCOMPARE(calls, total);
        QVERIFY(total > 10);
        QCOMPARE(errorOf([] { LanguageModel::load(fixture("neox"), [](int done, int) { return done < 3; }); }), QString("loading cancelled"));
    }

    // Every config variant transformers writes that the app's Transformer and Mamba express
    // (hf_tiny/variants, tests/data/make_hf_variant_refs.py): the last position's logits to 1e-4
    // and the greedy continuation token for token.
    void configVariantsMatchTransformers()
    {
        const QString dir = fixture("variants");
        const QJsonObject refs = QJsonDocument::fromJson(readAll(dir + "/variant_refs.json")).object();
        QCOMPARE(refs.size(), qsizetype(4));
        for (auto it = refs.begin(); it != refs.end(); ++it) {
            const LanguageModel lm = LanguageModel::load(dir + "/" + it.key());
            for (const QJsonValue v : it.value().toArray()) {
                const QJsonObject r = v.toObject();
                std::vector<int> ids, want;
                for (const QJsonValue id : r["ids"].toArray()) ids.push_back(id.toInt());
                for (const QJsonValue id : r["greedy"].toArray()) want.push_back(id.toInt());
                const QJsonArray last = r["last_logits"].toArray();
                const std::vector<float> logits = lm.model.logits(ids, 1, int(ids.size()));
                const size_t vocab = logits.size() / ids.size();
                QCOMPARE(vocab, size_t(last.size()));
                double worst = 0;
                for (size_t k = 0; k < vocab; ++k)
                    worst = std::max(worst, std::abs(double(logits[(ids.size() - 1) * vocab + k]) - last[qsizetype(k)].toDouble()));
                QVERIFY2(worst < 1e-4, qPrintable(QString("%1: logits differ by %2").arg(it.key()).arg(worst)));
                QCOMPARE(lm.model.generate(ids, int(want.size())), want);
            }
        }
        // what the architecture cannot express is refused by name
        QTemporaryDir t;
        const QString eps = copyFolder(dir + "/mamba-rank-bias", t.path() + "/eps");
        QJsonObject cfg = QJsonDocument::fromJson(readAll(eps + "/config.json")).object();
        cfg["layer_norm_epsilon"] = 1e-6;
        QVERIFY(writeAll(eps + "/config.json", QJsonDocument(cfg).toJson()));
        QVERIFY(errorOf([&] { LanguageModel::load(eps); }).contains("layer_norm_epsilon"));
    }

    // Text in, text out: the continuation of the reference prompts is what transformers generated.
    void generatesTheReferenceContinuations()
    {
        for (const QString which : {"neox", "mamba"}) {
            const LanguageModel lm = LanguageModel::load(fixture(which));
            for (const QJsonValue v : modelRefs(which)) {
                const QJsonObject r = v.toObject();
                std::vector<int> want;
                for (const QJsonValue id : r["greedy"].toArray()) want.push_back(id.toInt());
                const LanguageModel::Continuation c = lm.generate(r["prompt"].toString(), int(want.size()));
                std::vector<int> ids;
                for (const QJsonValue id : r["ids"].toArray()) ids.push_back(id.toInt());
                QCOMPARE(c.promptIds, ids);
                // stops early only on <|endoftext|>, which the references then also emitted there
                QVERIFY(std::equal(c.newIds.begin(), c.newIds.end(), want.begin()));
                QCOMPARE(c.stopped, c.newIds.size() < want.size());
                QCOMPARE(c.text, lm.tokenizer.decode(c.newIds, true));
            }
        }
    }

    void refusesBrokenFolders()
    {
        QTemporaryDir tmp;
        const QString t = tmp.path();
        QVERIFY(errorOf([&] { LanguageModel::load(t + "/nowhere"); }).contains("no such folder"));
        QVERIFY(errorOf([&] { LanguageModel::load(fixture("neox/config.json")); }).contains("is a file"));
        const QString noTok = copyFolder(fixture("neox"), t + "/no-tokenizer");
        QFile::remove(noTok + "/tokenizer.json");
        QVERIFY(errorOf([&] { LanguageModel::load(noTok); }).contains("no tokenizer.json"));
        const QString noConfig = copyFolder(fixture("neox"), t + "/no-config");
        QFile::remove(noConfig + "/config.json");
        QVERIFY(errorOf([&] { LanguageModel::load(noConfig); }).contains("no config.json"));
        const QString noWeights = copyFolder(fixture("neox"), t + "/no-weights");
        QFile::remove(noWeights + "/model.safetensors");
        QVERIFY(errorOf([&] { LanguageModel::load(noWeights); }).contains("no weights in this folder"));
        // a tokenizer of another type (WordPiece, as BERT's)
        const QString wordpiece = copyFolder(fixture("neox"), t + "/wordpiece");
        QJsonObject tok = QJsonDocument::fromJson(readAll(wordpiece + "/tokenizer.json")).object();
        QJsonObject model = tok["model"].toObject();
        model["type"] = "WordPiece";
        tok["model"] = model;
        QVERIFY(writeAll(wordpiece + "/tokenizer.json", QJsonDocument(tok).toJson()));
        QVERIFY(errorOf([&] { LanguageModel::load(wordpiece); }).contains("WordPiece"));
        // a tokenizer with more ids than the embedding has rows: another model's
        const QString bigger = copyFolder(fixture("neox"), t + "/bigger-vocab");
        tok = QJsonDocument::fromJson(readAll(bigger + "/tokenizer.json")).object();
        QJsonArray added = tok["added_tokens"].toArray();
        added.append(QJsonObject{{"id", 700}, {"content", "<|extra|>"}, {"single_word", false}, {"lstrip", false},
                                 {"rstrip", false}, {"normalized", false}, {"special", true}});
        tok["added_tokens"] = added;
        QVERIFY(writeAll(bigger + "/tokenizer.json", QJsonDocument(tok).toJson()));
        const QString msg = errorOf([&] { LanguageModel::load(bigger); });
        QVERIFY2(msg.contains("700") && msg.contains("600 rows"), qPrintable(msg));
        // an unknown architecture
        const QString other = copyFolder(fixture("neox"), t + "/llama");
        QJsonObject cfg = QJsonDocument::fromJson(readAll(other + "/config.json")).object();
        cfg["architectures"] = QJsonArray{"LlamaForCausalLM"};
        cfg["model_type"] = "llama";
        QVERIFY(writeAll(other + "/config.json", QJsonDocument(cfg).toJson()));
        QFile::rename(other + "/model.safetensors", other + "/m.bin");
        // (renamed weights: a llama folder's tensors would not be GPT-NeoX's either)
        QVERIFY(!errorOf([&] { LanguageModel::load(other); }).isEmpty());
        // a truncated weights file names the file
        const QString cut = copyFolder(fixture("neox"), t + "/truncated");
        QFile f(cut + "/model.safetensors");
        QVERIFY(f.resize(f.size() / 2));
        const QString m = errorOf([&] { LanguageModel::load(cut); });
        QVERIFY2(m.contains("model.safetensors"), qPrintable(m));
    }

    // A language model larger than the free memory is refused before anything is allocated,
    // naming what it needs and what there is.
    void refusesModelsLargerThanMemory()
    {
        ExperimentConfig c;
        c.task.kind = kTextTask;
        c.task.vocabSize = 1 << 24;
        c.model.dModel = 8192;  // a 16M x 8192 embedding alone: 550 GB of float32
        c.model.heads = 8;
        c.model.numMaskedHeads = 0;
        c.model.layers = 1;
        const QString msg = errorOf([&] { Model::create(c); });
        QVERIFY2(msg.contains("too large") && msg.contains("as float32 weights") && msg.contains("GB of memory available"), qPrintable(msg));
    }

    // The same config held in 16 bits needs half: the guard counts what the chosen dtype takes.
    void memoryGuardCountsTheDtype()
    {
        const LanguageModel lm = LanguageModel::load(fixture("neox"));
        const ExperimentConfig& c = lm.model.config();
        const double params = double(lm.model.parameterCount());
        const double available = params * 3.0 / 0.8;  // 3 bytes a parameter: float32 does not fit, 16 bits do
        const QString f32 = Model::memoryProblem(c, available, 4);
        QVERIFY2(f32.contains("as float32 weights") && f32.contains("--dtype bfloat16"), qPrintable(f32));
        QVERIFY(Model::memoryProblem(c, available, 2).isEmpty());
        QVERIFY(Model::memoryProblem(c, params * 1.5 / 0.8, 2).contains("as 16-bit weights"));
    }

    // A file stored in 16 bits and held in 16 bits computes what the same file held as float32
    // computes (every half and bfloat16 value is a float32 value; only the order of the sums may
    // differ): logits on a prompt (the widened blocks) and on a few tokens (the 16-bit kernel),
    // and the greedy continuation, for both architectures and both 16-bit types.
    void sixteenBitWeightsComputeAsFloat32()
    {
        QTemporaryDir tmp;
        for (const QString which : {"neox", "mamba"})
            for (const QString dtype : {"F16", "BF16"}) {
                const QString dir = copyFolder(fixture(which), tmp.filePath(which + dtype));
                SafetensorsFile f = readSafetensors(fixture(which + "/model.safetensors"));
                for (TensorRecord& r : f.tensors) {
                    if (r.dtype != "F32") continue;
                    const std::vector<float> v = toFloat32(r, "fixture");
                    QByteArray bytes(qsizetype(v.size() * 2), Qt::Uninitialized);
                    auto* out = reinterpret_cast<uint16_t*>(bytes.data());
                    for (size_t i = 0; i < v.size(); ++i) out[i] = dtype == "F16" ? floatToHalf(v[i]) : floatToBfloat16(v[i]);
                    r.data = bytes;
                    r.mapping.reset();
                    r.dtype = dtype;
                }
                QFile::remove(dir + "/model.safetensors");
                writeSafetensors(dir + "/model.safetensors", f);
                const WeightDtype held = dtype == "F16" ? WeightDtype::Float16 : WeightDtype::BFloat16;
                const LanguageModel wide = LanguageModel::load(dir, {}, WeightDtype::Float32);
                const LanguageModel narrow = LanguageModel::load(dir, {}, held);
                QCOMPARE(wide.model.weightDtype(), QString("float32"));
                QCOMPARE(narrow.model.weightDtype(), dtype == "F16" ? QString("float16") : QString("bfloat16"));
                QVERIFY(narrow.summary().endsWith("weights " + narrow.model.weightDtype()));
                const LanguageModel automatic = LanguageModel::load(dir, {}, WeightDtype::Auto);
                QCOMPARE(automatic.model.weightDtype(), Model::autoKeepsSixteenBits() ? narrow.model.weightDtype() : QString("float32"));
                for (int tokens : {4, 40}) {
                    std::vector<int> ids;
                    for (int i = 0; i < tokens; ++i) ids.push_back((i * 37 + 11) % 600);
                    const std::vector<float> a = wide.model.logits(ids, 1, tokens), b = narrow.model.logits(ids, 1, tokens);
                    QCOMPARE(a.size(), b.size());
                    double worst = 0, scale = 0;
                    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a[i] - b[i]))), scale = std::max(scale, double(std::abs(a[i])));
                    QVERIFY2(worst <= 1e-5 * std::max(1.0, scale), qPrintable(QString("%1 %2, %3 tokens: logits differ by %4").arg(which, dtype).arg(tokens).arg(worst)));
                }
                const QString prompt = "The cat sat on the mat and";
                QCOMPARE(narrow.generate(prompt, 12).newIds, wide.generate(prompt, 12).newIds);
                // held in 16 bits, for running only: training refuses it by name
                QTemporaryDir runDir;
                Model m = narrow.model;
                TrainControl control;
                const TrainOutcome o = train(m, runDir.path(), control, {});
                QVERIFY2(o.status == TrainOutcome::Status::Failed && o.message.contains(narrow.model.weightDtype()), qPrintable(o.message));
            }
    }

    void halfAndBfloat16Conversions()
    {
        for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 0.1f, 3.14159f, 6.1e-5f, 5.96e-8f, 1e-3f, -123.456f}) {
            QCOMPARE(halfToFloat(floatToHalf(halfToFloat(floatToHalf(v)))), halfToFloat(floatToHalf(v)));  // a fixed point
            QVERIFY2(std::abs(halfToFloat(floatToHalf(v)) - v) <= std::max(std::abs(v) * 0x1p-11f, 0x1p-25f), qPrintable(QString::number(v)));
            QVERIFY(std::abs(bfloat16ToFloat(floatToBfloat16(v)) - v) <= std::abs(v) * 0x1p-8f);
        }
        QCOMPARE(floatToHalf(1.0f + 0x1p-11f), uint16_t(0x3c00));  // a tie rounds to even
        QCOMPARE(floatToHalf(1.0f + 3 * 0x1p-11f), uint16_t(0x3c02));
        QCOMPARE(floatToHalf(70000.0f), uint16_t(0x7c00));  // past the largest half: infinity
        QVERIFY(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
        QCOMPARE(floatToBfloat16(1.0f + 0x1p-8f), uint16_t(0x3f80));
        QVERIFY(std::isnan(bfloat16ToFloat(floatToBfloat16(std::nanf("")))));
    }

    void refusesPromptsLongerThanTheContext()
    {
        const LanguageModel lm = LanguageModel::load(fixture("neox"));
        QString longPrompt;
        for (int i = 0; i < 300; ++i) longPrompt += "ab ";
        const QString msg = errorOf([&] { lm.generate(longPrompt, 4); });
        QVERIFY2(msg.contains("context holds 256"), qPrintable(msg));
        // the zero-shot tests check every prompt before generating anything
        const QString pb = errorOf([&] { runLmTest(lm, "phonebook", {5, 60}, 2, 1); });
        QVERIFY2(pb.contains("size 60") && pb.contains("256"), qPrintable(pb));
    }

    // The mapped reader hands out the file's bytes without copying them, and they stay valid for
    // as long as any record (or copy of one) lives.
    void safetensorsAreMapped()
    {
        TensorRecord kept;
        {
            const SafetensorsFile f = readSafetensors(fixture("neox/model.safetensors"));
            QVERIFY(!f.tensors.isEmpty());
            for (const TensorRecord& r : f.tensors) QVERIFY(r.mapping);
            kept = f.tensors.first();
        }
        QFile file(fixture("neox/model.safetensors"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray whole = file.readAll();
        QVERIFY(whole.contains(kept.data));  // still readable after its file object is gone
        QVERIFY(kept.data.size() > 64);
    }

    void phonebookPrompts()
    {
        const BpeTokenizer tok = BpeTokenizer::load(fixture("tokenizer/tokenizer.json"));
        std::mt19937_64 rng(7);
        for (int entries : {3, 10, 25}) {
            const LmPrompt p = makeLmPrompt("phonebook", entries, tok, rng);
            const QString text = tok.decode(p.ids);
            const QStringList parts = text.split("\n\n");
            QCOMPARE(parts.size(), 3);
            const QStringList book = parts[0].split('\n'), examples = parts[1].split('\n');
            QCOMPARE(book.size(), entries);
            QCOMPARE(examples.size(), 2);
            const QRegularExpression line("^[A-Z][a-z]+ [A-Z][a-z]+: [6-9][0-9]{9}$");
            std::set<QString> names;
            for (const QString& l : book) {
                QVERIFY2(line.match(l).hasMatch(), qPrintable(l));
                names.insert(l.section(':', 0, 0));
            }
            QCOMPARE(int(names.size()), entries);  // every name once
            for (const QString& e : examples) QVERIFY(book.contains(e));
            QVERIFY(examples[0] != examples[1]);
            const QString asked = parts[2];
            QVERIFY(asked.endsWith(':'));
            const QString answerLine = book.filter(QRegularExpression("^" + QRegularExpression::escape(asked))).value(0);
            QVERIFY(!answerLine.isEmpty() && !examples.contains(answerLine));
            QCOMPARE(p.answer, answerLine.section(": ", 1));
            // scoring: the number (then its line end) is right; one wrong digit is not
            std::vector<int> said = p.target;
            const std::vector<int> newline = tok.encode("\nX");
            said.insert(said.end(), newline.begin(), newline.end());
            const LmAnswer right = scoreLmAnswer("phonebook", p, said, tok);
            QVERIFY(right.right);
            QCOMPARE(right.tokensRight, int(p.target.size()));
            QCOMPARE(right.text, p.answer);
            QString wrongNumber = p.answer;
            wrongNumber[9] = wrongNumber[9] == '0' ? '1' : '0';
            QVERIFY(!scoreLmAnswer("phonebook", p, tok.encode(' ' + wrongNumber + '\n'), tok).right);
        }
        QVERIFY(errorOf([&] { makeLmPrompt("phonebook", 2, tok, rng); }).contains("expected 3.."));
        QVERIFY(errorOf([&] { makeLmPrompt("phone", 5, tok, rng); }).contains("copy-text"));
    }

    void textPrompts()
    {
        const BpeTokenizer tok = BpeTokenizer::load(fixture("tokenizer/tokenizer.json"));
        for (int length : {5, 40, 200}) {
            std::mt19937_64 a(3), b(3);
            const LmPrompt p = makeLmPrompt("copy-text", length, tok, a), s = makeLmPrompt("shuffled-text", length, tok, b);
            const std::vector<int> gap = tok.encode("\n\n");
            // TEXT \n\n TEXT \n\n FIRST, the answer the rest of TEXT
            QCOMPARE(p.ids.size(), size_t(2 * length + 2 * gap.size() + 1));
            const std::vector<int> span(p.ids.begin(), p.ids.begin() + length);
            QVERIFY(std::equal(span.begin(), span.end(), p.ids.begin() + length + std::ptrdiff_t(gap.size())));
            QCOMPARE(p.ids.back(), span[0]);
            QCOMPARE(p.target, std::vector<int>(span.begin() + 1, span.end()));
            QVERIFY(tok.decode(span).size() > length);  // English, from the bundled book
            // shuffled: the same tokens (the same seed picks the same span), another order
            std::vector<int> shuffled(s.ids.begin(), s.ids.begin() + length), sorted = span;
            QVERIFY(length < 10 || shuffled != span);
            std::sort(shuffled.begin(), shuffled.end());
            std::sort(sorted.begin(), sorted.end());
            QCOMPARE(shuffled, sorted);
            // scoring: exact continuation right; one token off is wrong with one token fewer right
            QVERIFY(scoreLmAnswer("copy-text", p, p.target, tok).right);
            std::vector<int> off = p.target;
            off[off.size() / 2] = off[off.size() / 2] == 5 ? 6 : 5;
            const LmAnswer wrong = scoreLmAnswer("copy-text", p, off, tok);
            QVERIFY(!wrong.right);
            QCOMPARE(wrong.tokensRight, int(p.target.size()) - 1);
        }
    }

    // The same seed gives the same prompts and so the same curve; sizes and samples as asked.
    void runsAreRepeatable()
    {
        const LanguageModel lm = LanguageModel::load(fixture("mamba"));
        const LengthCurve a = runLmTest(lm, "copy-text", {4, 8}, 3, 11), b = runLmTest(lm, "copy-text", {4, 8}, 3, 11);
        QCOMPARE(a.lengths, (std::vector<int>{4, 8}));
        QCOMPARE(a.samples, 3);
        QCOMPARE(a.charAccuracy, b.charAccuracy);
        QCOMPARE(a.stringAccuracy, b.stringAccuracy);
        int calls = 0;
        const LengthCurve stopped = runLmTest(lm, "copy-text", {4, 8}, 3, 11, [&](int, int) { return ++calls < 2; });
        QVERIFY(stopped.lengths.empty());
    }

    // A hub id loads from the HuggingFace cache (laid out as the hub writes it) as the folder
    // does, named by the id, from the library and the command line.
    void loadsHubIdsFromTheCache()
    {
        QTemporaryDir t;
        const QString cache = t.filePath("hub");
        test::addToHubCache(cache, "EleutherAI/tiny-neox", fixture("neox"), "0123abcd");
        qputenv("HF_HUB_CACHE", cache.toUtf8());
        const LanguageModel cached = LanguageModel::load("EleutherAI/tiny-neox");
        qunsetenv("HF_HUB_CACHE");
        QCOMPARE(cached.name, QString("tiny-neox"));
        const LanguageModel folder = LanguageModel::load(fixture("neox"));
        QCOMPARE(cached.generate("Alice was", 8).newIds, folder.generate("Alice was", 8).newIds);
        QVERIFY(errorOf([] { LanguageModel::load("EleutherAI/not-downloaded"); }).contains("huggingface-cli download"));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HF_HUB_CACHE", cache);
        p.setProcessEnvironment(env);
        p.start(PARROT_EXE, {"generate", "--model", "EleutherAI/tiny-neox", "--prompt", "Alice was", "--max-new-tokens", "8", "--json"});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QCOMPARE(QJsonDocument::fromJson(p.readAllStandardOutput()).object()["new_ids"].toArray().size(), qsizetype(8));
    }

    // Perplexity against HuggingFace transformers (hf_tiny/perplexity_refs.json): the same ids, the
    // same windows, every token's loss and the mean to 1e-4.
    void perplexityMatchesTransformers()
    {
        const QJsonObject refs = QJsonDocument::fromJson(readAll(fixture("perplexity_refs.json"))).object();
        const QString text = refs["text"].toString();
        const int window = refs["window"].toInt();
        for (const char* which : {"neox", "mamba"}) {
            const LanguageModel lm = LanguageModel::load(fixture(which));
            const QJsonObject ref = refs[which].toObject();
            const std::vector<int> ids = lm.tokenizer.encode(text);
            const QJsonArray refIds = ref["ids"].toArray(), refLosses = ref["token_losses"].toArray();
            QCOMPARE(int(ids.size()), int(refIds.size()));
            for (size_t i = 0; i < ids.size(); ++i) QCOMPARE(ids[i], refIds[qsizetype(i)].toInt());
            const std::vector<float> first = lm.model.tokenLosses(std::vector<int>(ids.begin(), ids.begin() + window));
            QCOMPARE(int(first.size()), window - 1);
            for (int i = 0; i < window - 1; ++i)
                QVERIFY2(std::abs(first[size_t(i)] - refLosses[i].toDouble()) < 1e-4,
                         qPrintable(QString("%1 token %2: %3 against %4").arg(which).arg(i + 1).arg(first[size_t(i)]).arg(refLosses[i].toDouble())));
            const PerplexityResult r = measurePerplexity(lm, text, window);
            QCOMPARE(r.tokens, (long long)refLosses.size());
            QVERIFY2(std::abs(r.loss - ref["loss"].toDouble()) < 1e-4, qPrintable(QString("%1: %2 against %3").arg(which).arg(r.loss).arg(ref["loss"].toDouble())));
            QVERIFY(std::abs(r.perplexity - std::exp(r.loss)) < 1e-9 * r.perplexity);
            QCOMPARE(r.window, window);
            QCOMPARE(measurePerplexity(lm, text, window, 50).tokens, 49LL);  // the first 50 tokens: 49 predicted
        }
        const LanguageModel neox = LanguageModel::load(fixture("neox"));
        QCOMPARE(measurePerplexity(neox, text, 100000).window, 256);  // never past the model's context
        QVERIFY(errorOf([&] { measurePerplexity(neox, "", 100); }).contains("fewer than two tokens"));
    }

    // Question answering runs on both families: paragraphs bucketed by the model's own tokens,
    // repeatable for a seed, every asked question scored, and no paragraph outside the buckets.
    void questionAnsweringBucketsAndScores()
    {
        const std::vector<QaParagraph> set = readSquad(bundledSquadPath());
        const LanguageModel mamba = LanguageModel::load(fixture("mamba"));
        std::vector<int> lengths;
        for (const QaParagraph& p : set) lengths.push_back(int(mamba.tokenizer.encode(p.context).size()));
        std::sort(lengths.begin(), lengths.end());
        const int mid = lengths[lengths.size() / 2];
        const std::vector<int> edges{lengths.front(), mid, lengths.back() + 1};
        const QaResult a = runQaTest(mamba, set, edges, 3, 5), b = runQaTest(mamba, set, edges, 3, 5);
        QCOMPARE(a.curve.lengths, (std::vector<int>{lengths.front(), mid}));
        QCOMPARE(a.bucketEnds, (std::vector<int>{mid, lengths.back() + 1}));
        QCOMPARE(a.questions, (std::vector<int>{3, 3}));
        QCOMPARE(a.curve.charAccuracy, b.curve.charAccuracy);
        for (size_t i = 0; i < a.curve.lengths.size(); ++i) {
            QVERIFY(a.curve.stringAccuracy[i] >= 0 && a.curve.stringAccuracy[i] <= a.curve.charAccuracy[i] + 1e-12);  // EM <= F1
            QVERIFY(a.curve.charAccuracy[i] <= 1);
        }
        // a bucket no paragraph falls in is reported, not drawn
        const QaResult gap = runQaTest(mamba, set, {1, 2, lengths.back() + 1}, 2, 5);
        QCOMPARE(gap.emptyBuckets, (std::vector<int>{1}));
        QCOMPARE(gap.curve.lengths, (std::vector<int>{2}));
        // a Transformer with a 256-token context: short paragraphs run, long ones are refused by name
        const LanguageModel neox = LanguageModel::load(fixture("neox"));
        QaParagraph shortOne;
        shortOne.context = "Alice sat on the bank.";
        shortOne.questions = {{"a", "Who sat?", {"Alice"}}, {"b", "Where?", {"on the bank"}}};
        const QaResult small = runQaTest(neox, {shortOne}, {1, 1000}, 4, 1);
        QCOMPARE(small.questions, (std::vector<int>{1}));
        QVERIFY(errorOf([&] { runQaTest(neox, set, {1, 100000}, 30, 1); }).contains("choose smaller --sizes"));
        QVERIFY(errorOf([&] { runQaTest(neox, set, {100}, 3, 1); }).contains("two bucket edges"));
        QVERIFY(errorOf([&] { runLmTest(neox, "squad", {100, 200}, 3, 1); }).contains("runQaTest"));
    }

    // An embedding with more rows than the tokenizer has ids (as Pythia's): an answer with such an
    // id decodes as <|id N|> and scores, and no test stops on it.
    void idsPastTheTokenizerScoreAsWrongAnswers()
    {
        QTemporaryDir t;
        const QString folder = copyFolder(fixture("neox"), t.path() + "/short-tokenizer");
        QJsonObject tok = QJsonDocument::fromJson(readAll(folder + "/tokenizer.json")).object();
        QJsonObject model = tok["model"].toObject();
        const QJsonObject vocab = model["vocab"].toObject();
        QJsonObject kept;
        for (auto it = vocab.begin(); it != vocab.end(); ++it)
            if (it.value().toInt() < 300) kept.insert(it.key(), it.value());
        QJsonArray merges;
        for (const QJsonValue& m : model["merges"].toArray()) {
            const QStringList parts = m.toString().split(' ');
            if (parts.size() == 2 && kept.contains(parts[0]) && kept.contains(parts[1]) && kept.contains(parts[0] + parts[1])) merges.append(m);
        }
        model["vocab"] = kept;
        model["merges"] = merges;
        tok["model"] = model;
        QVERIFY(writeAll(folder + "/tokenizer.json", QJsonDocument(tok).toJson()));
        const LanguageModel lm = LanguageModel::load(folder);
        QCOMPARE(lm.tokenizer.vocabSize(), 300);
        QCOMPARE(lm.tokenizer.decode({2, 450}), lm.tokenizer.decode({2}) + "<|id 450|>");
        // the random model picks from all 600 rows: some answers hold ids past 300
        bool sawUnknown = false;
        for (int s = 0; s < 8 && !sawUnknown; ++s)
            sawUnknown = lm.generate(QString("Alice %1").arg(s), 24).text.contains("<|id ");
        QVERIFY(sawUnknown);
        const LengthCurve c = runLmTest(lm, "phonebook", {3, 5}, 4, 7);
        QCOMPARE(c.lengths, (std::vector<int>{3, 5}));
        QaParagraph p;
        p.context = "Alice sat on the bank.";
        p.questions = {{"a", "Who sat?", {"Alice"}}, {"b", "Where?", {"on the bank"}}};
        QCOMPARE(runQaTest(lm, {p}, {1, 1000}, 1, 1).questions, (std::vector<int>{1}));
    }

    void commandLine()
    {
        const QJsonObject ref = modelRefs("neox").first().toObject();
        QProcess p;
        p.start(PARROT_EXE, {"generate", "--model", fixture("neox"), "--prompt", ref["prompt"].toString(), "--max-new-tokens", "16", "--json"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject o = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(o["new_ids"].toArray(), ref["greedy"].toArray());
        QCOMPARE(o["prompt_ids"].toArray(), ref["ids"].toArray());

        QTemporaryDir tmp;
        const QString csv = tmp.filePath("pb.csv");
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("neox"), "--model", fixture("mamba"), "--task", "phonebook",
                             "--sizes", "3,6", "--samples", "2", "--out", csv, "--json"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QJsonObject r = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(r["task"].toString(), QString("phonebook"));
        QCOMPARE(r["models"].toArray().size(), 2);
        QCOMPARE(r["models"].toArray()[1].toObject()["architecture"].toString(), QString("Mamba"));
        const QStringList rows = QString::fromUtf8(readAll(csv)).trimmed().split('\n');
        QCOMPARE(rows.size(), 1 + 2 * 2);
        QVERIFY(rows[0].startsWith("model,size,accuracy"));
        QVERIFY(rows[3].startsWith("mamba,3,"));

        // question answering from the command line: the bundled set, JSON with EM and F1 per bucket, the figure's CSV
        const QString qaCsv = tmp.filePath("qa.csv");
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("mamba"), "--task", "squad", "--sizes", "1,200,10000", "--samples", "2",
                             "--out", qaCsv, "--json"});
        QVERIFY(p.waitForFinished(300000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QJsonObject qa = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QCOMPARE(qa["task"].toString(), QString("squad"));
        QCOMPARE(qa["data"].toString(), QString("bundled"));
        const QJsonObject qm = qa["models"].toArray()[0].toObject();
        for (const char* key : {"bucket_from", "bucket_to", "questions", "exact_match", "exact_match_stderr", "f1", "f1_stderr"})
            QVERIFY2(qm[key].isArray() && !qm[key].toArray().isEmpty(), key);
        QVERIFY(QString::fromUtf8(readAll(qaCsv)).startsWith("model,size,exact_match,stderr,f1,f1_stderr\n"));
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("mamba"), "--task", "squad", "--data", tmp.filePath("none.json")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("none.json"));
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("mamba"), "--task", "copy-text", "--data", qaCsv});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY(p.readAllStandardError().contains("--data is for --task squad"));

        // perplexity, and the paper's point drawn: each model at (perplexity, accuracy at one size)
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("neox"), "--model", fixture("mamba"), "--task", "perplexity", "--tokens", "300", "--json"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QJsonArray pp = QJsonDocument::fromJson(p.readAllStandardOutput()).object()["models"].toArray();
        QCOMPARE(pp.size(), 2);
        QCOMPARE(pp[0].toObject()["tokens"].toInt(), 298);  // windows of its 256-token context: 255 + 43 predicted
        QVERIFY(pp[1].toObject()["perplexity"].toDouble() > 1);
        const QString lvr = tmp.filePath("lvr.csv");
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("neox"), "--model", fixture("mamba"), "--task", "phonebook", "--sizes", "3,5",
                             "--samples", "2", "--figure", "loss-vs-retrieval", "--tokens", "300", "--out", lvr});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QStringList lvrRows = QString::fromUtf8(readAll(lvr)).trimmed().split('\n');
        QCOMPARE(lvrRows.size(), 3);
        QVERIFY(lvrRows[0].startsWith("model,architecture,perplexity,loss,size,accuracy"));
        QVERIFY2(lvrRows[2].startsWith("mamba,Mamba,") && lvrRows[2].contains(",5,"), qPrintable(lvrRows[2]));
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("neox"), "--task", "phonebook", "--sizes", "3", "--figure", "loss-vs-retrieval"});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY(p.readAllStandardError().contains("needs --out"));

        p.start(PARROT_EXE, {"lm-eval", "--model", tmp.path(), "--task", "copy-text"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("no config.json"));
        p.start(PARROT_EXE, {"lm-eval", "--model", fixture("neox"), "--task", "phone"});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY(p.readAllStandardError().contains("unknown test \"phone\""));
    }
};

QTEST_GUILESS_MAIN(TestLmTests)
#include "tst_lmtests.moc"
