// Pretrained language models: a HuggingFace folder loaded with its tokenizer (and everything a
// folder can get wrong), the memory-mapped safetensors reader, the copy paper's zero-shot tests
// (phone book, copy text, shuffled text: prompt layout and scoring) and the `generate` and
// `lm-eval` commands, on the tiny GPT-NeoX and Mamba folders that tests/data/make_hf_refs.py
// wrote with HuggingFace's own libraries.
#include "base/error.h"
#include "core/eval/lmtests.h"
#include "base/io/safetensors.h"
#include "base/tasks/taskcatalog.h"
#include "testutil.h"
#include "core/text/languagemodel.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>
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
