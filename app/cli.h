// What the command table (commands.cpp) runs: one function per headless command, each group of
// commands in its own file (traincli.cpp: train, eval; sweepcli.cpp: sweep; runscli.cpp: runs,
// compare, export; inspectcli.cpp: inspect; cataloguecli.cpp: presets, models, tasks, sample,
// config, info; lmcli.cpp: generate, lm-eval), and the window itself (main.cpp). Each reads its
// options from `a`, calls a.done() so that an option it does not know is an error, and returns the
// exit code. What they share is in clicommon.h.
#pragma once

namespace parrot {

class Args;

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
