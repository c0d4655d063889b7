// The one command-line parser of parrotscope: the window's options and every command's options
// are read through it, so they accept the same forms and fail with the same one-line errors.
#pragma once

#include <QStringList>

#include <vector>

namespace parrot {

// One option of a command, declared once, in the command table (commands.cpp): Args takes a
// number's default and range from it, and `--help` and the user guide's reference are written
// from it, so what the help says and what the parser does cannot differ.
struct Option {
    QString name;       // "--seed"
    QString valueName;  // "S", as in "--seed S"; "" for a flag
    QString help;       // what it does, a phrase for the reference
    double fallback = 0;   // a number's value when the option is absent
    double lo = 0;         // a number's accepted range, lo..hi
    double hi = -1;        // (hi < lo: the option is not a number)
    QString defaultText;   // the default in words, where the value alone does not say it (a text
                           // option's default, or what a number's fallback stands for)

    static Option flag(QString name, QString help) { return text(std::move(name), {}, std::move(help)); }
    static Option text(QString name, QString valueName, QString help, QString defaultText = {})
    {
        Option o;
        o.name = std::move(name);
        o.valueName = std::move(valueName);
        o.help = std::move(help);
        o.defaultText = std::move(defaultText);
        return o;
    }
    static Option integer(QString name, QString valueName, int fallback, int lo, int hi, QString help, QString defaultText = {})
    {
        return number(std::move(name), std::move(valueName), fallback, lo, hi, std::move(help), std::move(defaultText));
    }
    static Option number(QString name, QString valueName, double fallback, double lo, double hi, QString help, QString defaultText = {})
    {
        Option o = text(std::move(name), std::move(valueName), std::move(help), std::move(defaultText));
        o.fallback = fallback, o.lo = lo, o.hi = hi;
        return o;
    }
    bool numeric() const { return hi >= lo; }
    // "--seed S", or "--json" for a flag
    QString synopsis() const { return valueName.isEmpty() ? name : name + " " + valueName; }
    // The default as the reference states it: the words, else the number; "" when there is none.
    QString shownDefault() const;
    // The range a number is checked against, "0..2147483647"; "" for a text option.
    QString shownRange() const;
};

// Strict: the caller reads each option it knows (taking it out of the list), then calls done(),
// which refuses whatever is left. Errors are parrot::Error naming the option. Every option is read
// through its declaration: a number with its declared default and range; reading an option that
// is not declared is a mistake in the command table (std::logic_error), which any test that runs
// the command catches.
class Args {
public:
    Args(QStringList args, std::vector<Option> declared) : m_args(std::move(args)), m_declared(std::move(declared)) {}

    // True when `--name` was given (every occurrence is taken).
    bool flag(const QString& name);
    // Every value of a repeatable option (`--name VALUE` or `--name=VALUE`), in order.
    QStringList values(const QString& name);
    // The value of an option given at most once; a null string when it is absent.
    QString value(const QString& name);
    // The same, or the option's declared default text when it is absent.
    QString text(const QString& name);
    // `--name A B C`: the words after the option up to the next option.
    QStringList list(const QString& name);
    // The first word that is not an option (a file name), taken; "" when there is none. Read
    // the options first, or their values are taken for it.
    QString positional();
    // A number option: its value, or its declared default when absent.
    int integer(const QString& name);
    double number(const QString& name);
    // A number option whose default the caller works out (a saved setting, a cluster profile's);
    // the declaration's defaultText says what it is.
    int integer(const QString& name, int fallback);
    // Throws on the first argument nobody read.
    void done() const;

private:
    // The declaration of `name` (a number's when `number`).
    const Option& declared(const QString& name, bool number = false) const;

    QStringList m_args;
    std::vector<Option> m_declared;
};

}  // namespace parrot
