#include "base/text/tokenizer.h"

#include "base/error.h"
#include "base/io/jsonfile.h"
#include "base/io/textfile.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QStringDecoder>

#include <algorithm>
#include <climits>

namespace parrot {

namespace {

// GPT-2's printable stand-ins for the 256 byte values: the printable Latin-1 bytes stand for
// themselves, the others (controls, space, 0x7F-0xA0, 0xAD) for U+0100 upwards in order, so
// every byte string is a string of visible characters BPE can merge.
struct ByteAlphabet {
    QChar toChar[256];
    QHash<QChar, int> toByte;
    ByteAlphabet()
    {
        int next = 0;
        for (int b = 0; b < 256; ++b) {
            const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            toChar[b] = printable ? QChar(b) : QChar(256 + next++);
            toByte.insert(toChar[b], b);
        }
    }
};
const ByteAlphabet& alphabet()
{
    static const ByteAlphabet a;
    return a;
}

// GPT-2's pre-tokenizer: contractions, letters, digits, other symbols (each optionally after one
// space), and runs of white space, the last space of a run left to start the next word.
const QRegularExpression& pieces()
{
    static const QRegularExpression re(R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
                                       QRegularExpression::UseUnicodePropertiesOption);
    return re;
}

[[noreturn]] void refuse(const QString& path, const QString& what)
{
    throw Error(QString("%1: %2 (the app reads GPT-NeoX's byte-level BPE tokenizer.json)").arg(path, what));
}

QString typeOf(const QJsonValue& v) { return v.isObject() ? v.toObject().value("type").toString() : QString(); }

}  // namespace

BpeTokenizer BpeTokenizer::load(const QString& path)
{
    const QJsonObject root = readJsonObject(path, "the tokenizer (tokenizer.json)", 512 * 1024 * 1024);
    BpeTokenizer t;
    t.m_path = path;

    const QJsonObject model = root.value("model").toObject();
    if (model.value("type").toString() != "BPE")
        refuse(path, QString("model type '%1' is not BPE").arg(model.value("type").toString()));
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix", "unk_token"})
        if (!model.value(key).isNull() && !model.value(key).isUndefined() && !model.value(key).toString().isEmpty())
            refuse(path, QString("model.%1 is set; byte-level BPE needs none").arg(key));
    if (model.value("byte_fallback").toBool()) refuse(path, "model.byte_fallback is set");
    const QString normalizer = typeOf(root.value("normalizer"));
    if (!normalizer.isEmpty() && normalizer != "NFC") refuse(path, QString("normalizer '%1' is not supported").arg(normalizer));
    t.m_nfc = normalizer == "NFC";
    const QJsonObject pre = root.value("pre_tokenizer").toObject();
    if (pre.value("type").toString() != "ByteLevel")
        refuse(path, QString("pre-tokenizer '%1' is not ByteLevel").arg(pre.value("type").toString()));
    if (pre.contains("use_regex") && !pre.value("use_regex").toBool()) refuse(path, "pre_tokenizer.use_regex is off");
    t.m_addPrefixSpace = pre.value("add_prefix_space").toBool();
    const QString decoder = typeOf(root.value("decoder"));
    if (decoder != "ByteLevel") refuse(path, QString("decoder '%1' is not ByteLevel").arg(decoder));

    const QJsonObject vocab = model.value("vocab").toObject();
    if (vocab.isEmpty()) refuse(path, "model.vocab is empty");
    int maxId = -1;
    for (auto it = vocab.begin(); it != vocab.end(); ++it) {
        const int id = it.value().toInt(-1);
        if (id < 0 || id > 10'000'000) refuse(path, QString("vocabulary entry '%1' has no valid id").arg(it.key()));
        t.m_vocab.insert(it.key(), id);
        maxId = std::max(maxId, id);
    }
    const QJsonArray merges = model.value("merges").toArray();
    for (qsizetype r = 0; r < merges.size(); ++r) {
        QString pair;
        if (merges[r].isString()) {
            pair = merges[r].toString();  // "left right"
        } else {
            const QJsonArray two = merges[r].toArray();  // ["left", "right"] in newer files
            if (two.size() != 2) refuse(path, QString("merge %1 is not a pair").arg(r));
            pair = two[0].toString() + ' ' + two[1].toString();
        }
        if (pair.count(' ') != 1) refuse(path, QString("merge %1 ('%2') is not two tokens").arg(r).arg(pair));
        if (!t.m_ranks.contains(pair)) t.m_ranks.insert(pair, int(r));
    }
    for (const auto v : root.value("added_tokens").toArray()) {
        const QJsonObject o = v.toObject();
        Added a{o.value("content").toString(), o.value("id").toInt(-1), o.value("special").toBool(), o.value("lstrip").toBool(),
                o.value("rstrip").toBool()};
        if (a.content.isEmpty() || a.id < 0) refuse(path, "an added token has no content or id");
        t.m_added.push_back(a);
        maxId = std::max(maxId, a.id);
    }
    std::stable_sort(t.m_added.begin(), t.m_added.end(), [](const Added& x, const Added& y) { return x.content.size() > y.content.size(); });
    t.m_tokens.assign(size_t(maxId) + 1, QString());
    t.m_special.assign(size_t(maxId) + 1, false);
    for (auto it = t.m_vocab.begin(); it != t.m_vocab.end(); ++it) t.m_tokens[size_t(it.value())] = it.key();
    for (const Added& a : t.m_added) {
        t.m_tokens[size_t(a.id)] = a.content;
        t.m_special[size_t(a.id)] = a.special;
    }
    return t;
}

int BpeTokenizer::vocabSize() const { return int(m_tokens.size()); }

int BpeTokenizer::idOf(const QString& token) const
{
    for (const Added& a : m_added)
        if (a.content == token) return a.id;
    return m_vocab.value(token, -1);
}

std::vector<int> BpeTokenizer::encode(const QString& text) const
{
    std::vector<int> out;
    QHash<QString, std::vector<int>> cache;
    // Added tokens are found in the raw text, leftmost first and the longest where two start
    // together; what lies between them goes through normalisation, the regex and BPE.
    qsizetype from = 0;
    while (from <= text.size()) {
        qsizetype best = -1;
        const Added* found = nullptr;
        for (const Added& a : m_added) {
            const qsizetype at = text.indexOf(a.content, from);
            if (at >= 0 && (best < 0 || at < best)) {
                best = at;
                found = &a;
            }
        }
        qsizetype end = found ? best : text.size();
        qsizetype next = found ? best + found->content.size() : text.size() + 1;
        if (found && found->lstrip)
            while (end > from && text[end - 1].isSpace()) --end;
        if (found && found->rstrip)
            while (next < text.size() && text[next].isSpace()) ++next;
        if (end > from) encodePlain(text.mid(from, end - from), out, cache);
        if (!found) break;
        out.push_back(found->id);
        from = next;
    }
    return out;
}

void BpeTokenizer::encodePlain(const QString& raw, std::vector<int>& out, QHash<QString, std::vector<int>>& cache) const
{
    QString text = m_nfc ? raw.normalized(QString::NormalizationForm_C) : raw;
    if (m_addPrefixSpace && !text.startsWith(' ')) text.prepend(' ');
    const ByteAlphabet& bytes = alphabet();
    auto it = pieces().globalMatch(text);
    while (it.hasNext()) {
        const QByteArray utf8 = it.next().captured(0).toUtf8();
        QString word;
        word.reserve(utf8.size());
        for (char c : utf8) word.append(bytes.toChar[uint8_t(c)]);
        auto hit = cache.find(word);
        if (hit == cache.end()) hit = cache.insert(word, bpe(word));
        out.insert(out.end(), hit->begin(), hit->end());
    }
}

std::vector<int> BpeTokenizer::bpe(const QString& word) const
{
    // Start from single characters and merge the adjacent pair of lowest rank (the leftmost of
    // equal ones) until no adjacent pair has a merge.
    std::vector<QString> parts;
    for (QChar c : word) parts.emplace_back(c);
    while (parts.size() > 1) {
        int bestRank = INT_MAX;
        size_t best = 0;
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
            const auto r = m_ranks.constFind(parts[i] + ' ' + parts[i + 1]);
            if (r != m_ranks.constEnd() && *r < bestRank) {
                bestRank = *r;
                best = i;
            }
        }
        if (bestRank == INT_MAX) break;
        parts[best] += parts[best + 1];
        parts.erase(parts.begin() + long(best) + 1);
    }
    std::vector<int> ids;
    for (const QString& p : parts) {
        const int id = m_vocab.value(p, -1);
        if (id < 0) throw Error(QString("%1: the token '%2' is not in the vocabulary").arg(m_path, p));
        ids.push_back(id);
    }
    return ids;
}

QString BpeTokenizer::decode(const std::vector<int>& ids, bool skipSpecial) const
{
    // The ByteLevel decoder: every token's characters back to bytes (an added token's text is
    // taken as it is), then UTF-8.
    const ByteAlphabet& bytes = alphabet();
    QByteArray out;
    for (int id : ids) {
        if (id < 0) throw Error(QString("decode: token id %1 outside the vocabulary 0..%2").arg(id).arg(vocabSize() - 1));
        if (id >= vocabSize()) {  // an embedding row past the tokenizer's ids (unknownIdText)
            out.append(unknownIdText(id).toUtf8());
            continue;
        }
        if (skipSpecial && m_special[size_t(id)]) continue;
        for (QChar c : m_tokens[size_t(id)]) {
            const auto b = bytes.toByte.constFind(c);
            if (b != bytes.toByte.constEnd()) out.append(char(*b));
            else out.append(QString(c).toUtf8());
        }
    }
    // A byte-order mark the tokens spell is text like any other (QString::fromUtf8 would drop a
    // leading one, so a decoded U+FEFF at the start would vanish).
    QStringDecoder utf8(QStringConverter::Utf8, QStringConverter::Flag::ConvertInitialBom);
    return utf8.decode(out);
}

QString BpeTokenizer::tokenText(int id) const
{
    if (id < 0 || id >= vocabSize()) return QString("<%1?>").arg(id);
    for (const Added& a : m_added)
        if (a.id == id) return a.content;
    return decode({id});
}

}  // namespace parrot
