// `inspect`: a model's attention heads on one input (a copy model, the two-layer construction or a
// pretrained language model), heads switched off, each head's importance, the state shrunk, and
// the look-inside figures.
#include "cli.h"

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
#include "args.h"
#include "clicommon.h"

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

// One `inspect` command line, read and checked: what to look at, on which input, and how to show
// it. Each field is an option's value or its declared default (kInspectOptions, commands.cpp).
struct InspectRequest {
    // the subject: exactly one of these
    QString checkpoint, bundled, modelDir;
    int constructionN = 0;  // the construction's n-gram order; 0: not the construction
    int letters = 0;        // the construction's alphabet
    // its input: a text prompt or a zero-shot test's (a language model), LETTERS, or a random one
    QString prompt, lmTest, input;
    int length = 0;  // 0: the subject's own default
    unsigned long long seed = 0;
    bool repeatNgram = false;
    // how to show it
    bool json = false;
    QString figure, outFile;
    int layer = -1, head = -1;  // -1: the figure's own choice
    bool logScale = false;
    int width = 0, height = 0;
    ExportOptions style;
    // the measurements beyond one input
    QString lengthsText;
    int samples = 0;
    HeadAblation ablation;  // --ablate; its method is --ablation's
    HeadAblation::Method method = HeadAblation::Method::Zero;
    bool importance = false;
    QString importanceTask;
    QString sweepMode, sweepValues;
};

// The input a look at one input reads: its tokens, the text of a language model's prompt, a
// zero-shot test's answer, and the example when the model was trained on another task than copying.
struct InspectInput {
    std::vector<int> tokens;
    QString text;
    QString expected;
    std::optional<TaskInput> task;
    const TaskInput* example() const { return task ? &*task : nullptr; }
};

// The options in the order they are read.
InspectRequest readInspect(Args& a)
{
    InspectRequest r;
    r.checkpoint = a.value("--checkpoint");
    r.bundled = a.value("--bundled");
    r.modelDir = a.value("--model");
    r.prompt = a.value("--prompt");
    r.lmTest = a.value("--lm-test");
    r.constructionN = a.integer("--construction");
    r.letters = a.integer("--letters");
    r.input = a.value("--input");
    r.length = a.integer("--length");
    r.seed = static_cast<unsigned long long>(a.integer("--seed"));
    r.repeatNgram = a.flag("--repeat-ngram");
    r.json = a.flag("--json");
    r.figure = a.value("--figure");
    r.outFile = a.value("--out");
    r.layer = a.integer("--layer");
    r.head = a.integer("--head");
    r.logScale = a.flag("--log");
    std::tie(r.width, r.height) = parseSize(a.text("--size"));
    r.style = figureStyle(a);
    r.lengthsText = a.value("--lengths");
    r.samples = a.integer("--samples");
    return r;
}

// The checks of options against each other, before anything is loaded: the runs (--head-importance,
// --state-sweep) and --ablation, then (checkInspectSubject) the subject, its input and the figure.
void checkInspectRuns(const InspectRequest& r, const QString& ablate, const QString& ablationMethod)
{
    const bool sweep = !r.sweepMode.isNull();
    if (r.importance && sweep) throw Error("inspect: --head-importance and --state-sweep are two runs; give one");
    if ((r.importance || sweep) && (!ablate.isNull() || !r.figure.isEmpty()))
        throw Error("inspect: --head-importance and --state-sweep draw their own figure with --out; leave out --ablate and --figure");
    if (!r.importanceTask.isNull() && !r.importance) throw Error("inspect: --task is for --head-importance");
    if (!r.sweepValues.isNull() && !sweep) throw Error("inspect: --values is for --state-sweep dims|channels|bits");
    if (sweep && r.outFile.isEmpty() && !r.json) throw Error("inspect --state-sweep: give --out FILE (.png, .pdf, .svg or .csv) or --json");
    if (!r.outFile.isEmpty() && (r.importance || sweep)) checkFigureFile(r.outFile, r.width, r.height);
    if (ablate.isNull() && !ablationMethod.isNull() && !r.importance)
        throw Error("inspect: --ablation zero|mean needs --ablate LAYER.HEAD[,LAYER.HEAD...] or --head-importance");
}

// The checks of the subject, its input and the figure against each other.
void checkInspectSubject(const InspectRequest& r)
{
    const bool sweep = !r.sweepMode.isNull();
    if (int(!r.checkpoint.isEmpty()) + int(!r.bundled.isEmpty()) + int(r.constructionN > 0) + int(!r.modelDir.isEmpty()) != 1)
        throw Error("inspect: give one of --checkpoint FILE, --bundled hard-alibi|mamba, --construction N, --model DIR");
    if (r.modelDir.isEmpty() && (!r.prompt.isNull() || !r.lmTest.isEmpty()))
        throw Error("inspect: --prompt and --lm-test are for a pretrained model's folder (--model DIR)");
    if (!r.modelDir.isEmpty() && !r.importance && int(!r.prompt.isNull()) + int(!r.lmTest.isEmpty()) != 1)
        throw Error("inspect --model: give the text, --prompt TEXT, or one of the zero-shot tests' prompts, --lm-test "
                    "phonebook|copy-text|shuffled-text [--length L] [--seed S]");
    if (!r.lmTest.isEmpty()) checkLmTest(r.lmTest);
    if (!r.figure.isEmpty() && r.outFile.isEmpty()) throw Error("inspect: --figure needs --out FILE (.png, .pdf, .svg or .csv)");
    if (r.figure.isEmpty() && !r.outFile.isEmpty() && !r.importance && !sweep)
        throw Error("inspect: --out needs --figure " + figureIds(InspectFigure).join('|'));
    if (!r.figure.isEmpty()) checkFigure(r.figure, InspectFigure);
    if (!r.ablation.isEmpty() && r.figure == "capacity")
        throw Error("inspect --ablate: --figure capacity measures the model as trained; draw a look-inside figure instead");
    if (!r.ablation.isEmpty() && r.figure == "construction")
        throw Error("inspect --ablate: --figure construction draws the construction as designed; draw a look-inside figure instead");
}

// The whole command line: read, then checked.
InspectRequest parseInspect(Args& a)
{
    InspectRequest r = readInspect(a);
    const QString ablate = a.value("--ablate"), ablationMethod = a.value("--ablation");
    r.importance = a.flag("--head-importance");
    r.importanceTask = a.value("--task");
    r.sweepMode = a.value("--state-sweep");
    r.sweepValues = a.value("--values");
    a.done();
    checkInspectRuns(r, ablate, ablationMethod);
    if (!ablate.isNull()) r.ablation.heads = parseHeadList(ablate);
    if (!ablationMethod.isNull()) r.method = ablationMethodFromName(ablationMethod);
    r.ablation.method = r.method;
    checkInspectSubject(r);
    return r;
}

// The model, construction or language model the request names.
InsideSubject loadSubject(const InspectRequest& r)
{
    if (r.constructionN > 0) return InsideSubject(ConstructionOptions{r.constructionN, r.letters});
    if (!r.bundled.isEmpty()) {
        try {
            const BundledCheckpoint& b = findBundled(r.bundled);
            return InsideSubject::load(b.path, b.label);
        } catch (const Error& e) {
            throw Error("--bundled: " + e.message());
        }
    }
    if (!r.modelDir.isEmpty()) return InsideSubject::loadLanguageModel(r.modelDir);
    return InsideSubject::load(r.checkpoint);
}

// inspect --head-importance: each head switched off alone, the drops sorted.
int inspectHeadImportance(const InsideSubject& s, const InspectRequest& r)
{
    HeadImportanceRequest q;
    q.task = r.importanceTask;
    q.length = r.length;
    q.samples = r.samples;
    q.seed = r.seed;
    q.method = r.method;
    const HeadImportance hi = measureHeadImportance(s, q);
    if (!r.outFile.isEmpty()) renderHeadImportance(hi, r.outFile, r.width, r.height, r.style);
    if (r.json) {
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
        if (!r.outFile.isEmpty()) o["figure"] = QFileInfo(r.outFile).absoluteFilePath();
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
    if (!r.outFile.isEmpty()) out() << "wrote " << QFileInfo(r.outFile).absoluteFilePath() << "\n";
    return 0;
}

// --values 8,4,2 as the settings of one kind of shrinking.
std::vector<StateShrink> stateSettings(StateShrink::Mode mode, const QString& values)
{
    std::vector<StateShrink> settings;
    for (const QString& v : values.split(',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const double x = v.trimmed().toDouble(&ok);
        if (!ok) throw Error(QString("--values: '%1' is not a number").arg(v.trimmed()));
        if (mode == StateShrink::Mode::Channels) settings.push_back(StateShrink::keepChannels(x));
        else if (x != std::floor(x)) throw Error(QString("--values: '%1' is not a whole number").arg(v.trimmed()));
        else settings.push_back(mode == StateShrink::Mode::Dims ? StateShrink::keepDims(int(x)) : StateShrink::quantise(int(x)));
    }
    return settings;
}

// inspect --state-sweep: accuracy against length for each state setting, beside its bound.
int inspectStateSweep(const InsideSubject& s, const InspectRequest& r)
{
    if (s.isConstruction() || s.readsText())
        throw Error("inspect --state-sweep: needs a trained state-space model (--checkpoint FILE or --bundled mamba)");
    const StateShrink::Mode mode = stateShrinkModeFromName(r.sweepMode);
    const std::vector<StateShrink> settings = stateSettings(mode, r.sweepValues);
    const std::vector<int> lengths = r.lengthsText.isEmpty() ? std::vector<int>{} : parseLengthList(r.lengthsText, "--lengths");
    const StateSweep sw = measureStateSweep(s.model(), s.name(), mode, settings, lengths, r.samples, r.seed);
    if (!r.outFile.isEmpty()) renderStateSweep(sw, r.outFile, r.width, r.height, r.style);
    if (r.json) {
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
        if (!r.outFile.isEmpty()) o["figure"] = QFileInfo(r.outFile).absoluteFilePath();
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
    if (!r.outFile.isEmpty()) out() << "wrote " << QFileInfo(r.outFile).absoluteFilePath() << "\n";
    return 0;
}

// inspect --construction N --figure construction: the copy paper's construction for orders n-3..n
// measured against its bound.
int inspectConstruction(const InsideSubject& s, const InspectRequest& r)
{
    if (!s.isConstruction()) throw Error("--figure construction: needs --construction N (the n-gram order)");
    const std::vector<int> lengths = parseLengthList(r.lengthsText.isEmpty() ? QString("10,25,50,100,150,200") : r.lengthsText, "--lengths");
    checkFigureFile(r.outFile, r.width, r.height);
    ConstructionCurves c{r.letters, {}, {}};
    for (int k = std::max(1, r.constructionN - 3); k <= r.constructionN; ++k) {
        c.orders.push_back(k);
        c.curves.push_back(CopyConstruction({k, r.letters}).evaluate(lengths, r.samples, 1));
    }
    QCustomPlot plot;
    plot.setBackground(Qt::white);
    plot.resize(layoutSize(r.width, r.height));
    const QString csv = drawConstruction(plot, c);
    savePlot(plot, r.outFile, r.width, r.height, "two-layer copy construction", csv, r.style);
    for (size_t i = 0; i < c.orders.size(); ++i) out() << "n = " << c.orders[i] << ": " << c.curves[i].summary() << "\n";
    out() << "wrote " << QFileInfo(r.outFile).absoluteFilePath() << "\n";
    return 0;
}

// inspect --figure capacity: the model's state against the copy bound, and its longest copy.
int inspectCapacity(const InsideSubject& s, const InspectRequest& r)
{
    if (s.isConstruction()) throw Error("--figure capacity: needs a trained model (its state size), not the construction");
    if (s.readsText()) throw Error("--figure capacity: needs a copy model; for a pretrained one, `parrotscope lm-eval`");
    RunRecord run;
    run.dir = s.name();
    run.config = s.model().config();
    run.curves.push_back(s.model().evaluate(evaluationLengths(run.config.task), r.samples, r.seed));
    run.status = "finished";
    renderComparison({run}, "capacity", r.outFile, r.width, r.height, comparisonOptions(), r.style);
    out() << s.name() << ": " << run.curves.back().summary() << "\n";
    out() << "wrote " << QFileInfo(r.outFile).absoluteFilePath() << "\n";
    return 0;
}

// The one input of the lookup listing, --ablate and the look-inside figures: an example of the
// model's own task when that is not copying (MQAR, n-gram lookup, MAD's), a language model's prompt
// (or a zero-shot test's), --input LETTERS, or a random copy input.
InspectInput inspectInput(const InsideSubject& s, const InspectRequest& r)
{
    InspectInput in;
    if (!s.isConstruction() && !s.readsText() && !s.copyProblem().isEmpty()) {
        if (!r.input.isNull()) throw Error("inspect --input: " + s.copyProblem().section(':', 0, 0) + "; give --length L --seed S for an example of its task");
        if (r.repeatNgram) throw Error("inspect --repeat-ngram: a copy input's option; this model was trained on " + s.model().config().task.kind);
        in.task = s.taskInput(r.length > 0 ? r.length : evaluationTask(s.model().config().task).maxLen, r.seed);
    }
    const QString problem = in.task ? QString() : s.inputProblem(s.readsText());
    if (!problem.isEmpty()) throw Error("inspect: " + problem);
    in.text = r.prompt;
    if (in.task) {
        in.tokens = in.task->tokens;
    } else if (const LanguageModel* lm = s.languageModel()) {
        if (!r.lmTest.isEmpty()) {
            std::mt19937_64 rng(r.seed);
            const LmPrompt p = makeLmPrompt(r.lmTest, r.length > 0 ? r.length : 10, lm->tokenizer, rng);
            in.text = lm->tokenizer.decode(p.ids);
            in.expected = p.answer;
        }
        in.tokens = s.encode(in.text);
    } else if (!r.input.isNull()) {
        in.tokens = copyInput(r.input, s.letters());
    } else {
        const int len = r.length > 0 ? r.length : s.isConstruction() ? 40 : s.model().config().task.maxLen;
        in.tokens = randomCopyInput(len, s.letters(), r.seed, r.repeatNgram ? "copy_dup_ngram" : "copy", 3);
    }
    return in;
}

// inspect --ablate: the answers with and without the heads, the ones that change listed.
struct AblationOutcome {
    CopyScore before, after;
    QString continuation, cutContinuation;  // a language model's greedy continuations
    QJsonArray changed;                     // the scored positions whose prediction changes
    QStringList lines;                      // the same, as text
};

AblationOutcome measureAblation(const InsideSubject& s, const InspectInput& in, const HeadAblation& ablation)
{
    const TaskInput* task = in.example();
    const std::vector<int>& tokens = in.tokens;
    const auto scoreOf = [&](const std::vector<int>& predictions) { return s.score(tokens, predictions, task); };
    // what each position should produce: a task example's answers (MQAR reads filler in their place)
    const std::vector<int>& expected = task ? task->example.tokens : tokens;
    AblationOutcome o;
    const std::vector<int> plain = s.predictions(tokens);
    o.before = scoreOf(plain);
    const LanguageModel* lm = s.languageModel();
    if (lm) o.continuation = lm->generate(in.text, 16).text;
    std::vector<int> cut;
    {
        const SubjectHeadsOff off(s, ablation);
        cut = s.predictions(tokens);
        if (lm) o.cutContinuation = lm->generate(in.text, 16).text;
    }
    o.after = scoreOf(cut);
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
    for (size_t t = 0; t < o.after.wrong.size(); ++t) {
        if (plain[t] == cut[t] || t + 1 >= tokens.size() || t >= scored.wrong.size() || !scored.wrong[t]) continue;
        const int want = task && task->readsOut ? expected[t] : expected[t + 1];
        o.changed.append(QJsonObject{{"position", int(t)}, {"expected", label(want)}, {"plain", label(plain[t])},
                                     {"ablated", label(cut[t])}, {"right_before", !o.before.wrong[t]}, {"right_after", !o.after.wrong[t]}});
        o.lines << QString("  %1  %2 -> expected %3, predicts %4 %5, with %6 off %7 %8")
                       .arg(t, 4).arg(t < labels.tokens.size() ? labels.tokens[t] : QString(), label(want), label(plain[t]),
                            o.before.wrong[t] ? "✗" : "✓", off, label(cut[t]), o.after.wrong[t] ? "✗" : "✓");
    }
    return o;
}

int inspectAblation(const InsideSubject& s, const InspectInput& in, const InspectRequest& r)
{
    const HeadAblation& ablation = r.ablation;
    const AblationOutcome o = measureAblation(s, in, ablation);
    const LanguageModel* lm = s.languageModel();
    if (r.json) {
        QJsonArray heads;
        for (const auto& [l, h] : ablation.heads) heads.append(QString("%1.%2").arg(l).arg(h));
        QJsonObject j{{"ablation", QJsonObject{{"method", ablationMethodName(ablation.method)}, {"heads", heads}}},
                      {"answers", o.before.answers}, {"right", o.before.right}, {"right_ablated", o.after.right}, {"changed", o.changed}};
        if (lm) j["continuation"] = o.continuation, j["continuation_ablated"] = o.cutContinuation;
        out() << QJsonDocument(j).toJson(QJsonDocument::Compact) << "\n";
        return 0;
    }
    const QString off = ablation.heads.size() == 1 ? "the head" : "the heads";
    const auto shown = [](QString t) { return t.replace('\n', "\\n").replace('\r', "\\r"); };
    out() << s.name() << ": " << ablation.describe() << " (a forward-time mask; the weights are untouched)\n";
    out() << QString("%1 %2 of %3 %4; with %5 off %6 of %3\n")
                 .arg(lm ? "predicts" : in.task ? "answers" : "copies").arg(o.before.right).arg(o.before.answers)
                 .arg(lm ? "copyable tokens (the next token after a repeated n-gram)" : "answer tokens", off).arg(o.after.right);
    if (!o.lines.isEmpty()) out() << "answers that change:\n" << o.lines.join('\n') << "\n";
    if (lm)
        out() << "greedy continuation: " << shown(o.continuation) << "\n"
              << QString("with %1 off: ").arg(off).leftJustified(21) << shown(o.cutContinuation) << "\n";
    return 0;
}

// inspect --figure attention|implicit|state|delta: a look-inside view of the input, of the model
// with the heads switched off when --ablate names them.
int inspectFigure(const InsideSubject& s, const InspectInput& in, const InspectRequest& r)
{
    std::optional<SubjectHeadsOff> off;
    if (!r.ablation.isEmpty()) off.emplace(s, r.ablation);
    out() << "wrote "
          << renderInside(lookInside(s, in.tokens, in.example()),
                          InsideFigureRequest{r.figure, r.layer, r.head, r.logScale, r.width, r.height, r.style}, r.outFile)
          << "\n";
    return 0;
}

// A language model's part of the lookup listing: what it predicts where a lookup could copy, and
// what it answers (printed unless JSON); empty for another subject.
QJsonObject languageModelAnswer(const InsideSubject& s, const InspectInput& in, const ModelProbes& probes, bool json)
{
    const LanguageModel* lm = s.languageModel();
    if (!lm) return {};
    const CopyScore sc = s.score(in.tokens, probes.predictions);
    QJsonObject answer{{"copyable_tokens", sc.answers}, {"copyable_right", sc.right}, {"continuation", lm->generate(in.text, 16).text}};
    if (!in.expected.isEmpty()) answer["expected"] = in.expected;
    if (!json) {
        out() << QString("%1 tokens; predicts %2 of the %3 copyable tokens (the next token after a %4-gram seen once before)\n")
                     .arg(in.tokens.size()).arg(sc.right).arg(sc.answers).arg(kTextCopyOrder);
        out() << "greedy continuation: " << QJsonValue(answer["continuation"]).toString().replace('\n', "\\n") << "\n";
        if (!in.expected.isEmpty()) out() << "expected: " << in.expected << "\n";
    }
    return answer;
}

// An order no query could look up (n longer than the input, or every n-gram ambiguous) has no
// score: null in JSON, a dash in text, never a measured 0.
QJsonArray orderScores(const HeadLookup& h, const std::array<double, kMaxLookupOrder + 1>& v)
{
    QJsonArray arr;
    for (int n = 1; n <= kMaxLookupOrder; ++n) arr.append(h.scored[size_t(n)] > 0 ? QJsonValue(std::round(v[size_t(n)] * 1e4) / 1e4) : QJsonValue());
    return arr;
}

void printLookupJson(const LookupAnalysis& an, const ModelProbes& probes, QJsonObject o)
{
    QJsonArray heads, ambiguous;
    for (const HeadLookup& h : an.heads)
        heads.append(QJsonObject{{"layer", probes.attentionLayers[size_t(h.layer)]}, {"head", h.head}, {"label", h.label},
                                 {"order", h.order}, {"lookup", orderScores(h, h.lookup)}, {"match", orderScores(h, h.match)},
                                 {"previous_token", h.previousToken}, {"current_token", h.currentToken}, {"first_token", h.firstToken}, {"entropy", h.entropy}});
    for (int n = 1; n <= kMaxLookupOrder; ++n) ambiguous.append(an.ambiguous[size_t(n)]);
    o["queries"] = QJsonArray{an.queryBegin, an.queryEnd};
    o["ambiguous"] = ambiguous;
    o["heads"] = heads;
    out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
}

void printLookupText(const LookupAnalysis& an, const ModelProbes& probes)
{
    out() << "input: " << QStringList(probes.tokens.begin(), probes.tokens.end()).join(' ') << "\n";
    out() << "lookup[n]: attention on the token after the earlier occurrence of the last n tokens (n = 1..8; "
             "- where no query has a unique earlier n-gram to look up)\n";
    for (const HeadLookup& h : an.heads) {
        QStringList l;
        for (int n = 1; n <= kMaxLookupOrder; ++n) l << (h.scored[size_t(n)] > 0 ? QString::number(h.lookup[size_t(n)], 'f', 2) : QString("   -"));
        out() << QString("layer %1 head %2  %3  lookup %4  prev %5  first %6  entropy %7\n")
                     .arg(probes.attentionLayers[size_t(h.layer)]).arg(h.head).arg(h.label, -26).arg(l.join(' '))
                     .arg(h.previousToken, 0, 'f', 2).arg(h.firstToken, 0, 'f', 2).arg(h.entropy, 0, 'f', 2);
    }
}

// inspect without a run or a figure: each attention head's n-gram lookup scores and label
// (base/analysis/lookup.h), and a language model's answer.
int inspectLookup(const InsideSubject& s, const InspectInput& in, bool json)
{
    const ModelProbes probes = s.probe(in.tokens);
    QJsonArray labels;
    for (const QString& t : probes.tokens) labels.append(t);
    const QJsonObject answer = languageModelAnswer(s, in, probes, json);
    QJsonObject o{{"tokens", labels}};
    if (!answer.isEmpty()) o["answer"] = answer;
    if (probes.attention.layers == 0) {
        o["heads"] = QJsonArray();
        o["note"] = "no attention heads: " + s.architecture();
        if (json) out() << QJsonDocument(o).toJson(QJsonDocument::Compact) << "\n";
        else out() << "no attention heads in this model (" << s.architecture() << "); try --figure implicit or --figure state\n";
        return 0;
    }
    const auto [begin, end] = s.lookupQueries(in.tokens, in.example());
    const LookupAnalysis an = analyseLookup(probes.attention, in.tokens, begin, end);
    if (json) printLookupJson(an, probes, o);
    else printLookupText(an, probes);
    return 0;
}

}  // namespace

int cmdInspect(Args& a)
{
    const InspectRequest r = parseInspect(a);
    const InsideSubject subject = loadSubject(r);
    if (!r.ablation.isEmpty()) {
        const QString why = subject.ablationProblem(r.ablation);
        if (!why.isEmpty()) throw Error("inspect --ablate: " + why);
    }
    if (r.importance) return inspectHeadImportance(subject, r);
    if (!r.sweepMode.isNull()) return inspectStateSweep(subject, r);
    if (r.figure == "construction") return inspectConstruction(subject, r);
    if (r.figure == "capacity") return inspectCapacity(subject, r);
    const InspectInput in = inspectInput(subject, r);
    if (!r.figure.isEmpty()) return inspectFigure(subject, in, r);
    if (!r.ablation.isEmpty()) return inspectAblation(subject, in, r);
    return inspectLookup(subject, in, r.json);
}

}  // namespace parrot
