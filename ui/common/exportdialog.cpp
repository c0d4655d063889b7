#include "ui/common/exportdialog.h"

#include "base/error.h"
#include "base/io/textfile.h"
#include "ui/common/appsettings.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <qcustomplot.h>

namespace parrot {

namespace {

QString fileNameFor(const QString& name)
{
    QString s = name.toLower();
    s.replace(QRegularExpression("[^a-z0-9]+"), "-");
    s = s.mid(0, 60);
    while (s.endsWith('-')) s.chop(1);
    while (s.startsWith('-')) s.remove(0, 1);
    return s.isEmpty() ? QString("figure") : s;
}

}  // namespace

ExportDialog::ExportDialog(QWidget* panel, const QString& panelName, QCustomPlot* preselect, bool wholePanel, QWidget* parent)
    : QDialog(parent), m_panel(panel), m_panelName(panelName)
{
    setWindowTitle(tr("Export figure"));
    setObjectName("exportDialog");
    auto* form = new QFormLayout(this);
    addTargetRows(form, preselect);
    addSizeRows(form);
    addStyleRows(form);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    form->addRow(m_status);
    addButtons(form);

    setOptions(savedExportOptions());
    const auto it = std::find(m_plots.begin(), m_plots.end(), preselect);
    setTarget(wholePanel && m_plots.size() > 1 ? int(m_plots.size()) : it != m_plots.end() ? int(it - m_plots.begin()) : 0);
    setPath(QDir(exportFolder()).filePath(fileNameFor(targetName()) + "." + AppSettings::load().exportFormat));
    connect(m_target, &QComboBox::currentIndexChanged, this, [this] { setFileStem(fileNameFor(targetName())); });  // the file name follows the figure
    for (QSpinBox* b : {m_width, m_height, m_dpi}) connect(b, &QSpinBox::valueChanged, this, &ExportDialog::showPixels);
    showPixels();
}

void ExportDialog::addTargetRows(QFormLayout* form, QCustomPlot* preselect)
{
    m_target = new QComboBox(this);
    for (const PlacedPlot& p : panelPlots(m_panel, 1000, 1000)) {
        m_plots.push_back(p.plot);
        m_target->addItem(p.name);
    }
    if (preselect && std::find(m_plots.begin(), m_plots.end(), preselect) == m_plots.end()) {  // hidden or tiny: still offered
        m_plots.push_back(preselect);
        m_target->addItem(plotName(*preselect));
    }
    if (m_plots.size() > 1) m_target->addItem(tr("The whole %1 tab (%2 plots as one figure)").arg(m_panelName).arg(m_plots.size()));
    form->addRow(tr("Figure"), m_target);

    auto* pathRow = new QHBoxLayout;
    m_path = new QLineEdit(this);
    auto* browse = new QPushButton(tr("Browse…"), this);
    pathRow->addWidget(m_path, 1);
    pathRow->addWidget(browse);
    form->addRow(tr("File (.png .pdf .svg .csv)"), pathRow);
    connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
}

void ExportDialog::addSizeRows(QFormLayout* form)
{
    auto* sizeRow = new QHBoxLayout;
    m_width = new QSpinBox(this);
    m_height = new QSpinBox(this);
    for (QSpinBox* b : {m_width, m_height}) {
        b->setRange(100, 10000);
        b->setSuffix(" pt");
        b->setToolTip(tr("Points (1/72 inch) in every format: the PDF's page, the SVG's size, and a PNG of width × DPI / 72 pixels"));
        sizeRow->addWidget(b);
    }
    form->addRow(tr("Size (width × height)"), sizeRow);
    m_dpi = new QSpinBox(this);
    m_dpi->setRange(36, 1200);
    m_dpi->setSuffix(" dpi");
    m_dpi->setToolTip(tr("PNG only: PDF and SVG are vector graphics"));
    form->addRow(tr("PNG resolution"), m_dpi);
    m_pixels = new QLabel(this);
    m_pixels->setObjectName("pixelSize");
    m_pixels->setWordWrap(true);
    form->addRow(QString(), m_pixels);
}

void ExportDialog::addStyleRows(QFormLayout* form)
{
    m_font = new QDoubleSpinBox(this);
    m_font->setRange(0, 72);
    m_font->setDecimals(1);
    m_font->setSuffix(" pt");
    m_font->setSpecialValueText(tr("as shown"));
    form->addRow(tr("Font size"), m_font);
    m_line = new QDoubleSpinBox(this);
    m_line->setRange(0, 20);
    m_line->setDecimals(1);
    m_line->setSingleStep(0.5);
    m_line->setSuffix(" pt");
    m_line->setSpecialValueText(tr("as shown"));
    form->addRow(tr("Line width"), m_line);
    m_white = new QCheckBox(tr("White, printer-friendly background (also in dark mode)"), this);
    form->addRow(QString(), m_white);
}

void ExportDialog::addButtons(QFormLayout* form)
{
    auto* buttons = new QDialogButtonBox(this);
    m_saveButton = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
    m_copyButton = buttons->addButton(tr("Copy to clipboard"), QDialogButtonBox::ActionRole);
    buttons->addButton(QDialogButtonBox::Cancel);
    m_saveButton->setObjectName("exportButton");
    m_copyButton->setObjectName("copyButton");
    form->addRow(buttons);
    connect(m_saveButton, &QPushButton::clicked, this, [this] { m_closeWhenWritten = exportNow(); });
    connect(this, &ExportDialog::exported, this, [this] {
        if (std::exchange(m_closeWhenWritten, false)) accept();
    });
    connect(this, &ExportDialog::failed, this, [this] { m_closeWhenWritten = false; });
    // one file at a time
    connect(&m_write, &BackgroundJob::finished, this, [this] {
        m_saveButton->setEnabled(true);
        m_copyButton->setEnabled(true);
    });
    connect(m_copyButton, &QPushButton::clicked, this, &ExportDialog::copyToClipboard);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

int ExportDialog::targetCount() const { return m_target->count(); }
void ExportDialog::setTarget(int index) { m_target->setCurrentIndex(std::clamp(index, 0, m_target->count() - 1)); }
QString ExportDialog::targetName() const
{
    return m_target->currentIndex() >= int(m_plots.size()) ? m_panelName : m_target->currentText();
}
void ExportDialog::setPath(const QString& path) { m_path->setText(path); }
QString ExportDialog::path() const { return m_path->text().trimmed(); }

void ExportDialog::setFileStem(const QString& stem)
{
    const QFileInfo f(path());
    setPath(f.dir().filePath(stem + "." + (f.suffix().isEmpty() ? QString("pdf") : f.suffix())));
}

void ExportDialog::setCsvSource(QCustomPlot* plot, std::function<QString()> csv)
{
    m_csvPlot = plot;
    m_csv = std::move(csv);
}

void ExportDialog::showPixels()
{
    const QSize png = imageSize(options());
    m_pixels->setText(tr("Sizes, fonts and lines are in points (1/72 inch) in every format. As PNG: %1 × %2 pixels.")
                          .arg(png.width())
                          .arg(png.height()));
}

ExportOptions ExportDialog::options() const
{
    ExportOptions o;
    o.width = m_width->value();
    o.height = m_height->value();
    o.dpi = m_dpi->value();
    o.fontPt = m_font->value();
    o.lineWidth = m_line->value();
    o.white = m_white->isChecked();
    return o;
}

void ExportDialog::setOptions(const ExportOptions& o)
{
    m_width->setValue(o.width);
    m_height->setValue(o.height);
    m_dpi->setValue(o.dpi);
    m_font->setValue(o.fontPt);
    m_line->setValue(o.lineWidth);
    m_white->setChecked(o.white);
}

std::vector<PlacedPlot> ExportDialog::selection() const
{
    const ExportOptions o = options();
    const int i = m_target->currentIndex();
    if (i >= 0 && i < int(m_plots.size())) {
        if (!m_plots[size_t(i)]) return {};
        return {{m_plots[size_t(i)].data(), QRect(0, 0, o.width, o.height), m_target->itemText(i)}};
    }
    return panelPlots(m_panel, o.width, o.height);
}

bool ExportDialog::exportNow(QString* error)
{
    const QString file = path();
    const auto fail = [&](const QString& message) {
        m_status->setText(message);
        if (error) *error = message;
        emit failed(message);
        return false;
    };
    if (isWriting()) return fail(tr("The last figure is still being written."));
    DrawnFigure drawn;
    try {
        if (file.isEmpty()) throw Error(tr("no file chosen: type a path ending in .png, .pdf, .svg or .csv"));
        const std::vector<PlacedPlot> plots = selection();
        if (plots.empty()) throw Error(tr("the plot is gone (its view was closed or rebuilt): choose it again"));
        if (m_csv && plots.size() == 1 && plots.front().plot == m_csvPlot && QFileInfo(file).suffix().toLower() == "csv") {
            checkExport(file, options());
            drawn.kind = DrawnFigure::Kind::Csv;
            drawn.path = file;
            drawn.csv = m_csv();
        } else {
            std::unique_ptr<QProgressDialog> progress;
            if (plots.size() > 1) {
                progress = std::make_unique<QProgressDialog>(tr("Exporting %1 plots…").arg(plots.size()), tr("Cancel"), 0, int(plots.size()), this);
                progress->setWindowModality(Qt::WindowModal);
                progress->setMinimumDuration(300);
            }
            // A window-modal QProgressDialog lets events through as its value is set, so the
            // window repaints and Cancel can be pressed between plots.
            drawn = drawFigure(plots, file, options(), targetName(), [&](int done, int total) {
                if (!progress) return true;
                progress->setMaximum(total);
                progress->setValue(done);
                return !progress->wasCanceled();
            });
        }
    } catch (const Error& e) {
        return fail(e.message());
    }
    if (!drawn.complete) {
        m_status->setText(tr("Cancelled: nothing was written."));
        return false;
    }
    m_status->setText(tr("Writing %1…").arg(file));
    m_saveButton->setEnabled(false);
    m_copyButton->setEnabled(false);
    const ExportOptions chosen = options();
    m_write.start([drawn](JobContext&) { writeFigure(drawn); },
                  [this, file, chosen] {
                      AppSettings::rememberExport(chosen, file);
                      m_status->setText(tr("Saved %1").arg(file));
                      emit exported(file);
                  },
                  [this](const QString& message) {
                      m_status->setText(message);
                      emit failed(message);
                  });
    return true;
}

bool ExportDialog::copyToClipboard()
{
    const std::vector<PlacedPlot> plots = selection();
    if (plots.empty()) return false;
    ExportOptions o = options();
    try {
        checkExport("clipboard.png", o);  // the same limits as a PNG file
    } catch (const Error& e) {
        m_status->setText(e.message());
        return false;
    }
    const QImage image = renderImage(plots, o);
    if (image.isNull()) {
        m_status->setText(tr("The figure is too large for the clipboard: lower its size or DPI."));
        return false;
    }
    QGuiApplication::clipboard()->setImage(image);
    m_status->setText(tr("Copied a %1 × %2 image to the clipboard.").arg(image.width()).arg(image.height()));
    remember();
    return true;
}

void ExportDialog::browse()
{
    const QString file = QFileDialog::getSaveFileName(this, tr("Export figure"), path(),
                                                      tr("PDF (*.pdf);;SVG (*.svg);;PNG (*.png);;CSV data (*.csv)"));
    if (!file.isEmpty()) setPath(file);
}

void ExportDialog::remember() const { AppSettings::rememberExport(options(), {}); }

QString exportFolder() { return AppSettings::load().exportFolder; }

ExportOptions savedExportOptions() { return AppSettings::load().exportOptions; }

QString tableCsv(const QTableWidget& table)
{
    QStringList header{""};
    for (int c = 0; c < table.columnCount(); ++c)
        header << csvField(table.horizontalHeaderItem(c) ? table.horizontalHeaderItem(c)->text() : QString::number(c + 1));
    QString csv = header.join(',') + "\n";
    for (int r = 0; r < table.rowCount(); ++r) {
        QStringList row{csvField(table.verticalHeaderItem(r) ? table.verticalHeaderItem(r)->text() : QString::number(r + 1))};
        for (int c = 0; c < table.columnCount(); ++c) row << csvField(table.item(r, c) ? table.item(r, c)->text() : QString());
        csv += row.join(',') + "\n";
    }
    return csv;
}

}  // namespace parrot
