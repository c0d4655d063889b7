// `inspect`: a model's attention heads on one input (a copy model, the two-layer construction or a
// pretrained language model), heads switched off, each head's importance, the state shrunk, and
// the look-inside figures.
#include "cli.h"

#include "args.h"
#include "clicommon.h"
#include "base/ablation.h"
#include "base/analysis/lookup.h"
#include "base/error.h"
#include "base/figurecatalog.h"
#include "base/io/runfolder.h"
#include "base/tasks/tokentask.h"
#include "core/analysis/causal.h"
#include "core/analysis/inside.h"
#include "core/eval/lmtests.h"
#include "core/text/languagemodel.h"
#include "figures/causalfigure.h"
#include "figures/constructionfigure.h"
#include "figures/figures.h"
#include "figures/insidefigure.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include <qcustomplot.h>

#include <cmath>
#include <optional>
#include <random>

namespace parrot {

namespace {

// The copy paper's construction measured against its bound (inspect --construction --figure construction).
void renderConstructionFigure(int n, int letters, const std::vector<int>& lengths, int samples, const QString& outFile, int width, int height,
                              const ExportOptions& style)
{
    checkFigureFile(outFile, width, height);
    ConstructionCurves c{letters, {}, {}};
    for (int k = std::max(1, n - 3); k <= n; ++k) {
        c.orders.push_back(k);
        c.curves.push_back(CopyConstruction({k, letters}).evaluate(lengths, samples, 1));
    }
    QCustomPlot plot;
    plot.setBackground(Qt::white);
    plot.resize(layoutSize(width, height));
    const QString csv = drawConstruction(plot, c);
    savePlot(plot, outFile, width, height, "two-layer copy construction", csv, style);
    for (size_t i = 0; i < c.orders.size(); ++i) out() << "n = " << c.orders[i] << ": " << c.curves[i].summary() << "\n";
}

}  // namespace

// Attention heads of a copy model on one input, or of a pretrained language model on a text
// prompt: n-gram lookup scores and labels (base/analysis/lookup.h).
// inspect --ablate: the predictions with and without the heads, side by side.
int printAblation(const InsideSubject& s, const std::vector<int>& tokens, const QString& text, const HeadAblation& ablation, bool json,
                  const TaskInput* task)
{
    const auto scoreOf = [&](const std::vector<int>& predictions) {
        return task ? InsideSubject::score(*task, predictions) : s.score(tokens, predictions);
    };
    // what each position should produce: a task example's answers (MQAR reads filler in their place)
    const std::vector<int>& expected = task ? task->example.tokens : tokens;
    const std::vector<int> plain = s.predictions(tokens);
    const CopyScore before = scoreOf(plain);
    const LanguageModel* lm = s.languageModel();
    const QString continuation = lm ? lm->generate(text, 16).text : QString();
    std::vector<int> cut;
    QString cutContinuation;
    {
        const SubjectHeadsOff off(s, ablation);
        cut = s.predictions(tokens);
        if (lm) cutContinuation = lm->generate(text, 16).text;
    }
    const CopyScore after = scoreOf(cut);
    const ModelProbes labels = s.probe(tokens);
    const std::unique_ptr<TokenTask> taskText = task ? TokenTask::create(evaluationTask(s.model().config().task)) : nullptr;
    const auto label = [&](int id) {
        if (lm) return lm->tokenizer.decode({id}, true).replace('\n', "\\n");
        if (taskText) return id >= 0 && id < taskText->vocabSize() ? taskText->text(id) : QString::number(id);
        return id >= 0 && id < CopyVocab{s.letters()}.size() ? CopyVocab{s.letters()}.text(id) : QString::number(id);
    };
    // the positions that are scored: where a prediction that is never right counts as wrong
    const CopyScore scored = scoreOf(std::vector<int>(tokens.size(), -1));
    const QString off = ablation.heads.size() == 1 ? "the head" : "the heads";
    const auto shown = [](QString t) { return t.replace('\n', "\\n").replace('\r', "\\r"); };
    QJsonArray changed;
    QStringList lines;
    for (size_t t = 0; t < after.wrong.size(); ++t) {
        if (plain[t] == cut[t] || t + 1 >= tokens.size() || t >= scored.wrong.size() || !scored.wrong[t]) continue;
        const int want = task && task->readsOut ? expected[t] : expected[t + 1];
        changed.append(QJsonObject{{"position", int(t)}, {"expected", label(want)}, {"plain", label(plain[t])},
                                   {"ablated", label(cut[t])}, {"right_before", !before.wrong[t]}, {"right_after", !after.wrong[t]}});
        lines << QString("  %1  %2 -> expected %3, predicts %4 %5, with %6 off %7 %8")
                     .arg(t, 4).arg(t < labels.tokens.size() ? labels.tokens[t] : QString(), label(want), label(plain[t]), before.wrong[t] ? "✗" : "✓",
                          off, label(cut[t]), after.wrong[t] ? "✗" : "✓");
    }
    QJsonArray heads;
    for (const auto& [l, h] : ablation.heads) heads.append(QString("%1.%2").arg(l).arg(h));
    if (json) {
        QJsonObject o{{"ablation", QJsonObject{{"method", ablationMethodName(ablation.method)}, {"heads", heads}}},
                      {"answers", before.answers}, {"right", before.right}, {"right_ablated", after.right}, {"changed", changed}};
        if (lm) o["continuation"] = continuation, o["continuation_ablated"] = cutContinuation;
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    out() << s.name() << ": " << ablation.describe() << " (a forward-time mask; the weights are untouched)\n";
    out() << QString("%1 %2 of %3 %4; with %5 off %6 of %3\n")
                 .arg(lm ? "predicts" : task ? "answers" : "copies").arg(before.right).arg(before.answers)
                 .arg(lm ? "copyable tokens (the next token after a repeated n-gram)" : "answer tokens", off).arg(after.right);
    if (!lines.isEmpty()) out() << "answers that change:\n" << lines.join('\n') << "\n";
    if (lm) out() << "greedy continuation: " << shown(continuation) << "\n" << QString("with %1 off: ").arg(off).leftJustified(21) << shown(cutContinuation) << "\n";
    return 0;
}

// inspect --head-importance: each head switched off alone, the drops sorted.
int printHeadImportance(const InsideSubject& s, const HeadImportanceRequest& r, bool json, const QString& outFile, int width, int height,
                        const ExportOptions& style)
{
    const HeadImportance hi = measureHeadImportance(s, r);
    if (!outFile.isEmpty()) renderHeadImportance(hi, outFile, width, height, style);
    if (json) {
        QJsonArray rows;
        for (const HeadImportanceRow& h : hi.rows)
            rows.append(QJsonObject{{"layer", h.layer}, {"head", h.head}, {"label", h.label}, {"order", h.order}, {"lookup", h.lookup},
                                    {"answer_accuracy", h.answer}, {"answer_stderr", h.answerErr}, {"answer_drop", h.answerDrop},
                                    {"answer_drop_stderr", h.answerDropErr}, {"token_accuracy", h.token}, {"token_stderr", h.tokenErr},
                                    {"token_drop", h.tokenDrop}, {"token_drop_stderr", h.tokenDropErr}});
        QJsonObject o{{"subject", hi.subject}, {"task", hi.task}, {"length", hi.length}, {"samples", hi.samples},
                      {"seed", QString::number(hi.seed)}, {"method", hi.method}, {"layers", hi.layers}, {"heads", hi.heads},
                      {"answer_accuracy", hi.answer}, {"answer_stderr", hi.answerErr}, {"token_accuracy", hi.token},
                      {"token_stderr", hi.tokenErr}, {"rows", rows}};
        if (!outFile.isEmpty()) o["figure"] = QFileInfo(outFile).absoluteFilePath();
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    out() << QString("%1: %2 at length %3, %4 examples (seed %5); each head %6 alone\n")
                 .arg(hi.subject, hi.task).arg(hi.length).arg(hi.samples).arg(hi.seed).arg(hi.method == "zero" ? "zeroed" : "replaced by its mean");
    out() << QString("full model: answers %1% ± %2, tokens %3% ± %4\n")
                 .arg(hi.answer * 100, 0, 'f', 1).arg(hi.answerErr * 100, 0, 'f', 1).arg(hi.token * 100, 0, 'f', 1).arg(hi.tokenErr * 100, 0, 'f', 1);
    out() << "head   answer drop        token drop         lookup  label\n";
    for (const HeadImportanceRow& h : hi.rows)
        out() << QString("%1  %2 ± %3  %4 ± %5  %6  %7\n")
                     .arg(QString("%1.%2").arg(h.layer).arg(h.head), -5)
                     .arg(QString::number(h.answerDrop * 100, 'f', 1) + "%", 7).arg(QString::number(h.answerDropErr * 100, 'f', 1) + "%", -7)
                     .arg(QString::number(h.tokenDrop * 100, 'f', 1) + "%", 7).arg(QString::number(h.tokenDropErr * 100, 'f', 1) + "%", -7)
                     .arg(h.label.isEmpty() ? QString("–") : QString::number(h.lookup, 'f', 2), 6).arg(h.label);
    if (!outFile.isEmpty()) out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
    return 0;
}

// inspect --state-sweep: accuracy against length for each state setting, beside its bound.
int printStateSweep(const StateSweep& sw, bool json, const QString& outFile, int width, int height, const ExportOptions& style)
{
    if (!outFile.isEmpty()) renderStateSweep(sw, outFile, width, height, style);
    if (json) {
        QJsonArray points;
        for (const StateSweepPoint& p : sw.points) {
            QJsonArray lengths, acc, tok;
            for (size_t i = 0; i < p.curve.lengths.size(); ++i)
                lengths.append(p.curve.lengths[i]), acc.append(p.curve.stringAccuracy[i]), tok.append(p.curve.charAccuracy[i]);
            points.append(QJsonObject{{"setting", p.label}, {"state_bits", p.stateBits}, {"bound_length", p.boundLength},
                                      {"longest_copied", p.longestCopied}, {"lengths", lengths}, {"answer_accuracy", acc}, {"token_accuracy", tok}});
        }
        QJsonObject o{{"subject", sw.subject}, {"mode", sw.mode}, {"task", sw.task}, {"alphabet", sw.vocab}, {"samples", sw.samples},
                      {"seed", QString::number(sw.seed)}, {"points", points}};
        if (!outFile.isEmpty()) o["figure"] = QFileInfo(outFile).absoluteFilePath();
        out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    const QLocale en(QLocale::English);
    out() << QString("%1: state sweep (%2) on %3, %4 examples a length\n").arg(sw.subject, sw.mode, sw.task).arg(sw.samples);
    out() << "setting                        state bits   bound L   longest copied (>= 90%)   accuracy\n";
    for (const StateSweepPoint& p : sw.points)
        out() << QString("%1 %2 %3 %4   %5\n").arg(p.label, -30).arg(en.toString(p.stateBits, 'f', 0), 10)
                     .arg(p.boundLength > 0 ? en.toString(p.boundLength, 'f', 0) : QString("–"), 9).arg(p.longestCopied, 14)
                     .arg(p.curve.summary());
    if (!outFile.isEmpty()) out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
    return 0;
}

int cmdInspect(Args& a)
{
    const QString path = a.value("--checkpoint");
    const QString bundled = a.value("--bundled");
    const QString modelDir = a.value("--model");
    const QString prompt = a.value("--prompt");
    const QString lmTest = a.value("--lm-test");
    const int constructionN = a.integer("--construction", 0, 1, 8);
    const int letters = a.integer("--letters", 26, 2, 52);
    const QString input = a.value("--input");
    const int length = a.integer("--length", 0, 1, 4000);
    const int seed = a.integer("--seed", 1, 0, 2147483647);
    const bool duplicated = a.flag("--repeat-ngram");
    const bool json = a.flag("--json");
    const QString figure = a.value("--figure");
    const QString outFile = a.value("--out");
    const int layer = a.integer("--layer", -1, 0, 1000);
    const int head = a.integer("--head", -1, 0, 1000);
    const bool logScale = a.flag("--log");
    const auto [width, height] = parseSize(a.value("--size"), 900, 800);
    const ExportOptions style = figureStyle(a);
    const QString lengthsText = a.value("--lengths");
    const int samples = a.integer("--samples", 100, 1, 100000);
    const QString ablate = a.value("--ablate"), ablationMethod = a.value("--ablation");
    const bool importance = a.flag("--head-importance");
    const QString importanceTask = a.value("--task");
    const QString sweepMode = a.value("--state-sweep");
    const QString sweepValues = a.value("--values");
    a.done();
    if (importance && !sweepMode.isNull()) throw Error("inspect: --head-importance and --state-sweep are two runs; give one");
    if ((importance || !sweepMode.isNull()) && (!ablate.isNull() || !figure.isEmpty()))
        throw Error("inspect: --head-importance and --state-sweep draw their own figure with --out; leave out --ablate and --figure");
    if (!importanceTask.isNull() && !importance) throw Error("inspect: --task is for --head-importance");
    if (!sweepValues.isNull() && sweepMode.isNull()) throw Error("inspect: --values is for --state-sweep dims|channels|bits");
    if (!sweepMode.isNull() && outFile.isEmpty() && !json) throw Error("inspect --state-sweep: give --out FILE (.png, .pdf, .svg or .csv) or --json");
    if (!outFile.isEmpty() && (importance || !sweepMode.isNull())) checkFigureFile(outFile, width, height);
    HeadAblation ablation;
    if (!ablate.isNull()) {
        ablation.heads = parseHeadList(ablate);
        ablation.method = ablationMethod.isNull() ? HeadAblation::Method::Zero : ablationMethodFromName(ablationMethod);
    } else if (!ablationMethod.isNull() && !importance) {
        throw Error("inspect: --ablation zero|mean needs --ablate LAYER.HEAD[,LAYER.HEAD...] or --head-importance");
    }
    if (int(!path.isEmpty()) + int(!bundled.isEmpty()) + int(constructionN > 0) + int(!modelDir.isEmpty()) != 1)
        throw Error("inspect: give one of --checkpoint FILE, --bundled hard-alibi|mamba, --construction N, --model DIR");
    if (modelDir.isEmpty() && (!prompt.isNull() || !lmTest.isEmpty()))
        throw Error("inspect: --prompt and --lm-test are for a pretrained model's folder (--model DIR)");
    if (!modelDir.isEmpty() && !importance && int(!prompt.isNull()) + int(!lmTest.isEmpty()) != 1)
        throw Error("inspect --model: give the text, --prompt TEXT, or one of the zero-shot tests' prompts, --lm-test "
                    "phonebook|copy-text|shuffled-text [--length L] [--seed S]");
    if (!lmTest.isEmpty()) checkLmTest(lmTest);
    if (!figure.isEmpty() && outFile.isEmpty()) throw Error("inspect: --figure needs --out FILE (.png, .pdf, .svg or .csv)");
    if (figure.isEmpty() && !outFile.isEmpty() && !importance && sweepMode.isNull())
        throw Error("inspect: --out needs --figure " + figureIds(InspectFigure).join('|'));
    if (!figure.isEmpty()) checkFigure(figure, InspectFigure);
    InsideSubject subject;
    if (constructionN > 0) {
        subject = InsideSubject(ConstructionOptions{constructionN, letters});
    } else if (!bundled.isEmpty()) {
        try {
            const BundledCheckpoint& b = findBundled(bundled);
            subject = InsideSubject::load(b.path, b.label);
        } catch (const Error& e) {
            throw Error("--bundled: " + e.message());
        }
    } else if (!modelDir.isEmpty()) {
        subject = InsideSubject::loadLanguageModel(modelDir);
    } else {
        subject = InsideSubject::load(path);
    }
    if (!ablation.isEmpty()) {
        if (figure == "capacity") throw Error("inspect --ablate: --figure capacity measures the model as trained; draw a look-inside figure instead");
        if (figure == "construction") throw Error("inspect --ablate: --figure construction draws the construction as designed; draw a look-inside figure instead");
        const QString why = subject.ablationProblem(ablation);
        if (!why.isEmpty()) throw Error("inspect --ablate: " + why);
    }
    if (importance) {
        HeadImportanceRequest r;
        r.task = importanceTask;
        r.length = length;
        r.samples = samples;
        r.seed = static_cast<unsigned long long>(seed);
        r.method = ablationMethod.isNull() ? HeadAblation::Method::Zero : ablationMethodFromName(ablationMethod);
        return printHeadImportance(subject, r, json, outFile, width, height, style);
    }
    if (!sweepMode.isNull()) {
        if (subject.isConstruction() || subject.readsText())
            throw Error("inspect --state-sweep: needs a trained state-space model (--checkpoint FILE or --bundled mamba)");
        const StateShrink::Mode mode = stateShrinkModeFromName(sweepMode);
        std::vector<StateShrink> settings;
        for (const QString& v : sweepValues.split(',', Qt::SkipEmptyParts)) {
            bool ok = false;
            const double x = v.trimmed().toDouble(&ok);
            if (!ok) throw Error(QString("--values: '%1' is not a number").arg(v.trimmed()));
            if (mode == StateShrink::Mode::Channels) settings.push_back(StateShrink::keepChannels(x));
            else if (x != std::floor(x)) throw Error(QString("--values: '%1' is not a whole number").arg(v.trimmed()));
            else settings.push_back(mode == StateShrink::Mode::Dims ? StateShrink::keepDims(int(x)) : StateShrink::quantise(int(x)));
        }
        const std::vector<int> lengths = lengthsText.isEmpty() ? std::vector<int>{} : parseLengthList(lengthsText, "--lengths");
        const StateSweep sw = measureStateSweep(subject.model(), subject.name(), mode, settings, lengths, samples, static_cast<unsigned long long>(seed));
        return printStateSweep(sw, json, outFile, width, height, style);
    }
    if (figure == "construction") {
        if (!subject.isConstruction()) throw Error("--figure construction: needs --construction N (the n-gram order)");
        const std::vector<int> lengths = parseLengthList(lengthsText.isEmpty() ? QString("10,25,50,100,150,200") : lengthsText, "--lengths");
        renderConstructionFigure(constructionN, letters, lengths, samples, outFile, width, height, style);
        out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
        return 0;
    }
    if (figure == "capacity") {
        if (subject.isConstruction()) throw Error("--figure capacity: needs a trained model (its state size), not the construction");
        if (subject.readsText()) throw Error("--figure capacity: needs a copy model; for a pretrained one, `parrotscope lm-eval`");
        RunRecord run;
        run.dir = subject.name();
        run.config = subject.model().config();
        run.curves.push_back(subject.model().evaluate(evaluationLengths(run.config.task), samples, static_cast<unsigned long long>(seed)));
        run.status = "finished";
        renderComparison({run}, "capacity", outFile, width, height, {}, style);
        out() << subject.name() << ": " << run.curves.back().summary() << "\n";
        out() << "wrote " << QFileInfo(outFile).absoluteFilePath() << "\n";
        return 0;
    }
    // a model of another token task than copying (MQAR, n-gram lookup, MAD's) reads an example of its task
    std::optional<TaskInput> task;
    if (!subject.isConstruction() && !subject.readsText() && !subject.copyProblem().isEmpty()) {
        if (!input.isNull()) throw Error("inspect --input: " + subject.copyProblem().section(':', 0, 0) + "; give --length L --seed S for an example of its task");
        if (duplicated) throw Error("inspect --repeat-ngram: a copy input's option; this model was trained on " + subject.model().config().task.kind);
        task = subject.taskInput(length > 0 ? length : evaluationTask(subject.model().config().task).maxLen, static_cast<unsigned long long>(seed));
    }
    const QString problem = task ? QString() : subject.inputProblem(subject.readsText());
    if (!problem.isEmpty()) throw Error("inspect: " + problem);
    std::vector<int> tokens;
    QString expected;  // a zero-shot test's answer
    QString text = prompt;
    if (task) {
        tokens = task->tokens;
    } else if (const LanguageModel* lm = subject.languageModel()) {
        if (!lmTest.isEmpty()) {
            std::mt19937_64 rng(static_cast<unsigned long long>(seed));
            const LmPrompt p = makeLmPrompt(lmTest, length > 0 ? length : 10, lm->tokenizer, rng);
            text = lm->tokenizer.decode(p.ids);
            expected = p.answer;
        }
        tokens = subject.encode(text);
    } else if (!input.isNull()) {
        tokens = copyInput(input, subject.letters());
    } else {
        const int len = length > 0 ? length : subject.isConstruction() ? 40 : subject.model().config().task.maxLen;
        tokens = randomCopyInput(len, subject.letters(), static_cast<unsigned long long>(seed), duplicated ? "copy_dup_ngram" : "copy", 3);
    }
    const TaskInput* example = task ? &*task : nullptr;
    if (!ablation.isEmpty() && figure.isEmpty()) return printAblation(subject, tokens, text, ablation, json, example);
    if (!figure.isEmpty()) {
        std::optional<SubjectHeadsOff> off;  // a figure of the model with the heads switched off
        if (!ablation.isEmpty()) off.emplace(subject, ablation);
        out() << "wrote " << renderInside(subject, tokens, InsideFigureRequest{figure, layer, head, logScale, width, height, style}, outFile, example) << "\n";
        return 0;
    }
    const QString architecture = subject.architecture();
    const ModelProbes probes = subject.probe(tokens);
    QJsonArray labels;
    for (const QString& t : probes.tokens) labels.append(t);
    // a language model: what it predicts where a lookup could copy, and what it answers
    QJsonObject answer;
    if (const LanguageModel* lm = subject.languageModel()) {
        const CopyScore sc = subject.score(tokens, probes.predictions);
        answer = QJsonObject{{"copyable_tokens", sc.answers}, {"copyable_right", sc.right},
                             {"continuation", lm->generate(text, 16).text}};
        if (!expected.isEmpty()) answer["expected"] = expected;
        if (!json) {
            out() << QString("%1 tokens; predicts %2 of the %3 copyable tokens (the next token after a %4-gram seen once before)\n")
                         .arg(tokens.size()).arg(sc.right).arg(sc.answers).arg(kTextCopyOrder);
            out() << "greedy continuation: " << QJsonValue(answer["continuation"]).toString().replace('\n', "\\n") << "\n";
            if (!expected.isEmpty()) out() << "expected: " << expected << "\n";
        }
    }
    const auto withAnswer = [&answer](QJsonObject o) {
        if (!answer.isEmpty()) o["answer"] = answer;
        return o;
    };
    if (probes.attention.layers == 0) {
        if (json) {
            out() << QJsonDocument(withAnswer({{"tokens", labels}, {"heads", QJsonArray()},
                                               {"note", "no attention heads: " + architecture}}))
                         .toJson(QJsonDocument::Compact) << "\n";
        } else {
            out() << "no attention heads in this model (" << architecture << "); try --figure implicit or --figure state\n";
        }
        return 0;
    }
    const auto [begin, end] = task ? InsideSubject::lookupQueries(*task) : subject.lookupQueries(tokens);
    const LookupAnalysis an = analyseLookup(probes.attention, tokens, begin, end);
    // An order no query could look up (n longer than the input, or every n-gram ambiguous) has no
    // score: null in JSON, a dash in text, never a measured 0.
    auto orders = [](const HeadLookup& h, const auto& v) {
        QJsonArray arr;
        for (int n = 1; n <= kMaxLookupOrder; ++n)
            arr.append(h.scored[size_t(n)] > 0 ? QJsonValue(std::round(v[size_t(n)] * 1e4) / 1e4) : QJsonValue());
        return arr;
    };
    if (json) {
        QJsonArray heads, ambiguous;
        for (const HeadLookup& h : an.heads)
            heads.append(QJsonObject{{"layer", probes.attentionLayers[size_t(h.layer)]}, {"head", h.head}, {"label", h.label},
                                     {"order", h.order}, {"lookup", orders(h, h.lookup)}, {"match", orders(h, h.match)},
                                     {"previous_token", h.previousToken}, {"current_token", h.currentToken}, {"first_token", h.firstToken}, {"entropy", h.entropy}});
        for (int n = 1; n <= kMaxLookupOrder; ++n) ambiguous.append(an.ambiguous[size_t(n)]);
        out() << QJsonDocument(withAnswer({{"tokens", labels}, {"queries", QJsonArray{an.queryBegin, an.queryEnd}},
                                           {"ambiguous", ambiguous}, {"heads", heads}}))
                     .toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    QStringList shown;
    for (const auto v : labels) shown << v.toString();
    out() << "input: " << shown.join(' ') << "\n";
    out() << "lookup[n]: attention on the token after the earlier occurrence of the last n tokens (n = 1..8; "
             "- where no query has a unique earlier n-gram to look up)\n";
    for (const HeadLookup& h : an.heads) {
        QStringList l;
        for (int n = 1; n <= kMaxLookupOrder; ++n) l << (h.scored[size_t(n)] > 0 ? QString::number(h.lookup[size_t(n)], 'f', 2) : QString("   -"));
        out() << QString("layer %1 head %2  %3  lookup %4  prev %5  first %6  entropy %7\n")
                     .arg(probes.attentionLayers[size_t(h.layer)]).arg(h.head).arg(h.label, -26).arg(l.join(' '))
                     .arg(h.previousToken, 0, 'f', 2).arg(h.firstToken, 0, 'f', 2).arg(h.entropy, 0, 'f', 2);
    }
    return 0;
}

}  // namespace parrot
