// The n-gram lookup analysis on constructed attention patterns with known answers, the head
// kinds, the head a figure shows, the expected lookup positions, and a copy scored.
#include "base/analysis/capacity.h"
#include "base/analysis/lookup.h"
#include "base/error.h"
#include "base/tasks/tokentask.h"
#include "core/analysis/inside.h"

#include <QtTest>

#include <numeric>

using namespace parrot;

namespace {

// `$ s | s .` for a string given as letters.
std::vector<int> copyTokens(const QString& s)
{
    std::vector<int> t{CopyVocab::Bos};
    for (QChar c : s) t.push_back(CopyVocab::FirstLetter + (c.unicode() - 'a'));
    t.push_back(CopyVocab::Sep);
    for (QChar c : s) t.push_back(CopyVocab::FirstLetter + (c.unicode() - 'a'));
    t.push_back(CopyVocab::Eos);
    return t;
}

// One layer, one head per pattern; row t of each head from `rowOf(head, t)` (a key index, or
// -1 for uniform attention over 0..t).
AttentionMaps maps(int heads, int T, const std::function<int(int, int)>& rowOf)
{
    AttentionMaps m;
    m.layers = 1;
    m.heads = heads;
    m.length = T;
    m.weights.assign(size_t(heads) * T * T, 0.f);
    for (int h = 0; h < heads; ++h)
        for (int t = 0; t < T; ++t) {
            const int k = rowOf(h, t);
            for (int j = 0; j <= t; ++j)
                m.weights[(size_t(h) * T + t) * T + j] = k < 0 ? 1.f / float(t + 1) : (j == k ? 1.f : 0.f);
        }
    return m;
}

}  // namespace

class TestLookup : public QObject {
    Q_OBJECT
private slots:
    // Distinct letters: every 1-gram is unambiguous, a perfect copier's lookup head scores 1 at
    // every n, and the head that looks at the match itself is told apart from it.
    void perfectHeadsOnDistinctLetters()
    {
        const std::vector<int> tokens = copyTokens("qwertyuiop");  // $ 10 | 10 .
        const int T = int(tokens.size()), sep = 11;
        const auto [begin, end] = copyQueries(tokens, CopyVocab::Sep);
        QCOMPARE(begin, sep);
        QCOMPARE(end, T - 1);
        // the query at t copies token t+1: in the prompt it sits at t + 1 - (sep)... = t - 10
        const AttentionMaps m = maps(5, T, [&](int h, int t) {
            if (t < sep) return 0;
            switch (h) {
            case 0: return t - 10;  // next token after the earlier occurrence of token t
            case 1: return t - 11;  // the earlier occurrence itself
            case 2: return t - 1;   // previous token
            case 3: return 0;       // sink
            default: return -1;     // uniform
            }
        });
        const LookupAnalysis a = analyseLookup(m, tokens, begin, end);
        QCOMPARE(a.heads.size(), size_t(5));
        QCOMPARE(a.heads[0].lookup[1], 1.0);
        QCOMPARE(a.heads[0].lookup[3], 1.0);
        QCOMPARE(a.heads[0].match[1], 0.0);
        // no n-gram repeats in this input, so nothing tells order 1 from longer ones
        QCOMPARE(a.heads[0].label, QString("n-gram lookup (order ≥ 1)"));
        QVERIFY(!a.heads[0].orderExact);
        QCOMPARE(a.heads[1].match[2], 1.0);
        QCOMPARE(a.heads[1].label, QString("n-gram match (order ≥ 1)"));
        QCOMPARE(a.heads[2].label, QString("previous-token"));
        QCOMPARE(a.heads[2].previousToken, 1.0);
        QCOMPARE(a.heads[3].label, QString("first-token sink"));
        QCOMPARE(a.heads[4].label, QString("diffuse"));
        QVERIFY(qAbs(a.heads[4].entropy - 1.0) < 1e-6);
        QCOMPARE(a.ambiguous[1], 0);
        const std::vector<HeadKind> kinds{HeadKind::NgramLookup, HeadKind::NgramMatch, HeadKind::PreviousToken,
                                          HeadKind::FirstTokenSink, HeadKind::Diffuse};
        for (size_t h = 0; h < kinds.size(); ++h) QVERIFY2(a.heads[h].kind == kinds[h], qPrintable(a.heads[h].label));
        // the head a figure shows: the perfect copier; without it, the uniform head, whose weight
        // on the next token (1 / (t + 1)) beats the zero of the others
        QCOMPARE(strongestLookupHead(a, {0, 1, 2, 3, 4}), 0);
        QCOMPARE(strongestLookupHead(a, {1, 2, 3, 4}), 4);
        QCOMPARE(strongestLookupHead(a, {3, 1, 2}), 3);  // all zero: the first candidate
        QCOMPARE(strongestLookupHead(a, {}), -1);
    }

    // Every kind from its scores, in the order of the rules, with the labels people read; a
    // score at an order no query was scored at does not count.
    void headKindsAndTheirLabels()
    {
        auto labelled = [](const std::function<void(HeadLookup&)>& set) {
            HeadLookup h;
            h.scored.fill(10);
            set(h);
            labelHead(h);
            return h;
        };
        HeadLookup h = labelled([](HeadLookup& h) { h.lookup[3] = 0.9, h.previousToken = 0.9; });
        QVERIFY(h.kind == HeadKind::NgramLookup);
        QCOMPARE(h.label, QString("n-gram lookup (order ≥ 3)"));
        QCOMPARE(h.order, 3);
        // where the 3-gram is ambiguous and the 4-gram is not, it finds the token only by chance:
        // order 3 exactly; where the 1-gram is ambiguous it finds it, which raises the order from 1
        h = labelled([](HeadLookup& h) {
            h.lookup.fill(0.9);
            h.resolving[1] = h.resolving[2] = h.resolving[3] = 4;
            h.resolved[1] = h.resolved[2] = 0.85;
            h.resolved[3] = 0.4;
        });
        QCOMPARE(h.label, QString("n-gram lookup (order 3)"));
        QCOMPARE(h.order, 3);
        QVERIFY(h.orderExact);
        h = labelled([](HeadLookup& h) { h.lookup[3] = 0.4, h.match[2] = 0.6; });
        QVERIFY(h.kind == HeadKind::NgramMatch);
        QCOMPARE(h.label, QString("n-gram match (order ≥ 2)"));
        QCOMPARE(h.order, 2);
        h = labelled([](HeadLookup& h) {  // a match head is bounded by its own resolving scores
            h.match[2] = 0.6;
            h.resolving[2] = 3;
            h.resolved[2] = 0.9;  // (a lookup's: not this head's)
            h.matchResolved[2] = 0.1;
        });
        QCOMPARE(h.label, QString("n-gram match (order 2)"));
        h = labelled([](HeadLookup& h) { h.previousToken = 0.6, h.currentToken = 0.9; });
        QVERIFY(h.kind == HeadKind::PreviousToken);
        QCOMPARE(h.label, QString("previous-token"));
        QCOMPARE(h.order, 0);
        h = labelled([](HeadLookup& h) { h.currentToken = 0.6, h.firstToken = 0.9; });
        QVERIFY(h.kind == HeadKind::CurrentToken);
        QCOMPARE(h.label, QString("current-token"));
        h = labelled([](HeadLookup& h) { h.firstToken = 0.6, h.entropy = 0.9; });
        QVERIFY(h.kind == HeadKind::FirstTokenSink);
        QCOMPARE(h.label, QString("first-token sink"));
        h = labelled([](HeadLookup& h) { h.entropy = 0.7; });
        QVERIFY(h.kind == HeadKind::Diffuse);
        QCOMPARE(h.label, QString("diffuse"));
        h = labelled([](HeadLookup& h) {
            h.scored[1] = 0;
            h.lookup[1] = 1;  // never scored: no lookup
            h.lookup[2] = 0.2;
            h.entropy = 0.5;
        });
        QVERIFY(h.kind == HeadKind::Other);
        QCOMPARE(h.label, QString("other"));
        QCOMPARE(h.order, 0);
    }

    // A repeated letter makes the 1-gram ambiguous there: those queries are counted, not scored,
    // and a head that reads the right next token (found by the 2-gram) is a lookup of order 2 at
    // least (no 2-gram repeats, so the input cannot tell 2 from longer).
    void ambiguityRaisesTheOrder()
    {
        const std::vector<int> tokens = copyTokens("abcadefaghij");  // 'a' three times
        const int T = int(tokens.size()), sep = 13;
        const auto [begin, end] = copyQueries(tokens, CopyVocab::Sep);
        const AttentionMaps m = maps(1, T, [&](int, int t) { return t < sep ? 0 : t - 12; });
        const LookupAnalysis a = analyseLookup(m, tokens, begin, end);
        // 'a' at answer positions occurs 3 times in the prompt, and the queries after the
        // second and third 'a' of the copy see it 4 and 5 times: ambiguous 1-grams
        QVERIFY(a.ambiguous[1] >= 3);
        QCOMPARE(a.ambiguous[2], 0);
        QCOMPARE(a.heads[0].lookup[2], 1.0);
        QCOMPARE(a.heads[0].lookup[1], 1.0);  // scored only where unambiguous, and right there
        QVERIFY(a.heads[0].scored[1] < a.heads[0].scored[2]);
        QCOMPARE(a.heads[0].resolving[1], 2);  // the copy's second and third 'a' (its first follows `|`, never seen before)
        QCOMPARE(a.heads[0].resolved[1], 1.0);
        QCOMPARE(a.heads[0].resolving[2], 0);
        QCOMPARE(a.heads[0].label, QString("n-gram lookup (order ≥ 2)"));
        QCOMPARE(a.heads[0].order, 2);
        // A head that reads the most recent earlier occurrence of the last token: right where the
        // letter is unique, wrong after the repeated ones: an order-1 head, told so exactly.
        const AttentionMaps recent = maps(1, T, [&](int, int t) {
            for (int j = t - 1; t >= sep && j >= 0; --j)
                if (tokens[size_t(j)] == tokens[size_t(t)]) return j + 1;
            return 0;
        });
        const HeadLookup r = analyseLookup(recent, tokens, begin, end).heads[0];
        QCOMPARE(r.lookup[1], 1.0);
        QVERIFY(r.resolved[1] < 0.5);
        QCOMPARE(r.label, QString("n-gram lookup (order 1)"));
        QVERIFY(r.orderExact);
        // scores below 80% of the best do not set the order
        HeadLookup h;
        h.scored.fill(10);
        h.lookup[1] = 0.5;
        h.lookup[2] = 0.95;
        h.lookup[3] = 0.96;
        labelHead(h);
        QCOMPARE(h.label, QString("n-gram lookup (order ≥ 2)"));
        QCOMPARE(h.order, 2);
    }

    // The copy paper's bound in numbers: a state of m bits holds m / log2|V| letters, and a string
    // one bit longer than the state is copied with error at least 1/2.
    void capacityBound()
    {
        const double bitsPerLetter = std::log2(26.0);
        QCOMPARE(stringBits(10, 26), 10 * bitsPerLetter);
        QVERIFY(qAbs(crossingLength(10 * bitsPerLetter, 26) - 10.0) < 1e-12);
        QCOMPARE(minimumCopyError(10 * bitsPerLetter, 10, 26), 0.0);
        QVERIFY(qAbs(minimumCopyError(10 * bitsPerLetter - 1, 10, 26) - 0.5) < 1e-12);
        QVERIFY(minimumCopyError(64, 100, 26) > 0.999999);
        LengthCurve c;
        c.lengths = {16, 4, 8, 12};  // unordered on purpose
        c.stringAccuracy = {0.95, 1.0, 0.93, 0.5};
        QCOMPARE(longestCopied(c), 8);  // 16 passes again, but 12 broke the run
        QCOMPARE(longestCopied(c, 0.4), 16);
        c.stringAccuracy = {0.95, 0.2, 0.93, 0.5};
        QCOMPARE(longestCopied(c), 0);
    }

    // The copy construction (n = 3) on a string with "abc" twice: its layer-2 head is the lookup
    // head a figure shows, it reads exactly the cells lookupMarks expects, and the queries whose
    // 3-gram is ambiguous are the crosses, not the circles.
    void marksAreWhereTheConstructionLooks()
    {
        const int n = 3;
        const std::vector<int> tokens = copyTokens("abcdefabcxyz");
        const InsideSubject construction(ConstructionOptions{n, 26});
        const ModelProbes p = construction.probe(tokens);
        const auto [begin, end] = copyQueries(tokens, CopyVocab::Sep);
        const LookupAnalysis a = analyseLookup(p.attention, tokens, begin, end);
        std::vector<int> all(a.heads.size());
        std::iota(all.begin(), all.end(), 0);
        QCOMPARE(strongestLookupHead(a, all), n);  // layer 2 (index 1), head 0
        QVERIFY(a.heads[size_t(n)].kind == HeadKind::NgramLookup);
        QVERIFY(a.heads[size_t(n)].lookup[n] > 0.95);
        QVERIFY(a.heads[0].kind == HeadKind::PreviousToken);  // layer 1, head 0 reads t - 1

        std::vector<std::pair<int, int>> marks, warnings;
        lookupMarks(tokens, n, false, marks, warnings);
        const int sep = 13;
        // the queries from `b c d` to `x y z` read a unique 3-gram; the two that end `a b c` see
        // it twice in the prompt, then three times once the copy has one
        QCOMPARE(marks.size(), size_t(8));
        QCOMPARE(warnings.size(), size_t(2 + 3));
        for (const auto& [t, key] : marks) {
            QVERIFY(t >= sep && t < end);
            QVERIFY2(p.attention.at(1, 0, t, key) > 0.9f, qPrintable(QString("query %1, key %2").arg(t).arg(key)));
        }
        for (const auto& [t, key] : warnings) QVERIFY(tokens[size_t(t)] == tokens[3]);  // each ends in 'c'
        // the matched token instead: one to the left of each circle
        std::vector<std::pair<int, int>> matched, matchedWarnings;
        lookupMarks(tokens, n, true, matched, matchedWarnings);
        QCOMPARE(matched.size(), marks.size());
        for (size_t i = 0; i < marks.size(); ++i) QCOMPARE(matched[i], std::make_pair(marks[i].first, marks[i].second - 1));
        // longer n-grams are unique again; a row without `|` has nothing to look up
        lookupMarks(tokens, 4, false, marks, warnings);
        QVERIFY(warnings.empty());
        QVERIFY(!marks.empty());
        lookupMarks(std::vector<int>(tokens.begin(), tokens.begin() + sep), n, false, marks, warnings);
        QVERIFY(marks.empty() && warnings.empty());
    }

    // The answers of `$ s | s .` are the letters of the second s: a wrong `.` after them is not
    // counted, a wrong letter is, and the construction misses only where a 3-gram repeats.
    void copyScoredOnTheAnswersAlone()
    {
        const std::vector<int> tokens = copyTokens("abcdefabcxyz");  // 12 letters
        const int sep = 13, last = int(tokens.size()) - 2;           // the last letter predicts `.`
        std::vector<int> perfect(tokens.begin() + 1, tokens.end());
        perfect.push_back(CopyVocab::Pad);
        CopyScore s = scoreCopy(tokens, perfect);
        QCOMPARE(s.answers, 12);
        QCOMPARE(s.right, 12);
        QCOMPARE(s.wrong.size(), tokens.size());
        std::vector<int> predictions = perfect;
        predictions[size_t(last)] = CopyVocab::FirstLetter;  // not `.`: not an answer
        predictions[2] = CopyVocab::Eos;                     // in the prompt: not an answer either
        predictions[size_t(sep + 4)] = CopyVocab::Eos;       // the fifth answer letter
        s = scoreCopy(tokens, predictions);
        QCOMPARE(s.answers, 12);
        QCOMPARE(s.right, 11);
        for (size_t t = 0; t < tokens.size(); ++t) QCOMPARE(bool(s.wrong[t]), int(t) == sep + 4);
        // without the end `.` the last letter is an answer too
        const std::vector<int> open(tokens.begin(), tokens.end() - 1);
        QCOMPARE(scoreCopy(open, std::vector<int>(perfect.begin(), perfect.end() - 1)).answers, 12);
        QCOMPARE(scoreCopy(std::vector<int>(tokens.begin(), tokens.begin() + sep), std::vector<int>(size_t(sep), 0)).answers, 0);
        QVERIFY_THROWS_EXCEPTION(Error, scoreCopy(tokens, open));
        // the construction (n = 3) after the copy's second `a b c`, which the prompt follows with
        // d and x and the copy with d again: it reads d; everywhere else it is right
        const CopyScore c = scoreCopy(tokens, InsideSubject(ConstructionOptions{3, 26}).predictions(tokens));
        QCOMPARE(c.answers, 12);
        QVERIFY(c.wrong[22]);
        for (size_t t = 0; t < tokens.size(); ++t)
            if (t != 16 && t != 22) QVERIFY2(!c.wrong[t], qPrintable(QString("query %1").arg(t)));
    }

    // A text prompt (token ids of any vocabulary, no separator): the copyable tokens are those whose
    // last 3 tokens occurred once before with the same token after them; a phone book's last
    // query (its name repeated) looks up the number, which a lookup head reads and the marks show.
    void textScoredOnItsCopyableTokens()
    {
        // "A B : 7 8 \n C D : 5 6 \n \n C D :" as ids (a two-entry phone book asked for C D)
        const std::vector<int> tokens{101, 102, 58, 7, 8, 10, 103, 104, 58, 5, 6, 10, 10, 103, 104, 58};
        const int T = int(tokens.size());
        std::vector<int> perfect(tokens.begin() + 1, tokens.end());
        perfect.push_back(5);  // the number after the last "C D :"
        CopyScore s = scoreText(tokens, perfect);
        // copyable: t = 14 ("C D" seen once; after it ":") only; t = 15 predicts past the prompt
        QCOMPARE(s.answers, 1);
        QCOMPARE(s.right, 1);
        std::vector<int> wrong = perfect;
        wrong[14] = 10;
        s = scoreText(tokens, wrong);
        QCOMPARE(s.right, 0);
        QVERIFY(s.wrong[14]);
        QCOMPARE(int(std::count(s.wrong.begin(), s.wrong.end(), true)), 1);
        // a repeated passage: every token after the third of its second reading is copyable
        std::vector<int> passage{1, 2, 3, 4, 5, 6, 7, 8};
        std::vector<int> twice = passage;
        twice.push_back(0);
        twice.insert(twice.end(), passage.begin(), passage.end());
        std::vector<int> next(twice.begin() + 1, twice.end());
        next.push_back(0);
        QCOMPARE(scoreText(twice, next).answers, 5);  // the second reading from its third token on (queries 11..15)
        QVERIFY_THROWS_EXCEPTION(Error, scoreText(tokens, std::vector<int>(3, 0)));

        // the marks of every query of a text; the last one's order-3 lookup is the number's first digit
        std::vector<std::pair<int, int>> marks, warnings;
        lookupMarksIn(tokens, 1, T, 3, false, marks, warnings);
        QVERIFY(std::find(marks.begin(), marks.end(), std::pair<int, int>{T - 1, 9}) != marks.end());
        QVERIFY(warnings.empty());
        lookupMarksIn(tokens, 1, T, 1, false, marks, warnings);  // ":" and "\n" occur more than once: ambiguous
        QVERIFY(std::find(warnings.begin(), warnings.end(), std::pair<int, int>{T - 1, 3}) != warnings.end());
        // a head that reads the token after the earlier occurrence is an order-3 lookup head on
        // the text's queries (all but the first); one that reads the previous token is not
        const auto target = [&](int t) {
            const std::vector<int> found = earlierOccurrences(tokens, t, 3);
            return found.size() == 1 ? found[0] + 1 : std::max(0, t - 1);
        };
        const LookupAnalysis a = analyseLookup(maps(2, T, [&](int h, int t) { return h == 0 ? target(t) : std::max(0, t - 1); }), tokens, 1, T);
        QCOMPARE(a.queryBegin, 1);
        QCOMPARE(a.queryEnd, T);
        QCOMPARE(a.heads[0].kind, HeadKind::NgramLookup);
        QCOMPARE(a.heads[0].lookup[3], 1.0);
        QCOMPARE(a.heads[1].kind, HeadKind::PreviousToken);
    }

    void badInputIsAnError()
    {
        const std::vector<int> tokens = copyTokens("abc");
        AttentionMaps m = maps(1, int(tokens.size()), [](int, int) { return 0; });
        QVERIFY_THROWS_EXCEPTION(Error, analyseLookup(m, std::vector<int>(3, 4), 1, 2));
        m.weights.pop_back();
        QVERIFY_THROWS_EXCEPTION(Error, analyseLookup(m, tokens, 1, 5));
        QVERIFY_THROWS_EXCEPTION(Error, copyQueries({1, 4, 5, 3}, CopyVocab::Sep));
    }
};

QTEST_GUILESS_MAIN(TestLookup)
#include "tst_lookup.moc"
