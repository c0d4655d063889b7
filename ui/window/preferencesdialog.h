// Edit → Preferences: the device, CPU threads, runs folder and theme. On OK it saves them
// (AppSettings) and emits `chosen`; the window applies them.
#pragma once

#include "ui/common/appsettings.h"

#include <QDialog>

class QComboBox;
class QLineEdit;
class QSpinBox;

namespace parrot {

class PreferencesDialog : public QDialog {
    Q_OBJECT
public:
    explicit PreferencesDialog(QWidget* parent = nullptr);

signals:
    void chosen(const parrot::AppSettings& settings);
    void saveFailed(const QString& message);  // the settings file could not be written (writeSettings)

private:
    QSpinBox* m_threads;
    QLineEdit* m_runs;
    QComboBox* m_theme;
    QComboBox* m_device;
    QComboBox* m_weightDtype;
};

}  // namespace parrot
