// The application's look: the platform's own ("system"), Fusion's light palette ("light") or a
// dark palette ("dark"), for widgets and plots alike. Called on the GUI thread.
#pragma once

#include <QString>

namespace parrot {

// mode: system, light or dark. With "system" the plots follow the platform when it changes.
void applyTheme(const QString& mode);

}  // namespace parrot
