#include "ui/panels/trainpanel.h"

#include "base/config.h"
#include "base/error.h"
#include "base/tasks/taskcatalog.h"
#include "figures/mechanismplot.h"
#include "figures/plots.h"

#include <QEvent>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

namespace parrot {

namespace {

QString duration(double s)
{
    if (s >= 3600) return QObject::tr("%1 h %2 min").arg(int(s / 3600)).arg(int(s / 60) % 60);
    if (s >= 60) return QObject::tr("%1 min %2 s").arg(int(s / 60)).arg(int(s) % 60);
    return QObject::tr("%1 s").arg(int(s + 0.5));
}

QString rates(const TrainProgress& p)
{
    return QObject::tr("loss %1 · lr %2 · %3 tok/s · elapsed %4")
        .arg(p.loss, 0, 'f', 4).arg(p.lr, 0, 'e', 1).arg(p.tokensPerSecond, 0, 'f', 0).arg(duration(p.elapsedSeconds));
}

}  // namespace

TrainPanel::TrainPanel(QWidget* parent) : QWidget(parent)
{
    setObjectName("trainPanel");
    auto* v = new QVBoxLayout(this);
    auto* controls = new QHBoxLayout;
    m_train = new QPushButton(tr("Train"), this);
    m_train->setObjectName("train");
    m_train->setToolTip(tr("Train a new model with these settings (F5); with a checkpoint open, continue it or start fresh"));
    m_pause = new QPushButton(tr("Pause"), this);
    m_pause->setObjectName("pause");
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName("stop");
    m_stop->setToolTip(tr("Stop after the current step and save a checkpoint (Esc)"));
    m_continue = new QPushButton(tr("Continue"), this);
    m_continue->setObjectName("continue");
    m_continue->setToolTip(tr("Resume the stopped run where it stopped: the same optimiser state, schedule and data"));
    m_continue->setVisible(false);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setTextVisible(true);
    m_progress->setFormat(tr("idle"));
    m_progress->setObjectName("progress");
    // The loss, speed and times under the bar, where their changing length moves nothing else
    // and never widens the window.
    m_progressText = new QLabel(this);
    m_progressText->setObjectName("progressText");
    m_progressText->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    controls->addWidget(m_train);
    controls->addWidget(m_pause);
    controls->addWidget(m_stop);
    controls->addWidget(m_continue);
    controls->addWidget(m_progress, 1);
    v->addLayout(controls);
    v->addWidget(m_progressText);
    m_modelLabel = new QLabel(this);
    m_modelLabel->setObjectName("modelLabel");
    m_modelLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modelLabel->setWordWrap(true);
    v->addWidget(m_modelLabel);

    // the loss above the mechanism timeline, one step axis; the accuracy beside them
    auto* plots = new QSplitter(Qt::Horizontal, this);
    m_steps = new QSplitter(Qt::Vertical, plots);
    m_steps->setObjectName("stepPlots");
    m_steps->setChildrenCollapsible(false);
    m_loss = new LossPlot(m_steps);
    m_mechanisms = new MechanismPlot(m_steps);
    m_mechanisms->followSteps(m_loss->plot());
    m_steps->addWidget(m_loss);
    m_steps->addWidget(m_mechanisms);
    m_accuracy = new AccuracyPlot(this);
    plots->addWidget(m_steps);
    plots->addWidget(m_accuracy);
    plots->installEventFilter(this);  // its height decides whether the loss and timeline are stacked
    v->addWidget(plots, 1);

    auto* evalBox = new QGroupBox(tr("Evaluate the current model"), this);
    auto* eh = new QHBoxLayout(evalBox);
    m_evalLengths = new QLineEdit("10, 20, 30, 40, 60, 80", this);
    m_evalLengths->setObjectName("evalLengths");
    m_evalLengths->setToolTip(tr("Lengths to test (string length, entries or pairs, by task), e.g. up to 4x the training range; "
                                 "set to the task's evaluation lengths when the task changes"));
    m_evalSamples = new QSpinBox(this);
    m_evalSamples->setRange(1, 100000);
    m_evalSamples->setValue(128);
    m_evalSamples->setObjectName("evalSamples");
    m_evaluate = new QPushButton(tr("Evaluate"), this);
    m_evaluate->setObjectName("evaluate");
    m_evalCancel = new QPushButton(tr("Cancel"), this);
    eh->addWidget(new QLabel(tr("Lengths"), this));
    eh->addWidget(m_evalLengths, 1);
    eh->addWidget(new QLabel(tr("Examples per length"), this));
    eh->addWidget(m_evalSamples);
    eh->addWidget(m_evaluate);
    eh->addWidget(m_evalCancel);
    v->addWidget(evalBox);
}

bool TrainPanel::eventFilter(QObject* watched, QEvent* event)
{
    // Stacked, the timeline lines up under the loss; on a short screen (a laptop's, the log below)
    // two stacked plots would each be too short to read, so they go side by side, the step range
    // still shared. Which one depends on the height the tab gives the plots, not on the choice.
    if (event->type() == QEvent::Resize && watched == m_steps->parentWidget()) {
        const Qt::Orientation wanted = static_cast<QWidget*>(watched)->height() >= kStackedHeight ? Qt::Vertical : Qt::Horizontal;
        if (m_steps->orientation() != wanted) m_steps->setOrientation(wanted);
    }
    return QWidget::eventFilter(watched, event);
}

void TrainPanel::showModel(const Model& m)
{
    m_modelLabel->setText(m.isNull() ? tr("No model yet: press Train, or open a checkpoint (Ctrl+O).")
                                     : tr("Model: %1").arg(m.summary()));
}

void TrainPanel::startFresh(const TaskConfig& t, const QString& status)
{
    m_loss->clear();
    m_mechanisms->clear();
    m_accuracy->clearCurves();
    m_last = TrainProgress();
    m_progressText->clear();
    setTask(t, true);
    setStatus(status, 0);
}

void TrainPanel::setTask(const TaskConfig& t, bool resetLengths)
{
    const TaskInfo* info = findTask(t.kind);
    const bool errorCurves = info && info->metric == "error";
    m_accuracy->setTask(info ? info->difficulty : tr("length"), t.minLen, t.maxLen, errorCurves);
    m_loss->setLossKind(info && info->vectors ? LossPlot::LossKind::SquaredError : LossPlot::LossKind::AnswerTokens);
    if (resetLengths || parrot::evaluationLengths(t) != m_taskLengths) {
        m_taskLengths = parrot::evaluationLengths(t);
        QStringList lengths;
        for (int l : parrot::evaluationLengths(t)) lengths << QString::number(l);
        m_evalLengths->setText(lengths.join(", "));
    }
}

void TrainPanel::showProgress(const TrainProgress& p, const Model& m)
{
    m_modelLabel->setText(tr("Model: %1, training: step %2").arg(m.summary().section(", step", 0, 0)).arg(p.step));
    if (!p.stepLosses.empty()) m_loss->addPoints(p.step - (long long)p.stepLosses.size() + 1, p.stepLosses);
    m_progress->setValue(p.totalSteps > 0 ? int(1000 * p.step / p.totalSteps) : 0);
    m_progress->setFormat(p.paused ? tr("paused at step %1 / %2").arg(p.step).arg(p.totalSteps)
                                   : tr("step %1 / %2").arg(p.step).arg(p.totalSteps));
    m_last = p;
    m_progressText->setText(rates(p) + tr(" · ETA %1").arg(duration(p.etaSeconds)));
}

void TrainPanel::showEnded()
{
    m_progressText->setText(m_last.step > 0 ? rates(m_last) : QString());
}

void TrainPanel::showCurve(const LengthCurve& c) { m_accuracy->setLiveCurve(c); }

Qt::Orientation TrainPanel::stepPlotsOrientation() const { return m_steps->orientation(); }

void TrainPanel::showMechanisms(const MechanismScores& s) { m_mechanisms->addScores(s); }

void TrainPanel::setMechanismsShown(bool shown) { m_mechanisms->setVisible(shown); }

void TrainPanel::addEvaluation(const LengthCurve& c)
{
    if (c.isError()) m_accuracy->setLiveCurve(c);  // with its baselines
    else m_accuracy->addCurve(tr("evaluation, step %1").arg(c.step), c);
}

void TrainPanel::setStatus(const QString& text, int permille)
{
    if (permille >= 0) m_progress->setValue(permille);
    m_progress->setFormat(text);
}

void TrainPanel::setBusy(bool busy)
{
    m_progress->setRange(0, busy ? 0 : 1000);
    if (!busy) m_progress->setValue(0);
}

void TrainPanel::setCanContinue(bool can)
{
    m_continue->setVisible(can);
    m_continue->setEnabled(can);
}

void TrainPanel::setPaused(bool paused) { m_pause->setText(paused ? tr("Resume") : tr("Pause")); }

void TrainPanel::setAvailable(bool canTrain, bool training, bool canStop, bool canEvaluate, bool evaluating)
{
    m_train->setEnabled(canTrain);
    m_pause->setEnabled(training);
    m_stop->setEnabled(canStop);
    m_evaluate->setEnabled(canEvaluate);
    m_evalCancel->setEnabled(evaluating);
}

std::vector<int> TrainPanel::evaluationLengths() const
{
    return parseLengthList(m_evalLengths->text(), tr("Evaluation lengths"));
}

int TrainPanel::evaluationSamples() const { return m_evalSamples->value(); }

}  // namespace parrot
