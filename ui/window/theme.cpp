#include "ui/window/theme.h"

#include "figures/export.h"

#include <QApplication>
#include <QPalette>
#include <QStyle>

namespace parrot {

void applyTheme(const QString& mode)
{
    static const QPalette systemPalette = QApplication::palette();  // the platform's, before any change
    static const QString systemStyle = QApplication::style()->name();
    if (mode == "dark") {
        QApplication::setStyle("Fusion");
        QPalette p;
        const QColor window(45, 45, 48), base(30, 30, 32), text(225, 225, 225), highlight(42, 130, 218);
        p.setColor(QPalette::Window, window);
        p.setColor(QPalette::WindowText, text);
        p.setColor(QPalette::Base, base);
        p.setColor(QPalette::AlternateBase, window);
        p.setColor(QPalette::ToolTipBase, window);
        p.setColor(QPalette::ToolTipText, text);
        p.setColor(QPalette::Text, text);
        p.setColor(QPalette::Button, window);
        p.setColor(QPalette::ButtonText, text);
        p.setColor(QPalette::Highlight, highlight);
        p.setColor(QPalette::HighlightedText, Qt::white);
        p.setColor(QPalette::Link, highlight.lighter(130));
        p.setColor(QPalette::PlaceholderText, QColor(150, 150, 150));  // the default is dark grey, lost on the dark fields
        p.setColor(QPalette::Disabled, QPalette::PlaceholderText, QColor(105, 105, 105));
        p.setColor(QPalette::Disabled, QPalette::Text, QColor(130, 130, 130));
        p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(130, 130, 130));
        p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(130, 130, 130));
        QApplication::setPalette(p);
    } else if (mode == "light") {
        QApplication::setStyle("Fusion");
        QApplication::setPalette(QApplication::style()->standardPalette());
    } else {
        QApplication::setStyle(systemStyle);
        QApplication::setPalette(systemPalette);
    }
    // plots: dark with a dark window; the system's choice is followed when it changes
    installPlotTheme(mode == "system");
    if (mode != "system") setDarkPlots(mode == "dark");
}

}  // namespace parrot
