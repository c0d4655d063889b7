// Headless subcommands: the same core as the GUI, no display needed.
#pragma once

#include <QStringList>

namespace parrot {

// True when argv asks for a headless command rather than the window.
bool isHeadless(const QStringList& args);
// The command of a command line ("train", "export", …): its first argument after a leading
// --threads N; "" when there is none (the window opens).
QString commandOf(const QStringList& args);
// Runs it; returns the process exit code. Errors are one line on stderr.
int runCli(QStringList args);

}  // namespace parrot
