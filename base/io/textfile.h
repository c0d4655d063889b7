// Writing files: CSV fields, and the one atomic writer every file the app saves goes through.
#pragma once

#include "base/error.h"

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
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) < 0 || !f.commit())
        throw Error(QString("%1: cannot write %2 (%3)").arg(path, what, f.errorString()));
}

// writeFileAtomically for text, as UTF-8.
inline void writeTextFile(const QString& path, const QString& text, const QString& what = "the file")
{
    writeFileAtomically(path, text.toUtf8(), what);
}

}  // namespace parrot
