// The device this process runs models on, as the word the user chose ("auto", "cpu", "cuda",
// "cuda:N"). Checked and set by core/device.h's setDeviceChoice; read here by what launches runs
// in other processes (a sweep's jobs), which pass the same word on.
#pragma once

#include <QString>

namespace parrot {

QString deviceChoice();                         // "auto" until a choice is set
void storeDeviceChoice(const QString& spec);    // no check: core/device.h's setDeviceChoice checks first

}  // namespace parrot
