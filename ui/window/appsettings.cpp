#include "ui/window/appsettings.h"

#include "base/weightdtype.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>

namespace parrot {

namespace {
const char* const kThreads = "threads";
const char* const kTheme = "theme";
const char* const kDevice = "device";
const char* const kWeightDtype = "weightDtype";
const char* const kRunsFolder = "runsFolder";
const char* const kWelcomed = "welcomed";
const char* const kLastCheckpoint = "lastCheckpoint";
const char* const kRecentCheckpointsKey = "recentCheckpoints";
const char* const kRecentInspected = "inspector/recent";
const char* const kExportWidth = "export/width";
const char* const kExportHeight = "export/height";
const char* const kExportDpi = "export/dpi";
const char* const kExportFont = "export/font";
const char* const kExportLine = "export/line";
const char* const kExportWhite = "export/white";
const char* const kExportFolder = "export/folder";
const char* const kExportFormat = "export/format";

// `path` first in the list under `key`, at most AppSettings::kRecentCheckpoints kept.
void putFirst(QSettings& s, const char* key, const QString& path)
{
    QStringList recent = s.value(key).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    s.setValue(key, recent.mid(0, AppSettings::kRecentCheckpoints));
}
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
    a.weightDtype = s.value(kWeightDtype, a.weightDtype).toString();
    if (!weightDtypeNames().contains(a.weightDtype)) a.weightDtype = "auto";  // a hand-edited or older settings file
    a.runsFolder = s.value(kRunsFolder, defaultRunsFolder()).toString();
    a.welcomed = s.value(kWelcomed, a.welcomed).toBool();
    a.lastCheckpoint = s.value(kLastCheckpoint).toString();
    a.recentCheckpoints = s.value(kRecentCheckpointsKey).toStringList();
    a.recentInspected = s.value(kRecentInspected).toStringList();
    ExportOptions& o = a.exportOptions;
    o.width = s.value(kExportWidth, o.width).toInt();
    o.height = s.value(kExportHeight, o.height).toInt();
    o.dpi = s.value(kExportDpi, o.dpi).toInt();
    o.fontPt = s.value(kExportFont, o.fontPt).toDouble();
    o.lineWidth = s.value(kExportLine, o.lineWidth).toDouble();
    o.white = s.value(kExportWhite, o.white).toBool();
    a.exportFolder = s.value(kExportFolder).toString();
    if (a.exportFolder.isEmpty() || !QFileInfo(a.exportFolder).isDir()) {
        const QString documents = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
        a.exportFolder = QFileInfo(documents).isDir() ? documents : QDir::homePath();
    }
    a.exportFormat = s.value(kExportFormat, a.exportFormat).toString();
    return a;
}

void AppSettings::savePreferences() const
{
    QSettings s;
    s.setValue(kDevice, device);
    s.setValue(kWeightDtype, weightDtype);
    s.setValue(kThreads, threads);
    s.setValue(kRunsFolder, runsFolder);
    s.setValue(kTheme, theme);
}

void AppSettings::markWelcomed() { QSettings().setValue(kWelcomed, true); }

void AppSettings::rememberCheckpoint(const QString& path)
{
    QSettings s;
    s.setValue(kLastCheckpoint, path);
    putFirst(s, kRecentCheckpointsKey, path);
}

void AppSettings::rememberInspected(const QString& path)
{
    QSettings s;
    putFirst(s, kRecentInspected, path);
}

void AppSettings::rememberExport(const ExportOptions& o, const QString& path)
{
    QSettings s;
    s.setValue(kExportWidth, o.width);
    s.setValue(kExportHeight, o.height);
    s.setValue(kExportDpi, o.dpi);
    s.setValue(kExportFont, o.fontPt);
    s.setValue(kExportLine, o.lineWidth);
    s.setValue(kExportWhite, o.white);
    if (path.isEmpty()) return;
    const QFileInfo f(path);
    s.setValue(kExportFolder, f.absolutePath());
    if (!f.suffix().isEmpty()) s.setValue(kExportFormat, f.suffix().toLower());
}

}  // namespace parrot
