#include "ui/window/preferencesdialog.h"

#include "base/weightdtype.h"
#include "core/device.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include <algorithm>

namespace parrot {

PreferencesDialog::PreferencesDialog(QWidget* parent) : QDialog(parent)
{
    setObjectName("preferences");
    setWindowTitle(tr("Preferences"));
    auto* form = new QFormLayout(this);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    const AppSettings saved = AppSettings::load();
    m_threads = new QSpinBox(this);
    m_threads->setRange(0, 1024);
    m_threads->setSpecialValueText(tr("all cores"));
    m_threads->setValue(saved.threads);
    m_threads->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);  // only the folder's field takes the width
    // the runs folder whole (a path is read from its end), and a way to pick one
    m_runs = new QLineEdit(saved.runsFolder, this);
    m_runs->setObjectName("runsFolder");
    const QFontMetrics fm = m_runs->fontMetrics();
    m_runs->setMinimumWidth(std::clamp(fm.horizontalAdvance(m_runs->text() + "MMMM"), fm.horizontalAdvance('x') * 50,
                                       fm.horizontalAdvance('x') * 100));
    auto* browse = new QPushButton(tr("Browse…"), this);
    browse->setObjectName("browseRuns");
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Runs folder"), m_runs->text());
        if (!dir.isEmpty()) m_runs->setText(dir);
    });
    auto* runsRow = new QHBoxLayout;
    runsRow->addWidget(m_runs, 1);
    runsRow->addWidget(browse);
    m_theme = new QComboBox(this);
    m_theme->addItem(tr("Follow the system"), "system");
    m_theme->addItem(tr("Light"), "light");
    m_theme->addItem(tr("Dark"), "dark");
    m_theme->setCurrentIndex(std::max(0, m_theme->findData(saved.theme)));
    m_theme->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    m_device = new QComboBox(this);
    m_device->setObjectName("device");
    for (const DeviceOption& o : deviceOptions()) m_device->addItem(o.label, o.spec);
    m_device->setCurrentIndex(std::max(0, m_device->findData(deviceChoice())));
    m_device->setToolTip(tr("Where models are trained and run. Automatic takes the first GPU when this build's LibTorch has "
                            "CUDA and one is present. A model keeps the device it was built or opened on; the next one uses this."));
    m_device->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    form->addRow(tr("Device"), m_device);
    m_weightDtype = new QComboBox(this);
    m_weightDtype->setObjectName("weightDtype");
    m_weightDtype->addItem(tr("Automatic (as stored, where as fast)"), "auto");
    m_weightDtype->addItem(tr("float32"), "float32");
    m_weightDtype->addItem(tr("float16"), "float16");
    m_weightDtype->addItem(tr("bfloat16"), "bfloat16");
    m_weightDtype->setCurrentIndex(std::max(0, m_weightDtype->findData(weightDtypeName(weightDtypeChoice()))));
    m_weightDtype->setToolTip(tr("How a pretrained model's matrices are held in memory. 16 bits take half the memory of float32 "
                                 "(Pythia-2.8B: about 5.6 GB instead of 11); the arithmetic stays float32 either way. Auto keeps "
                                 "an F16 or BF16 file's own type where this CPU runs it at least as fast, else float32. "
                                 "Applies to models opened from now on."));
    m_weightDtype->setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
    form->addRow(tr("Pretrained weights"), m_weightDtype);
    form->addRow(tr("CPU threads"), m_threads);
    form->addRow(tr("Runs folder"), runsRow);
    form->addRow(tr("Theme"), m_theme);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(this, &QDialog::accepted, this, [this] {
        AppSettings s = AppSettings::load();
        s.device = m_device->currentData().toString();
        s.weightDtype = m_weightDtype->currentData().toString();
        s.threads = m_threads->value();
        s.runsFolder = m_runs->text();
        s.theme = m_theme->currentData().toString();
        const QString error = s.savePreferences();
        emit chosen(s);
        if (!error.isEmpty()) emit saveFailed(tr("%1. The new preferences hold until the window closes.").arg(error));
    });
}

}  // namespace parrot
