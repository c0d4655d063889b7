// The copy paper's zero-shot tests of pretrained language models (Jelassi et al. 2024, section 5
// and figure 1), as its pretrained_exps describe them: greedy answers, no training.
//   phone book:    L lines `First Last: dddddddddd` (10 digits, the first 6-9, names from the
//                  bundled lists, each name once), a blank line, two lines of the book repeated
//                  as examples, a blank line, `First Last:` of a third entry; right when the
//                  answer's digits (up to its line end) are the number.
//   copy text:     a span of L tokens of English (bundled: Alice's Adventures in Wonderland),
//                  prompted `TEXT\n\nTEXT\n\nFIRST_TOKEN`; right when the greedy continuation is
//                  the rest of the span, token for token.
//   shuffled text: the same with the span's tokens in random order (no language to lean on).
//   squad:         question answering over a paragraph (base/text/squad.h): the paragraph, one
//                  question answered as an example, another question; exact match and F1
//                  against its gold answers. Its paragraphs come from a SQuAD file, not a
//                  generator: runQaTest, not runLmTest.
// A test's curve is a LengthCurve over L: string accuracy = whole answers right, char accuracy =
// answer tokens right in place, with binomial standard errors (for squad: exact match and F1).
#pragma once

#include "base/text/squad.h"
#include "base/types.h"
#include "core/text/languagemodel.h"

#include <QString>

#include <functional>
#include <random>
#include <vector>

namespace parrot {

struct LmTestInfo {
    QString id;          // "phonebook", "copy-text", "shuffled-text"
    QString label;
    QString size;        // what L counts: "entries" or "tokens"
    QString description;
    QString defaultSizes;  // what `lm-eval` and the Pretrained tab start with, e.g. "10,20,40,80"
    QString measure = "answer accuracy";       // what the curve's first measure is called
    QString secondMeasure = "token accuracy";  // and its second
    bool readsData = false;                    // its prompts come from a file (squad), not a generator
};
const std::vector<LmTestInfo>& lmTests();
const LmTestInfo* findLmTest(const QString& id);  // nullptr when there is none
void checkLmTest(const QString& id);              // throws parrot::Error naming the tests there are

struct LmPrompt {
    std::vector<int> ids;     // the prompt
    std::vector<int> target;  // the answer's tokens
    QString answer;           // the answer as text (the number, or the rest of the span)
};

// One prompt of test `id` at size L from `rng`. Throws parrot::Error for an unknown test, a size
// out of range, or a phone book larger than the bundled names allow.
LmPrompt makeLmPrompt(const QString& id, int size, const BpeTokenizer& tokenizer, std::mt19937_64& rng);

struct LmAnswer {
    bool right = false;
    int tokensRight = 0;  // of target.size(), in place
    QString text;         // what the model said (up to its line end for the phone book)
};
// Scores the tokens a model generated after `prompt`.
LmAnswer scoreLmAnswer(const QString& id, const LmPrompt& prompt, const std::vector<int>& generated, const BpeTokenizer& tokenizer);
// How many tokens to generate for `prompt`: the target's length, a few more for the phone book.
int lmAnswerBudget(const QString& id, const LmPrompt& prompt);

// `samples` prompts per size, the same prompts for the same seed (and tokenizer), greedy answers.
// `keepGoing(done, total)` after each prompt; false stops and returns the sizes completed.
// Throws parrot::Error when a prompt does not fit the model's context (naming both lengths).
LengthCurve runLmTest(const LanguageModel& lm, const QString& id, const std::vector<int>& sizes, int samples,
                      unsigned long long seed, const std::function<bool(int done, int total)>& keepGoing = {});

// The question-answering test on one model, as the copy paper's code runs it
// (pretrained_exps/test_utils.py, squad_evaluation): each paragraph's first answerable question,
// answered with its first gold answer, is the example and its second is asked (squadPrompt);
// greedy decoding of at most 200 new tokens (fewer where the model's context leaves fewer, but
// never under kQaMinNewTokens), stopped at the first blank line or <|endoftext|>,
// and <|endoftext|> never the first token (the authors suppress it for Pythia only; here for
// every model, so that no model loses a question by ending at once); squadAnswer() takes the
// answer. Paragraphs are bucketed by their length in this model's own tokens: with `edges`
// e0 < e1 < ... < ek, bucket i holds paragraphs of e(i) <= tokens < e(i+1), and up to `perBucket`
// of them (the authors: 30) are asked, drawn in an order shuffled by `seed`. The paper reports
// each bucket's mean with its spread over questions (np.std); this reports the standard error
// of the mean (binomial for exact match, the questions' standard deviation / sqrt(n) for F1).
struct QaResult {
    LengthCurve curve;             // lengths: each bucket's lower edge; string accuracy: exact match; char accuracy: F1
    std::vector<int> bucketEnds;   // each point's upper edge (exclusive)
    std::vector<int> questions;    // questions asked per point
    std::vector<int> emptyBuckets; // lower edges of the buckets no paragraph falls in (no point)
};
inline constexpr int kQaMaxNewTokens = 200;
inline constexpr int kQaMinNewTokens = 32;
QaResult runQaTest(const LanguageModel& lm, const std::vector<QaParagraph>& set, const std::vector<int>& edges, int perBucket,
                   unsigned long long seed, const std::function<bool(int done, int total)>& keepGoing = {});
// Perplexity, the copy paper's other measure of pretrained models: its Mamba reaches a lower one
// than Pythia of the same size and still retrieves worse. The text is cut into windows of
// `window` tokens (at most the model's context), one after the other without overlap; every token
// but each window's first is predicted from those before it in its window. loss = the mean
// negative log-likelihood in nats, perplexity = exp(loss).
struct PerplexityResult {
    double loss = 0, lossStdErr = 0;  // standard error over the tokens (they are correlated: optimistic)
    double perplexity = 0;
    long long tokens = 0;  // predicted
    int windows = 0, window = 0;
};
QString bundledPerplexityText();  // Alice's Adventures in Wonderland (alice.txt), paragraph a line
// `maxTokens` > 0: only the text's first maxTokens tokens. Throws parrot::Error when the text has
// fewer than two tokens.
PerplexityResult measurePerplexity(const LanguageModel& lm, const QString& text, int window = 1024, long long maxTokens = 0,
                                   const std::function<bool(int done, int total)>& keepGoing = {});

// The answer a model gives to one prompt of the test (the continuation's text, squadAnswer).
QString qaAnswer(const LanguageModel& lm, const std::vector<int>& promptIds);
// The new tokens a prompt of `promptTokens` may have: kQaMaxNewTokens, or what the context leaves.
int qaBudget(const LanguageModel& lm, size_t promptTokens);

}  // namespace parrot
