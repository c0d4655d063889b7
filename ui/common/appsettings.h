// The application's saved settings (QSettings), each key and default written once: read by
// main() before the window exists, by the window and its Preferences, the export dialog and the
// inspector. (Saved layouts and the window's geometry are Qt's own opaque state, kept by
// MainWindow under "layouts/" and "window/".)
#pragma once

#include "figures/export.h"

#include <QString>
#include <QStringList>
#include <QVariant>

#include <utility>

namespace parrot {

// Writes `changes` (key, value; an invalid QVariant removes the key) to the settings file in one
// step, or not at all. QSettings replaces its file through a temporary one, but a write cut short
// by a full disk goes unreported and the short file is committed, which would lose every setting
// and layout. So the file is copied aside first (a disk too full for the copy refuses at once),
// the result is read back from a copy, and on any difference the earlier file is put back.
// Returns "" when written, else a message naming the file; the earlier file is then unchanged.
QString writeSettings(const QList<std::pair<QString, QVariant>>& changes);

struct AppSettings {
    int threads = 0;                 // torch threads; 0 = all cores
    QString theme = "system";        // system, light or dark
    QString device = "auto";         // a device spec (core/device.h)
    QString weightDtype = "auto";    // how pretrained models' matrices are held (base/weightdtype.h)
    QString runsFolder;              // where the window's runs go
    bool welcomed = false;           // the first-start dialog was shown
    QString lastCheckpoint;          // the open dialog's starting point
    QStringList recentCheckpoints;   // most recent first, at most kRecentCheckpoints
    QStringList recentInspected;     // the Inspect tab's files, most recent first, at most kRecentCheckpoints
    ExportOptions exportOptions;     // the export dialog's last choices (figures/export.h's defaults)
    QString exportFolder;            // where the last figure went: an existing folder, else Documents or home
    QString exportFormat = "pdf";    // the last figure's extension

    static constexpr int kRecentCheckpoints = 10;

    static AppSettings load();
    // Writes the Preferences' fields: threads, theme, device, weight dtype and the runs folder;
    // "" or writeSettings' message.
    QString savePreferences() const;
    static void markWelcomed();
    // Puts an opened checkpoint first among the recent ones and makes it the dialog's start.
    static void rememberCheckpoint(const QString& path);
    static void rememberInspected(const QString& path);
    // The choices of an export just written to `path` (its folder and format too).
    static void rememberExport(const ExportOptions& options, const QString& path);
    static QString defaultRunsFolder();
};

}  // namespace parrot
