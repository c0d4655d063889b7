// tokenizer.json on arbitrary bytes: loading reads or refuses it; a tokenizer that loads must
// encode and decode a text with added tokens, Unicode, digits and spaces without crashing, and
// every id it encodes must be one it can decode.
#include "base/text/tokenizer.h"
#include "fuzzinput.h"

using namespace parrot;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const QString path = fuzz::writeInput(data, size, "tokenizer.json");
    fuzz::readOrRefuse([&] {
        const BpeTokenizer t = BpeTokenizer::load(path);
        const QString text = QString::fromUtf8("Alice's 3 cats:\n  <|endoftext|>caf\xc3\xa9 \xe2\x80\x94 na\xc3\xafve\t\xf0\x9f\xa6\x9c 12345<|padding|>");
        const std::vector<int> ids = t.encode(text);
        for (int id : ids)
            if (id < 0 || id >= t.vocabSize()) fuzz::fail(QString("encode gave id %1 outside the vocabulary of %2").arg(id).arg(t.vocabSize()));
        (void)t.decode(ids);
        (void)t.decode(ids, true);
        for (int id = 0; id < std::min(t.vocabSize(), 64); ++id) (void)t.tokenText(id);
        (void)t.idOf("<|endoftext|>");
    });
    return 0;
}
