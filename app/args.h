// The one command-line parser of parrotscope: the window's options and every command's options
// are read through it, so they accept the same forms and fail with the same one-line errors.
#pragma once

#include <QStringList>

namespace parrot {

// Strict: the caller reads each option it knows (taking it out of the list), then calls done(),
// which refuses whatever is left. Errors are parrot::Error naming the option.
class Args {
public:
    explicit Args(QStringList args) : m_args(std::move(args)) {}

    // True when `--name` was given (every occurrence is taken).
    bool flag(const QString& name) { return m_args.removeAll(name) > 0; }
    // Every value of a repeatable option (`--name VALUE` or `--name=VALUE`), in order.
    QStringList values(const QString& name);
    // The value of an option given at most once; a null string when it is absent.
    QString value(const QString& name);
    // `--name A B C`: the words after the option up to the next option.
    QStringList list(const QString& name);
    // The first word that is not an option (a file name), taken; "" when there is none. Read
    // the options first, or their values are taken for it.
    QString positional();
    double number(const QString& name, double fallback, double lo, double hi);
    int integer(const QString& name, int fallback, int lo, int hi);
    // Throws on the first argument nobody read.
    void done() const;

private:
    QStringList m_args;
};

}  // namespace parrot
