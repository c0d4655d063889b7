// The run browser: every run folder under the runs folder, as a sortable, filterable table
// (task, model, seed, steps, status, final result); selected runs can be overlaid on the plots.
#pragma once

#include "ui/jobs/backgroundjob.h"

#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace parrot {

struct RunRecord;

// A run's name in a legend: its folder's name, with the model in words when the name does not
// already say which model it is.
QString runLegend(const RunRecord& r);

class RunBrowser : public QWidget {
    Q_OBJECT
public:
    explicit RunBrowser(QWidget* parent = nullptr);

    // Reads every run under `dir` (a few files each; malformed folders are skipped and counted)
    // off the GUI thread; the table shows them when they are read (loaded()), and keeps the
    // previous listing until then.
    void setFolder(const QString& dir);
    QString folder() const { return m_folder; }
    void refresh() { setFolder(m_folder); }
    bool isLoading() const { return m_load.isRunning(); }
    int runCount() const;
    int visibleRunCount() const;
    QTableWidget* table() const { return m_table; }
    QLineEdit* filterBox() const { return m_filter; }
    QString status() const;       // the count (and any filter error) under the table
    // The panel's height with room for `rows` rows of the table.
    int heightForRows(int rows) const;
    QString filterError() const { return m_filterError; }  // terms of the filter that cannot be read, and why

signals:
    void overlayRequested(const QStringList& runDirs);
    // "Continue training" on the one selected run: resume it where its last autosave left it.
    void continueRequested(const QString& runDir);
    // "Look inside" on the one selected run: its checkpoints (snapshots and the last) in the Explore tab.
    void exploreRequested(const QString& runDir);
    void loaded();  // the table shows the folder's runs as read by the latest setFolder()

private:
    // `note`: what the status line adds after the count (folders skipped, a folder that cannot be read)
    void showRuns(const QString& dir, const std::vector<RunRecord>& runs, const QString& note);
    void applyFilter();
    QString selectedRun() const;  // the folder of the one selected run, "" unless exactly one is selected
    QString m_folder;
    QString m_folderNote;   // folders skipped while reading
    QString m_filterError;
    QLineEdit* m_filter;
    QTableWidget* m_table;
    QLabel* m_status;
    QPushButton* m_overlay;
    QPushButton* m_continue;
    QPushButton* m_explore;
    // Reading the runs folder grows with the runs in it; it runs here, off the GUI thread, at the
    // end of every training run and sweep run.
    BackgroundJob m_load;
};

}  // namespace parrot
