// The experiment form: preset, task, model and training settings. Holds a whole
// ExperimentConfig; fields without a widget keep the values of the preset or checkpoint.
#pragma once

#include "ui/jobs/backgroundjob.h"
#include "base/config.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QPushButton;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTimer;
class QToolButton;

namespace parrot {

class SettingsPanel : public QWidget {
    Q_OBJECT
public:
    explicit SettingsPanel(QWidget* parent = nullptr);

    // The form filled with `c`; the Experiment box names its preset (and what differs from it),
    // or, for a config of no preset, the config's own name and description.
    void setConfig(const ExperimentConfig& c);
    // The form filled from a checkpoint: the Experiment box names the file and its step, never the
    // preset that was chosen before; choosing that entry again restores the checkpoint's settings.
    void setCheckpointConfig(const ExperimentConfig& c, const QString& path, long long step);
    // A checkpoint as the window names it: its file name, with its run folder for a run's autosave.
    static QString checkpointName(const QString& path);
    ExperimentConfig config() const;    // the form's values over the base config
    QStringList problems() const;       // validation messages; empty when trainable
    QString presetName() const;  // "" when the form holds a checkpoint's or a custom config
    bool selectPreset(const QString& name);  // loads it into the form
    // Sets d_model so the chosen family has as many parameters as `kind` would with the same
    // settings; counted off the GUI thread, then `matched` (or errorMessage).
    void matchSizeOf(const QString& kind);

signals:
    void changed();
    void presetLoaded(const QString& name);
    void errorMessage(const QString& text);
    void matched(int dModel);

protected:
    void changeEvent(QEvent* e) override;

private:
    void showProblems();
    void fillForm(const ExperimentConfig& c);
    // The Experiment box's last entry, for a checkpoint's or a custom config.
    void setOther(const QString& label, const ExperimentConfig& c, const QString& text);
    void setOrigin(int index, const ExperimentConfig& c, const QString& text);
    void updateDescription();
    void updateModelFields();
    void updateTaskFields();
    void setTaskFields(const TaskConfig& t);
    void showSample();
    void showVectorSample(const TaskConfig& t);
    void updateSize();
    QSpinBox* spin(int lo, int hi, const QString& objectName, const QString& tip);
    QSpinBox* spin(const char* key);  // a setting of base/configfields.h: its range, name and tooltip
    QDoubleSpinBox* realSpin(const char* key);  // the same for a real-valued one
    static QString label(const char* key);       // the setting's label from the same tables

    ExperimentConfig m_base;
    // What the Experiment box describes (a preset, a checkpoint's settings), and in what words;
    // the description adds what the form has changed of it.
    ExperimentConfig m_origin;
    QString m_originText;
    ExperimentConfig m_other;  // the config behind the box's last entry
    QString m_otherText;
    bool m_filling = false;
    QComboBox* m_preset;
    QLabel* m_description;
    QComboBox* m_task;
    QSpinBox *m_vocab, *m_minLen, *m_maxLen, *m_context, *m_ngram, *m_answerLen, *m_dims, *m_sparsity;
    QDoubleSpinBox* m_outlier;
    QDoubleSpinBox* m_noise;
    QSpinBox *m_noiseVocab, *m_motif, *m_copyTokens, *m_trainExamples;
    QCheckBox* m_shuffle;
    QLabel* m_sample = nullptr;  // one generated example, coloured by role
    QPushButton* m_newSample;
    int m_sampleSeed = 1;
    QLineEdit* m_evalLengths;
    QComboBox* m_kind;
    QComboBox* m_positions;
    QSpinBox *m_dState, *m_expand, *m_shortConv, *m_headDim, *m_groups, *m_chunk;
    QCheckBox* m_forgetGate;
    QComboBox* m_init;  // model.init, for Mamba's selective mixers
    QSpinBox *m_curriculumDims, *m_curriculumSteps;  // in-context tasks
    QSpinBox *m_layers, *m_dModel, *m_heads, *m_masked;
    QSpinBox *m_steps, *m_batch, *m_warmup, *m_evalEvery, *m_checkpointEvery, *m_mechanismEvery, *m_seed;
    QDoubleSpinBox *m_lr, *m_weightDecay, *m_gradClip;
    QComboBox* m_schedule;
    QComboBox* m_precision;  // train.precision
    QLabel* m_problems;
    QLabel* m_size;     // parameters and state, updated as the options change
    QTimer* m_sizeTimer = nullptr;
    QToolButton* m_match;  // "Match size of" a family
    BackgroundJob m_matchJob;
};

}  // namespace parrot
