// The estimators every in-context-learning curve is compared with (Garg et al., 2022; Park et
// al., 2024), each predicting y_i from the pairs before it in the same prompt:
//   least squares  minimum-norm solution of X w = y on the i pairs seen (pseudo-inverse)
//   averaging      w = (1/i) sum_j y_j x_j
//   3-NN           mean y of the 3 nearest earlier x (Euclidean; fewer when fewer are seen)
//   Lasso          coordinate descent on (1/2i)|y - Xw|^2 + alpha |w|_1, alpha = 0.01 (sparse task)
//   zero           always 0
#pragma once

#include "base/tasks/icltask.h"

#include <QString>

#include <vector>

namespace parrot {

struct BaselineCurve {
    QString name;
    std::vector<double> error;  // per pair index: mean squared error / d over the prompts where it is scored
};

// The baselines that apply to the task (none for sparse parity and vector MQAR), over the prompts.
std::vector<BaselineCurve> iclBaselines(const IclTask& task, const std::vector<IclPrompt>& prompts);

// One baseline's prediction of pair i of a prompt from pairs 0..i-1 (exposed for the tests).
double leastSquaresPrediction(const IclPrompt& p, int i);
double averagingPrediction(const IclPrompt& p, int i);
double nearestNeighboursPrediction(const IclPrompt& p, int i, int k = 3);
double lassoPrediction(const IclPrompt& p, int i, double alpha = 0.01);

}  // namespace parrot
