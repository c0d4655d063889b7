#include "base/ablation.h"

#include "base/error.h"

#include <QStringList>

#include <algorithm>

namespace parrot {

bool HeadAblation::contains(int layer, int head) const
{
    return std::find(heads.begin(), heads.end(), std::make_pair(layer, head)) != heads.end();
}

QString HeadAblation::describe() const
{
    if (heads.empty()) return "no head ablated";
    QStringList names;
    for (const auto& [l, h] : heads) names << QString("%1.%2").arg(l).arg(h);
    const bool one = heads.size() == 1;
    return QString("%1 %2 %3").arg(one ? "head" : "heads", names.join(", "),
                                   method == Method::Zero ? QString(one ? "zeroed" : "zeroed")
                                                          : QString(one ? "replaced by its mean over the input" : "replaced by their means over the input"));
}

QString ablationMethodName(HeadAblation::Method m) { return m == HeadAblation::Method::Zero ? "zero" : "mean"; }

HeadAblation::Method ablationMethodFromName(const QString& name)
{
    if (name == "zero") return HeadAblation::Method::Zero;
    if (name == "mean") return HeadAblation::Method::Mean;
    throw Error(QString("unknown ablation method '%1' (expected zero or mean)").arg(name));
}

std::vector<std::pair<int, int>> parseHeadList(const QString& text)
{
    std::vector<std::pair<int, int>> out;
    for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
        const QStringList lh = part.trimmed().split('.');
        bool okL = false, okH = false;
        const int l = lh.value(0).toInt(&okL), h = lh.value(1).toInt(&okH);
        if (lh.size() != 2 || !okL || !okH || l < 0 || h < 0)
            throw Error(QString("'%1' is not a head: expected LAYER.HEAD, e.g. 1.2 (0-based)").arg(part.trimmed()));
        if (std::find(out.begin(), out.end(), std::make_pair(l, h)) == out.end()) out.emplace_back(l, h);
    }
    if (out.empty()) throw Error(QString("'%1' names no head: expected LAYER.HEAD[,LAYER.HEAD...]").arg(text));
    return out;
}

}  // namespace parrot
