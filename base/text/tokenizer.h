// The tokenizer of pretrained language models (GPT-NeoX / Pythia, and the Mamba checkpoints
// that use GPT-NeoX's): byte-level BPE as HuggingFace's tokenizer.json describes it.
//
//   text -> added tokens split out (<|endoftext|>, ...) -> NFC -> the GPT-2 pre-tokenizer regex
//        -> each piece's UTF-8 bytes as printable characters (GPT-2's byte-to-unicode table)
//        -> BPE merges by rank -> ids from the vocabulary
//   ids  -> tokens -> characters back to bytes -> UTF-8 (invalid sequences as U+FFFD)
//
// Written here: Debian packages no C++ reader of tokenizer.json (sentencepiece reads another
// format), and the format's byte-level BPE is small. Only what GPT-NeoX's tokenizer uses is
// accepted; anything else (another model type, normalizer, pre-tokenizer or decoder) is refused
// by name. Checked against HuggingFace's `tokenizers` in tests/tst_tokenizer.cpp (reference ids
// made by tests/data/make_hf_refs.py).
#pragma once

#include <QHash>
#include <QString>

#include <vector>

namespace parrot {

class BpeTokenizer {
public:
    // Reads tokenizer.json; throws parrot::Error naming the file and what it cannot use.
    static BpeTokenizer load(const QString& path);

    std::vector<int> encode(const QString& text) const;
    // The text of `ids`; added tokens marked special are left out when `skipSpecial`.
    // Ids past the tokenizer's last (a model's embedding may have more rows than the tokenizer
    // has ids, as Pythia's 50,304 against 50,277) decode as unknownIdText(id), so one such id in
    // a model's answer shows as what it is instead of failing the answer.
    QString decode(const std::vector<int>& ids, bool skipSpecial = false) const;
    static QString unknownIdText(int id) { return QString("<|id %1|>").arg(id); }
    // One token as a person reads it: its bytes as text (a space shown as is), or an added token.
    QString tokenText(int id) const;

    int vocabSize() const;  // the largest id + 1, added tokens included
    int idOf(const QString& token) const;  // a vocabulary entry or an added token, or -1
    // The end-of-text token (<|endoftext|>) when the vocabulary has one, else -1.
    int endOfText() const { return idOf("<|endoftext|>"); }
    QString path() const { return m_path; }

private:
    struct Added {
        QString content;
        int id = 0;
        bool special = false, lstrip = false, rstrip = false;
    };
    // A piece of text holding no added token; `cache` keeps each word's ids for this call.
    void encodePlain(const QString& text, std::vector<int>& out, QHash<QString, std::vector<int>>& cache) const;
    std::vector<int> bpe(const QString& word) const;

    QString m_path;
    QHash<QString, int> m_vocab;
    std::vector<QString> m_tokens;          // id -> token (vocabulary or added)
    std::vector<bool> m_special;            // id -> an added token marked special
    QHash<QString, int> m_ranks;            // "left right" -> merge rank
    std::vector<Added> m_added;             // longest first
    bool m_nfc = false;
    bool m_addPrefixSpace = false;
};

}  // namespace parrot
