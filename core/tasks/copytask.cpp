#include "copytask.h"

#include "error.h"

namespace parrot {

QString CopyVocab::text(int id) const
{
    switch (id) {
    case Pad: return "_";
    case Bos: return "$";
    case Sep: return "|";
    case Eos: return ".";
    default: break;
    }
    const int letter = id - FirstLetter;
    if (letter < 0 || letter >= letters) return QString("<?%1>").arg(id);
    if (letter < 26) return QString(QChar('a' + letter));
    if (letter < 52) return QString(QChar('A' + letter - 26));
    return QString("<%1>").arg(letter);
}

QString CopyVocab::text(const std::vector<int>& ids, const QString& sep) const
{
    QStringList parts;
    for (int id : ids) parts << text(id);
    return parts.join(sep);
}

CopyTask::CopyTask(const TaskConfig& config) : m_config(config)
{
    if (config.kind != "copy") throw Error(QString("task.kind: expected \"copy\", got \"%1\"").arg(config.kind));
    if (config.vocabSize < 2) throw Error(QString("task.vocab_size: expected >= 2, got %1").arg(config.vocabSize));
    if (config.minLen < 1 || config.maxLen < config.minLen)
        throw Error(QString("task.min_len/max_len: expected 1 <= min_len <= max_len, got %1 and %2")
                        .arg(config.minLen).arg(config.maxLen));
    if (config.contextLen < copyExampleTokens(config.maxLen))
        throw Error(QString("task.context_len: expected at least %1 tokens for max_len %2, got %3")
                        .arg(copyExampleTokens(config.maxLen)).arg(config.maxLen).arg(config.contextLen));
    m_vocab.letters = config.vocabSize;
}

std::vector<int> CopyTask::example(std::mt19937_64& rng) const
{
    std::uniform_int_distribution<int> len(m_config.minLen, m_config.maxLen);
    return example(len(rng), rng);
}

std::vector<int> CopyTask::example(int length, std::mt19937_64& rng) const
{
    std::uniform_int_distribution<int> letter(0, m_vocab.letters - 1);
    std::vector<int> s(length);
    for (int& c : s) c = CopyVocab::FirstLetter + letter(rng);
    std::vector<int> ex;
    ex.reserve(copyExampleTokens(length));
    ex.push_back(CopyVocab::Bos);
    ex.insert(ex.end(), s.begin(), s.end());
    ex.push_back(CopyVocab::Sep);
    ex.insert(ex.end(), s.begin(), s.end());
    ex.push_back(CopyVocab::Eos);
    return ex;
}

TokenBatch CopyTask::trainBatch(int batch, std::mt19937_64& rng) const
{
    const int T = m_config.contextLen;
    TokenBatch b;
    b.batch = batch;
    b.length = T;
    b.input.resize(size_t(batch) * T);
    b.target.resize(size_t(batch) * T);
    b.mask.assign(size_t(batch) * T, 0);
    std::vector<int> row(T + 1);
    std::vector<uint8_t> scored(T + 1);  // scored[i]: token i is an answer token or EOS of a complete example
    for (int r = 0; r < batch; ++r) {
        int pos = 0;
        while (pos < T + 1) {
            const std::vector<int> ex = example(rng);
            const int n = int(ex.size());
            const bool complete = pos + n <= T + 1;
            const int len = (n - 3) / 2;
            for (int i = 0; i < n && pos + i < T + 1; ++i) {
                row[pos + i] = ex[i];
                // answer letters sit at len+2 .. 2len+1, EOS at 2len+2
                scored[pos + i] = complete && i >= len + 2;
            }
            b.examples += complete;
            pos += n;
        }
        for (int t = 0; t < T; ++t) {
            b.input[size_t(r) * T + t] = row[t];
            b.target[size_t(r) * T + t] = row[t + 1];
            b.mask[size_t(r) * T + t] = scored[t + 1];
        }
    }
    return b;
}

CopyEvalBatch CopyTask::evalBatch(int length, int batch, std::mt19937_64& rng) const
{
    if (length < 1) throw Error(QString("evaluation length: expected >= 1, got %1").arg(length));
    CopyEvalBatch e;
    e.stringLength = length;
    e.answerStart = length + 1;  // input `|` at index length+1 predicts the first answer letter
    TokenBatch& b = e.tokens;
    const int T = copyExampleTokens(length) - 1;
    b.batch = batch;
    b.length = T;
    b.examples = batch;
    b.input.resize(size_t(batch) * T);
    b.target.resize(size_t(batch) * T);
    b.mask.assign(size_t(batch) * T, 0);
    for (int r = 0; r < batch; ++r) {
        const std::vector<int> ex = example(length, rng);
        for (int t = 0; t < T; ++t) {
            b.input[size_t(r) * T + t] = ex[t];
            b.target[size_t(r) * T + t] = ex[t + 1];
            b.mask[size_t(r) * T + t] = t >= e.answerStart;
        }
    }
    return e;
}

}  // namespace parrot
