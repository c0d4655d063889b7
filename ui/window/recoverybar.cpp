#include "ui/window/recoverybar.h"

#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QStyle>

namespace parrot {

RecoveryBar::RecoveryBar(QWidget* parent) : QToolBar(tr("Interrupted run"), parent)
{
    setObjectName("recoveryBar");
    setMovable(false);
    setFloatable(false);
    toggleViewAction()->setVisible(false);  // not one of the panels the user shows and hides
    auto* line = new QWidget(this);
    auto* row = new QHBoxLayout(line);
    row->setContentsMargins(6, 2, 6, 2);
    m_icon = new QLabel(line);
    const int size = style()->pixelMetric(QStyle::PM_SmallIconSize, nullptr, this);
    m_icon->setPixmap(style()->standardIcon(QStyle::SP_MessageBoxWarning).pixmap(size, size));
    m_text = new QLabel(line);
    m_text->setObjectName("recoveryText");
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_continue = new QPushButton(tr("Continue"), line);
    m_continue->setObjectName("recoveryContinue");
    m_continue->setToolTip(tr("Resume the run from its last autosave, exactly as it would have gone on"));
    m_dismiss = new QPushButton(tr("Dismiss"), line);
    m_dismiss->setObjectName("recoveryDismiss");
    m_dismiss->setToolTip(tr("Leave the run as it is; the Runs tab can still continue it"));
    row->addWidget(m_icon);
    row->addWidget(m_text, 1);
    row->addWidget(m_continue);
    row->addWidget(m_dismiss);
    addWidget(line);
    connect(m_continue, &QPushButton::clicked, this, [this] {
        if (!current()) return;
        const QString dir = current()->dir;
        next();
        emit continueRequested(dir);
    });
    connect(m_dismiss, &QPushButton::clicked, this, [this] {
        if (!current()) return;
        const QString dir = current()->dir;
        next();
        emit dismissRequested(dir);
    });
    hide();
}

QString RecoveryBar::describe(const InterruptedRun& r)
{
    if (r.step < 0) return tr("Training of %1 stopped unexpectedly before its first autosave").arg(r.name);
    return tr("Training of %1 stopped unexpectedly at step %2").arg(r.name, QLocale().toString(r.step));
}

void RecoveryBar::setRuns(const std::vector<InterruptedRun>& runs)
{
    m_runs = runs;
    if (const InterruptedRun* r = current()) {
        QString line = describe(*r);
        if (m_runs.size() > 1) line += tr(" (and %n more interrupted run(s): see the Runs tab)", nullptr, int(m_runs.size() - 1));
        m_text->setText(line);
        m_text->setToolTip(QDir::toNativeSeparators(r->dir));
    }
    sync();
}

QString RecoveryBar::text() const { return m_text->text(); }

void RecoveryBar::sync() { setVisible(!m_runs.empty()); }

void RecoveryBar::next()
{
    if (m_runs.empty()) return;
    m_runs.erase(m_runs.begin());
    setRuns(std::vector<InterruptedRun>(m_runs));
}

}  // namespace parrot
