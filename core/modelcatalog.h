// What the model families and positional schemes are, for people: the window's pickers and
// `parrotscope models` read the same table.
#pragma once

#include <QJsonArray>
#include <QString>
#include <QStringList>

#include <vector>

namespace parrot {

struct CatalogEntry {
    QString id;           // the config value, e.g. "mamba"
    QString label;        // e.g. "Mamba"
    QString tip;          // one sentence
    QStringList options;  // model.* keys this family uses (families only)
};

const std::vector<CatalogEntry>& modelFamilies();
const std::vector<CatalogEntry>& positionSchemes();

// Every family with its options and their defaults (from ModelConfig's defaults).
QJsonArray modelCatalogJson();

}  // namespace parrot
