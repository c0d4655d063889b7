#include "analysis/inside.h"

#include "modelcatalog.h"
#include "error.h"
#include "tasks/tokentask.h"

#include <QFileInfo>

#include <algorithm>
#include <random>

namespace parrot {

const std::vector<BundledCheckpoint>& bundledCheckpoints()
{
    static const std::vector<BundledCheckpoint> all{
        {"hard-alibi", "Hard-ALiBi Transformer (bundled)", ":/checkpoints/copy-hard-alibi.safetensors"},
        {"mamba", "Mamba (bundled)", ":/checkpoints/copy-mamba.safetensors"},
    };
    return all;
}

const BundledCheckpoint& findBundled(const QString& id)
{
    QStringList ids;
    for (const BundledCheckpoint& b : bundledCheckpoints()) {
        if (b.id == id) return b;
        ids << b.id;
    }
    throw Error(QString("no bundled checkpoint \"%1\" (there are: %2)").arg(id, ids.join(", ")));
}

InsideSubject::InsideSubject(const Model& model, const QString& name) : m_model(model), m_name(name) {}

InsideSubject::InsideSubject(const ConstructionOptions& options)
    : m_construction(std::make_shared<const CopyConstruction>(options)), m_name(options.describe())
{
}

InsideSubject InsideSubject::load(const QString& checkpoint, const QString& name)
{
    return InsideSubject(Model::load(checkpoint), name.isEmpty() ? QFileInfo(checkpoint).fileName() : name);
}

QString InsideSubject::summary() const
{
    if (m_construction)
        return QString("%1: weights set by hand, no training; 2 layers, %2 heads in layer 1, 1 in layer 2")
            .arg(m_construction->options().describe())
            .arg(m_construction->options().n);
    return m_model.isNull() ? QString("no model") : m_model.summary();
}

QString InsideSubject::architecture() const
{
    if (m_construction) return "construction";
    if (m_model.isNull()) return {};
    const ModelConfig& m = m_model.config().model;
    return architectureKey(m);
}

QString InsideSubject::copyProblem() const
{
    if (m_construction) return {};
    if (m_model.isNull()) return "no model";
    const TaskConfig t = evaluationTask(m_model.config().task);
    if (t.kind != "copy" && t.kind != "copy_dup_ngram")
        return QString("these views read copy inputs; this model was trained on %1").arg(m_model.config().task.kind);
    return {};
}

int InsideSubject::letters() const
{
    if (m_construction) return m_construction->options().letters;
    return m_model.isNull() ? 0 : m_model.config().task.vocabSize;
}

ModelProbes InsideSubject::probe(const std::vector<int>& tokens) const
{
    if (m_construction) return m_construction->probe(tokens);
    if (m_model.isNull()) throw Error("no model to look inside");
    return m_model.probe(tokens);
}

std::vector<int> InsideSubject::predictions(const std::vector<int>& tokens) const
{
    const int T = int(tokens.size());
    const std::vector<float> logits = m_construction ? m_construction->logits(tokens) : m_model.logits(tokens, 1, T);
    const int V = T > 0 ? int(logits.size()) / T : 0;
    std::vector<int> out;
    for (int t = 0; t < T; ++t) {
        const auto row = logits.begin() + ptrdiff_t(t) * V;
        out.push_back(int(std::max_element(row, row + V) - row));
    }
    return out;
}

std::vector<int> copyInput(const QString& text, int letters)
{
    QString s = text;
    s.remove(' ');
    if (s.isEmpty()) throw Error("input: expected a string of letters, e.g. \"hello\"");
    const CopyVocab vocab{letters};
    std::vector<int> ids;
    for (const QChar ch : s) {
        int id = -1;
        for (int k = CopyVocab::FirstLetter; k < vocab.size() && id < 0; ++k)
            if (vocab.text(k) == QString(ch)) id = k;
        if (id < 0)
            throw Error(QString("input: '%1' is not in the alphabet of %2 letters (%3 .. %4)")
                            .arg(ch).arg(letters).arg(vocab.text(CopyVocab::FirstLetter), vocab.text(vocab.size() - 1)));
        ids.push_back(id);
    }
    std::vector<int> tokens{CopyVocab::Bos};
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    tokens.push_back(CopyVocab::Sep);
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    tokens.push_back(CopyVocab::Eos);
    return tokens;
}

std::vector<int> randomCopyInput(int length, int letters, unsigned long long seed, const QString& kind, int ngram)
{
    TaskConfig t;
    t.kind = kind;
    t.vocabSize = letters;
    t.ngram = ngram;
    t.minLen = t.maxLen = std::max(1, length);
    t.contextLen = std::max(t.contextLen, 2 * length + 8);
    t.evalLengths = {t.maxLen};
    const std::unique_ptr<TokenTask> task = TokenTask::create(t);
    const QString problem = task->checkDifficulty(length);
    if (!problem.isEmpty()) throw Error("input length: " + problem);
    std::mt19937_64 rng(seed);
    return task->example(length, rng).tokens;
}

CopyScore scoreCopy(const std::vector<int>& tokens, const std::vector<int>& predictions)
{
    if (predictions.size() != tokens.size())
        throw Error(QString("copy score: %1 predictions for %2 tokens").arg(predictions.size()).arg(tokens.size()));
    CopyScore s;
    s.wrong.assign(tokens.size(), false);
    const auto sep = std::find(tokens.begin(), tokens.end(), int(CopyVocab::Sep));
    const auto end = std::find(sep, tokens.end(), int(CopyVocab::Eos));
    for (auto t = size_t(sep - tokens.begin()), last = size_t(end - tokens.begin()); t + 1 < last; ++t, ++s.answers) {
        s.wrong[t] = predictions[t] != tokens[t + 1];
        s.right += !s.wrong[t];
    }
    return s;
}

}  // namespace parrot
