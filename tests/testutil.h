// Small helpers shared by the tests.
#pragma once

#include "config.h"
#include "presets.h"

#include <QFile>
#include <QString>

namespace parrot::test {

// A copy experiment small enough to train in seconds on 2 cores.
inline ExperimentConfig tinyConfig(int steps = 20)
{
    ExperimentConfig c = loadPreset("copy-tiny");
    c.train.steps = steps;
    c.train.evalEvery = 0;
    c.train.checkpointEvery = 0;
    c.task.evalSamples = 32;
    return c;
}

// The tiny copy experiment with a small model of any family (d_model 32, 4 heads, d_state 4):
// builds and trains in well under a second per step.
inline ExperimentConfig smallConfig(const QString& kind, int steps = 20)
{
    ExperimentConfig c = tinyConfig(steps);
    c.model.kind = kind;
    c.model.dModel = 32;
    c.model.heads = 4;
    c.model.numMaskedHeads = 2;
    c.model.dState = 4;
    return c;
}

inline QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool writeAll(const QString& path, const QByteArray& data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

}  // namespace parrot::test
