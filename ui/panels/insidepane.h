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
// The pane holds the widgets and wires them; its parts: InsideSession (ui/jobs/insidesession.h)
// opens the subject and probes it, ThumbnailGrid (thumbnailgrid.h) lays out the thumbnails, and
// insidetext.h words the line under the map.
// Long prompts: the maps zoom with the mouse wheel and pan by dragging (double-click: all of it);
// the token labels thin out to what fits.
// The views as data, and the same figures without a window, are in insidefigure.h.
#pragma once

#include "figures/heatmap.h"
#include "figures/insidefigure.h"
#include "ui/jobs/insidesession.h"

#include <QWidget>

#include <functional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QScrollArea;
class QSpinBox;
class QToolButton;
class QVBoxLayout;

namespace parrot {

class HeadImportanceDialog;
class StateSweepDialog;
class ThumbnailGrid;
struct InsideInfo;

class InsidePane : public QWidget {
    Q_OBJECT
public:
    static constexpr int kReadableRows = 40;  // a heatmap keeps room to read this many rows
    static constexpr int kShortPane = 620;    // a pane shorter than this shows thumbnails without captions
    explicit InsidePane(QWidget* parent = nullptr);
    // What the pane looks inside, and what it found: the subject, the input, the probes, the heads switched off.
    const InsideSession& session() const { return m_session; }
    bool busy() const { return m_session.busy(); }

    // The source entries: bundled checkpoints, "Model in the Train tab", the construction, a file.
    // Each selects its entry and opens it in the session.
    void setCurrentModelProvider(std::function<Model()> provider) { m_current = std::move(provider); }
    void chooseBundled(const QString& id);
    void chooseConstruction(int n, int letters);
    // A checkpoint; one inside a run folder also lists the run's snapshots to step through.
    void chooseCheckpoint(const QString& path);
    // A run folder: `checkpoint` inside it, else its last checkpoint (or latest snapshot), with its
    // snapshots to step through.
    void chooseRun(const QString& runDir, const QString& checkpoint = {});
    // The run's snapshots (session().snapshots()), the one shown selected.
    QComboBox* snapshotBox() const { return m_step; }
    void showSnapshot(int index);  // keeps the map shown
    void chooseCurrentModel();
    void chooseLanguageModel(const std::shared_ptr<const LanguageModel>& lm);
    void chooseModelFolder(const QString& folder);  // a HuggingFace folder, loaded here
    // The models of the Pretrained tab, offered in the source list.
    void setPretrainedModels(const std::vector<std::shared_ptr<const LanguageModel>>& models);
    void setInput(const std::vector<int>& tokens);  // a copy input
    void setTextInput(const QString& prompt);       // a text prompt
    // An example of the pane's model's own task (InsideSubject::taskInput): MQAR's pairs, a copy's
    // letters, drawn again for each subject the pane opens. Its lookup marks start at n = 1.
    void setTaskInput(int difficulty, unsigned long long seed);

    void setView(const QString& view);
    void selectMap(int index);
    QString view() const;
    const InsideView& shown() const { return m_view; }
    int selectedMap() const { return m_selected; }
    HeatmapView* heatmap() const { return m_heatmap; }
    ThumbnailGrid* thumbnails() const { return m_thumbs; }  // one per map shown
    QString info() const;  // the line under the map, whole (rich text)

    // Heads switched off (InsideSession::setHeadOff), keeping the map shown. Clicking a thumbnail
    // switches its head while "Switch heads off" is down; its context menu always can. A new
    // subject switches every head back on.
    void setHeadOff(int layer, int head, bool off);
    void setAblationMethod(HeadAblation::Method method);
    void resetHeads();
    QToolButton* ablateModeButton() const { return m_ablateMode; }
    QToolButton* resetHeadsButton() const { return m_resetHeads; }
    QToolButton* importanceButton() const { return m_importanceButton; }
    QToolButton* sweepButton() const { return m_sweepButton; }
    // The causal tests' dialogs for the subject shown (causaldialog.h); nullptr when it has no
    // heads (no state-space layers).
    HeadImportanceDialog* openHeadImportance();
    StateSweepDialog* openStateSweep();

signals:
    void refreshed();  // a subject was loaded and probed and is shown (or failed: see session().status())

protected:
    void resizeEvent(QResizeEvent* e) override;
    bool eventFilter(QObject* watched, QEvent* e) override;

private:
    // The constructor's parts, top to bottom.
    void buildSourceRow(QVBoxLayout* layout);
    void buildSnapshotRow(QVBoxLayout* layout);
    void buildStyleRows(QVBoxLayout* layout);
    void buildCausalRow(QVBoxLayout* layout);
    void buildViews(QVBoxLayout* layout);
    void connectSession();

    int flowRoom() const;    // the width a short pane's thumbnails and status line get
    void showStatus();       // the status, on one line (elided) in a short pane
    void showInfo();         // the head's line: whole, or in a short pane two lines (whole in the tooltip)
    void fitMap();           // the map sized to the room the views' viewport leaves it
    void buildThumbnails();  // the thumbnails of the view shown, as the pane's height and width have them
    void onSource(int index);
    void opening();          // a subject is being opened: the construction's options shown with it
    void showOpened();       // the subject opened: its source entry and snapshots
    void openFailed();       // the snapshot list keeps the step that is shown
    void rebuild();
    void showMap();
    InsideInfo describeMap() const;  // the line under the map shown
    void showMarks(bool match);      // the lookup marks on the map shown
    void restyle();
    const HeadLookup* selectedHead() const;  // the attention head shown, when the heads are analysed
    void followSelectedHead();
    void updateCausalRow();
    void toggleHead(size_t map);  // the thumbnail's head, on or off
    void headMenu(int map, const QPoint& globalPos);
    bool headOffAt(size_t map) const;

    InsideSession m_session;
    std::function<Model()> m_current;
    std::vector<std::shared_ptr<const LanguageModel>> m_pretrained;
    InsideView m_view;
    int m_selected = 0;
    int m_keepSelected = -1;  // the map to show again after the next rebuild (another snapshot, heads switched)

    QComboBox* m_source = nullptr;
    int m_lastSource = 0;
    QSpinBox* m_n = nullptr;
    QSpinBox* m_letters = nullptr;
    QComboBox* m_viewBox = nullptr;
    QWidget* m_steps = nullptr;  // the snapshot row
    QComboBox* m_step = nullptr;
    QToolButton* m_earlier = nullptr;
    QToolButton* m_later = nullptr;
    QComboBox* m_colormap = nullptr;
    QCheckBox* m_log = nullptr;
    QCheckBox* m_auto = nullptr;
    QDoubleSpinBox* m_min = nullptr;
    QDoubleSpinBox* m_max = nullptr;
    QWidget* m_range = nullptr;  // m_min and m_max
    QCheckBox* m_overlay = nullptr;
    QSpinBox* m_overlayN = nullptr;
    QWidget* m_causal = nullptr;  // the row of the causal tests
    QToolButton* m_ablateMode = nullptr;
    QComboBox* m_ablationMethod = nullptr;
    QToolButton* m_resetHeads = nullptr;
    QToolButton* m_importanceButton = nullptr;
    QToolButton* m_sweepButton = nullptr;

    QScrollArea* m_views = nullptr;  // the status, thumbnails, map and head's line
    QWidget* m_viewsBox = nullptr;   // what it scrolls
    QLabel* m_status = nullptr;
    ThumbnailGrid* m_thumbs = nullptr;
    HeatmapView* m_heatmap = nullptr;
    QLabel* m_info = nullptr;
    QString m_infoText;       // whole (rich text)
    QStringList m_infoBrief;  // its short form, a line each for the map and the answers
    int m_mapGap = 0;         // the space between the map and the head's line
    bool m_shortPane = false;
    int m_flowRoom = 0;  // the width the thumbnails were flowed into
};

}  // namespace parrot
