// The parrotscope executable, headless: each subcommand as a user types it.
#include "base/experiments/sweep.h"
#include "base/presets.h"
#include "testutil.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QSet>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

namespace {

using Result = parrot::test::CliResult;
Result run(const QStringList& args, int timeoutMs = 300000) { return parrot::test::runCli(args, timeoutMs); }
void expectError(const Result& r, const QString& what) { parrot::test::expectCliError(r, what); }

}  // namespace

class TestCli : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void versionHelpDiagnostics()
    {
        const Result v = run({"--version"});
        QCOMPARE(v.code, 0);
        QVERIFY(QRegularExpression("^parrotscope \\d+\\.\\d+\\.\\d+\\n$").match(v.out).hasMatch());
        const Result h = run({"--help"});
        QCOMPARE(h.code, 0);
        for (const char* word : {"train", "eval", "config", "presets", "--set", "--screenshot", "--threads"})
            QVERIFY2(h.out.contains(word), word);
        const Result d = run({"--diagnostics", "--threads", "1"});
        QCOMPARE(d.code, 0);
        for (const char* word : {"Qt:", "LibTorch:", "BLAS:", "Device:"}) QVERIFY2(d.out.contains(word), word);
        QVERIFY2(d.out.contains("Threads:  1 of"), qPrintable(d.out));
        QVERIFY(run({"--diagnostics"}).out.contains(QString("Threads:  %1 of").arg(QThread::idealThreadCount())));
        // the kernels' vector builds, capped by PARROT_CPU_KERNELS so another CPU's paths run here
        qputenv("PARROT_CPU_KERNELS", "baseline");
        const Result capped = run({"--diagnostics"});
        qputenv("PARROT_CPU_KERNELS", "sse9");
        const Result unknown = run({"--diagnostics"});
        qunsetenv("PARROT_CPU_KERNELS");
        QVERIFY2(capped.out.contains("Kernels:  scan baseline, attention baseline, 16-bit weights baseline (PARROT_CPU_KERNELS=baseline)"),
                 qPrintable(capped.out));
        QVERIFY2(unknown.code == 0 && unknown.err.contains("PARROT_CPU_KERNELS=sse9 is not one of best, avx2, baseline"), qPrintable(unknown.err));
        QVERIFY2(run({"--diagnostics"}).out.contains("Kernels:  scan "), qPrintable(d.out));
    }

    // OpenMP reads GOMP_SPINCOUNT when it loads (libgomp prints what it read, once per start, with
    // OMP_DISPLAY_ENV=VERBOSE): a command that runs a model starts a second time, with the short
    // spin; one that only lists or reads files starts once; a setting the user made stands.
    void modelCommandsStartWithOpenMpsSettings()
    {
        const auto starts = [](const QStringList& args, const QByteArray& spin = {}) {
            qunsetenv("OMP_WAIT_POLICY");
            qputenv("OMP_DISPLAY_ENV", "VERBOSE");
            if (spin.isEmpty()) qunsetenv("GOMP_SPINCOUNT");
            else qputenv("GOMP_SPINCOUNT", spin);
            const Result r = run(args);
            qunsetenv("OMP_DISPLAY_ENV");
            qunsetenv("GOMP_SPINCOUNT");
            static const QRegularExpression read("GOMP_SPINCOUNT = '(\\d+)'");
            QStringList seen;
            for (auto it = read.globalMatch(r.err); it.hasNext();) seen << it.next().captured(1);
            return seen;
        };
        QCOMPARE(starts({"inspect", "--bundled", "hard-alibi", "--input", "ab"}), QStringList({"300000", "20000"}));
        QCOMPARE(starts({"presets"}), QStringList({"300000"}));
        QCOMPARE(starts({"config", "--preset", "copy-tiny"}), QStringList({"300000"}));
        QCOMPARE(starts({"train", "--help"}), QStringList({"300000"}));
        // a sweep starts its runs as processes, but a Slurm array task trains its run itself
        QCOMPARE(starts({"sweep", "--status", m_dir.filePath("no-sweep")}), QStringList({"300000"}));
        QCOMPARE(starts({"sweep", "--slurm-task", "0", "--list", m_dir.filePath("no-list.txt")}), QStringList({"300000", "20000"}));
        QCOMPARE(starts({"inspect", "--bundled", "hard-alibi", "--input", "ab"}, "1000"), QStringList({"1000"}));
    }

    // The commands named on the `parrotscope …` lines of the first ```sh block after `heading` in a
    // doc of the source tree.
    static QStringList commandsInBlock(const QString& doc, const QString& heading)
    {
        QFile file(QStringLiteral(PARROT_SOURCE_DIR) + "/" + doc);
        if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
        const QString text = QString::fromUtf8(file.readAll());
        const qsizetype section = text.indexOf("\n" + heading + "\n");
        const qsizetype begin = section < 0 ? -1 : text.indexOf("```sh\n", section);
        const qsizetype end = begin < 0 ? -1 : text.indexOf("\n```", begin + 1);
        if (end < 0) return {};
        QStringList names;
        for (const QString& line : text.mid(begin, end - begin).split('\n')) {
            const QStringList words = line.split(' ', Qt::SkipEmptyParts);
            if (words.size() > 1 && words[0] == "parrotscope" && !words[1].startsWith('-') && !names.contains(words[1]))
                names << words[1];
        }
        return names;
    }

    // The command table (app/commands.cpp) is what --help lists and what runs: each command in
    // the help reaches its own strict parser; the user guide's examples (docs/guide/command-line.md)
    // name exactly those commands, and the README's short list names only those.
    void everyCommandIsInTheHelpAndTheGuide()
    {
        const Result h = run({"--help"});
        QCOMPARE(h.code, 0);
        const QString commandsPart = h.out.section("\nCommands:\n", 1).section("\n\nOptions:\n", 0, 0);
        QStringList inHelp;
        static const QRegularExpression commandLine("^  ([a-z]+(?:-[a-z]+)?)\\b");
        for (const QString& line : commandsPart.split('\n')) {
            const QRegularExpressionMatch m = commandLine.match(line);
            if (m.hasMatch() && !inHelp.contains(m.captured(1))) inHelp << m.captured(1);
        }
        QVERIFY2(inHelp.size() >= 13, qPrintable(h.out));
        for (const QString& name : inHelp)
            expectError(run({name, "--no-such-option"}), "unexpected argument '--no-such-option'");

        const QStringList inGuide = commandsInBlock("docs/guide/command-line.md", "## Examples");
        QVERIFY2(!inGuide.isEmpty(), "docs/guide/command-line.md has no ```sh block under ## Examples");
        for (const QString& name : inGuide) QVERIFY2(inHelp.contains(name), qPrintable("the guide's examples name an unknown command: " + name));
        for (const QString& name : inHelp) QVERIFY2(inGuide.contains(name), qPrintable("the guide's examples lack: " + name));
        const QStringList inReadme = commandsInBlock("README.md", "## Command line");
        QVERIFY2(inReadme.size() >= 5, "README's Command line block names too few commands");
        for (const QString& name : inReadme) QVERIFY2(inHelp.contains(name), qPrintable("README names an unknown command: " + name));

        // and the guide's reference is the table itself, as --help --markdown prints it
        const Result md = run({"--help", "--markdown"});
        QCOMPARE(md.code, 0);
        QFile guide(QStringLiteral(PARROT_SOURCE_DIR) + "/docs/guide/command-line.md");
        QVERIFY(guide.open(QIODevice::ReadOnly | QIODevice::Text));
        const QString text = QString::fromUtf8(guide.readAll());
        const qsizetype begin = text.indexOf("\n", text.indexOf("<!-- BEGIN: generated by \"parrotscope --help --markdown\"")) + 1;
        const qsizetype end = text.indexOf("<!-- END: generated -->");
        QVERIFY(begin > 0 && end > begin);
        QVERIFY2(text.mid(begin, end - begin) == md.out, "docs/guide/command-line.md's reference is stale: run bash docs/make.sh");
        for (const QString& name : inHelp) QVERIFY2(md.out.contains("### " + name + "\n"), qPrintable(name));
    }

    // The reference states each option's default and range from the declaration the parser reads
    // it through: what it says is what a command does without the option, and what it refuses.
    void theReferenceStatesTheParsersDefaults()
    {
        const Result md = run({"--help", "--markdown"});
        QCOMPARE(md.code, 0);
        // the line of `option` in `command`'s section of the reference
        const auto line = [&md](const QString& command, const QString& option) {
            const QString section = md.out.section("### " + command + "\n", 1).section("\n### ", 0, 0);
            for (const QString& l : section.split('\n'))
                if (l.startsWith("- `" + option + " ")) return l;
            return QString();
        };
        static const QRegularExpression facts("\\(default: (\\d+); (\\d+)\\.\\.(\\d+)\\)$");
        const QRegularExpressionMatch count = facts.match(line("sample", "--count"));
        QVERIFY2(count.hasMatch(), qPrintable(md.out.left(2000)));
        const Result samples = run({"sample", "--task", "copy", "--json"});
        QCOMPARE(samples.code, 0);
        QCOMPARE(QJsonDocument::fromJson(samples.out.toUtf8()).array().size(), count.captured(1).toInt());
        const QRegularExpressionMatch letters = facts.match(line("inspect", "--letters"));
        QVERIFY2(letters.hasMatch(), qPrintable(line("inspect", "--letters")));
        const QString above = QString::number(letters.captured(3).toInt() + 1);
        expectError(run({"inspect", "--construction", "3", "--letters", above}),
                    QString("--letters: expected an integer in %1..%2, got '%3'").arg(letters.captured(2), letters.captured(3), above));
        // the same option declared with another default in another command says so
        QVERIFY2(line("eval", "--seed").contains("(default: 1234;"), qPrintable(line("eval", "--seed")));
        QVERIFY2(line("sample", "--seed").contains("(default: 1;"), qPrintable(line("sample", "--seed")));
    }

    // Every task, model family and preset the app lists has its row in the user guide, and every
    // row there is one the app lists: the guide's tables cannot drift from `tasks --json`,
    // `models --json` and `presets`.
    void theGuideListsEveryTaskFamilyAndPreset()
    {
        const auto rows = [](const QString& doc, const QString& heading) {
            QFile file(QStringLiteral(PARROT_SOURCE_DIR) + "/docs/guide/" + doc);
            QStringList kinds;
            if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return kinds;
            const QString text = QString::fromUtf8(file.readAll());
            const qsizetype begin = heading.isEmpty() ? 0 : text.indexOf("\n" + heading + "\n");
            if (begin < 0) return kinds;
            const qsizetype next = heading.isEmpty() ? -1 : text.indexOf("\n## ", begin + 1);
            static const QRegularExpression row("^\\| `([a-z0-9_-]+)`[^|]*\\|", QRegularExpression::MultilineOption);
            for (auto m = row.globalMatch(text.mid(begin, next < 0 ? -1 : next - begin)); m.hasNext();) kinds << m.next().captured(1);
            return kinds;
        };
        const auto names = [this](const QString& command) {
            const Result r = run({command, "--json"});
            QStringList out;
            for (const auto v : QJsonDocument::fromJson(r.out.toUtf8()).array()) out << v.toObject()["kind"].toString();
            return out;
        };
        const QStringList tasks = names("tasks"), families = names("models");
        QVERIFY(tasks.size() >= 20 && families.size() >= 7);
        QStringList taskRows = rows("tasks-and-models.md", "## Tasks"), familyRows = rows("tasks-and-models.md", "## Model families");
        std::sort(taskRows.begin(), taskRows.end());
        std::sort(familyRows.begin(), familyRows.end());
        QStringList sortedTasks = tasks, sortedFamilies = families;
        std::sort(sortedTasks.begin(), sortedTasks.end());
        std::sort(sortedFamilies.begin(), sortedFamilies.end());
        QCOMPARE(taskRows, sortedTasks);
        QCOMPARE(familyRows, sortedFamilies);
        const QStringList presetRows = rows("presets.md", "");
        const Result p = run({"presets"});
        QCOMPARE(p.code, 0);
        for (const QString& name : parrot::presetNames() + parrot::sweepPresetNames())
            QVERIFY2(presetRows.contains(name), qPrintable("docs/guide/presets.md has no row for " + name));
        for (const QString& name : presetRows)
            QVERIFY2(parrot::presetNames().contains(name) || parrot::sweepPresetNames().contains(name), qPrintable("presets.md names an unknown preset: " + name));
    }

    // A mistyped command or option is a one-line error, never a window.
    void unknownCommandsAndOptionsAreOneLineErrors()
    {
        // named with the closest command, exit 2, without a display (QT_QPA_PLATFORM unset: no
        // application object is made before the check)
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("QT_QPA_PLATFORM");
        env.remove("DISPLAY");
        env.remove("WAYLAND_DISPLAY");
        p.setProcessEnvironment(env);
        p.start(PARROT_EXE, {"trian", "--preset", "copy-tiny"});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 2);
        QCOMPARE(QString::fromUtf8(p.readAllStandardError()).trimmed(),
                 QString("parrotscope: error: 'trian' is not a command; did you mean 'train'? (see parrotscope --help)"));
        expectError(run({"evl", "--checkpoint", "x"}), "'evl' is not a command; did you mean 'eval'?");
        expectError(run({"zzzzzz"}), "'zzzzzz' is not a command (see parrotscope --help)");
        expectError(run({"no-such-file.safetensors"}), "no-such-file.safetensors: no such command or file");
        expectError(run({"--no-such-option"}), "unexpected argument '--no-such-option'");
        expectError(run({"--threads", "2", "--preset"}), "--preset: expects a value");
        expectError(run({"--tab", "plots"}), "--tab: expected train, experiments, explore, inspect or pretrained");
        expectError(run({"--threads", "many"}), "--threads: expected an integer");
    }

    void presetsAreListed()
    {
        const Result r = run({"presets"});
        QCOMPARE(r.code, 0);
        // the single-run presets, then a blank line and the bundled sweeps under their heading
        const QStringList blocks = r.out.trimmed().split("\n\n");
        QCOMPARE(blocks.size(), 2);
        QCOMPARE(blocks[0].split('\n').size(), parrot::presetNames().size());
        QVERIFY(blocks[1].startsWith("sweeps") && blocks[1].contains("length-generalisation"));
        QVERIFY(r.out.contains("copy-hard-alibi") && r.out.contains("[default]") && r.out.contains("copy-tiny"));
    }

    void modelsListsEveryFamily()
    {
        const Result r = run({"models", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonArray families = QJsonDocument::fromJson(r.out.toUtf8()).array();
        QStringList kinds;
        for (const auto f : families) kinds << f.toObject()["kind"].toString();
        QCOMPARE(kinds, (QStringList{"transformer", "mamba", "mamba2", "gated_deltanet", "lstm", "s4d", "s4_mamba", "hybrid", "mambaformer"}));
        const QJsonObject mamba = families[1].toObject()["options"].toObject();
        QCOMPARE(mamba["d_state"].toInt(), 16);
        QCOMPARE(mamba["d_conv"].toInt(), 4);
        const QJsonObject mamba2 = families[2].toObject()["options"].toObject();
        QCOMPARE(mamba2["head_dim"].toInt(), 16);
        QCOMPARE(mamba2["n_groups"].toInt(), 1);
        QCOMPARE(mamba2["chunk_size"].toInt(), 64);
        const QJsonObject deltaNet = families[3].toObject()["options"].toObject();
        QCOMPARE(deltaNet["forget_gate"].toBool(false), true);
        QVERIFY(!deltaNet.contains("d_state") && !deltaNet.contains("n_groups"));
        QCOMPARE(families[0].toObject()["positions"].toArray().size(), 5);
        const Result text = run({"models"});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("mambaformer") && text.out.contains("--set model.kind=KIND"));
    }

    void anyFamilyTrainsFromTheCommandLine()
    {
        const QString out = m_dir.filePath("mamba-run");
        const Result t = run({"train", "--preset", "copy-tiny", "--out", out, "--steps", "5", "--set", "model.kind=mamba",
                              "--set", "model.d_state=8", "--set", "train.eval_every=0"});
        QVERIFY2(t.code == 0, qPrintable(t.err + t.out));
        QVERIFY(t.out.contains("training Mamba, 2 layers"));
        QVERIFY2(t.out.contains("state 5,632 floats"), qPrintable(t.out));  // 2 layers x 256 channels x (d_state 8 + conv 3)
        const Result e = run({"eval", "--checkpoint", out + "/checkpoints/last.safetensors", "--lengths", "4", "--json"});
        QVERIFY2(e.code == 0, qPrintable(e.err));
        QCOMPARE(QJsonDocument::fromJson(e.out.toUtf8()).object()["step"].toInt(), 5);
    }

    void anyTaskTrainsAndEvaluatesFromTheCommandLine()
    {
        const QString out = m_dir.filePath("suffix-run");
        const Result t = run({"train", "--preset", "copy-tiny", "--out", out, "--steps", "5", "--set", "task.kind=suffix_ngram",
                              "--set", "task.min_len=6", "--set", "task.max_len=10", "--set", "task.context_len=64",
                              "--set", "task.eval_lengths=8", "--set", "train.eval_every=0"});
        QVERIFY2(t.code == 0, qPrintable(t.err + t.out));
        QVERIFY2(t.out.contains("task: N-gram lookup, suffix key, string length 6..10"), qPrintable(t.out));
        const Result e = run({"eval", "--checkpoint", out + "/checkpoints/last.safetensors", "--lengths", "8,12", "--json"});
        QVERIFY2(e.code == 0, qPrintable(e.err));
        const QJsonObject o = QJsonDocument::fromJson(e.out.toUtf8()).object();
        QCOMPARE(o["task"].toString(), QString("suffix_ngram"));
        QCOMPARE(o["string_accuracy_stderr"].toArray().size(), 2);
        expectError(run({"eval", "--checkpoint", out + "/checkpoints/last.safetensors", "--lengths", "3"}), "n-gram lookup needs");
    }

    // --device on every command that runs a model: a device this machine cannot give is one line
    // naming why, before anything is written; the CPU always works; a sweep's runs get the choice.
    void deviceChoiceIsCheckedAndPassedOn()
    {
        const Result d = run({"--diagnostics", "--device", "cpu"});
        QCOMPARE(d.code, 0);
        QVERIFY2(d.out.contains("Device:   CPU"), qPrintable(d.out));
        expectError(run({"--device", "tpu", "presets"}), "unknown device 'tpu' (expected auto, cpu, cuda or cuda:N)");
        expectError(run({"train", "--preset", "copy-tiny", "--device", "cuda:x"}), "unknown device 'cuda:x'");
        // no machine has 999 GPUs: refused whether this LibTorch has CUDA or not, and nothing is created
        const QString out = m_dir.filePath("no-such-gpu");
        const Result far = run({"train", "--preset", "copy-tiny", "--out", out, "--steps", "2", "--device", "cuda:999"});
        expectError(far, "device 'cuda:999' asked for, but");
        QVERIFY2(far.err.contains("has no CUDA") || far.err.contains("no CUDA GPU is visible") || far.err.contains("this machine has"),
                 qPrintable(far.err));
        QVERIFY(!QFileInfo::exists(out));
        if (d.out.contains("has no CUDA") || d.out.contains("Device:   CPU\n")) {
            // no GPU here (CI, this project's machines): asking for CUDA says so
            const Result cuda = run({"--device", "cuda", "eval", "--checkpoint", "whatever.safetensors"});
            expectError(cuda, "device 'cuda' asked for");
            QVERIFY2(!cuda.err.contains("whatever"), qPrintable(cuda.err));  // the device is checked first
        }
        // leading or after the command, and the run records where it ran
        const QString cpuRun = m_dir.filePath("cpu-run");
        const Result t = run({"--device", "cpu", "train", "--preset", "copy-tiny", "--out", cpuRun, "--steps", "2", "--set",
                              "train.eval_every=0"});
        QVERIFY2(t.code == 0, qPrintable(t.err + t.out));
        const QByteArray config = parrot::test::readAll(cpuRun + "/config.json");
        const QJsonObject env = QJsonDocument::fromJson(config).object()["environment"].toObject();
        QVERIFY2(env["device"].toString().startsWith("CPU"), config.constData());
        // a sweep's printed commands carry the device
        const Result printed = run({"sweep", "--preset", "mad-suite", "--out", m_dir.filePath("device-sweep"), "--print-commands",
                                    "--device", "cpu"});
        QCOMPARE(printed.code, 0);
        for (const QString& line : printed.out.trimmed().split('\n')) QVERIFY2(line.endsWith("--device cpu"), qPrintable(line));
    }

    void configPrintsAResolvedConfigThatRoundTrips()
    {
        const Result r = run({"config", "--preset", "copy-tiny", "--set", "model.layers=3", "--set", "task.max_len=10"});
        QCOMPARE(r.code, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o["model"].toObject()["layers"].toInt(), 3);
        QCOMPARE(o["task"].toObject()["max_len"].toInt(), 10);
        const QString file = m_dir.filePath("resolved.json");
        QVERIFY(parrot::test::writeAll(file, r.out.toUtf8()));
        const Result again = run({"config", "--config", file});
        QCOMPARE(again.code, 0);
        QCOMPARE(again.out, r.out);
    }

    // config --describe lists the numeric settings from their one definition: each key is one
    // --set takes, and a value just outside its range is refused with that range.
    void configDescribesEveryNumericSetting()
    {
        const Result r = run({"config", "--describe", "--json"});
        QCOMPARE(r.code, 0);
        const QJsonArray fields = QJsonDocument::fromJson(r.out.toUtf8()).object()["fields"].toArray();
        QVERIFY(fields.size() > 30);
        QSet<QString> keys;
        for (const QJsonValue& v : fields) {
            const QJsonObject f = v.toObject();
            keys << f["key"].toString();
            QVERIFY2(!f["label"].toString().isEmpty() && !f["tip"].toString().isEmpty(), qPrintable(f["key"].toString()));
        }
        for (const char* key : {"model.d_model", "train.lr", "train.grad_clip", "task.noise_fraction", "seed"})
            QVERIFY2(keys.contains(key), key);
        for (const QJsonValue& v : fields) {
            const QJsonObject f = v.toObject();
            const QString key = f["key"].toString();
            if (key == "task.eval_lengths" || key.startsWith("task.")) continue;  // a task's own options apply to it only
            const bool real = f["type"].toString() == "real";
            const double below = real ? f["min"].toDouble() - (f["min_excluded"].toBool() ? 0 : 1e-3) : f["min"].toDouble() - 1;
            const Result bad = run({"config", "--preset", "copy-tiny", "--set",
                                    QString("%1=%2").arg(key, real ? QString::number(below, 'g', 10) : QString::number(qint64(below)))});
            QVERIFY2(bad.code != 0 && bad.err.contains(key), qPrintable(key + ": " + bad.err));
        }
        const Result text = run({"config", "--describe"});
        QCOMPARE(text.code, 0);
        QVERIFY(text.out.contains("train.lr") && text.out.contains("Learning rate, a positive number"));
    }

    // --match-params picks the width; the printed config has it, and the model is that size.
    void matchParamsPicksTheWidth()
    {
        const Result t = run({"config", "--preset", "copy-tiny"});
        const Result m = run({"config", "--preset", "copy-tiny", "--set", "model.kind=mamba", "--match-params", "transformer"});
        QCOMPARE(m.code, 0);
        QVERIFY2(m.err.contains("matched: d_model"), qPrintable(m.err));
        const QJsonObject o = QJsonDocument::fromJson(m.out.toUtf8()).object();
        QCOMPARE(o["model"].toObject()["kind"].toString(), QString("mamba"));
        const int width = o["model"].toObject()["d_model"].toInt();
        QVERIFY2(width != QJsonDocument::fromJson(t.out.toUtf8()).object()["model"].toObject()["d_model"].toInt(),
                 qPrintable(m.err));
        QCOMPARE(width % 8, 0);
        // past the 20M that a model is usually built up to for counting (the GPU check's 50M Mamba)
        const Result big = run({"config", "--preset", "copy-tiny", "--set", "model.kind=mamba", "--set", "model.layers=8",
                                "--match-params", "50000000"});
        QVERIFY2(big.code == 0, qPrintable(big.err));
        const QRegularExpressionMatch got = QRegularExpression("gives (\\d+) parameters").match(big.err);
        QVERIFY2(got.hasMatch() && std::abs(got.captured(1).toDouble() - 5e7) < 2.5e6, qPrintable(big.err));
        expectError(run({"config", "--preset", "copy-tiny", "--match-params", "sponge"}), "model.kind");
        expectError(run({"config", "--preset", "copy-tiny", "--match-params", "-5"}), "positive");
    }

    void tasksAndSamplesForEveryTask()
    {
        const Result list = run({"tasks", "--json"});
        QCOMPARE(list.code, 0);
        const QJsonArray tasks = QJsonDocument::fromJson(list.out.toUtf8()).array();
        QCOMPARE(tasks.size(), 21);  // 7 on tokens, 6 of MAD's, 8 in-context-learning tasks on vectors
        for (const auto v : tasks) {  // each with its own defaults, as the window loads them
            const QJsonObject t = v.toObject(), options = t["options"].toObject();
            if (t["kind"] == "mqar") QCOMPARE(options["vocab_size"].toInt(), 52);
            if (t["kind"] == "mad_noisy_recall") {
                QCOMPARE(options["noise_vocab"].toInt(), 16);
                QCOMPARE(options["train_examples"].toInt(), 12800);
            }
        }
        for (const auto v : tasks) {
            const QString kind = v.toObject()["kind"].toString();
            const bool vectors = v.toObject()["inputs"].toString() == "vectors";
            QVERIFY(!v.toObject()["description"].toString().isEmpty());
            const Result r = run({"sample", "--task", kind, "--count", "4", "--seed", "3", "--json"});
            QVERIFY2(r.code == 0, qPrintable(kind + ": " + r.err));
            const QJsonArray examples = QJsonDocument::fromJson(r.out.toUtf8()).array();
            QCOMPARE(examples.size(), 4);
            for (const auto e : examples) {
                const QJsonObject o = e.toObject();
                if (vectors) {  // x, y, scored per pair
                    QCOMPARE(o["x"].toArray().size(), o["y"].toArray().size());
                    QVERIFY2(o["scored"].toArray().contains(QJsonValue(true)) || kind == "many_outlier_regression", qPrintable(kind));
                    continue;
                }
                QCOMPARE(o["tokens"].toArray().size(), o["roles"].toArray().size());
                QVERIFY2(o["roles"].toArray().contains(QJsonValue("answer")), qPrintable(kind));
            }
            QCOMPARE(run({"sample", "--task", kind, "--count", "4", "--seed", "3", "--json"}).out, r.out);  // seeded
        }
        const Result text = run({"sample", "--task", "phonebook", "--count", "1", "--length", "3"});
        QCOMPARE(text.code, 0);
        QCOMPARE(text.out.count(": "), 3 + 1 + 1);  // three entries, the query, and "answer: "
        QVERIFY(QRegularExpression("answer: [0-9]{10}\\n").match(text.out).hasMatch());
        expectError(run({"sample", "--task", "sorting"}), "unknown task");
        expectError(run({"sample", "--task", "mqar", "--length", "40"}), "at most vocab_size / 2");
    }

    // A 2 x 2 sweep runs two at a time, is listed by `runs`, and resumes: finished runs are
    // kept untouched, a run without result.json is resumed or redone; --print-commands lists what
    // is left.
    void sweepRunsResumesAndPrintsCommands()
    {
        const QString file = m_dir.filePath("sweep.json");
        QVERIFY(parrot::test::writeAll(file, R"({
            "name": "tiny-sweep",
            "preset": "copy-tiny",
            "set": {"train.steps": 3, "train.eval_every": 0, "train.checkpoint_every": 0, "task.eval_lengths": [4],
                    "task.eval_samples": 8, "model.d_model": 32, "model.heads": 4, "model.num_masked_heads": 2},
            "variants": [{"label": "hard alibi", "set": {}}, {"label": "mamba", "set": {"model.kind": "mamba", "model.d_state": 4}}],
            "grid": {"seed": [1, 2]}
        })"));
        const QString out = m_dir.filePath("sweep-out");
        const Result r = run({"sweep", "--config", file, "--out", out, "--jobs", "2"});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains("4 of 4 runs finished"), qPrintable(r.out));
        const QJsonObject index = QJsonDocument::fromJson(parrot::test::readAll(out + "/index.json")).object();
        QCOMPARE(index["runs"].toArray().size(), 4);
        for (const auto v : index["runs"].toArray()) QCOMPARE(v.toObject()["status"].toString(), QString("finished"));
        QVERIFY(QFileInfo::exists(out + "/runs/mamba_seed-2/checkpoints/last.safetensors"));

        const Result list = run({"runs", "--dir", out, "--json"});
        QCOMPARE(list.code, 0);
        const QJsonArray runs = QJsonDocument::fromJson(list.out.toUtf8()).array();
        QCOMPARE(runs.size(), 4);
        QCOMPARE(runs[0].toObject()["status"].toString(), QString("finished"));

        // Cut two runs short (no result.json): only they are done again, the one with a resume file
        // resumed (here only its final evaluation was left), the one without redone; a finished one
        // is not touched.
        QVERIFY(QFile::remove(out + "/runs/hard-alibi_seed-1/result.json"));
        QVERIFY(QFile::remove(out + "/runs/hard-alibi_seed-2/result.json"));
        QVERIFY(QFile::remove(out + "/runs/hard-alibi_seed-2/checkpoints/resume.safetensors"));
        const QDateTime kept = QFileInfo(out + "/runs/mamba_seed-1/metrics.csv").lastModified();
        const Result printed = run({"sweep", "--config", file, "--out", out, "--print-commands"});
        QCOMPARE(printed.code, 0);
        const QStringList lines = printed.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].contains(" train --resume ") && lines[0].contains("hard-alibi_seed-1"), qPrintable(lines[0]));
        QVERIFY2(lines[1].contains(" train --config ") && lines[1].contains("hard-alibi_seed-2"), qPrintable(lines[1]));
        const Result again = run({"sweep", "--config", file, "--out", out});
        QVERIFY2(again.code == 0, qPrintable(again.out + again.err));
        QVERIFY2(again.out.contains("2 already finished") && again.out.contains("hard-alibi_seed-1: finished")
                     && again.out.contains("hard-alibi_seed-2: finished"), qPrintable(again.out));
        QVERIFY(QFileInfo::exists(out + "/runs/hard-alibi_seed-1/result.json"));
        QVERIFY(parrot::test::readAll(out + "/runs/hard-alibi_seed-1/config.json").contains("\"from_step\": 3"));
        QCOMPARE(QFileInfo(out + "/runs/mamba_seed-1/metrics.csv").lastModified(), kept);

        // The runs as figures, without a display: PNG (at 192 dpi), PDF, SVG and the data as CSV.
        const QStringList runDirs{out + "/runs/hard-alibi_seed-1", out + "/runs/hard-alibi_seed-2", out + "/runs/mamba_seed-1",
                                  out + "/runs/mamba_seed-2"};
        for (const QString& ext : QStringList{"png", "pdf", "svg", "csv"}) {
            const QString file = m_dir.filePath("length." + ext);
            const Result c = run(QStringList{"compare", "--runs"} + runDirs + QStringList{"--figure", "length", "--out", file});
            QVERIFY2(c.code == 0, qPrintable(c.err));
            const QByteArray bytes = parrot::test::readAll(file);
            if (ext == QString("png")) QCOMPARE(QImage(file).size(), QSize(2133, 1333));  // 800 x 500 points at 192 dpi
            if (ext == QString("pdf")) QVERIFY(bytes.startsWith("%PDF"));
            if (ext == QString("svg")) QVERIFY(bytes.contains("<svg") && bytes.contains("</svg>"));
            if (ext == QString("csv")) {
                const QList<QByteArray> rows = bytes.trimmed().split('\n');
                QCOMPARE(rows[0], QByteArray("series,x,y,std"));
                QCOMPARE(rows.size(), 1 + 2 * 2);  // two series (seeds pooled), lengths 4 and max_len 8 each
                QVERIFY(rows[1].contains("(2 seeds)"));
            }
        }
        const QString timeCsv = m_dir.filePath("time.csv");  // the final evaluation, at each run's wall time
        QCOMPARE(run(QStringList{"compare", "--runs"} + runDirs + QStringList{"--figure", "efficiency-time", "--out", timeCsv}).code, 0);
        const QList<QByteArray> timeRows = parrot::test::readAll(timeCsv).trimmed().split('\n');
        QCOMPARE(timeRows.size(), 1 + 2);  // two series, one evaluation each (at the end)
        const QList<QByteArray> cells = timeRows[1].split(',');  // the label is quoted and has commas: x is third from the end
        QVERIFY2(cells[cells.size() - 3].toDouble() > 0, timeRows[1].constData());
        expectError(run(QStringList{"compare", "--runs"} + runDirs + QStringList{"--figure", "icl", "--out", m_dir.filePath("x.png")}),
                    "none of the runs");
        expectError(run({"compare", "--runs", runDirs[0], "--figure", "length", "--out", m_dir.filePath("x.gif")}), ".png, .pdf");
        expectError(run({"compare", "--runs", m_dir.filePath("nowhere"), "--figure", "length", "--out", m_dir.filePath("x.png")}),
                    "no such run folder");

        QVERIFY(parrot::test::writeAll(m_dir.filePath("bad.json"), R"({"preset": "copy-tiny", "grid": {"seed": []}})"));
        expectError(run({"sweep", "--config", m_dir.filePath("bad.json"), "--out", out}), "grid.seed");
        QVERIFY(parrot::test::writeAll(m_dir.filePath("bad2.json"), R"({"preset": "copy-tiny", "sets": {}})"));
        expectError(run({"sweep", "--config", m_dir.filePath("bad2.json"), "--out", out}), "sets: unknown key");
    }

    // The bundled length-generalisation sweep: eight models x two seeds, each an independent command.
    void bundledSweepExpands()
    {
        const Result presets = run({"presets"});
        QVERIFY(presets.out.contains("length-generalisation"));
        const QString out = m_dir.filePath("lg");
        const Result r = run({"sweep", "--preset", "length-generalisation", "--out", out, "--print-commands"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QStringList lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 16);
        for (const QString& kind : {QString("nope"), QString("rope"), QString("alibi"), QString("hard-alibi"), QString("mamba"), QString("mamba2"),
                                    QString("gated-deltanet"), QString("lstm")})
            QVERIFY2(lines.filter("/runs/" + kind + "_seed-").size() == 2, qPrintable(kind));
        const QJsonObject lstm = QJsonDocument::fromJson(parrot::test::readAll(out + "/configs/lstm_seed-2.json")).object();
        QCOMPARE(lstm["model"].toObject()["kind"].toString(), QString("lstm"));
        QCOMPARE(lstm["seed"].toInt(), 2);
        QCOMPARE(lstm["task"].toObject()["eval_lengths"].toArray().last().toInt(), 80);
        expectError(run({"sweep", "--preset", "no-such-sweep", "--out", out}), "unknown sweep preset");
    }

    void badConfigRequestsAreOneLineErrors()
    {
        expectError(run({"config", "--preset", "copy-tiny", "--set", "model.depth=3"}), "model.depth: unknown key");
        expectError(run({"config", "--preset", "copy-tiny", "--set", "model.layers=deep"}), "model.layers");
        expectError(run({"config", "--preset", "no-such-preset"}), "unknown preset 'no-such-preset'");
        expectError(run({"config", "--config", m_dir.filePath("absent.json")}), "no such file");
        expectError(run({"train", "--preset", "copy-tiny"}), "--out");
        expectError(run({"train", "--preset", "copy-tiny", "--out", m_dir.filePath("x"), "--bogus"}), "--bogus");
        expectError(run({"eval", "--checkpoint", m_dir.filePath("absent.safetensors"), "--lengths", "5"}), "no such file");
        expectError(run({"--threads", "many", "presets"}), "--threads");
    }

    void trainThenEvalProducesARunFolderAndJson()
    {
        const QString out = m_dir.filePath("run");
        const Result t = run({"train", "--preset", "copy-tiny", "--out", out, "--steps", "30", "--seed", "3",
                              "--set", "train.eval_every=10", "--threads", "2"});
        QVERIFY2(t.code == 0, qPrintable(t.err + t.out));
        QVERIFY(t.out.contains("step 30/30"));
        QVERIFY(t.out.contains("eval step 10:"));
        QVERIFY(t.out.contains("finished"));
        for (const char* f : {"config.json", "metrics.csv", "curves.json", "checkpoints/last.safetensors"})
            QVERIFY2(QFile::exists(out + "/" + f), f);
        const QJsonObject cfg = QJsonDocument::fromJson(parrot::test::readAll(out + "/config.json")).object();
        QCOMPARE(cfg["experiment"].toObject()["seed"].toInt(), 3);
        QCOMPARE(cfg["experiment"].toObject()["train"].toObject()["steps"].toInt(), 30);
        QCOMPARE(cfg["environment"].toObject()["threads"].toInt(), 2);
        QCOMPARE(parrot::test::readAll(out + "/metrics.csv").trimmed().split('\n').size(), 1 + 3);

        const Result e = run({"eval", "--checkpoint", out + "/checkpoints/last.safetensors", "--lengths", "4,8,16",
                              "--samples", "20", "--json"});
        QVERIFY2(e.code == 0, qPrintable(e.err));
        const QJsonObject j = QJsonDocument::fromJson(e.out.toUtf8()).object();
        QCOMPARE(j["lengths"].toArray(), (QJsonArray{4, 8, 16}));
        QCOMPARE(j["string_accuracy"].toArray().size(), 3);
        QCOMPARE(j["char_accuracy"].toArray().size(), 3);
        for (const auto v : j["char_accuracy"].toArray()) QVERIFY(v.toDouble() >= 0 && v.toDouble() <= 1);
        QCOMPARE(j["step"].toInt(), 30);

        // the run folder is not overwritten by a second run
        const QByteArray before = parrot::test::readAll(out + "/metrics.csv");
        const Result occupied = run({"train", "--preset", "copy-tiny", "--out", out, "--steps", "5"});
        expectError(occupied, "already holds a run");
        QVERIFY2(occupied.out.isEmpty(), qPrintable(occupied.out));  // refused before "training ..." is printed
        QCOMPARE(parrot::test::readAll(out + "/metrics.csv"), before);
        // and the run's config.json trains again as --config
        const Result again = run({"config", "--config", out + "/config.json"});
        QCOMPARE(again.code, 0);
        QCOMPARE(QJsonDocument::fromJson(again.out.toUtf8()).object(), cfg["experiment"].toObject());
    }

    void evalRejectsAMalformedCheckpoint()
    {
        const QString f = m_dir.filePath("junk.safetensors");
        QVERIFY(parrot::test::writeAll(f, QByteArray(64, 'x')));
        expectError(run({"eval", "--checkpoint", f, "--lengths", "5"}), "junk.safetensors");
        expectError(run({"eval", "--checkpoint", f, "--lengths", "five"}), "--lengths");
    }

    // inspect on a short input: an order no query can look up has no score (a dash; null in JSON),
    // never a measured 0.00. "$ a b | a b .": the copy's queries find 1- and 2-grams, nothing longer.
    void inspectShowsNoScoreWhereNoneWasMeasured()
    {
        const Result text = run({"inspect", "--bundled", "hard-alibi", "--input", "ab"});
        QVERIFY2(text.code == 0, qPrintable(text.err));
        const QStringList heads = text.out.split('\n').filter(QRegularExpression("^layer "));
        QVERIFY2(heads.size() == 16, qPrintable(text.out));
        static const QRegularExpression scoresOf("  lookup ([-0-9. ]+)  prev ");
        for (const QString& line : heads) {
            const QStringList scores = scoresOf.match(line).captured(1).split(' ', Qt::SkipEmptyParts);
            QCOMPARE(scores.size(), 8);
            QVERIFY2(scores[0] != "-" && scores[1] != "-", qPrintable(line));  // orders 1 and 2 were measured
            for (int n = 3; n <= 8; ++n) QVERIFY2(scores[n - 1] == "-", qPrintable(line));
        }
        const Result json = run({"inspect", "--bundled", "hard-alibi", "--input", "ab", "--json"});
        QVERIFY2(json.code == 0, qPrintable(json.err));
        const QJsonArray lookup = QJsonDocument::fromJson(json.out.toUtf8()).object()["heads"].toArray()[0].toObject()["lookup"].toArray();
        QCOMPARE(lookup.size(), 8);
        QVERIFY(lookup[0].isDouble() && lookup[1].isDouble());
        for (int n = 3; n <= 8; ++n) QVERIFY(lookup[n - 1].isNull());
    }

    void screenshotWritesThePng()
    {
        const QString png = m_dir.filePath("window.png");
        const Result r = run({"--screenshot", png, "--preset", "copy-tiny"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QImage img(png);
        QVERIFY(!img.isNull());
        // the window on a first start fits the screen (the offscreen platform's 800 x 800) and uses it
        QVERIFY2(img.width() >= 700 && img.width() <= 800 && img.height() >= 500 && img.height() <= 800,
                 qPrintable(QString("%1 x %2").arg(img.width()).arg(img.height())));
        expectError(run({"--screenshot", png, "--preset", "nope-not-a-preset"}), "unknown preset");
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
