// One side of the Explore tab.
// Each pane shows one subject (a bundled checkpoint, the model being trained, any checkpoint, the
// copy paper's two-layer construction, or a pretrained model folder such as Pythia or Mamba, also
// those loaded in the Pretrained tab) in one of its views:
//   Attention           every layer x head as a thumbnail, n-gram lookup heads outlined; the
//                       selected head as a heatmap with the expected lookup positions marked
//   Implicit attention  Mamba's scan unrolled (one map per block, |alpha| averaged over channels)
//   State norm          per-channel hidden-state norm over time (Mamba, S4D, LSTM, hybrids)
//   Step size           Mamba's delta over time x channel
// A run folder (Open run folder…, a checkpoint inside one, or the Runs tab's Look inside) adds a
// row to step through the run's snapshots (checkpoints/snapshots, written while it trained, and its
// last checkpoint): "step 0 · step 20 · … · step 340 (before) · step 360 (lookup forms) · …", so the
// attention maps before, while and after a lookup head forms can be compared.
// Probing runs off the GUI thread; a pane shows what it is doing and any error in its status line.
// Long prompts: the maps zoom with the mouse wheel and pan by dragging (double-click: all of it);
// the token labels thin out to what fits.
// The views as data, and the same figures without a window, are in insidefigure.h.
#pragma once

#include "ui/jobs/backgroundjob.h"
#include "figures/heatmap.h"
#include "figures/insidefigure.h"

#include "core/analysis/inside.h"
#include "base/analysis/lookup.h"
#include "base/io/runfolder.h"
#include "core/text/languagemodel.h"

#include <QWidget>

#include <functional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QScrollArea;
class QSpinBox;
class QTabWidget;
class QVBoxLayout;
class QToolButton;

namespace parrot {

class ConstructionView;
class HeadImportanceDialog;
class StateSweepDialog;

class InsidePane : public QWidget {
    Q_OBJECT
public:
    static constexpr int kReadableRows = 40;  // a heatmap keeps room to read this many rows
    static constexpr int kThumbnail = 32;     // a head's thumbnail, in pixels: two layers of them stay short
    static constexpr int kSmallThumbnail = 22;  // when there are more than 16 maps
    static constexpr int kFlowThumbnail = 26;   // in a short pane
    static constexpr int kShortPane = 620;      // a pane shorter than this shows thumbnails without captions
    explicit InsidePane(QWidget* parent = nullptr);
    // The source entries: bundled checkpoints, "Model in the Train tab", the construction, a file.
    void setCurrentModelProvider(std::function<Model()> provider) { m_current = std::move(provider); }
    void chooseBundled(const QString& id);
    void chooseConstruction(int n, int letters);
    // A checkpoint; one inside a run folder also lists the run's snapshots to step through.
    void chooseCheckpoint(const QString& path);
    // A run folder: `checkpoint` inside it, else its last checkpoint (or latest snapshot), with its
    // snapshots to step through.
    void chooseRun(const QString& runDir, const QString& checkpoint = {});
    // The run's snapshots listed with the checkpoint shown (empty for anything else), the one shown.
    const std::vector<RunSnapshot>& snapshots() const { return m_snapshots; }
    QComboBox* snapshotBox() const { return m_step; }
    void showSnapshot(int index);
    void chooseCurrentModel();
    void chooseLanguageModel(const std::shared_ptr<const LanguageModel>& lm);
    void chooseModelFolder(const QString& folder);  // a HuggingFace folder, loaded here
    // The models of the Pretrained tab, offered in the source list.
    void setPretrainedModels(const std::vector<std::shared_ptr<const LanguageModel>>& models);
    void setInput(const std::vector<int>& tokens);  // a copy input
    void setTextInput(const QString& prompt);       // a text prompt
    // An example of the pane's model's own task (InsideSubject::taskInput): MQAR's pairs, a copy's
    // letters, drawn again for each subject the pane opens.
    void setTaskInput(int difficulty, unsigned long long seed);
    // The task example shown (empty tokens for another input).
    const TaskInput& taskInput() const { return m_task; }
    void setView(const QString& view);
    void selectMap(int index);

    const InsideSubject& subject() const { return m_subject; }
    QString view() const;
    const InsideView& shown() const { return m_view; }
    int selectedMap() const { return m_selected; }
    const std::vector<int>& tokens() const { return m_tokens; }  // the input as this subject read it
    const std::vector<int>& predictions() const { return m_predictions; }
    QString continuation() const { return m_continuation; }  // a language model's greedy answer to the prompt
    HeatmapView* heatmap() const { return m_heatmap; }
    QString status() const;
    QString info() const;
    bool busy() const { return m_load.isRunning() || m_probe.isRunning(); }

    // Heads switched off (a forward-time mask, the weights untouched): the pane is probed again
    // with them off, so its ✗ rows, its "copies k of L" line and a language model's continuation
    // are the ablated model's. Clicking a thumbnail switches its head while "Switch heads off"
    // is down; its context menu always can. A new subject switches every head back on.
    const HeadAblation& ablation() const { return m_ablation; }
    void setHeadOff(int layer, int head, bool off);
    void setAblationMethod(HeadAblation::Method method);
    void resetHeads();
    QToolButton* ablateModeButton() const { return m_ablateMode; }
    const std::vector<QToolButton*>& thumbnails() const { return m_thumbButtons; }  // one per map shown
    QToolButton* resetHeadsButton() const { return m_resetHeads; }
    QToolButton* importanceButton() const { return m_importanceButton; }
    QToolButton* sweepButton() const { return m_sweepButton; }
    // The every-head answers scored, while heads are off (for the comparison in the info line).
    const CopyScore& plainScore() const { return m_plainScore; }
    // The causal tests' dialogs for the subject shown (causaldialog.h); nullptr when it has no
    // heads (no state-space layers).
    HeadImportanceDialog* openHeadImportance();
    StateSweepDialog* openStateSweep();

signals:
    void refreshed();  // a subject was loaded and probed (or failed: see status())
    void opened();     // a subject was loaded (its probe under way)
    void failed(const QString& message);

protected:
    void resizeEvent(QResizeEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    int flowRoom() const;    // the width a short pane's thumbnails and status line get
    void showStatus();       // the status, on one line (elided) in a short pane
    void showInfo();         // the head's line: whole, or in a short pane two lines (whole in the tooltip)
    void fitMap();           // the map sized to the room the views' viewport leaves it
    void buildThumbnails();  // the row of each layer's heads (or of the blocks), captioned unless the pane is short or the maps many
    void onSource(int index);
    // `runDir`: also list that run's snapshots (off the GUI thread too), `path` being the one loaded.
    void load(const QString& what, std::function<InsideSubject(JobContext&)> make, const QString& runDir = {},
              const QString& path = {});
    void probe();
    void rebuild();
    void showMap();
    void restyle();
    const HeadLookup* selectedHead() const;  // the attention head shown, when the heads are analysed
    void followSelectedHead();
    void setStatus(const QString& text);
    void updateCausalRow();
    void toggleHead(size_t map);  // the thumbnail's head, on or off
    bool headOffAt(size_t map) const;

    std::function<Model()> m_current;
    InsideSubject m_subject;
    enum class Input { Copy, Text, Task };
    Input m_input = Input::Copy;
    std::vector<int> m_copyTokens;  // the copy input given
    QString m_prompt;               // the text prompt given
    int m_taskDifficulty = 0;       // the task example asked for
    unsigned long long m_taskSeed = 0;
    std::vector<int> m_tokens;      // what the subject read: the copy input, the prompt's tokens, a task example's
    TaskInput m_task;               // the task example read, with its answers
    // The lookup analysis' queries and the answers scored, for the input shown.
    std::pair<int, int> queries() const;
    CopyScore scored(const std::vector<int>& predictions) const;
    QString m_continuation;
    std::vector<std::shared_ptr<const LanguageModel>> m_pretrained;
    ModelProbes m_probes;
    std::vector<int> m_predictions;
    CopyScore m_score;      // the predictions scored (rebuild), read by every map shown
    bool m_scored = false;  // there are predictions for the tokens shown
    std::unique_ptr<LookupAnalysis> m_analysis;
    InsideView m_view;
    int m_selected = 0;
    // A new subject drops the probes of the old one; a new input waits for a subject being loaded.
    BackgroundJob m_load;
    BackgroundJob m_probe;

    QComboBox* m_source = nullptr;
    QWidget* m_steps = nullptr;    // the snapshot row
    QComboBox* m_step = nullptr;
    QToolButton* m_earlier = nullptr;
    QToolButton* m_later = nullptr;
    std::vector<RunSnapshot> m_snapshots;
    QString m_runDir;     // the run whose snapshots m_step lists
    QString m_shownPath;  // the checkpoint of the run shown
    int m_keepSelected = -1;  // the map to show again after the next rebuild (another snapshot of the run)
    QSpinBox* m_n = nullptr;
    QSpinBox* m_letters = nullptr;
    QComboBox* m_viewBox = nullptr;
    QComboBox* m_colormap = nullptr;
    QCheckBox* m_log = nullptr;
    QCheckBox* m_auto = nullptr;
    QDoubleSpinBox* m_min = nullptr;
    QDoubleSpinBox* m_max = nullptr;
    QWidget* m_range = nullptr;  // m_min and m_max
    QCheckBox* m_overlay = nullptr;
    QSpinBox* m_overlayN = nullptr;
    QWidget* m_thumbs = nullptr;
    QGridLayout* m_thumbGrid = nullptr;
    std::vector<QToolButton*> m_thumbButtons;
    std::vector<QLabel*> m_rowLabels;  // heading each row of small thumbnails
    bool m_shortPane = false;
    QVBoxLayout* m_flow = nullptr;  // a short pane's thumbnails, in lines as wide as the pane
    int m_flowRoom = 0;             // the width they were flowed into
    QString m_statusText;           // whole; a short pane shows it on one line
    int m_thumbSide = kThumbnail;
    HeatmapView* m_heatmap = nullptr;
    QLabel* m_info = nullptr;
    QString m_infoText;           // whole (rich text)
    QStringList m_infoBrief;      // its short form, a line each for the map and the answers
    QLabel* m_status = nullptr;
    QScrollArea* m_views = nullptr;  // the status, thumbnails, map and head's line
    QWidget* m_viewsBox = nullptr;   // what it scrolls
    int m_mapGap = 0;                // the space between the map and the head's line
    int m_lastSource = 0;
    QString m_loading;  // what m_load is loading, for its progress
    HeadAblation m_ablation;
    CopyScore m_plainScore;           // with every head, while heads are off
    QString m_plainContinuation;
    QWidget* m_causal = nullptr;      // the row of the causal tests
    QToolButton* m_ablateMode = nullptr;
    QComboBox* m_ablationMethod = nullptr;
    QToolButton* m_resetHeads = nullptr;
    QToolButton* m_importanceButton = nullptr;
    QToolButton* m_sweepButton = nullptr;
};

}  // namespace parrot
