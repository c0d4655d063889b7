// Shared by the libFuzzer harnesses (tests/fuzz/fuzz_*.cpp). The readers take paths, as the app
// hands them files, so each input is written to a file in a private folder first. A reader must
// return or throw parrot::Error; any other exception escapes the harness and libFuzzer reports it
// as a crash, as it does every sanitizer report.
#pragma once

#include "base/error.h"

#include <QByteArray>
#include <QtGlobal>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QString>
#include <QTemporaryDir>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace parrot::fuzz {

// The readers' warnings ("…: ignored: not valid JSON") would fill the log at every input: dropped.
// A fatal message still aborts.
inline const bool kQuiet = (qInstallMessageHandler([](QtMsgType, const QMessageLogContext&, const QString&) {}), true);

// A folder of this process's own, removed at exit.
inline QDir scratch()
{
    static QTemporaryDir dir(QDir::tempPath() + "/parrot-fuzz-XXXXXX");
    if (!dir.isValid()) {
        std::fprintf(stderr, "fuzz: cannot make a temporary folder under %s\n", qPrintable(QDir::tempPath()));
        std::abort();
    }
    return QDir(dir.path());
}

inline QString writeFile(const QString& name, const QByteArray& bytes)
{
    const QString path = scratch().filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size()) {
        std::fprintf(stderr, "fuzz: cannot write %s\n", qPrintable(path));
        std::abort();
    }
    return path;
}

inline QString writeInput(const uint8_t* data, size_t size, const QString& name)
{
    return writeFile(name, QByteArray(reinterpret_cast<const char*>(data), qsizetype(size)));
}

inline QByteArray readFile(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        std::fprintf(stderr, "fuzz: cannot read %s\n", qPrintable(path));
        std::abort();
    }
    return f.readAll();
}

// Runs `read`; a parrot::Error is the reader refusing the file with a message, which is right.
template <typename Read>
void readOrRefuse(Read&& read)
{
    try {
        read();
    } catch (const parrot::Error&) {
    }
}

// A broken promise of the format (a round trip that does not hold): a crash with a message.
[[noreturn]] inline void fail(const QString& what)
{
    std::fprintf(stderr, "fuzz: %s\n", qPrintable(what));
    std::abort();
}

}  // namespace parrot::fuzz
