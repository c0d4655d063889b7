#include "base/tasks/taskcatalog.h"

#include "base/cataloguelookup.h"

#include <algorithm>

namespace parrot {

namespace {

// N-gram lookup answering one letter: a guess is right 1 in V times.
double oneLetterAnswer(const TaskConfig& t) { return t.answerLen == 1 ? 1.0 / std::max(1, t.vocabSize) : 0.0; }
double signOfParity(const TaskConfig&) { return 0.5; }

void lookupDefaults(TaskConfig& t)
{
    t.minLen = 8;
    t.maxLen = 20;
    t.evalLengths = {10, 20, 30, 40};
}

void duplicatedNgramDefaults(TaskConfig& t)
{
    t.minLen = 6;
    t.maxLen = 20;
    t.evalLengths = {10, 20, 30, 40};
}

void textCopyDefaults(TaskConfig& t)
{
    t.minLen = 10;
    t.maxLen = 60;
    t.contextLen = 128;
    t.evalLengths = {20, 40, 60, 80, 120};
}

void phonebookDefaults(TaskConfig& t)
{
    t.minLen = 1;
    t.maxLen = 6;
    t.contextLen = 256;
    t.evalLengths = {2, 4, 6, 8, 12};
    t.evalSamples = 64;
}

void mqarDefaults(TaskConfig& t)
{
    t.vocabSize = 52;  // keys a-z, values A-Z
    t.minLen = 2;
    t.maxLen = 16;
    t.contextLen = 128;
    t.evalLengths = {4, 8, 16, 24};
}

// MAD's baselines (mad-lab's configs/tasks/*.yml): one length, its training set of 12,800
// sequences; evaluated at half, the training length and twice it.
void madLengths(TaskConfig& t, int length)
{
    t.minLen = t.maxLen = length;
    t.contextLen = length + 1;
    t.evalLengths = {length / 2, length, 2 * length};
    t.evalSamples = 128;
    t.trainExamples = 12800;
}
void madRecallDefaults(TaskConfig& t)
{
    t.vocabSize = 16;
    madLengths(t, 128);
}
void madNoisyRecallDefaults(TaskConfig& t)
{
    madRecallDefaults(t);  // MAD's vocab_size 32 holds its 16 noise tokens; here they come on top
    t.noiseVocab = 16;
    t.noiseFraction = 0.2;
}
void madFuzzyRecallDefaults(TaskConfig& t)
{
    madRecallDefaults(t);
    t.motif = 3;
}
void madSelectiveCopyDefaults(TaskConfig& t)
{
    t.vocabSize = 16;
    t.copyTokens = 16;
    madLengths(t, 256);
}
void madCompressionDefaults(TaskConfig& t)
{
    t.vocabSize = 16;
    madLengths(t, 32);
}
void madMemorizationDefaults(TaskConfig& t)
{
    t.vocabSize = 256;
    madLengths(t, 32);
    t.evalLengths = {32};
    t.trainExamples = 256;
}
// A value guessed among the values: 1 / (V - V/2).
double oneValue(const TaskConfig& t) { return 1.0 / std::max(1, t.vocabSize - t.vocabSize / 2); }
double oneLetter(const TaskConfig& t) { return 1.0 / std::max(1, t.vocabSize); }

// Laptop scale of Park et al.'s setting (d 20, 40 examples): d 8, 24 examples.
void inContextDefaults(TaskConfig& t)
{
    t.dims = 8;
    t.minLen = 24;
    t.maxLen = 24;
    t.contextLen = 48;
    t.evalLengths = {24};
    t.evalSamples = 256;
    t.sparsity = 3;
    t.outlierProb = 0.5;
}

void manyOutlierDefaults(TaskConfig& t)
{
    inContextDefaults(t);
    t.outlierProb = 0.9;
}

void parityDefaults(TaskConfig& t)
{
    inContextDefaults(t);
    t.sparsity = 2;
    t.minLen = t.maxLen = 40;
    t.contextLen = 80;
    t.evalLengths = {40};
}

void vectorMqarDefaults(TaskConfig& t)  // pairs, each then queried once
{
    inContextDefaults(t);
    t.minLen = 4;
    t.maxLen = 8;
    t.contextLen = 32;
    t.evalLengths = {2, 4, 8, 12, 16};
}

TaskInfo tokenTask(QString id, QString label, QString description, QString difficulty, QStringList options, bool characters,
                   void (*defaults)(TaskConfig&) = nullptr, double (*chance)(const TaskConfig&) = nullptr)
{
    TaskInfo t{std::move(id), std::move(label), std::move(description), std::move(difficulty), std::move(options), characters};
    t.defaults = defaults;
    t.chance = chance;
    t.tokenScored = t.id.startsWith("mad_") || t.id == QLatin1String("mqar");
    t.readOut = t.id == QLatin1String("mad_compression");
    return t;
}

// In-context learning on vectors (Park et al., 2024; Garg et al., 2022): x1, y1, x2, y2, ...
// Regression reports its error after every number of examples; parity and vector MQAR an accuracy.
TaskInfo vectorTask(QString id, QString label, QString description, QStringList options, QString metric = "error",
                    void (*defaults)(TaskConfig&) = inContextDefaults, double (*chance)(const TaskConfig&) = nullptr)
{
    const bool mqar = id == QLatin1String("vector_mqar");
    TaskInfo t{std::move(id), std::move(label), std::move(description), mqar ? "key-value pairs" : "in-context examples",
               std::move(options), false, true};
    t.metric = std::move(metric);
    t.promptCurve = !mqar;
    t.defaults = defaults;
    t.chance = chance;
    return t;
}

}  // namespace

const std::vector<TaskInfo>& taskCatalog()
{
    static const std::vector<TaskInfo> tasks{
        tokenTask("copy", "Copy", "`$ s | s .`: copy a string of uniformly random letters (Jelassi et al., section 3).",
                  "string length", {}, false),
        tokenTask("prefix_ngram", "N-gram lookup, prefix key",
                  "`$ g | s | ans .`: the n-gram key g comes before the string s; answer what follows g in s. Easy for a "
                  "fixed-size state, which can watch for g while reading s.",
                  "string length", {"ngram", "answer_len"}, false, lookupDefaults, oneLetterAnswer),
        tokenTask("suffix_ngram", "N-gram lookup, suffix key",
                  "`$ s | g ans .`: the key comes after the string; answer what followed g in s. The model must keep all of s "
                  "(Jelassi et al., section 4).",
                  "string length", {"ngram", "answer_len"}, false, lookupDefaults, oneLetterAnswer),
        tokenTask("copy_dup_ngram", "Copy, duplicated n-gram",
                  "Copy a string in which one random n-gram is planted twice: right after its second occurrence an n-gram "
                  "lookup is ambiguous. An evaluation probe for copy models.",
                  "string length", {"ngram"}, false, duplicatedNgramDefaults),
        tokenTask("text_copy", "Copy English text",
                  "`$ t | t .`: copy a span of real English (bundled public-domain text), character by character; optionally "
                  "with its words shuffled.",
                  "characters", {"shuffle_words"}, true, textCopyDefaults),
        tokenTask("phonebook", "Phone book",
                  "Lines `Name Surname: 10 digits`, then `| Name Surname:`; answer that person's number. The number of "
                  "entries is the difficulty.",
                  "entries", {}, true, phonebookDefaults),
        tokenTask("mqar", "Associative recall (MQAR)",
                  "`$ k1 v1 ... kN vN |` then every key again, in random order after power-law gaps of filler; answer its "
                  "value (Arora et al., 2023). Keys from the first half of the letters, values from the second. As in "
                  "Zoology, one example a row and the answers are not read back (filler in their place).",
                  "key-value pairs", {}, false, mqarDefaults),
        tokenTask("mad_recall", "MAD: in-context recall",
                  "Key-value pairs (keys from the first half of the letters, values from the second), a key's value fixed "
                  "within the sequence; every value whose key came before is an answer (Poli et al. 2024, MAD).",
                  "sequence length", {"train_examples"}, false, madRecallDefaults, oneValue),
        tokenTask("mad_fuzzy_recall", "MAD: fuzzy recall",
                  "In-context recall with keys and values of 1..motif tokens; evaluated with keys of `motif` tokens (MAD).",
                  "sequence length", {"motif", "train_examples"}, false, madFuzzyRecallDefaults),
        tokenTask("mad_noisy_recall", "MAD: noisy recall",
                  "In-context recall with a share noise_fraction of the pairs replaced by tokens of a separate noise "
                  "vocabulary, never scored (MAD).",
                  "sequence length", {"noise_fraction", "noise_vocab", "train_examples"}, false, madNoisyRecallDefaults, oneValue),
        tokenTask("mad_selective_copy", "MAD: selective copying",
                  "copy_tokens letters scattered among blanks `_`, then `|` and the letters in order (MAD; here each "
                  "answer follows the one before).",
                  "sequence length", {"copy_tokens", "train_examples"}, false, madSelectiveCopyDefaults, oneLetter),
        tokenTask("mad_compression", "MAD: compression",
                  "seq_len - 1 random letters and `|`; an MLP decoder reads the sequence back from the model's "
                  "representation at `|` alone, one position at a time (MAD; noise tokens are never scored).",
                  "sequence length", {"noise_fraction", "noise_vocab", "train_examples"}, false, madCompressionDefaults, oneLetter),
        tokenTask("mad_memorization", "MAD: memorization",
                  "Keys, each followed by its value from one key-to-value map fixed for every sequence and run: recall "
                  "from the weights, not the context (MAD).",
                  "sequence length", {"train_examples"}, false, madMemorizationDefaults, oneValue),
        vectorTask("linear_regression", "ICL: linear regression",
                   "y = w.x with a fresh w ~ N(0, I) per prompt; predict each y from the examples before it.", {"dims"}),
        vectorTask("sparse_linear_regression", "ICL: sparse linear regression",
                   "As linear regression, w with `sparsity` non-zeros (Lasso is the baseline to beat).", {"dims", "sparsity"}),
        vectorTask("relu_regression", "ICL: 2-layer ReLU network", "y = a.relu(Vx), 100 hidden units, fresh per prompt (Garg et al.).",
                   {"dims"}),
        vectorTask("decision_tree", "ICL: decision tree", "y from a random depth-4 tree splitting on the signs of random coordinates.",
                   {"dims"}),
        vectorTask("orthogonal_outlier_regression", "ICL: orthogonal-outlier regression",
                   "Linear regression where each pair is, with probability outlier_prob, labelled by a u orthogonal to w; scored on clean pairs.",
                   {"dims", "outlier_prob"}),
        vectorTask("many_outlier_regression", "ICL: many-outlier regression",
                   "Linear regression where each pair is, with probability outlier_prob, the outlier x = (1,...,1), y = 1; scored on clean pairs.",
                   {"dims", "outlier_prob"}, "error", manyOutlierDefaults),
        vectorTask("sparse_parity", "ICL: sparse parity",
                   "x in {-1, +1}^d, y the product of `sparsity` coordinates, a fresh subset for every prompt; accuracy of the sign.",
                   {"dims", "sparsity"}, "accuracy", parityDefaults, signOfParity),
        vectorTask("vector_mqar", "ICL: vector-valued MQAR",
                   "Key and value vectors of norm sqrt(d), then every key again; predict its value. Accuracy: the nearest value in the prompt is right.",
                   {"dims"}, "accuracy", vectorMqarDefaults),
    };
    return tasks;
}

const TaskInfo* findTask(const QString& id) { return findById(taskCatalog(), id); }

QStringList taskIds() { return idsOf(taskCatalog()); }

bool isReadOutTask(const QString& kind)
{
    const TaskInfo* t = findTask(kind);
    return t && t->readOut;
}

bool isVectorTask(const QString& kind)
{
    const TaskInfo* t = findTask(kind);
    return t && t->vectors;
}

QStringList recallTaskIds() { return {"mqar", "mad_recall"}; }

bool isRecallTask(const QString& kind) { return recallTaskIds().contains(kind); }

TaskConfig taskDefaults(const QString& kind)
{
    TaskConfig t;  // copy's: letters 1-20, rows of 64
    t.kind = kind;
    if (const TaskInfo* info = findTask(kind); info && info->defaults) info->defaults(t);
    return t;
}

double chanceLevel(const TaskConfig& t)
{
    const TaskInfo* info = findTask(t.kind);
    return info && info->chance ? info->chance(t) : 0.0;
}

}  // namespace parrot
