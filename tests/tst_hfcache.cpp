// The HuggingFace hub cache read offline (base/io/hfcache.h), on caches laid out as the hub
// writes them: blobs, snapshots of symlinks, refs.
#include "base/error.h"
#include "base/io/hfcache.h"
#include "base/io/safetensors.h"
#include "testutil.h"

#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

using namespace parrot;

namespace {

QString fixture(const QString& name) { return QString(PARROT_TEST_DATA) + "/hf_tiny/" + name; }

QString errorOf(const std::function<void()>& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.message();
    }
    return {};
}

}  // namespace

class TestHfCache : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void cacheFolderFollowsTheEnvironment()
    {
        qputenv("HF_HUB_CACHE", "/somewhere/hub");
        QCOMPARE(hubCacheDir(), QString("/somewhere/hub"));
        qunsetenv("HF_HUB_CACHE");
        qputenv("HF_HOME", "/elsewhere/hf");
        QCOMPARE(hubCacheDir(), QString("/elsewhere/hf/hub"));
        qunsetenv("HF_HOME");
        qputenv("XDG_CACHE_HOME", "/xdg");
        QCOMPARE(hubCacheDir(), QString("/xdg/huggingface/hub"));
        qunsetenv("XDG_CACHE_HOME");
        QCOMPARE(hubCacheDir(), QDir::home().filePath(".cache/huggingface/hub"));
    }

    void hubIdsAreToldFromPaths()
    {
        QVERIFY(looksLikeHubId("EleutherAI/pythia-410m"));
        QVERIFY(looksLikeHubId("state-spaces/mamba-130m-hf@main"));
        QVERIFY(looksLikeHubId("gpt2"));
        QVERIFY(!looksLikeHubId("/abs/path"));
        QVERIFY(!looksLikeHubId("a/b/c"));
        QVERIFY(!looksLikeHubId("../models/x"));
        QVERIFY(!looksLikeHubId(m_dir.path()));  // an existing folder is a folder
    }

    void resolvesSnapshotsAsTransformersDoes()
    {
        const QString cache = m_dir.filePath("hub");
        const QString main = test::addToHubCache(cache, "EleutherAI/tiny-neox", fixture("neox"), "aaaa1111");
        const QString older = test::addToHubCache(cache, "EleutherAI/tiny-neox", fixture("neox"), "bbbb2222", "v0");
        qputenv("HF_HUB_CACHE", cache.toUtf8());
        QCOMPARE(resolveModelFolder("EleutherAI/tiny-neox"), main);        // refs/main
        QCOMPARE(resolveModelFolder("EleutherAI/tiny-neox@v0"), older);    // another ref
        QCOMPARE(resolveModelFolder("EleutherAI/tiny-neox@bbbb2222"), older);  // a commit
        QVERIFY(QFileInfo(main + "/config.json").isSymLink());
        QVERIFY(QFileInfo(main + "/config.json").exists());  // the link leads to its blob
        QCOMPARE(hubIdOf(main), QString("EleutherAI/tiny-neox"));
        QCOMPARE(hubIdOf(fixture("neox")), QString());
        QCOMPARE(resolveModelFolder(fixture("neox")), fixture("neox"));  // a folder is a folder
        // not there: where it looked and how to get it
        const QString missing = errorOf([] { resolveModelFolder("EleutherAI/pythia-410m"); });
        QVERIFY2(missing.contains(cache) && missing.contains("huggingface-cli download EleutherAI/pythia-410m"), qPrintable(missing));
        QVERIFY(errorOf([] { resolveModelFolder("EleutherAI/tiny-neox@nope"); }).contains("no snapshot for revision \"nope\""));
        // a cache copied without its refs: the newest snapshot
        const QString bare = test::addToHubCache(cache, "someone/no-refs", fixture("mamba"), "cccc3333", "");
        QCOMPARE(resolveModelFolder("someone/no-refs"), bare);
        qunsetenv("HF_HUB_CACHE");
    }

    void listsTheLanguageModelsInTheCache()
    {
        const QString cache = m_dir.filePath("list");
        test::addToHubCache(cache, "EleutherAI/tiny-neox", fixture("neox"), "1111");
        test::addToHubCache(cache, "state-spaces/tiny-mamba", fixture("mamba"), "2222");
        // not a language model this app runs: left out
        QTemporaryDir other;
        test::writeAll(other.filePath("config.json"), R"({"model_type": "llama"})");
        test::writeAll(other.filePath("tokenizer.json"), "{}");
        test::addToHubCache(cache, "meta/llama-ish", other.path(), "3333");
        const std::vector<CachedModel> found = cachedLanguageModels(cache);
        QCOMPARE(found.size(), size_t(2));
        QCOMPARE(found[0].id, QString("EleutherAI/tiny-neox"));
        QCOMPARE(found[0].modelType, QString("gpt_neox"));
        QCOMPARE(found[0].architecture, QString("GPT-NeoX"));
        QCOMPARE(found[1].id, QString("state-spaces/tiny-mamba"));
        QCOMPARE(found[1].modelType, QString("mamba"));
        QCOMPARE(found[1].architecture, QString("Mamba"));
        for (const CachedModel& m : found) {
            const QString source = fixture(m.modelType == "gpt_neox" ? "neox" : "mamba");
            qint64 bytes = 0;
            for (const QFileInfo& f : QDir(source).entryInfoList(QDir::Files)) bytes += f.size();
            QCOMPARE(m.bytes, bytes);  // the blobs' sizes, through the links
            long long parameters = 0;
            for (const TensorRecord& t : readSafetensors(source + "/model.safetensors").tensors) {
                long long n = 1;
                for (int64_t d : t.shape) n *= d;
                parameters += n;
            }
            QCOMPARE(m.parameters, parameters);
        }
        QVERIFY(cachedLanguageModels(m_dir.filePath("no-such-cache")).empty());
    }
};

QTEST_GUILESS_MAIN(TestHfCache)
#include "tst_hfcache.moc"
