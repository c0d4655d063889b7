// The Explore tab and `parrotscope inspect`: the bundled models at start-up, the heatmap's hover,
// locked rows and colour scale, the construction as a subject and measured, bad input kept out,
// and the views rendered without a window.
#include "analysis/inside.h"
#include "constructionview.h"
#include "explorerpanel.h"
#include "heatmap.h"
#include "inspectorpanel.h"
#include "mainwindow.h"
#include "tasks/tokentask.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeWidget>
#include <QPushButton>
#include <QtTest>
#include <qcustomplot.h>

using namespace parrot;

namespace {

bool idle(const ExplorerPanel& e) { return !e.left()->busy() && !e.right()->busy(); }

// The widget position of a cell's centre in a heatmap.
QPoint cellCentre(HeatmapView* h, int row, int col)
{
    return QPoint(int(h->plot()->xAxis->coordToPixel(col)), int(h->plot()->yAxis->coordToPixel(row)));
}

}  // namespace

class TestExplorer : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);  // recent files and settings go to a test location
        QVERIFY(m_dir.isValid());
    }

    // The "done when": the app opens on a bundled Transformer's attention with its lookup
    // heads marked beside a Mamba's implicit attention.
    void bundledModelsAreShownAtStartUp()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.showExplorer();
        w.show();
        ExplorerPanel* e = w.explorer();
        QTRY_VERIFY_WITH_TIMEOUT(idle(*e), 30000);
        InsidePane* left = e->left();
        InsidePane* right = e->right();
        QVERIFY2(left->subject().architecture() == "transformer/hard_alibi", qPrintable(left->status()));
        QCOMPARE(right->subject().architecture(), QString("mamba"));
        QCOMPARE(left->view(), QString("attention"));
        QCOMPARE(right->view(), QString("implicit"));
        QCOMPARE(int(left->shown().maps.size()), 16);  // 2 layers x 8 heads
        QCOMPARE(int(right->shown().maps.size()), 2);  // one implicit map per Mamba block
        const auto& hl = left->shown().highlighted;
        QVERIFY2(std::count(hl.begin(), hl.end(), true) >= 1, "no n-gram lookup head marked");
        QVERIFY(hl[size_t(left->selectedMap())]);  // the first lookup head is what is shown
        QVERIFY2(left->info().contains("n-gram lookup"), qPrintable(left->info()));
        const HeatmapData& d = left->heatmap()->data();
        QCOMPARE(d.rows, int(e->tokens().size()));
        QCOMPARE(d.rowLabels.front(), QString("$"));
        QVERIFY(w.findChildren<QToolButton*>().size() >= 18);
        // the Mamba's state views are there too
        right->setView("state");
        QCOMPARE(right->view(), QString("state"));
        QCOMPARE(right->heatmap()->data().cols, 192);  // d_inner = 2 x 96
        right->setView("delta");
        QCOMPARE(right->heatmap()->data().rows, int(e->tokens().size()));
        // and a Transformer has no state view: asking leaves it on attention
        left->setView("state");
        QCOMPARE(left->view(), QString("attention"));
        QVERIFY(w.saveScreenshot(m_dir.filePath("explore.png")));
    }

    void hoverClickAndColourScale()
    {
        ExplorerPanel e;
        e.resize(1400, 900);
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        HeatmapView* h = e.left()->heatmap();
        h->plot()->replot();
        QApplication::processEvents();
        const int row = int(e.tokens().size()) - 3, col = 2;
        QTest::mouseMove(h->plot(), cellCentre(h, row, col));
        QTRY_VERIFY2(h->readout().contains(QString("query %1").arg(row)), qPrintable(h->readout()));
        QVERIFY(h->readout().contains(QString("key %1").arg(col)));
        QSignalSpy locked(h, &HeatmapView::rowLocked);
        QTest::mouseClick(h->plot(), Qt::LeftButton, {}, cellCentre(h, row, col));
        QCOMPARE(locked.size(), 1);
        QCOMPARE(h->lockedRow(), row);
        QVERIFY(h->readout().contains(QString("locked query %1").arg(row)));
        QTest::mouseClick(h->plot(), Qt::LeftButton, {}, cellCentre(h, row, col));  // again: unlocked
        QCOMPARE(h->lockedRow(), -1);
        // log colour scale: the range starts at the smallest positive weight, not at 0
        auto* log = e.left()->findChildren<QCheckBox*>().at(0);
        QCOMPARE(log->text(), QString("log"));
        log->setChecked(true);
        QVERIFY(h->style().logScale);
        QVERIFY(h->range().first > 0);
        // a manual range is applied as set
        auto* autoRange = e.left()->findChildren<QCheckBox*>().at(1);
        autoRange->setChecked(false);
        log->setChecked(false);
        auto spins = e.left()->findChildren<QDoubleSpinBox*>();
        spins[0]->setValue(0.1);
        spins[1]->setValue(0.5);
        QCOMPARE(h->range(), (std::pair<double, double>{0.1, 0.5}));
        // the colour maps are built from stops: viridis runs dark purple to yellow
        QCOMPARE(Colormap::at("viridis", 0).name(), QString("#440154"));
        QCOMPARE(Colormap::at("viridis", 1).name(), QString("#fde725"));
        const QColor mid = Colormap::at("viridis", 0.0625);  // halfway between the first two stops
        QVERIFY(mid.red() > 0x44 && mid.red() < 0x48 && mid.blue() > 0x54 && mid.blue() < 0x7b);
    }

    // A typed input with a letter outside the alphabet is refused and the panes keep theirs; a
    // repeated n-gram input shows ambiguous lookups (crosses) on the Transformer.
    void inputsTypedAndAmbiguous()
    {
        ExplorerPanel e;
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        const std::vector<int> before = e.tokens();
        e.setInputText("ab3c");
        QVERIFY2(e.inputError().contains("'3'"), qPrintable(e.inputError()));
        QCOMPARE(e.tokens(), before);
        e.setInputText("abcdefabcxyz");
        QVERIFY(e.inputError().isEmpty());
        QCOMPARE(int(e.tokens().size()), 2 * 12 + 3);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        QCOMPARE(e.left()->heatmap()->data().rows, 27);
        // the lookup head shown reads short n-grams ("abc" and its parts occur twice): crosses
        // (the marks themselves are tested in tst_lookup)
        QCustomPlot* plot = e.left()->heatmap()->plot();
        int crosses = 0;
        for (int i = 0; i < plot->graphCount(); ++i)
            if (plot->graph(i)->scatterStyle().shape() == QCPScatterStyle::ssCross) crosses += plot->graph(i)->dataCount();
        QVERIFY(crosses > 0);
    }

    // The construction opens in a pane (its layer-2 head labelled a lookup head), a broken file
    // does not replace what a pane shows, and the Copy construction tab measures accuracy against
    // the bound off the GUI thread.
    void constructionAndBadFiles()
    {
        ExplorerPanel e;
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        e.left()->chooseConstruction(3, 26);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        QVERIFY(e.left()->subject().isConstruction());
        QCOMPARE(int(e.left()->shown().maps.size()), 3 + 1);  // layer 1: n heads; layer 2: one
        QVERIFY(e.left()->shown().highlighted.back());
        QVERIFY(e.left()->shown().captions.back().contains("n-gram lookup"));

        const QString bad = m_dir.filePath("broken.safetensors");
        test::writeAll(bad, QByteArray("\x10\x00\x00\x00\x00\x00\x00\x00{not json}", 18));
        QSignalSpy failed(e.right(), &InsidePane::failed);
        e.right()->chooseCheckpoint(bad);
        QTRY_VERIFY_WITH_TIMEOUT(failed.size() == 1, 30000);
        QVERIFY2(e.right()->status().contains("broken.safetensors"), qPrintable(e.right()->status()));
        QCOMPARE(e.right()->subject().architecture(), QString("mamba"));  // still the bundled Mamba

        ConstructionView* c = e.construction();
        c->setRange(2, 4, 26, "10,40", 40);
        QSignalSpy done(c, &ConstructionView::finished);
        c->start();
        QVERIFY(c->running());
        QVERIFY(done.wait(60000));
        QCOMPARE(c->result().orders, (std::vector<int>{2, 3, 4}));
        const auto& curves = c->result().curves;
        QVERIFY(curves[2].stringAccuracy[1] > curves[0].stringAccuracy[1]);  // n = 4 beats n = 2 at 40 letters
        QCOMPARE(c->plot()->graphCount(), 6);  // measured + bound per n
        c->setRange(2, 2, 26, "10,x", 40);
        c->start();
        QVERIFY(c->status().contains("'x'"));
    }

    // The Inspect tab reads a file off the GUI thread and shows its tensors, a histogram and a
    // heatmap of the one selected; a file the app cannot run says why, and the buttons stay off.
    void inspectorShowsAnyCheckpoint()
    {
        MainWindow w;
        w.show();
        InspectorPanel* p = w.inspector();
        QSignalSpy loaded(p, &InspectorPanel::loaded);
        p->openFile(QStringLiteral(PARROT_TEST_DATA "/mamba_tiny/model-bf16.safetensors"));
        QVERIFY(loaded.wait(30000));
        QCOMPARE(p->info().architecture, QString("mamba_ssm"));
        int leaves = 0;
        for (QTreeWidgetItemIterator it(p->tree()); *it; ++it) leaves += (*it)->childCount() == 0;
        QCOMPARE(leaves, 22);
        QVERIFY(p->status().contains("The app can run it"));
        p->selectTensor("backbone.layers.0.mixer.A_log");
        QCOMPARE(p->histogram()->plottableCount(), 1);
        auto* bars = qobject_cast<QCPBars*>(p->histogram()->plottable(0));
        double total = 0;
        for (auto it = bars->data()->begin(); it != bars->data()->end(); ++it) total += it->value;
        QCOMPARE(total, 32.0 * 4);  // d_inner x d_state values
        QCOMPARE(p->heatmap()->data().rows, 32);
        QCOMPARE(p->heatmap()->data().cols, 4);
        QVERIFY(p->recentFiles().first().endsWith("model-bf16.safetensors"));
        p->openFile(QStringLiteral(PARROT_TEST_DATA "/mamba_tiny/ordered_dict.bin"));
        QVERIFY(loaded.wait(30000));
        QVERIFY2(p->status().contains("dict(state_dict)"), qPrintable(p->status()));
        QCOMPARE(p->tree()->topLevelItemCount(), 0);
        p->openFile(m_dir.filePath("missing.safetensors"));
        QVERIFY(loaded.wait(30000));
        QVERIFY(p->status().contains("no such file"));
        // a Pythia-style pytorch_model.bin: its 34 entries, and "evaluate" loads it into the Train tab
        p->openFile(QStringLiteral(PARROT_TEST_DATA "/neox_tiny/pythia/pytorch_model.bin"));
        QVERIFY(loaded.wait(30000));
        QCOMPARE(p->info().architecture, QString("gpt_neox"));
        leaves = 0;
        for (QTreeWidgetItemIterator it(p->tree()); *it; ++it) leaves += (*it)->childCount() == 0;
        QCOMPARE(leaves, 34);
        QPushButton* evaluate = nullptr;
        for (QPushButton* b : p->findChildren<QPushButton*>()) evaluate = b->text().contains("Train tab") ? b : evaluate;
        QVERIFY(evaluate && evaluate->isEnabled());
        QSignalSpy opened(&w, &MainWindow::checkpointOpened);
        QTest::mouseClick(evaluate, Qt::LeftButton);  // opened off the GUI thread
        QVERIFY(opened.wait(30000));
        QCOMPARE(opened.first().first().toBool(), true);
        QCOMPARE(w.model().config().model.kind, QString("transformer"));
        QVERIFY(w.model().config().model.parallelResidual);
        QCOMPARE(w.model().config().model.positions, QString("rope"));
        QVERIFY(w.saveScreenshot(m_dir.filePath("inspect.png")));
    }

    // `inspect` renders each view without a display; the bundled Transformer has lookup heads.
    void inspectFiguresAndTheBundledLookupHeads()
    {
        const auto json = test::runCli({"inspect", "--bundled", "hard-alibi", "--length", "8", "--seed", "3", "--json"});
        QVERIFY2(json.code == 0, qPrintable(json.err));
        const QJsonObject o = QJsonDocument::fromJson(json.out.toUtf8()).object();
        int lookup = 0;
        for (const auto& h : o["heads"].toArray()) lookup += h.toObject()["label"].toString().startsWith("n-gram lookup");
        QVERIFY2(lookup >= 1, qPrintable(json.out));

        const QString png = m_dir.filePath("a.png"), csv = m_dir.filePath("s.csv"), svg = m_dir.filePath("c.svg");
        auto r = test::runCli({"inspect", "--bundled", "hard-alibi", "--input", "abcab", "--figure", "attention", "--out", png, "--size", "500x400"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(QImage(png).size(), QSize(1333, 1067));  // 500 x 400 points at 192 dpi
        r = test::runCli({"inspect", "--bundled", "mamba", "--input", "abcab", "--figure", "state", "--out", csv});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QStringList lines = QString::fromUtf8(test::readAll(csv)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + 13);               // header + one row per token of `$ abcab | abcab .`
        QCOMPARE(lines[0].count(',') , 192);          // one column per channel
        r = test::runCli({"inspect", "--bundled", "mamba", "--input", "abcab", "--figure", "attention", "--out", svg});
        QVERIFY2(r.code == 0 && r.out.contains("implicit attention"), qPrintable(r.out + r.err));
        QVERIFY(test::readAll(svg).contains("<svg"));
        r = test::runCli({"inspect", "--construction", "5", "--figure", "construction", "--lengths", "20,60", "--samples", "20",
                          "--out", m_dir.filePath("k.csv")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(QString::fromUtf8(test::readAll(m_dir.filePath("k.csv"))).split('\n', Qt::SkipEmptyParts).size(), 1 + 4 * 2);  // n = 2..5 x 2 lengths
        // errors name what is wrong
        test::expectCliError(test::runCli({"inspect", "--bundled", "nope"}), "hard-alibi");
        test::expectCliError(test::runCli({"inspect", "--bundled", "mamba", "--figure", "bogus", "--out", png}), "bogus");
        test::expectCliError(test::runCli({"inspect", "--checkpoint", m_dir.filePath("none.safetensors")}), "none.safetensors");
        test::expectCliError(test::runCli({"inspect", "--construction", "3", "--input", "ab1"}), "'1'");
        test::expectCliError(test::runCli({"inspect", "--bundled", "hard-alibi", "--figure", "attention", "--out", m_dir.filePath("x.gif")}), ".gif");
        test::expectCliError(test::runCli({"inspect", "--bundled", "hard-alibi", "--figure", "attention", "--layer", "5", "--out", png}), "layer 5");
    }
};

QTEST_MAIN(TestExplorer)
#include "tst_explorer.moc"
