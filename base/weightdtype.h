// How a pretrained model's large matrices (its linear layers and embedding) are held in memory:
// the word a person chooses (--dtype, Preferences) and what it means. Everything else (norms,
// biases, Mamba's A and D, convolutions) and all arithmetic stay float32: a 16-bit weight is
// widened to float32 as it is used, exactly (every F16 and BF16 value is a float32 value), so a
// model held as stored computes what the same file loaded as float32 computes.
#pragma once

#include <QString>
#include <QStringList>

namespace parrot {

enum class WeightDtype {
    Auto,      // the file's own 16-bit type where this machine runs it at least as fast, else float32
    Float32,
    Float16,
    BFloat16,
};

QString weightDtypeName(WeightDtype d);         // "auto", "float32", "float16", "bfloat16"
QStringList weightDtypeNames();
// Throws parrot::Error naming the word and the choices.
WeightDtype weightDtypeFromName(const QString& name);
// The process-wide choice (the command line's --dtype, the window's Preferences): what loading a
// model uses unless told otherwise. Auto until set.
WeightDtype weightDtypeChoice();
void setWeightDtypeChoice(WeightDtype d);
// Bytes a parameter takes in memory held this way (Auto: as float32, the larger).
int weightDtypeBytes(WeightDtype d);

}  // namespace parrot
