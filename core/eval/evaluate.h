// Evaluating a model's weights (torch side; Model::evaluate in model.h is the facade's entry):
// the teacher-forced accuracy of a token task against length, and the in-context-learning
// curves (error or sign accuracy after each number of examples, with the classical baselines;
// vector MQAR's accuracy against the number of pairs).
#pragma once

#include "core/modelimpl.h"

#include <functional>

namespace parrot {

// The seed of one evaluation point's examples: fixed per (seed, length), so curves at different
// steps, and the same evaluation run again, see the same examples.
uint64_t evaluationSeed(unsigned long long seed, int length);

// Token tasks: at each length, `samples` fresh examples (of task.eval_kind's task when set),
// whole answers right and answer tokens right. In-context tasks: see Model::evaluate.
// `keepGoing(done, total)` is polled after each point (in-context: each batch); false stops
// the evaluation with what it has. Inputs are checked by Model::evaluate.
// `task`: another token task of the same vocabulary in place of the model's own.
LengthCurve evaluateTokens(Model::Impl& m, const std::vector<int>& lengths, int samples, unsigned long long seed,
                           const std::function<bool(int, int)>& keepGoing, const TaskConfig* task = nullptr);
LengthCurve evaluateInContext(Model::Impl& m, const std::vector<int>& lengths, int samples, unsigned long long seed,
                              const std::function<bool(int, int)>& keepGoing);

// The teacher-forced accuracy of one evaluation batch (one example per row, answers masked):
// adds the rows with every answer right, the answers right, and the answers.
void scoreBatch(SequenceModel& net, const TokenBatch& b, torch::Device device, long long& rowsRight,
                long long& answersRight, long long& answers);

// Vector MQAR's scoring of predictions (B, pairs + queries, dOut) for the batch `v` with `pairs`
// key-value pairs: the queries whose prediction is nearest (Euclidean, among the prompt's values)
// to the right value.
long long nearestValueHits(const torch::Tensor& predictions, const VectorBatch& v, int pairs);

}  // namespace parrot
