#include "ui/jobs/insidesession.h"

#include "base/error.h"
#include "core/text/languagemodel.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>

namespace parrot {

namespace {

// What a probe reads, copied for its thread.
struct ProbeRequest {
    InsideSubject subject;
    InsideSession::Input input;
    std::vector<int> copyTokens;
    QString prompt;
    int difficulty = 0;
    unsigned long long seed = 0;
    HeadAblation ablation;
};

struct Probed {
    std::vector<int> tokens;
    TaskInput task;
    ModelProbes probes;
    std::vector<int> predictions;
    QString continuation;
    std::vector<int> plainPredictions;  // with every head, when heads are off
    QString plainContinuation;
};

// The input as the subject reads it; throws parrot::Error for letters outside a copy model's alphabet.
void readInput(const ProbeRequest& r, Probed& p)
{
    if (r.input == InsideSession::Input::Text) {
        p.tokens = r.subject.encode(r.prompt);
    } else if (r.input == InsideSession::Input::Task) {
        p.task = r.subject.taskInput(r.difficulty, r.seed);
        p.tokens = p.task.tokens;
    } else {
        p.tokens = r.copyTokens;
        for (int t : p.tokens)  // the input's letters must be in this subject's alphabet
            if (t >= CopyVocab{r.subject.letters()}.size())
                throw Error(InsideSession::tr("the input has letters outside this model's alphabet of %1").arg(r.subject.letters()));
    }
}

// On the probe's thread: the probes and the predictions, with the heads switched off (and, for the
// comparison, the predictions with every head), and what a language model answers.
Probed probeSubject(const ProbeRequest& r, JobContext& job)
{
    Probed p;
    readInput(r, p);
    const InsideSubject& subject = r.subject;
    const auto keepGoing = [&job](int, int) { return !job.cancelled(); };
    std::optional<SubjectHeadsOff> off;
    if (!r.ablation.isEmpty()) {
        p.plainPredictions = subject.predictions(p.tokens);
        if (const LanguageModel* lm = subject.languageModel()) p.plainContinuation = lm->generate(r.prompt, 16, keepGoing).text;
        off.emplace(subject, r.ablation);
    }
    p.probes = subject.probe(p.tokens, [&job] { return !job.cancelled(); });
    p.predictions = p.probes.predictions.size() == p.tokens.size() ? p.probes.predictions : subject.predictions(p.tokens);
    // what it answers: a phone book's number, the rest of a passage (greedy, a line's worth)
    if (const LanguageModel* lm = subject.languageModel()) p.continuation = lm->generate(r.prompt, 16, keepGoing).text;
    return p;
}

// A run folder's checkpoint to open: `checkpoint`, else its last, else its latest snapshot ("" for none).
QString runCheckpoint(const QDir& dir, const QString& checkpoint)
{
    if (!checkpoint.isEmpty()) return checkpoint;
    if (dir.exists("checkpoints/last.safetensors")) return dir.filePath("checkpoints/last.safetensors");
    const QStringList snapshots = QDir(dir.filePath("checkpoints/snapshots")).entryList({"step-*.safetensors"}, QDir::Files, QDir::Name);
    return snapshots.isEmpty() ? QString() : dir.filePath("checkpoints/snapshots/" + snapshots.last());
}

HeadAblation firstHead()
{
    HeadAblation a;
    a.heads = {{0, 0}};
    return a;
}

}  // namespace

InsideSession::InsideSession(QObject* parent) : QObject(parent)
{
    connect(&m_load, &BackgroundJob::progress, this, [this](int done, int total) {
        setStatus(tr("Loading %1: %2 of %3 tensors…").arg(m_loading).arg(done).arg(total));
    });
}

void InsideSession::setStatus(const QString& text)
{
    m_status = text;
    emit statusChanged(m_status);
}

void InsideSession::fail(const QString& message)
{
    setStatus(message);
    emit failed(message);
}

void InsideSession::openBundled(const QString& id)
{
    try {
        const BundledCheckpoint& b = findBundled(id);
        const QString path = b.path, label = b.label;
        load(label, [path, label](JobContext&) { return InsideSubject::load(path, label); });
    } catch (const Error& e) {
        setStatus(e.message());
    }
}

void InsideSession::openConstruction(int n, int letters)
{
    load(tr("the construction"), [n, letters](JobContext&) { return InsideSubject(ConstructionOptions{n, letters}); });
}

void InsideSession::openCheckpoint(const QString& path)
{
    load(QFileInfo(path).fileName(), [path](JobContext&) { return InsideSubject::load(path); });
}

void InsideSession::openRun(const QString& runDir, const QString& checkpoint)
{
    const QDir dir(runDir);
    const QString path = runCheckpoint(dir, checkpoint);
    if (path.isEmpty()) {
        fail(tr("Cannot open %1: it has no checkpoints/last.safetensors and no snapshots").arg(dir.absolutePath()));
        emit refreshed();
        return;
    }
    const QString name = dir.dirName();
    load(name, [path, name](JobContext&) { return InsideSubject::load(path, name); }, dir.absolutePath(), path);
}

void InsideSession::openSnapshot(int index)
{
    if (index < 0 || index >= int(m_snapshots.size())) return;
    const RunSnapshot shot = m_snapshots[size_t(index)];
    const QString name = tr("%1, %2").arg(QDir(m_runDir).dirName(), shot.label());
    load(name, [path = shot.path, name](JobContext&) { return InsideSubject::load(path, name); }, m_runDir, shot.path);
}

void InsideSession::openModel(const Model& model, const QString& what, const QString& name)
{
    load(what, [model, name](JobContext&) { return InsideSubject(model, name); });
}

void InsideSession::openLanguageModel(const std::shared_ptr<const LanguageModel>& lm)
{
    if (!lm) return;
    load(lm->name, [lm](JobContext&) { return InsideSubject(lm); });
}

void InsideSession::openModelFolder(const QString& folder)
{
    load(QFileInfo(folder).fileName(), [folder](JobContext& job) {
        return InsideSubject::loadLanguageModel(folder, [&job](int done, int total) {
            job.progress(done, total);
            return !job.cancelled();
        });
    });
}

void InsideSession::load(const QString& what, std::function<InsideSubject(JobContext&)> make, const QString& runDir,
                         const QString& path)
{
    m_probe.cancel();  // of the subject being replaced
    setStatus(tr("Loading %1…").arg(what));
    m_loading = what;
    emit loading();
    struct Opened {
        InsideSubject subject;
        std::vector<RunSnapshot> snapshots;
    };
    m_load.start(
        [make, runDir](JobContext& job) {
            Opened o{make(job), {}};
            if (!runDir.isEmpty()) o.snapshots = runSnapshots(runDir);  // a few file names, and mechanisms.csv for the notes
            return o;
        },
        [this, runDir, path](const Opened& o) {
            if (m_subject.isNull() || o.subject.name() != m_subject.name() || m_runDir != runDir) m_ablation.heads.clear();
            m_subject = o.subject;
            if (!m_subject.ablationProblem(m_ablation).isEmpty()) m_ablation.heads.clear();  // heads this subject has not
            m_runDir = runDir;
            m_snapshots = o.snapshots;
            showSnapshotOf(path);
            emit subjectChanged();
            probe();
            emit opened();
        },
        [this, what](const QString& message) {
            const QString error = tr("Cannot open %1: %2").arg(what, message);
            setStatus(error);
            emit openFailed(error);
            emit failed(error);
            emit refreshed();
        });
}

void InsideSession::showSnapshotOf(const QString& path)
{
    m_shownSnapshot = -1;
    for (size_t i = 0; i < m_snapshots.size() && m_shownSnapshot < 0; ++i)
        if (QFileInfo(m_snapshots[i].path) == QFileInfo(path)) m_shownSnapshot = int(i);
    for (size_t i = 0; i < m_snapshots.size() && m_shownSnapshot < 0; ++i)  // last.safetensors, listed as its step's snapshot
        if (m_snapshots[i].step == m_subject.model().step()) m_shownSnapshot = int(i);
    m_shownPath = m_shownSnapshot >= 0 ? m_snapshots[size_t(m_shownSnapshot)].path : path;
}

void InsideSession::setInput(const std::vector<int>& tokens)
{
    m_input = Input::Copy;
    m_copyTokens = tokens;
    if (!m_subject.isNull() && !m_load.isRunning()) probe();  // else the subject, once loaded, is probed with it
}

void InsideSession::setTextInput(const QString& prompt)
{
    m_input = Input::Text;
    m_prompt = prompt;
    if (!m_subject.isNull() && !m_load.isRunning()) probe();
}

void InsideSession::setTaskInput(int difficulty, unsigned long long seed)
{
    m_input = Input::Task;
    m_taskDifficulty = difficulty;
    m_taskSeed = seed;
    if (!m_subject.isNull() && !m_load.isRunning()) probe();
}

const TaskInput* InsideSession::shownTask() const
{
    return m_input == Input::Task && !m_task.tokens.empty() && m_task.tokens == m_tokens ? &m_task : nullptr;
}

QString InsideSession::inputProblem() const
{
    const QString problem = m_input == Input::Task ? m_subject.taskProblem() : m_subject.inputProblem(m_input == Input::Text);
    if (!problem.isEmpty()) return tr("%1: %2").arg(m_subject.name(), problem);
    const bool none = m_input == Input::Text ? m_prompt.isEmpty() : m_input == Input::Copy ? m_copyTokens.empty() : m_taskDifficulty < 1;
    return none ? tr("No input yet.") : QString();
}

void InsideSession::probe()
{
    if (const QString problem = inputProblem(); !problem.isEmpty()) {
        m_probe.cancel();
        dropProbes(problem);
        emit refreshed();
        return;
    }
    const ProbeRequest request{m_subject, m_input, m_copyTokens, m_prompt, m_taskDifficulty, m_taskSeed, m_ablation};
    setStatus(m_ablation.isEmpty() ? tr("Looking inside %1…").arg(m_subject.name())
                                   : tr("Looking inside %1 with %2…").arg(m_subject.name(), m_ablation.describe()));
    m_probe.start([request](JobContext& job) { return probeSubject(request, job); },
                  [this](const Probed& p) {
                      m_tokens = p.tokens;
                      m_task = p.task;
                      m_probes = p.probes;
                      m_predictions = p.predictions;
                      m_continuation = p.continuation;
                      const bool plain = p.plainPredictions.size() == p.tokens.size() && !p.tokens.empty();
                      m_plainScore = plain ? m_subject.score(m_tokens, p.plainPredictions, shownTask()) : CopyScore{};
                      m_plainContinuation = p.plainContinuation;
                      setStatus(m_ablation.isEmpty() ? m_subject.summary() : tr("%1 — %2").arg(m_subject.summary(), m_ablation.describe()));
                      analyse();
                      emit probed();
                      emit refreshed();
                  },
                  [this](const QString& error) {
                      dropProbes(tr("%1: %2").arg(m_subject.name(), error));
                      emit failed(m_status);
                      emit refreshed();
                  });
}

void InsideSession::dropProbes(const QString& status)
{
    setStatus(status);
    m_probes = {};
    m_tokens.clear();
    m_task = {};
    m_predictions.clear();
    m_continuation.clear();
    analyse();
    emit probed();
}

void InsideSession::analyse()
{
    m_queries.reset();
    m_analysis.reset();
    if (!m_tokens.empty()) {
        try {
            m_queries = m_subject.lookupQueries(m_tokens, shownTask());
        } catch (const Error&) {
            // not a copy input: no queries, heads unlabelled
        }
    }
    if (m_queries && m_probes.attention.layers > 0 && int(m_tokens.size()) == m_probes.attention.length) {
        try {
            m_analysis = analyseLookup(m_probes.attention, m_tokens, m_queries->first, m_queries->second);
        } catch (const Error&) {
            // heads unlabelled
        }
    }
    m_scored = m_predictions.size() == m_tokens.size() && !m_tokens.empty();
    m_score = m_scored ? m_subject.score(m_tokens, m_predictions, shownTask()) : CopyScore{};
}

bool InsideSession::setHeadOff(int layer, int head, bool off)
{
    HeadAblation next = m_ablation;
    auto& hs = next.heads;
    const auto it = std::find(hs.begin(), hs.end(), std::make_pair(layer, head));
    if (off == (it != hs.end())) return false;
    if (off) hs.emplace_back(layer, head);
    else hs.erase(it);
    if (const QString problem = m_subject.ablationProblem(next); !problem.isEmpty()) {
        fail(problem);
        return false;
    }
    m_ablation = next;
    probe();
    return true;
}

bool InsideSession::setAblationMethod(HeadAblation::Method method)
{
    if (m_ablation.method == method) return false;
    m_ablation.method = method;
    if (m_ablation.isEmpty()) return false;
    probe();
    return true;
}

bool InsideSession::resetHeads()
{
    if (m_ablation.isEmpty()) return false;
    m_ablation.heads.clear();
    probe();
    return true;
}

bool InsideSession::hasSwitchableHeads() const { return !m_subject.isNull() && m_subject.ablationProblem(firstHead()).isEmpty(); }

bool InsideSession::hasShrinkableState() const
{
    return !m_subject.isNull() && !m_subject.isConstruction() && !m_subject.readsText() && !m_subject.model().stateLayout().channels.empty();
}

}  // namespace parrot
