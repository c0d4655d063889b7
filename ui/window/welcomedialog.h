// The first-run welcome (also Help → Welcome): three one-click ways in, each one sentence, as
// buttons named welcomeTrain, welcomeExplore and welcomeFinding. Window-modal but not blocking;
// any of them closes it and emits its signal.
#pragma once

#include <QDialog>

namespace parrot {

class WelcomeDialog : public QDialog {
    Q_OBJECT
public:
    explicit WelcomeDialog(QWidget* parent);

signals:
    void trainRequested();    // train the default experiment and watch it
    void exploreRequested();  // the two bundled models side by side
    void findingRequested();  // run the length-generalisation finding

private:
    void addChoice(const char* name, const QString& title, const QString& sentence, void (WelcomeDialog::*then)());
};

}  // namespace parrot
