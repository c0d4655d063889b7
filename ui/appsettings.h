// The application's saved settings (QSettings), each key and default written once: read by
// main() before the window exists and by the window and its Preferences. Layouts, the export
// dialog's choices and the inspector's recent files are kept by their own code.
#pragma once

#include <QString>
#include <QStringList>

namespace parrot {

struct AppSettings {
    int threads = 0;                 // torch threads; 0 = all cores
    QString theme = "system";        // system, light or dark
    QString device = "auto";         // a device spec (core/device.h)
    QString runsFolder;              // where the window's runs go
    bool welcomed = false;           // the first-start dialog was shown
    QString lastCheckpoint;          // the open dialog's starting point
    QStringList recentCheckpoints;   // most recent first, at most kRecentCheckpoints

    static constexpr int kRecentCheckpoints = 10;

    static AppSettings load();
    // Writes the Preferences' fields: threads, theme, device and the runs folder.
    void savePreferences() const;
    static void markWelcomed();
    // Puts an opened checkpoint first among the recent ones and makes it the dialog's start.
    static void rememberCheckpoint(const QString& path);
    static QString defaultRunsFolder();
};

}  // namespace parrot
