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

// A state-space model's recurrent state made smaller at inference, the weights untouched: the
// causal test of the copy paper's state bound. Each SSM layer's state h (channels x d_state) keeps
//   Dims:     its first `dims` state dimensions (the others never fill: B and C are cut there);
//   Channels: the state of its first `fraction` of the channels (the others carry none: their
//             output is the skip D u alone);
//   Bits:     every entry quantised to `bits` bits after each step, on 2^bits levels evenly over
//             [-s, s], s the largest |h| of that channel at that step (one float per channel).
// The convolution's window (Mamba's d_conv - 1 inputs per channel) is left as it is.
struct StateShrink {
    enum class Mode { None, Dims, Channels, Bits };
    Mode mode = Mode::None;
    int dims = 0;          // Dims: 1..d_state
    double fraction = 1;   // Channels: (0, 1]
    int bits = 32;         // Bits: 1..16
    bool isEmpty() const { return mode == Mode::None; }
    // "first 4 of the state dimensions" / "the first 50% of the channels" / "state quantised to 4 bits"
    QString describe() const;
    static StateShrink keepDims(int k);
    static StateShrink keepChannels(double fraction);
    static StateShrink quantise(int bits);
};

QString stateShrinkModeName(StateShrink::Mode m);  // "dims", "channels", "bits"
// Throws parrot::Error naming the word and the choices.
StateShrink::Mode stateShrinkModeFromName(const QString& name);

}  // namespace parrot
