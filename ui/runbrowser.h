// The run browser: every run folder under the runs folder, as a sortable, filterable table
// (task, model, seed, steps, status, final result); selected runs can be overlaid on the plots.
#pragma once

#include <QWidget>

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

    // Reads every run under `dir` (a few files each; malformed folders are skipped and counted).
    void setFolder(const QString& dir);
    QString folder() const { return m_folder; }
    void refresh() { setFolder(m_folder); }
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

private:
    void applyFilter();
    QString m_folder;
    QString m_folderNote;   // folders skipped while reading
    QString m_filterError;
    QLineEdit* m_filter;
    QTableWidget* m_table;
    QLabel* m_status;
    QPushButton* m_overlay;
    QPushButton* m_continue;
};

}  // namespace parrot
