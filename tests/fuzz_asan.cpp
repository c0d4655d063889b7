// The safetensors reader, the torch.save zip reader and the checkpoint inspector under
// AddressSanitizer and UBSan, on mutated files (tests/fuzzmutations.h): built from their sources alone (no torch), so it is quick
// to build and run in CI. Exit 0 when every file was read or refused with a parrot::Error; the
// sanitizers abort on any out-of-bounds access, leak or undefined behaviour.
// Usage: fuzz_asan [MUTATIONS] (default 5000).
#include "base/error.h"
#include "fuzzmutations.h"
#include "base/io/checkpointinfo.h"
#include "base/io/importers.h"
#include "base/io/safetensors.h"

#include <QCoreApplication>
#include <QTemporaryDir>
#include <QTextStream>

using namespace parrot;

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    const int mutations = argc > 1 ? QString(argv[1]).toInt() : 5000;
    QTemporaryDir dir;
    if (!dir.isValid()) return 2;
    // a small valid file: a few tensors of each float dtype, and metadata
    SafetensorsFile good;
    good.metadata.insert("format", "parrotscope");
    good.metadata.insert("model", "{\"kind\": \"mamba\"}");
    std::mt19937_64 rng(7);
    for (const char* dtype : {"F32", "F16", "BF16", "F64", "I64"}) {
        TensorRecord t;
        t.dtype = dtype;
        t.shape = {3, 5};
        t.data.resize(15 * dtypeSize(t.dtype));
        for (char& c : t.data) c = char(rng() % 64);  // small finite values in every float format
        good.tensors.insert(QString("layer.%1.weight").arg(dtype), t);
    }
    const QString goodPath = dir.filePath("good.safetensors");
    writeSafetensors(goodPath, good);
    QFile in(goodPath);
    in.open(QIODevice::ReadOnly);
    const QByteArray bytes = in.readAll();
    int refused = 0;
    // writes one mutated file and reads it: 0 when read or refused with a parrot::Error, 1 on any
    // other exception, 2 when the file cannot be written (the sanitizers abort on their own)
    auto check = [&](const QString& p, const QByteArray& f, const QString& what) {
        QFile out(p);
        if (!out.open(QIODevice::WriteOnly) || out.write(f) != f.size()) return 2;
        out.close();
        try {
            const CheckpointInfo info = inspectCheckpoint(p);
            refused += !info.problem.isEmpty();
            readCheckpointTensors(p);
        } catch (const Error&) {
            // refused with a message: what the loaders must do
        } catch (const std::exception& e) {
            QTextStream(stderr) << "fuzz_asan: " << what << ": unexpected exception " << e.what() << "\n";
            return 1;
        }
        return 0;
    };
    for (int n = 0; n < mutations; ++n) {
        QString what;
        const QByteArray f = test::mutate(bytes, n, rng, what);
        if (const int fault = check(dir.filePath("fuzz.safetensors"), f, what)) return fault;
    }
    // torch.save zips, and a sharded index: the zip reader, the restricted unpickler, the importers
    const QString data = QStringLiteral(PARROT_TEST_DATA);
    for (const char* f : {"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"})
        QFile::copy(data + "/mamba_tiny/sharded/" + f, dir.filePath(f));
    auto slurp = [](const QString& p) {
        QFile f(p);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QByteArray zip = slurp(data + "/neox_tiny/pythia/pytorch_model.bin"), index = slurp(data + "/mamba_tiny/sharded/model.safetensors.index.json");
    if (zip.isEmpty() || index.isEmpty()) return 2;
    const qint64 pickle = zip.indexOf(QByteArray("\x80\x02", 2)), directory = zip.indexOf("PK\x01\x02");
    for (int n = 0; n < mutations; ++n) {
        QString what;
        const bool isZip = n % 10 != 9;
        const QByteArray f = isZip ? test::mutateBytes(zip, n / 3, rng, what, n % 3 == 0 ? 0 : n % 3 == 1 ? pickle : directory)
                                   : test::mutateBytes(index, n, rng, what);
        if (const int fault = check(dir.filePath(isZip ? "pytorch_model.bin" : "model.safetensors.index.json"), f, what)) return fault;
    }
    QTextStream(stdout) << "fuzz_asan: " << 2 * mutations << " mutated files (safetensors, torch.save zips, indexes), " << refused
                        << " refused by the inspector, no fault\n";
    return 0;
}
