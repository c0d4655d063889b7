// The experiment form: preset, task, model and training settings. Holds a whole
// ExperimentConfig; fields without a widget keep the values of the preset or checkpoint.
// The form is built from three tables of rows (taskRows, modelRows, trainingRows in
// settingspanel.cpp): each names a setting, and the widget, its label, range and tooltip, how it
// is filled from and read into the config, and when it is enabled follow from that one entry.
#pragma once

#include "base/config.h"
#include "ui/jobs/backgroundjob.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QLabel;
class QPushButton;
class QSpinBox;
class QTimer;
class QToolButton;

namespace parrot {

struct ModelFamily;
struct TaskInfo;

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
    struct Row;     // one row of the form: a setting, its widget and when the task or family uses it
    struct Choice;  // an entry of a row's combo box
    struct Field {
        const Row* row;
        QWidget* widget;
    };
    static const std::vector<Row>& taskRows();
    static const std::vector<Row>& modelRows();
    static const std::vector<Row>& trainingRows();

    QWidget* buildExperimentBox();
    QWidget* buildTaskBox();
    QWidget* buildSection(const QString& title, const std::vector<Row>& rows);
    void addRows(QFormLayout* form, const std::vector<Row>& rows);
    QWidget* makeField(const Row& row);
    QSpinBox* spin(const Row& row);
    QDoubleSpinBox* realSpin(const Row& row);
    QComboBox* comboBox(const Row& row);
    QToolButton* makeMatchButton();
    QLabel* makeSizeLabel();
    static QString rowLabel(const Row& row);
    template <class W> W* field(const char* key) const;  // the widget of a setting's row
    void edited(const Row& row);
    void showValue(const Field& f, ExperimentConfig& c);
    void readValue(const Field& f, ExperimentConfig& c) const;
    bool uses(const Row& row, const TaskInfo* task, const ModelFamily* family) const;
    void updateRows();

    void showProblems();
    void fillForm(const ExperimentConfig& c);
    // The Experiment box's last entry, for a checkpoint's or a custom config.
    void setOther(const QString& label, const ExperimentConfig& c, const QString& text);
    void setOrigin(int index, const ExperimentConfig& c, const QString& text);
    void updateDescription();
    void setTaskFields(const TaskConfig& t);
    void showSample();
    void showVectorSample(const TaskConfig& t);
    void updateSize();

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
    std::vector<Field> m_fields;  // every setting's row, in the form's order
    QComboBox* m_task = nullptr;       // task.kind: choosing one loads the task's settings
    QComboBox* m_kind = nullptr;       // model.kind and model.positions: which model rows apply
    QComboBox* m_positions = nullptr;
    QLabel* m_sample = nullptr;  // one generated example, coloured by role
    QPushButton* m_newSample;
    int m_sampleSeed = 1;
    QLabel* m_problems = nullptr;
    QLabel* m_size = nullptr;     // parameters and state, updated as the options change
    QTimer* m_sizeTimer = nullptr;
    QToolButton* m_match = nullptr;  // "Match size of" a family
    BackgroundJob m_matchJob;
};

}  // namespace parrot
