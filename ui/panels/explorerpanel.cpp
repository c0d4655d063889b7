#include "ui/panels/explorerpanel.h"

#include "base/error.h"
#include "base/tasks/tokentask.h"
#include "core/eval/lmtests.h"
#include "ui/panels/constructionview.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFileDialog>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace parrot {

ExplorerPanel::ExplorerPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    m_tabs = new QTabWidget(this);
    auto* inside = new QWidget(m_tabs);
    auto* il = new QVBoxLayout(inside);
    il->addLayout(buildInputBar(inside));
    m_inputStatus = new QLabel(inside);
    m_inputStatus->setObjectName("inputStatus");
    m_inputStatus->setTextFormat(Qt::RichText);
    il->addWidget(m_inputStatus);
    auto* split = new QSplitter(Qt::Horizontal, inside);
    m_left = new InsidePane(split);
    m_right = new InsidePane(split);
    split->addWidget(m_left);
    split->addWidget(m_right);
    il->addWidget(split, 1);
    m_tabs->addTab(inside, tr("Inside two models"));
    m_construction = new ConstructionView(m_tabs);
    m_tabs->addTab(m_construction, tr("Copy construction"));
    layout->addWidget(m_tabs);
    connectInput();
    m_left->chooseBundled("hard-alibi");
    m_right->chooseBundled("mamba");
    applyKind();
    randomInput();
}

QHBoxLayout* ExplorerPanel::buildInputBar(QWidget* inside)
{
    auto* bar = new QHBoxLayout;
    m_inputLabel = new QLabel(tr("Copy input:"), inside);
    bar->addWidget(m_inputLabel);
    m_input = new QLineEdit(inside);
    m_input->setObjectName("input");
    m_input->setPlaceholderText(tr("type letters and press Enter, or draw a random string"));
    bar->addWidget(m_input, 1);
    m_taskNote = new QLabel(tr("each pane draws an example of the task its model was trained on"), inside);
    m_taskNote->setObjectName("taskNote");
    m_taskNote->setMinimumWidth(40);
    bar->addWidget(m_taskNote, 1);
    // a text prompt has lines (a phone book): a box of its own, applied with the button or Ctrl+Enter
    m_promptBox = new QPlainTextEdit(inside);
    m_promptBox->setObjectName("prompt");
    m_promptBox->setPlaceholderText(tr("type a prompt (Ctrl+Enter), or draw a phone book or a passage"));
    m_promptBox->setFixedHeight(m_promptBox->fontMetrics().lineSpacing() * 3 + 12);
    m_promptBox->setTabChangesFocus(true);
    bar->addWidget(m_promptBox, 1);
    m_apply = new QPushButton(tr("Look"), inside);
    m_apply->setObjectName("apply");
    m_apply->setToolTip(tr("Look inside both panes' models on this prompt (Ctrl+Enter)"));
    bar->addWidget(m_apply);
    bar->addWidget(buildKindBox(inside));
    m_length = new QSpinBox(inside);
    m_length->setRange(1, 400);
    m_length->setValue(16);
    m_length->setPrefix(tr("L = "));
    m_length->setToolTip(tr("Letters of a copy input; entries of a phone book; tokens of a passage"));
    m_seed = new QSpinBox(inside);
    m_seed->setRange(0, 1000000);
    m_seed->setValue(1);
    m_seed->setPrefix(tr("seed "));
    m_random = new QPushButton(tr("Random"), inside);
    m_random->setObjectName("random");
    bar->addWidget(m_length);
    bar->addWidget(m_seed);
    bar->addWidget(m_random);
    return bar;
}

QComboBox* ExplorerPanel::buildKindBox(QWidget* inside)
{
    m_kind = new QComboBox(inside);
    m_kind->setObjectName("inputKind");
    m_kind->addItem(tr("random string"), "copy");
    m_kind->addItem(tr("with a repeated 3-gram"), "copy_dup_ngram");
    m_kind->addItem(tr("example of each model's task"), "task");
    m_kind->insertSeparator(m_kind->count());
    for (const LmTestInfo& t : lmTests())
        if (!t.readsData) m_kind->addItem(tr("%1 (text)").arg(t.label), t.id);  // prompts it can generate
    m_kind->addItem(tr("my own text"), "text");
    m_kind->setToolTip(tr("Copy inputs for the copy models; an example of each model's own task (MQAR's key-value pairs, "
                          "an n-gram lookup, MAD's tasks), drawn per pane; text prompts (the copy paper's zero-shot tests, or "
                          "your own) for pretrained language models. A repeated n-gram makes the lookup ambiguous: watch where "
                          "the crosses are and where copying fails"));
    return m_kind;
}

void ExplorerPanel::connectInput()
{
    connect(m_input, &QLineEdit::returnPressed, this, [this] { setInputText(m_input->text()); });
    connect(m_apply, &QPushButton::clicked, this, [this] { setTextPrompt(m_promptBox->toPlainText()); });
    auto* submit = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), m_promptBox, nullptr, nullptr, Qt::WidgetShortcut);
    connect(submit, &QShortcut::activated, this, [this] { setTextPrompt(m_promptBox->toPlainText()); });
    connect(m_random, &QPushButton::clicked, this, [this] {
        m_seed->setValue(m_seed->value() + 1);
        randomInput();
    });
    connect(m_kind, &QComboBox::activated, this, [this] {
        applyKind();
        if (inputKind() != "text") randomInput();
    });
    for (InsidePane* pane : {m_left, m_right})
        connect(&pane->session(), &InsideSession::opened, this, [this, pane] { followTask(pane); });
}

void ExplorerPanel::showCheckpoint(const QString& path)
{
    m_right->chooseCheckpoint(path);
    m_tabs->setCurrentIndex(0);  // the panes, whichever sub-tab was in front
}

void ExplorerPanel::showRun(const QString& runDir)
{
    m_right->chooseRun(runDir);
    m_tabs->setCurrentIndex(0);
}

bool ExplorerPanel::panesShown() const { return m_tabs->currentIndex() == 0; }

void ExplorerPanel::setCurrentModelProvider(const std::function<Model()>& provider)
{
    m_left->setCurrentModelProvider(provider);
    m_right->setCurrentModelProvider(provider);
}

bool ExplorerPanel::isCopyKind(const QString& kind) { return kind == "copy" || kind == "copy_dup_ngram"; }

QString ExplorerPanel::inputKind() const { return m_kind->currentData().toString(); }

void ExplorerPanel::setInputKind(const QString& kind)
{
    const int i = m_kind->findData(kind);
    if (i >= 0) m_kind->setCurrentIndex(i);
    applyKind();
}

void ExplorerPanel::applyKind()
{
    // the input's widgets follow the kind: a line of letters, a note for a task example, or a prompt box
    const QString kind = inputKind();
    const bool task = kind == "task";
    const bool text = !isCopyKind(kind) && !task;
    m_inputLabel->setText(text ? tr("Text prompt:") : task ? tr("Task example:") : tr("Copy input:"));
    m_input->setVisible(isCopyKind(kind));
    m_taskNote->setVisible(task);
    m_promptBox->setVisible(text);
    m_apply->setVisible(text);
    m_length->setEnabled(kind != "text");
    m_length->setRange(1, text ? 2000 : 400);
    if (const LmTestInfo* t = findLmTest(kind)) m_length->setToolTip(tr("Size of the %1: %2").arg(t->label.toLower(), t->size));
    else if (task) m_length->setToolTip(tr("The task's difficulty, as its min_len and max_len count it: letters to copy or look up, key-value pairs of MQAR, a MAD task's sequence length"));
    else m_length->setToolTip(tr("Letters of a copy input; entries of a phone book; tokens of a passage"));
}

void ExplorerPanel::followTask(const InsidePane* pane)
{
    const InsideSubject& s = pane->session().subject();
    if (!isCopyKind(inputKind()) || s.copyProblem().isEmpty() || !s.taskProblem().isEmpty()) return;
    setInputKind("task");
    m_length->setValue(evaluationTask(s.model().config().task).maxLen);
    randomInput();
}

void ExplorerPanel::inputFailed(const QString& message)
{
    m_inputError = message;
    m_inputStatus->setText("<span style='color:#b00'>" + m_inputError.toHtmlEscaped() + "</span>");
}

void ExplorerPanel::setInputText(const QString& letters)
{
    try {
        applyInput(copyInput(letters, 52));
    } catch (const Error& e) {
        inputFailed(e.message());
    }
}

const LanguageModel* ExplorerPanel::anyLanguageModel() const
{
    for (InsidePane* p : {m_left, m_right})
        if (const LanguageModel* lm = p->session().subject().languageModel()) return lm;
    return m_pretrained.empty() ? nullptr : m_pretrained.front().get();
}

void ExplorerPanel::randomInput()
{
    const QString kind = inputKind();
    try {
        if (isCopyKind(kind)) {
            applyInput(randomCopyInput(m_length->value(), 26, static_cast<unsigned long long>(m_seed->value()), kind, 3));
            return;
        }
        if (kind == "task") {
            m_inputError.clear();
            m_textInput = false;
            m_tokens.clear();
            m_inputStatus->setText(tr("An example of each pane's own task at difficulty %1, seed %2; the panes show its tokens and score its answers")
                                       .arg(m_length->value()).arg(m_seed->value()));
            m_left->setTaskInput(m_length->value(), static_cast<unsigned long long>(m_seed->value()));
            m_right->setTaskInput(m_length->value(), static_cast<unsigned long long>(m_seed->value()));
            return;
        }
        if (kind == "text") return;  // typed
        // the zero-shot tests' prompts, counted in a language model's tokens
        const LanguageModel* lm = anyLanguageModel();
        if (!lm)
            throw Error(tr("a text prompt is read by a pretrained language model: open one in a pane first (its source list: "
                           "Open pretrained model folder…, or a model of the Pretrained tab)"));
        drawPrompt(kind, *lm);
    } catch (const Error& e) {
        inputFailed(e.message());
    }
}

void ExplorerPanel::drawPrompt(const QString& kind, const LanguageModel& lm)
{
    std::mt19937_64 rng(static_cast<unsigned long long>(m_seed->value()));
    const LmPrompt p = makeLmPrompt(kind, m_length->value(), lm.tokenizer, rng);
    setTextPrompt(lm.tokenizer.decode(p.ids));
    m_inputStatus->setText(m_inputStatus->text() + tr(" — expected answer: <b>%1</b>").arg(p.answer.left(80).toHtmlEscaped()));
}

void ExplorerPanel::setTextPrompt(const QString& prompt)
{
    if (prompt.trimmed().isEmpty()) return inputFailed(tr("the prompt is empty: type one, or draw a phone book or a passage"));
    m_inputError.clear();
    m_textInput = true;
    m_promptText = prompt;
    m_tokens.clear();
    if (isCopyKind(inputKind()) || inputKind() == "task") setInputKind("text");
    if (m_promptBox->toPlainText() != prompt) m_promptBox->setPlainText(prompt);
    m_inputStatus->setText(tr("%1 characters, %2 lines of text; each pane reads it with its own tokenizer")
                               .arg(prompt.size()).arg(prompt.count('\n') + 1));
    m_left->setTextInput(prompt);
    m_right->setTextInput(prompt);
}

void ExplorerPanel::applyInput(const std::vector<int>& tokens)
{
    m_inputError.clear();
    m_textInput = false;
    m_tokens = tokens;
    if (!isCopyKind(inputKind())) setInputKind("copy");
    // the letters typed or drawn, shown back without the specials
    const CopyVocab v{52};
    QString s;
    const auto sep = std::find(tokens.begin(), tokens.end(), int(CopyVocab::Sep));
    for (auto it = tokens.begin(); it != sep; ++it)
        if (v.isLetter(*it)) s += v.text(*it);
    m_input->setText(s);
    m_inputStatus->setText(tr("%1 tokens: %2").arg(tokens.size()).arg(v.text(tokens).toHtmlEscaped()));
    m_left->setInput(tokens);
    m_right->setInput(tokens);
}

void ExplorerPanel::setPretrainedModels(const std::vector<std::shared_ptr<const LanguageModel>>& models)
{
    m_pretrained = models;
    m_left->setPretrainedModels(models);
    m_right->setPretrainedModels(models);
}

void ExplorerPanel::showLanguageModels(const std::shared_ptr<const LanguageModel>& a, const std::shared_ptr<const LanguageModel>& b,
                                       const QString& prompt)
{
    if (!a) return;
    m_tabs->setCurrentIndex(0);
    m_left->chooseLanguageModel(a);
    m_right->chooseLanguageModel(b ? b : a);
    if (!prompt.trimmed().isEmpty()) {
        setInputKind("text");
        setTextPrompt(prompt);
        return;
    }
    // no prompt: the paper's phone book, small enough to read every token
    setInputKind("phonebook");
    m_length->setValue(10);
    try {
        drawPrompt("phonebook", *a);
    } catch (const Error& e) {
        inputFailed(e.message());
    }
}

}  // namespace parrot
