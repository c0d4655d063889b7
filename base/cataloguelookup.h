// What the catalogues (modelcatalog.h, tasks/taskcatalog.h) share: tables of entries keyed by a
// QString `id`, looked up and listed the same way.
#pragma once

#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

// The entry with this id, or nullptr.
template <class Entry> const Entry* findById(const std::vector<Entry>& entries, const QString& id)
{
    for (const Entry& e : entries)
        if (e.id == id) return &e;
    return nullptr;
}

// Every id, in the table's order.
template <class Entry> QStringList idsOf(const std::vector<Entry>& entries)
{
    QStringList ids;
    for (const Entry& e : entries) ids << e.id;
    return ids;
}

}  // namespace parrot
