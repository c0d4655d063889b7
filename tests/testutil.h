// Small helpers shared by the tests.
#pragma once

#include "base/config.h"
#include "base/io/safetensors.h"
#include "base/presets.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QString>
#include <QtTest>

#include <map>

namespace parrot::test {

// A copy experiment small enough to train in seconds on 2 cores.
// An export dialog's export (ui/common/exportdialog.h) from start to a written file: it draws,
// then writes off the GUI thread; this waits (at most 60 s) for the write to end. False, with
// `error` set, when it did not start or the write failed.
template <typename Dialog>
bool exportAndWait(Dialog& d, QString* error)
{
    QString failure;
    const auto c = QObject::connect(&d, &Dialog::failed, [&failure](const QString& m) { failure = m; });
    bool ok = d.exportNow(error);
    QDeadlineTimer deadline(60000);
    while (ok && d.isWriting() && !deadline.hasExpired()) QTest::qWait(10);
    QObject::disconnect(c);
    if (ok && d.isWriting()) failure = "the export did not finish within 60 s";
    if (ok && !failure.isEmpty()) {
        if (error) *error = failure;
        ok = false;
    }
    return ok;
}

inline ExperimentConfig tinyConfig(int steps = 20)
{
    ExperimentConfig c = loadPreset("copy-tiny");
    c.train.steps = steps;
    c.train.evalEvery = 0;
    c.train.checkpointEvery = 0;
    c.task.evalSamples = 32;
    return c;
}

// The tiny copy experiment with a small model of any family (d_model 32, 4 heads, d_state 4):
// builds and trains in well under a second per step.
inline ExperimentConfig smallConfig(const QString& kind, int steps = 20)
{
    ExperimentConfig c = tinyConfig(steps);
    c.model.kind = kind;
    c.model.dModel = 32;
    c.model.heads = 4;
    c.model.numMaskedHeads = 2;
    c.model.dState = 4;
    return c;
}

// The tensors of a checkpoint, name -> bytes (metadata aside): two files hold the same weights,
// bit for bit, when these are equal.
inline std::map<QString, QByteArray> tensorBytes(const QString& path)
{
    std::map<QString, QByteArray> out;
    const SafetensorsFile f = readSafetensors(path);
    for (auto it = f.tensors.begin(); it != f.tensors.end(); ++it)
        out[it.key()] = QByteArray(it.value().data.constData(), it.value().data.size());
    return out;
}

inline QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

inline bool writeAll(const QString& path, const QByteArray& data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

// A model in the HuggingFace hub cache's layout under `cache`, as the hub writes it: the files of
// `source` as blobs named by their SHA-256, a snapshot `commit` of symlinks into them and, when
// `ref` is not empty, refs/<ref> naming the commit. Returns the snapshot folder.
inline QString addToHubCache(const QString& cache, const QString& id, const QString& source, const QString& commit,
                             const QString& ref = "main")
{
    const QDir repo(QDir(cache).filePath("models--" + QString(id).replace('/', "--")));
    repo.mkpath("blobs");
    repo.mkpath("snapshots/" + commit);
    for (const QFileInfo& f : QDir(source).entryInfoList(QDir::Files)) {
        const QByteArray bytes = readAll(f.absoluteFilePath());
        const QString blob = QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
        writeAll(repo.filePath("blobs/" + blob), bytes);
        QFile::link("../../blobs/" + blob, repo.filePath("snapshots/" + commit + "/" + f.fileName()));
    }
    if (!ref.isEmpty()) {
        repo.mkpath("refs");
        writeAll(repo.filePath("refs/" + ref), commit.toUtf8());
    }
    return repo.filePath("snapshots/" + commit);
}

// A zip archive of stored (uncompressed) entries, as torch.save writes them, for crafting
// checkpoints in tests. CRCs are left 0: the app's reader does not check them. `method` is
// written into every entry (8 claims deflate without compressing anything).
inline QByteArray storedZip(const std::vector<std::pair<QString, QByteArray>>& entries, int method = 0)
{
    auto u16 = [](QByteArray& b, quint32 v) { b.append(char(v & 0xff)).append(char(v >> 8 & 0xff)); };
    auto u32 = [&](QByteArray& b, quint32 v) { u16(b, v & 0xffff), u16(b, v >> 16); };
    QByteArray out, dir;
    for (const auto& [name, data] : entries) {
        const QByteArray n = name.toUtf8();
        const quint32 local = quint32(out.size());
        out.append("PK\x03\x04", 4);
        u16(out, 20), u16(out, 0), u16(out, quint32(method)), u16(out, 0), u16(out, 0), u32(out, 0);
        u32(out, quint32(data.size())), u32(out, quint32(data.size())), u16(out, quint32(n.size())), u16(out, 0);
        out.append(n).append(data);
        dir.append("PK\x01\x02", 4);
        u16(dir, 20), u16(dir, 20), u16(dir, 0), u16(dir, quint32(method)), u16(dir, 0), u16(dir, 0), u32(dir, 0);
        u32(dir, quint32(data.size())), u32(dir, quint32(data.size())), u16(dir, quint32(n.size())), u16(dir, 0), u16(dir, 0);
        u16(dir, 0), u16(dir, 0), u32(dir, 0), u32(dir, local);
        dir.append(n);
    }
    const quint32 dirAt = quint32(out.size());
    out.append(dir).append("PK\x05\x06", 4);
    u16(out, 0), u16(out, 0), u16(out, quint32(entries.size())), u16(out, quint32(entries.size()));
    u32(out, quint32(dir.size())), u32(out, dirAt), u16(out, 0);
    return out;
}

#ifdef PARROT_EXE
// The parrotscope executable as a user runs it: exit code, stdout, stderr (-2: timed out).
struct CliResult {
    int code = -1;
    QString out;
    QString err;
};

inline CliResult runCli(const QStringList& args, int timeoutMs = 300000)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    p.setProcessEnvironment(env);
    p.start(PARROT_EXE, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return {-2, {}, "timed out"};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// A one-line error naming `what`, and a failing exit code.
inline void expectCliError(const CliResult& r, const QString& what)
{
    QVERIFY2(r.code != 0, qPrintable(r.out));
    const QStringList lines = r.err.trimmed().split('\n');
    QVERIFY2(r.err.contains("error: "), qPrintable(r.err));
    QVERIFY2(lines.last().contains(what), qPrintable(r.err));
    int errorLines = 0;
    for (const QString& l : lines) errorLines += l.contains("error:");
    QCOMPARE(errorLines, 1);
}
#endif

}  // namespace parrot::test
