#include "core/analysis/construction.h"

#include "base/error.h"
#include "base/tasks/tokentask.h"
#include "core/models/transformer.h"

#include <torch/torch.h>

#include <cmath>
#include <random>

namespace parrot {

namespace {

constexpr int kFrequencies = 13;  // f = 0..12: positions apart by less than 2^13 are told apart

}  // namespace

// The weight matrices, built once: D = (n + 1) H + 2 * kFrequencies rows each.
struct CopyConstruction::Weights {
    int H = 0, D = 0, pos = 0;                    // hash symbols, residual width, offset of the position code
    double beta1 = 0;
    torch::Tensor embed;                          // (vocab, D): token one-hot in slot 0
    std::vector<torch::Tensor> q1, k1, v1, o1;    // layer 1 head o: (D, P), (D, P), (D, H), (H, D)
    torch::Tensor q2, k2, v2;                     // layer 2: (D, nH), (D, nH), (D, H)
    torch::Tensor unembed;                        // (H, vocab)
    torch::Tensor readoutBias;                    // (vocab)
};

QString ConstructionOptions::describe() const
{
    return QString("two-layer construction, n = %1, |V| = %2").arg(n).arg(letters);
}

CopyConstruction::CopyConstruction(const ConstructionOptions& o) : m_o(o), m_w(std::make_unique<Weights>())
{
    if (o.n < 1 || o.n > 8) throw Error(QString("construction: n-gram order n = %1, expected 1..8").arg(o.n));
    if (o.letters < 2 || o.letters > 52) throw Error(QString("construction: alphabet of %1 letters, expected 2..52").arg(o.letters));
    if (!(o.beta1 > 0) || !(o.beta2 > 0)) throw Error("construction: the inverse temperatures must be positive");
    Weights& w = *m_w;
    const int n = o.n, H = o.letters + 1, P = 2 * kFrequencies, V = vocabSize();
    w.H = H;
    w.beta1 = o.beta1;
    w.pos = (n + 1) * H;
    w.D = w.pos + P;
    const auto slot = [&](int i) { return i * H; };
    torch::NoGradGuard noGrad;
    // Embedding: letters to their own column, `$` and `|` to the marker, PAD and `.` to nothing.
    w.embed = torch::zeros({V, w.D});
    for (int l = 0; l < o.letters; ++l) w.embed[CopyVocab::FirstLetter + l][slot(0) + l] = 1;
    w.embed[CopyVocab::Bos][slot(0) + o.letters] = 1;
    w.embed[CopyVocab::Sep][slot(0) + o.letters] = 1;
    // Layer 1: head o reads p(t) rotated back by o positions as its query and p(s) as its key.
    const auto key = torch::zeros({w.D, P}).index_put_({torch::indexing::Slice(w.pos, w.D)}, torch::eye(P));
    const auto value = torch::zeros({w.D, H}).index_put_({torch::indexing::Slice(slot(0), slot(0) + H)}, torch::eye(H));
    for (int off = 1; off <= n; ++off) {
        auto rot = torch::zeros({P, P});  // row vector p(t) times rot = p(t - off)
        for (int f = 0; f < kFrequencies; ++f) {
            const double a = -M_PI * off / std::pow(2.0, f), c = std::cos(a), s = std::sin(a);
            // (cos x, sin x) -> (cos(x + a), sin(x + a))
            rot[2 * f][2 * f] = c;
            rot[2 * f][2 * f + 1] = s;
            rot[2 * f + 1][2 * f] = -s;
            rot[2 * f + 1][2 * f + 1] = c;
        }
        w.q1.push_back(torch::matmul(key, rot) * o.beta1);
        w.k1.push_back(key);
        w.v1.push_back(value);
        w.o1.push_back(torch::zeros({H, w.D}).index_put_({torch::indexing::Slice(), torch::indexing::Slice(slot(off), slot(off) + H)}, torch::eye(H)));
    }
    // Layer 2: query block i = slot i - 1 weighted 2^(n - i), key block i = slot i, i = 1..n.
    w.q2 = torch::zeros({w.D, n * H});
    w.k2 = torch::zeros({w.D, n * H});
    for (int i = 1; i <= n; ++i) {
        const double weight = std::pow(2.0, n - i) * o.beta2;
        for (int h = 0; h < H; ++h) {
            w.q2[slot(i - 1) + h][(i - 1) * H + h] = weight;
            w.k2[slot(i) + h][(i - 1) * H + h] = 1;
        }
    }
    w.v2 = value;
    // Read-out: a letter's column to the letter, the marker to `.`; `$`, `|` and PAD one unit below
    // (the mixture read out is >= 0 and sums to 1, so its largest column wins).
    w.unembed = torch::zeros({H, V});
    for (int l = 0; l < o.letters; ++l) w.unembed[l][CopyVocab::FirstLetter + l] = 1;
    w.unembed[o.letters][CopyVocab::Eos] = 1;
    w.readoutBias = torch::zeros({V});
    for (int t : {CopyVocab::Pad, CopyVocab::Bos, CopyVocab::Sep}) w.readoutBias[t] = -1;
}

CopyConstruction::~CopyConstruction() = default;

int CopyConstruction::vocabSize() const { return CopyVocab{m_o.letters}.size(); }

namespace {

// Position code p(t) for t = 0..T-1: (T, 2 * kFrequencies).
torch::Tensor positionCode(int64_t T)
{
    auto t = torch::arange(T, torch::kDouble).unsqueeze(1);
    auto freq = torch::pow(2.0, -torch::arange(kFrequencies, torch::kDouble)).unsqueeze(0) * M_PI;
    auto angle = t * freq;  // (T, F)
    return torch::stack({torch::cos(angle), torch::sin(angle)}, 2).reshape({T, 2 * kFrequencies}).to(torch::kFloat);
}

// Softmax over keys with the future masked: (B, T, T + extra), the extra keys always visible.
torch::Tensor causalSoftmax(const torch::Tensor& scores)
{
    const int64_t T = scores.size(1);
    const auto future = torch::ones({T, scores.size(2)}, torch::kBool).triu(1).logical_and(
        torch::arange(scores.size(2)).lt(T).unsqueeze(0));
    return torch::softmax(scores.masked_fill(future, -INFINITY), -1);
}

struct Forward {
    torch::Tensor logits;               // (B, T, V)
    std::vector<torch::Tensor> layer1;  // n x (B, T, T)
    torch::Tensor layer2;               // (B, T, T)
};

}  // namespace

// Tokens (B, T) int64 -> logits and attention, as the header describes.
static Forward runConstruction(const CopyConstruction::Weights& w, const torch::Tensor& idx)
{
    const int64_t T = idx.size(1);
    Forward f;
    auto x = torch::embedding(w.embed, idx);  // (B, T, D)
    x.narrow(2, w.pos, 2 * kFrequencies).add_(positionCode(T).unsqueeze(0));
    // Heads switched off (HeadAblationScope): zeroed, or their output replaced by its mean
    // over the positions. Layer 2's heads after the first write nothing either way.
    const HeadAblation* off = HeadAblationScope::current();
    const auto ablated = [&](int layer, int head, const torch::Tensor& out) {
        if (!off || !off->contains(layer, head)) return out;
        return off->method == HeadAblation::Method::Zero ? torch::zeros_like(out) : out.mean(1, true).expand_as(out);
    };
    auto written = torch::zeros_like(x);
    for (size_t h = 0; h < w.q1.size(); ++h) {
        // A null key (value zero) scoring one unit under the best: where t - o is before the start
        // it takes the weight, so the slot stays empty instead of holding whatever is nearest.
        const auto scores = torch::matmul(torch::matmul(x, w.q1[h]), torch::matmul(x, w.k1[h]).transpose(1, 2));
        const auto null = torch::full({scores.size(0), T, 1}, w.beta1 * (kFrequencies - 1), scores.options());
        const auto a = causalSoftmax(torch::cat({scores, null}, 2)).narrow(2, 0, T);
        f.layer1.push_back(a);
        written += ablated(0, int(h), torch::matmul(torch::matmul(torch::matmul(a, x), w.v1[h]), w.o1[h]));
    }
    x = x + written;
    f.layer2 = causalSoftmax(torch::matmul(torch::matmul(x, w.q2), torch::matmul(x, w.k2).transpose(1, 2)));
    f.logits = torch::matmul(ablated(1, 0, torch::matmul(torch::matmul(f.layer2, x), w.v2)), w.unembed) + w.readoutBias;
    return f;
}

static torch::Tensor tokenTensor(const std::vector<int>& tokens, int vocab)
{
    if (tokens.empty()) throw Error("construction: no tokens");
    if (int(tokens.size()) > CopyConstruction::maxLength)
        throw Error(QString("construction: %1 tokens, its position code tells %2 apart").arg(tokens.size()).arg(CopyConstruction::maxLength));
    std::vector<int64_t> ids;
    for (int t : tokens) {
        if (t < 0 || t >= vocab) throw Error(QString("construction: token id %1 outside the vocabulary 0..%2").arg(t).arg(vocab - 1));
        ids.push_back(t);
    }
    return torch::tensor(ids, torch::kLong).unsqueeze(0);
}

std::vector<float> CopyConstruction::logits(const std::vector<int>& tokens) const
{
    torch::NoGradGuard noGrad;
    const auto out = runConstruction(*m_w, tokenTensor(tokens, vocabSize())).logits.select(0, 0).contiguous();
    return std::vector<float>(out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
}

ModelProbes CopyConstruction::probe(const std::vector<int>& tokens) const
{
    torch::NoGradGuard noGrad;
    const Forward f = runConstruction(*m_w, tokenTensor(tokens, vocabSize()));
    const int T = int(tokens.size()), n = m_o.n;
    ModelProbes p;
    const CopyVocab v{m_o.letters};
    for (int t : tokens) p.tokens.push_back(v.text(t));
    AttentionMaps& a = p.attention;
    a.layers = 2;
    a.heads = n;
    a.length = T;
    a.tokens = p.tokens;
    a.weights.assign(size_t(2) * n * T * T, 0.0f);
    const auto put = [&](int layer, int head, const torch::Tensor& m) {
        const auto c = m.select(0, 0).contiguous();
        std::copy(c.data_ptr<float>(), c.data_ptr<float>() + c.numel(), a.weights.begin() + ptrdiff_t((size_t(layer) * n + head) * T * T));
    };
    for (int h = 0; h < n; ++h) put(0, h, f.layer1[size_t(h)]);
    put(1, 0, f.layer2);
    p.attentionLayers = {0, 1};
    return p;
}

LengthCurve CopyConstruction::evaluate(const std::vector<int>& lengths, int samples, unsigned long long seed, const QString& kind,
                                       const std::function<bool(int, int)>& keepGoing) const
{
    if (samples < 1) throw Error(QString("construction: samples %1, expected >= 1").arg(samples));
    if (kind != "copy" && kind != "copy_dup_ngram") throw Error(QString("construction: copies task copy or copy_dup_ngram, not %1").arg(kind));
    TaskConfig c;
    c.kind = kind;
    c.vocabSize = m_o.letters;
    c.ngram = m_o.n;
    int longest = 1;
    for (int len : lengths) {
        if (len < 1 || 2 * len + 3 > maxLength) throw Error(QString("construction: length %1, expected 1..%2").arg(len).arg((maxLength - 3) / 2));
        longest = std::max(longest, len);
    }
    c.minLen = longest;  // only the evaluation lengths are generated; the task checks each
    c.maxLen = longest;
    c.contextLen = std::max(c.contextLen, 2 * longest + 4);
    c.evalLengths = lengths;
    const std::unique_ptr<TokenTask> task = TokenTask::create(c);
    torch::NoGradGuard noGrad;
    LengthCurve curve;
    curve.samples = samples;
    for (size_t i = 0; i < lengths.size(); ++i) {
        const int len = lengths[i];
        const QString problem = task->checkDifficulty(len);
        if (!problem.isEmpty()) throw Error(QString("construction: %1").arg(problem));
        std::mt19937_64 rng(seed * 1000003ULL + unsigned(len));
        const long long T = task->maxTokens(len);  // attention maps of B x T x T floats: keep a batch near 4M of them
        const int perBatch = int(std::max(1LL, std::min<long long>(samples, 4000000 / (T * T))));
        long long rows = 0, right = 0, answers = 0;
        for (int done = 0; done < samples; done += perBatch) {
            const TokenBatch b = task->evalBatch(len, std::min(perBatch, samples - done), rng);
            const auto input = torch::tensor(b.input, torch::kLong).view({b.batch, b.length});
            const auto predicted = runConstruction(*m_w, input).logits.argmax(-1);
            const auto target = torch::tensor(b.target, torch::kLong).view({b.batch, b.length});
            const auto mask = torch::from_blob(const_cast<uint8_t*>(b.mask.data()), {b.batch, b.length}, torch::kUInt8).to(torch::kBool);
            const auto wrong = (predicted != target).logical_and(mask);
            rows += b.batch - wrong.any(1).sum().item<int64_t>();
            answers += mask.sum().item<int64_t>();
            right += (predicted == target).logical_and(mask).sum().item<int64_t>();
        }
        curve.addAccuracy(len, rows, samples, right, answers);
        if (keepGoing && !keepGoing(int(i) + 1, int(lengths.size()))) break;
    }
    return curve;
}

double CopyConstruction::boundError(int length, int n, int letters)
{
    return std::min(1.0, double(length) * length / std::pow(double(letters), n));
}

double CopyConstruction::repeatChance(int length, int n, int letters)
{
    const double grams = std::max(0, length - n + 1);
    return 1.0 - std::exp(-grams * (grams - 1) / 2 / std::pow(double(letters), n));
}

}  // namespace parrot
