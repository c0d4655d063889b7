// The layers, checked: every #include of the project's own headers in base/, core/, figures/,
// ui/ and app/ goes downwards, as docs/ARCHITECTURE.md draws them. Every library exports the
// repository root as its include path, so an upward include would compile; this test is what
// stops it, and its message says which rule a line breaks.
#include <QDirIterator>
#include <QFile>
#include <QRegularExpression>
#include <QTest>

#include <vector>

namespace {

struct Layer {
    QString folder;        // a source folder, e.g. "ui/panels/"
    QStringList may;       // the folders its files may include from (its own always)
    QStringList alsoFiles; // single headers of a folder not in `may`, each allowed for a reason
    QString rule;          // the rule in words, for the message
};

// The allowed matrix. The most specific folder of a file decides (ui/panels/ before ui/).
const std::vector<Layer>& layers()
{
    static const std::vector<Layer> table{
        {"base/", {}, {}, "base uses nothing above it (Qt only)"},
        {"core/", {"base/"}, {}, "core uses base"},
        {"figures/",
         {"base/"},
         // The results the callers compute and hand in: plain values, never a model run here.
         {"core/analysis/inside.h", "core/analysis/causal.h", "core/analysis/construction.h", "core/eval/lmtests.h"},
         "figures uses base, and of core only the result types its callers hand in"},
        {"ui/jobs/", {"base/", "core/", "figures/"}, {}, "ui/jobs (background work, no widgets) uses no other ui folder"},
        {"ui/common/", {"base/", "core/", "figures/", "ui/jobs/"}, {}, "ui/common serves panels and window, and uses neither"},
        {"ui/panels/", {"base/", "core/", "figures/", "ui/common/", "ui/jobs/"}, {}, "panels never include the window"},
        {"ui/window/", {"base/", "core/", "figures/", "ui/common/", "ui/jobs/", "ui/panels/"}, {}, "the window may use every ui folder"},
        {"app/", {"base/", "core/", "figures/", "ui/"}, {}, "the executable may use every library"},
    };
    return table;
}

const Layer* layerOf(const QString& file)
{
    const Layer* best = nullptr;
    for (const Layer& l : layers())
        if (file.startsWith(l.folder) && (!best || l.folder.size() > best->folder.size())) best = &l;
    return best;
}

bool allowed(const Layer& layer, const QString& header)
{
    if (header.startsWith(layer.folder) || layer.alsoFiles.contains(header)) return true;
    for (const QString& folder : layer.may)
        if (header.startsWith(folder)) return true;
    return false;
}

// The project headers `file` includes: "a/b.h" as written, or a bare "b.h" resolved to the
// file's own folder. Angle-bracket includes are not the project's.
QStringList projectIncludes(const QString& root, const QString& file)
{
    QFile f(root + "/" + file);
    if (!f.open(QIODevice::ReadOnly)) return {QStringLiteral("?unreadable")};
    static const QRegularExpression include(QStringLiteral("^\\s*#\\s*include\\s*\"([^\"]+)\""));
    const QString folder = file.section('/', 0, -2) + "/";
    QStringList out;
    int line = 0;
    while (!f.atEnd()) {
        ++line;
        const QRegularExpressionMatch m = include.match(QString::fromUtf8(f.readLine()));
        if (!m.hasMatch()) continue;
        QString header = m.captured(1);
        if (!header.contains('/')) header = folder + header;
        out << QString("%1:%2").arg(line).arg(header);
    }
    return out;
}

}  // namespace

class TestLayers : public QObject {
    Q_OBJECT
private slots:
    void everyIncludeGoesDownwards()
    {
        const QString root = PARROT_SOURCE_DIR;
        QStringList broken;
        int files = 0, includes = 0;
        for (const char* top : {"base", "core", "figures", "ui", "app"}) {
            QDirIterator it(root + "/" + QString(top), {"*.h", "*.cpp", "*.inc", "*.cu"}, QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString file = QDir(root).relativeFilePath(it.next());
                const Layer* layer = layerOf(file);
                QVERIFY2(layer, qPrintable(file + " is in no layer of the matrix"));
                ++files;
                for (const QString& at : projectIncludes(root, file)) {
                    ++includes;
                    const QString header = at.section(':', 1);
                    if (!allowed(*layer, header))
                        broken << QString("%1:%2 includes %3: %4").arg(file, at.section(':', 0, 0), header, layer->rule);
                }
            }
        }
        QVERIFY2(files > 100 && includes > 500, qPrintable(QString("read %1 files, %2 includes: not the source tree?").arg(files).arg(includes)));
        QVERIFY2(broken.isEmpty(), qPrintable("\n" + broken.join("\n")));
    }

    // The check itself: an upward include is caught, a downward one is not.
    void theMatrixRefusesUpwardIncludes()
    {
        const Layer* panels = layerOf("ui/panels/insidepane.cpp");
        QVERIFY(panels && panels->folder == "ui/panels/");
        QVERIFY(!allowed(*panels, "ui/window/mainwindow.h"));
        QVERIFY(allowed(*panels, "ui/common/exportdialog.h"));
        QVERIFY(!allowed(*layerOf("base/config.cpp"), "core/model.h"));
        QVERIFY(!allowed(*layerOf("figures/figures.cpp"), "core/model.h"));
        QVERIFY(allowed(*layerOf("figures/insidefigure.h"), "core/analysis/inside.h"));
        QVERIFY(!allowed(*layerOf("ui/common/appsettings.h"), "ui/panels/trainpanel.h"));
        QVERIFY(!allowed(*layerOf("core/model.cpp"), "figures/plots.h"));
    }
};

QTEST_GUILESS_MAIN(TestLayers)
#include "tst_layers.moc"
