#include "commands.h"

#include <QFileInfo>

#include "args.h"
#include "cli.h"
#include "core/device.h"
#include "core/diagnostics.h"
#include "base/weightdtype.h"
#include "base/error.h"
#include "base/figurecatalog.h"
#include "base/version.h"

#include <QTextStream>

#include <algorithm>

namespace parrot {

namespace {

// `prefix`, the choices joined by '|', then `suffix`, broken into lines of at most `width`
// characters before a choice (or before the suffix); continuation lines start "       |" (or
// "       " before the suffix), so a catalogue of any size reads as one synopsis.
QStringList wrappedChoices(const QString& prefix, const QStringList& choices, const QString& suffix, int width = 100)
{
    QStringList lines{prefix};
    for (int i = 0; i < choices.size(); ++i) {
        const QString word = (i == 0 ? QString() : QString("|")) + choices[i];
        if (i > 0 && lines.back().size() + word.size() > width) lines << "       " + word;
        else lines.back() += word;
    }
    if (lines.back().size() + suffix.size() > width) lines << "      " + suffix;
    else lines.back() += suffix;
    return lines;
}

}  // namespace

const std::vector<Command>& commands()
{
    static const std::vector<Command> table{
        {"presets", {{{"presets"}, {"list the bundled experiment presets"}}}, Widgets::None, cmdPresets},
        {"models", {{{"models [--json]"}, {"list the model families, their options and defaults"}}}, Widgets::None, cmdModels},
        {"tasks", {{{"tasks [--json]"}, {"list the tasks, their options and defaults"}}}, Widgets::None, cmdTasks},
        {"sample",
         {{{"sample [--task NAME | --preset NAME | --config FILE] [--set KEY=VALUE]...",
            "       [--count N] [--length D] [--seed S] [--json]"},
           {"print generated examples of a task, answers marked"}}},
         Widgets::None, cmdSample},
        {"config",
         {{{"config (--preset NAME | --config FILE) [--set KEY=VALUE]... [--match-params N|FAMILY]"},
           {"print the fully resolved configuration as JSON"}},
          {{"config --describe [--json]"}, {"every numeric setting: its key, label, range, default", "and what it does"}}},
         Widgets::None, cmdConfig},
        {"train",
         {{{"train (--preset NAME | --config FILE) --out DIR [--steps N] [--seed S]", "      [--set KEY=VALUE]..."},
           {"train and write a run folder (config.json,", "metrics.csv, curves.json, checkpoints/)"}},
          {{"train --resume RUN_DIR [--steps N] [--extend-schedule]", "      [--set train.KEY=VALUE]..."},
           {"go on with a stopped, killed or finished run where", "its last autosave left it (bit for bit on the CPU);",
            "--steps N past its total needs --extend-schedule"}}},
         Widgets::None, cmdTrain},
        {"eval",
         {{{"eval --checkpoint FILE --lengths 10,20,40 [--samples N] [--seed S] [--json]"},
           {"accuracy (or in-context error) of a checkpoint"}}},
         Widgets::None, cmdEval},
        {"sweep",
         {{{"sweep (--config SWEEP.json | --preset NAME) --out DIR [--jobs N] [--print-commands]", "      [--set KEY=VALUE]..."},
           {"run a grid of experiments, resumable; or print one", "independent command per unfinished run; --set",
            "changes every run (e.g. train.steps=100 for a quick look)"}},
          {{"sweep (--config SWEEP.json | --preset NAME) --out DIR --slurm [--cluster NAME]",
            "      [--partition P] [--account A] [--time T] [--cpus-per-task N] [--mem M] [--gres G]",
            "      [--sbatch-lines FILE] [--executable PATH] [--save-cluster NAME] [--set KEY=VALUE]..."},
           {"submit the unfinished runs (not queued or running) as", "one Slurm job array; prints its job id; each task",
            "resumes its run from its autosave; --save-cluster", "keeps the options as a named profile"}},
          {{"sweep --status DIR [--json]"}, {"every run: pending, running, finished, failed,", "diverged or cancelled, with its step and accuracy"}},
          {{"sweep --cancel DIR"}, {"scancel the sweep's queued and running Slurm jobs"}}},
         Widgets::None, cmdSweep},
        {"inspect",
         {{{"inspect (--checkpoint FILE | --bundled hard-alibi|mamba | --construction N [--letters K])",
            "        [--input LETTERS | --length L --seed S [--repeat-ngram]] [--json]"},
           {"attention heads on a copy input (a model of another", "task: an example of its task, L its pairs or letters):",
            "n-gram lookup scores (n = 1..8) and a label per head"}},
          {{"inspect --model DIR (--prompt TEXT | --lm-test phonebook|copy-text|shuffled-text", "        [--length L] [--seed S]) [--json]"},
           {"a pretrained model (HuggingFace folder) on a text prompt:", "its heads' lookup scores, copyable tokens predicted,",
            "its greedy answer; --figure as below"}},
          {{"inspect ... --ablate L.H[,L.H...] [--ablation zero|mean]"},
           {"switch heads off at forward time (attention's, or", "Mamba-2's and Gated DeltaNet's; weights untouched): the",
            "answers before and after, and with --figure the views", "of the ablated model"}},
          {{"inspect ... --head-importance [--task T] [--length L] [--samples N] [--seed S]", "        [--ablation zero|mean] [--json] [--out FILE]"},
           {"each head switched off alone over N examples: the drop", "in answers and tokens right (± standard errors), sorted,",
            "with its lookup label; --out: the layer x head heatmap"}},
          {{"inspect (--checkpoint FILE | --bundled mamba) --state-sweep dims|channels|bits", "        (--out FILE | --json) [--values 8,4,2] [--lengths L,...] [--samples N]"},
           {"copy accuracy against length with the SSM state shrunk", "(first k of d_state, a fraction of the channels, or",
            "b-bit entries), beside the copy bound for each state"}},
          {{"inspect ... --figure attention|implicit|state|delta --out FILE [--layer L] [--head H]", "        [--log] [--size WxH]"},
           {"render a view (default: the strongest lookup head,", "the last block) to PNG, PDF, SVG or CSV"}},
          {{"inspect ... --figure capacity --out FILE"}, {"the model's state against the bound, its longest copy"}},
          {{"inspect --construction N --figure construction --out FILE [--lengths 10,50,200]", "        [--samples S]"},
           {"the construction's accuracy for n-3..n vs the bound"}}},
         Widgets::FigureOption, cmdInspect},
        {"info",
         {{{"info FILE [--json]"},
           {"what a checkpoint file is (format, architecture, tensors", "with mean/std/min/max, config), whether the app runs it,",
            "and if not why; exit code 2 when it cannot"}}},
         Widgets::None, cmdInfo},
        {"runs",
         {{{"runs --dir DIR [--json]"}, {"list the runs under DIR with their final results"}},
          {{"runs --dir DIR --table [--at in-range|longest]"},
           {"tasks x models graded pass / partial / fail (like", "Park et al.'s Table 1), seeds averaged"}}},
         Widgets::None, cmdRuns},
        {"compare",
         {{{"compare --runs DIR... --figure " + figureIds(CompareFigure).join('|'),
            "        --out FILE.(png|pdf|svg|csv) [--size 800x500] [--log x|y|xy] [--precision BITS]"},
           {"overlay runs as a figure, without a display"}}},
         Widgets::Figures, cmdCompare},
        {"export",
         {{wrappedChoices("export --run DIR --figure ", figureIds(ExportFigure),
                          " --out FILE.(png|pdf|svg|csv) [--size WxH] [--dpi N] [--font-size PT]")
               + QStringList{"       [--line-width PT] [--log x|y|xy]"},
           {"a run's (or every run's under DIR) figure for a paper:", "panel = loss beside accuracy in one figure; table = the",
            "graded results table as CSV; mechanisms = one run's loss", "above every head's lookup score (mechanisms.csv),",
            "one step axis. --dpi, --font-size and", "--line-width also work for compare and inspect --figure.",
            "--size, --font-size and --line-width are in points", "(1/72 inch) in every format; a PNG is size x dpi / 72",
            "pixels (800x500 at the default 192 dpi: 2133x1333)"}}},
         Widgets::Figures, cmdExport},
        {"generate",
         {{{"generate --model DIR|ORG/NAME --prompt TEXT [--max-new-tokens N] [--json]"},
           {"greedy continuation by a pretrained model folder", "(Pythia / GPT-NeoX or Mamba: config.json,", "tokenizer.json, weights), or a hub id found in",
            "the HuggingFace cache (HF_HUB_CACHE, HF_HOME)"}}},
         Widgets::None, cmdGenerate},
        {"lm-eval",
         {{{"lm-eval --model DIR [--model DIR2]... --task phonebook|copy-text|shuffled-text",
            "        [--sizes 10,20,40,80] [--samples N] [--seed S] [--json]", "        [--out FIG.(png|pdf|svg|csv) [--size WxH] [--dpi N]]"},
           {"the copy paper's zero-shot tests of pretrained models:", "accuracy against phone-book entries or text tokens"}},
          {{"lm-eval --model DIR... --task squad [--data SQUAD.json] [--sizes 100,200,400]", "        [--samples N] [--seed S] [--json] [--out FIG]"},
           {"question answering as the paper runs it: exact match", "and F1 by paragraph length (buckets between the",
            "sizes, in each model's tokens); the bundled set by default"}},
          {{"lm-eval --model DIR... --task perplexity [--data TEXT.txt] [--window N] [--tokens N] [--json]"},
           {"each model's loss and perplexity on a text (Alice by", "default; its first 8192 tokens unless --tokens 0)"}},
          {{"lm-eval --model DIR... --task TEST [--sizes ...] --figure loss-vs-retrieval --out FIG", "        [--at SIZE] [--text TEXT.txt]"},
           {"the paper's point drawn: each model at (perplexity,", "its accuracy on TEST at one size)"}}},
         Widgets::FigureOption, cmdLmEval},
        {"",
         {{{"--screenshot FILE [--preset NAME] [--set KEY=VALUE]..."}, {"open the window, save it as PNG, exit"}},
          {{"--screenshot FILE --screenshot-at-step N [--preset NAME]"},
           {"train the experiment in the window and save it as", "PNG at step N (docs/make.sh's Train tab)"}},
          {{"(no command) [--preset NAME] [--set KEY=VALUE]... [CHECKPOINT]"}, {"open the window on that experiment"}},
          {{"(no command) CHECKPOINT --tab explore"}, {"open the checkpoint and look inside it in the Explore", "tab's left pane"}},
          {{"(no command) --inspect FILE"}, {"open the Inspect tab on a checkpoint file"}},
          {{"(no command) --pretrained DIR [--pretrained DIR2]... [--tab explore]"},
           {"open the Pretrained tab on HuggingFace model folders;", "with --tab explore, look inside the first beside one of",
            "the other architecture on a phone book"}},
          {{"(no command) --tab train|experiments|explore|inspect|pretrained"},
           {"open on that tab (default: Explore, or the tab the", "other options show)"}},
          {{"(no command) --theme system|light|dark"},
           {"the window's theme (default: Edit → Preferences; system", "follows the desktop's palette); exports stay white"}},
          {{"(no command) --measure-latency"},
           {"print the GUI thread's longest and 99th-percentile", "stall to stderr on close; also", "PARROTSCOPE_MEASURE_LATENCY=1"}},
          {{"(no command) --layout NAME | --fresh-layout"},
           {"open with a layout saved with View → Save layout, or", "with the default one instead of the last session's"}},
          {{"(no command) --experiment SWEEP [--sweep-dir DIR] [--run-sweep] [--results-table]"},
           {"open the Experiments tab on a bundled sweep (its", "figure, or results table, from DIR), optionally run it"}}},
         Widgets::Window, runWindow},
    };
    return table;
}

namespace {

// The options every command shares, listed around the window's in `--help`.
const std::vector<Usage> kSharedOptions{
    {{"--threads N"}, {"torch threads (default: all cores)"}},
    {{"--device auto|cpu|cuda[:N]"},
     {"where models run (default: auto, the first GPU when", "this LibTorch has CUDA and one is present; the",
      "window's default is Edit → Preferences)"}},
    {{"--dtype auto|float32|float16|bfloat16"},
     {"how a pretrained model's matrices are held (default:", "auto, an F16/BF16 file's own 16 bits where this CPU",
      "runs them at least as fast; computed in float32)"}},
    {{"--set KEY=VALUE"}, {"override a config field by its dotted path,", "e.g. --set model.layers=4 --set task.max_len=30"}},
    {{"--match-params N|FAMILY"},
     {"(config, train) choose model.d_model so the model has", "N parameters, or as many as FAMILY with the same",
      "settings, e.g. --set model.kind=mamba --match-params transformer"}},
};
const std::vector<Usage> kInfoOptions{
    {{"--version"}, {"print the version"}},
    {{"--diagnostics"}, {"print versions, BLAS, threads and device"}},
    {{"--help [--markdown]"}, {"print this help (as Markdown: the user guide's", "command reference)"}},
};

// The index of the first argument after the shared options that may come before a command.
qsizetype firstCommandWord(const QStringList& argv)
{
    qsizetype i = 1;
    while (i < argv.size()) {
        if (argv[i] == "--threads" || argv[i] == "--device" || argv[i] == "--dtype") i += 2;
        else if (argv[i].startsWith("--threads=") || argv[i].startsWith("--device=") || argv[i].startsWith("--dtype=")) i += 1;
        else break;
    }
    return i;
}

// Options that print something about the app instead of running a command or the window.
bool asksAbout(const QStringList& argv)
{
    for (const QString& a : argv.mid(1))
        if (a == "--version" || a == "--diagnostics" || a == "--help" || a == "-h") return true;
    return false;
}

// Two columns: the synopsis, then the summary from column 35 (on the synopsis's last line when
// that leaves room).
QString helpLines(const std::vector<Usage>& usage)
{
    constexpr int kColumn = 35;
    QString text;
    for (const Usage& u : usage) {
        QStringList lines;
        for (const QString& s : u.synopsis) lines << "  " + s;
        QStringList summary = u.summary;
        if (!summary.isEmpty() && lines.last().size() <= kColumn - 2) lines.last() = lines.last().leftJustified(kColumn) + summary.takeFirst();
        for (const QString& s : summary) lines << QString(kColumn, ' ') + s;
        text += lines.join('\n') + '\n';
    }
    return text;
}

}  // namespace

const Command& commandFor(const QStringList& argv)
{
    const std::vector<Command>& all = commands();
    const Command& window = *std::find_if(all.begin(), all.end(), [](const Command& c) { return c.name.isEmpty(); });
    // the command is the first argument, after a leading --threads N or --device D; a command's
    // name later on is a value (--tab train, a file called export), not a command
    const qsizetype i = firstCommandWord(argv);
    if (i < argv.size())
        for (const Command& c : all)
            if (!c.name.isEmpty() && c.name == argv[i]) return c;
    return window;
}

namespace {

int editDistance(const QString& a, const QString& b)
{
    std::vector<int> row(size_t(b.size()) + 1);
    for (size_t j = 0; j < row.size(); ++j) row[j] = int(j);
    for (qsizetype i = 1; i <= a.size(); ++i) {
        int diagonal = row[0];
        row[0] = int(i);
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const int above = row[size_t(j)];
            row[size_t(j)] = std::min({above + 1, row[size_t(j - 1)] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row.back();
}

}  // namespace

QString mistypedCommand(const QStringList& argv)
{
    if (!commandFor(argv).name.isEmpty()) return {};
    const qsizetype i = firstCommandWord(argv);
    if (i >= argv.size()) return {};
    const QString word = argv[i];
    // a file to open (the window's checkpoint argument) or an option: not a command
    if (word.startsWith('-') || word.contains('/') || word.contains('.') || QFileInfo::exists(word)) return {};
    QString best;
    int bestDistance = 1 << 30;
    for (const Command& c : commands())
        if (!c.name.isEmpty() && editDistance(word, c.name) < bestDistance) {
            best = c.name;
            bestDistance = editDistance(word, c.name);
        }
    const bool close = bestDistance <= std::max(1, int(best.size()) / 2);
    return QString("'%1' is not a command%2 (see parrotscope --help)").arg(word, close ? QString("; did you mean '%1'?").arg(best) : QString());
}

Widgets widgetsFor(const Command& command, const QStringList& argv)
{
    if (asksAbout(argv)) return Widgets::None;
    if (command.widgets != Widgets::FigureOption) return command.widgets;
    for (const QString& a : argv)
        if (a == "--figure" || a.startsWith("--figure=") || a == "--out" || a.startsWith("--out=")) return Widgets::Figures;
    return Widgets::None;
}

QString helpText()
{
    QString text = "Usage: parrotscope [COMMAND] [OPTIONS]\n\n"
                   "Without a command, opens the Parrotscope window on its default experiment.\n\n"
                   "Commands:\n";
    const Command* window = nullptr;
    for (const Command& c : commands()) {
        if (c.name.isEmpty()) window = &c;
        else text += helpLines(c.usage);
    }
    text += "\nOptions:\n" + helpLines(kSharedOptions);
    if (window) text += helpLines(window->usage);
    return text + helpLines(kInfoOptions);
}

QString helpMarkdown()
{
    // one section a command, each usage's synopsis as code and its summary as a sentence
    const auto usages = [](const std::vector<Usage>& usage) {
        QString text;
        for (const Usage& u : usage) text += "```\n" + u.synopsis.join('\n') + "\n```\n\n" + u.summary.join(' ') + ".\n\n";
        return text;
    };
    const auto options = [](const std::vector<Usage>& usage) {
        QString text;
        for (const Usage& u : usage) text += "- `" + u.synopsis.join(' ') + "`: " + u.summary.join(' ') + "\n";
        return text;
    };
    QString text;
    const Command* window = nullptr;
    for (const Command& c : commands()) {
        if (c.name.isEmpty()) window = &c;
        else text += QString("### %1\n\n").arg(c.name) + usages(c.usage);
    }
    if (window) text += "### The window (no command)\n\n" + options(window->usage) + "\n";
    return text + "### Every command\n\n" + options(kSharedOptions) + options(kInfoOptions);
}

int runCommand(const Command& command, const QStringList& argv)
{
    try {
        // the window reads --threads itself: without it, the count set in Preferences
        if (command.name.isEmpty() && !asksAbout(argv)) {
            Args a(argv.mid(1));
            return command.run(a);
        }
        Args a(argv.mid(1));
        configureThreads(a.integer("--threads", 0, 0, 4096));
        const QString device = a.value("--device");
        if (!device.isNull()) setDeviceChoice(device);
        const QString dtype = a.value("--dtype");
        if (!dtype.isNull()) setWeightDtypeChoice(weightDtypeFromName(dtype));
        if (a.flag("--help") || a.flag("-h")) {
            QTextStream(stdout) << (a.flag("--markdown") ? helpMarkdown() : helpText());
            return 0;
        }
        if (a.flag("--version")) {
            QTextStream(stdout) << "parrotscope " << appVersion() << "\n";
            return 0;
        }
        if (a.flag("--diagnostics")) {
            a.done();
            QTextStream(stdout) << diagnosticsText(diagnostics());
            return 0;
        }
        QStringList rest = argv.mid(1);
        rest.removeOne(command.name);
        Args args(rest);
        args.integer("--threads", 0, 0, 4096);  // applied above
        args.value("--device");
        args.value("--dtype");
        return command.run(args);
    } catch (const Error& e) {
        QTextStream(stderr) << "parrotscope: error: " << e.message() << "\n";
        return 1;
    } catch (const std::exception& e) {
        QTextStream(stderr) << "parrotscope: error: " << QString::fromUtf8(e.what()).section('\n', 0, 0) << "\n";
        return 1;
    }
}

}  // namespace parrot
