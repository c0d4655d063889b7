#include "core/analysis/inside.h"

#include "base/analysis/lookup.h"
#include "base/analysis/mechanisms.h"
#include "base/error.h"
#include "base/modelcatalog.h"
#include "base/tasks/tokentask.h"
#include "core/models/transformer.h"
#include "core/text/languagemodel.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>
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

InsideSubject::InsideSubject(std::shared_ptr<const LanguageModel> lm)
    : m_model(lm ? lm->model : Model()), m_lm(std::move(lm)), m_name(m_lm ? m_lm->name : QString())
{
}

InsideSubject InsideSubject::loadLanguageModel(const QString& folder, const std::function<bool(int, int)>& progress)
{
    return InsideSubject(std::make_shared<const LanguageModel>(LanguageModel::load(folder, progress)));
}

QString InsideSubject::summary() const
{
    if (m_construction)
        return QString("%1: weights set by hand, no training; 2 layers, %2 heads in layer 1, 1 in layer 2")
            .arg(m_construction->options().describe())
            .arg(m_construction->options().n);
    if (m_lm) return m_lm->summary();
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
    if (m_lm) return "a pretrained language model reads text: choose a text prompt (phone book, copy text, or your own) for the input";
    const TaskConfig t = evaluationTask(m_model.config().task);
    if (t.kind != "copy" && t.kind != "copy_dup_ngram")
        return QString("this model was trained on %1, not copying: choose an example of its task for the input").arg(m_model.config().task.kind);
    return {};
}

QString InsideSubject::taskProblem() const
{
    if (m_construction) return "the construction copies: choose a copy input (random string, or one with a repeated 3-gram)";
    if (m_model.isNull()) return "no model";
    if (m_lm) return "a pretrained language model reads text: choose a text prompt (phone book, copy text, or your own) for the input";
    const QString kind = m_model.config().task.kind;
    if (isVectorTask(kind)) return QString("this model reads vectors (%1, in-context learning), not tokens; its inside views are not there yet").arg(kind);
    return {};
}

TaskInput InsideSubject::taskInput(int difficulty, unsigned long long seed) const
{
    const QString problem = taskProblem();
    if (!problem.isEmpty()) throw Error(problem);
    const TaskConfig t = evaluationTask(m_model.config().task);
    const std::unique_ptr<TokenTask> task = TokenTask::create(t);
    const QString why = task->checkDifficulty(difficulty);
    if (!why.isEmpty()) throw Error(QString("%1 at %2: %3").arg(t.kind).arg(difficulty).arg(why));
    std::mt19937_64 rng(seed);
    TaskInput in;
    in.example = task->evalExample(difficulty, rng);
    in.tokens = task->modelInput(in.example);
    in.readsOut = task->readsOut();
    in.difficulty = difficulty;
    in.task = t.kind;
    return in;
}

std::pair<int, int> InsideSubject::lookupQueries(const TaskInput& input) { return scoredQueries(input.example); }

CopyScore InsideSubject::score(const TaskInput& input, const std::vector<int>& predictions) { return scoreAnswers(input, predictions); }

QString InsideSubject::inputProblem(bool text) const
{
    if (!text) return copyProblem();
    if (m_lm) return {};
    if (isNull()) return "no model";
    return "this model reads copy inputs, not text: choose a copy input, or open a pretrained language model in this pane";
}

std::vector<int> InsideSubject::encode(const QString& prompt) const
{
    if (!m_lm) throw Error(inputProblem(true));
    const std::vector<int> ids = m_lm->tokenizer.encode(prompt);
    if (ids.empty()) throw Error("the prompt is empty");
    const int most = maxProbeTokens();
    if (most > 0 && int(ids.size()) > most) {
        throw Error(QString("the prompt is %1 tokens; %2 looks inside at most %3 (%4) — shorten it, e.g. fewer phone-book entries")
                        .arg(ids.size()).arg(m_lm->name).arg(most)
                        .arg(m_lm->contextLength > 0 && most == m_lm->contextLength
                                 ? QString("its context")
                                 : QString("every map of a %1-token prompt would take %2 MB").arg(ids.size())
                                       .arg(std::ceil(double(ids.size()) * double(ids.size()) * 4.0 * probeMaps() / 1e6))));
    }
    return ids;
}

int InsideSubject::probeMaps() const
{
    if (m_model.isNull()) return 0;
    const ModelConfig& m = m_model.config().model;
    return m.kind == "mamba" ? int(m.layers) : int(m.layers) * int(m.heads);  // implicit maps, or every head's
}

int InsideSubject::maxProbeTokens() const
{
    if (!m_lm) return 0;
    int most = int(std::sqrt(kProbeBytes / 4.0 / std::max(1, probeMaps())));
    if (m_lm->contextLength > 0) most = std::min(most, m_lm->contextLength);
    return most;
}

QString InsideSubject::ablationProblem(const HeadAblation& ablation) const
{
    if (!m_construction) return m_model.ablationProblem(ablation);
    const int n = m_construction->heads();
    for (const auto& [layer, head] : ablation.heads)
        if (layer < 0 || layer > 1 || head < 0 || head >= n)
            return QString("head ablation: the construction has no head %1.%2 (layers 0..1, heads 0..%3)").arg(layer).arg(head).arg(n - 1);
    return {};
}

SubjectHeadsOff::SubjectHeadsOff(const InsideSubject& subject, const HeadAblation& ablation) : m_ablation(ablation)
{
    const QString problem = subject.ablationProblem(m_ablation);
    if (!problem.isEmpty()) throw Error(problem);
    m_previous = HeadAblationScope::exchange(&m_ablation);
}

SubjectHeadsOff::~SubjectHeadsOff() { HeadAblationScope::exchange(m_previous); }

int InsideSubject::letters() const
{
    if (m_construction) return m_construction->options().letters;
    return m_model.isNull() ? 0 : m_model.config().task.vocabSize;
}

namespace {

// A token as people read it in a map's labels: visible spaces and line breaks.
QString visibleToken(const BpeTokenizer& tok, int id)
{
    QString t = tok.decode({id});
    if (t.contains(QChar(0xFFFD))) return tok.tokenText(id);  // part of a character: the byte-level form
    t.replace(' ', QChar(0x00B7)).replace('\n', QChar(0x23CE)).replace('\t', QChar(0x21E5)).replace('\r', "\\r");
    return t.isEmpty() ? QString("∅") : t;
}

}  // namespace

ModelProbes InsideSubject::probe(const std::vector<int>& tokens, const std::function<bool()>& keepGoing) const
{
    if (m_construction) return m_construction->probe(tokens);
    if (m_model.isNull()) throw Error("no model to look inside");
    ModelProbes p = m_model.probe(tokens, keepGoing);
    if (m_lm) {
        for (size_t i = 0; i < tokens.size(); ++i) p.tokens[i] = visibleToken(m_lm->tokenizer, tokens[i]);
        p.attention.tokens = p.implicitAttention.tokens = p.tokens;
    }
    return p;
}

std::pair<int, int> InsideSubject::lookupQueries(const std::vector<int>& tokens) const
{
    if (m_lm) return {1, int(tokens.size())};
    return copyQueries(tokens, CopyVocab::Sep);
}

CopyScore InsideSubject::score(const std::vector<int>& tokens, const std::vector<int>& predictions) const
{
    return m_lm ? scoreText(tokens, predictions) : scoreCopy(tokens, predictions);
}

std::pair<int, int> InsideSubject::lookupQueries(const std::vector<int>& tokens, const TaskInput* task) const
{
    return task ? lookupQueries(*task) : lookupQueries(tokens);
}

CopyScore InsideSubject::score(const std::vector<int>& tokens, const std::vector<int>& predictions, const TaskInput* task) const
{
    return task ? score(*task, predictions) : score(tokens, predictions);
}

InsideLook lookInside(const InsideSubject& subject, const std::vector<int>& tokens, const TaskInput* task)
{
    const QString problem = task ? subject.taskProblem() : subject.inputProblem(subject.readsText());
    if (!problem.isEmpty()) throw Error(problem);
    InsideLook look;
    look.name = subject.name();
    look.architecture = subject.architecture();
    look.tokens = tokens;
    if (task) look.task = *task;
    look.probes = subject.probe(tokens);
    look.queries = subject.lookupQueries(tokens, task);
    if (look.probes.attention.layers > 0)
        look.analysis = analyseLookup(look.probes.attention, tokens, look.queries.first, look.queries.second);
    const std::vector<int> predictions = look.probes.predictions.size() == tokens.size() ? look.probes.predictions : subject.predictions(tokens);
    look.score = subject.score(tokens, predictions, task);
    return look;
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

CopyScore scoreAnswers(const TaskInput& input, const std::vector<int>& predictions)
{
    const Example& e = input.example;
    if (predictions.size() != e.tokens.size())
        throw Error(QString("answer score: %1 predictions for %2 tokens").arg(predictions.size()).arg(e.tokens.size()));
    CopyScore s;
    s.wrong.assign(e.tokens.size(), false);
    for (size_t t = 0; t < e.tokens.size(); ++t) {
        const size_t at = input.readsOut ? t : t + 1;  // the token this position should produce
        if (at >= e.tokens.size() || e.roles[at] != Role::Answer) continue;
        s.wrong[t] = predictions[t] != e.tokens[at];
        s.right += !s.wrong[t];
        ++s.answers;
    }
    return s;
}

void keepAnsweredQueries(const TaskInput& input, std::vector<std::pair<int, int>>& cells)
{
    const std::vector<Role>& roles = input.example.roles;
    const auto unanswered = [&](const std::pair<int, int>& cell) {
        const size_t at = size_t(cell.first) + (input.readsOut ? 0 : 1);
        return at >= roles.size() || roles[at] != Role::Answer;
    };
    cells.erase(std::remove_if(cells.begin(), cells.end(), unanswered), cells.end());
}

CopyScore scoreText(const std::vector<int>& tokens, const std::vector<int>& predictions)
{
    if (predictions.size() != tokens.size())
        throw Error(QString("text score: %1 predictions for %2 tokens").arg(predictions.size()).arg(tokens.size()));
    CopyScore s;
    s.wrong.assign(tokens.size(), false);
    for (int t = 0; t + 1 < int(tokens.size()); ++t) {
        const std::vector<int> found = earlierOccurrences(tokens, t, kTextCopyOrder);
        if (found.size() != 1 || tokens[size_t(found[0] + 1)] != tokens[size_t(t + 1)]) continue;
        ++s.answers;
        s.wrong[size_t(t)] = predictions[size_t(t)] != tokens[size_t(t + 1)];
        s.right += !s.wrong[size_t(t)];
    }
    return s;
}

}  // namespace parrot
