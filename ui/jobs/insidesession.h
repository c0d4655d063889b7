// One Explore pane's look inside a subject, without its widgets: the subject opened (a bundled
// checkpoint, a checkpoint or run folder with its snapshots, the model in the Train tab, the copy
// construction, a pretrained language model), the input it reads (a copy input, a text prompt or an
// example of its own task), its heads switched off, and what probing it found: the probes, the
// predictions (and a language model's continuation), the lookup analysis of its heads and the
// answers scored. InsidePane (ui/panels/insidepane.h) shows what the session reports; tests drive
// it with no window at all.
//
// Opening and probing run off the GUI thread, each in a BackgroundJob: a new subject drops the
// probe of the old one, and a new input waits for a subject being opened. Every change of what
// was found arrives as probed(), then refreshed(); the status line says what the session is doing
// or what went wrong.
#pragma once

#include "base/analysis/lookup.h"
#include "base/io/runfolder.h"
#include "core/analysis/inside.h"
#include "ui/jobs/backgroundjob.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace parrot {

struct LanguageModel;

class InsideSession : public QObject {
    Q_OBJECT
public:
    enum class Input { Copy, Text, Task };

    explicit InsideSession(QObject* parent = nullptr);

    // Opening a subject: loading() at once, then subjectChanged() and opened() or openFailed().
    // Opening the subject shown again keeps its heads switched off; another switches them on.
    void openBundled(const QString& id);
    void openConstruction(int n, int letters);
    void openCheckpoint(const QString& path);  // a file on its own: openRun for one inside a run folder
    // A run folder: `checkpoint` inside it, else its last checkpoint (or latest snapshot), with its
    // snapshots to step through.
    void openRun(const QString& runDir, const QString& checkpoint = {});
    void openSnapshot(int index);  // one of snapshots()
    // A model held elsewhere (the Train tab's): `what` for the status line, `name` the subject's.
    void openModel(const Model& model, const QString& what, const QString& name);
    void openLanguageModel(const std::shared_ptr<const LanguageModel>& lm);
    void openModelFolder(const QString& folder);  // a HuggingFace folder, loaded here
    // A request that could not be made (no model to open, a head to switch off that is not
    // there): the status line says `message`, and failed() carries it.
    void fail(const QString& message);

    // The input. Each probes the subject again (once it is open).
    void setInput(const std::vector<int>& tokens);  // a copy input
    void setTextInput(const QString& prompt);       // a text prompt
    // An example of the subject's own task (InsideSubject::taskInput), drawn again for each subject.
    void setTaskInput(int difficulty, unsigned long long seed);
    Input input() const { return m_input; }

    // Heads switched off (a forward-time mask, the weights untouched): the subject is probed again
    // with them off. Each returns whether it probes again; a head the subject does not have is
    // refused through fail().
    const HeadAblation& ablation() const { return m_ablation; }
    bool setHeadOff(int layer, int head, bool off);
    bool setAblationMethod(HeadAblation::Method method);
    bool resetHeads();
    // The subject has heads to switch off (and so to rank); it has a state to shrink.
    bool hasSwitchableHeads() const;
    bool hasShrinkableState() const;

    const InsideSubject& subject() const { return m_subject; }
    QString status() const { return m_status; }
    bool isOpening() const { return m_load.isRunning(); }
    bool busy() const { return m_load.isRunning() || m_probe.isRunning(); }

    // What the last probe found (empty after a failure or without an input).
    const std::vector<int>& tokens() const { return m_tokens; }  // the input as this subject read it
    const ModelProbes& probes() const { return m_probes; }
    const std::vector<int>& predictions() const { return m_predictions; }
    QString continuation() const { return m_continuation; }  // a language model's greedy answer to the prompt
    const TaskInput& taskInput() const { return m_task; }     // the task example read (empty tokens for another input)
    const TaskInput* shownTask() const;  // the same, or nullptr when the tokens are no task example
    // The lookup analysis of the attention heads (nullptr: none, or an input it cannot read) and
    // the queries it read (none for a copy input without `|`).
    const LookupAnalysis* analysis() const { return m_analysis ? &*m_analysis : nullptr; }
    std::optional<std::pair<int, int>> queries() const { return m_queries; }
    bool scored() const { return m_scored; }  // there are predictions for the tokens shown
    const CopyScore& score() const { return m_score; }
    // With every head, while heads are off: the answers scored and a language model's continuation.
    const CopyScore& plainScore() const { return m_plainScore; }
    QString plainContinuation() const { return m_plainContinuation; }

    // The run whose snapshots are listed (empty for anything else), and the one shown (-1: none).
    const std::vector<RunSnapshot>& snapshots() const { return m_snapshots; }
    int shownSnapshot() const { return m_shownSnapshot; }
    QString shownPath() const { return m_shownPath; }  // the checkpoint of the run shown

signals:
    void statusChanged(const QString& status);
    void loading();         // a subject is being opened
    void subjectChanged();  // it was: the subject and the snapshots listed are the new ones, its probe about to start
    void opened();          // and its probe is under way
    void openFailed(const QString& message);
    void probed();     // what the probe found changed (a result, a failure, no input)
    void refreshed();  // a subject was opened and probed (or failed: see status())
    void failed(const QString& message);

private:
    void setStatus(const QString& text);
    // `runDir`: also list that run's snapshots (off the GUI thread too), `path` being the one loaded.
    void load(const QString& what, std::function<InsideSubject(JobContext&)> make, const QString& runDir = {},
              const QString& path = {});
    void showSnapshotOf(const QString& path);  // picks shownSnapshot() for the checkpoint loaded
    QString inputProblem() const;              // why the subject cannot read the input, "" when it can
    void probe();
    void dropProbes(const QString& status);  // nothing found: the status says why
    void analyse();                          // the lookup analysis and the score of what was found

    InsideSubject m_subject;
    QString m_status;
    Input m_input = Input::Copy;
    std::vector<int> m_copyTokens;  // the copy input given
    QString m_prompt;               // the text prompt given
    int m_taskDifficulty = 0;       // the task example asked for
    unsigned long long m_taskSeed = 0;
    HeadAblation m_ablation;

    std::vector<int> m_tokens;  // what the subject read: the copy input, the prompt's tokens, a task example's
    TaskInput m_task;           // the task example read, with its answers
    ModelProbes m_probes;
    std::vector<int> m_predictions;
    QString m_continuation;
    std::optional<LookupAnalysis> m_analysis;
    std::optional<std::pair<int, int>> m_queries;
    CopyScore m_score;
    bool m_scored = false;
    CopyScore m_plainScore;
    QString m_plainContinuation;

    QString m_runDir;  // the run whose snapshots are listed
    std::vector<RunSnapshot> m_snapshots;
    int m_shownSnapshot = -1;
    QString m_shownPath;
    QString m_loading;  // what m_load is loading, for its progress
    BackgroundJob m_load;
    BackgroundJob m_probe;
};

}  // namespace parrot
