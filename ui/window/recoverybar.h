// The line under the menu that says a run was cut short: "Training of copy-hard-alibi stopped
// unexpectedly at step 640", with Continue and Dismiss. The window fills it at start-up with the
// interrupted runs under its runs folder (interruptedRuns, read off the GUI thread) and shows the
// newest; Continue and Dismiss go on to the next, and the bar hides when none is left.
#pragma once

#include "base/io/runfolder.h"

#include <QToolBar>

#include <vector>

class QLabel;
class QPushButton;

namespace parrot {

class RecoveryBar : public QToolBar {
    Q_OBJECT
public:
    explicit RecoveryBar(QWidget* parent = nullptr);
    void setRuns(const std::vector<InterruptedRun>& runs);  // newest first; shown when not empty
    const std::vector<InterruptedRun>& runs() const { return m_runs; }
    // The run the line speaks of; nullptr when none is left.
    const InterruptedRun* current() const { return m_runs.empty() ? nullptr : &m_runs.front(); }
    QString text() const;
    QPushButton* continueButton() const { return m_continue; }
    QPushButton* dismissButton() const { return m_dismiss; }
    // Shown exactly when there is a run to speak of (after a restored layout too).
    void sync();
    // "Training of copy-tiny stopped unexpectedly at step 640"
    static QString describe(const InterruptedRun& r);

signals:
    void continueRequested(const QString& runDir);
    void dismissRequested(const QString& runDir);

private:
    void next();  // the current run is dealt with
    std::vector<InterruptedRun> m_runs;
    QLabel* m_icon;
    QLabel* m_text;
    QPushButton* m_continue;
    QPushButton* m_dismiss;
};

}  // namespace parrot
