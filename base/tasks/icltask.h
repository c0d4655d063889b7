// The in-context-learning tasks of "Can Mamba Learn How to Learn?" (Park et al., 2024), after
// Garg et al. (2022): a prompt is x1, y1, x2, y2, ... as vectors (y padded to d dims), read in by
// a linear layer; the model predicts y_i at the position of x_i, having seen i examples.
// Plain C++ (no torch) for the generators; the baselines are in iclbaselines.h.
//
// Function classes (d = task.dims; one function per prompt, x ~ N(0, I_d) unless said):
//   linear_regression             y = w.x, w ~ N(0, I_d)
//   sparse_linear_regression      w with task.sparsity non-zero coordinates
//   relu_regression               y = sum_j a_j relu(v_j.x), 100 hidden units, a ~ N(0, 2/100), v ~ N(0, I_d)
//   decision_tree                 depth-4 binary tree on random coordinates (split at 0), N(0, 1) leaves
//   orthogonal_outlier_regression y = w.x; each pair is, with probability task.outlier_prob, an outlier
//                                 with y = u.x for a u orthogonal to w (loss on clean pairs only)
//   many_outlier_regression       y = w.x; each pair is, with probability task.outlier_prob, the
//                                 outlier x = (1, ..., 1), y = 1 (loss on clean pairs only)
//   sparse_parity                 x ~ {-1, +1}^d, y = product of task.sparsity coordinates, a fresh
//                                 subset per prompt: the task is to find it in context
//   vector_mqar                   pairs (k_i, v_i) of random vectors of norm sqrt(d), then queries that
//                                 repeat keys; predict the value (d outputs) at each query
#pragma once

#include "base/config.h"
#include "base/tasks/taskcatalog.h"

#include <QString>

#include <algorithm>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace parrot {

// One prompt: `pairs` (x, y) with d-dim x and dOut-dim y, and which pairs are scored.
struct IclPrompt {
    int pairs = 0, d = 0, dOut = 0;
    std::vector<float> x;         // pairs x d
    std::vector<float> y;         // pairs x dOut
    std::vector<uint8_t> scored;  // pairs: predict y_i at x_i and count it (clean pairs; MQAR's queries)
};

// A batch of prompts laid out for the model: inputs (B, 2 * pairs, d) with x tokens at even
// positions and y tokens (padded with zeros to d) at odd ones; targets (B, pairs, dOut).
struct VectorBatch {
    int batch = 0, pairs = 0, d = 0, dOut = 0;
    std::vector<float> inputs;
    std::vector<float> targets;
    std::vector<uint8_t> scored;  // (B, pairs)
};

class IclTask {
public:
    static std::unique_ptr<IclTask> create(const TaskConfig& config);  // throws parrot::Error
    virtual ~IclTask() = default;

    const TaskConfig& config() const { return m_config; }
    int dims() const { return m_config.dims; }
    virtual int outputDims() const { return 1; }
    // What the evaluation reports (the catalogue's entry): "error" (squared error / dOut against
    // examples seen) or "accuracy" (parity: sign right; MQAR: nearest value in the prompt right).
    QString metric() const { return findTask(m_config.kind)->metric; }
    // MQAR's curve runs over the number of pairs (eval lengths); the others over the prefix.
    bool curveOverPairs() const { return !findTask(m_config.kind)->promptCurve; }

    // A curriculum's stage: x drawn on the first `active` coordinates only, the rest zero (sparse
    // parity's subset among them); task.dims (all) unless set.
    void setActiveDims(int active) { m_active = active; }
    int activeDims() const { return m_active > 0 ? std::min(m_active, dims()) : dims(); }
    // The curriculum's stage at `step` of training (train.curriculum_*): active dims and the most
    // pairs a prompt has. Without a curriculum, task.dims and task.max_len.
    static std::pair<int, int> curriculumStage(const ExperimentConfig& c, long long step);

    // `batch` prompts of `pairs` pairs (MQAR: key-value pairs plus as many queries).
    VectorBatch batch(int batch, int pairs, std::mt19937_64& rng) const;
    VectorBatch batchOf(const std::vector<IclPrompt>& prompts) const;
    std::vector<IclPrompt> prompts(int batch, int pairs, std::mt19937_64& rng) const;

protected:
    explicit IclTask(const TaskConfig& c) : m_config(c) {}
    // One prompt of `pairs` pairs.
    virtual IclPrompt prompt(int pairs, std::mt19937_64& rng) const = 0;
    // Zeroes x's coordinates past activeDims() (a curriculum's early stage).
    void maskInactive(float* x) const;
    TaskConfig m_config;
    int m_active = 0;
};

}  // namespace parrot
