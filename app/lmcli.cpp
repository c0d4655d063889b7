// The pretrained-language-model commands: `generate` (a greedy continuation) and `lm-eval` (the
// copy paper's zero-shot tests on one or several model folders, with figure 1's plot).
#include "cli.h"

#include "args.h"
#include "base/config.h"
#include "base/error.h"
#include "core/eval/lmtests.h"
#include "figures/figures.h"
#include "figures/lmfigure.h"
#include "core/text/languagemodel.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTextStream>

#include <unistd.h>

namespace parrot {

namespace {

QTextStream& err()
{
    static QTextStream s(stderr);
    return s;
}

// Loads with a per-tensor progress line on stderr when it is a terminal (a 1.4B model takes a while).
LanguageModel loadWithProgress(const QString& folder, bool quiet)
{
    const bool tty = !quiet && isatty(2);
    LanguageModel lm = LanguageModel::load(folder, [&](int done, int total) {
        if (tty && (done % 16 == 0 || done + 1 == total)) {
            err() << QString("\rloading %1: tensor %2 of %3").arg(QDir(folder).dirName()).arg(done + 1).arg(total);
            err().flush();
        }
        return true;
    });
    if (tty) err() << "\r\033[K";
    return lm;
}

}  // namespace

int cmdGenerate(Args& a)
{
    const QString folder = a.value("--model");
    const QString prompt = a.value("--prompt");
    const int maxNew = a.integer("--max-new-tokens", 64, 0, 100000);
    const bool json = a.flag("--json");
    a.done();
    if (folder.isEmpty()) throw Error("generate: --model DIR is required (a HuggingFace model folder: config.json, tokenizer.json, weights)");
    if (prompt.isNull()) throw Error("generate: --prompt TEXT is required");
    const LanguageModel lm = loadWithProgress(folder, json);
    QElapsedTimer t;
    t.start();
    const LanguageModel::Continuation c = lm.generate(prompt, maxNew);
    const double seconds = t.elapsed() / 1000.0;
    if (json) {
        QJsonArray promptIds, newIds;
        for (int id : c.promptIds) promptIds.append(id);
        for (int id : c.newIds) newIds.append(id);
        const QJsonObject o{{"model", lm.folder}, {"prompt", prompt}, {"prompt_ids", promptIds}, {"new_ids", newIds},
                            {"text", c.text}, {"stopped_at_end_of_text", c.stopped}, {"seconds", seconds}};
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    out() << prompt << c.text << "\n";
    out().flush();
    err() << QString("(%1; %2 prompt tokens, %3 new%4, %5 s)\n").arg(lm.summary()).arg(c.promptIds.size()).arg(c.newIds.size())
                 .arg(c.stopped ? ", stopped at <|endoftext|>" : "").arg(seconds, 0, 'f', 2);
    return 0;
}

int cmdLmEval(Args& a)
{
    const QStringList folders = a.values("--model");
    const QString test = a.value("--task");
    const QString sizesText = a.value("--sizes");
    const int samples = a.integer("--samples", 20, 1, 100000);
    const int seed = a.integer("--seed", 1234, 0, 2147483647);
    const bool json = a.flag("--json");
    const QString outFile = a.value("--out");
    const auto [width, height] = parseSize(a.value("--size"), 800, 500);
    const ExportOptions style = figureStyle(a);
    a.done();
    if (folders.isEmpty()) throw Error("lm-eval: --model DIR is required (one or more HuggingFace model folders)");
    if (test.isEmpty()) throw Error("lm-eval: --task phonebook|copy-text|shuffled-text is required");
    checkLmTest(test);
    const LmTestInfo& info = *findLmTest(test);
    const std::vector<int> sizes = parseLengthList(sizesText.isEmpty() ? info.defaultSizes : sizesText, "--sizes");
    if (!outFile.isEmpty()) checkFigureFile(outFile, width, height);  // before hours of work, not after
    std::vector<LmSeries> series;
    for (const QString& folder : folders) {
        const LanguageModel lm = loadWithProgress(folder, json);
        if (!json) {
            out() << lm.summary() << "\n";
            out().flush();
        }
        const bool tty = !json && isatty(2);
        const LengthCurve curve = runLmTest(lm, test, sizes, samples, unsigned(seed), [&](int done, int total) {
            if (tty) {
                err() << QString("\r%1: prompt %2 of %3").arg(lm.name).arg(done).arg(total);
                err().flush();
            }
            return true;
        });
        if (tty) err() << "\r\033[K";
        series.push_back({lm.name, lm.architecture, curve});
        if (!json) {
            out() << QString("%1  %2  %3\n").arg(info.size, 10).arg("answer acc", 16).arg("token acc", 16);
            for (size_t i = 0; i < curve.lengths.size(); ++i)
                out() << QString("%1  %2% +- %3  %4% +- %5\n").arg(curve.lengths[i], 10)
                             .arg(curve.stringAccuracy[i] * 100, 6, 'f', 1).arg(curve.stringStdErr[i] * 100, 4, 'f', 1)
                             .arg(curve.charAccuracy[i] * 100, 6, 'f', 1).arg(curve.charStdErr[i] * 100, 4, 'f', 1);
            out().flush();
        }
    }
    if (json) {
        QJsonArray models;
        for (size_t i = 0; i < series.size(); ++i) {
            QJsonObject m = lengthCurveJson(series[i].curve);
            m.insert("model", QFileInfo(folders[qsizetype(i)]).absoluteFilePath());
            m.insert("name", series[i].name);
            m.insert("architecture", series[i].architecture);
            models.append(m);
        }
        out() << QJsonDocument(QJsonObject{{"task", test}, {"seed", seed}, {"models", models}}).toJson(QJsonDocument::Compact) << "\n";
    } else {
        out() << "(" << samples << " prompts per size, greedy answers, seed " << seed << "; +- one binomial standard error)\n";
    }
    if (!outFile.isEmpty()) {
        renderLmCurves(series, test, outFile, width, height, style);
        if (!json) out() << "wrote " << outFile << "\n";
    }
    return 0;
}

}  // namespace parrot
