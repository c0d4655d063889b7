#include "base/devicechoice.h"

#include <mutex>

namespace parrot {

namespace {
std::mutex g_mutex;
QString g_choice = "auto";
}  // namespace

QString deviceChoice()
{
    std::lock_guard lock(g_mutex);
    return g_choice;
}

void storeDeviceChoice(const QString& spec)
{
    std::lock_guard lock(g_mutex);
    g_choice = spec;
}

}  // namespace parrot
