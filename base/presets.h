// Bundled experiment presets: resources/presets/*.json, compiled into the core as Qt resources.
#pragma once

#include "base/config.h"

#include <QString>
#include <QStringList>

namespace parrot {

QString defaultPresetName();          // the experiment the app opens on
QStringList presetNames();            // sorted, without the .json suffix
ExperimentConfig loadPreset(const QString& name);  // throws parrot::Error for an unknown name

// Resolves --preset NAME or --config FILE (a config or a run folder's config.json).
ExperimentConfig resolveExperiment(const QString& preset, const QString& configFile);

}  // namespace parrot
