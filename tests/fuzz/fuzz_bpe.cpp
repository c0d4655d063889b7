// The byte-level BPE encoder on arbitrary bytes, with GPT-NeoX's tokenizer layout (the test
// fixture tests/data/hf_tiny/tokenizer/tokenizer.json): the input as UTF-8 (invalid sequences
// become U+FFFD, as everywhere in the app; a leading byte-order mark is kept) is encoded, every id must be in the vocabulary, and
// decoding gives back the NFC form of the text. The format promises that round trip: the
// normalizer is NFC, and byte-level BPE covers every byte.
#include "base/text/tokenizer.h"
#include "fuzzinput.h"

#include <QStringDecoder>

using namespace parrot;

namespace {
const BpeTokenizer& tokenizer()
{
    static const BpeTokenizer t = BpeTokenizer::load(QStringLiteral(PARROT_TEST_DATA "/hf_tiny/tokenizer/tokenizer.json"));
    return t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const BpeTokenizer& t = tokenizer();
    QStringDecoder utf8(QStringConverter::Utf8, QStringConverter::Flag::ConvertInitialBom);  // a leading U+FEFF is text too
    const QString text = utf8.decode(QByteArrayView(data, qsizetype(size)));
    const std::vector<int> ids = t.encode(text);
    for (int id : ids)
        if (id < 0 || id >= t.vocabSize()) fuzz::fail(QString("encode gave id %1 outside the vocabulary of %2").arg(id).arg(t.vocabSize()));
    const QString back = t.decode(ids);
    const QString expected = text.normalized(QString::NormalizationForm_C);
    if (back != expected)
        fuzz::fail(QString("decode(encode(text)) is not NFC(text): %1 characters in, %2 back").arg(expected.size()).arg(back.size()));
    return 0;
}
