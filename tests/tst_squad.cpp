// Question answering's reader and scoring (base/text/squad.h), checked against SQuAD's
// definition (evaluate-v2.0.py) on hand-made cases, and the bundled set.
#include "base/error.h"
#include "base/text/squad.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

class TestSquad : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    QString write(const QString& name, const QByteArray& text)
    {
        const QString path = m_dir.filePath(name);
        test::writeAll(path, text);
        return path;
    }

private slots:
    void normalisesAsSquadDoes()
    {
        QCOMPARE(normalizeAnswer("The Cat"), QString("cat"));             // lower case, article gone
        QCOMPARE(normalizeAnswer("a  cat,  an owl & the  hat."), QString("cat owl hat"));  // punctuation deleted, spaces collapsed
        QCOMPARE(normalizeAnswer("  Theatre  "), QString("theatre"));      // "the" only as a word
        QCOMPARE(normalizeAnswer("1,000"), QString("1000"));               // deleted, not a space (the authors' code differs)
        QCOMPARE(normalizeAnswer("Ada's"), QString("adas"));
        QCOMPARE(normalizeAnswer("\"Drink me,\""), QString("drink me"));
        QCOMPARE(normalizeAnswer("A"), QString());
        QCOMPARE(normalizeAnswer(""), QString());
    }

    void exactMatchAndF1()
    {
        QVERIFY(exactMatch("the White Rabbit", "White rabbit."));
        QVERIFY(!exactMatch("a White Rabbit with pink eyes", "White Rabbit"));
        // F1 over normalised words: "white rabbit with pink eyes" against "white rabbit": P = 2/5, R = 1
        QCOMPARE(f1Score("a White Rabbit with pink eyes", "the White Rabbit"), 2 * 0.4 * 1.0 / 1.4);
        QCOMPARE(f1Score("rabbit rabbit", "rabbit"), 2 * 0.5 * 1.0 / 1.5);  // a word counts as often as both have it
        QCOMPARE(f1Score("hedgehog", "flamingo"), 0.0);
        // empty against empty is 1, empty against something 0 (both ways)
        QCOMPARE(f1Score("", "the"), 1.0);  // "the" normalises to nothing
        QCOMPARE(f1Score("", "Mabel"), 0.0);
        QCOMPARE(f1Score("Mabel", ""), 0.0);
        // the best over several gold answers
        const QStringList golds{"four thousand miles", "4,000 miles", "about four thousand miles down"};
        QCOMPARE(bestExactMatch("4000 miles", golds), 1.0);
        QCOMPARE(bestF1("four thousand", golds), 2 * 1.0 * (2.0 / 3) / (1 + 2.0 / 3));
        QCOMPARE(bestExactMatch("five", golds), 0.0);
        QCOMPARE(bestF1("anything", {}), 0.0);
    }

    void promptAndAnswerFollowTheAuthors()
    {
        QaParagraph p;
        p.context = "Alice sat by her sister.";
        p.questions = {{"q0", "Who sat?", {"Alice", "alice"}}, {"q1", "By whom?", {"her sister"}}};
        QCOMPARE(squadPrompt(p, 0, 1), QString("Alice sat by her sister.\n\nQuestion: Who sat?\nAnswer: Alice\n\nQuestion: By whom?\nAnswer: "));
        QCOMPARE(squadAnswer(" her sister\n\nQuestion: Why?\nAnswer: because"), QString("her sister"));
        QCOMPARE(squadAnswer("her sister<|endoftext|>junk"), QString("her sister"));
        QCOMPARE(squadAnswer("line one\nline two\n\nmore"), QString("line one\nline two"));
        QCOMPARE(squadAnswer(""), QString());
    }

    void readsSquadV2AndKeepsWhatTheTestCanAsk()
    {
        const QJsonObject ok{
            {"version", "v2.0"},
            {"data", QJsonArray{QJsonObject{
                         {"title", "T"},
                         {"paragraphs",
                          QJsonArray{
                              QJsonObject{{"context", "One two three."},
                                          {"qas", QJsonArray{QJsonObject{{"id", "a"}, {"question", "First?"}, {"answers", QJsonArray{QJsonObject{{"text", "One"}, {"answer_start", 0}}}}},
                                                             QJsonObject{{"id", "b"}, {"question", "Impossible?"}, {"is_impossible", true}, {"answers", QJsonArray{}}},
                                                             QJsonObject{{"id", "c"}, {"question", "Third?"},
                                                                         {"answers", QJsonArray{QJsonObject{{"text", "three"}, {"answer_start", 8}},
                                                                                                QJsonObject{{"text", "three"}, {"answer_start", 8}},
                                                                                                QJsonObject{{"text", "three."}, {"answer_start", 8}}}}}}}},
                              // one answerable question only: nothing to show as an example, left out
                              QJsonObject{{"context", "Lonely."},
                                          {"qas", QJsonArray{QJsonObject{{"id", "d"}, {"question", "Q?"}, {"answers", QJsonArray{QJsonObject{{"text", "Lonely"}}}}}}}}}}}}}};
        const std::vector<QaParagraph> set = readSquad(write("ok.json", QJsonDocument(ok).toJson()));
        QCOMPARE(set.size(), size_t(1));
        QCOMPARE(set[0].questions.size(), size_t(2));  // the impossible one is left out
        QCOMPARE(set[0].questions[1].answers, (QStringList{"three", "three."}));  // duplicates once
        QCOMPARE(set[0].title, QString("T"));
    }

    void refusesMalformedFilesNamingThem()
    {
        const auto message = [](const QString& path) {
            try {
                readSquad(path);
            } catch (const Error& e) {
                return e.message();
            }
            return QString();
        };
        QVERIFY(message(m_dir.filePath("missing.json")).contains("missing.json"));
        QVERIFY(message(write("text.json", "not json")).contains("text.json"));
        QVERIFY(message(write("nodata.json", R"({"version": "v2.0"})")).contains("\"data\""));
        QVERIFY(message(write("noctx.json", R"({"data": [{"paragraphs": [{"qas": []}]}]})")).contains("data[0].paragraphs[0]"));
        QVERIFY(message(write("noanswers.json", R"({"data": [{"paragraphs": [{"context": "c", "qas": [{"question": "q"}]}]}]})"))
                    .contains("data[0].paragraphs[0].qas[0]"));
        QVERIFY(message(write("empty.json", R"({"data": []})")).contains("no paragraph with two answerable questions"));
    }

    void theBundledSetIsValid()
    {
        const std::vector<QaParagraph> set = readSquad(bundledSquadPath());
        QVERIFY(set.size() >= 12);
        int questions = 0;
        for (const QaParagraph& p : set) {
            questions += int(p.questions.size());
            for (const QaQuestion& q : p.questions)
                for (const QString& a : q.answers) QVERIFY2(p.context.contains(a), qPrintable(q.id + ": " + a));  // spans of the text
        }
        QVERIFY(questions >= 36);
    }
};

QTEST_GUILESS_MAIN(TestSquad)
#include "tst_squad.moc"
