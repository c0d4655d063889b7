#include "base/presets.h"

#include "base/error.h"

#include <QDir>

namespace parrot {

QString defaultPresetName() { return "copy-hard-alibi"; }

QStringList presetNames()
{
    QStringList names;
    for (const QString& f : QDir(":/presets").entryList({"*.json"}, QDir::Files, QDir::Name))
        names << f.chopped(5);
    return names;
}

ExperimentConfig loadPreset(const QString& name)
{
    const QStringList names = presetNames();
    if (!names.contains(name))
        throw Error(QString("unknown preset '%1' (available: %2)").arg(name, names.join(", ")));
    return loadConfigFile(QString(":/presets/%1.json").arg(name));
}

ExperimentConfig resolveExperiment(const QString& preset, const QString& configFile)
{
    if (!preset.isEmpty() && !configFile.isEmpty()) throw Error("give either --preset or --config, not both");
    if (!configFile.isEmpty()) return loadConfigFile(configFile);
    return loadPreset(preset.isEmpty() ? defaultPresetName() : preset);
}

}  // namespace parrot
