// The Experiments tab: pick a bundled sweep preset (or a sweep file), read what it reproduces,
// press Run; its runs train as child processes (N at a time, cancellable, resumable), and the
// comparison figure (seed bands) and the results table (✓ / ▲ / ✗) fill in as runs finish.
// Steps: the full sweep, a quick look (every run's train.steps divided by 4 or 10, in its own
// folder), or the overrides a folder was made with (index.json's "set"), so a sweep shrunk on the
// command line resumes here with its own settings.
#pragma once

#include "base/experiments/sweep.h"
#include "base/io/runfolder.h"
#include "ui/jobs/backgroundjob.h"

#include <QWidget>

#include <memory>

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QFormLayout;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTabWidget;
class QTimer;

namespace parrot {

class SweepRunner;
struct SweepRunState;

class ExperimentsPanel : public QWidget {
    Q_OBJECT
public:
    explicit ExperimentsPanel(QWidget* parent = nullptr);
    ~ExperimentsPanel() override;

    // Sweeps go to <runs folder>/sweeps/<name> unless the user picks another folder.
    void setRunsFolder(const QString& dir);
    // The parrotscope binary the runs are started with (default: this program).
    void setExecutable(const QString& exe) { m_exe = exe; }
    // Overrides on every run (a shrunken preset; tests): the Steps box's custom entry, chosen.
    void setExtraOverrides(const QStringList& sets);
    // The Steps box: 1 (the full sweep), 4 or 10 (a quick look), 0 (its custom entry).
    void setStepsDivisor(int divisor);
    // What Run adds to every run of the sweep file (the Steps box's choice).
    QStringList overrides() const;

    // The sweep's folder: shows its finished runs, and takes the overrides its index.json records.
    void setOutDir(const QString& dir);
    void showResultsTable(bool table);       // the Results table tab, or the Figure tab
    bool selectPreset(const QString& name);  // a bundled sweep; false (and a message) if unknown
    bool openSweepFile(const QString& file);
    // A sweep folder (its index.json): its runs' figure and table, and Run resumes it when its
    // sweep file is still there. False (and a message) for a folder without an index.
    bool openSweepFolder(const QString& dir);
    bool run();                               // false (and a message) when the sweep cannot start
    void cancel();
    bool isRunning() const;

    // Run on: this machine, or a cluster profile (base/experiments/slurm.h): Run then submits the
    // unfinished runs that are not queued or running as one Slurm job array, off the GUI thread,
    // and the folder is polled every few seconds while the tab is visible: the Runs tab shows
    // each run's state, the figure and table fill in as runs finish, Stop cancels the jobs.
    QComboBox* runOnBox() const { return m_runOn; }
    void reloadClusterProfiles();
    bool busyWithCluster() const { return m_cluster.isRunning(); }
    // Asks the folder's Slurm jobs for their state now (off the GUI thread); clusterPolled follows.
    void pollCluster();
    bool polling() const;
    QString lastJob() const { return m_lastJob; }
    QTableWidget* runsTable() const { return m_runsTable; }
    // Reads the finished runs of the current sweep's folder and redraws the figure and table.
    void refreshResults();

    QString outDir() const;
    const SweepPlan& plan() const { return m_plan; }
    int resultRuns() const { return m_resultRuns; }
    QComboBox* presetBox() const { return m_preset; }
    QComboBox* figureBox() const { return m_figure; }
    QComboBox* stepsBox() const { return m_steps; }
    // Thorough: every model at each learning rate of the sweep's grid and 3 seeds, shown at its best
    // rate (a folder of its own, "-thorough").
    QCheckBox* thoroughBox() const { return m_thorough; }
    // The sweep file's scales: its own (laptop) and those it offers (paper: sized for one GPU).
    QComboBox* scaleBox() const { return m_scale; }
    QLabel* ratesLabel() const { return m_rates; }
    QSpinBox* precisionBox() const { return m_precision; }
    QPushButton* runButton() const { return m_run; }
    QPushButton* stopButton() const { return m_stop; }
    QProgressBar* progressBar() const { return m_progress; }
    QCustomPlot* figure() const { return m_plot; }
    QTableWidget* resultsTable() const { return m_table; }
    QLabel* descriptionLabel() const { return m_description; }

signals:
    void message(const QString& text);       // for the log
    void errorMessage(const QString& text);  // for the log and a message box
    void runsChanged();                       // a run folder was written
    void sweepFinished(int failed, bool cancelled);
    void clusterSubmitted(const QString& job);  // "" when it failed (errorMessage says why)
    void clusterPolled();                       // the Runs tab shows the states read just now

private:
    QFormLayout* buildSweepForm();
    QHBoxLayout* buildRunRow();
    QWidget* buildFigurePage();
    QWidget* buildTablePage();
    QWidget* buildRunsTable();
    void connectActions();
    void setPlan(SweepPlan plan, const QString& source);
    // The Experiment box's entry for a sweep file or folder of the user's, chosen (no reload);
    // chosen again, it opens that file, or that folder.
    void showOtherSource(const QString& label, const QString& source, const QString& folder = {});
    // The folder for the Steps box's choice, unless the user picked one.
    QString defaultOutDir() const;
    // A folder whose index.json records other overrides than the Steps box gives: take those, so
    // Run resumes it as it was made.
    void adoptFolderOverrides();
    void setCustomOverrides(const QStringList& sets);
    void updateDescription();
    void showEmptyFigure(const QString& text);
    void updateState();
    void exportFigure();
    void submitToCluster(const QString& profile);
    void showRunStates(const std::vector<SweepRunState>& states);
    void startPolling();
    // The plan's runs that finished in the sweep folder, loaded (unreadable ones left out);
    // `finished` counts the finished folders.
    std::vector<RunRecord> finishedRuns(int* finished = nullptr) const;
    // The sweep file `source` as the Thorough box asks, its runs in `outDir`.
    SweepPlan loadPlan(const QString& source, const QString& outDir) const;
    void setThorough(bool thorough);
    void reloadPlan();           // the same sweep file again, with the Thorough and Scale choices
    void fillScales();           // the Scale box for m_plan's sweep file

    QString m_exe, m_runsFolder, m_source, m_customOut;
    QString m_figureCsv;  // the figure's own table, as drawn last
    SweepPlan m_plan;
    std::unique_ptr<SweepRunner> m_runner;
    int m_resultRuns = 0;

    QComboBox *m_preset, *m_figure, *m_point, *m_steps;
    QLabel *m_description, *m_summary, *m_progressText, *m_figureNote, *m_rates;
    QCheckBox* m_thorough;
    QComboBox* m_scale;
    QLabel* m_scaleLabel;
    QLineEdit* m_out;
    QSpinBox* m_jobs;
    QPushButton *m_run, *m_stop, *m_export;
    QProgressBar* m_progress;
    QCustomPlot* m_plot;
    QTableWidget* m_table;
    QTabWidget* m_tabs;
    QCheckBox *m_logX, *m_logY;
    QSpinBox* m_precision;
    QComboBox* m_runOn;
    QTableWidget* m_runsTable;
    BackgroundJob m_cluster;  // a submission, a status poll or a cancel
    QTimer* m_poll;
    QString m_lastJob;
    int m_clusterFinished = -1;  // finished runs at the last poll: the figure is redrawn when it changes
    bool m_clusterActive = false;  // the last poll saw runs queued or running
};

}  // namespace parrot
