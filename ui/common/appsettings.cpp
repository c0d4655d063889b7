#include "ui/common/appsettings.h"

#include "base/weightdtype.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <cstdio>

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

QString writeSettings(const QList<std::pair<QString, QVariant>>& changes)
{
    const QString path = QSettings().fileName();
    const QString shown = QDir::toNativeSeparators(path);
    const QString aside = path + ".previous";
    const bool existed = QFileInfo::exists(path);
    QFile::remove(aside);
    if (existed && !QFile::copy(path, aside)) {
        QFile::remove(aside);
        return QObject::tr("%1: cannot be written (the disk is full, or the folder is read-only); it is unchanged").arg(shown);
    }
    const auto putBack = [&] {
        if (existed) ::rename(QFile::encodeName(aside).constData(), QFile::encodeName(path).constData());
        else QFile::remove(path);
    };
    {
        QSettings s;
        for (const auto& [key, value] : changes) value.isValid() ? s.setValue(key, value) : s.remove(key);
        s.sync();  // its status() is no guide: AccessError for a written file without an organisation name, NoError for a short one
    }
    // read back from a copy (a QSettings on the file itself would answer from Qt's cache)
    QTemporaryDir scratch;
    const QString copy = scratch.filePath("check.conf");
    bool whole = scratch.isValid() && QFile::copy(path, copy);
    if (whole) {
        const QSettings back(copy, QSettings::IniFormat);
        // an INI file gives numbers and booleans back as text: those are compared as text
        const auto same = [](const QVariant& a, const QVariant& b) { return a.typeId() == b.typeId() ? a == b : a.toString() == b.toString(); };
        for (const auto& [key, value] : changes) whole = whole && (value.isValid() ? same(back.value(key), value) : !back.contains(key));
    }
    if (!whole) {
        putBack();
        return QObject::tr("%1: cannot be written (the disk is full, or the folder is read-only); it is unchanged").arg(shown);
    }
    QFile::remove(aside);
    return {};
}

QString AppSettings::savePreferences() const
{
    return writeSettings({{kDevice, device}, {kWeightDtype, weightDtype}, {kThreads, threads}, {kRunsFolder, runsFolder}, {kTheme, theme}});
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
