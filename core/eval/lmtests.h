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
// A test's curve is a LengthCurve over L: string accuracy = whole answers right, char accuracy =
// answer tokens right in place, with binomial standard errors.
#pragma once

#include "core/text/languagemodel.h"
#include "base/types.h"

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

}  // namespace parrot
