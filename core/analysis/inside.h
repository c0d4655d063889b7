// What the look-inside views open: a model (a checkpoint, a bundled one, the one being trained)
// or the copy paper's two-layer construction. Both answer the same questions for a copy input
// `$ s | s .`: the probes (attention, implicit attention, states) and the model's predictions.
#pragma once

#include "analysis/construction.h"
#include "model.h"

#include <memory>

namespace parrot {

class InsideSubject {
public:
    InsideSubject() = default;  // null
    InsideSubject(const Model& model, const QString& name);
    explicit InsideSubject(const ConstructionOptions& options);  // throws parrot::Error for bad options
    // Throws parrot::Error naming the file (see Model::load).
    static InsideSubject load(const QString& checkpoint, const QString& name = {});

    bool isNull() const { return m_model.isNull() && !m_construction; }
    QString name() const { return m_name; }
    QString summary() const;  // one line: what it is, its size, its step
    // "transformer/hard_alibi", "mamba", ..., or "construction"
    QString architecture() const;
    bool isConstruction() const { return bool(m_construction); }
    const Model& model() const { return m_model; }
    // Copy inputs are what these views read; "" when this subject reads them, else why not.
    QString copyProblem() const;
    int letters() const;  // the copy alphabet's size

    ModelProbes probe(const std::vector<int>& tokens) const;
    std::vector<int> predictions(const std::vector<int>& tokens) const;  // argmax of each position's logits

private:
    Model m_model;
    std::shared_ptr<const CopyConstruction> m_construction;
    QString m_name;
};

// `$ s | s .` from letters a user typed (spaces ignored). Throws parrot::Error naming the first
// character outside the alphabet of `letters` letters, or for an empty string.
std::vector<int> copyInput(const QString& text, int letters);
// A random copy example of `length` letters ("copy"), or one with an n-gram planted twice
// ("copy_dup_ngram", n = `ngram`). Throws parrot::Error for a length the task cannot make.
std::vector<int> randomCopyInput(int length, int letters, unsigned long long seed, const QString& kind = "copy", int ngram = 3);

}  // namespace parrot
