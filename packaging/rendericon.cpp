// rendericon: rasterises the app's SVG icon into the hicolor PNG sizes at build time, so
// the PNGs are never committed and cannot drift from the SVG.
//
//   rendericon ICON.svg OUTDIR NAME SIZE...   writes OUTDIR/<SIZE>x<SIZE>/apps/NAME.png
//
// Plain QImage + QPainter + QSvgRenderer: raster painting needs no QGuiApplication, so it
// runs on build machines without a display (and without QT_QPA_PLATFORM).
#include <QDir>
#include <QImage>
#include <QPainter>
#include <QString>
#include <QSvgRenderer>
#include <QTextStream>

#include <cstdio>

int main(int argc, char** argv)
{
    QTextStream err(stderr);
    if (argc < 5) {
        err << "usage: rendericon ICON.svg OUTDIR NAME SIZE...\n";
        return 2;
    }
    const QString svg = QString::fromLocal8Bit(argv[1]);
    const QString outDir = QString::fromLocal8Bit(argv[2]);
    const QString name = QString::fromLocal8Bit(argv[3]);

    QSvgRenderer renderer(svg);
    if (!renderer.isValid()) {
        err << "rendericon: " << svg << ": not a valid SVG file (or cannot be read)\n";
        return 1;
    }
    if (renderer.viewBoxF().width() != renderer.viewBoxF().height()) {
        err << "rendericon: " << svg << ": the viewBox must be square for an app icon\n";
        return 1;
    }

    for (int i = 4; i < argc; ++i) {
        bool ok = false;
        const int size = QString::fromLocal8Bit(argv[i]).toInt(&ok);
        if (!ok || size < 8 || size > 1024) {
            err << "rendericon: size '" << argv[i] << "': expected a whole number of pixels, 8 to 1024\n";
            return 2;
        }
        QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        {
            QPainter painter(&image);
            painter.setRenderHint(QPainter::Antialiasing);
            painter.setRenderHint(QPainter::SmoothPixmapTransform);
            renderer.render(&painter, QRectF(0, 0, size, size));
        }
        const QString dir = QString("%1/%2x%2/apps").arg(outDir).arg(size);
        const QString file = QString("%1/%2.png").arg(dir, name);
        if (!QDir().mkpath(dir)) {
            err << "rendericon: cannot create the folder " << dir << "\n";
            return 1;
        }
        if (!image.save(file, "PNG")) {
            err << "rendericon: cannot write " << file << "\n";
            return 1;
        }
    }
    return 0;
}
