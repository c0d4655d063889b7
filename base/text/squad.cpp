#include "base/text/squad.h"

#include "base/error.h"
#include "base/io/jsonfile.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <algorithm>
#include <map>

namespace parrot {

namespace {

// Python's string.punctuation: the ASCII punctuation SQuAD's script deletes.
bool isPunctuation(QChar c)
{
    static const QString punctuation = QStringLiteral("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");
    return punctuation.contains(c);
}

QStringList words(const QString& s)
{
    const QString n = normalizeAnswer(s);
    return n.isEmpty() ? QStringList() : n.split(' ', Qt::SkipEmptyParts);
}

[[noreturn]] void malformed(const QString& path, const QString& where, const QString& what)
{
    throw Error(QString("%1: not a SQuAD file: %2 %3").arg(path, where, what));
}

}  // namespace

QString bundledSquadPath() { return QStringLiteral(":/data/alice-qa.json"); }

std::vector<QaParagraph> readSquad(const QString& path)
{
    const QJsonObject root = readJsonObject(path, "the question-answering set (SQuAD JSON)", 512LL * 1024 * 1024);
    if (!root.value("data").isArray()) malformed(path, "the top level", "has no \"data\" array");
    std::vector<QaParagraph> out;
    const QJsonArray data = root.value("data").toArray();
    for (qsizetype a = 0; a < data.size(); ++a) {
        const QJsonObject article = data[a].toObject();
        const QString where = QString("data[%1]").arg(a);
        if (!article.value("paragraphs").isArray()) malformed(path, where, "has no \"paragraphs\" array");
        const QJsonArray paragraphs = article.value("paragraphs").toArray();
        for (qsizetype p = 0; p < paragraphs.size(); ++p) {
            const QJsonObject para = paragraphs[p].toObject();
            const QString at = QString("%1.paragraphs[%2]").arg(where).arg(p);
            if (!para.value("context").isString()) malformed(path, at, "has no \"context\" text");
            if (!para.value("qas").isArray()) malformed(path, at, "has no \"qas\" array");
            QaParagraph paragraph;
            paragraph.title = article.value("title").toString();
            paragraph.context = para.value("context").toString();
            const QJsonArray qas = para.value("qas").toArray();
            for (qsizetype q = 0; q < qas.size(); ++q) {
                const QJsonObject qa = qas[q].toObject();
                const QString qat = QString("%1.qas[%2]").arg(at).arg(q);
                if (!qa.value("question").isString()) malformed(path, qat, "has no \"question\" text");
                if (!qa.value("answers").isArray()) malformed(path, qat, "has no \"answers\" array");
                if (qa.value("is_impossible").toBool()) continue;
                QaQuestion question;
                question.id = qa.value("id").toString();
                question.question = qa.value("question").toString().trimmed();
                for (const QJsonValue& answer : qa.value("answers").toArray()) {
                    if (!answer.toObject().value("text").isString()) malformed(path, qat, "has an answer without \"text\"");
                    const QString text = answer.toObject().value("text").toString().trimmed();
                    if (!text.isEmpty() && !question.answers.contains(text)) question.answers << text;
                }
                if (!question.answers.isEmpty() && !question.question.isEmpty()) paragraph.questions.push_back(question);
            }
            if (paragraph.questions.size() >= 2 && !paragraph.context.trimmed().isEmpty()) out.push_back(std::move(paragraph));
        }
    }
    if (out.empty())
        throw Error(QString("%1: no paragraph with two answerable questions (the test shows one answered and asks the other)").arg(path));
    return out;
}

QString normalizeAnswer(const QString& s)
{
    QString t = s.toLower();
    t.removeIf(isPunctuation);
    static const QRegularExpression articles(QStringLiteral("\\b(a|an|the)\\b"), QRegularExpression::UseUnicodePropertiesOption);
    t.replace(articles, QStringLiteral(" "));
    return t.simplified();
}

bool exactMatch(const QString& prediction, const QString& gold) { return normalizeAnswer(prediction) == normalizeAnswer(gold); }

double f1Score(const QString& prediction, const QString& gold)
{
    const QStringList p = words(prediction), g = words(gold);
    if (p.isEmpty() || g.isEmpty()) return p.isEmpty() && g.isEmpty() ? 1.0 : 0.0;
    std::map<QString, int> counts;
    for (const QString& w : g) ++counts[w];
    int same = 0;
    for (const QString& w : p) {
        auto it = counts.find(w);
        if (it != counts.end() && it->second > 0) {
            --it->second;
            ++same;
        }
    }
    if (same == 0) return 0.0;
    const double precision = double(same) / double(p.size()), recall = double(same) / double(g.size());
    return 2 * precision * recall / (precision + recall);
}

double bestExactMatch(const QString& prediction, const QStringList& golds)
{
    double best = 0;
    for (const QString& g : golds) best = std::max(best, exactMatch(prediction, g) ? 1.0 : 0.0);
    return best;
}

double bestF1(const QString& prediction, const QStringList& golds)
{
    double best = 0;
    for (const QString& g : golds) best = std::max(best, f1Score(prediction, g));
    return best;
}

QString squadPrompt(const QaParagraph& p, int example, int asked)
{
    const QaQuestion& e = p.questions.at(size_t(example));
    const QaQuestion& q = p.questions.at(size_t(asked));
    return p.context + "\n\nQuestion: " + e.question + "\nAnswer: " + e.answers.front() + "\n\nQuestion: " + q.question + "\nAnswer: ";
}

QString squadAnswer(const QString& continuation)
{
    QString a = continuation.section(QStringLiteral("\n\n"), 0, 0);
    const qsizetype end = a.indexOf(QStringLiteral("<|endoftext|>"));
    if (end >= 0) a.truncate(end);
    return a.trimmed();
}

}  // namespace parrot
