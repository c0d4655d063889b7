// The command table: every way parrotscope can be started (the window and each headless
// command) in one list, which main() dispatches through, `--help` is written from, and
// tests/tst_cli.cpp holds the user guide against.
#pragma once

#include "args.h"

#include <QStringList>

#include <vector>

namespace parrot {

// What a command needs from Qt besides the core; main() makes the application object for it.
enum class Widgets {
    None,          // a QCoreApplication: no display is touched
    Figures,       // draws figures: a QApplication on the offscreen platform, never a window
    FigureOption,  // as Figures when --figure or --out is given, else None
    Window,        // the window
};

// One usage of a command as `--help` shows it: the command line (continuation lines keep
// their indentation) and what it does, in the help's right-hand column.
struct Usage {
    QStringList synopsis;
    QStringList summary;
};

// A usage's synopsis and summary may name a declared option as {--name}, written out as
// "--name VALUE" from its declaration, and its default as {=--name}.
struct Command {
    QString name;  // the first argument; "" for the window, which runs when no command is given
    std::vector<Usage> usage;
    Widgets widgets = Widgets::None;
    int (*run)(Args&) = nullptr;  // the exit code; throws parrot::Error for anything wrong
    std::vector<Option> options;  // every option `run` reads, which Args reads through
    // It runs a model's math on the CPU's threads (training, evaluation, a model's views), so
    // OpenMP's settings matter to it: main() restarts it with them (restartWithLibrarySettings).
    // The commands that list, read files, draw figures from runs or start other processes do not,
    // unless given `modelMathOption` (a Slurm array task, `sweep --slurm-task`, trains its run).
    bool modelMath = true;
    QString modelMathOption = {};
};

// Every command, in the order `--help` lists them; the window last.
const std::vector<Command>& commands();
// The options runCommand reads before any command's: --threads, --device, --dtype.
const std::vector<Option>& sharedOptions();
// What a command's Args reads through: its declared options and the shared ones.
std::vector<Option> declaredOptions(const Command& command);
// The arguments of command `name` (its function called from code: a sweep's array task trains),
// read through its declared options.
Args argsFor(const QString& name, const QStringList& args);
// The command of a command line (its first argument, after a leading --threads N), or the
// window when that is not a command's name.
const Command& commandFor(const QStringList& argv);
// For a command line whose first word is neither a command, an option nor a file: the one-line
// error naming it and the command it is closest to ("'trian' is not a command; did you mean
// 'train'?"); else "". Checked before any application object exists, so it needs no display.
QString mistypedCommand(const QStringList& argv);
// Whether `argv` runs a model's math in this process: a command whose modelMath is set or that
// is given its modelMathOption, not --help, --version or --diagnostics, and not a mistyped command.
bool runsModelMath(const QStringList& argv);
// What running `argv` with `command` needs: None, Figures or Window.
Widgets widgetsFor(const Command& command, const QStringList& argv);
// The `--help` text, and `--help --markdown`: the same table as the user guide's command
// reference (docs/guide/command-line.md holds it, checked by tests/tst_cli.cpp); in help.cpp.
QString helpText();
QString helpMarkdown();
// Runs the command, after the options every command shares (--threads, --help, --version,
// --diagnostics); returns the process's exit code. Errors are one line on stderr.
int runCommand(const Command& command, const QStringList& argv);

}  // namespace parrot
