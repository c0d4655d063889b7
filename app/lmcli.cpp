// The pretrained-language-model commands: `generate` (a greedy continuation) and `lm-eval` (the
// copy paper's zero-shot tests on one or several model folders, with figure 1's plot).
#include "cli.h"
#include "clicommon.h"

#include "args.h"
#include "base/config.h"
#include "base/error.h"
#include "base/figurecatalog.h"
#include "base/io/textfile.h"
#include "base/text/squad.h"
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

#include <algorithm>

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

QJsonObject perplexityJson(const PerplexityResult& r)
{
    return {{"loss", r.loss}, {"loss_stderr", r.lossStdErr}, {"perplexity", r.perplexity}, {"tokens", double(r.tokens)},
            {"windows", r.windows}, {"window", r.window}};
}

int perplexityCommand(const QStringList& folders, const QString& dataFile, int window, int maxTokens, bool json)
{
    const QString text = dataFile.isEmpty() ? bundledPerplexityText() : readTextFile(dataFile, "the text to measure perplexity on");
    QJsonArray models;
    if (!json) out() << QString("%1  %2  %3  %4\n").arg("model", -24).arg("loss (nats/token)", 20).arg("perplexity", 12).arg("tokens", 8);
    for (const QString& folder : folders) {
        const LanguageModel lm = loadWithProgress(folder, json);
        const PerplexityResult r = measurePerplexity(lm, text, window, maxTokens);
        if (json) {
            QJsonObject m = perplexityJson(r);
            m.insert("model", QFileInfo(folder).absoluteFilePath());
            m.insert("name", lm.name);
            m.insert("architecture", lm.architecture);
            models.append(m);
            continue;
        }
        out() << QString("%1  %2  %3  %4\n").arg(lm.name, -24).arg(QString("%1 +- %2").arg(r.loss, 0, 'f', 4).arg(r.lossStdErr, 0, 'f', 4), 20)
                     .arg(r.perplexity, 12, 'f', 2).arg(r.tokens, 8);
        out().flush();
    }
    if (json) {
        out() << QJsonDocument(QJsonObject{{"task", "perplexity"}, {"data", dataFile.isEmpty() ? QString("bundled") : QFileInfo(dataFile).absoluteFilePath()},
                                           {"models", models}}).toJson(QJsonDocument::Compact) << "\n";
    } else {
        out() << QString("(%1; windows of up to %2 tokens, at most the model's context, one after another; "
                         "%3)\n").arg(dataFile.isEmpty() ? QString("Alice's Adventures in Wonderland") : dataFile).arg(window)
                     .arg(maxTokens > 0 ? QString("the first %1 tokens").arg(maxTokens) : QString("the whole text"));
    }
    return 0;
}

}  // namespace

int cmdGenerate(Args& a)
{
    const QString folder = a.value("--model");
    const QString prompt = a.value("--prompt");
    const int maxNew = a.integer("--max-new-tokens");
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
    const QString dataFile = a.value("--data");
    const QString figure = a.value("--figure");
    const QString textFile = a.value("--text");
    const int window = a.integer("--window");
    const int maxTokens = a.integer("--tokens");
    const int at = a.integer("--at");
    const int samples = a.integer("--samples");
    const int seed = a.integer("--seed");
    const bool json = a.flag("--json");
    const QString outFile = a.value("--out");
    const auto [width, height] = parseSize(a.text("--size"));
    const ExportOptions style = figureStyle(a);
    a.done();
    if (folders.isEmpty()) throw Error("lm-eval: --model DIR is required (one or more HuggingFace model folders)");
    if (test.isEmpty()) throw Error("lm-eval: --task phonebook|copy-text|shuffled-text|squad|perplexity is required");
    if (test == "perplexity") {
        if (!figure.isEmpty() || !textFile.isEmpty() || !sizesText.isEmpty())
            throw Error("lm-eval: --task perplexity measures a text (--data FILE.txt); --figure loss-vs-retrieval goes with a retrieval --task");
        return perplexityCommand(folders, dataFile, window, maxTokens, json);
    }
    checkLmTest(test);
    if (!figure.isEmpty()) checkFigure(figure, LmEvalFigure);
    const bool lossFigure = figure == "loss-vs-retrieval";
    if (lossFigure && outFile.isEmpty()) throw Error("lm-eval: --figure loss-vs-retrieval needs --out FILE.(png|pdf|svg|csv)");
    if (!lossFigure && (!textFile.isEmpty() || at > 0)) throw Error("lm-eval: --text and --at are for --figure loss-vs-retrieval");
    const QString perplexityText = lossFigure ? (textFile.isEmpty() ? bundledPerplexityText() : readTextFile(textFile, "the text to measure perplexity on"))
                                              : QString();
    const LmTestInfo& info = *findLmTest(test);
    if (!dataFile.isEmpty() && !info.readsData) throw Error(QString("lm-eval: --data is for --task squad; %1 makes its own prompts").arg(test));
    // the question-answering set, read (and checked) before any model is loaded
    const std::vector<QaParagraph> qaSet = info.readsData ? readSquad(dataFile.isEmpty() ? bundledSquadPath() : dataFile)
                                                          : std::vector<QaParagraph>();
    const std::vector<int> sizes = parseLengthList(sizesText.isEmpty() ? info.defaultSizes : sizesText, "--sizes");
    if (!outFile.isEmpty()) checkFigureFile(outFile, width, height);  // before hours of work, not after
    std::vector<LmSeries> series;
    std::vector<QaResult> qaResults;  // question answering: each model's buckets
    std::vector<PerplexityResult> perplexities;  // --figure loss-vs-retrieval
    for (const QString& folder : folders) {
        const LanguageModel lm = loadWithProgress(folder, json);
        if (!json) {
            out() << lm.summary() << "\n";
            out().flush();
        }
        if (lossFigure) perplexities.push_back(measurePerplexity(lm, perplexityText, window, maxTokens));
        const bool tty = !json && isatty(2);
        const auto progress = [&](int done, int total) {
            if (tty) {
                err() << QString("\r%1: prompt %2 of %3").arg(lm.name).arg(done).arg(total);
                err().flush();
            }
            return true;
        };
        if (info.readsData) {
            const QaResult r = runQaTest(lm, qaSet, sizes, samples, unsigned(seed), progress);
            if (tty) err() << "\r\033[K";
            series.push_back({lm.name, lm.architecture, r.curve});
            qaResults.push_back(r);
            if (!json) {
                out() << QString("%1  %2  %3  %4\n").arg(info.size, 16).arg("questions", 9).arg("exact match", 16).arg("F1", 16);
                for (size_t i = 0; i < r.curve.lengths.size(); ++i)
                    out() << QString("%1  %2  %3% +- %4  %5% +- %6\n")
                                 .arg(QString("%1-%2").arg(r.curve.lengths[i]).arg(r.bucketEnds[i] - 1), 16).arg(r.questions[i], 9)
                                 .arg(r.curve.stringAccuracy[i] * 100, 6, 'f', 1).arg(r.curve.stringStdErr[i] * 100, 4, 'f', 1)
                                 .arg(r.curve.charAccuracy[i] * 100, 6, 'f', 1).arg(r.curve.charStdErr[i] * 100, 4, 'f', 1);
                for (int from : r.emptyBuckets) {
                    const auto edge = std::find(sizes.begin(), sizes.end(), from);
                    const int to = edge + 1 != sizes.end() ? *(edge + 1) - 1 : from;
                    out() << QString("%1  (no paragraph of this length)\n").arg(QString("%1-%2").arg(from).arg(to), 16);
                }
                out().flush();
            }
            continue;
        }
        const LengthCurve curve = runLmTest(lm, test, sizes, samples, unsigned(seed), progress);
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
            if (info.readsData) {  // the same numbers under the names they have here
                const QaResult& r = qaResults[i];
                QJsonArray from, to, questions, em, emErr, f1, f1Err, empty;
                for (size_t k = 0; k < r.curve.lengths.size(); ++k) {
                    from.append(r.curve.lengths[k]);
                    to.append(r.bucketEnds[k]);
                    questions.append(r.questions[k]);
                    em.append(r.curve.stringAccuracy[k]);
                    emErr.append(r.curve.stringStdErr[k]);
                    f1.append(r.curve.charAccuracy[k]);
                    f1Err.append(r.curve.charStdErr[k]);
                }
                for (int e : r.emptyBuckets) empty.append(e);
                m = QJsonObject{{"bucket_from", from}, {"bucket_to", to}, {"questions", questions}, {"exact_match", em},
                                {"exact_match_stderr", emErr}, {"f1", f1}, {"f1_stderr", f1Err}, {"empty_buckets", empty}};
            }
            m.insert("model", QFileInfo(folders[qsizetype(i)]).absoluteFilePath());
            m.insert("name", series[i].name);
            m.insert("architecture", series[i].architecture);
            models.append(m);
        }
        QJsonObject o{{"task", test}, {"seed", seed}, {"models", models}};
        if (info.readsData) o.insert("data", dataFile.isEmpty() ? QString("bundled") : QFileInfo(dataFile).absoluteFilePath());
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
    } else if (info.readsData) {
        out() << "(up to " << samples << " paragraphs per bucket of paragraph tokens, one question answered as an example and "
              << "another asked; greedy answers to the first blank line, seed " << seed
              << "; +- one standard error; SQuAD's normalisation, best over the gold answers)\n";
    } else {
        out() << "(" << samples << " prompts per size, greedy answers, seed " << seed << "; +- one binomial standard error)\n";
    }
    if (lossFigure) {
        // the size: --at, else the largest every model has a point at
        const int size = at > 0 ? at : largestCommonSize(series, test);
        std::vector<LossRetrievalPoint> points;
        for (size_t i = 0; i < series.size(); ++i) {
            LossRetrievalPoint p{series[i].name, series[i].architecture, perplexities[i].perplexity, perplexities[i].loss};
            if (!measureAt(series[i], test, size, &p.accuracy, &p.stdErr))
                throw Error(QString("lm-eval: %1 has no %2 point at %3 (--at must be one of the sizes it was tested at)").arg(series[i].name, test).arg(size));
            points.push_back(p);
            if (!json)
                out() << QString("%1: perplexity %2 (loss %3 nats over %4 tokens), %5 at %6: %7\n").arg(p.name).arg(p.perplexity, 0, 'f', 2)
                             .arg(p.loss, 0, 'f', 4).arg(perplexities[i].tokens).arg(info.measure).arg(size).arg(p.accuracy, 0, 'f', 3);
        }
        renderLossVsRetrieval(points, test, size, outFile, width, height, style);
        if (!json) out() << "wrote " << outFile << "\n";
    } else if (!outFile.isEmpty()) {
        renderLmCurves(series, test, outFile, width, height, style);
        if (!json) out() << "wrote " << outFile << "\n";
    }
    return 0;
}

}  // namespace parrot
