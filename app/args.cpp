#include "args.h"

#include "base/error.h"

#include <stdexcept>

namespace parrot {

QString Option::shownDefault() const
{
    if (!defaultText.isEmpty() || !numeric()) return defaultText;
    return QString::number(fallback, 'g', 10);
}

QString Option::shownRange() const
{
    return numeric() ? QString("%1..%2").arg(lo, 0, 'g', 10).arg(hi, 0, 'g', 10) : QString();
}

const Option& Args::declared(const QString& name, bool number) const
{
    for (const Option& o : m_declared) {
        if (o.name != name) continue;
        if (number && !o.numeric()) throw std::logic_error(qPrintable(name + " is read as a number but declared as text"));
        return o;
    }
    throw std::logic_error(qPrintable(name + " is read but not declared in the command table (app/commands.cpp)"));
}

bool Args::flag(const QString& name)
{
    declared(name);
    return m_args.removeAll(name) > 0;
}

QStringList Args::values(const QString& name)
{
    declared(name);
    QStringList all;
    for (qsizetype i = 0; i < m_args.size();) {
        if (m_args[i] == name) {
            if (i + 1 >= m_args.size() || m_args[i + 1].startsWith("--")) throw Error(QString("%1: expects a value").arg(name));
            all << m_args[i + 1];
            m_args.remove(i, 2);
        } else if (m_args[i].startsWith(name + "=")) {
            all << m_args[i].mid(name.size() + 1);
            m_args.remove(i);
        } else {
            ++i;
        }
    }
    return all;
}

QString Args::value(const QString& name)
{
    const QStringList all = values(name);
    if (all.size() > 1) throw Error(QString("%1: given %2 times, expected once").arg(name).arg(all.size()));
    return all.isEmpty() ? QString() : all.first();
}

QString Args::text(const QString& name)
{
    const QString v = value(name);
    return v.isNull() ? declared(name).defaultText : v;
}

QStringList Args::list(const QString& name)
{
    declared(name);
    QStringList all;
    const qsizetype i = m_args.indexOf(name);
    if (i < 0) return all;
    qsizetype j = i + 1;
    while (j < m_args.size() && !m_args[j].startsWith("--")) all << m_args[j++];
    if (all.isEmpty()) throw Error(QString("%1: expects one or more values").arg(name));
    m_args.remove(i, j - i);
    return all;
}

QString Args::positional()
{
    for (qsizetype i = 0; i < m_args.size(); ++i)
        if (!m_args[i].startsWith("--")) return m_args.takeAt(i);
    return {};
}

int Args::integer(const QString& name)
{
    return integer(name, int(declared(name, true).fallback));
}

double Args::number(const QString& name)
{
    const Option& o = declared(name, true);
    const QString v = value(name);
    if (v.isNull()) return o.fallback;
    bool ok = false;
    const double x = v.toDouble(&ok);
    if (!ok || !(x >= o.lo && x <= o.hi)) throw Error(QString("%1: expected a number in %2..%3, got '%4'").arg(name).arg(o.lo).arg(o.hi).arg(v));
    return x;
}

int Args::integer(const QString& name, int fallback)
{
    const Option& o = declared(name, true);
    const QString v = value(name);
    if (v.isNull()) return fallback;
    bool ok = false;
    const int n = v.toInt(&ok);
    if (!ok || n < o.lo || n > o.hi) throw Error(QString("%1: expected an integer in %2..%3, got '%4'").arg(name).arg(int(o.lo)).arg(int(o.hi)).arg(v));
    return n;
}

void Args::done() const
{
    if (!m_args.isEmpty()) throw Error(QString("unexpected argument '%1' (see parrotscope --help)").arg(m_args.first()));
}

}  // namespace parrot
