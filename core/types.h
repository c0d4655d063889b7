// Plain value snapshots that cross from the core to the UI and the command line.
// No torch here: the UI never holds a tensor (DESIGN.md).
#pragma once

#include <QMetaType>
#include <QString>

#include <vector>

namespace parrot {

// Accuracy against string length, from teacher-forced argmax over the answer.
struct LengthCurve {
    std::vector<int> lengths;
    std::vector<double> stringAccuracy;  // fraction of strings copied exactly
    std::vector<double> charAccuracy;    // fraction of answer characters right
    int samples = 0;                     // strings per length
    long long step = 0;                  // training step of the weights evaluated
    bool empty() const { return lengths.empty(); }
    double stringAccuracyAt(int length, double fallback = -1) const;
};

struct TrainProgress {
    long long step = 0;
    long long totalSteps = 0;
    long long examplesSeen = 0;
    double loss = 0;           // mean over the masked answer tokens of this step's batch
    double lr = 0;
    double tokensPerSecond = 0;
    double elapsedSeconds = 0; // wall time spent training, pauses excluded
    double etaSeconds = 0;
    bool paused = false;
};

struct TrainOutcome {
    enum class Status { Finished, Cancelled, Diverged, Failed };
    Status status = Status::Finished;
    long long step = 0;
    QString message;      // for the user: what happened and what was kept
    QString checkpoint;   // the last good checkpoint written, if any
    LengthCurve finalCurve;
};

// Attention weights of one input: layers x heads x T x T, row-major.
struct AttentionMaps {
    int layers = 0;
    int heads = 0;
    int length = 0;
    std::vector<float> weights;
    std::vector<QString> tokens;
    float at(int layer, int head, int query, int key) const
    {
        return weights[((size_t(layer) * heads + head) * length + query) * length + key];
    }
};

QString statusName(TrainOutcome::Status s);

}  // namespace parrot

Q_DECLARE_METATYPE(parrot::LengthCurve)
Q_DECLARE_METATYPE(parrot::TrainProgress)
Q_DECLARE_METATYPE(parrot::TrainOutcome)
