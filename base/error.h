#pragma once

#include <QString>

#include <stdexcept>

namespace parrot {

// Every error the core reports to a user: the message names the file, field or
// value at fault and what was expected.
class Error : public std::runtime_error {
public:
    explicit Error(const QString& message) : std::runtime_error(message.toStdString()) {}
    QString message() const { return QString::fromStdString(what()); }
};

}  // namespace parrot
