// The SQuAD reader (v1.1 and v2 layouts) on arbitrary bytes: it reads or refuses; every paragraph
// it keeps must make a prompt, and its answers must score against themselves as exact matches.
#include "base/text/squad.h"
#include "fuzzinput.h"

using namespace parrot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QString path = fuzz::writeInput(data, size, "squad.json");
    fuzz::readOrRefuse([&] {
        const std::vector<QaParagraph> paragraphs = readSquad(path);
        for (const QaParagraph& p : paragraphs) {
            if (p.questions.size() < 2) fuzz::fail("readSquad kept a paragraph with fewer than two questions");
            (void)squadAnswer(squadPrompt(p, 0, 1));
            for (const QaQuestion& q : p.questions)
                for (const QString& a : q.answers) {
                    if (bestExactMatch(a, q.answers) != 1.0) fuzz::fail("an answer is not an exact match of itself: " + a);
                    (void)f1Score(a, p.context);
                }
        }
    });
    return 0;
}
