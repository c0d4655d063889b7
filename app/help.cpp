// `--help` and `--help --markdown`, written from the command table (commands.cpp): each command's
// usage lines with its declared options written out, and in the Markdown (the user guide's command
// reference) each option with what it does, its default and its range.
#include "commands.h"

#include <QRegularExpression>

#include <algorithm>
#include <stdexcept>

namespace parrot {

namespace {

// `text` with each {--name} written out as "--name VALUE" and each {=--name} as its default, from
// `options`; a name that is not declared there is a mistake in the command table.
QString expanded(const QString& text, const std::vector<Option>& options)
{
    static const QRegularExpression placeholder("\\{(=?)(--[a-z0-9-]+)\\}");
    QString result;
    qsizetype last = 0;
    for (auto it = placeholder.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const auto o = std::find_if(options.begin(), options.end(), [&](const Option& x) { return x.name == m.captured(2); });
        if (o == options.end()) throw std::logic_error(qPrintable("the command table names " + m.captured(2) + ", which is not declared"));
        result += text.mid(last, m.capturedStart() - last) + (m.captured(1).isEmpty() ? o->synopsis() : o->shownDefault());
        last = m.capturedEnd();
    }
    return result + text.mid(last);
}

std::vector<Usage> expanded(const std::vector<Usage>& usage, const std::vector<Option>& options)
{
    std::vector<Usage> all;
    for (const Usage& u : usage) {
        Usage e;
        for (const QString& s : u.synopsis) e.synopsis << expanded(s, options);
        for (const QString& s : u.summary) e.summary << expanded(s, options);
        all.push_back(e);
    }
    return all;
}

// The reference's list of a command's options: each with what it does, its default and range.
QString optionList(const std::vector<Option>& options)
{
    QString text;
    for (const Option& o : options) {
        QStringList facts;
        if (!o.shownDefault().isEmpty()) facts << "default: " + o.shownDefault();
        if (!o.shownRange().isEmpty()) facts << o.shownRange();
        text += "- `" + o.synopsis() + "`: " + o.help + (facts.isEmpty() ? QString() : " (" + facts.join("; ") + ")") + "\n";
    }
    return text;
}

// The options every command shares, listed around the window's in `--help`.
const std::vector<Usage> kSharedOptions{
    {{"{--threads}"}, {"torch threads (default: {=--threads})"}},
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

QString helpText()
{
    QString text = "Usage: parrotscope [COMMAND] [OPTIONS]\n\n"
                   "Without a command, opens the Parrotscope window on its default experiment.\n\n"
                   "Commands:\n";
    const Command* window = nullptr;
    for (const Command& c : commands()) {
        if (c.name.isEmpty()) window = &c;
        else text += helpLines(expanded(c.usage, declaredOptions(c)));
    }
    text += "\nOptions:\n" + helpLines(expanded(kSharedOptions, sharedOptions()));
    if (window) text += helpLines(expanded(window->usage, declaredOptions(*window)));
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
        else text += QString("### %1\n\n").arg(c.name) + usages(expanded(c.usage, declaredOptions(c)))
                     + (c.options.empty() ? QString() : "Options:\n\n" + optionList(c.options) + "\n");
    }
    if (window)
        text += "### The window (no command)\n\n" + options(expanded(window->usage, declaredOptions(*window))) + "\nOptions:\n\n"
                + optionList(window->options) + "\n";
    return text + "### Every command\n\n" + options(expanded(kSharedOptions, sharedOptions())) + options(kInfoOptions) + "\nOptions:\n\n"
           + optionList(sharedOptions());
}
}  // namespace parrot
