#include "ui/window/welcomedialog.h"

#include <QCommandLinkButton>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace parrot {

WelcomeDialog::WelcomeDialog(QWidget* parent) : QDialog(parent)
{
    setObjectName("welcome");
    setWindowTitle(tr("Welcome to Parrotscope"));
    setAttribute(Qt::WA_DeleteOnClose);
    setWindowModality(Qt::WindowModal);
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("<b>Why do Transformers copy and look things up in their context better than "
                                "state-space models, and what does it look like inside?</b><br>Start with one of these:"),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    addChoice("welcomeTrain", tr("Train the default experiment and watch it"),
              tr("A two-layer Hard-ALiBi Transformer learns to copy strings: the loss, the moment its lookup heads form, "
                 "and its accuracy against string length fill in live (under a minute on two cores)."),
              &WelcomeDialog::trainRequested);
    addChoice("welcomeExplore", tr("Open the two bundled models side by side"),
              tr("A trained Transformer and a trained Mamba read the same string: the Transformer's n-gram lookup heads "
                 "beside Mamba's implicit attention, with their mistakes marked."),
              &WelcomeDialog::exploreRequested);
    addChoice("welcomeFinding", tr("Run one finding: length generalisation"),
              tr("Six models learn to copy strings of 1-8 letters and are tested up to 80: only the Hard-ALiBi Transformer "
                 "copies beyond what it was trained on (about 2 minutes on two cores; the figure fills in as runs finish)."),
              &WelcomeDialog::findingRequested);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* later = new QLabel(tr("Help → Welcome shows this again."), this);
    later->setEnabled(false);
    auto* bottom = new QHBoxLayout;
    bottom->addWidget(later, 1);
    bottom->addWidget(close);
    layout->addLayout(bottom);
    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    if (parent) setMinimumWidth(std::min(620, std::max(420, parent->width() - 80)));
}

void WelcomeDialog::addChoice(const char* name, const QString& title, const QString& sentence, void (WelcomeDialog::*then)())
{
    auto* b = new QCommandLinkButton(title, sentence, this);
    b->setObjectName(name);
    layout()->addWidget(b);
    connect(b, &QCommandLinkButton::clicked, this, [this, then] {
        accept();
        emit (this->*then)();
    });
}

}  // namespace parrot
