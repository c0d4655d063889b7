// The pretrained-language-model commands: `generate` (a greedy continuation) and `lm-eval` (the
// copy paper's zero-shot tests on one or several model folders, with figure 1's plot).
#include "base/config.h"
#include "base/error.h"
#include "base/figurecatalog.h"
#include "base/io/textfile.h"
#include "base/text/squad.h"
#include "core/eval/lmtests.h"
#include "core/text/languagemodel.h"
#include "figures/figures.h"
#include "figures/lmfigure.h"
#include "args.h"
#include "cli.h"
#include "clicommon.h"

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

namespace {

// One `lm-eval` command line, read and checked.
struct LmEvalRequest {
    QStringList folders;
    QString test, sizesText, dataFile, figure, textFile;
    int window = 0, maxTokens = 0, at = 0, samples = 0, seed = 0;
    bool json = false;
    QString outFile;
    int width = 0, height = 0;
    ExportOptions style;
    bool lossFigure() const { return figure == "loss-vs-retrieval"; }
};

LmEvalRequest readLmEval(Args& a)
{
    LmEvalRequest r;
    r.folders = a.values("--model");
    r.test = a.value("--task");
    r.sizesText = a.value("--sizes");
    r.dataFile = a.value("--data");
    r.figure = a.value("--figure");
    r.textFile = a.value("--text");
    r.window = a.integer("--window");
    r.maxTokens = a.integer("--tokens");
    r.at = a.integer("--at");
    r.samples = a.integer("--samples");
    r.seed = a.integer("--seed");
    r.json = a.flag("--json");
    r.outFile = a.value("--out");
    std::tie(r.width, r.height) = parseSize(a.text("--size"));
    r.style = figureStyle(a);
    a.done();
    if (r.folders.isEmpty()) throw Error("lm-eval: --model DIR is required (one or more HuggingFace model folders)");
    if (r.test.isEmpty()) throw Error("lm-eval: --task phonebook|copy-text|shuffled-text|squad|perplexity is required");
    return r;
}

// The checks of a retrieval test's options (not perplexity's) against each other.
void checkRetrieval(const LmEvalRequest& r)
{
    checkLmTest(r.test);
    if (!r.figure.isEmpty()) checkFigure(r.figure, LmEvalFigure);
    if (r.lossFigure() && r.outFile.isEmpty()) throw Error("lm-eval: --figure loss-vs-retrieval needs --out FILE.(png|pdf|svg|csv)");
    if (!r.lossFigure() && (!r.textFile.isEmpty() || r.at > 0)) throw Error("lm-eval: --text and --at are for --figure loss-vs-retrieval");
}

// A question-answering test's buckets as a table.
void printQaResult(const LmTestInfo& info, const QaResult& r, const std::vector<int>& sizes)
{
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

// A zero-shot test's accuracy at each size as a table.
void printCurve(const LmTestInfo& info, const LengthCurve& curve)
{
    out() << QString("%1  %2  %3\n").arg(info.size, 10).arg("answer acc", 16).arg("token acc", 16);
    for (size_t i = 0; i < curve.lengths.size(); ++i)
        out() << QString("%1  %2% +- %3  %4% +- %5\n").arg(curve.lengths[i], 10)
                     .arg(curve.stringAccuracy[i] * 100, 6, 'f', 1).arg(curve.stringStdErr[i] * 100, 4, 'f', 1)
                     .arg(curve.charAccuracy[i] * 100, 6, 'f', 1).arg(curve.charStdErr[i] * 100, 4, 'f', 1);
    out().flush();
}

// What the models measured: one series each, and for question answering each one's buckets.
struct LmEvalResults {
    std::vector<LmSeries> series;
    std::vector<QaResult> qa;
    std::vector<PerplexityResult> perplexities;  // --figure loss-vs-retrieval
};

// Each model loaded in turn and tested (printed as it goes unless JSON).
// `qaSet`: question answering's paragraphs; `perplexityText`: the figure's text.
LmEvalResults runLmEvalModels(const LmEvalRequest& r, const LmTestInfo& info, const std::vector<int>& sizes,
                              const std::vector<QaParagraph>& qaSet, const QString& perplexityText)
{
    LmEvalResults res;
    for (const QString& folder : r.folders) {
        const LanguageModel lm = loadWithProgress(folder, r.json);
        if (!r.json) {
            out() << lm.summary() << "\n";
            out().flush();
        }
        if (r.lossFigure()) res.perplexities.push_back(measurePerplexity(lm, perplexityText, r.window, r.maxTokens));
        const bool tty = !r.json && isatty(2);
        const auto progress = [&](int done, int total) {
            if (tty) {
                err() << QString("\r%1: prompt %2 of %3").arg(lm.name).arg(done).arg(total);
                err().flush();
            }
            return true;
        };
        if (info.readsData) {
            const QaResult q = runQaTest(lm, qaSet, sizes, r.samples, unsigned(r.seed), progress);
            if (tty) err() << "\r\033[K";
            res.series.push_back({lm.name, lm.architecture, q.curve});
            res.qa.push_back(q);
            if (!r.json) printQaResult(info, q, sizes);
            continue;
        }
        const LengthCurve curve = runLmTest(lm, r.test, sizes, r.samples, unsigned(r.seed), progress);
        if (tty) err() << "\r\033[K";
        res.series.push_back({lm.name, lm.architecture, curve});
        if (!r.json) printCurve(info, curve);
    }
    return res;
}

// A question-answering result under the names it has there (buckets, exact match, F1).
QJsonObject qaJson(const QaResult& r)
{
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
    return QJsonObject{{"bucket_from", from}, {"bucket_to", to}, {"questions", questions}, {"exact_match", em},
                       {"exact_match_stderr", emErr}, {"f1", f1}, {"f1_stderr", f1Err}, {"empty_buckets", empty}};
}

void printLmEvalJson(const LmEvalRequest& r, const LmTestInfo& info, const LmEvalResults& res)
{
    QJsonArray models;
    for (size_t i = 0; i < res.series.size(); ++i) {
        QJsonObject m = info.readsData ? qaJson(res.qa[i]) : lengthCurveJson(res.series[i].curve);
        m.insert("model", QFileInfo(r.folders[qsizetype(i)]).absoluteFilePath());
        m.insert("name", res.series[i].name);
        m.insert("architecture", res.series[i].architecture);
        models.append(m);
    }
    QJsonObject o{{"task", r.test}, {"seed", r.seed}, {"models", models}};
    if (info.readsData) o.insert("data", r.dataFile.isEmpty() ? QString("bundled") : QFileInfo(r.dataFile).absoluteFilePath());
    out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
}

// --figure loss-vs-retrieval: each model at (perplexity, its accuracy at one size).
void drawLossVsRetrieval(const LmEvalRequest& r, const LmTestInfo& info, const LmEvalResults& res)
{
    // the size: --at, else the largest every model has a point at
    const int size = r.at > 0 ? r.at : largestCommonSize(res.series, r.test);
    std::vector<LossRetrievalPoint> points;
    for (size_t i = 0; i < res.series.size(); ++i) {
        const LmSeries& s = res.series[i];
        LossRetrievalPoint p{s.name, s.architecture, res.perplexities[i].perplexity, res.perplexities[i].loss};
        if (!measureAt(s, r.test, size, &p.accuracy, &p.stdErr))
            throw Error(QString("lm-eval: %1 has no %2 point at %3 (--at must be one of the sizes it was tested at)").arg(s.name, r.test).arg(size));
        points.push_back(p);
        if (!r.json)
            out() << QString("%1: perplexity %2 (loss %3 nats over %4 tokens), %5 at %6: %7\n").arg(p.name).arg(p.perplexity, 0, 'f', 2)
                         .arg(p.loss, 0, 'f', 4).arg(res.perplexities[i].tokens).arg(info.measure).arg(size).arg(p.accuracy, 0, 'f', 3);
    }
    renderLossVsRetrieval(points, r.test, size, r.outFile, r.width, r.height, r.style);
}

}  // namespace

int cmdLmEval(Args& a)
{
    const LmEvalRequest r = readLmEval(a);
    if (r.test == "perplexity") {
        if (!r.figure.isEmpty() || !r.textFile.isEmpty() || !r.sizesText.isEmpty())
            throw Error("lm-eval: --task perplexity measures a text (--data FILE.txt); --figure loss-vs-retrieval goes with a retrieval --task");
        return perplexityCommand(r.folders, r.dataFile, r.window, r.maxTokens, r.json);
    }
    checkRetrieval(r);
    const QString perplexityText = r.lossFigure() ? (r.textFile.isEmpty() ? bundledPerplexityText() : readTextFile(r.textFile, "the text to measure perplexity on"))
                                                  : QString();
    const LmTestInfo& info = *findLmTest(r.test);
    if (!r.dataFile.isEmpty() && !info.readsData) throw Error(QString("lm-eval: --data is for --task squad; %1 makes its own prompts").arg(r.test));
    // the question-answering set, read (and checked) before any model is loaded
    const std::vector<QaParagraph> qaSet = info.readsData ? readSquad(r.dataFile.isEmpty() ? bundledSquadPath() : r.dataFile)
                                                          : std::vector<QaParagraph>();
    const std::vector<int> sizes = parseLengthList(r.sizesText.isEmpty() ? info.defaultSizes : r.sizesText, "--sizes");
    if (!r.outFile.isEmpty()) checkFigureFile(r.outFile, r.width, r.height);  // before hours of work, not after
    const LmEvalResults res = runLmEvalModels(r, info, sizes, qaSet, perplexityText);
    if (r.json) printLmEvalJson(r, info, res);
    else if (info.readsData)
        out() << "(up to " << r.samples << " paragraphs per bucket of paragraph tokens, one question answered as an example and "
              << "another asked; greedy answers to the first blank line, seed " << r.seed
              << "; +- one standard error; SQuAD's normalisation, best over the gold answers)\n";
    else out() << "(" << r.samples << " prompts per size, greedy answers, seed " << r.seed << "; +- one binomial standard error)\n";
    if (r.lossFigure()) drawLossVsRetrieval(r, info, res);
    else if (!r.outFile.isEmpty()) renderLmCurves(res.series, r.test, r.outFile, r.width, r.height, r.style);
    if ((r.lossFigure() || !r.outFile.isEmpty()) && !r.json) out() << "wrote " << r.outFile << "\n";
    return 0;
}

}  // namespace parrot
