// The Inspect tab: any checkpoint file (File → Inspect checkpoint, drag and drop, recent files)
// as a tree of its tensors (name, shape, dtype, bytes, mean, std, min, max), what the app
// recognised it as, its configuration, a histogram of the selected tensor and a heatmap of a 2-D
// one; "Open in explorer" and "Open in Train tab" when the app can run it. Reading runs off the
// GUI thread; a file that cannot be read says why in the panel and changes nothing else.
#pragma once

#include "base/io/checkpointinfo.h"
#include "ui/jobs/backgroundjob.h"

#include <QWidget>

class QCustomPlot;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTreeWidget;
class QComboBox;

namespace parrot {

class HeatmapView;

class InspectorPanel : public QWidget {
    Q_OBJECT
public:
    explicit InspectorPanel(QWidget* parent = nullptr);
    void openFile(const QString& path);  // asynchronous: `loaded` when done
    const CheckpointInfo& info() const { return m_info; }
    bool busy() const { return m_read.isRunning(); }
    QTreeWidget* tree() const { return m_tree; }
    QString status() const;
    void selectTensor(const QString& name);
    QCustomPlot* histogram() const { return m_histogram; }
    HeatmapView* heatmap() const { return m_heatmap; }
    QStringList recentFiles() const;

signals:
    void loaded();                                // info() is the file's (or says why not)
    void openInExplorer(const QString& path);
    void openInTrainTab(const QString& path);

protected:
    void dragEnterEvent(QDragEnterEvent* e) override;
    void dropEvent(QDropEvent* e) override;

private:
    void show(const CheckpointInfo& info);
    void showTensor(const QString& name);
    void remember(const QString& path);

    CheckpointInfo m_info;
    BackgroundJob m_read;  // a newer file drops the read of an older one
    QComboBox* m_recent = nullptr;
    QLabel* m_summary = nullptr;
    QTreeWidget* m_tree = nullptr;
    QPlainTextEdit* m_config = nullptr;
    QCustomPlot* m_histogram = nullptr;
    HeatmapView* m_heatmap = nullptr;
    QPushButton* m_explore = nullptr;
    QPushButton* m_train = nullptr;
};

}  // namespace parrot
