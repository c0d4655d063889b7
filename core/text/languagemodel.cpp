#include "core/text/languagemodel.h"

#include "base/error.h"
#include "base/io/hfcache.h"
#include "base/tasks/taskcatalog.h"

#include <QDir>
#include <QFileInfo>
#include <QLocale>

namespace parrot {

LanguageModel LanguageModel::load(const QString& spec, const std::function<bool(int, int)>& progress, WeightDtype dtype)
{
    const QString folder = resolveModelFolder(spec);  // a folder, or a hub id found in the HuggingFace cache
    const QFileInfo fi(folder);
    if (!fi.exists()) throw Error(QString("%1: no such folder").arg(folder));
    if (!fi.isDir())
        throw Error(QString("%1: is a file; a pretrained language model is a folder (config.json, tokenizer.json and the weights, "
                            "as HuggingFace's save_pretrained or huggingface-cli download writes it)").arg(folder));
    const QDir dir(fi.absoluteFilePath());
    const QString configPath = dir.filePath("config.json"), tokenizerPath = dir.filePath("tokenizer.json");
    if (!QFileInfo::exists(configPath)) throw Error(QString("%1: no config.json in this folder (the model's architecture and sizes)").arg(dir.path()));
    if (!QFileInfo::exists(tokenizerPath))
        throw Error(QString("%1: no tokenizer.json in this folder; Pythia and the Mamba checkpoints share GPT-NeoX's, e.g. from "
                            "EleutherAI/pythia-160m").arg(dir.path()));
    LanguageModel lm;
    lm.folder = dir.absolutePath();
    const QString hubId = hubIdOf(lm.folder);
    lm.name = hubId.isEmpty() ? dir.dirName() : hubId.section('/', -1);  // a snapshot's folder is named by its commit
    lm.tokenizer = BpeTokenizer::load(tokenizerPath);  // before the weights: a wrong tokenizer costs no loading
    lm.model = Model::load(lm.folder, progress, dtype);
    const ExperimentConfig& c = lm.model.config();
    if (!isTextTask(c.task.kind)) throw Error(QString("%1: not a language model with a tokenizer").arg(lm.folder));
    if (lm.tokenizer.vocabSize() > c.task.vocabSize)
        throw Error(QString("%1: tokenizer.json has ids up to %2, the model's embedding only %3 rows: the tokenizer belongs to another model")
                        .arg(lm.folder).arg(lm.tokenizer.vocabSize() - 1).arg(c.task.vocabSize));
    const bool mamba = c.model.kind == "mamba";
    lm.architecture = mamba ? "Mamba" : "GPT-NeoX";
    lm.contextLength = mamba ? 0 : c.model.maxPositions;  // the importer's reading of max_position_embeddings
    return lm;
}

QString LanguageModel::summary() const
{
    const QLocale en(QLocale::English);
    return QString("%1: %2, %3 parameters, %4 layers, d_model %5, vocabulary %6, %7, weights %8")
        .arg(name, architecture, en.toString(model.parameterCount()))
        .arg(model.config().model.layers).arg(model.config().model.dModel)
        .arg(en.toString(tokenizer.vocabSize()))
        .arg(contextLength > 0 ? QString("context %1 tokens").arg(en.toString(contextLength)) : QString("no context limit"),
             model.weightDtype());
}

void LanguageModel::checkFits(size_t tokens, int newTokens) const
{
    if (contextLength > 0 && tokens + size_t(std::max(0, newTokens)) > size_t(contextLength))
        throw Error(QString("%1: the prompt is %2 tokens%3, the model's context holds %4")
                        .arg(name).arg(tokens).arg(newTokens > 0 ? QString(" and %1 more are asked for").arg(newTokens) : QString())
                        .arg(contextLength));
}

LanguageModel::Continuation LanguageModel::generate(const QString& prompt, int maxNewTokens,
                                                    const std::function<bool(int, int)>& keepGoing) const
{
    Continuation c;
    c.promptIds = tokenizer.encode(prompt);
    if (c.promptIds.empty()) throw Error("generate: the prompt is empty");
    checkFits(c.promptIds.size(), maxNewTokens);
    const int stop = tokenizer.endOfText();
    c.newIds = model.generate(c.promptIds, maxNewTokens, stop, keepGoing);
    c.stopped = stop >= 0 && !c.newIds.empty() && c.newIds.back() == stop;
    // The embedding may have more rows than the tokenizer has ids (Pythia's 50,304 against
    // 50,277: padding rows, never trained to be chosen, but an untrained model may pick one);
    // decode() shows such an id as <|id N|>.
    c.text = tokenizer.decode(c.newIds, true);
    return c;
}

}  // namespace parrot
