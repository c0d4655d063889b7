// The run browser: every run folder under the runs folder, as a sortable, filterable table
// (task, model, seed, steps, status, final result); selected runs can be overlaid on the plots.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace parrot {

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

signals:
    void overlayRequested(const QStringList& runDirs);

private:
    void applyFilter();
    QString m_folder;
    QLineEdit* m_filter;
    QTableWidget* m_table;
    QLabel* m_status;
    QPushButton* m_overlay;
};

}  // namespace parrot
