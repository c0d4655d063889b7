#include "appsettings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace parrot {

namespace {
const char* const kThreads = "threads";
const char* const kTheme = "theme";
const char* const kDevice = "device";
const char* const kRunsFolder = "runsFolder";
const char* const kWelcomed = "welcomed";
const char* const kLastCheckpoint = "lastCheckpoint";
const char* const kRecentCheckpointsKey = "recentCheckpoints";
}  // namespace

QString AppSettings::defaultRunsFolder()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)).filePath("Parrotscope/runs");
}

AppSettings AppSettings::load()
{
    const QSettings s;
    AppSettings a;
    a.threads = s.value(kThreads, a.threads).toInt();
    a.theme = s.value(kTheme, a.theme).toString();
    a.device = s.value(kDevice, a.device).toString();
    a.runsFolder = s.value(kRunsFolder, defaultRunsFolder()).toString();
    a.welcomed = s.value(kWelcomed, a.welcomed).toBool();
    a.lastCheckpoint = s.value(kLastCheckpoint).toString();
    a.recentCheckpoints = s.value(kRecentCheckpointsKey).toStringList();
    return a;
}

void AppSettings::savePreferences() const
{
    QSettings s;
    s.setValue(kDevice, device);
    s.setValue(kThreads, threads);
    s.setValue(kRunsFolder, runsFolder);
    s.setValue(kTheme, theme);
}

void AppSettings::markWelcomed() { QSettings().setValue(kWelcomed, true); }

void AppSettings::rememberCheckpoint(const QString& path)
{
    QSettings s;
    s.setValue(kLastCheckpoint, path);
    QStringList recent = s.value(kRecentCheckpointsKey).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    s.setValue(kRecentCheckpointsKey, recent.mid(0, kRecentCheckpoints));
}

}  // namespace parrot
