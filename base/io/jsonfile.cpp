#include "base/io/jsonfile.h"

#include "base/error.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QtGlobal>

namespace parrot {

namespace {

// The object in `bytes`, or the reason there is none.
std::optional<QJsonObject> parseObject(const QByteArray& bytes, QString& problem)
{
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &err);
    if (err.error != QJsonParseError::NoError) {
        problem = QString("not valid JSON (%1 at offset %2)").arg(err.errorString()).arg(err.offset);
        return std::nullopt;
    }
    if (!doc.isObject()) {
        problem = "not a JSON object";
        return std::nullopt;
    }
    return doc.object();
}

}  // namespace

QJsonObject readJsonObject(const QString& path, const QString& what, qint64 maxBytes)
{
    QFile f(path);
    if (!f.exists()) throw Error(QString("%1: no such file (%2)").arg(path, what));
    if (f.size() > maxBytes)
        throw Error(QString("%1: %2 of %3 bytes, more than the %4 expected of it").arg(path, what).arg(f.size()).arg(maxBytes));
    if (!f.open(QIODevice::ReadOnly)) throw Error(QString("%1: cannot read %2 (%3)").arg(path, what, f.errorString()));
    QString problem;
    if (auto o = parseObject(f.readAll(), problem)) return *o;
    throw Error(QString("%1: %2 is %3").arg(path, what, problem));
}

std::optional<QJsonObject> readJsonObjectIfValid(const QString& path)
{
    QFile f(path);
    if (!f.exists()) return std::nullopt;
    if (!f.open(QIODevice::ReadOnly)) {
        qWarning("%s: ignored: cannot be read (%s)", qPrintable(path), qPrintable(f.errorString()));
        return std::nullopt;
    }
    QString problem;
    auto o = parseObject(f.readAll(), problem);
    if (!o) qWarning("%s: ignored: %s", qPrintable(path), qPrintable(problem));
    return o;
}

}  // namespace parrot
