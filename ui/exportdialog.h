// File → Export (Ctrl+E) and a plot's right-click menu: one plot or a whole tab's plots as one
// figure, to PNG / PDF / SVG / CSV with size, DPI, font size, line width (all in points, 1/72
// inch) and a white background; or to the clipboard. The choices are remembered (QSettings
// "export/…").
#pragma once

#include "export.h"

#include <QDialog>
#include <QPointer>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
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
    ExportOptions options() const;
    void setOptions(const ExportOptions& o);
    // Writes the file (a panel with a progress dialog that can cancel). Returns false with
    // `error` set when it could not; the message is also shown in the dialog.
    bool exportNow(QString* error = nullptr);
    bool copyToClipboard();

signals:
    void exported(const QString& path);
    void failed(const QString& message);

private:
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
};

// The export choices last remembered (QSettings "export/…"), or the defaults.
ExportOptions savedExportOptions();

// A table's cells as CSV: the header row, then every row (text as shown).
QString tableCsv(const QTableWidget& table);

}  // namespace parrot
