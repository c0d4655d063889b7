#include "ui/panels/settingspanel.h"

#include "base/configfields.h"
#include "base/error.h"
#include "base/modelcatalog.h"
#include "base/presets.h"
#include "base/tasks/icltask.h"
#include "base/tasks/tokentask.h"
#include "core/model.h"

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
#include <stdexcept>
#include <type_traits>
#include <variant>

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

// When a row is enabled: always, or while the chosen task or family uses its setting.
enum class Use {
    Always,
    TaskOption,    // the task lists the key's last part among its options; hidden otherwise
    Letters,       // a task of letters (not a fixed character set, not vectors)
    TokenTasks,    // any token task (heads are scored on those)
    VectorTasks,   // an in-context-learning task on vectors
    FamilyOption,  // the family lists the key's last part among its options
    Positions,     // a family with a choice of positional scheme
    Attention,     // a family with attention heads
    HardAlibi,     // Hard-ALiBi positions (the masked heads)
};

// What a row shows: its setting's widget, or one of the model section's two helpers.
enum class Widget { Setting, MatchButton, SizeLabel };

// Where a row's setting lives in ExperimentConfig. Its type picks the widget: a whole number a
// spin box, a real one a real spin box, a flag a check box, a word a combo box, a list of lengths
// a line edit.
using Member = std::variant<std::monostate, int TaskConfig::*, double TaskConfig::*, bool TaskConfig::*, QString TaskConfig::*,
                            std::vector<int> TaskConfig::*, int ModelConfig::*, bool ModelConfig::*, QString ModelConfig::*,
                            int TrainConfig::*, double TrainConfig::*, QString TrainConfig::*, qint64 ExperimentConfig::*>;
using ValueRef = std::variant<int*, qint64*, double*, bool*, QString*, std::vector<int>*>;

template <class T> T* valueOf(ExperimentConfig& c, T TaskConfig::*m) { return &(c.task.*m); }
template <class T> T* valueOf(ExperimentConfig& c, T ModelConfig::*m) { return &(c.model.*m); }
template <class T> T* valueOf(ExperimentConfig& c, T TrainConfig::*m) { return &(c.train.*m); }
template <class T> T* valueOf(ExperimentConfig& c, T ExperimentConfig::*m) { return &(c.*m); }

ValueRef valueIn(ExperimentConfig& c, const Member& member)
{
    return std::visit(
        [&c](auto m) -> ValueRef {
            if constexpr (std::is_same_v<decltype(m), std::monostate>) throw std::logic_error("SettingsPanel: a row without a setting");
            else return valueOf(c, m);
        },
        member);
}

// Settings written as off when the chosen positions, family or task cannot use them, whatever
// their disabled widget still holds: validate() refuses a curriculum on a token task and mimetic
// initialisation outside Mamba's mixers, and a saved config names no masked heads without
// Hard-ALiBi and no convolution its family lacks.
void dropUnusedOptions(ExperimentConfig& c)
{
    if (c.model.positions != "hard_alibi") c.model.numMaskedHeads = 0;
    const ModelFamily* family = findFamily(c.model.kind);
    if (!family || !family->options.contains("short_conv")) c.model.shortConv = 0;
    if (!family || !family->options.contains("init")) c.model.init = "default";
    if (!isVectorTask(c.task.kind)) c.train.curriculumDims = 0;  // a token task has no curriculum
    if (c.train.curriculumDims == 0) c.train.curriculumSteps = 0;
}

QString lengthsText(const std::vector<int>& lengths)
{
    QStringList text;
    for (int l : lengths) text << QString::number(l);
    return text.join(", ");
}

// A numeric setting's label from base/configfields.h; "" for the others.
const char* settingLabel(const char* key)
{
    for (const IntField& f : intFieldTable())
        if (std::strcmp(f.key, key) == 0) return f.label;
    for (const RealField& f : realFieldTable())
        if (std::strcmp(f.key, key) == 0) return f.label;
    return "";
}

}  // namespace

QString SettingsPanel::checkpointName(const QString& path)
{
    const QFileInfo f(path);
    // a run's autosave, <run>/checkpoints/last.safetensors: which run it is says more than its name
    return f.dir().dirName() == "checkpoints" ? QFileInfo(f.absolutePath()).dir().dirName() + "/" + f.fileName() : f.fileName();
}

struct SettingsPanel::Choice {
    QString label, id, tip;
};

struct SettingsPanel::Row {
    const char* key;          // the dotted key; a number's label, range and tooltip are its base/configfields.h entry
    Member value = {};        // where the setting lives; none for the helpers
    Use use = Use::Always;
    const char* label = nullptr;    // the label, for a setting without a configfields entry (or another word)
    const char* tip = nullptr;      // the tooltip, for a setting without a configfields entry
    const char* text = nullptr;     // a check box's own text
    const char* special = nullptr;  // a spin box's text at its minimum
    const char* suffix = nullptr;   // a spin box's unit
    const char* name = nullptr;     // the widget's object name, where it is not the key's last part
    QList<Choice> (*choices)() = nullptr;  // a combo box's entries
    bool beside = false;            // in the previous row, right of its field
    Widget widget = Widget::Setting;
};

// The rows of each section, in the form's order. A setting is one line here; the label, range
// and tooltip of a number are its base/configfields.h entry.
const std::vector<SettingsPanel::Row>& SettingsPanel::taskRows()
{
    static const std::vector<Row> rows{
        {.key = "task.kind", .value = &TaskConfig::kind, .label = QT_TR_NOOP("Task"),
         .tip = QT_TR_NOOP("What the model is trained and evaluated on; choosing one loads its laptop-scale settings"), .name = "task_kind",
         .choices = [] {
             QList<Choice> c;
             for (const TaskInfo& t : taskCatalog()) c.append({t.label, t.id, t.description});
             return c;
         }},
        {.key = "task.vocab_size", .value = &TaskConfig::vocabSize, .use = Use::Letters},
        {.key = "task.min_len", .value = &TaskConfig::minLen},
        {.key = "task.max_len", .value = &TaskConfig::maxLen},
        {.key = "task.context_len", .value = &TaskConfig::contextLen},
        {.key = "task.eval_lengths", .value = &TaskConfig::evalLengths,
         .tip = QT_TR_NOOP("Lengths evaluated during training, comma-separated; the max length is always included")},
        {.key = "task.ngram", .value = &TaskConfig::ngram, .use = Use::TaskOption},
        {.key = "task.answer_len", .value = &TaskConfig::answerLen, .use = Use::TaskOption},
        {.key = "task.shuffle_words", .value = &TaskConfig::shuffleWords, .use = Use::TaskOption,
         .tip = QT_TR_NOOP("Copy the span's words in a random order (no help from knowing English)"), .text = QT_TR_NOOP("Shuffle words")},
        {.key = "task.dims", .value = &TaskConfig::dims, .use = Use::TaskOption},
        {.key = "task.sparsity", .value = &TaskConfig::sparsity, .use = Use::TaskOption},
        {.key = "task.outlier_prob", .value = &TaskConfig::outlierProb, .use = Use::TaskOption},
        {.key = "task.noise_fraction", .value = &TaskConfig::noiseFraction, .use = Use::TaskOption},
        {.key = "task.noise_vocab", .value = &TaskConfig::noiseVocab, .use = Use::TaskOption},
        {.key = "task.motif", .value = &TaskConfig::motif, .use = Use::TaskOption},
        {.key = "task.copy_tokens", .value = &TaskConfig::copyTokens, .use = Use::TaskOption},
        {.key = "task.train_examples", .value = &TaskConfig::trainExamples, .use = Use::TaskOption},
    };
    return rows;
}

const std::vector<SettingsPanel::Row>& SettingsPanel::modelRows()
{
    static const std::vector<Row> rows{
        {.key = "model.kind", .value = &ModelConfig::kind, .label = QT_TR_NOOP("Family"), .tip = QT_TR_NOOP("The sequence model family"),
         .choices = [] {
             QList<Choice> c;
             for (const ModelFamily& k : modelFamilies()) c.append({k.label, k.id, k.tip});
             return c;
         }},
        {.key = "model.positions", .value = &ModelConfig::positions, .use = Use::Positions, .label = QT_TR_NOOP("Positions"),
         .tip = QT_TR_NOOP("Transformer positional scheme (the hybrids fix theirs as in Park et al.)"),
         .choices = [] {
             QList<Choice> c;
             for (const PositionScheme& p : positionSchemes()) c.append({p.label, p.id, p.tip});
             return c;
         }},
        {.key = "model.layers", .value = &ModelConfig::layers},
        {.key = "model.d_model", .value = &ModelConfig::dModel},
        {.key = "matchSize", .beside = true, .widget = Widget::MatchButton},
        {.key = "model.heads", .value = &ModelConfig::heads, .use = Use::Attention},
        {.key = "model.num_masked_heads", .value = &ModelConfig::numMaskedHeads, .use = Use::HardAlibi},
        {.key = "model.short_conv", .value = &ModelConfig::shortConv, .use = Use::FamilyOption, .special = QT_TR_NOOP("none")},
        {.key = "model.d_state", .value = &ModelConfig::dState, .use = Use::FamilyOption},
        {.key = "model.expand", .value = &ModelConfig::expand, .use = Use::FamilyOption},
        {.key = "model.head_dim", .value = &ModelConfig::headDim, .use = Use::FamilyOption},
        {.key = "model.n_groups", .value = &ModelConfig::nGroups, .use = Use::FamilyOption},
        {.key = "model.chunk_size", .value = &ModelConfig::chunkSize, .use = Use::FamilyOption},
        {.key = "model.forget_gate", .value = &ModelConfig::forgetGate, .use = Use::FamilyOption,
         .tip = QT_TR_NOOP("Gated DeltaNet: the gate that decays the state each token. Off: the plain delta rule "
                           "(DeltaNet), which keeps what a key holds until a write under a similar key replaces it"),
         .text = QT_TR_NOOP("Decay gate")},
        {.key = "model.init", .value = &ModelConfig::init, .use = Use::FamilyOption, .label = QT_TR_NOOP("Initialisation"),
         .tip = QT_TR_NOOP("How Mamba's selective mixers are initialised (Mamba and the hybrids)"),
         .choices = [] {
             return QList<Choice>{
                 {tr("default (mamba_ssm)"), "default",
                  tr("mamba_ssm's initialisation: S4D-real decays A_n = -(n + 1), independent B and C projections")},
                 {tr("mimetic"), "mimetic",
                  tr("Trockman et al. 2024: state transitions near 1 and C's projection equal to B's, so the scan "
                     "starts out like linear attention")}};
         }},
        {.key = "modelSize", .widget = Widget::SizeLabel},
    };
    return rows;
}

const std::vector<SettingsPanel::Row>& SettingsPanel::trainingRows()
{
    static const std::vector<Row> rows{
        {.key = "train.steps", .value = &TrainConfig::steps},
        {.key = "train.batch_size", .value = &TrainConfig::batchSize},
        {.key = "train.lr", .value = &TrainConfig::lr},
        {.key = "train.schedule", .value = &TrainConfig::schedule, .label = QT_TR_NOOP("Schedule"),
         .choices = [] { return QList<Choice>{{tr("cosine"), "cosine", {}}, {tr("linear"), "linear", {}}, {tr("constant"), "constant", {}}}; }},
        {.key = "train.warmup_steps", .value = &TrainConfig::warmupSteps},
        {.key = "train.weight_decay", .value = &TrainConfig::weightDecay},
        {.key = "train.grad_clip", .value = &TrainConfig::gradClip},
        {.key = "train.precision", .value = &TrainConfig::precision, .label = QT_TR_NOOP("Precision"),
         .tip = QT_TR_NOOP("bfloat16: matrix products in bfloat16 under Torch's autocast, the scan's state, norms and loss "
                           "in float32; weights, optimiser and checkpoints stay float32. Pays off on a GPU with bf16 "
                           "units; on a CPU it is no faster (the app's fused float32 kernels step aside)."),
         .choices = [] { return QList<Choice>{{tr("float32"), "fp32", {}}, {tr("bfloat16 (autocast)"), "bf16", {}}}; }},
        {.key = "train.eval_every", .value = &TrainConfig::evalEvery},
        {.key = "train.checkpoint_every", .value = &TrainConfig::checkpointEvery},
        {.key = "train.mechanism_every", .value = &TrainConfig::mechanismEvery, .use = Use::TokenTasks, .special = QT_TR_NOOP("off")},
        {.key = "seed", .value = &ExperimentConfig::seed},
        {.key = "train.curriculum_dims", .value = &TrainConfig::curriculumDims, .use = Use::VectorTasks,
         .label = QT_TR_NOOP("Curriculum"), .special = QT_TR_NOOP("off")},
        {.key = "train.curriculum_steps", .value = &TrainConfig::curriculumSteps, .use = Use::VectorTasks,
         .suffix = QT_TR_NOOP(" steps"), .beside = true},
    };
    return rows;
}

template <class W> W* SettingsPanel::field(const char* key) const
{
    for (const Field& f : m_fields)
        if (std::strcmp(f.row->key, key) == 0) return qobject_cast<W*>(f.widget);
    return nullptr;
}

QString SettingsPanel::rowLabel(const Row& row) { return tr(row.label ? row.label : settingLabel(row.key)); }

QSpinBox* SettingsPanel::spin(const Row& row)
{
    const IntField& f = intField(row.key);
    auto* s = new QSpinBox(this);
    s->setRange(int(std::max(f.lo, f.formMin)), int(std::min<long long>(f.formMax, std::numeric_limits<int>::max())));
    s->setToolTip(tr(f.tip));
    s->setKeyboardTracking(false);
    if (row.special) s->setSpecialValueText(tr(row.special));
    if (row.suffix) s->setSuffix(tr(row.suffix));
    connect(s, &QSpinBox::valueChanged, this, [this, &row] { edited(row); });
    return s;
}

QDoubleSpinBox* SettingsPanel::realSpin(const Row& row)
{
    const RealField& f = realField(row.key);
    auto* s = new QDoubleSpinBox(this);
    s->setDecimals(f.decimals);
    s->setRange(f.formMin, f.formMax);
    s->setSingleStep(f.formStep);
    s->setToolTip(tr(f.tip));
    s->setKeyboardTracking(false);
    connect(s, &QDoubleSpinBox::valueChanged, this, [this, &row] { edited(row); });
    return s;
}

QComboBox* SettingsPanel::comboBox(const Row& row)
{
    auto* box = new QComboBox(this);
    for (const Choice& c : row.choices()) {
        box->addItem(c.label, c.id);
        if (!c.tip.isEmpty()) box->setItemData(box->count() - 1, c.tip, Qt::ToolTipRole);
    }
    connect(box, &QComboBox::currentIndexChanged, this, [this, &row] { edited(row); });
    return box;
}

// The widget of one row, named after its key (tests and the window find it by that name).
QWidget* SettingsPanel::makeField(const Row& row)
{
    QWidget* w = nullptr;
    if (row.widget == Widget::MatchButton) {
        w = m_match = makeMatchButton();
    } else if (row.widget == Widget::SizeLabel) {
        w = m_size = makeSizeLabel();
    } else {
        ExperimentConfig defaults;  // only the type of the value matters here
        w = std::visit(
            [&](auto* value) -> QWidget* {
                using T = std::remove_pointer_t<decltype(value)>;
                if constexpr (std::is_same_v<T, double>) {
                    return realSpin(row);
                } else if constexpr (std::is_same_v<T, bool>) {
                    auto* check = new QCheckBox(tr(row.text), this);
                    connect(check, &QCheckBox::toggled, this, [this, &row] { edited(row); });
                    return check;
                } else if constexpr (std::is_same_v<T, QString>) {
                    return comboBox(row);
                } else if constexpr (std::is_same_v<T, std::vector<int>>) {
                    auto* edit = new QLineEdit(this);
                    connect(edit, &QLineEdit::textChanged, this, [this, &row] { edited(row); });
                    return edit;
                } else {
                    return spin(row);
                }
            },
            valueIn(defaults, row.value));
        m_fields.push_back({&row, w});
    }
    w->setObjectName(row.name ? row.name : QString(row.key).section('.', -1));
    if (row.tip) w->setToolTip(tr(row.tip));
    return w;
}

// The rows into the form; a row marked `beside` shares the previous row's line.
void SettingsPanel::addRows(QFormLayout* form, const std::vector<Row>& rows)
{
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& row = rows[i];
        QWidget* w = makeField(row);
        if (row.widget == Widget::SizeLabel) {
            form->addRow(w);
        } else if (i + 1 < rows.size() && rows[i + 1].beside) {
            auto* line = new QHBoxLayout;
            line->setContentsMargins(0, 0, 0, 0);
            line->addWidget(w, 1);
            for (; i + 1 < rows.size() && rows[i + 1].beside; ++i)
                line->addWidget(makeField(rows[i + 1]), rows[i + 1].widget == Widget::MatchButton ? 0 : 1);
            form->addRow(rowLabel(row), line);
        } else {
            form->addRow(rowLabel(row), w);
        }
    }
}

QToolButton* SettingsPanel::makeMatchButton()
{
    auto* button = new QToolButton(this);
    button->setText(tr("Match…"));
    button->setToolTip(tr("Choose d_model so this family has as many parameters as another family with the same settings "
                          "(to compare architectures at matched size)"));
    button->setPopupMode(QToolButton::InstantPopup);
    auto* menu = new QMenu(button);
    for (const ModelFamily& k : modelFamilies())
        menu->addAction(k.label, this, [this, id = k.id] { matchSizeOf(id); })->setObjectName("match_" + k.id);
    button->setMenu(menu);
    return button;
}

QLabel* SettingsPanel::makeSizeLabel()
{
    auto* size = new QLabel(this);
    size->setWordWrap(true);
    size->setToolTip(tr("Parameters, and the state the model carries from one token to the next: the quantity in the copy paper's bound"));
    return size;
}

QWidget* SettingsPanel::buildExperimentBox()
{
    auto* box = new QGroupBox(tr("Experiment"), this);
    auto* layout = new QVBoxLayout(box);
    m_preset = new QComboBox(this);
    m_preset->setObjectName("preset");
    m_preset->addItems(presetNames());
    m_description = new QLabel(this);
    m_description->setWordWrap(true);
    m_description->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_description->setForegroundRole(QPalette::PlaceholderText);  // quieter than the form, in either theme
    m_description->setObjectName("description");
    layout->addWidget(m_preset);
    layout->addWidget(m_description);
    connect(m_preset, &QComboBox::activated, this, [this](int i) {
        if (m_preset->itemData(i).toString() != kOtherEntry) {
            selectPreset(m_preset->itemText(i));
            return;
        }
        setOrigin(i, m_other, m_otherText);
        fillForm(m_other);
    });
    return box;
}

QWidget* SettingsPanel::buildTaskBox()
{
    // The form holds no word-wrapped label: Qt 6.4's QFormLayout::heightForWidth writes past its
    // row array when rows are hidden (valgrind: "invalid write" in it; with the eleven optional
    // rows it corrupted the heap and the window crashed on showing). The wrapping example and
    // its button sit below the form instead.
    auto* box = new QGroupBox(tr("Task"), this);
    auto* layout = new QVBoxLayout(box);
    auto* formWidget = new QWidget(box);
    auto* form = new QFormLayout(formWidget);
    form->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(formWidget);
    addRows(form, taskRows());
    m_task = field<QComboBox>("task.kind");
    m_task->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_task->setMinimumContentsLength(12);
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
    layout->addWidget(m_sample);
    layout->addWidget(m_newSample);
    return box;
}

QWidget* SettingsPanel::buildSection(const QString& title, const std::vector<Row>& rows)
{
    auto* box = new QGroupBox(title, this);
    addRows(new QFormLayout(box), rows);
    return box;
}

SettingsPanel::SettingsPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(buildExperimentBox());
    layout->addWidget(buildTaskBox());
    layout->addWidget(buildSection(tr("Model"), modelRows()));
    m_kind = field<QComboBox>("model.kind");
    m_positions = field<QComboBox>("model.positions");
    // Counting builds the model; coalesce bursts of edits (a spin box held down).
    m_sizeTimer = new QTimer(this);
    m_sizeTimer->setSingleShot(true);
    m_sizeTimer->setInterval(150);
    connect(m_sizeTimer, &QTimer::timeout, this, &SettingsPanel::updateSize);
    layout->addWidget(buildSection(tr("Training"), trainingRows()));

    m_problems = new QLabel(this);
    m_problems->setObjectName("problems");
    m_problems->setWordWrap(true);
    m_problems->setStyleSheet("color: #c0392b;");
    layout->addWidget(m_problems);
    layout->addStretch(1);
}

void SettingsPanel::edited(const Row& row)
{
    if (m_filling) return;
    if (row.value == Member(&TaskConfig::kind)) setTaskFields(taskDefaults(m_task->currentData().toString()));  // a task's own settings
    showProblems();
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
    for (const Field& f : m_fields)
        if (!QString(f.row->key).startsWith("task.")) showValue(f, m_base);
    m_filling = false;
    showProblems();
}

void SettingsPanel::setTaskFields(const TaskConfig& t)
{
    const bool filling = m_filling;
    m_filling = true;
    m_base.task = t;
    for (const Field& f : m_fields)
        if (QString(f.row->key).startsWith("task.")) showValue(f, m_base);
    m_filling = filling;
    updateRows();
}

void SettingsPanel::showValue(const Field& f, ExperimentConfig& c)
{
    std::visit(
        [&](auto* value) {
            using T = std::remove_pointer_t<decltype(value)>;
            if constexpr (std::is_same_v<T, double>) {
                static_cast<QDoubleSpinBox*>(f.widget)->setValue(*value);
            } else if constexpr (std::is_same_v<T, bool>) {
                static_cast<QCheckBox*>(f.widget)->setChecked(*value);
            } else if constexpr (std::is_same_v<T, QString>) {
                auto* box = static_cast<QComboBox*>(f.widget);
                box->setCurrentIndex(std::max(0, box->findData(*value)));
            } else if constexpr (std::is_same_v<T, std::vector<int>>) {
                static_cast<QLineEdit*>(f.widget)->setText(lengthsText(*value));
            } else {
                static_cast<QSpinBox*>(f.widget)->setValue(int(*value));  // the seed is 64 bits, the form's 31
            }
        },
        valueIn(c, f.row->value));
}

void SettingsPanel::readValue(const Field& f, ExperimentConfig& c) const
{
    std::visit(
        [&](auto* value) {
            using T = std::remove_pointer_t<decltype(value)>;
            if constexpr (std::is_same_v<T, double>) {
                *value = static_cast<QDoubleSpinBox*>(f.widget)->value();
            } else if constexpr (std::is_same_v<T, bool>) {
                *value = static_cast<QCheckBox*>(f.widget)->isChecked();
            } else if constexpr (std::is_same_v<T, QString>) {
                *value = static_cast<QComboBox*>(f.widget)->currentData().toString();
            } else if constexpr (std::is_same_v<T, std::vector<int>>) {
                try {
                    *value = parseLengthList(static_cast<QLineEdit*>(f.widget)->text(), f.row->key);
                } catch (const Error&) {
                    *value = {-1};  // validate() names the field
                }
            } else {
                *value = static_cast<QSpinBox*>(f.widget)->value();
            }
        },
        valueIn(c, f.row->value));
}

bool SettingsPanel::uses(const Row& row, const TaskInfo* task, const ModelFamily* family) const
{
    const QString option = QString(row.key).section('.', -1);
    switch (row.use) {
    case Use::Always: return true;
    case Use::TaskOption: return task && task->options.contains(option);
    case Use::Letters: return task && !task->characters && !task->vectors;
    case Use::TokenTasks: return task && !task->vectors;
    case Use::VectorTasks: return task && task->vectors;
    case Use::FamilyOption: return family && family->options.contains(option);
    case Use::Positions: return family && family->positions;
    case Use::Attention: return family && family->attention;
    case Use::HardAlibi: return family && family->positions && m_positions->currentData().toString() == "hard_alibi";
    }
    return true;
}

// Only the settings the chosen task and family use are editable; a task's options it does not
// use are hidden as well, so the form stays short. The range labels name what the task counts.
void SettingsPanel::updateRows()
{
    const TaskInfo* task = findTask(m_task->currentData().toString());
    const ModelFamily* family = findFamily(m_kind->currentData().toString());
    for (const Field& f : m_fields) {
        if (f.row->use == Use::Always) continue;
        const bool used = uses(*f.row, task, family);
        f.widget->setEnabled(used);
        if (f.row->use == Use::TaskOption) static_cast<QFormLayout*>(f.widget->parentWidget()->layout())->setRowVisible(f.widget, used);
    }
    if (!task) return;
    const QString what = task->difficulty.section(' ', -1);  // "length", "entries", "pairs", "examples"
    const std::pair<const char*, QString> labels[] = {
        {"task.min_len", tr("Min %1").arg(what)}, {"task.max_len", tr("Max %1").arg(what)}, {"task.eval_lengths", tr("Eval %1").arg(what)}};
    for (const auto& [key, text] : labels) {
        QWidget* w = field<QWidget>(key);
        if (auto* l = qobject_cast<QLabel*>(static_cast<QFormLayout*>(w->parentWidget()->layout())->labelForField(w))) l->setText(text);
    }
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
    for (const Field& f : m_fields) readValue(f, c);
    dropUnusedOptions(c);
    return c;
}

QStringList SettingsPanel::problems() const { return validate(config()); }

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
            field<QSpinBox>("model.d_model")->setValue(sized.model.dModel);
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
    updateRows();
    updateDescription();
    const QStringList p = problems();
    if (p.isEmpty()) showSample();
    else m_sample->setText(tr("(fix the settings to see an example)"));
    m_problems->setText(p.join("\n"));
    m_problems->setVisible(!p.isEmpty());
    emit changed();
}

}  // namespace parrot
