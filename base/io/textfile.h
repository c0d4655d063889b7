// Text files: CSV fields, reading a text file with errors that name it, and the one atomic
// writer every file the app saves goes through.
#pragma once

#include "base/error.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QString>

#include <vector>

namespace parrot {

// One CSV field: quoted (with quotes doubled) when it holds a comma, a quote or a line break.
inline QString csvField(QString s)
{
    if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace('"', "\"\"") + '"';
    return s;
}

// Writes `chunks`, in order, through a temporary file renamed over `path` once every one is whole,
// so a failed write leaves what was there. Returns "" when written, else why not. A write cut short
// (a disk that fills up part-way) returns fewer bytes without an error: only the count tells
// (unbuffered, so that it is this write's count and not a later flush's), and then the temporary
// file is dropped, never renamed over the target. `opened`, when given, says whether the temporary
// file could be made at all (a missing or read-only folder) before anything was written.
inline QString writeChunksAtomically(const QString& path, const std::vector<QByteArrayView>& chunks, bool* opened = nullptr)
{
    QSaveFile f(path);
    bool whole = f.open(QIODevice::WriteOnly | QIODevice::Unbuffered);
    if (opened) *opened = whole;
    for (auto c = chunks.begin(); whole && c != chunks.end(); ++c) whole = f.write(c->data(), c->size()) == c->size();
    if (!whole) {
        const QString why = f.error() != QFileDevice::NoError ? f.errorString() : QString("the disk is full");
        f.cancelWriting();
        f.commit();  // removes the temporary file
        return why;
    }
    return f.commit() ? QString() : f.errorString();
}

// writeChunksAtomically for one piece; throws parrot::Error naming the file, `what` it is, and why.
inline void writeFileAtomically(const QString& path, const QByteArray& bytes, const QString& what = "the file")
{
    if (const QString why = writeChunksAtomically(path, {QByteArrayView(bytes)}); !why.isEmpty())
        throw Error(QString("%1: cannot write %2 (%3)").arg(path, what, why));
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
