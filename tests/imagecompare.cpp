// How far apart two pictures are, for the docs' image check (tests/docs.sh):
//   imagecompare COMMITTED MADE [MAX_DIFFERENCE]
// Both must be readable images of the same size. With MAX_DIFFERENCE, their perceptual difference
// must also be at most that: each picture is shrunk to 96 × 54 grey cells (an area average, so a
// glyph's hinting or a font's width barely counts while a missing panel, a blank view or another
// layout does), and the difference is the mean absolute difference of the cells, 0 to 255.
// Prints "WIDTHxHEIGHT difference D"; exit 0 when the pictures agree, 1 when not, 2 on bad input.
#include <QGuiApplication>
#include <QImage>
#include <QTextStream>

#include <cmath>
#include <cstdlib>

namespace {

QImage cells(const QImage& picture)
{
    return picture.convertToFormat(QImage::Format_Grayscale8).scaled(96, 54, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
}

double difference(const QImage& a, const QImage& b)
{
    const QImage ca = cells(a), cb = cells(b);
    double sum = 0;
    for (int y = 0; y < ca.height(); ++y) {
        const uchar* ra = ca.constScanLine(y);
        const uchar* rb = cb.constScanLine(y);
        for (int x = 0; x < ca.width(); ++x) sum += std::abs(int(ra[x]) - int(rb[x]));
    }
    return sum / (ca.width() * ca.height());
}

}  // namespace

int main(int argc, char** argv)
{
    QGuiApplication app(argc, argv);  // image plugins; run it on the offscreen platform
    QTextStream out(stdout), err(stderr);
    const QStringList args = app.arguments().mid(1);
    if (args.size() < 2 || args.size() > 3) {
        err << "usage: imagecompare COMMITTED MADE [MAX_DIFFERENCE]\n";
        return 2;
    }
    const QImage committed(args[0]), made(args[1]);
    for (const auto& [image, path] : {std::pair{&committed, args[0]}, std::pair{&made, args[1]}})
        if (image->isNull()) {
            err << "imagecompare: cannot read " << path << " as an image\n";
            return 2;
        }
    if (committed.size() != made.size()) {
        out << args[1] << " is " << made.width() << "x" << made.height() << ", " << args[0] << " " << committed.width() << "x"
            << committed.height() << "\n";
        return 1;
    }
    const double d = difference(committed, made);
    out << made.width() << "x" << made.height() << " difference " << QString::number(d, 'f', 2) << "\n";
    if (args.size() == 3 && d > args[2].toDouble()) return 1;
    return 0;
}
