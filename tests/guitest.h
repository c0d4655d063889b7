// Helpers for the tests that look at the window.
// What the tests that measure pixels assume of the machine, checked rather than hoped for: Qt's
// offscreen platform (CTest asks for it) at 96 DPI, and DejaVu Sans as the default font (Debian's
// fonts-dejavu-core, which packaging/setup.sh installs). Another font or DPI moves every
// measured widget, so a test on such a machine would pass or fail by chance.
#pragma once

#include "ui/window/mainwindow.h"

#include <QFontInfo>
#include <QGuiApplication>
#include <QScreen>
#include <QString>
#include <QWidget>
#include <QtTest>

namespace parrot::test {

// Empty when the machine is as the tests assume; otherwise what differs.
inline QString pixelAssumptionsBroken()
{
    if (QGuiApplication::platformName() != "offscreen")
        return QString("the tests measure pixels on Qt's offscreen platform (QT_QPA_PLATFORM=offscreen), not on '%1'")
            .arg(QGuiApplication::platformName());
    const QFontInfo font(QGuiApplication::font());
    if (font.family() != "DejaVu Sans")
        return QString("the default font is '%1', where the tests assume DejaVu Sans: install fonts-dejavu-core "
                       "(packaging/setup.sh does)").arg(font.family());
    if (const QScreen* screen = QGuiApplication::primaryScreen(); screen && std::abs(screen->logicalDotsPerInch() - 96) > 0.5)
        return QString("the screen has %1 DPI, where the tests assume 96").arg(screen->logicalDotsPerInch());
    return {};
}

// Waits until nothing under `top` moves: every widget's geometry and visibility the same over
// 300 ms of event loop (at most `ms`). Layouts settle through posted events, in an order that
// depends on the machine; a test of a layout checks the settled one, never a moment on the way.
inline bool settled(QWidget& top, int ms = 15000)
{
    QDeadlineTimer deadline(ms);
    QByteArray last = layoutSignature(top);
    int still = 0;
    while (!deadline.hasExpired()) {
        QTest::qWait(50);
        const QByteArray now = layoutSignature(top);
        still = now == last ? still + 1 : 0;
        if (still >= 6) return true;
        last = now;
    }
    return false;
}

}  // namespace parrot::test
