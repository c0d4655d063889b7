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

QString StateShrink::describe() const
{
    switch (mode) {
    case Mode::Dims: return QString("the first %1 state dimension%2 of each channel kept").arg(dims).arg(dims == 1 ? "" : "s");
    case Mode::Channels: return QString("the state of the first %1% of the channels kept").arg(fraction * 100, 0, 'g', 3);
    case Mode::Bits: return QString("the state quantised to %1 bit%2 an entry").arg(bits).arg(bits == 1 ? "" : "s");
    case Mode::None: break;
    }
    return "the whole state";
}

StateShrink StateShrink::keepDims(int k)
{
    if (k < 1) throw Error(QString("state dimensions kept: %1, expected at least 1").arg(k));
    StateShrink s;
    s.mode = Mode::Dims;
    s.dims = k;
    return s;
}

StateShrink StateShrink::keepChannels(double fraction)
{
    if (!(fraction > 0 && fraction <= 1)) throw Error(QString("channel fraction kept: %1, expected above 0 and at most 1").arg(fraction));
    StateShrink s;
    s.mode = Mode::Channels;
    s.fraction = fraction;
    return s;
}

StateShrink StateShrink::quantise(int bits)
{
    if (bits < 1 || bits > 16) throw Error(QString("state bits: %1, expected 1..16").arg(bits));
    StateShrink s;
    s.mode = Mode::Bits;
    s.bits = bits;
    return s;
}

QString stateShrinkModeName(StateShrink::Mode m)
{
    switch (m) {
    case StateShrink::Mode::Dims: return "dims";
    case StateShrink::Mode::Channels: return "channels";
    case StateShrink::Mode::Bits: return "bits";
    case StateShrink::Mode::None: break;
    }
    return "none";
}

StateShrink::Mode stateShrinkModeFromName(const QString& name)
{
    for (StateShrink::Mode m : {StateShrink::Mode::Dims, StateShrink::Mode::Channels, StateShrink::Mode::Bits})
        if (name == stateShrinkModeName(m)) return m;
    throw Error(QString("unknown state sweep '%1' (expected dims, channels or bits)").arg(name));
}

}  // namespace parrot
