// Reading JSON files. Every file the app reads as JSON goes through here, so that every error
// names the file and what it was meant to be, and a lenient read is visible as one.
#pragma once

#include <QJsonObject>
#include <QString>

#include <optional>

namespace parrot {

// The JSON object in `path`; throws parrot::Error naming the file, `what` it was meant to be
// (e.g. "the sweep file") and what is wrong: absent, unreadable, larger than `maxBytes`, not
// JSON, or JSON that is not an object.
QJsonObject readJsonObject(const QString& path, const QString& what, qint64 maxBytes = 64 * 1024 * 1024);

// For a file another process may not have written yet or may be writing (a run's result.json,
// curves.json or config.json while the run is alive or after it was killed): nullopt when it is
// absent; nullopt too when it cannot be read or is not a JSON object, and then the log says so,
// naming the file. Callers treat nullopt as "not there yet".
std::optional<QJsonObject> readJsonObjectIfValid(const QString& path);

}  // namespace parrot
