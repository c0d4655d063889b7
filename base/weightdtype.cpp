#include "base/weightdtype.h"

#include "base/error.h"

#include <atomic>

namespace parrot {

QString weightDtypeName(WeightDtype d)
{
    switch (d) {
    case WeightDtype::Auto: return "auto";
    case WeightDtype::Float32: return "float32";
    case WeightDtype::Float16: return "float16";
    case WeightDtype::BFloat16: return "bfloat16";
    }
    return "auto";
}

QStringList weightDtypeNames() { return {"auto", "float32", "float16", "bfloat16"}; }

WeightDtype weightDtypeFromName(const QString& name)
{
    const QString n = name.trimmed().toLower();
    for (WeightDtype d : {WeightDtype::Auto, WeightDtype::Float32, WeightDtype::Float16, WeightDtype::BFloat16})
        if (weightDtypeName(d) == n) return d;
    throw Error(QString("unknown weight dtype '%1' (expected %2)").arg(name, weightDtypeNames().join(", ")));
}

namespace {
std::atomic<WeightDtype> g_choice{WeightDtype::Auto};
}  // namespace

WeightDtype weightDtypeChoice() { return g_choice.load(); }
void setWeightDtypeChoice(WeightDtype d) { g_choice.store(d); }

int weightDtypeBytes(WeightDtype d) { return d == WeightDtype::Float16 || d == WeightDtype::BFloat16 ? 2 : 4; }

}  // namespace parrot
