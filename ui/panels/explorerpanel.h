// The Explore tab: two models side by side on the same input, looked inside. The input is a copy
// input (typed letters or a random string) or a text prompt (a phone book, a passage to copy,
// shuffled text, or typed) for pretrained language models.
// Each side is an InsidePane (insidepane.h); below them, the copy construction (constructionview.h).
#pragma once

#include "ui/panels/insidepane.h"

#include <QWidget>

#include <functional>

class QTabWidget;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QComboBox;
class QHBoxLayout;
class QCheckBox;
class QLabel;
class QPlainTextEdit;

namespace parrot {

class ConstructionView;

class ExplorerPanel : public QWidget {
    Q_OBJECT
public:
    explicit ExplorerPanel(QWidget* parent = nullptr);
    void setCurrentModelProvider(const std::function<Model()>& provider);
    InsidePane* left() const { return m_left; }
    InsidePane* right() const { return m_right; }
    ConstructionView* construction() const { return m_construction; }
    // Opens a checkpoint in the right pane and brings the panes to the front.
    void showCheckpoint(const QString& path);
    // Opens a run folder in the right pane (its snapshots to step through) and brings the panes to the front.
    void showRun(const QString& runDir);
    bool panesShown() const;  // the panes' sub-tab is in front (not the Copy construction)
    // The input both panes read: typed letters, or a random copy example.
    void setInputText(const QString& letters);
    // A text prompt instead (for pretrained language models); the kind box shows "text".
    void setTextPrompt(const QString& prompt);
    // A random input of the kind chosen: a copy example, or a phone book / passage / shuffled
    // passage of the copy paper's zero-shot tests (read with a pane's tokenizer).
    void randomInput();
    // "copy", "copy_dup_ngram", "task" (each pane's model's own task), "phonebook", "copy-text",
    // "shuffled-text", "text"
    void setInputKind(const QString& kind);
    QString inputKind() const;
    bool textInput() const { return m_textInput; }
    QString prompt() const { return m_promptText; }
    QString inputError() const { return m_inputError; }
    const std::vector<int>& tokens() const { return m_tokens; }
    // The Pretrained tab's models, offered in both panes' source lists.
    void setPretrainedModels(const std::vector<std::shared_ptr<const LanguageModel>>& models);
    // Opens language models in the panes (right: `b`, or `a` again when null) on `prompt`.
    void showLanguageModels(const std::shared_ptr<const LanguageModel>& a, const std::shared_ptr<const LanguageModel>& b,
                            const QString& prompt);

private:
    QHBoxLayout* buildInputBar(QWidget* inside);  // the input, its kind, length and seed
    QComboBox* buildKindBox(QWidget* inside);
    void connectInput();
    void applyInput(const std::vector<int>& tokens);
    void applyKind();
    static bool isCopyKind(const QString& kind);  // a copy input's kinds; the others are text prompts
    void inputFailed(const QString& message);
    // A pane opened a model of a task other than copying while a copy input is chosen: an example
    // of its own task instead, at its longest training difficulty.
    void followTask(const InsidePane* pane);
    const LanguageModel* anyLanguageModel() const;
    void drawPrompt(const QString& kind, const LanguageModel& lm);  // a zero-shot test's prompt at the size shown; throws parrot::Error

    QTabWidget* m_tabs = nullptr;  // the two panes, the Copy construction
    QLabel* m_inputLabel = nullptr;
    QLineEdit* m_input = nullptr;
    QLabel* m_taskNote = nullptr;  // in the input's place for a task example
    QPlainTextEdit* m_promptBox = nullptr;
    QPushButton* m_apply = nullptr;
    QComboBox* m_kind = nullptr;
    QSpinBox* m_length = nullptr;
    QSpinBox* m_seed = nullptr;
    QPushButton* m_random = nullptr;
    QLabel* m_inputStatus = nullptr;
    InsidePane* m_left = nullptr;
    InsidePane* m_right = nullptr;
    ConstructionView* m_construction = nullptr;
    std::vector<int> m_tokens;
    bool m_textInput = false;
    QString m_promptText;
    QString m_inputError;
    std::vector<std::shared_ptr<const LanguageModel>> m_pretrained;
};

}  // namespace parrot
