// What the headless commands share: their standard output, the experiment a command line names
// (--preset / --config with --set, --steps, --seed and --match-params), and the options of every
// command that draws a figure.
#pragma once

#include "base/config.h"
#include "figures/export.h"
#include "figures/figures.h"

#include <QString>
#include <QTextStream>

#include <utility>

namespace parrot {

class Args;

// Standard output, one stream for every command (its buffer is flushed by the commands as they go).
QTextStream& out();

// The experiment of --preset NAME or --config FILE, with --set, --steps, --seed and --match-params
// applied; the resolved width is reported on stderr when --match-params chose it.
ExperimentConfig experimentFrom(Args& a);

// Options the figure-writing commands share: --size WxH in points, its value (a.text("--size"),
// which gives the declared default when it is absent; `width` x `height` when `size` is empty, for
// a default that depends on the figure), and --dpi / --font-size / --line-width.
std::pair<int, int> parseSize(const QString& size);
std::pair<int, int> parseSize(const QString& size, int width, int height);
ExportOptions figureStyle(Args& a);
// A comparison figure's options: --log (x, y, xy or empty; anything else is an Error) and
// --precision, with the models' sizes measured by the core (Model::measure) for the capacity and
// frontier figures.
FigureOptions comparisonOptions(const QString& log = {}, int precision = 8);

}  // namespace parrot
