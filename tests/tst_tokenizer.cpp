// The byte-level BPE tokenizer (base/text/tokenizer.h) against HuggingFace's `tokenizers`: the
// reference ids and decoded texts of a few hundred strings (ASCII, Unicode, white-space runs,
// digits, phone books, added tokens) made by tests/data/make_hf_refs.py; and tokenizer.json
// files the app cannot read refused by name.
#include "base/error.h"
#include "base/text/tokenizer.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

namespace {

const QString kData = QStringLiteral(PARROT_TEST_DATA) + "/hf_tiny";

QJsonObject readJson(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(f.readAll()).object();
}

QString ids(const std::vector<int>& v)
{
    QStringList s;
    for (int x : v) s << QString::number(x);
    return s.join(' ');
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT
private slots:
    void matchesHuggingFace()
    {
        const BpeTokenizer t = BpeTokenizer::load(kData + "/tokenizer/tokenizer.json");
        QCOMPARE(t.vocabSize(), 600);
        QCOMPARE(t.endOfText(), 0);
        const QJsonArray cases = readJson(kData + "/tokenizer_refs.json")["cases"].toArray();
        QVERIFY(cases.size() > 250);
        int checked = 0;
        for (const auto c : cases) {
            const QJsonObject o = c.toObject();
            const QString text = o["text"].toString();
            std::vector<int> want;
            for (const auto id : o["ids"].toArray()) want.push_back(id.toInt());
            const std::vector<int> got = t.encode(text);
            QVERIFY2(got == want, qPrintable(QString("%1\n  app %2\n  hf  %3").arg(text, ids(got), ids(want))));
            QCOMPARE(t.decode(got), o["decoded"].toString());
            ++checked;
        }
        QCOMPARE(checked, int(cases.size()));
    }

    void specialTokensAndTokenTexts()
    {
        const BpeTokenizer t = BpeTokenizer::load(kData + "/tokenizer/tokenizer.json");
        const std::vector<int> ids = t.encode("a<|endoftext|>b");
        QVERIFY(std::find(ids.begin(), ids.end(), t.endOfText()) != ids.end());
        QCOMPARE(t.decode(ids), QString("a<|endoftext|>b"));
        QCOMPARE(t.decode(ids, true), QString("ab"));
        QCOMPARE(t.tokenText(t.endOfText()), QString("<|endoftext|>"));
        // a token of a space and a word reads as such, not as GPT-2's stand-in characters
        const std::vector<int> the = t.encode(" the");
        QCOMPARE(the.size(), size_t(1));
        QCOMPARE(t.tokenText(the[0]), QString(" the"));
        // an id past the tokenizer's (a model's padding row) reads as what it is; a negative one is an error
        QCOMPARE(t.decode({the[0], t.vocabSize() + 3}), QString(" the<|id %1|>").arg(t.vocabSize() + 3));
        QVERIFY_THROWS_EXCEPTION(Error, t.decode({-1}));
        // a byte-order mark at the start is text like any other: it survives the round trip
        const QString bom = QString(QChar(0xFEFF)) + QChar(0xFEFF) + "a";
        QCOMPARE(t.decode(t.encode(bom)), bom);
    }

    void refusesWhatItCannotRead_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("message");
        QTest::newRow("WordPiece") << "model.type=WordPiece" << "model type 'WordPiece' is not BPE";
        QTest::newRow("Metaspace") << "pre_tokenizer.type=Metaspace" << "pre-tokenizer 'Metaspace' is not ByteLevel";
        QTest::newRow("NFKC") << "normalizer.type=NFKC" << "normalizer 'NFKC' is not supported";
        QTest::newRow("decoder") << "decoder.type=WordPiece" << "decoder 'WordPiece' is not ByteLevel";
        QTest::newRow("not json") << "garbage" << "tokenizer.json) is not valid JSON";
    }
    void refusesWhatItCannotRead()
    {
        QFETCH(QString, change);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString path = dir.filePath("tokenizer.json");
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        if (change == "garbage") {
            out.write("{ not json");
        } else {
            QJsonObject root = readJson(kData + "/tokenizer/tokenizer.json");
            const QString section = change.section('.', 0, 0), key = change.section('.', 1).section('=', 0, 0);
            QJsonObject o = root[section].toObject();
            o[key] = change.section('=', 1);
            root[section] = o;
            out.write(QJsonDocument(root).toJson());
        }
        out.close();
        try {
            BpeTokenizer::load(path);
            QFAIL("loaded");
        } catch (const Error& e) {
            QVERIFY2(e.message().contains(message) && e.message().contains(path), qPrintable(e.message()));
        }
        try {
            BpeTokenizer::load(dir.filePath("missing.json"));
            QFAIL("loaded a missing file");
        } catch (const Error& e) {
            QVERIFY(e.message().contains("missing.json"));
        }
    }
};

QTEST_GUILESS_MAIN(TestTokenizer)
#include "tst_tokenizer.moc"
