// What the command table (commands.cpp) runs: one function per headless command, on the same
// core as the window (cli.cpp), and the window itself (main.cpp). Each reads its options from
// `a`, calls a.done() so that an option it does not know is an error, and returns the exit code.
#pragma once

#include "figures/export.h"

#include <QString>
#include <QTextStream>

#include <utility>

namespace parrot {

class Args;

// Standard output, one stream for every command (its buffer is flushed by the commands as they go).
QTextStream& out();

// Options the figure-writing commands share: --size WxH (pixels; `width`/`height` when absent)
// and --dpi / --font-size / --line-width.
std::pair<int, int> parseSize(const QString& size, int width, int height);
ExportOptions figureStyle(Args& a);

int cmdPresets(Args& a);
int cmdModels(Args& a);
int cmdTasks(Args& a);
int cmdSample(Args& a);
int cmdConfig(Args& a);
int cmdTrain(Args& a);
int cmdEval(Args& a);
int cmdSweep(Args& a);
int cmdInspect(Args& a);
int cmdInfo(Args& a);
int cmdRuns(Args& a);
int cmdCompare(Args& a);
int cmdExport(Args& a);
int cmdGenerate(Args& a);
int cmdLmEval(Args& a);
int runWindow(Args& a);

}  // namespace parrot
