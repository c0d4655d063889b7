#include "base/io/hfcache.h"

#include "base/error.h"
#include "base/io/jsonfile.h"
#include "base/io/safetensors.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>


namespace parrot {

namespace {

QString repoFolderName(const QString& id) { return "models--" + QString(id).replace('/', "--"); }

// The parameters a safetensors file lists (its header, through the project's one reader: the
// tensors are mapped, not read); -1 when it cannot be read.
long long safetensorsParameters(const QString& path)
{
    try {
        long long total = 0;
        for (const TensorRecord& tensor : readSafetensors(path).tensors) {
            long long n = 1;
            for (int64_t d : tensor.shape) n *= d;
            total += n;
        }
        return total;
    } catch (const Error&) {
        return -1;
    }
}

// The snapshot folder of `repo` (a models--* folder) for `revision`: refs/<revision>'s commit, a
// commit hash itself, or for "main" without refs the newest snapshot; "" when there is none.
QString snapshotFor(const QDir& repo, const QString& revision)
{
    const QDir snapshots(repo.filePath("snapshots"));
    QString commit;
    QFile ref(repo.filePath("refs/" + revision));
    if (ref.open(QIODevice::ReadOnly)) commit = QString::fromUtf8(ref.readAll()).trimmed();
    else if (snapshots.exists(revision)) commit = revision;  // a commit hash
    if ((commit.isEmpty() || !snapshots.exists(commit)) && revision == "main") {
        // no usable refs (a cache copied by hand): the newest snapshot
        const QFileInfoList all = snapshots.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Time);
        if (!all.isEmpty()) commit = all.front().fileName();
    }
    return commit.isEmpty() || !snapshots.exists(commit) ? QString() : snapshots.filePath(commit);
}

}  // namespace

QString hubCacheDir()
{
    const QString hub = qEnvironmentVariable("HF_HUB_CACHE");
    if (!hub.isEmpty()) return hub;
    const QString home = qEnvironmentVariable("HF_HOME");
    if (!home.isEmpty()) return QDir(home).filePath("hub");
    const QString xdg = qEnvironmentVariable("XDG_CACHE_HOME");
    return QDir(xdg.isEmpty() ? QDir::home().filePath(".cache") : xdg).filePath("huggingface/hub");
}

bool looksLikeHubId(const QString& spec)
{
    static const QRegularExpression id(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?(@[A-Za-z0-9_./-]+)?$"));
    return id.match(spec).hasMatch() && !QFileInfo::exists(spec) && !spec.contains("..");
}

QString resolveModelFolder(const QString& spec)
{
    if (QFileInfo(spec).isDir() || !looksLikeHubId(spec)) return spec;  // a folder (or a path that is not there: its loader says so)
    const QString id = spec.section('@', 0, 0), revision = spec.contains('@') ? spec.section('@', 1) : QString("main");
    const QString cache = hubCacheDir();
    const QDir repo(QDir(cache).filePath(repoFolderName(id)));
    const QString download = QString("download it with `huggingface-cli download %1` (or from Python: transformers' "
                                     "from_pretrained), or give the model's folder").arg(id);
    if (!repo.exists())
        throw Error(QString("%1: no such folder, and not in the HuggingFace cache (%2; HF_HUB_CACHE or HF_HOME choose another): %3")
                        .arg(spec, cache, download));
    const QString folder = snapshotFor(repo, revision);
    if (folder.isEmpty())
        throw Error(QString("%1: the cache has %2 but no snapshot for revision \"%3\": %4").arg(spec, repo.path(), revision, download));
    return folder;
}

QString hubIdOf(const QString& folder)
{
    const QDir snapshot(QFileInfo(folder).absoluteFilePath());
    QDir up = snapshot;
    if (!up.cdUp() || up.dirName() != "snapshots" || !up.cdUp()) return {};
    const QString repo = up.dirName();
    if (!repo.startsWith("models--")) return {};
    const QStringList parts = repo.mid(8).split("--");
    return parts.join('/');
}

std::vector<CachedModel> cachedLanguageModels(const QString& cacheDir)
{
    std::vector<CachedModel> out;
    const QDir cache(cacheDir);
    for (const QFileInfo& repo : cache.entryInfoList({"models--*"}, QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QString id = repo.fileName().mid(8).split("--").join('/');
        const QString folder = snapshotFor(QDir(repo.absoluteFilePath()), "main");
        if (folder.isEmpty()) continue;
        const QDir dir(folder);
        if (!dir.exists("config.json") || !dir.exists("tokenizer.json")) continue;
        const auto config = readJsonObjectIfValid(dir.filePath("config.json"));
        if (!config) continue;
        // HuggingFace's model_type values (its names, not the app's family ids)
        static const QMap<QString, QString> runnable{{"gpt_neox", "GPT-NeoX"}, {"mamba", "Mamba"}};
        const QString type = config->value("model_type").toString();
        if (!runnable.contains(type)) continue;
        CachedModel m;
        m.id = id;
        m.folder = folder;
        m.modelType = type;
        m.architecture = runnable.value(type);
        long long parameters = 0;
        bool safetensors = false;
        for (const QFileInfo& f : dir.entryInfoList(QDir::Files)) {
            m.bytes += f.size();  // a symlink's size is its target's (the blob)
            if (f.fileName().endsWith(".safetensors")) {
                const long long n = safetensorsParameters(f.absoluteFilePath());
                if (n < 0) parameters = -1;
                else if (parameters >= 0) parameters += n;
                safetensors = true;
            }
        }
        m.parameters = safetensors ? parameters : -1;
        out.push_back(m);
    }
    return out;
}

}  // namespace parrot
