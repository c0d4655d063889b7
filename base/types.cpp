#include "base/types.h"

#include <QJsonArray>
#include <QLocale>
#include <QStringList>

#include <algorithm>
#include <cmath>

namespace parrot {

QString ModelSize::describe() const
{
    const QLocale en(QLocale::English);
    QString text = QString("%1 parameters").arg(en.toString(parameters));
    if (stateFloats > 0)
        text += QString("; state %1 floats = %2 bits at 32-bit").arg(en.toString(stateFloats)).arg(en.toString(stateFloats * 32));
    if (stateFloatsPerToken > 0)
        text += QString("; %1 %2 floats per token of context (KV cache)")
                    .arg(stateFloats > 0 ? "plus" : "state grows by").arg(en.toString(stateFloatsPerToken));
    return text;
}

QString HeadScore::name() const
{
    return implicit ? QString("block %1 (implicit)").arg(layer) : QString("L%1 H%2").arg(layer).arg(head);
}

double MechanismScores::bestLookup() const
{
    double best = 0;
    for (const HeadScore& h : heads) best = std::max(best, h.bestLookup());
    return best;
}

double binomialStdErr(double p, double n) { return std::sqrt(std::max(0.0, p * (1 - p)) / std::max(1.0, n)); }

void LengthCurve::addAccuracy(int length, long long rowsRight, int n, long long right, long long answers)
{
    const double p = double(rowsRight) / std::max(1, n), q = double(right) / double(std::max(1LL, answers));
    lengths.push_back(length);
    stringAccuracy.push_back(p);
    charAccuracy.push_back(q);
    stringStdErr.push_back(binomialStdErr(p, n));
    charStdErr.push_back(binomialStdErr(q, double(answers)));
}

double LengthCurve::stringAccuracyAt(int length, double fallback) const
{
    for (size_t i = 0; i < lengths.size(); ++i)
        if (lengths[i] == length) return stringAccuracy[i];
    return fallback;
}

QString LengthCurve::summary() const
{
    if (lengths.empty()) return "(no points)";
    if (isError()) {
        QString text = QString("error %1 with no examples, %2 after %3")
                           .arg(error.front(), 0, 'f', 3).arg(error.back(), 0, 'f', 3).arg(lengths.back());
        QStringList base;
        for (size_t b = 0; b < baselineNames.size(); ++b)
            base << QString("%1 %2").arg(baselineNames[b]).arg(baselineError[b].back(), 0, 'f', 3);
        return base.isEmpty() ? text : text + " (" + base.join(", ") + ")";
    }
    QStringList parts;
    for (size_t i = 0; i < lengths.size(); ++i) parts << QString("L%1 %2%").arg(lengths[i]).arg(100.0 * stringAccuracy[i], 0, 'f', 1);
    return parts.join("  ");
}

namespace {

QJsonArray jsonArray(const std::vector<double>& v)
{
    QJsonArray a;
    for (double x : v) a.append(x);
    return a;
}

std::vector<double> doubles(const QJsonValue& v)
{
    std::vector<double> out;
    for (const auto x : v.toArray()) out.push_back(x.toDouble());
    return out;
}

}  // namespace

QJsonObject lengthCurveJson(const LengthCurve& c)
{
    QJsonArray lengths;
    for (int l : c.lengths) lengths.append(l);
    QJsonObject o{{"step", c.step}, {"samples", c.samples}, {"lengths", lengths}, {"metric", c.metric}};
    if (c.isError()) {
        o.insert("error", jsonArray(c.error));
        o.insert("error_stderr", jsonArray(c.errorStdErr));
        QJsonObject baselines;
        for (size_t b = 0; b < c.baselineNames.size(); ++b) baselines.insert(c.baselineNames[b], jsonArray(c.baselineError[b]));
        o.insert("baselines", baselines);
    } else {
        o.insert("string_accuracy", jsonArray(c.stringAccuracy));
        o.insert("char_accuracy", jsonArray(c.charAccuracy));
        o.insert("string_accuracy_stderr", jsonArray(c.stringStdErr));
        o.insert("char_accuracy_stderr", jsonArray(c.charStdErr));
    }
    return o;
}

std::optional<LengthCurve> lengthCurveFromJson(const QJsonObject& o)
{
    LengthCurve c;
    c.step = o["step"].toInteger();
    c.samples = o["samples"].toInt();
    c.metric = o["metric"].toString("accuracy");
    for (const auto l : o["lengths"].toArray()) c.lengths.push_back(l.toInt());
    if (c.isError()) {
        c.error = doubles(o["error"]);
        c.errorStdErr = doubles(o["error_stderr"]);
        const QJsonObject b = o["baselines"].toObject();
        for (auto it = b.begin(); it != b.end(); ++it) {
            c.baselineNames.push_back(it.key());
            c.baselineError.push_back(doubles(it.value()));
        }
        if (c.error.size() != c.lengths.size()) return std::nullopt;
    } else {
        c.stringAccuracy = doubles(o["string_accuracy"]);
        c.charAccuracy = doubles(o["char_accuracy"]);
        c.stringStdErr = doubles(o["string_accuracy_stderr"]);
        c.charStdErr = doubles(o["char_accuracy_stderr"]);  // absent in run folders written before it was kept
        if (c.stringAccuracy.size() != c.lengths.size()) return std::nullopt;
    }
    return c;
}

QString statusName(TrainOutcome::Status s)
{
    switch (s) {
    case TrainOutcome::Status::Finished: return "finished";
    case TrainOutcome::Status::Cancelled: return "cancelled";
    case TrainOutcome::Status::Diverged: return "diverged";
    case TrainOutcome::Status::Failed: return "failed";
    }
    return "unknown";
}

}  // namespace parrot
