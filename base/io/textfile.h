// Text files: CSV fields, reading a text file with errors that name it, and the one atomic
// writer every file the app saves goes through.
#pragma once

#include "base/error.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QString>

namespace parrot {

// One CSV field: quoted (with quotes doubled) when it holds a comma, a quote or a line break.
inline QString csvField(QString s)
{
    if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace('"', "\"\"") + '"';
    return s;
}

// Writes `bytes` through a temporary file renamed over `path` when complete, so a failed write
// leaves what was there. Throws parrot::Error naming the file, `what` it is, and why.
inline void writeFileAtomically(const QString& path, const QByteArray& bytes, const QString& what = "the file")
{
    QSaveFile f(path);
    // A write cut short (a disk that fills up part-way) returns fewer bytes without an error: only
    // the count tells (unbuffered, so that it is this write's count and not a later flush's), and
    // then the temporary file is dropped, never renamed over the target.
    if (!f.open(QIODevice::WriteOnly | QIODevice::Unbuffered) || f.write(bytes) != bytes.size()) {
        const QString why = f.error() != QFileDevice::NoError ? f.errorString() : QString("the disk is full");
        f.cancelWriting();
        f.commit();  // removes the temporary file
        throw Error(QString("%1: cannot write %2 (%3)").arg(path, what, why));
    }
    if (!f.commit()) throw Error(QString("%1: cannot write %2 (%3)").arg(path, what, f.errorString()));
}

// The text of a UTF-8 file; throws parrot::Error naming the file and `what` it was meant to be
// when it is absent, a folder, unreadable or larger than `maxBytes`.
inline QString readTextFile(const QString& path, const QString& what, qint64 maxBytes = 256LL * 1024 * 1024)
{
    QFile f(path);
    const QFileInfo info(path);
    if (!info.exists()) throw Error(QString("%1: no such file (%2)").arg(path, what));
    if (info.isDir()) throw Error(QString("%1: is a folder, not %2").arg(path, what));
    if (info.size() > maxBytes) throw Error(QString("%1: %2 MB, more than %3 MB for %4").arg(path).arg(info.size() >> 20).arg(maxBytes >> 20).arg(what));
    if (!f.open(QIODevice::ReadOnly)) throw Error(QString("%1: cannot read %2 (%3)").arg(path, what, f.errorString()));
    return QString::fromUtf8(f.readAll());
}

// writeFileAtomically for text, as UTF-8.
inline void writeTextFile(const QString& path, const QString& text, const QString& what = "the file")
{
    writeFileAtomically(path, text.toUtf8(), what);
}

}  // namespace parrot
