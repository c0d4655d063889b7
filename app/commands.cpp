// The command table: every command and the window with its usage lines, its options' declarations
// and its function; how main() finds the entry of a command line and what application object it
// needs; and runCommand, which reads the shared options and runs the entry. `--help` is written
// from the table in help.cpp.
#include "commands.h"

#include <QFileInfo>

#include "base/error.h"
#include "base/figurecatalog.h"
#include "base/version.h"
#include "base/weightdtype.h"
#include "core/device.h"
#include "core/diagnostics.h"
#include "figures/export.h"
#include "args.h"
#include "cli.h"

#include <QTextStream>

#include <algorithm>
#include <stdexcept>

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

// The options the commands declare. Each list is in the order its command reads the options, which
// decides the error a command line with several wrong options gets.

constexpr int kMaxSeed = 2147483647;

std::vector<Option> operator+(std::vector<Option> a, const std::vector<Option>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

const Option kJson = Option::flag("--json", "print JSON instead of text");
const Option kSet = Option::text("--set", "KEY=VALUE", "override a config field by its dotted path (repeatable)");

// experimentFrom's (clicommon.h): the experiment a command line names; `seed` is the command's --seed
std::vector<Option> experimentOptions(const Option& seed)
{
    return {Option::text("--preset", "NAME", "a bundled preset (parrotscope presets)", "the default preset"),
            Option::text("--config", "FILE", "an experiment config file"),
            kSet,
            Option::text("--steps", "N", "training steps (train.steps)", "the experiment's"),
            seed,
            Option::text("--match-params", "N|FAMILY",
                         "choose model.d_model so the model has N parameters, or as many as FAMILY with the same settings")};
}
const Option kExperimentSeed = Option::text("--seed", "S", "the experiment's seed (seed)", "the experiment's");

// figureStyle's (clicommon.h): every command that draws a figure
const std::vector<Option> kFigureStyle{
    Option::integer("--dpi", "N", ExportOptions{}.dpi, 36, 1200, "a PNG's pixels per inch"),
    Option::number("--font-size", "PT", 0, 1, 72, "every text of the figure at this size", "the view's fonts"),
    Option::number("--line-width", "PT", 0, 0.1, 20, "every curve this wide", "the view's widths"),
};
const Option kLog = Option::text("--log", "x|y|xy", "logarithmic axes");
const Option kPrecision = Option::integer("--precision", "BITS", 8, 1, 64, "the effective bits per state number of the capacity and frontier figures' bound lines");

const std::vector<Option> kSampleOptions = std::vector<Option>{Option::text("--task", "NAME", "a task with its own defaults (parrotscope tasks)")}
    + experimentOptions(Option::integer("--seed", "S", 1, 0, kMaxSeed, "the examples' seed"))
    + std::vector<Option>{Option::integer("--count", "N", 3, 1, 10000, "how many examples"),
                          Option::integer("--length", "D", 0, 1, 100000, "each example's difficulty (letters, pairs, ...)",
                                          "drawn from the task's min_len..max_len"),
                          kJson};

const std::vector<Option> kConfigOptions = std::vector<Option>{Option::flag("--describe", "list every numeric setting instead"), kJson}
    + experimentOptions(kExperimentSeed);

const std::vector<Option> kTrainOptions = std::vector<Option>{
        Option::text("--resume", "RUN_DIR", "go on with this run folder"),
        Option::flag("--extend-schedule", "with --resume: --steps past the run's total stretches its learning-rate schedule"),
        Option::text("--out", "DIR", "the run folder to write (must be new or empty)")}
    + experimentOptions(kExperimentSeed);

const std::vector<Option> kEvalOptions{
    Option::text("--checkpoint", "FILE", "the checkpoint to evaluate"),
    Option::text("--lengths", "10,20,40", "the lengths to evaluate at", "the task's eval_lengths"),
    Option::integer("--samples", "N", 0, 1, 1000000, "examples at each length", "the task's eval_samples"),
    Option::integer("--seed", "S", 1234, 0, kMaxSeed, "the examples' seed"),
    kJson,
};

const std::vector<Option> kSweepOptions{
    Option::text("--status", "DIR", "print the state of every run of this sweep folder"),
    Option::text("--cancel", "DIR", "scancel this sweep's queued and running Slurm jobs"),
    kJson,
    Option::integer("--slurm-task", "I", -1, 0, 10000000, "(the batch script's) run array task I of a submitted sweep", "none"),
    Option::text("--list", "FILE", "(the batch script's) the submitted runs, one a line"),
    Option::flag("--slurm", "submit the unfinished runs as one Slurm job array"),
    Option::text("--save-cluster", "NAME", "keep the cluster options as a named profile"),
    Option::text("--cluster", "NAME", "a saved cluster profile, the options below given over it"),
    Option::text("--partition", "P", "sbatch --partition"),
    Option::text("--account", "A", "sbatch --account"),
    Option::text("--time", "T", "sbatch --time"),
    Option::text("--mem", "M", "sbatch --mem"),
    Option::text("--gres", "G", "sbatch --gres"),
    Option::text("--executable", "PATH", "the parrotscope the nodes run", "this one"),
    Option::integer("--cpus-per-task", "N", 1, 1, 1024, "sbatch --cpus-per-task", "the profile's, else 1"),
    Option::text("--sbatch-lines", "FILE", "extra #SBATCH lines for the batch script"),
    Option::text("--preset", "NAME", "a bundled sweep (parrotscope presets)"),
    Option::text("--config", "SWEEP.json", "a sweep file"),
    Option::text("--out", "DIR", "the sweep folder (resumed when it exists)"),
    Option::integer("--jobs", "N", 1, 1, 256, "runs at a time"),
    Option::flag("--print-commands", "print one command per unfinished run instead of running them"),
    Option::flag("--thorough", "every model at each learning rate of a grid and 3 seeds, shown at its best rate on held-out prompts"),
    Option::text("--scale", "NAME", "one of the sweep's scales (paper: the paper's sizes, for a GPU)", "laptop"),
    kSet,
};

const std::vector<Option> kInspectOptions = std::vector<Option>{
        Option::text("--checkpoint", "FILE", "a trained model"),
        Option::text("--bundled", "hard-alibi|mamba", "a bundled copy model"),
        Option::text("--model", "DIR", "a pretrained model's folder (HuggingFace)"),
        Option::text("--prompt", "TEXT", "the text a pretrained model reads"),
        Option::text("--lm-test", "phonebook|copy-text|shuffled-text", "a zero-shot test's prompt for a pretrained model"),
        Option::integer("--construction", "N", 0, 1, 8, "the copy paper's two-layer construction of n-gram order N", "none"),
        Option::integer("--letters", "K", 26, 2, 52, "the construction's alphabet"),
        Option::text("--input", "LETTERS", "the copy input", "a random one"),
        Option::integer("--length", "L", 0, 1, 4000, "the input's length (letters, pairs, entries)",
                        "the model's task.max_len; the construction's 40; a zero-shot test's 10"),
        Option::integer("--seed", "S", 1, 0, kMaxSeed, "the input's seed (and the runs')"),
        Option::flag("--repeat-ngram", "a copy input with a repeated n-gram"),
        kJson,
        Option::text("--figure", "NAME", "the view to render"),
        Option::text("--out", "FILE", "the figure's file (.png, .pdf, .svg or .csv)"),
        Option::integer("--layer", "L", -1, 0, 1000, "the view's layer", "the last block"),
        Option::integer("--head", "H", -1, 0, 1000, "the view's head", "the strongest lookup head"),
        Option::flag("--log", "a logarithmic colour scale"),
        Option::text("--size", "WxH", "the figure's size in points", "900x800")}
    + kFigureStyle
    + std::vector<Option>{
        Option::text("--lengths", "L,...", "the lengths of --state-sweep and --figure construction",
                     "the task's eval_lengths; the construction's 10,25,50,100,150,200"),
        Option::integer("--samples", "N", 100, 1, 100000, "examples per point of a run or the capacity figure"),
        Option::text("--ablate", "L.H[,L.H...]", "the heads to switch off"),
        Option::text("--ablation", "zero|mean", "how a head is switched off", "zero"),
        Option::flag("--head-importance", "switch each head off alone over --samples examples"),
        Option::text("--task", "T", "the task --head-importance measures", "the model's own"),
        Option::text("--state-sweep", "dims|channels|bits", "shrink the SSM state and measure copying"),
        Option::text("--values", "8,4,2", "the settings --state-sweep tries",
                     "dims d_state/2, d_state/4, ..., 1; channels 1/2 ... 1/16; bits 16, 8, 4, 2, 1"),
    };

const std::vector<Option> kCheckpointInfoOptions{kJson};

const std::vector<Option> kRunsOptions{
    Option::text("--dir", "DIR", "the folder the runs are under"),
    kJson,
    Option::flag("--table", "the tasks x models results table"),
    Option::text("--at", "in-range|longest", "the length the table grades", "in-range"),
};

const std::vector<Option> kCompareOptions = std::vector<Option>{
        Option::text("--runs", "DIR...", "the run folders to overlay"),
        Option::text("--figure", "NAME", "the figure to draw"),
        Option::text("--out", "FILE", "the figure's file (.png, .pdf, .svg or .csv)"),
        Option::text("--size", "WxH", "the figure's size in points", "800x500"),
        kLog,
        kPrecision}
    + kFigureStyle;

const std::vector<Option> kExportOptions = std::vector<Option>{
        Option::text("--run", "DIR", "a run folder, or a folder of runs"),
        Option::text("--figure", "NAME", "the figure to draw"),
        Option::text("--out", "FILE", "the figure's file"),
        kLog,
        kPrecision,
        Option::text("--size", "WxH", "the figure's size in points", "800x500; panel 1400x500; mechanisms 800x700")}
    + kFigureStyle;

const std::vector<Option> kGenerateOptions{
    Option::text("--model", "DIR|ORG/NAME", "a pretrained model's folder, or a hub id in the HuggingFace cache"),
    Option::text("--prompt", "TEXT", "the text to continue"),
    Option::integer("--max-new-tokens", "N", 64, 0, 100000, "at most this many tokens"),
    kJson,
};

const std::vector<Option> kLmEvalOptions = std::vector<Option>{
        Option::text("--model", "DIR", "a pretrained model's folder (repeatable)"),
        Option::text("--task", "TEST", "phonebook, copy-text, shuffled-text, squad or perplexity"),
        Option::text("--sizes", "10,20,40,80", "the sizes to test at", "the test's own"),
        Option::text("--data", "FILE", "squad's question set, or perplexity's text", "the bundled one"),
        Option::text("--figure", "NAME", "loss-vs-retrieval: each model at (perplexity, accuracy)"),
        Option::text("--text", "TEXT.txt", "the figure's perplexity text", "Alice's Adventures in Wonderland"),
        Option::integer("--window", "N", 1024, 2, 1 << 20, "perplexity's window in tokens (at most the model's context)"),
        Option::integer("--tokens", "N", 8192, 0, 1 << 30, "perplexity over the text's first N tokens; 0: the whole text"),
        Option::integer("--at", "SIZE", 0, 0, 100000000, "the figure's size", "the largest every model was tested at"),
        Option::integer("--samples", "N", 20, 1, 100000, "prompts (or paragraphs) per size"),
        Option::integer("--seed", "S", 1234, 0, kMaxSeed, "the prompts' seed"),
        kJson,
        Option::text("--out", "FIG", "the figure's file (.png, .pdf, .svg or .csv)"),
        Option::text("--size", "WxH", "the figure's size in points", "800x500")}
    + kFigureStyle;

const std::vector<Option> kJsonOnly{kJson};

const std::vector<Option> kWindowOptions{
    Option::text("--preset", "NAME", "the experiment to open", "the default preset"),
    kSet,
    Option::text("--screenshot", "FILE", "save the window as PNG and exit"),
    Option::flag("--train", "start training the experiment at once"),
    Option::text("--experiment", "SWEEP", "open the Experiments tab on a bundled sweep"),
    Option::text("--sweep-dir", "DIR", "the sweep's folder"),
    Option::flag("--run-sweep", "run the sweep"),
    Option::flag("--results-table", "show the sweep's results table instead of its figure"),
    Option::text("--tab", "train|experiments|explore|inspect|pretrained", "the tab in front", "Explore, or the tab the other options show"),
    Option::text("--inspect", "FILE", "open the Inspect tab on a checkpoint file"),
    Option::text("--pretrained", "DIR", "open the Pretrained tab on a HuggingFace model folder (repeatable)"),
    Option::text("--theme", "system|light|dark", "the window's theme", "Edit → Preferences"),
    Option::text("--layout", "NAME", "a layout saved with View → Save layout", "the last session's"),
    Option::flag("--fresh-layout", "the default layout instead of the last session's"),
    Option::text("--screenshot-at-step", "N", "with --screenshot: train and save the window at step N"),
    Option::flag("--measure-latency", "print the GUI thread's stalls to stderr on close"),
};

}  // namespace

// One entry a command, in the order --help lists them: a table written as data, longer than a
// screen because there are that many commands.
const std::vector<Command>& commands()
{
    static const std::vector<Command> table{
        {"presets", {{{"presets"}, {"list the bundled experiment presets"}}}, Widgets::None, cmdPresets, {}, false},
        {"models", {{{"models [{--json}]"}, {"list the model families, their options and defaults"}}}, Widgets::None, cmdModels, kJsonOnly, false},
        {"tasks", {{{"tasks [{--json}]"}, {"list the tasks, their options and defaults"}}}, Widgets::None, cmdTasks, kJsonOnly, false},
        {"sample",
         {{{"sample [{--task} | {--preset} | {--config}] [--set KEY=VALUE]...",
            "       [{--count}] [{--length}] [{--seed}] [{--json}]"},
           {"print generated examples of a task, answers marked"}}},
         Widgets::None, cmdSample, kSampleOptions, false},
        {"config",
         {{{"config ({--preset} | {--config}) [--set KEY=VALUE]... [{--match-params}]"},
           {"print the fully resolved configuration as JSON"}},
          {{"config {--describe} [{--json}]"}, {"every numeric setting: its key, label, range, default", "and what it does"}}},
         Widgets::None, cmdConfig, kConfigOptions, false},
        {"train",
         {{{"train ({--preset} | {--config}) {--out} [{--steps}] [{--seed}]", "      [{--set}]..."},
           {"train and write a run folder (config.json,", "metrics.csv, curves.json, checkpoints/)"}},
          {{"train {--resume} [{--steps}] [{--extend-schedule}]", "      [--set train.KEY=VALUE]..."},
           {"go on with a stopped, killed or finished run where", "its last autosave left it (bit for bit on the CPU);",
            "--steps N past its total needs --extend-schedule"}}},
         Widgets::None, cmdTrain, kTrainOptions},
        {"eval",
         {{{"eval {--checkpoint} {--lengths} [{--samples}] [{--seed}] [{--json}]"},
           {"accuracy (or in-context error) of a checkpoint"}}},
         Widgets::None, cmdEval, kEvalOptions},
        {"sweep",
         {{{"sweep ({--config} | {--preset}) {--out} [{--jobs}] [{--print-commands}]", "      [{--thorough}] [{--scale}] [{--set}]..."},
           {"run a grid of experiments, resumable; or print one", "independent command per unfinished run; --set",
            "changes every run (e.g. train.steps=100 for a quick look);", "--thorough trains each model at every learning rate",
            "of a grid (Zoology's, or the file's \"thorough\") and 3 seeds", "and shows it at the rate best on held-out prompts;",
            "--scale paper: the paper's string lengths and model", "sizes, sized for one GPU"}},
          {{"sweep ({--config} | {--preset}) {--out} {--slurm} [{--cluster}] [{--thorough}] [{--scale}]",
            "      [{--partition}] [{--account}] [{--time}] [{--cpus-per-task}] [{--mem}] [{--gres}]",
            "      [{--sbatch-lines}] [{--executable}] [{--save-cluster}] [{--set}]..."},
           {"submit the unfinished runs (not queued or running) as", "one Slurm job array; prints its job id; each task",
            "resumes its run from its autosave; --save-cluster", "keeps the options as a named profile"}},
          {{"sweep {--status} [{--json}]"}, {"every run: pending, running, finished, failed,", "diverged or cancelled, with its step and accuracy"}},
          {{"sweep {--cancel}"}, {"scancel the sweep's queued and running Slurm jobs"}}},
         Widgets::None, cmdSweep, kSweepOptions, false, "--slurm-task"},
        {"inspect",
         {{{"inspect ({--checkpoint} | {--bundled} | {--construction} [{--letters}])",
            "        [{--input} | {--length} {--seed} [{--repeat-ngram}]] [{--json}]"},
           {"attention heads on a copy input (a model of another", "task: an example of its task, L its pairs or letters):",
            "n-gram lookup scores (n = 1..8) and a label per head"}},
          {{"inspect {--model} ({--prompt} | {--lm-test}", "        [{--length}] [{--seed}]) [{--json}]"},
           {"a pretrained model (HuggingFace folder) on a text prompt:", "its heads' lookup scores, copyable tokens predicted,",
            "its greedy answer; --figure as below"}},
          {{"inspect ... {--ablate} [{--ablation}]"},
           {"switch heads off at forward time (attention's, or", "Mamba-2's and Gated DeltaNet's; weights untouched): the",
            "answers before and after, and with --figure the views", "of the ablated model"}},
          {{"inspect ... {--head-importance} [{--task}] [{--length}] [{--samples}] [{--seed}]", "        [{--ablation}] [{--json}] [{--out}]"},
           {"each head switched off alone over N examples: the drop", "in answers and tokens right (± standard errors), sorted,",
            "with its lookup label; --out: the layer x head heatmap"}},
          {{"inspect ({--checkpoint} | --bundled mamba) {--state-sweep}", "        ({--out} | {--json}) [{--values}] [{--lengths}] [{--samples}]"},
           {"copy accuracy against length with the SSM state shrunk", "(first k of d_state, a fraction of the channels, or",
            "b-bit entries), beside the copy bound for each state"}},
          {{"inspect ... --figure attention|implicit|state|delta {--out} [{--layer}] [{--head}]", "        [{--log}] [{--size}]"},
           {"render a view (default: the strongest lookup head,", "the last block) to PNG, PDF, SVG or CSV"}},
          {{"inspect ... --figure capacity {--out}"}, {"the model's state against the bound, its longest copy"}},
          {{"inspect {--construction} --figure construction {--out} [--lengths 10,50,200]", "        [{--samples}]"},
           {"the construction's accuracy for n-3..n vs the bound"}}},
         Widgets::FigureOption, cmdInspect, kInspectOptions},
        {"info",
         {{{"info FILE [{--json}]"},
           {"what a checkpoint file is (format, architecture, tensors", "with mean/std/min/max, config), whether the app runs it,",
            "and if not why; exit code 2 when it cannot"}}},
         Widgets::None, cmdInfo, kCheckpointInfoOptions, false},
        {"runs",
         {{{"runs {--dir} [{--json}]"}, {"list the runs under DIR with their final results"}},
          {{"runs {--dir} {--table} [{--at}]"},
           {"tasks x models graded pass / partial / fail (like", "Park et al.'s Table 1), seeds averaged"}}},
         Widgets::None, cmdRuns, kRunsOptions, false},
        {"compare",
         {{{"compare {--runs} --figure " + figureIds(CompareFigure).join('|'),
            "        --out FILE.(png|pdf|svg|csv) [--size {=--size}] [{--log}] [{--precision}]"},
           {"overlay runs as a figure, without a display"}}},
         Widgets::Figures, cmdCompare, kCompareOptions, false},
        {"export",
         {{wrappedChoices("export --run DIR --figure ", figureIds(ExportFigure),
                          " --out FILE.(png|pdf|svg|csv) [{--size}] [{--dpi}] [{--font-size}]")
               + QStringList{"       [{--line-width}] [{--log}]"},
           {"a run's (or every run's under DIR) figure for a paper:", "panel = loss beside accuracy in one figure; table = the",
            "graded results table as CSV; mechanisms = one run's loss", "above every head's lookup score (mechanisms.csv),",
            "one step axis. --dpi, --font-size and", "--line-width also work for compare and inspect --figure.",
            "--size, --font-size and --line-width are in points", "(1/72 inch) in every format; a PNG is size x dpi / 72",
            "pixels (800x500 at the default {=--dpi} dpi: 2133x1333)"}}},
         Widgets::Figures, cmdExport, kExportOptions},
        {"generate",
         {{{"generate {--model} {--prompt} [{--max-new-tokens}] [{--json}]"},
           {"greedy continuation by a pretrained model folder", "(Pythia / GPT-NeoX or Mamba: config.json,", "tokenizer.json, weights), or a hub id found in",
            "the HuggingFace cache (HF_HUB_CACHE, HF_HOME)"}}},
         Widgets::None, cmdGenerate, kGenerateOptions},
        {"lm-eval",
         {{{"lm-eval {--model} [--model DIR2]... --task phonebook|copy-text|shuffled-text",
            "        [{--sizes}] [{--samples}] [{--seed}] [{--json}]", "        [--out FIG.(png|pdf|svg|csv) [{--size}] [{--dpi}]]"},
           {"the copy paper's zero-shot tests of pretrained models:", "accuracy against phone-book entries or text tokens"}},
          {{"lm-eval --model DIR... --task squad [--data SQUAD.json] [--sizes 100,200,400]", "        [{--samples}] [{--seed}] [{--json}] [{--out}]"},
           {"question answering as the paper runs it: exact match", "and F1 by paragraph length (buckets between the",
            "sizes, in each model's tokens); the bundled set by default"}},
          {{"lm-eval --model DIR... --task perplexity [--data TEXT.txt] [{--window}] [{--tokens}] [{--json}]"},
           {"each model's loss and perplexity on a text (Alice by", "default; its first {=--tokens} tokens unless --tokens 0)"}},
          {{"lm-eval --model DIR... {--task} [--sizes ...] --figure loss-vs-retrieval {--out}", "        [{--at}] [{--text}]"},
           {"the paper's point drawn: each model at (perplexity,", "its accuracy on TEST at one size)"}}},
         Widgets::FigureOption, cmdLmEval, kLmEvalOptions},
        {"",
         {{{"{--screenshot} [{--preset}] [{--set}]..."}, {"open the window, save it as PNG, exit"}},
          {{"{--screenshot} {--screenshot-at-step} [{--preset}]"},
           {"train the experiment in the window and save it as", "PNG at step N (docs/make.sh's Train tab)"}},
          {{"(no command) [{--preset}] [{--set}]... [CHECKPOINT]"}, {"open the window on that experiment"}},
          {{"(no command) CHECKPOINT --tab explore"}, {"open the checkpoint and look inside it in the Explore", "tab's left pane"}},
          {{"(no command) {--inspect}"}, {"open the Inspect tab on a checkpoint file"}},
          {{"(no command) {--pretrained} [--pretrained DIR2]... [--tab explore]"},
           {"open the Pretrained tab on HuggingFace model folders;", "with --tab explore, look inside the first beside one of",
            "the other architecture on a phone book"}},
          {{"(no command) {--tab}"},
           {"open on that tab (default: Explore, or the tab the", "other options show)"}},
          {{"(no command) {--theme}"},
           {"the window's theme (default: Edit → Preferences; system", "follows the desktop's palette); exports stay white"}},
          {{"(no command) {--measure-latency}"},
           {"print the GUI thread's longest and 99th-percentile", "stall to stderr on close; also", "PARROTSCOPE_MEASURE_LATENCY=1"}},
          {{"(no command) {--layout} | {--fresh-layout}"},
           {"open with a layout saved with View → Save layout, or", "with the default one instead of the last session's"}},
          {{"(no command) {--experiment} [{--sweep-dir}] [{--run-sweep}] [{--results-table}]"},
           {"open the Experiments tab on a bundled sweep (its", "figure, or results table, from DIR), optionally run it"}}},
         Widgets::Window, runWindow, kWindowOptions},
    };
    return table;
}

const std::vector<Option>& sharedOptions()
{
    static const std::vector<Option> shared{
        Option::integer("--threads", "N", 0, 0, 4096, "torch threads", "all cores"),
        Option::text("--device", "auto|cpu|cuda[:N]", "where models run", "auto"),
        Option::text("--dtype", "auto|float32|float16|bfloat16", "how a pretrained model's matrices are held", "auto"),
    };
    return shared;
}

namespace {

// What runCommand reads before the command: the shared options and those that ask about the app.
const std::vector<Option>& startOptions()
{
    static const std::vector<Option> start = sharedOptions() + std::vector<Option>{
        Option::flag("--help", "print the help"), Option::flag("-h", "print the help"),
        Option::flag("--markdown", "with --help: as Markdown"), Option::flag("--version", "print the version"),
        Option::flag("--diagnostics", "print versions, BLAS, threads and device")};
    return start;
}

}  // namespace

std::vector<Option> declaredOptions(const Command& c)
{
    return c.options + sharedOptions();
}

Args argsFor(const QString& name, const QStringList& args)
{
    for (const Command& c : commands())
        if (c.name == name) return Args(args, declaredOptions(c));
    throw std::logic_error(qPrintable("no command " + name));
}

namespace {

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

bool runsModelMath(const QStringList& argv)
{
    const Command& c = commandFor(argv);
    const bool math = c.modelMath || (!c.modelMathOption.isEmpty() && argv.contains(c.modelMathOption));
    return math && !asksAbout(argv) && mistypedCommand(argv).isEmpty();
}

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


int runCommand(const Command& command, const QStringList& argv)
{
    try {
        // the window reads --threads itself: without it, the count set in Preferences
        if (command.name.isEmpty() && !asksAbout(argv)) {
            Args a(argv.mid(1), declaredOptions(command));
            return command.run(a);
        }
        Args a(argv.mid(1), startOptions());
        configureThreads(a.integer("--threads"));
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
        Args args(rest, declaredOptions(command));
        args.value("--threads");  // applied above
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
