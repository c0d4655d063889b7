#include "ui/panels/pretrainedpanel.h"

#include "base/config.h"
#include "base/error.h"
#include "base/io/hfcache.h"
#include "core/eval/lmtests.h"
#include "figures/export.h"
#include "figures/figures.h"
#include "ui/common/exportdialog.h"
#include "qcustomplot.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QStackedWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTimer>
#include <QVBoxLayout>

namespace parrot {

// Until a model is loaded, the list's place says how to get one.
QWidget* PretrainedPanel::buildEmptyPage()
{
    auto* empty = new QLabel(tr(
        "<b>No model loaded yet.</b> This tab runs GPT-NeoX (Pythia) and Mamba language models as published "
        "on HuggingFace. To get two to compare:<br>"
        "&nbsp;• <code>pip install huggingface_hub</code>, then <code>huggingface-cli download EleutherAI/pythia-160m</code> "
        "and <code>huggingface-cli download state-spaces/mamba-130m-hf</code>: they land in the HuggingFace cache and "
        "are listed below, one click to load;<br>"
        "&nbsp;• or <b>Add folder…</b> for any folder holding config.json, tokenizer.json and the weights "
        "(safetensors or pytorch_model.bin, one file or shards)."));
    empty->setObjectName("pretrainedEmpty");
    empty->setWordWrap(true);
    empty->setTextFormat(Qt::RichText);
    empty->setTextInteractionFlags(Qt::TextSelectableByMouse);
    empty->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    empty->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    return empty;
}

// The loaded models, their buttons and the HuggingFace cache's models.
QWidget* PretrainedPanel::buildModelsBox()
{
    auto* models = new QGroupBox(tr("Models (HuggingFace folders: config.json, tokenizer.json, weights)"));
    m_list = new QListWidget;
    m_list->setObjectName("pretrainedModels");
    m_list->setWordWrap(true);  // a model's summary line wraps instead of scrolling sideways
    m_list->setMinimumHeight(48);
    m_add = new QPushButton(tr("Add folder…"));
    m_remove = new QPushButton(tr("Remove"));
    m_look = new QPushButton(tr("Look inside"));
    m_look->setObjectName("lookInside");
    m_look->setToolTip(tr("Open the selected model in the Explore tab beside one of the other architecture (Pythia beside "
                          "Mamba), on the prompt below or, when it is empty, a phone book of 10 entries: attention of "
                          "every head, lookup scores, Mamba's implicit attention"));
    auto* modelButtons = new QHBoxLayout;
    modelButtons->addWidget(m_add);
    modelButtons->addWidget(m_remove);
    modelButtons->addWidget(m_look);
    modelButtons->addStretch();
    // the models `transformers` downloaded before: one click to load
    m_cached = new QComboBox;
    m_cached->setObjectName("cachedModels");
    m_cached->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_cached->setMinimumContentsLength(20);
    m_loadCached = new QPushButton(tr("Load"));
    m_loadCached->setObjectName("loadCached");
    auto* cacheRow = new QHBoxLayout;
    cacheRow->addWidget(new QLabel(tr("From the HuggingFace cache:")));
    cacheRow->addWidget(m_cached, 1);
    cacheRow->addWidget(m_loadCached);
    m_listPages = new QStackedWidget;
    m_listPages->addWidget(buildEmptyPage());
    m_listPages->addWidget(m_list);
    const int emptyHeight = 7 * fontMetrics().lineSpacing();  // the words whole at a laptop's half width
    m_listPages->setMinimumHeight(emptyHeight);
    connect(this, &PretrainedPanel::modelsChanged, this, [this, emptyHeight] {
        m_listPages->setCurrentIndex(m_models.empty() ? 0 : 1);
        m_listPages->setMinimumHeight(m_models.empty() ? emptyHeight : m_list->minimumHeight());
    });
    auto* ml = new QVBoxLayout(models);
    ml->addWidget(m_listPages);
    ml->addLayout(modelButtons);
    ml->addLayout(cacheRow);
    return models;
}

QWidget* PretrainedPanel::buildPromptBox()
{
    auto* gen = new QGroupBox(tr("Prompt (greedy continuation by the selected model)"));
    m_prompt = new QPlainTextEdit;
    m_prompt->setObjectName("pretrainedPrompt");
    m_prompt->setPlaceholderText(tr("Alice was beginning to get very tired of"));
    m_prompt->setMaximumBlockCount(100000);
    m_prompt->setMinimumHeight(48);
    m_newTokens = new QSpinBox;
    m_newTokens->setRange(1, 4096);
    m_newTokens->setValue(32);
    m_generate = new QPushButton(tr("Generate"));
    m_output = new QPlainTextEdit;
    m_output->setObjectName("pretrainedOutput");
    m_output->setReadOnly(true);
    m_output->setMinimumHeight(48);
    auto* genRow = new QHBoxLayout;
    genRow->addWidget(new QLabel(tr("new tokens")));
    genRow->addWidget(m_newTokens);
    genRow->addStretch();
    genRow->addWidget(m_generate);
    auto* gl = new QVBoxLayout(gen);
    gl->addWidget(m_prompt, 1);
    gl->addLayout(genRow);
    gl->addWidget(m_output, 1);
    return gen;
}

// The question-answering test's file: a line and its Choose… button.
QWidget* PretrainedPanel::buildDataRow()
{
    m_data = new QLineEdit;
    m_data->setObjectName("qaData");
    m_data->setPlaceholderText(tr("the bundled set (questions on Alice in Wonderland)"));
    m_data->setToolTip(tr("A SQuAD v2 (or v1.1) JSON file, e.g. dev-v2.0.json; empty: the bundled set"));
    auto* chooseData = new QPushButton(tr("Choose…"));
    m_dataRow = new QWidget;
    auto* dataLayout = new QHBoxLayout(m_dataRow);
    dataLayout->setContentsMargins(0, 0, 0, 0);
    dataLayout->addWidget(m_data, 1);
    dataLayout->addWidget(chooseData);
    connect(chooseData, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Question-answering set"), m_data->text(), tr("SQuAD JSON (*.json);;All files (*)"));
        if (!file.isEmpty()) m_data->setText(file);
    });
    return m_dataRow;
}

QWidget* PretrainedPanel::buildTestBox()
{
    auto* test = new QGroupBox(tr("Zero-shot tests (Jelassi et al. 2024, figure 1)"));
    m_test = new QComboBox;
    for (const LmTestInfo& t : lmTests()) m_test->addItem(t.label, t.id);
    m_test->setToolTip(lmTests().front().description);
    m_sizes = new QLineEdit(lmTests().front().defaultSizes);
    m_sizes->setToolTip(tr("Phone-book entries or text tokens, comma-separated; for question answering, the edges of the "
                           "paragraph-length buckets in each model's tokens"));
    QWidget* dataRow = buildDataRow();
    m_samples = new QSpinBox;
    m_samples->setRange(1, 100000);
    m_samples->setValue(20);
    m_seed = new QSpinBox;
    m_seed->setRange(0, 2147483647);
    m_seed->setValue(1234);
    m_run = new QPushButton(tr("Run on every model"));
    m_stop = new QPushButton(tr("Stop"));
    m_export = new QPushButton(tr("Export figure…"));
    m_loss = new QPushButton(tr("Perplexity vs retrieval"));
    m_loss->setObjectName("lossVsRetrieval");
    m_loss->setToolTip(tr("Measure each model's perplexity on Alice's Adventures in Wonderland (its first 4,096 tokens) and "
                          "place it against the last test's result at the largest size: a lower perplexity does not buy "
                          "retrieval (Jelassi et al. 2024, section 5)"));
    auto* form = new QFormLayout;
    form->addRow(tr("test"), m_test);
    form->addRow(tr("sizes"), m_sizes);
    form->addRow(tr("questions from"), dataRow);
    form->addRow(tr("prompts per size"), m_samples);
    form->addRow(tr("seed"), m_seed);
    auto* runRow = new QHBoxLayout;
    runRow->addWidget(m_run);
    runRow->addWidget(m_stop);
    runRow->addStretch();
    runRow->addWidget(m_loss);
    runRow->addWidget(m_export);
    auto* tl = new QVBoxLayout(test);
    tl->addLayout(form);
    tl->addLayout(runRow);
    m_dataRow->setEnabled(findLmTest(m_test->currentData().toString())->readsData);
    return test;
}

PretrainedPanel::PretrainedPanel(QWidget* parent) : QWidget(parent)
{
    QWidget* models = buildModelsBox();
    QWidget* gen = buildPromptBox();
    QWidget* test = buildTestBox();
    m_progress = new QProgressBar;
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_status = new QLabel(tr("Add a model folder, e.g. one downloaded with huggingface-cli download EleutherAI/pythia-160m."));
    m_status->setObjectName("pretrainedStatus");
    // One line, the whole text in its tooltip: a wrapping label would give the page a height
    // for its width, and the tab's scroll area would then lay it out at its preferred height.
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_plot = new QCustomPlot;
    m_plot->setObjectName("pretrainedPlot");
    m_plot->setMinimumSize(320, 180);
    drawLmCurves(*m_plot, {}, m_test->currentData().toString());
    m_plot->replot();

    auto* left = new QWidget;
    auto* ll = new QVBoxLayout(left);
    ll->setContentsMargins(0, 0, 0, 0);
    ll->addWidget(models, 1);
    ll->addWidget(gen, 2);
    auto* right = new QWidget;
    auto* rl = new QVBoxLayout(right);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(test);
    rl->addWidget(m_plot, 1);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(left);
    split->addWidget(right);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split, 1);
    layout->addWidget(m_progress);
    layout->addWidget(m_status);

    connectActions();
    updateButtons();
    scanCache();
}

void PretrainedPanel::connectActions()
{
    connect(m_loadCached, &QPushButton::clicked, this, [this] {
        const QString folder = m_cached->currentData().toString();
        if (!folder.isEmpty()) addFolder(folder);
    });
    connect(m_add, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("A HuggingFace model folder"),
                                                              QStandardPaths::writableLocation(QStandardPaths::HomeLocation));
        if (!dir.isEmpty()) addFolder(dir);
    });
    connect(m_remove, &QPushButton::clicked, this, [this] {
        const int row = m_list->currentRow();
        if (row < 0 || row >= int(m_models.size()) || m_work.isRunning()) return;
        m_models.erase(m_models.begin() + row);
        delete m_list->takeItem(row);
        updateButtons();
        emit modelsChanged();
    });
    connect(m_generate, &QPushButton::clicked, this, &PretrainedPanel::generate);
    connect(m_look, &QPushButton::clicked, this, &PretrainedPanel::lookInsideSelected);
    connect(m_run, &QPushButton::clicked, this, &PretrainedPanel::runTest);
    connect(m_stop, &QPushButton::clicked, this, &PretrainedPanel::stop);
    connect(m_export, &QPushButton::clicked, this, &PretrainedPanel::exportFigure);
    connect(m_loss, &QPushButton::clicked, this, &PretrainedPanel::drawLossVsRetrieval);
    connect(m_test, &QComboBox::currentIndexChanged, this, [this] {
        const QString id = m_test->currentData().toString();
        m_test->setToolTip(findLmTest(id)->description);
        m_sizes->setText(findLmTest(id)->defaultSizes);
        const bool qa = findLmTest(id)->readsData;
        m_dataRow->setEnabled(qa);
        m_dataRow->setToolTip(qa ? QString() : tr("Only question answering reads its questions from a file"));
    });
    connect(m_list, &QListWidget::currentRowChanged, this, &PretrainedPanel::updateButtons);
    for (BackgroundJob* job : {&m_load, &m_work})
        connect(job, &BackgroundJob::progress, this, [this](int done, int total) {
            m_progress->setRange(0, std::max(1, total));
            m_progress->setValue(done);
        });
}

void PretrainedPanel::selectModel(int row)
{
    if (row >= 0 && row < m_list->count()) m_list->setCurrentRow(row);
}

void PretrainedPanel::lookInsideSelected()
{
    if (m_models.empty()) return;
    const int row = std::clamp(m_list->currentRow(), 0, int(m_models.size()) - 1);
    const auto a = m_models[size_t(row)];
    std::shared_ptr<const LanguageModel> b;  // another architecture's first, else the next model
    for (const auto& m : m_models)
        if (m != a && m->architecture != a->architecture) {
            b = m;
            break;
        }
    if (!b && m_models.size() > 1) b = m_models[size_t(row + 1) % m_models.size()];
    emit lookInside(a, b, m_prompt->toPlainText());
}

QString PretrainedPanel::status() const { return m_status->text(); }

void PretrainedPanel::setStatus(const QString& text, bool error)
{
    m_status->setText(text);
    m_status->setToolTip(text);
    m_status->setStyleSheet(error ? "color: #c0392b;" : QString());
}

void PretrainedPanel::updateButtons()
{
    const bool working = m_work.isRunning(), any = !m_models.empty();
    m_add->setEnabled(!m_load.isRunning());
    m_remove->setEnabled(any && !working && m_list->currentRow() >= 0);
    m_look->setEnabled(any && m_list->currentRow() >= 0);
    m_generate->setEnabled(any && !working);
    m_run->setEnabled(any && !working);
    m_stop->setEnabled(working);
    m_export->setEnabled(!m_results.empty() && !working);
    m_loss->setEnabled(!m_results.empty() && m_results.size() == m_models.size() && !working);
}

void PretrainedPanel::scanCache()
{
    const QString dir = hubCacheDir();
    m_cached->clear();
    m_cached->setEnabled(false);
    m_loadCached->setEnabled(false);
    m_cached->addItem(tr("looking in %1…").arg(dir));
    m_scan.start([dir](JobContext&) { return cachedLanguageModels(dir); },
                 [this, dir](const std::vector<CachedModel>& found) {
                     m_cached->clear();
                     for (const CachedModel& m : found) {
                         const QString size = m.parameters >= 0 ? tr("%1M parameters").arg(double(m.parameters) / 1e6, 0, 'f', m.parameters < 10000000 ? 2 : 0)
                                                                : tr("parameters not listed");
                         m_cached->addItem(tr("%1 · %2 · %3 MB · %4").arg(m.id, m.architecture)
                                               .arg(double(m.bytes) / (1024 * 1024), 0, 'f', 0).arg(size), m.folder);
                         m_cached->setItemData(m_cached->count() - 1, m.folder, Qt::ToolTipRole);
                     }
                     if (found.empty()) m_cached->addItem(tr("no GPT-NeoX or Mamba model in %1").arg(dir));
                     m_cached->setToolTip(tr("Models downloaded by transformers or huggingface-cli into %1 (HF_HUB_CACHE or HF_HOME "
                                             "choose another)").arg(dir));
                     m_cached->setEnabled(!found.empty());
                     m_loadCached->setEnabled(!found.empty());
                     emit cacheScanned();
                 },
                 [this](const QString& error) {
                     m_cached->clear();
                     m_cached->addItem(error);
                     emit cacheScanned();
                 });
}

void PretrainedPanel::drawLossVsRetrieval()
{
    if (m_results.empty() || m_results.size() != m_models.size() || m_work.isRunning()) return;
    // the largest size every model has a point at
    const int size = largestCommonSize(m_results, m_resultsTest);
    if (size == 0) {
        setStatus(tr("The last test has no size every model reached: run it again to the end."), true);
        return;
    }
    const auto models = m_models;
    const std::vector<LmSeries> results = m_results;
    const QString test = m_resultsTest;
    setStatus(tr("Measuring perplexity on %1 model(s)…").arg(models.size()));
    m_work.start(
        [models](JobContext& job) {
            std::vector<PerplexityResult> out;
            const QString text = bundledPerplexityText();
            for (size_t m = 0; m < models.size() && !job.cancelled(); ++m)
                out.push_back(measurePerplexity(*models[m], text, 1024, 4096, [&](int done, int total) {
                    job.progress(int(m) * total + done, total * int(models.size()));
                    return !job.cancelled();
                }));
            return out;
        },
        [this, results, test, size](const std::vector<PerplexityResult>& perplexities) {
            if (m_work.stopRequested() || perplexities.size() != results.size()) {
                setStatus(tr("Stopped: perplexity was not measured on every model."));
                updateButtons();
                return;
            }
            std::vector<LossRetrievalPoint> points;
            for (size_t i = 0; i < results.size(); ++i) {
                LossRetrievalPoint p{results[i].name, results[i].architecture, perplexities[i].perplexity, perplexities[i].loss};
                measureAt(results[i], test, size, &p.accuracy, &p.stdErr);
                points.push_back(p);
            }
            showFigure(::parrot::drawLossVsRetrieval(*m_plot, points, test, size), true,
                       tr("Perplexity against %1 at %2 %3.").arg(findLmTest(test)->label.toLower()).arg(size).arg(findLmTest(test)->size));
        },
        [this](const QString& error) { jobFailed(error); });
    updateButtons();
}

void PretrainedPanel::addFolder(const QString& folder)
{
    m_queued << folder;
    if (!m_load.isRunning()) loadNext();
}

void PretrainedPanel::loadNext()
{
    if (m_queued.isEmpty()) return;
    const QString folder = m_queued.takeFirst();
    setStatus(tr("Loading %1…").arg(QDir(folder).dirName()));
    m_progress->setRange(0, 0);
    m_load.start(
        [folder](JobContext& job) {
            return std::make_shared<const LanguageModel>(LanguageModel::load(folder, [&](int done, int total) {
                job.progress(done, total);
                return !job.cancelled();
            }));
        },
        [this](std::shared_ptr<const LanguageModel> lm) {
            m_models.push_back(lm);
            auto* item = new QListWidgetItem(lm->summary());
            item->setToolTip(lm->folder);
            m_list->addItem(item);
            m_list->setCurrentRow(m_list->count() - 1);
            m_progress->setRange(0, 1);
            m_progress->setValue(1);
            setStatus(tr("Loaded %1.").arg(lm->name));
            updateButtons();
            emit modelsChanged();
            QTimer::singleShot(0, this, &PretrainedPanel::loadNext);
        },
        [this](const QString& error) {
            m_progress->setRange(0, 1);
            m_progress->setValue(0);
            setStatus(error, true);  // the models already loaded stay
            updateButtons();
            emit failed(error);
            QTimer::singleShot(0, this, &PretrainedPanel::loadNext);
        });
    updateButtons();
}

void PretrainedPanel::generate()
{
    const int row = std::max(0, m_list->currentRow());
    if (row >= int(m_models.size())) return;
    const std::shared_ptr<const LanguageModel> lm = m_models[size_t(row)];
    const QString prompt = m_prompt->toPlainText().isEmpty() ? m_prompt->placeholderText() : m_prompt->toPlainText();
    const int maxNew = m_newTokens->value();
    setStatus(tr("%1 is writing…").arg(lm->name));
    m_work.start(
        [lm, prompt, maxNew](JobContext& job) {
            return lm->generate(prompt, maxNew, [&](int done, int) {
                job.progress(done, maxNew);
                return !job.cancelled();
            });
        },
        [this, lm, prompt](const LanguageModel::Continuation& c) {
            m_output->setPlainText(prompt + c.text);
            QTextCursor cursor = m_output->textCursor();  // the continuation in bold, after the prompt
            cursor.setPosition(int(prompt.size()));
            cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
            QTextCharFormat bold;
            bold.setFontWeight(QFont::Bold);
            cursor.mergeCharFormat(bold);
            setStatus(tr("%1: %2 prompt tokens, %3 new%4.").arg(lm->name).arg(c.promptIds.size()).arg(c.newIds.size())
                          .arg(c.stopped ? tr(", stopped at <|endoftext|>") : QString()));
            updateButtons();
            emit generated();
        },
        [this](const QString& error) { jobFailed(error); });
    updateButtons();
}

void PretrainedPanel::runTest()
{
    if (m_models.empty()) return;
    const QString id = m_test->currentData().toString();
    std::vector<int> sizes;
    try {
        sizes = parseLengthList(m_sizes->text(), tr("sizes"));
    } catch (const Error& e) {
        setStatus(e.message(), true);
        return;
    }
    const int samples = m_samples->value();
    const unsigned long long seed = unsigned(m_seed->value());
    const auto models = m_models;
    const QString data = findLmTest(id)->readsData ? (m_data->text().trimmed().isEmpty() ? bundledSquadPath() : m_data->text().trimmed())
                                                   : QString();
    setStatus(tr("Running %1 on %2 model(s)…").arg(findLmTest(id)->label).arg(models.size()));
    m_work.start(
        [models, id, sizes, samples, seed, data](JobContext& job) {
            std::vector<LmSeries> out;
            const std::vector<QaParagraph> set = data.isEmpty() ? std::vector<QaParagraph>() : readSquad(data);
            for (size_t m = 0; m < models.size() && !job.cancelled(); ++m) {
                const auto progress = [&](int done, int perModel) {  // as if every model asked as many prompts as this one
                    job.progress(int(m) * perModel + done, perModel * int(models.size()));
                    return !job.cancelled();
                };
                const LengthCurve c = data.isEmpty() ? runLmTest(*models[m], id, sizes, samples, seed, progress)
                                                     : runQaTest(*models[m], set, sizes, samples, seed, progress).curve;
                out.push_back({models[m]->name, models[m]->architecture, c});
            }
            return out;
        },
        [this, id](std::vector<LmSeries> series) {
            const bool stopped = m_work.stopRequested();
            m_results = std::move(series);
            m_resultsTest = id;
            showFigure(drawLmCurves(*m_plot, m_results, id), false,
                       stopped ? tr("Stopped: the sizes finished so far are drawn.") : tr("Done: %1.").arg(findLmTest(id)->label));
        },
        [this](const QString& error) { jobFailed(error); });
    updateButtons();
}

void PretrainedPanel::jobFailed(const QString& error)
{
    setStatus(error, true);
    updateButtons();
    emit failed(error);
}

void PretrainedPanel::showFigure(const QString& csv, bool lossVsRetrieval, const QString& status)
{
    m_figureCsv = csv;
    m_showsLoss = lossVsRetrieval;
    applyPlotTheme(*m_plot, darkPlots());
    m_plot->replot();
    setStatus(status);
    updateButtons();
    emit testFinished();
}

void PretrainedPanel::stop()
{
    m_queued.clear();
    m_work.stop();
    m_load.cancel();
    setStatus(tr("Stopping…"));
}

void PretrainedPanel::exportFigure()
{
    if (m_results.empty()) return;
    // File -> Export's dialog (size, DPI, font, line width, the remembered folder); CSV is the
    // curves' own table, with the standard errors.
    auto* dialog = new ExportDialog(this, tr("Pretrained"), m_plot, false, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setFileStem(m_showsLoss ? m_resultsTest + "-perplexity" : m_resultsTest);
    dialog->setCsvSource(m_plot, [this] { return m_figureCsv; });
    connect(dialog, &ExportDialog::exported, this, [this](const QString& path) { setStatus(tr("Wrote %1.").arg(path)); });
    connect(dialog, &ExportDialog::failed, this, [this](const QString& why) { setStatus(why, true); });
    dialog->open();  // window-modal, never blocking the event loop
}

}  // namespace parrot
