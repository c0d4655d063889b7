// Attention heads switched off at forward time, the weights untouched: the causal test of what
// a head does. Zero takes the head's output (before the output projection) away; Mean replaces
// it by its mean over the input's positions, which keeps the head's average contribution and
// removes only what depends on where it looks.
#pragma once

#include <QString>

#include <utility>
#include <vector>

namespace parrot {

struct HeadAblation {
    enum class Method { Zero, Mean };
    Method method = Method::Zero;
    std::vector<std::pair<int, int>> heads;  // (layer, head), 0-based as the Explore tab numbers them

    bool isEmpty() const { return heads.empty(); }
    bool contains(int layer, int head) const;
    QString describe() const;  // "heads 1.2, 1.5 zeroed" / "head 0.3 replaced by its mean over the input"
};

QString ablationMethodName(HeadAblation::Method m);  // "zero", "mean"
// Throws parrot::Error naming the word and the choices.
HeadAblation::Method ablationMethodFromName(const QString& name);
// "1.2,1.5" -> {(1, 2), (1, 5)}. Throws parrot::Error naming the part that is not LAYER.HEAD.
std::vector<std::pair<int, int>> parseHeadList(const QString& text);

}  // namespace parrot
