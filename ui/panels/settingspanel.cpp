#include "ui/panels/settingspanel.h"

#include "base/configfields.h"
#include "base/error.h"
#include "core/model.h"
#include "base/modelcatalog.h"
#include "base/presets.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QMenu>
#include <QPushButton>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

namespace parrot {

namespace {

// `a` moved a fraction `t` of the way to `b`.
QString mixed(const QColor& a, const QColor& b, double t)
{
    return QColor::fromRgbF(float(a.redF() + t * (b.redF() - a.redF())), float(a.greenF() + t * (b.greenF() - a.greenF())),
                            float(a.blueF() + t * (b.blueF() - a.blueF())))
        .name();
}

// The colours an example's tokens take by role, readable on the palette's window background:
// greys between its text and window colours, and the accents lighter on a dark background.
struct RoleColours {
    QString prompt, faint, note, separator, query, answer;
    explicit RoleColours(const QPalette& p)
    {
        const QColor text = p.color(QPalette::WindowText), window = p.color(QPalette::Window);
        const bool dark = window.lightness() < 128;
        prompt = mixed(text, window, 0.2);
        note = mixed(text, window, 0.4);
        faint = mixed(text, window, 0.6);
        separator = dark ? "#79b0ff" : "#1f5fbf";
        query = dark ? "#ffa95e" : "#c85f14";
        answer = dark ? "#5fd47a" : "#1a8f3a";
    }
};

const QString kOtherEntry = "other";  // the Experiment box's entry for a checkpoint's or a custom config

}  // namespace

QString SettingsPanel::checkpointName(const QString& path)
{
    const QFileInfo f(path);
    // a run's autosave, <run>/checkpoints/last.safetensors: which run it is says more than its name
    return f.dir().dirName() == "checkpoints" ? QFileInfo(f.absolutePath()).dir().dirName() + "/" + f.fileName() : f.fileName();
}

QSpinBox* SettingsPanel::spin(const char* key)
{
    const IntField& f = intField(key);
    return spin(int(f.lo), int(std::min<long long>(f.formMax, std::numeric_limits<int>::max())), QString(key).section('.', -1), f.tip);
}

QDoubleSpinBox* SettingsPanel::realSpin(const char* key)
{
    const RealField& f = realField(key);
    auto* s = new QDoubleSpinBox(this);
    s->setObjectName(QString(key).section('.', -1));
    s->setDecimals(f.decimals);
    s->setRange(f.formMin, f.formMax);
    s->setSingleStep(f.formStep);
    s->setToolTip(f.tip);
    s->setKeyboardTracking(false);
    connect(s, &QDoubleSpinBox::valueChanged, this, [this] { if (!m_filling) showProblems(); });
    return s;
}

QString SettingsPanel::label(const char* key)
{
    for (const IntField& f : intFieldTable())
        if (std::strcmp(f.key, key) == 0) return f.label;
    return realField(key).label;
}

QSpinBox* SettingsPanel::spin(int lo, int hi, const QString& objectName, const QString& tip)
{
    auto* s = new QSpinBox(this);
    s->setRange(lo, hi);
    s->setObjectName(objectName);
    s->setToolTip(tip);
    s->setKeyboardTracking(false);
    connect(s, &QSpinBox::valueChanged, this, [this] { if (!m_filling) showProblems(); });
    return s;
}

SettingsPanel::SettingsPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);

    auto* presetBox = new QGroupBox(tr("Experiment"), this);
    auto* pf = new QVBoxLayout(presetBox);
    m_preset = new QComboBox(this);
    m_preset->setObjectName("preset");
    m_preset->addItems(presetNames());
    m_description = new QLabel(this);
    m_description->setWordWrap(true);
    m_description->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_description->setForegroundRole(QPalette::PlaceholderText);  // quieter than the form, in either theme
    m_description->setObjectName("description");
    pf->addWidget(m_preset);
    pf->addWidget(m_description);
    layout->addWidget(presetBox);

    // The form holds no word-wrapped label: Qt 6.4's QFormLayout::heightForWidth writes past its
    // row array when rows are hidden (valgrind: "invalid write" in it; with the eleven optional
    // rows it corrupted the heap and the window crashed on showing). The wrapping example and
    // its button sit below the form instead.
    auto* task = new QGroupBox(tr("Task"), this);
    auto* taskLayout = new QVBoxLayout(task);
    auto* taskForm = new QWidget(task);
    auto* tf = new QFormLayout(taskForm);
    tf->setContentsMargins(0, 0, 0, 0);
    taskLayout->addWidget(taskForm);
    m_task = new QComboBox(this);
    m_task->setObjectName("task_kind");
    for (const TaskInfo& t : taskCatalog()) {
        m_task->addItem(t.label, t.id);
        m_task->setItemData(m_task->count() - 1, t.description, Qt::ToolTipRole);
    }
    m_task->setToolTip(tr("What the model is trained and evaluated on; choosing one loads its laptop-scale settings"));
    m_task->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_task->setMinimumContentsLength(12);
    connect(m_task, &QComboBox::currentIndexChanged, this, [this] {
        if (m_filling) return;
        setTaskFields(taskDefaults(m_task->currentData().toString()));
        showProblems();
    });
    m_vocab = spin(2, 1024, "vocab_size", tr("Letters in the alphabet (the copy paper uses 26; MQAR splits them into keys and values)"));
    m_minLen = spin("task.min_len");
    m_maxLen = spin("task.max_len");
    m_context = spin(5, 65536, "context_len", tr("Tokens per packed training row; must hold one example at the largest difficulty"));
    m_ngram = spin("task.ngram");
    m_answerLen = spin("task.answer_len");
    m_dims = spin("task.dims");
    m_sparsity = spin(1, 256, "sparsity", tr("Sparse regression: non-zero weights; sparse parity: the k coordinates multiplied"));
    m_outlier = realSpin("task.outlier_prob");
    m_noise = realSpin("task.noise_fraction");
    m_noiseVocab = spin("task.noise_vocab");
    m_motif = spin("task.motif");
    m_copyTokens = spin("task.copy_tokens");
    m_trainExamples = spin("task.train_examples");
    m_shuffle = new QCheckBox(tr("Shuffle words"), this);
    m_shuffle->setObjectName("shuffle_words");
    m_shuffle->setToolTip(tr("Copy the span's words in a random order (no help from knowing English)"));
    connect(m_shuffle, &QCheckBox::toggled, this, [this] { if (!m_filling) showProblems(); });
    m_evalLengths = new QLineEdit(this);
    m_evalLengths->setObjectName("eval_lengths");
    m_evalLengths->setToolTip(tr("Lengths evaluated during training, comma-separated; the max length is always included"));
    connect(m_evalLengths, &QLineEdit::textChanged, this, [this] { if (!m_filling) showProblems(); });
    tf->addRow(tr("Task"), m_task);
    tf->addRow(tr("Alphabet size"), m_vocab);
    tf->addRow(label("task.min_len"), m_minLen);
    tf->addRow(label("task.max_len"), m_maxLen);
    tf->addRow(tr("Context length"), m_context);
    tf->addRow(label("task.eval_lengths"), m_evalLengths);
    tf->addRow(label("task.ngram"), m_ngram);
    tf->addRow(label("task.answer_len"), m_answerLen);
    tf->addRow(QString(), m_shuffle);
    tf->addRow(label("task.dims"), m_dims);
    tf->addRow(tr("Sparsity"), m_sparsity);
    tf->addRow(label("task.outlier_prob"), m_outlier);
    tf->addRow(label("task.noise_fraction"), m_noise);
    tf->addRow(label("task.noise_vocab"), m_noiseVocab);
    tf->addRow(label("task.motif"), m_motif);
    tf->addRow(label("task.copy_tokens"), m_copyTokens);
    tf->addRow(label("task.train_examples"), m_trainExamples);
    m_sample = new QLabel(this);
    m_sample->setObjectName("sample");
    m_sample->setWordWrap(true);
    m_sample->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // wraps to the panel's width
    m_sample->setTextFormat(Qt::RichText);
    m_sample->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sample->setToolTip(tr("One generated example: prompt grey, separators blue, query orange, answer green and bold"));
    m_newSample = new QPushButton(tr("Another example"), this);
    m_newSample->setObjectName("newSample");
    connect(m_newSample, &QPushButton::clicked, this, [this] {
        ++m_sampleSeed;
        showSample();
    });
    taskLayout->addWidget(m_sample);
    taskLayout->addWidget(m_newSample);
    layout->addWidget(task);

    auto* model = new QGroupBox(tr("Model"), this);
    auto* mf = new QFormLayout(model);
    m_kind = new QComboBox(this);
    m_kind->setObjectName("kind");
    for (const ModelFamily& k : modelFamilies()) {
        m_kind->addItem(k.label, k.id);
        m_kind->setItemData(m_kind->count() - 1, k.tip, Qt::ToolTipRole);
    }
    m_kind->setToolTip(tr("The sequence model family"));
    m_positions = new QComboBox(this);
    m_positions->setObjectName("positions");
    for (const PositionScheme& p : positionSchemes()) {
        m_positions->addItem(p.label, p.id);
        m_positions->setItemData(m_positions->count() - 1, p.tip, Qt::ToolTipRole);
    }
    m_positions->setToolTip(tr("Transformer positional scheme (the hybrids fix theirs as in Park et al.)"));
    connect(m_kind, &QComboBox::currentIndexChanged, this, [this] {
        updateModelFields();
        if (!m_filling) showProblems();
    });
    connect(m_positions, &QComboBox::currentIndexChanged, this, [this] {
        updateModelFields();
        if (!m_filling) showProblems();
    });
    m_layers = spin("model.layers");
    m_dModel = spin("model.d_model");
    m_heads = spin("model.heads");
    m_masked = spin("model.num_masked_heads");
    m_dState = spin("model.d_state");
    m_shortConv = spin("model.short_conv");
    m_shortConv->setSpecialValueText(tr("none"));
    m_expand = spin("model.expand");
    m_headDim = spin("model.head_dim");
    m_groups = spin("model.n_groups");
    m_chunk = spin("model.chunk_size");
    mf->addRow(tr("Family"), m_kind);
    mf->addRow(tr("Positions"), m_positions);
    mf->addRow(label("model.layers"), m_layers);
    auto* widthRow = new QHBoxLayout;  // d_model, and the button that picks it for a matched size
    widthRow->setContentsMargins(0, 0, 0, 0);
    widthRow->addWidget(m_dModel, 1);
    m_match = new QToolButton(this);
    widthRow->addWidget(m_match);
    mf->addRow(label("model.d_model"), widthRow);
    mf->addRow(label("model.heads"), m_heads);
    mf->addRow(label("model.num_masked_heads"), m_masked);
    mf->addRow(label("model.short_conv"), m_shortConv);
    mf->addRow(label("model.d_state"), m_dState);
    mf->addRow(label("model.expand"), m_expand);
    mf->addRow(label("model.head_dim"), m_headDim);
    mf->addRow(label("model.n_groups"), m_groups);
    mf->addRow(label("model.chunk_size"), m_chunk);
    m_forgetGate = new QCheckBox(tr("Decay gate"), this);
    m_forgetGate->setObjectName("forget_gate");
    m_forgetGate->setToolTip(tr("Gated DeltaNet: the gate that decays the state each token. Off: the plain delta rule "
                                "(DeltaNet), which keeps what a key holds until a write under a similar key replaces it"));
    connect(m_forgetGate, &QCheckBox::toggled, this, [this] {
        if (!m_filling) showProblems();
    });
    mf->addRow(QString(), m_forgetGate);
    m_init = new QComboBox(this);
    m_init->setObjectName("init");
    m_init->addItem(tr("default (mamba_ssm)"), "default");
    m_init->setItemData(0, tr("mamba_ssm's initialisation: S4D-real decays A_n = -(n + 1), independent B and C projections"),
                        Qt::ToolTipRole);
    m_init->addItem(tr("mimetic"), "mimetic");
    m_init->setItemData(1, tr("Trockman et al. 2024: state transitions near 1 and C's projection equal to B's, so the scan "
                              "starts out like linear attention"),
                        Qt::ToolTipRole);
    m_init->setToolTip(tr("How Mamba's selective mixers are initialised (Mamba and the hybrids)"));
    connect(m_init, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_filling) showProblems();
    });
    mf->addRow(tr("Initialisation"), m_init);
    m_size = new QLabel(this);
    m_size->setObjectName("modelSize");
    m_size->setWordWrap(true);
    m_size->setToolTip(tr("Parameters, and the state the model carries from one token to the next: the quantity in the copy paper's bound"));
    mf->addRow(m_size);
    m_match->setObjectName("matchSize");
    m_match->setText(tr("Match…"));
    m_match->setToolTip(tr("Choose d_model so this family has as many parameters as another family with the same settings "
                           "(to compare architectures at matched size)"));
    m_match->setPopupMode(QToolButton::InstantPopup);
    auto* matchMenu = new QMenu(m_match);
    for (const ModelFamily& k : modelFamilies())
        matchMenu->addAction(k.label, this, [this, id = k.id] { matchSizeOf(id); })->setObjectName("match_" + k.id);
    m_match->setMenu(matchMenu);
    layout->addWidget(model);
    // Counting builds the model; coalesce bursts of edits (a spin box held down).
    m_sizeTimer = new QTimer(this);
    m_sizeTimer->setSingleShot(true);
    m_sizeTimer->setInterval(150);
    connect(m_sizeTimer, &QTimer::timeout, this, &SettingsPanel::updateSize);

    auto* train = new QGroupBox(tr("Training"), this);
    auto* rf = new QFormLayout(train);
    m_steps = spin("train.steps");
    m_batch = spin("train.batch_size");
    m_lr = realSpin("train.lr");
    m_schedule = new QComboBox(this);
    m_schedule->setObjectName("schedule");
    m_schedule->addItems({"cosine", "linear", "constant"});
    m_precision = new QComboBox(this);
    m_precision->setObjectName("precision");
    m_precision->addItem(tr("float32"), "fp32");
    m_precision->addItem(tr("bfloat16 (autocast)"), "bf16");
    m_precision->setToolTip(tr("bfloat16: matrix products in bfloat16 under Torch's autocast, the scan's state, norms and loss "
                               "in float32; weights, optimiser and checkpoints stay float32. Pays off on a GPU with bf16 "
                               "units; on a CPU it is no faster (the app's fused float32 kernels step aside)."));
    m_warmup = spin("train.warmup_steps");
    m_weightDecay = realSpin("train.weight_decay");
    m_gradClip = realSpin("train.grad_clip");
    m_evalEvery = spin("train.eval_every");
    m_checkpointEvery = spin("train.checkpoint_every");
    m_mechanismEvery = spin("train.mechanism_every");
    m_mechanismEvery->setSpecialValueText(tr("off"));
    m_seed = spin("seed");
    m_curriculumDims = spin(0, 256, "curriculum_dims",
                            tr("In-context tasks (Garg et al. 2022): start training with x on this many coordinates and prompts of "
                               "at most 2 x this + 1 examples, growing to the task's dims and max examples; 0 = no curriculum"));
    m_curriculumSteps = spin("train.curriculum_steps");
    m_curriculumDims->setSpecialValueText(tr("off"));
    m_curriculumSteps->setSuffix(tr(" steps"));
    connect(m_schedule, &QComboBox::currentIndexChanged, this, [this] { if (!m_filling) showProblems(); });
    rf->addRow(label("train.steps"), m_steps);
    rf->addRow(label("train.batch_size"), m_batch);
    rf->addRow(label("train.lr"), m_lr);
    rf->addRow(tr("Schedule"), m_schedule);
    rf->addRow(label("train.warmup_steps"), m_warmup);
    rf->addRow(label("train.weight_decay"), m_weightDecay);
    rf->addRow(label("train.grad_clip"), m_gradClip);
    rf->addRow(tr("Precision"), m_precision);
    rf->addRow(label("train.eval_every"), m_evalEvery);
    rf->addRow(label("train.checkpoint_every"), m_checkpointEvery);
    rf->addRow(label("train.mechanism_every"), m_mechanismEvery);
    rf->addRow(label("seed"), m_seed);
    auto* curriculumRow = new QHBoxLayout;  // from dims, over steps
    curriculumRow->setContentsMargins(0, 0, 0, 0);
    curriculumRow->addWidget(m_curriculumDims, 1);
    curriculumRow->addWidget(m_curriculumSteps, 1);
    rf->addRow(tr("Curriculum"), curriculumRow);
    layout->addWidget(train);

    m_problems = new QLabel(this);
    m_problems->setObjectName("problems");
    m_problems->setWordWrap(true);
    m_problems->setStyleSheet("color: #c0392b;");
    layout->addWidget(m_problems);
    layout->addStretch(1);

    connect(m_preset, &QComboBox::activated, this, [this](int i) {
        if (m_preset->itemData(i).toString() != kOtherEntry) {
            selectPreset(m_preset->itemText(i));
            return;
        }
        setOrigin(i, m_other, m_otherText);
        fillForm(m_other);
    });
}

bool SettingsPanel::selectPreset(const QString& name)
{
    try {
        const ExperimentConfig c = loadPreset(name);
        setConfig(c);
        emit presetLoaded(name);
        return true;
    } catch (const Error& e) {
        emit errorMessage(e.message());
        return false;
    }
}

QString SettingsPanel::presetName() const
{
    return m_preset->currentData().toString() == kOtherEntry ? QString() : m_preset->currentText();
}

void SettingsPanel::setConfig(const ExperimentConfig& c)
{
    const int presetIndex = presetNames().contains(c.name) ? m_preset->findText(c.name) : -1;
    std::optional<ExperimentConfig> preset;  // what the form changes of it, the description says
    if (presetIndex >= 0) {
        try {
            preset = loadPreset(c.name);
        } catch (const Error&) {  // a bundled preset always loads; were it not to, the config stands alone
        }
    }
    if (preset) setOrigin(presetIndex, *preset, preset->description);
    else setOther(tr("Custom: %1").arg(c.name), c, c.description.isEmpty() ? tr("(custom experiment)") : c.description);
    fillForm(c);
}

void SettingsPanel::setCheckpointConfig(const ExperimentConfig& c, const QString& path, long long step)
{
    setOther(tr("Checkpoint: %1").arg(checkpointName(path)), c,
             tr("The settings of the checkpoint %1, trained to step %2: %3, on %4. Train continues this model or starts "
                "a fresh one with these settings.")
                 .arg(checkpointName(path)).arg(step).arg(describeModel(c.model), describeTask(c.task)));
    fillForm(c);
}

void SettingsPanel::setOther(const QString& label, const ExperimentConfig& c, const QString& text)
{
    m_other = c;
    m_otherText = text;
    int i = m_preset->findData(kOtherEntry);
    if (i < 0) {
        m_preset->addItem(label, kOtherEntry);
        i = m_preset->count() - 1;
    }
    m_preset->setItemText(i, label);
    setOrigin(i, c, text);
}

void SettingsPanel::setOrigin(int index, const ExperimentConfig& c, const QString& text)
{
    m_preset->setCurrentIndex(index);
    m_origin = c;
    m_originText = text;
}

void SettingsPanel::updateDescription()
{
    if (m_originText.isEmpty()) return;  // nothing loaded yet
    m_description->setText(describeChanged(m_originText, overridesBetween(m_origin, config())));
}

void SettingsPanel::fillForm(const ExperimentConfig& c)
{
    m_filling = true;
    m_base = c;
    setTaskFields(c.task);
    m_kind->setCurrentIndex(std::max(0, m_kind->findData(c.model.kind)));
    m_positions->setCurrentIndex(std::max(0, m_positions->findData(c.model.positions)));
    m_layers->setValue(c.model.layers);
    m_dModel->setValue(c.model.dModel);
    m_heads->setValue(c.model.heads);
    m_masked->setValue(c.model.numMaskedHeads);
    m_dState->setValue(c.model.dState);
    m_shortConv->setValue(c.model.shortConv);
    m_expand->setValue(c.model.expand);
    m_headDim->setValue(c.model.headDim);
    m_groups->setValue(c.model.nGroups);
    m_chunk->setValue(c.model.chunkSize);
    m_forgetGate->setChecked(c.model.forgetGate);
    m_init->setCurrentIndex(std::max(0, m_init->findData(c.model.init)));
    updateModelFields();
    m_steps->setValue(c.train.steps);
    m_batch->setValue(c.train.batchSize);
    m_lr->setValue(c.train.lr);
    m_schedule->setCurrentText(c.train.schedule);
    m_precision->setCurrentIndex(std::max(0, m_precision->findData(c.train.precision)));
    m_warmup->setValue(c.train.warmupSteps);
    m_weightDecay->setValue(c.train.weightDecay);
    m_gradClip->setValue(c.train.gradClip);
    m_evalEvery->setValue(c.train.evalEvery);
    m_checkpointEvery->setValue(c.train.checkpointEvery);
    m_mechanismEvery->setValue(c.train.mechanismEvery);
    m_seed->setValue(int(c.seed));
    m_curriculumDims->setValue(c.train.curriculumDims);
    m_curriculumSteps->setValue(c.train.curriculumSteps);
    m_filling = false;
    showProblems();
}

void SettingsPanel::setTaskFields(const TaskConfig& t)
{
    const bool filling = m_filling;
    m_filling = true;
    m_base.task = t;
    m_task->setCurrentIndex(std::max(0, m_task->findData(t.kind)));
    m_vocab->setValue(t.vocabSize);
    m_minLen->setValue(t.minLen);
    m_maxLen->setValue(t.maxLen);
    m_context->setValue(t.contextLen);
    QStringList lengths;
    for (int l : t.evalLengths) lengths << QString::number(l);
    m_evalLengths->setText(lengths.join(", "));
    m_ngram->setValue(t.ngram);
    m_answerLen->setValue(t.answerLen);
    m_shuffle->setChecked(t.shuffleWords);
    m_dims->setValue(t.dims);
    m_sparsity->setValue(t.sparsity);
    m_outlier->setValue(t.outlierProb);
    m_noise->setValue(t.noiseFraction);
    m_noiseVocab->setValue(t.noiseVocab);
    m_motif->setValue(t.motif);
    m_copyTokens->setValue(t.copyTokens);
    m_trainExamples->setValue(t.trainExamples);
    m_filling = filling;
    updateTaskFields();
}

// Only the options the chosen task uses are editable; the range labels name what they count.
void SettingsPanel::updateTaskFields()
{
    const TaskInfo* info = findTask(m_task->currentData().toString());
    if (!info) return;
    m_vocab->setEnabled(!info->characters && !info->vectors);
    auto* form = static_cast<QFormLayout*>(m_minLen->parentWidget()->layout());
    // The options a task does not use are disabled and hidden: the form stays short.
    const std::pair<QWidget*, const char*> options[] = {{m_ngram, "ngram"}, {m_answerLen, "answer_len"},
                                                        {m_shuffle, "shuffle_words"}, {m_dims, "dims"},
                                                        {m_sparsity, "sparsity"}, {m_outlier, "outlier_prob"},
                                                        {m_noise, "noise_fraction"}, {m_noiseVocab, "noise_vocab"},
                                                        {m_motif, "motif"}, {m_copyTokens, "copy_tokens"},
                                                        {m_trainExamples, "train_examples"}};
    for (const auto& [widget, key] : options) {
        const bool used = info->options.contains(key);
        widget->setEnabled(used);
        form->setRowVisible(widget, used);
    }
    auto label = [&](QWidget* field, const QString& text) {
        if (auto* l = qobject_cast<QLabel*>(form->labelForField(field))) l->setText(text);
    };
    const QString what = info->difficulty.section(' ', -1);  // "length", "entries", "pairs", "examples"
    label(m_minLen, tr("Min %1").arg(what));
    label(m_maxLen, tr("Max %1").arg(what));
    label(m_evalLengths, tr("Eval %1").arg(what));
    m_curriculumDims->setEnabled(info->vectors);
    m_curriculumSteps->setEnabled(info->vectors);
    m_mechanismEvery->setEnabled(!info->vectors);  // heads are scored on token tasks
}

void SettingsPanel::changeEvent(QEvent* e)
{
    QWidget::changeEvent(e);
    if (e->type() == QEvent::PaletteChange && m_sample) showSample();  // the example's colours follow the theme
}

// One example of the task as configured, tokens coloured by role.
void SettingsPanel::showSample()
{
    const TaskConfig t = config().task;
    if (isVectorTask(t.kind)) return showVectorSample(t);
    try {
        const std::unique_ptr<TokenTask> task = TokenTask::create(t);
        std::mt19937_64 rng(static_cast<uint64_t>(m_sampleSeed));
        const Example e = task->example(rng);
        const bool characters = findTask(t.kind)->characters;
        const RoleColours colour(m_sample->palette());
        QString html = characters ? "<span style='font-family: monospace'>" : "<span>";
        for (size_t i = 0; i < e.tokens.size(); ++i) {
            QString style;
            switch (e.roles[i]) {
            case Role::Pad: style = "color:" + colour.faint; break;
            case Role::Prompt: style = "color:" + colour.prompt; break;
            case Role::Separator: style = "color:" + colour.separator + "; font-weight:bold"; break;
            case Role::Query: style = "color:" + colour.query + "; font-weight:bold"; break;
            case Role::Answer: style = "color:" + colour.answer + "; font-weight:bold"; break;
            case Role::End: style = "color:" + colour.separator; break;
            }
            QString text = task->text(e.tokens[i]).toHtmlEscaped();
            if (characters && text == QString::fromUtf8("\u2423")) {
                text = "&#x2423;";
                if (e.roles[i] == Role::Prompt) style = "color:" + colour.faint;
            }
            html += QString("<span style='%1'>%2</span>").arg(style, text) + (characters ? "" : " ");
        }
        html += "</span>";
        m_sample->setText(html);
    } catch (const Error& e) {
        m_sample->setText(tr("(no example: %1)").arg(e.message().toHtmlEscaped()));
    }
}

// An in-context prompt as a small table: the first pairs, x rounded, y, scored ones in green.
void SettingsPanel::showVectorSample(const TaskConfig& t)
{
    try {
        const std::unique_ptr<IclTask> task = IclTask::create(t);
        std::mt19937_64 rng(static_cast<uint64_t>(m_sampleSeed));
        const IclPrompt p = task->prompts(1, t.maxLen, rng).front();
        const int shownDims = std::min(p.d, 4), shownPairs = std::min(p.pairs, 6);
        const RoleColours colour(m_sample->palette());
        QString html = "<table cellspacing='0' cellpadding='1' style='font-family: monospace; font-size: small'>";
        html += QString("<tr><td></td><td style='color:%1'>x</td><td style='color:%2'>y</td></tr>").arg(colour.prompt, colour.answer);
        auto numbers = [](const float* v, int n, int shown) {
            QStringList s;
            for (int i = 0; i < shown; ++i) s << QString::number(v[i], 'f', 2);
            return s.join(" ") + (n > shown ? " …" : "");
        };
        for (int i = 0; i < shownPairs; ++i) {
            const QString yStyle = p.scored[size_t(i)] ? "color:" + colour.answer + "; font-weight:bold" : "color:" + colour.faint;
            html += QString("<tr><td style='color:%1'>%2</td><td style='color:%3'>%4</td><td style='%5'>%6</td></tr>")
                        .arg(colour.separator)
                        .arg(i + 1)
                        .arg(colour.prompt)
                        .arg(numbers(&p.x[size_t(i) * p.d], p.d, shownDims))
                        .arg(yStyle, numbers(&p.y[size_t(i) * p.dOut], p.dOut, std::min(p.dOut, 3)));
        }
        html += "</table>";
        if (p.pairs > shownPairs)
            html += tr("<span style='color:%1'>… %2 pairs in all; y in green is predicted from the pairs above it</span>").arg(colour.note).arg(p.pairs);
        m_sample->setText(html);
    } catch (const Error& e) {
        m_sample->setText(tr("(no example: %1)").arg(e.message().toHtmlEscaped()));
    }
}

ExperimentConfig SettingsPanel::config() const
{
    ExperimentConfig c = m_base;
    c.task.kind = m_task->currentData().toString();
    c.task.ngram = m_ngram->value();
    c.task.answerLen = m_answerLen->value();
    c.task.shuffleWords = m_shuffle->isChecked();
    c.task.dims = m_dims->value();
    c.task.sparsity = m_sparsity->value();
    c.task.outlierProb = m_outlier->value();
    c.task.noiseFraction = m_noise->value();
    c.task.noiseVocab = m_noiseVocab->value();
    c.task.motif = m_motif->value();
    c.task.copyTokens = m_copyTokens->value();
    c.task.trainExamples = m_trainExamples->value();
    c.task.vocabSize = m_vocab->value();
    c.task.minLen = m_minLen->value();
    c.task.maxLen = m_maxLen->value();
    c.task.contextLen = m_context->value();
    try {
        c.task.evalLengths = parseLengthList(m_evalLengths->text(), "task.eval_lengths");
    } catch (const Error&) {
        c.task.evalLengths = {-1};  // validate() names the field
    }
    c.model.kind = m_kind->currentData().toString();
    c.model.positions = m_positions->currentData().toString();
    c.model.layers = m_layers->value();
    c.model.dModel = m_dModel->value();
    c.model.heads = m_heads->value();
    c.model.numMaskedHeads = c.model.positions == "hard_alibi" ? m_masked->value() : 0;
    c.model.dState = m_dState->value();
    c.model.expand = m_expand->value();
    c.model.headDim = m_headDim->value();
    c.model.nGroups = m_groups->value();
    c.model.chunkSize = m_chunk->value();
    c.model.forgetGate = m_forgetGate->isChecked();
    const ModelFamily* family = findFamily(c.model.kind);  // a family without the option keeps the default
    c.model.shortConv = family && family->options.contains("short_conv") ? m_shortConv->value() : 0;
    c.model.init = family && family->options.contains("init") ? m_init->currentData().toString() : QString("default");
    c.train.steps = m_steps->value();
    c.train.batchSize = m_batch->value();
    c.train.lr = m_lr->value();
    c.train.schedule = m_schedule->currentText();
    c.train.precision = m_precision->currentData().toString();
    c.train.warmupSteps = m_warmup->value();
    c.train.weightDecay = m_weightDecay->value();
    c.train.gradClip = m_gradClip->value();
    c.train.evalEvery = m_evalEvery->value();
    c.train.checkpointEvery = m_checkpointEvery->value();
    c.train.mechanismEvery = m_mechanismEvery->value();
    const bool inContext = isVectorTask(c.task.kind);  // a token task has no curriculum
    c.train.curriculumDims = inContext ? m_curriculumDims->value() : 0;
    c.train.curriculumSteps = inContext && c.train.curriculumDims > 0 ? m_curriculumSteps->value() : 0;
    c.seed = m_seed->value();
    return c;
}

QStringList SettingsPanel::problems() const { return validate(config()); }

// Only the options the chosen family uses are editable.
void SettingsPanel::updateModelFields()
{
    const ModelFamily* f = findFamily(m_kind->currentData().toString());
    const bool schemes = f && f->positions;
    m_positions->setEnabled(schemes);
    m_heads->setEnabled(f && f->attention);
    m_masked->setEnabled(schemes && m_positions->currentData().toString() == "hard_alibi");
    m_dState->setEnabled(f && f->options.contains("d_state"));
    m_shortConv->setEnabled(f && f->options.contains("short_conv"));
    m_expand->setEnabled(f && f->options.contains("expand"));
    for (auto [box, key] : {std::pair{m_headDim, "head_dim"}, std::pair{m_groups, "n_groups"}, std::pair{m_chunk, "chunk_size"}})
        box->setEnabled(f && f->options.contains(key));
    m_init->setEnabled(f && f->options.contains("init"));
    m_forgetGate->setEnabled(f && f->options.contains("forget_gate"));
}

void SettingsPanel::updateSize()
{
    if (!problems().isEmpty()) {
        m_size->setText(tr("(fix the settings to see the size)"));
        return;
    }
    try {
        m_size->setText(Model::measure(config()).describe());
    } catch (const Error& e) {
        m_size->setText(e.message());
    }
}

void SettingsPanel::matchSizeOf(const QString& kind)
{
    if (!problems().isEmpty()) {
        emit errorMessage(tr("Match size: fix the settings first (%1)").arg(problems().join("; ")));
        return;
    }
    const ExperimentConfig mine = config();
    ExperimentConfig other = mine;
    other.model.kind = kind;
    m_match->setEnabled(false);
    m_size->setText(tr("matching the size of %1…").arg(kind));
    // Bisection builds up to a dozen models: off the GUI thread.
    m_matchJob.start(
        [mine, other](JobContext&) {
            if (!validate(other).isEmpty()) throw Error(validate(other).join("; "));
            return Model::matchParameters(mine, Model::measure(other).parameters);
        },
        [this, kind](const ExperimentConfig& sized) {
            m_match->setEnabled(true);
            m_dModel->setValue(sized.model.dModel);
            m_sizeTimer->stop();
            updateSize();
            m_size->setText(m_size->text() + tr(" (matched to %1)").arg(kind));
            emit matched(sized.model.dModel);
        },
        [this, kind](const QString& error) {
            m_match->setEnabled(true);
            updateSize();
            emit errorMessage(tr("Match size of %1: %2").arg(kind, error));
        });
}

void SettingsPanel::showProblems()
{
    if (m_sizeTimer) m_sizeTimer->start();
    updateTaskFields();
    updateDescription();
    const QStringList p = problems();
    if (p.isEmpty()) showSample();
    else m_sample->setText(tr("(fix the settings to see an example)"));
    m_problems->setText(p.join("\n"));
    m_problems->setVisible(!p.isEmpty());
    emit changed();
}

}  // namespace parrot
