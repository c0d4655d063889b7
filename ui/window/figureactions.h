// Figures out of the window: File → Export (one plot, or the whole tab as one figure), Edit →
// Copy figure, and the right-click menu on any plot (export, copy) or table (CSV, copy) in the
// window or its floating docks, through an app-wide event filter.
#pragma once

#include <QObject>
#include "ui/common/exportdialog.h"

#include <QPointer>

class QCustomPlot;
class QMainWindow;
class QTableWidget;

namespace parrot {

class DockLayout;

class FigureActions : public QObject {
    Q_OBJECT
public:
    FigureActions(QMainWindow* window, const DockLayout* docks);

    // The export dialog for `plot` (nullptr: the current tab's first plot, or its whole panel when
    // `wholePanel`); nullptr when the tab shows no plot (an error is reported).
    ExportDialog* exportFigure(QCustomPlot* plot, bool wholePanel);
    ExportDialog* exportDialog() const { return m_exportDialog.data(); }
    // The plot (nullptr: the one under the mouse, else the tab's first) to the clipboard as an image.
    bool copyFigure(QCustomPlot* plot);

signals:
    void logMessage(const QString& text);
    void errorMessage(const QString& text);
    void statusMessage(const QString& text, int timeoutMs);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    bool ours(const QWidget* widget) const;  // in the window or one of its floating docks
    void plotMenu(QCustomPlot* plot, const QPoint& at);
    void tableMenu(QTableWidget* table, const QPoint& at);

    QMainWindow* m_window;
    const DockLayout* m_docks;
    QPointer<ExportDialog> m_exportDialog;
};

}  // namespace parrot
