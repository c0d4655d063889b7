// The copy paper's two-layer construction measured: string accuracy against length for each
// n-gram order, beside its bound 1 - L^2 / |V|^n (dashed, same colour). Drawn by the Explore
// tab's construction view and by `parrotscope inspect --construction N --figure construction`.
#pragma once

#include "base/types.h"

#include <QString>

#include <vector>

class QCustomPlot;

namespace parrot {

struct ConstructionCurves {
    int letters = 26;
    std::vector<int> orders;          // n of each curve
    std::vector<LengthCurve> curves;  // measured, per n
};

// Draws the measured curves and their bounds; returns the data as CSV (n, length, accuracy, bound).
QString drawConstruction(QCustomPlot& plot, const ConstructionCurves& c);

}  // namespace parrot
