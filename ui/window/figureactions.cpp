#include "ui/window/figureactions.h"

#include "base/error.h"
#include "base/io/textfile.h"
#include "figures/export.h"
#include "ui/common/exportdialog.h"
#include "ui/window/docklayout.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QCursor>
#include <QDockWidget>
#include <QFileDialog>
#include <QMainWindow>
#include <QMenu>
#include <QTableWidget>

#include <qcustomplot.h>

namespace parrot {

FigureActions::FigureActions(QMainWindow* window, const DockLayout* docks) : QObject(window), m_window(window), m_docks(docks)
{
    qApp->installEventFilter(this);  // right-click on any plot or table: export, copy
}

ExportDialog* FigureActions::exportFigure(QCustomPlot* plot, bool wholePanel)
{
    const auto [panel, name] = m_docks->panelHolding(plot);
    if (!plot && panelPlots(panel, 100, 100).empty()) {
        emit errorMessage(tr("The %1 tab shows no plot to export.").arg(name));
        return nullptr;
    }
    if (m_exportDialog) m_exportDialog->close();
    m_exportDialog = new ExportDialog(panel, name, plot, wholePanel, m_window);
    m_exportDialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(m_exportDialog, &ExportDialog::exported, this, [this](const QString& path) { emit logMessage(tr("Figure saved to %1").arg(path)); });
    connect(m_exportDialog, &ExportDialog::failed, this, [this](const QString& message) { emit logMessage(tr("Export failed: %1").arg(message)); });
    m_exportDialog->open();  // window-modal, never blocking the event loop
    return m_exportDialog;
}

bool FigureActions::copyFigure(QCustomPlot* plot)
{
    if (!plot) {
        const std::vector<PlacedPlot> plots = panelPlots(m_docks->currentPanel(), 100, 100);
        if (plots.empty()) {
            emit errorMessage(tr("The %1 tab shows no plot to copy.").arg(m_docks->currentPanelName()));
            return false;
        }
        plot = plots.front().plot;
        for (const PlacedPlot& p : plots)  // the plot under the mouse, when there is one
            if (p.plot->rect().contains(p.plot->mapFromGlobal(QCursor::pos()))) plot = p.plot;
    }
    const QImage image = plotImage(*plot, savedExportOptions());
    QGuiApplication::clipboard()->setImage(image);
    emit statusMessage(tr("Copied %1 to the clipboard (%2 × %3)").arg(plotName(*plot)).arg(image.width()).arg(image.height()), 5000);
    return !image.isNull();
}

bool FigureActions::ours(const QWidget* widget) const
{
    const QWidget* window = widget ? widget->window() : nullptr;
    return window == m_window || (qobject_cast<const QDockWidget*>(window) && window->parentWidget() == m_window);
}

bool FigureActions::eventFilter(QObject* watched, QEvent* event)
{
    if (event->type() != QEvent::ContextMenu) return false;
    auto* widget = qobject_cast<QWidget*>(watched);
    if (!ours(widget)) return false;
    const QPoint at = static_cast<QContextMenuEvent*>(event)->globalPos();
    if (auto* plot = qobject_cast<QCustomPlot*>(widget)) {
        plotMenu(plot, at);
        return true;
    }
    QTableWidget* table = qobject_cast<QTableWidget*>(widget);
    if (!table && widget->parentWidget()) table = qobject_cast<QTableWidget*>(widget->parentWidget());  // its viewport
    if (table && table->rowCount() > 0) {
        tableMenu(table, at);
        return true;
    }
    return false;
}

void FigureActions::plotMenu(QCustomPlot* plot, const QPoint& at)
{
    QMenu menu(m_window);
    menu.addAction(tr("Export figure..."), this, [this, plot] { exportFigure(plot, false); });
    menu.addAction(tr("Copy figure to clipboard"), this, [this, plot] { copyFigure(plot); });
    menu.addAction(tr("Export the whole tab as one figure..."), this, [this, plot] { exportFigure(plot, true); });
    menu.exec(at);
}

void FigureActions::tableMenu(QTableWidget* table, const QPoint& at)
{
    QMenu menu(m_window);
    menu.addAction(tr("Export table as CSV..."), this, [this, table] {
        const QString path = QFileDialog::getSaveFileName(m_window, tr("Export table"), exportFolder(), tr("CSV (*.csv)"));
        if (path.isEmpty()) return;
        try {
            writeTextFile(path, tableCsv(*table), "the table");
            emit logMessage(tr("Table saved to %1").arg(path));
        } catch (const Error& e) {
            emit errorMessage(e.message());
        }
    });
    menu.addAction(tr("Copy table"), this, [table] { QGuiApplication::clipboard()->setText(tableCsv(*table)); });
    menu.exec(at);
}

}  // namespace parrot
