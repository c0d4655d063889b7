// Runs parrot::train on its own QThread and reports by queued signals carrying value
// snapshots (docs/ARCHITECTURE.md). The owner creates it, moves it to a thread, and calls the
// thread-safe pause/resume/cancel from the GUI thread.
#pragma once

#include "base/types.h"
#include "core/model.h"
#include "core/train/trainer.h"

#include <QObject>

#include <optional>

namespace parrot {

class TrainWorker : public QObject {
    Q_OBJECT
public:
    // `continuesFrom`: the checkpoint the model was opened from, when it trains further (train()).
    TrainWorker(Model model, QString runDir, QString continuesFrom = {}, QObject* parent = nullptr);
    // Resumes a run folder (planResume, resumeTraining).
    explicit TrainWorker(ResumePlan plan, QObject* parent = nullptr);

    void pause() { m_control.pause = true; }
    void resume() { m_control.pause = false; }
    void cancel() { m_control.cancel = true; }
    bool isPaused() const { return m_control.pause.load(); }

public slots:
    void run();

signals:
    void progress(const parrot::TrainProgress& p);
    void evaluated(const parrot::LengthCurve& c);
    void mechanisms(const parrot::MechanismScores& scores);
    void logMessage(const QString& text);
    void finished(const parrot::TrainOutcome& outcome);

private:
    Model m_model;
    QString m_runDir;
    QString m_continuesFrom;
    TrainControl m_control;
    std::optional<ResumePlan> m_resume;
};

void registerMetaTypes();

}  // namespace parrot
