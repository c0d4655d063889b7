#include "core/eval/lmtests.h"

#include "base/error.h"
#include "base/tasks/tokentask.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <set>

namespace parrot {

namespace {

const QStringList& corpusParagraphs()
{
    static const QStringList paragraphs = resourceLines("alice.txt");
    return paragraphs;
}

int uniformInt(std::mt19937_64& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

std::vector<int> concat(std::initializer_list<const std::vector<int>*> parts)
{
    std::vector<int> out;
    for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
}

LmPrompt phonebookPrompt(int entries, const BpeTokenizer& tok, std::mt19937_64& rng)
{
    static const QStringList first = resourceLines("first_names.txt"), last = resourceLines("surnames.txt");
    const long long names = (long long)first.size() * last.size();
    if (entries < 3 || entries > names)
        throw Error(QString("phone book of %1 entries: expected 3..%2 (the bundled name lists' distinct names; "
                            "the prompt needs two examples and a question)").arg(entries).arg(names));
    std::set<long long> used;
    QStringList lines, numbers;
    while (lines.size() < entries) {
        const long long pick = std::uniform_int_distribution<long long>(0, names - 1)(rng);
        if (!used.insert(pick).second) continue;
        QString number = QString::number(uniformInt(rng, 6, 9));
        while (number.size() < 10) number += QString::number(uniformInt(rng, 0, 9));
        lines << first[int(pick / last.size())] + ' ' + last[int(pick % last.size())] + ": " + number;
        numbers << number;
    }
    // two examples and the asked entry, three different lines of the book
    std::vector<int> order(static_cast<size_t>(entries));
    for (int i = 0; i < entries; ++i) order[size_t(i)] = i;
    std::shuffle(order.begin(), order.end(), rng);
    const int a = order[0], b = order[1], asked = order[2];
    const QString prompt = lines.join('\n') + "\n\n" + lines[a] + '\n' + lines[b] + "\n\n" + lines[asked].section(':', 0, 0) + ':';
    LmPrompt p;
    p.ids = tok.encode(prompt);
    p.answer = numbers[asked];
    p.target = tok.encode(' ' + numbers[asked]);
    return p;
}

LmPrompt textPrompt(int length, bool shuffled, const BpeTokenizer& tok, std::mt19937_64& rng)
{
    if (length < 2 || length > 5000) throw Error(QString("text span of %1 tokens: expected 2..5000").arg(length));
    const QStringList& paragraphs = corpusParagraphs();
    // A span from the start of a random paragraph, running on into the next ones as needed.
    int at = uniformInt(rng, 0, int(paragraphs.size()) - 1);
    QString text = paragraphs[at];
    std::vector<int> ids = tok.encode(text);
    while (int(ids.size()) < length) {
        at = (at + 1) % int(paragraphs.size());
        text += ' ' + paragraphs[at];
        ids = tok.encode(text);
    }
    ids.resize(size_t(length));
    if (shuffled) std::shuffle(ids.begin(), ids.end(), rng);
    const std::vector<int> gap = tok.encode("\n\n"), first{ids[0]};
    LmPrompt p;
    p.ids = concat({&ids, &gap, &ids, &gap, &first});
    p.target.assign(ids.begin() + 1, ids.end());
    p.answer = tok.decode(p.target);
    return p;
}

}  // namespace

void checkLmTest(const QString& id)
{
    if (findLmTest(id)) return;
    QStringList ids;
    for (const LmTestInfo& t : lmTests()) ids << t.id;
    throw Error(QString("unknown test \"%1\" (expected one of %2)").arg(id, ids.join(", ")));
}

const std::vector<LmTestInfo>& lmTests()
{
    static const std::vector<LmTestInfo> tests{
        {"phonebook", "Phone-book lookup", "entries",
         "A phone book of L entries `First Last: number`, two of its lines as examples, then a third name: answer its number.",
         "10,20,40,80"},
        {"copy-text", "Copy natural text", "tokens",
         "L tokens of English (Alice's Adventures in Wonderland), the same text again, then its first token: continue it.",
         "25,50,100,200"},
        {"shuffled-text", "Copy shuffled text", "tokens",
         "As copy text, with the span's tokens in random order: no language to lean on, only the context.", "25,50,100,200"},
        {"squad", "Question answering (SQuAD)", "paragraph tokens",
         "A paragraph, one of its questions answered as an example, then another of its questions: exact match and F1 "
         "against the gold answers, by the paragraph's length (SQuAD v2 JSON, or the bundled Alice set).",
         "50,100,150,200,300,400,600,800", "exact match", "F1", true},
    };
    return tests;
}

const LmTestInfo* findLmTest(const QString& id)
{
    for (const LmTestInfo& t : lmTests())
        if (t.id == id) return &t;
    return nullptr;
}

LmPrompt makeLmPrompt(const QString& id, int size, const BpeTokenizer& tokenizer, std::mt19937_64& rng)
{
    if (id == "phonebook") return phonebookPrompt(size, tokenizer, rng);
    checkLmTest(id);
    if (findLmTest(id)->readsData) throw Error(QString("%1 reads its questions from a file: run it with runQaTest").arg(id));
    return textPrompt(size, id == "shuffled-text", tokenizer, rng);
}

int lmAnswerBudget(const QString& id, const LmPrompt& prompt) { return int(prompt.target.size()) + (id == "phonebook" ? 4 : 0); }

LmAnswer scoreLmAnswer(const QString& id, const LmPrompt& prompt, const std::vector<int>& generated, const BpeTokenizer& tokenizer)
{
    LmAnswer a;
    for (size_t i = 0; i < prompt.target.size() && i < generated.size(); ++i) a.tokensRight += generated[i] == prompt.target[i];
    a.text = tokenizer.decode(generated, true);
    if (id == "phonebook") {
        a.text = a.text.section('\n', 0, 0).trimmed();
        QString digits = a.text;
        // an id past the tokenizer's (decoded as <|id N|>) says no digit
        static const QRegularExpression unknown(QStringLiteral("<\\|id -?[0-9]+\\|>"));
        digits.remove(unknown);
        digits.remove(QRegularExpression("[^0-9]"));
        a.right = digits == prompt.answer;
    } else {
        a.right = generated.size() >= prompt.target.size() && std::equal(prompt.target.begin(), prompt.target.end(), generated.begin());
    }
    return a;
}

QString bundledPerplexityText() { return corpusParagraphs().join('\n'); }

PerplexityResult measurePerplexity(const LanguageModel& lm, const QString& text, int window, long long maxTokens,
                                   const std::function<bool(int, int)>& keepGoing)
{
    if (window < 2) throw Error(QString("perplexity: a window of %1 tokens predicts nothing; expected >= 2").arg(window));
    std::vector<int> ids = lm.tokenizer.encode(text);
    if (maxTokens > 0 && (long long)ids.size() > maxTokens) ids.resize(size_t(maxTokens));
    if (ids.size() < 2) throw Error("perplexity: the text has fewer than two tokens");
    PerplexityResult r;
    r.window = lm.contextLength > 0 ? std::min(window, lm.contextLength) : window;
    const size_t w = size_t(r.window);
    const int total = int((ids.size() + w - 1) / w);
    double sum = 0, squares = 0;
    for (size_t a = 0; a + 1 < ids.size(); a += w) {
        const std::vector<int> piece(ids.begin() + long(a), ids.begin() + long(std::min(ids.size(), a + w)));
        for (float l : lm.model.tokenLosses(piece)) {
            sum += l;
            squares += double(l) * l;
            ++r.tokens;
        }
        ++r.windows;
        if (keepGoing && !keepGoing(r.windows, total)) break;
    }
    if (r.tokens == 0) return r;
    const double n = double(r.tokens);
    r.loss = sum / n;
    r.lossStdErr = n > 1 ? std::sqrt(std::max(0.0, (squares - n * r.loss * r.loss) / (n - 1)) / n) : 0.0;
    r.perplexity = std::exp(r.loss);
    return r;
}

int qaBudget(const LanguageModel& lm, size_t promptTokens)
{
    if (lm.contextLength <= 0) return kQaMaxNewTokens;
    return int(std::min<long long>(kQaMaxNewTokens, (long long)lm.contextLength - (long long)promptTokens));
}

QString qaAnswer(const LanguageModel& lm, const std::vector<int>& promptIds)
{
    const int end = lm.tokenizer.endOfText();
    const std::vector<int> out = lm.model.generateUntil(promptIds, qaBudget(lm, promptIds.size()), end, [&](const std::vector<int>& so) {
        // a blank line ends the answer: look at the last few tokens' text only
        const size_t from = so.size() > 4 ? so.size() - 4 : 0;
        return lm.tokenizer.decode(std::vector<int>(so.begin() + long(from), so.end())).contains(QStringLiteral("\n\n"));
    }, end);
    return squadAnswer(lm.tokenizer.decode(out));
}

QaResult runQaTest(const LanguageModel& lm, const std::vector<QaParagraph>& set, const std::vector<int>& edges, int perBucket,
                   unsigned long long seed, const std::function<bool(int, int)>& keepGoing)
{
    if (edges.size() < 2) throw Error("squad: --sizes needs at least two bucket edges (e.g. 100,200,400)");
    for (size_t i = 1; i < edges.size(); ++i)
        if (edges[i] <= edges[i - 1]) throw Error("squad: the bucket edges must increase");
    if (perBucket < 1 || perBucket > 100000) throw Error(QString("samples: expected 1..100000, got %1").arg(perBucket));
    // Every prompt first: one that does not fit the context is refused before any time is spent.
    std::vector<const QaParagraph*> order;
    for (const QaParagraph& p : set) order.push_back(&p);
    std::mt19937_64 rng(seed);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::vector<std::vector<int>>> prompts(edges.size() - 1);
    std::vector<std::vector<const QaParagraph*>> asked(edges.size() - 1);
    for (const QaParagraph* p : order) {
        const int tokens = int(lm.tokenizer.encode(p->context).size());
        const auto above = std::upper_bound(edges.begin(), edges.end(), tokens);
        if (above == edges.begin() || above == edges.end()) continue;  // outside every bucket
        const size_t bucket = size_t(above - edges.begin()) - 1;
        if (int(prompts[bucket].size()) >= perBucket) continue;
        std::vector<int> ids = lm.tokenizer.encode(squadPrompt(*p, 0, 1));
        if (qaBudget(lm, ids.size()) < kQaMinNewTokens)
            throw Error(QString("squad: a paragraph of %1 tokens makes a prompt of %2, which leaves fewer than %3 tokens for its answer "
                                "in %4's context of %5; choose smaller --sizes").arg(tokens).arg(ids.size()).arg(kQaMinNewTokens)
                                .arg(lm.name).arg(lm.contextLength));
        prompts[bucket].push_back(std::move(ids));
        asked[bucket].push_back(p);
    }
    QaResult r;
    r.curve.samples = perBucket;
    int total = 0, done = 0;
    for (const auto& b : prompts) total += int(b.size());
    for (size_t b = 0; b < prompts.size(); ++b) {
        const int n = int(prompts[b].size());
        if (n == 0) {
            r.emptyBuckets.push_back(edges[b]);
            continue;
        }
        double emSum = 0, f1Sum = 0, f1Squares = 0;
        for (int i = 0; i < n; ++i) {
            const QString answer = qaAnswer(lm, prompts[b][size_t(i)]);
            const QStringList& golds = asked[b][size_t(i)]->questions[1].answers;
            const double em = bestExactMatch(answer, golds), f1 = bestF1(answer, golds);
            emSum += em;
            f1Sum += f1;
            f1Squares += f1 * f1;
            if (keepGoing && !keepGoing(++done, total)) return r;
        }
        const double em = emSum / n, f1 = f1Sum / n;
        const double f1Var = n > 1 ? std::max(0.0, (f1Squares - n * f1 * f1) / (n - 1)) : 0.0;
        r.curve.lengths.push_back(edges[b]);
        r.curve.stringAccuracy.push_back(em);
        r.curve.stringStdErr.push_back(std::sqrt(em * (1 - em) / n));
        r.curve.charAccuracy.push_back(f1);
        r.curve.charStdErr.push_back(std::sqrt(f1Var / n));
        r.bucketEnds.push_back(edges[b + 1]);
        r.questions.push_back(n);
    }
    return r;
}

LengthCurve runLmTest(const LanguageModel& lm, const QString& id, const std::vector<int>& sizes, int samples,
                      unsigned long long seed, const std::function<bool(int, int)>& keepGoing)
{
    checkLmTest(id);
    if (findLmTest(id)->readsData) throw Error(QString("%1 reads its questions from a file: run it with runQaTest").arg(id));
    if (samples < 1 || samples > 100000) throw Error(QString("samples: expected 1..100000, got %1").arg(samples));
    if (sizes.empty()) throw Error("no sizes to test");
    // Every prompt first: one that does not fit the context is refused before any time is spent.
    std::vector<std::vector<LmPrompt>> prompts;
    for (int size : sizes) {
        std::mt19937_64 rng(seed * 1000003ULL + unsigned(size));
        prompts.emplace_back();
        for (int s = 0; s < samples; ++s) {
            prompts.back().push_back(makeLmPrompt(id, size, lm.tokenizer, rng));
            const LmPrompt& p = prompts.back().back();
            if (lm.contextLength > 0 && p.ids.size() + size_t(lmAnswerBudget(id, p)) > size_t(lm.contextLength))
                throw Error(QString("%1 at size %2: a prompt of %3 tokens and its answer pass %4's context of %5 tokens; choose smaller sizes")
                                .arg(id).arg(size).arg(p.ids.size()).arg(lm.name).arg(lm.contextLength));
        }
    }
    LengthCurve curve;
    curve.samples = samples;
    const int total = int(sizes.size()) * samples;
    int done = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        long long right = 0, tokensRight = 0, tokens = 0;
        for (const LmPrompt& p : prompts[i]) {
            const std::vector<int> out = lm.model.generate(p.ids, lmAnswerBudget(id, p), -1);
            const LmAnswer a = scoreLmAnswer(id, p, out, lm.tokenizer);
            right += a.right;
            tokensRight += a.tokensRight;
            tokens += (long long)p.target.size();
            if (keepGoing && !keepGoing(++done, total)) return curve;
        }
        curve.addAccuracy(sizes[i], right, samples, tokensRight, tokens);
    }
    return curve;
}

}  // namespace parrot
