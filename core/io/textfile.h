// Small text-file helpers shared by every CSV the app writes (figures, tables, results).
#pragma once

#include "error.h"

#include <QSaveFile>
#include <QString>

namespace parrot {

// One CSV field: quoted (with quotes doubled) when it holds a comma, a quote or a line break.
inline QString csvField(QString s)
{
    if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace('"', "\"\"") + '"';
    return s;
}

// Writes `text` as UTF-8 through a temporary file renamed over `path` when complete, so a failed
// write leaves what was there. Throws parrot::Error naming the file, `what` it is, and why.
inline void writeTextFile(const QString& path, const QString& text, const QString& what = "the file")
{
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text.toUtf8()) < 0 || !f.commit())
        throw Error(QString("%1: cannot write %2 (%3)").arg(path, what, f.errorString()));
}

}  // namespace parrot
