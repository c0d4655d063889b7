// The Pretrained tab: HuggingFace model folders (Pythia / GPT-NeoX, Mamba) loaded off the GUI
// thread with per-tensor progress; a prompt and its greedy continuation by the selected model;
// the copy paper's zero-shot tests (eval/lmtests.h) on every loaded model, with Run / Stop,
// progress, the accuracy-against-size overlay and Export. A folder that cannot be loaded says
// why in the tab and the models already loaded stay.
#pragma once

#include "core/text/languagemodel.h"
#include "figures/lmfigure.h"
#include "ui/jobs/backgroundjob.h"

#include <QWidget>

#include <memory>
#include <vector>

class QStackedWidget;
class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace parrot {

class PretrainedPanel : public QWidget {
    Q_OBJECT
public:
    explicit PretrainedPanel(QWidget* parent = nullptr);

    // Asynchronous, one folder after the other: `modelsChanged` or `failed` for each.
    void addFolder(const QString& folder);
    void generate();                         // the prompt box's text, by the selected model
    void runTest();                          // the chosen test on every loaded model
    // After a test: each model's perplexity on the bundled text, drawn against its result at the
    // largest size every model reached (the copy paper's point: perplexity does not buy retrieval).
    void drawLossVsRetrieval();
    // Lists the GPT-NeoX and Mamba models in the HuggingFace cache (hfcache.h) beside Add folder;
    // cacheScanned() when done.
    void scanCache();
    QComboBox* cachedBox() const { return m_cached; }
    QPushButton* lossButton() const { return m_loss; }
    bool showsLossVsRetrieval() const { return m_showsLoss; }
    void stop();
    // Emits lookInside for the selected model (the first when none is selected).
    void lookInsideSelected();
    void selectModel(int row);

    int modelCount() const { return int(m_models.size()); }
    const LanguageModel& model(int i) const { return *m_models[size_t(i)]; }
    const std::vector<std::shared_ptr<const LanguageModel>>& models() const { return m_models; }
    const std::vector<LmSeries>& results() const { return m_results; }
    QString status() const;
    bool busy() const { return m_load.isRunning() || m_work.isRunning() || m_scan.isRunning() || !m_queued.isEmpty(); }
    QCustomPlot* plot() const { return m_plot; }
    QPlainTextEdit* promptBox() const { return m_prompt; }
    QPlainTextEdit* outputBox() const { return m_output; }
    QComboBox* testBox() const { return m_test; }
    QLineEdit* sizesBox() const { return m_sizes; }
    // The question-answering test's SQuAD JSON file; empty: the bundled set.
    QLineEdit* dataBox() const { return m_data; }
    QSpinBox* samplesBox() const { return m_samples; }
    QSpinBox* newTokensBox() const { return m_newTokens; }

signals:
    void modelsChanged();
    void generated();
    void testFinished();
    void cacheScanned();
    void failed(const QString& message);
    // Look inside: the selected model, another (of the other architecture when there is one, may
    // be null) and the prompt box's text.
    void lookInside(const std::shared_ptr<const LanguageModel>& a, const std::shared_ptr<const LanguageModel>& b, const QString& prompt);

private:
    QWidget* buildModelsBox();
    QWidget* buildEmptyPage();
    QWidget* buildPromptBox();
    QWidget* buildTestBox();
    QWidget* buildDataRow();
    void connectActions();
    void setStatus(const QString& text, bool error = false);
    void jobFailed(const QString& error);  // a background job's error: shown in the tab, failed()
    // The figure just drawn on the plot (its CSV for export), themed and shown; testFinished().
    void showFigure(const QString& csv, bool lossVsRetrieval, const QString& status);
    void updateButtons();
    void exportFigure();
    void loadNext();

    std::vector<std::shared_ptr<const LanguageModel>> m_models;
    std::vector<LmSeries> m_results;
    QStringList m_queued;  // folders waiting for the one loading now
    QString m_resultsTest;
    QString m_figureCsv;  // what drawLmCurves returned for m_results
    BackgroundJob m_load;  // one folder at a time
    BackgroundJob m_work;  // a generation or a test run
    QListWidget* m_list = nullptr;
    QStackedWidget* m_listPages = nullptr;  // the list, or what to do while it is empty
    QPushButton* m_add = nullptr;
    QPushButton* m_remove = nullptr;
    QPushButton* m_look = nullptr;
    QPlainTextEdit* m_prompt = nullptr;
    QSpinBox* m_newTokens = nullptr;
    QPushButton* m_generate = nullptr;
    QPlainTextEdit* m_output = nullptr;
    QComboBox* m_test = nullptr;
    QLineEdit* m_sizes = nullptr;
    QLineEdit* m_data = nullptr;
    QWidget* m_dataRow = nullptr;
    QSpinBox* m_samples = nullptr;
    QSpinBox* m_seed = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_stop = nullptr;
    QPushButton* m_export = nullptr;
    QPushButton* m_loss = nullptr;
    QComboBox* m_cached = nullptr;
    QPushButton* m_loadCached = nullptr;
    BackgroundJob m_scan;  // the HuggingFace cache, read off the GUI thread
    bool m_showsLoss = false;  // the plot shows perplexity against retrieval, not the curves
    QProgressBar* m_progress = nullptr;
    QLabel* m_status = nullptr;
    QCustomPlot* m_plot = nullptr;
};

}  // namespace parrot
