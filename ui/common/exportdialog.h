// File → Export (Ctrl+E), a plot's right-click menu and the Experiments tab's Export: one plot or
// a whole tab's plots as one figure, to PNG / PDF / SVG / CSV with size, DPI, font size, line
// width (all in points, 1/72 inch) and a white background; or to the clipboard. The choices and
// the folder are remembered (AppSettings).
#pragma once

#include "figures/export.h"
#include "ui/jobs/backgroundjob.h"

#include <QDialog>
#include <QPointer>

#include <functional>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace parrot {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    // `panel`: the tab whose plots are offered; `preselect`: the plot chosen first (nullptr: the
    // first plot, or the whole tab when `wholePanel`).
    ExportDialog(QWidget* panel, const QString& panelName, QCustomPlot* preselect, bool wholePanel, QWidget* parent = nullptr);

    int targetCount() const;               // the plots offered, plus "the whole tab" when it has several
    void setTarget(int index);
    QString targetName() const;
    void setPath(const QString& path);
    QString path() const;
    // The file's name without its extension (the folder and the format stay).
    void setFileStem(const QString& stem);
    // The CSV written when `plot` is exported alone as .csv: a figure's own table (with its
    // standard deviations) instead of the plotted points.
    void setCsvSource(QCustomPlot* plot, std::function<QString()> csv);
    ExportOptions options() const;
    void setOptions(const ExportOptions& o);
    // Draws the figure on the GUI thread (a whole tab with a progress dialog that can cancel),
    // then writes the file off it: exported() or failed() follows, and isWriting() is true until
    // then. Returns false, with `error` set and shown in the dialog, when it could not start (no
    // file, a bad size, a plot that is gone), and false when the drawing was cancelled.
    bool exportNow(QString* error = nullptr);
    bool isWriting() const { return m_write.isRunning(); }
    bool copyToClipboard();

signals:
    void exported(const QString& path);
    void failed(const QString& message);

private:
    void addTargetRows(QFormLayout* form, QCustomPlot* preselect);  // the figure and the file
    void addSizeRows(QFormLayout* form);
    void addStyleRows(QFormLayout* form);  // font, line width, background
    void addButtons(QFormLayout* form);
    void browse();
    void remember() const;
    void showPixels();
    std::vector<PlacedPlot> selection() const;
    QPointer<QWidget> m_panel;
    QString m_panelName;
    std::vector<QPointer<QCustomPlot>> m_plots;
    QComboBox* m_target;
    QLineEdit* m_path;
    QSpinBox *m_width, *m_height, *m_dpi;
    QDoubleSpinBox *m_font, *m_line;
    QCheckBox* m_white;
    QLabel* m_pixels;  // what the size and DPI make a PNG
    QLabel* m_status;
    QPointer<QCustomPlot> m_csvPlot;
    std::function<QString()> m_csv;
    BackgroundJob m_write;
    bool m_closeWhenWritten = false;
    QPushButton* m_saveButton = nullptr;
    QPushButton* m_copyButton = nullptr;  // the Export button: the dialog closes once the file is there
};

// The export choices last remembered (AppSettings), or the defaults.
ExportOptions savedExportOptions();
// The folder an export starts in: the last one exported to while it exists, else the Documents
// folder where there is one, else the home folder (a fresh account may have no Documents).
QString exportFolder();

// A table's cells as CSV: the header row, then every row (text as shown).
QString tableCsv(const QTableWidget& table);

}  // namespace parrot
