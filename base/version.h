#pragma once

#include <QString>

namespace parrot {
QString appVersion();
}
