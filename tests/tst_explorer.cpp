// The Explore tab and `parrotscope inspect`: the bundled models at start-up, the heatmap's hover,
// locked rows and colour scale, the construction as a subject and measured, bad input kept out,
// and the views rendered without a window.
#include "base/analysis/mechanisms.h"
#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/tasks/tokentask.h"
#include "core/analysis/inside.h"
#include "core/eval/lmtests.h"
#include "core/text/languagemodel.h"
#include "core/train/trainer.h"
#include "figures/heatmap.h"
#include "figures/insidefigure.h"
#include "ui/panels/causaldialog.h"
#include "ui/panels/constructionview.h"
#include "ui/panels/explorerpanel.h"
#include "ui/panels/insidetext.h"
#include "ui/panels/inspectorpanel.h"
#include "ui/panels/thumbnailgrid.h"
#include "ui/window/mainwindow.h"
#include "guitest.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeWidget>
#include <QCheckBox>
#include <QSpinBox>
#include <QTabWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QPushButton>
#include <QProgressBar>
#include <QTableWidget>
#include <QComboBox>
#include <QLineEdit>
#include <QtTest>
#include <qcustomplot.h>

using namespace parrot;

namespace {

bool idle(const ExplorerPanel& e) { return !e.left()->busy() && !e.right()->busy(); }

QString fixture(const QString& name) { return QString(PARROT_TEST_DATA) + "/hf_tiny/" + name; }

// The tiny HuggingFace models' reference outputs (tests/data/make_hf_refs.py, with transformers).
QJsonObject modelRef(const QString& which, int i)
{
    return QJsonDocument::fromJson(test::readAll(fixture("model_refs.json"))).object().value(which).toArray().at(i).toObject();
}

int argmax(const QJsonArray& values)
{
    int best = 0;
    for (int i = 1; i < values.size(); ++i)
        if (values[i].toDouble() > values[best].toDouble()) best = i;
    return best;
}

// The widget position of a cell's centre in a heatmap.
QPoint cellCentre(HeatmapView* h, int row, int col)
{
    return QPoint(int(h->plot()->xAxis->coordToPixel(col)), int(h->plot()->yAxis->coordToPixel(row)));
}

// A config's task made a small MQAR: up to 6 key-value pairs of a 24-token alphabet.
void asSmallMqar(ExperimentConfig& c)
{
    c.task.kind = "mqar";
    c.task.vocabSize = 24;
    c.task.minLen = 2;
    c.task.maxLen = 6;
    c.task.contextLen = 64;
    c.task.evalLengths = {6};
}

}  // namespace

class TestExplorer : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;

private slots:
    void initTestCase()
    {
        QVERIFY2(test::pixelAssumptionsBroken().isEmpty(), qPrintable(test::pixelAssumptionsBroken()));
        QStandardPaths::setTestModeEnabled(true);  // recent files and settings go to a test location
        QVERIFY(m_dir.isValid());
    }

    // The app opens on a bundled Transformer's attention with its lookup
    // heads marked beside a Mamba's implicit attention.
    void bundledModelsAreShownAtStartUp()
    {
        MainWindow w;
        w.resize(1600, 1000);
        w.docks()->showTab(Tab::Explore);
        w.show();
        ExplorerPanel* e = w.explorer();
        QTRY_VERIFY_WITH_TIMEOUT(idle(*e), 30000);
        InsidePane* left = e->left();
        InsidePane* right = e->right();
        QVERIFY2(left->session().subject().architecture() == "transformer/hard_alibi", qPrintable(left->session().status()));
        QCOMPARE(right->session().subject().architecture(), QString("mamba"));
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

    // A 35-token map is readable and every wrong answer's ✗ is shown. Given the height, each
    // pane's heatmap labels every row; short of it, the heatmap keeps cells that can be read (half a label's height, every
    // other row labelled and every marked one) and the pane scrolls. Numbered columns (Δ's
    // channels) are labelled at round steps a number's width apart.
    void everyQueryIsLabelled()
    {
        ExplorerPanel e;
        e.resize(1100, 1300);  // a tall screen's share of the window
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        const int labelHeight = QFontMetrics(e.left()->heatmap()->plot()->yAxis->tickLabelFont()).tightBoundingRect("dg").height();
        // Every marked row has its ✗ left of the map; labels never touch; a marked row goes
        // unlabelled only when a labelled marked row is too close to it.
        const auto marksShown = [labelHeight](HeatmapView* h) {
            const HeatmapData& d = h->data();
            QCPGraph* wrong = nullptr;
            for (int i = 0; i < h->plot()->graphCount(); ++i)
                if (h->plot()->graph(i)->name() == "wrong answers") wrong = h->plot()->graph(i);
            if (!wrong || wrong->dataCount() != int(d.markedRows.size())) return false;
            const double pitch = double(h->plot()->axisRect()->height()) / d.rows;
            const std::vector<int> shown = h->labelledRows();
            for (size_t i = 0; i + 1 < shown.size(); ++i)
                if ((shown[i + 1] - shown[i]) * pitch < labelHeight) return false;
            for (int r : d.markedRows) {
                bool near = false;
                for (int s : shown) near = near || s == r || (std::count(d.markedRows.begin(), d.markedRows.end(), s) && std::abs(s - r) * pitch < labelHeight + 4);
                if (!near) return false;
            }
            return true;
        };
        for (InsidePane* pane : {e.left(), e.right()}) {
            HeatmapView* h = pane->heatmap();
            QCOMPARE(h->data().rows, int(e.tokens().size()));
            QTRY_COMPARE(int(h->labelledRows().size()), h->data().rows);
            const int pitch = h->plot()->axisRect()->height() / h->data().rows;
            QVERIFY2(pitch >= labelHeight, qPrintable(QString::number(pitch)));
            QCOMPARE(pane->findChild<QScrollArea*>("views")->verticalScrollBar()->maximum(), 0);  // all of it in view
        }
        // the bundled Mamba gets most of this input wrong: every wrong row is marked
        const HeatmapData d = e.right()->heatmap()->data();
        QVERIFY(d.markedRows.size() >= 6);
        for (int r : d.markedRows) QVERIFY2(d.rowLabels[r].endsWith("✗"), qPrintable(d.rowLabels[r]));
        // on a 1920 x 1080 screen's share, the map is whole in view (what is under it may scroll)
        e.resize(1500, 790);
        for (InsidePane* pane : {e.left(), e.right()}) {
            HeatmapView* h = pane->heatmap();
            QWidget* viewport = pane->findChild<QScrollArea*>("views")->viewport();
            QTRY_VERIFY(viewport->rect().contains(QRect(h->plot()->mapTo(viewport, QPoint(0, 0)), h->plot()->size())));
            QTRY_VERIFY(h->plot()->axisRect()->height() / h->data().rows >= labelHeight / 2);
            QVERIFY(marksShown(h));
            QTRY_COMPARE(int(h->labelledColumns().size()), h->data().cols);  // every key: letters need less room than numbers
            // the hover line and the head's heading under it read as two (they touched)
            const auto* readout = h->findChild<QLabel*>("readout");
            const auto* info = pane->findChild<QLabel*>("headInfo");
            const int gap = info->mapTo(viewport, QPoint(0, 0)).y() - readout->mapTo(viewport, QPoint(0, readout->height())).y();
            QVERIFY2(gap >= readout->fontMetrics().height() * 2 / 3, qPrintable(QString::number(gap)));
        }
        // on a laptop's share, the maps keep readable cells and the panes scroll; every marked row is labelled
        e.resize(1000, 500);
        for (InsidePane* pane : {e.left(), e.right()}) {
            HeatmapView* h = pane->heatmap();
            QTRY_VERIFY(int(h->labelledRows().size()) < h->data().rows);
            const double pitch = double(h->plot()->axisRect()->height()) / h->data().rows;
            QVERIFY2(2 * pitch >= labelHeight, qPrintable(QString::number(pitch)));
            QVERIFY(pane->findChild<QScrollArea*>("views")->verticalScrollBar()->maximum() > 0);
            const std::vector<int> shown = h->labelledRows();
            QVERIFY2(int(shown.size()) >= h->data().rows / 3, qPrintable(QString::number(shown.size())));
            QVERIFY(marksShown(h));
        }
        QVERIFY(!e.right()->heatmap()->data().markedRows.empty());
        // squeezed further (a view of its own), the labels thin out, the marked rows first
        HeatmapView squeezed;
        squeezed.resize(400, 220);
        squeezed.setData(d);
        squeezed.show();
        QTRY_VERIFY(squeezed.plot()->axisRect()->height() < 200);
        squeezed.plot()->replot();
        QVERIFY(int(squeezed.labelledRows().size()) < d.rows / 2);
        QVERIFY(marksShown(&squeezed));
        // Δ: 192 numbered channels, labelled at a round step where a number fits
        e.right()->setView("delta");
        HeatmapView* delta = e.right()->heatmap();
        QCOMPARE(delta->data().cols, 192);
        delta->plot()->replot();
        const std::vector<int> cols = delta->labelledColumns();
        QVERIFY(cols.size() > 2 && cols.size() < 192);
        const int step = cols[1] - cols[0];
        QVERIFY2(QList<int>({1, 2, 5, 10, 20, 50, 100}).contains(step), qPrintable(QString::number(step)));
        const double pitch = delta->plot()->axisRect()->width() / 192.0;
        const int number = QFontMetrics(delta->plot()->xAxis->tickLabelFont()).horizontalAdvance("191");
        for (size_t i = 0; i + 1 < cols.size(); ++i) {
            QCOMPARE(cols[i], int(i) * step);
            QVERIFY2((cols[i + 1] - cols[i]) * pitch > number, qPrintable(QString::number(cols[i])));
        }
    }

    // Which cells an axis labels: all when they fit; when crowded, the kept ones first and others,
    // none touching another.
    void labelsAreThinnedAroundTheMarks()
    {
        QCOMPARE(labelledCells(10, 200, 15).size(), size_t(10));
        QVERIFY(labelledCells(0, 200, 15).empty());
        const std::vector<int> keep{3, 4, 37};
        const std::vector<int> cells = labelledCells(40, 200, 15, keep);  // 5 px a row: every third at most
        for (int k : {3, 37}) QVERIFY(std::count(cells.begin(), cells.end(), k) == 1);
        QVERIFY(std::count(cells.begin(), cells.end(), 4) == 0);  // it would touch 3's label
        QVERIFY(cells.size() < 20 && cells.size() > 8);
        for (size_t i = 0; i + 1 < cells.size(); ++i) QVERIFY2(cells[i + 1] - cells[i] >= 3, qPrintable(QString::number(cells[i])));
        QCOMPARE(cells.front(), 0);
        // numbers at round steps: 12 cells apart needed, every 20th labelled
        const std::vector<int> numbered = labelledCells(192, 400, 25, {}, true);
        QCOMPARE(numbered.size(), size_t(10));
        for (size_t i = 0; i < numbered.size(); ++i) QCOMPARE(numbered[i], int(i) * 20);
    }

    // The lookup marks' n starts at the selected head's order and then stays where it is set (it
    // does not snap back to the head's order).
    void marksOrderStaysWhereSet()
    {
        ExplorerPanel e;
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        InsidePane* left = e.left();
        auto* n = left->findChild<QSpinBox*>("marksOrder");
        QVERIFY(n);
        QVERIFY(left->shown().highlighted[size_t(left->selectedMap())]);  // a lookup head
        const int order = n->value();
        QVERIFY(order >= 1);
        QCustomPlot* plot = left->heatmap()->plot();
        const auto marks = [plot] { return plot->graph(0)->dataCount() + plot->graph(1)->dataCount(); };
        const int before = marks();
        n->setValue(order == 1 ? 5 : 1);
        QCOMPARE(n->value(), order == 1 ? 5 : 1);
        left->findChildren<QCheckBox*>().at(0)->toggle();  // restyled: the log scale
        QCOMPARE(n->value(), order == 1 ? 5 : 1);
        QVERIFY(marks() != before);
        left->selectMap(left->selectedMap());  // choosing a head again starts from its order
        QCOMPARE(n->value(), order);
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
            if (plot->graph(i)->scatterStyle().shape() == QCPScatterStyle::ssCross && plot->graph(i)->name() != "wrong answers")
                crosses += plot->graph(i)->dataCount();
        QVERIFY(crosses > 0);
    }

    // A model of another token task (MQAR) opened beside the bundled copier: the input follows to
    // an example of each pane's own task, the recurrent heads' effective attention is drawn over
    // the MQAR tokens, the answers are scored where MQAR reads filler, the marks sit only on the
    // queries, and a copy input chosen again is refused by the MQAR pane with what to do.
    void mqarModelReadsExamplesOfItsTask()
    {
        ExperimentConfig c = test::smallConfig("gated_deltanet", 20);
        c.model.headDim = 8;
        asSmallMqar(c);
        const QString file = m_dir.filePath("mqar-gdn.safetensors");
        Model::create(c).save(file);

        ExplorerPanel e;
        e.resize(1366, 700);
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        QCOMPARE(e.inputKind(), QString("copy"));
        e.right()->chooseCheckpoint(file);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e) && e.inputKind() == "task" && !e.right()->session().tokens().empty(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        InsidePane* p = e.right();
        const TaskInput& in = p->session().taskInput();
        QCOMPARE(in.task, QString("mqar"));
        QCOMPARE(in.difficulty, 6);  // the task's longest training difficulty
        QCOMPARE(p->session().tokens(), in.tokens);
        QVERIFY(in.tokens != in.example.tokens);  // MQAR reads filler where its answers are
        // the same example as the task draws it from the seed shown
        std::mt19937_64 rng(1);
        QCOMPARE(TokenTask::create(evaluationTask(c.task))->evalExample(6, rng).tokens, in.example.tokens);
        // effective attention per head (4 heads of 8 per layer), a row per token
        QCOMPARE(p->view(), QString("attention"));
        QCOMPARE(int(p->shown().maps.size()), 2 * 4);
        QCOMPARE(p->heatmap()->data().rows, int(in.tokens.size()));
        // answers counted and scored against the example, not against the filler read
        int answers = 0, right = 0;
        for (size_t t = 0; t + 1 < in.example.tokens.size(); ++t)
            if (in.example.roles[t + 1] == Role::Answer) {
                ++answers;
                right += p->session().predictions()[t] == in.example.tokens[t + 1];
            }
        QCOMPARE(answers, in.example.answers());
        QVERIFY2(p->info().contains(QString("Answers %1 of %2").arg(right).arg(answers)), qPrintable(p->info()));
        // 1-gram marks, each on a query (an answer follows) and on the token after its key's earlier occurrence
        p->selectMap(0);
        const auto& marks = p->heatmap()->marks();
        QVERIFY(!marks.empty());
        for (const auto& [query, key] : marks) {
            QCOMPARE(in.example.roles[size_t(query) + 1], Role::Answer);
            QCOMPARE(in.tokens[size_t(key) - 1], in.tokens[size_t(query)]);
        }
        // the bundled copier beside it reads a copy example of its own task at the same difficulty
        QCOMPARE(e.left()->session().taskInput().task, QString("copy"));
        QCOMPARE(e.left()->heatmap()->data().rows, 2 * 6 + 3);
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) e.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/explore-mqar.png");
        // a copy input again: the MQAR pane says what it reads instead
        e.setInputKind("copy");
        e.randomInput();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e) && p->session().tokens().empty(), 30000);
        QVERIFY2(p->session().status().contains("trained on mqar") && p->session().status().contains("example of its task"), qPrintable(p->session().status()));
        QVERIFY(!e.left()->session().tokens().empty());

        // and on the command line: an example of its task, a copy input refused by name
        const test::CliResult r = test::runCli({"inspect", "--checkpoint", file, "--length", "4", "--seed", "2", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o["heads"].toArray().size(), 2 * 4);
        std::mt19937_64 rng2(2);
        const Example four = TokenTask::create(evaluationTask(c.task))->evalExample(4, rng2);
        QCOMPARE(o["tokens"].toArray().size(), int(four.tokens.size()));
        const auto [begin, end] = scoredQueries(four);
        QCOMPARE(o["queries"].toArray(), (QJsonArray{begin, end}));
        test::expectCliError(test::runCli({"inspect", "--checkpoint", file, "--input", "abc"}), "trained on mqar");
        test::expectCliError(test::runCli({"inspect", "--checkpoint", file, "--length", "40"}), "mqar at 40");
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
        QVERIFY(e.left()->session().subject().isConstruction());
        QCOMPARE(int(e.left()->shown().maps.size()), 3 + 1);  // layer 1: n heads; layer 2: one
        QVERIFY(e.left()->shown().highlighted.back());
        QVERIFY(e.left()->shown().captions.back().contains("n-gram lookup"));

        const QString bad = m_dir.filePath("broken.safetensors");
        test::writeAll(bad, QByteArray("\x10\x00\x00\x00\x00\x00\x00\x00{not json}", 18));
        QSignalSpy failed(&e.right()->session(), &InsideSession::failed);
        e.right()->chooseCheckpoint(bad);
        QTRY_VERIFY_WITH_TIMEOUT(failed.size() == 1, 30000);
        QVERIFY2(e.right()->session().status().contains("broken.safetensors"), qPrintable(e.right()->session().status()));
        QCOMPARE(e.right()->session().subject().architecture(), QString("mamba"));  // still the bundled Mamba

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

    // A run folder in a pane (the Runs tab's Look inside): its snapshots listed, the last checkpoint
    // shown first; picking step 0 loads it off the GUI thread, its maps differ from the trained
    // model's and the head shown stays the one chosen; a checkpoint inside the run lists the same;
    // a snapshot deleted under the pane is named, and the step shown stays.
    void paneStepsThroughARunsSnapshots()
    {
        const QString run = m_dir.filePath("snapshots-run");
        ExperimentConfig c = test::smallConfig("transformer", 40);
        c.train.mechanismEvery = 10;
        Model m = Model::create(c);
        TrainControl control;
        QCOMPARE(train(m, run, control, {}).status, TrainOutcome::Status::Finished);
        const std::vector<RunSnapshot> shots = runSnapshots(run);
        QVERIFY(shots.size() >= 4);  // steps 0, 10, 20 and 40, the last
        QCOMPARE(shots.front().label(), QString("step 0"));
        QCOMPARE(shots.back().label(), QString("step 40 (last)"));

        ExplorerPanel e;
        e.resize(1366, 700);
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        InsidePane* pane = e.right();
        e.showRun(run);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e) && pane->session().subject().model().step() == 40, 30000);
        QCOMPARE(pane->snapshotBox()->count(), int(shots.size()));
        QVERIFY(pane->snapshotBox()->isVisible());
        QCOMPARE(pane->snapshotBox()->currentIndex(), int(shots.size()) - 1);
        QCOMPARE(pane->snapshotBox()->currentText(), QString("step 40 (last)"));
        const auto mapsOf = [](const InsidePane* p) {
            std::vector<float> all;
            for (const HeatmapData& d : p->shown().maps) all.insert(all.end(), d.values.begin(), d.values.end());
            return all;
        };
        const std::vector<float> trained = mapsOf(pane);
        QVERIFY(!trained.empty());
        pane->selectMap(5);  // L1 H1: stepping keeps the head shown
        pane->showSnapshot(0);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e) && pane->session().subject().model().step() == 0, 30000);
        QCOMPARE(pane->snapshotBox()->currentIndex(), 0);
        QVERIFY(mapsOf(pane) != trained);
        QCOMPARE(pane->selectedMap(), 5);
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) e.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/explore-snapshot-0.png");

        // a checkpoint inside the run: the same list, at its step
        e.left()->chooseCheckpoint(shots[1].path);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e) && e.left()->session().subject().model().step() == 10, 30000);
        QCOMPARE(e.left()->snapshotBox()->count(), int(shots.size()));
        QCOMPARE(e.left()->snapshotBox()->currentIndex(), 1);
        // a snapshot gone from under it
        QVERIFY(QFile::remove(shots[2].path));
        QSignalSpy failed(&e.left()->session(), &InsideSession::failed);
        e.left()->showSnapshot(2);
        QTRY_VERIFY_WITH_TIMEOUT(failed.size() == 1, 30000);
        QVERIFY2(e.left()->session().status().contains(QFileInfo(shots[2].path).fileName()), qPrintable(e.left()->session().status()));
        QCOMPARE(e.left()->session().subject().model().step(), 10LL);
        QCOMPARE(e.left()->snapshotBox()->currentIndex(), 1);
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
        // a large 2-D tensor: its numbered rows and columns are labelled at round steps with room
        // between them (never run together as "96102108…")
        p->openFile(QStringLiteral(PARROT_TEST_DATA "/../../resources/checkpoints/copy-mamba.safetensors"));
        QVERIFY(loaded.wait(30000));
        p->selectTensor("backbone.layers.0.mixer.in_proj.weight");
        HeatmapView* h = p->heatmap();
        QCOMPARE(h->data().rows, 384);
        QCOMPARE(h->data().cols, 96);
        qobject_cast<QTabWidget*>(h->parentWidget()->parentWidget())->setCurrentWidget(h);
        QTRY_VERIFY(h->isVisible() && h->plot()->axisRect()->width() > 100);
        h->plot()->replot();
        const auto roundAndApart = [](const std::vector<int>& cells, double pitch, int room) {
            if (cells.size() < 3) return false;
            const int step = cells[1] - cells[0];
            if (!QList<int>({1, 2, 5, 10, 20, 50, 100}).contains(step) || step * pitch < room) return false;
            for (size_t i = 0; i < cells.size(); ++i)
                if (cells[i] != int(i) * step) return false;
            return true;
        };
        const QFontMetrics fm(h->plot()->xAxis->tickLabelFont());
        QVERIFY(roundAndApart(h->labelledColumns(), h->plot()->axisRect()->width() / 96.0, fm.horizontalAdvance("90")));
        QVERIFY(roundAndApart(h->labelledRows(), h->plot()->axisRect()->height() / 384.0, fm.tightBoundingRect("380").height()));
        QVERIFY(h->labelledColumns().size() < 96 && h->labelledRows().size() < 384);
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) h->grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/inspect-heatmap.png");
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
        QSignalSpy opened(w.train(), &TrainController::checkpointOpened);
        QTest::mouseClick(evaluate, Qt::LeftButton);  // opened off the GUI thread
        QVERIFY(opened.wait(30000));
        QCOMPARE(opened.first().first().toBool(), true);
        QCOMPARE(w.train()->model().config().model.kind, QString("transformer"));
        QVERIFY(w.train()->model().config().model.parallelResidual);
        QCOMPARE(w.train()->model().config().model.positions, QString("rope"));
        QVERIFY(w.saveScreenshot(m_dir.filePath("inspect.png")));
        // "Open in explorer" shows the panes, whichever sub-tab of Explore was in front
        p->openFile(QStringLiteral(PARROT_TEST_DATA "/mamba_tiny/model-bf16.safetensors"));
        QVERIFY(loaded.wait(30000));
        w.explorer()->findChild<QTabWidget*>()->setCurrentWidget(w.explorer()->construction());
        QVERIFY(!w.explorer()->panesShown());
        QPushButton* explore = nullptr;
        for (QPushButton* b : p->findChildren<QPushButton*>()) explore = b->text() == "Open in explorer" ? b : explore;
        QVERIFY(explore && explore->isEnabled());
        QTest::mouseClick(explore, Qt::LeftButton);
        QCOMPARE(w.docks()->currentPanelName(), QString("Explore"));
        QVERIFY(w.explorer()->panesShown());
        QTRY_VERIFY_WITH_TIMEOUT(!w.explorer()->right()->busy(), 30000);
        QVERIFY2(w.explorer()->right()->session().status().contains("amba"), qPrintable(w.explorer()->right()->session().status()));
    }

    // `inspect` renders each view without a display; the bundled Transformer has lookup heads.
    // The explorer on pretrained models and a text prompt. The GPT-NeoX and Mamba
    // fixtures (made with transformers) side by side on a phone book: every head of every layer on
    // the prompt's decoded tokens, Mamba's implicit attention on the same text, predictions and
    // continuations as the real library gives them, a prompt past the context refused, text kept
    // from copy models and copy inputs from language models, and a long map zoomed and panned.
    void pretrainedModelsOnATextPrompt()
    {
        const auto neox = std::make_shared<const LanguageModel>(LanguageModel::load(fixture("neox")));
        const auto mamba = std::make_shared<const LanguageModel>(LanguageModel::load(fixture("mamba")));
        ExplorerPanel e;
        e.resize(1400, 1000);
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        e.setPretrainedModels({neox, mamba});
        e.showLanguageModels(neox, mamba, QString());  // no prompt: the paper's phone book, 10 entries
        QVERIFY(e.textInput());
        QCOMPARE(e.inputKind(), QString("phonebook"));
        QCOMPARE(e.prompt().count('\n'), 10 + 1 + 2 + 1);  // 10 entries, a blank line, 2 examples, a blank line, the query
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 60000);
        InsidePane* left = e.left();
        InsidePane* right = e.right();
        QVERIFY2(left->session().subject().readsText() && left->shown().maps.size() == 2 * 4, qPrintable(left->session().status()));  // 2 layers x 4 heads
        const std::vector<int> ids = neox->tokenizer.encode(e.prompt());
        QCOMPARE(left->session().tokens(), ids);
        QCOMPARE(left->view(), QString("attention"));
        const HeatmapData& d = left->heatmap()->data();
        QCOMPARE(d.rows, int(ids.size()));
        QCOMPARE(d.cols, int(ids.size()));
        for (size_t i = 0; i < ids.size(); ++i) {  // the decoded tokens, spaces and line breaks made visible
            QString t = neox->tokenizer.decode({ids[i]});
            if (!t.contains(QChar(0xFFFD))) QCOMPARE(d.colLabels[int(i)], t.replace(' ', QChar(0xB7)).replace('\n', QChar(0x23CE)));
        }
        QVERIFY(d.colLabels.contains(QString(QChar(0x23CE))));
        QVERIFY2(left->info().contains("copyable tokens") && left->info().contains("Greedy continuation"), qPrintable(left->info()));
        QCOMPARE(left->session().continuation(), neox->generate(e.prompt(), 16).text);
        // Mamba on the same text: its implicit attention, one map per block, its states and steps
        QVERIFY2(right->session().subject().readsText(), qPrintable(right->session().status()));
        QCOMPARE(right->view(), QString("implicit"));
        QCOMPARE(int(right->shown().maps.size()), 2);
        QCOMPARE(right->heatmap()->data().rows, int(mamba->tokenizer.encode(e.prompt()).size()));
        right->setView("delta");
        QCOMPARE(right->heatmap()->data().rows, int(right->session().tokens().size()));
        right->setView("implicit");

        // the predictions and answers are the real library's (transformers' logits and greedy ids)
        const QJsonObject refNeox = modelRef("neox", 2), refMamba = modelRef("mamba", 2);
        QCOMPARE(refNeox["prompt"].toString(), refMamba["prompt"].toString());
        e.setInputKind("text");
        e.setTextPrompt(refNeox["prompt"].toString());
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 60000);
        for (const auto& [pane, ref] : {std::pair{left, refNeox}, std::pair{right, refMamba}}) {
            std::vector<int> refIds;
            for (const auto v : ref["ids"].toArray()) refIds.push_back(v.toInt());
            QCOMPARE(pane->session().tokens(), refIds);
            QCOMPARE(pane->session().predictions().back(), argmax(ref["last_logits"].toArray()));
            QCOMPARE(pane->session().predictions().back(), ref["greedy"].toArray().first().toInt());
            std::vector<int> greedy;
            for (const auto v : ref["greedy"].toArray()) greedy.push_back(v.toInt());
            const LanguageModel& lm = *pane->session().subject().languageModel();
            QVERIFY2(lm.tokenizer.decode(greedy).startsWith(pane->session().continuation()) || pane->session().continuation().startsWith(lm.tokenizer.decode(greedy)),
                     qPrintable(pane->session().continuation()));
        }

        // past GPT-NeoX's context of 256 positions: refused, naming both lengths; Mamba has none
        QString longText;
        for (int i = 0; i < 60; ++i) longText += QString("Alice %1 went down the hole. ").arg(i);
        e.setTextPrompt(longText);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 120000);
        QVERIFY2(left->session().status().contains("at most 256") && left->session().status().contains("its context"), qPrintable(left->session().status()));
        QVERIFY(left->shown().maps.empty());
        const int T = int(right->session().tokens().size());
        QVERIFY2(T > 256 && right->heatmap()->data().rows == T, qPrintable(right->session().status()));

        // a long map zooms (Ctrl + wheel, or zoomTo) and pans; labels follow what is in view
        HeatmapView* h = right->heatmap();
        h->resetZoom();
        QApplication::processEvents();
        const auto inView = [](const std::vector<int>& cells, int lo, int hi) {
            return int(std::count_if(cells.begin(), cells.end(), [&](int c) { return c >= lo && c <= hi; }));
        };
        const int before = inView(h->labelledRows(), T - 20, T - 1);
        QVERIFY(!h->zoomed());
        h->zoomTo(T - 20, T - 1, T - 40, T - 1);
        QVERIFY(h->zoomed());
        const std::vector<int> rows = h->labelledRows();
        QVERIFY(!rows.empty());
        QCOMPARE(inView(rows, T - 20, T - 1), int(rows.size()));  // only what is in view
        QVERIFY2(int(rows.size()) > before, qPrintable(QString("%1 vs %2").arg(rows.size()).arg(before)));
        h->zoomTo(-100, 5, 0, 3);  // out of the map: kept inside, at least a few cells
        QVERIFY(h->plot()->yAxis->range().lower >= -0.5 && h->plot()->xAxis->range().size() >= 3.9);
        h->resetZoom();
        QVERIFY(!h->zoomed());
        const QPoint centre = h->plot()->axisRect()->rect().center();
        QWheelEvent plain(centre, h->plot()->mapToGlobal(centre), {}, {0, 120}, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(h->plot(), &plain);
        QVERIFY(!h->zoomed());  // the wheel alone scrolls the pane
        QWheelEvent ctrl(centre, h->plot()->mapToGlobal(centre), {}, {0, 120}, Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(h->plot(), &ctrl);
        QVERIFY(h->zoomed());

        // kinds of input kept apart: copy letters for the language models, text for a copy model
        e.setInputText("abcab");
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        QVERIFY2(left->session().status().contains("reads text"), qPrintable(left->session().status()));
        left->chooseBundled("hard-alibi");
        e.setTextPrompt("Alice was beginning");
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        QVERIFY2(left->session().status().contains("reads copy inputs"), qPrintable(left->session().status()));
        QVERIFY(right->session().status().contains("Mamba"));  // the language model reads it
        QVERIFY(!right->shown().maps.empty());
        // the Pretrained tab's models are in the source list; one removed leaves it
        e.setPretrainedModels({mamba});
        int entries = 0;
        auto* source = left->findChild<QComboBox*>("source");
        for (int i = 0; i < source->count(); ++i) entries += source->itemData(i).toString().startsWith("lm:");
        QCOMPARE(entries, 1);
    }

    // Many heads (a pretrained model's 144): small thumbnails without captions, a row per layer
    // headed by its label, and a pane of a laptop's half-screen width holds each row whole.
    void manyHeadsFitAHalfScreenPane()
    {
        ExperimentConfig c = test::tinyConfig();
        c.model.layers = 3;
        c.model.heads = 12;
        c.model.dModel = 48;
        const Model m = Model::create(c);
        ExplorerPanel e;
        e.resize(1000, 900);  // a pane of about 480 px
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        e.setCurrentModelProvider([m] { return m; });
        e.left()->chooseCurrentModel();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e) && e.left()->shown().maps.size() == 36, 30000);
        const std::vector<QToolButton*>& thumbs = e.left()->thumbnails()->buttons();
        QCOMPARE(int(thumbs.size()), 36);
        for (QToolButton* b : thumbs) {
            QCOMPARE(b->toolButtonStyle(), Qt::ToolButtonIconOnly);
            QVERIFY(b->toolTip().startsWith("L"));  // "L2 H11" and its label
        }
        QStringList rows;
        for (QLabel* l : e.left()->findChildren<QLabel*>())
            if (QRegularExpression("^L\\d+$").match(l->text()).hasMatch()) rows << l->text();
        rows.sort();
        QCOMPARE(rows, (QStringList{"L0", "L1", "L2"}));
        auto* views = e.left()->findChild<QScrollArea*>("views");
        QApplication::processEvents();
        QVERIFY2(!views->horizontalScrollBar()->isVisible(), qPrintable(QString("pane %1 px").arg(views->width())));
    }

    // `inspect --model DIR`: the heads of a pretrained model on a text prompt, with what it
    // predicts where a lookup could copy and its greedy answer; Mamba's implicit attention drawn.
    void inspectPretrainedOnText()
    {
        const LanguageModel neox = LanguageModel::load(fixture("neox"));
        auto r = test::runCli({"inspect", "--model", fixture("neox"), "--lm-test", "phonebook", "--length", "6", "--seed", "2", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o["heads"].toArray().size(), 2 * 4);
        const QJsonArray labels = o["tokens"].toArray();
        QCOMPARE(o["queries"].toArray().at(0).toInt(), 1);
        QCOMPARE(o["queries"].toArray().at(1).toInt(), labels.size());
        const QJsonObject answer = o["answer"].toObject();
        QVERIFY(answer["copyable_tokens"].toInt() > 0);  // the two example lines repeat the book's
        QVERIFY(answer["expected"].toString().size() == 10);
        // the same prompt the zero-shot test makes, and the same answer the model gives
        std::mt19937_64 rng(2);
        const LmPrompt p = makeLmPrompt("phonebook", 6, neox.tokenizer, rng);
        QCOMPARE(labels.size(), int(p.ids.size()));
        QCOMPARE(answer["continuation"].toString(), neox.generate(neox.tokenizer.decode(p.ids), 16).text);
        const QString png = m_dir.filePath("mamba-text.png");
        r = test::runCli({"inspect", "--model", fixture("mamba"), "--prompt", "Alice was beginning to get very tired of sitting",
                          "--figure", "attention", "--out", png});
        QVERIFY2(r.code == 0 && r.out.contains("implicit attention"), qPrintable(r.out + r.err));
        QVERIFY(!QImage(png).isNull());
        test::expectCliError(test::runCli({"inspect", "--model", fixture("neox")}), "--prompt");
        test::expectCliError(test::runCli({"inspect", "--bundled", "mamba", "--prompt", "hi"}), "--model DIR");
        test::expectCliError(test::runCli({"inspect", "--model", fixture("neox"), "--lm-test", "phone"}), "phonebook");
        test::expectCliError(test::runCli({"inspect", "--model", m_dir.filePath("nowhere"), "--prompt", "hi"}), "nowhere");
    }

    // inspect --ablate: the heads the bundled Hard-ALiBi model labels as lookup heads are the
    // ones copying needs. Off together, its answers fall from most to few; the same number of
    // its other second-layer heads off cost far less. Bad heads and models without heads are refused.
    void inspectAblatesTheLookupHeads()
    {
        const auto plain = test::runCli({"inspect", "--bundled", "hard-alibi", "--length", "20", "--seed", "3", "--json"});
        QVERIFY2(plain.code == 0, qPrintable(plain.err));
        QStringList lookup, other;
        for (const auto& v : QJsonDocument::fromJson(plain.out.toUtf8()).object()["heads"].toArray()) {
            const QJsonObject h = v.toObject();
            const QString name = QString("%1.%2").arg(h["layer"].toInt()).arg(h["head"].toInt());
            if (h["label"].toString().startsWith("n-gram lookup")) lookup << name;
            else if (h["layer"].toInt() == 1) other << name;
        }
        QVERIFY2(lookup.size() >= 2 && other.size() >= lookup.size(), qPrintable(plain.out));
        const auto ablate = [](const QStringList& heads) {
            const auto r = test::runCli({"inspect", "--bundled", "hard-alibi", "--length", "20", "--seed", "3", "--ablate", heads.join(','), "--json"});
            return QJsonDocument::fromJson(r.out.toUtf8()).object();
        };
        const QJsonObject noLookup = ablate(lookup), noOther = ablate(other.mid(0, int(lookup.size())));
        QCOMPARE(noLookup["answers"].toInt(), 20);
        QVERIFY2(noLookup["right"].toInt() >= 15 && noLookup["right_ablated"].toInt() <= 8, qPrintable(QJsonDocument(noLookup).toJson()));
        QVERIFY2(noOther["right_ablated"].toInt() >= noLookup["right_ablated"].toInt() + 6, qPrintable(QJsonDocument(noOther).toJson()));
        QCOMPARE(noLookup["ablation"].toObject()["method"].toString(), QString("zero"));
        const auto text = test::runCli({"inspect", "--bundled", "hard-alibi", "--length", "20", "--seed", "3", "--ablate", lookup.join(','), "--ablation", "mean"});
        QVERIFY2(text.code == 0 && text.out.contains("replaced by their means over the input") && text.out.contains("✗"), qPrintable(text.out + text.err));
        test::expectCliError(test::runCli({"inspect", "--bundled", "hard-alibi", "--ablate", "9.9"}), "no head 9.9");
        test::expectCliError(test::runCli({"inspect", "--bundled", "mamba", "--ablate", "0.0"}), "no heads of its own");
        test::expectCliError(test::runCli({"inspect", "--bundled", "hard-alibi", "--ablate", "one"}), "LAYER.HEAD");
        test::expectCliError(test::runCli({"inspect", "--construction", "3", "--ablate", "2.0"}), "no head 2.0");
        // the construction without its lookup head copies nothing
        const auto construction = test::runCli({"inspect", "--construction", "3", "--length", "30", "--ablate", "1.0", "--json"});
        QVERIFY2(construction.code == 0, qPrintable(construction.err));
        const QJsonObject c = QJsonDocument::fromJson(construction.out.toUtf8()).object();
        QVERIFY2(c["right"].toInt() >= 28 && c["right_ablated"].toInt() == 0, qPrintable(construction.out));
    }

    // Each head alone switched off over many examples: on the bundled Hard-ALiBi model the layer-2
    // head whose removal costs most is one labelled lookup; the table is sorted, deterministic, and
    // drawn; a Mamba's heads cannot be ablated.
    void inspectHeadImportance()
    {
        const QStringList args{"inspect", "--bundled", "hard-alibi", "--head-importance", "--samples", "100", "--seed", "2", "--json"};
        const auto r = test::runCli(args);
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(o["layers"].toInt() * o["heads"].toInt(), 16);
        const QJsonArray rows = o["rows"].toArray();
        QCOMPARE(rows.size(), 16);
        QVERIFY2(o["answer_accuracy"].toDouble() > 0.85, qPrintable(r.out));
        double previous = 2;
        QJsonObject topOfLayer1;
        for (const auto& v : rows) {
            const QJsonObject h = v.toObject();
            QVERIFY(h["answer_drop"].toDouble() <= previous);
            previous = h["answer_drop"].toDouble();
            QVERIFY(h["answer_drop_stderr"].toDouble() > 0);
            if (h["layer"].toInt() == 1 && topOfLayer1.isEmpty()) topOfLayer1 = h;
        }
        QVERIFY2(topOfLayer1["label"].toString().startsWith("n-gram lookup") && topOfLayer1["answer_drop"].toDouble() > 0.1,
                 qPrintable(QJsonDocument(topOfLayer1).toJson()));
        QCOMPARE(test::runCli(args).out, r.out);  // the same examples under the same seed
        const QString png = m_dir.filePath("importance.png"), csv = m_dir.filePath("importance.csv");
        auto drawn = test::runCli({"inspect", "--bundled", "hard-alibi", "--head-importance", "--samples", "20", "--out", png, "--size", "600x400"});
        QVERIFY2(drawn.code == 0 && drawn.out.contains("answer drop") && QImage(png).width() > 1000, qPrintable(drawn.out + drawn.err));
        drawn = test::runCli({"inspect", "--bundled", "hard-alibi", "--head-importance", "--samples", "20", "--ablation", "mean", "--out", csv});
        QVERIFY2(drawn.code == 0, qPrintable(drawn.err));
        QCOMPARE(QString::fromUtf8(test::readAll(csv)).count('\n'), 17);
        // a pretrained model, on the phone book by default
        const auto lm = test::runCli({"inspect", "--model", fixture("neox"), "--head-importance", "--samples", "2", "--length", "4", "--json"});
        QVERIFY2(lm.code == 0, qPrintable(lm.err));
        const QJsonObject lo = QJsonDocument::fromJson(lm.out.toUtf8()).object();
        QCOMPARE(lo["task"].toString(), lmTests().front().id);
        QCOMPARE(lo["rows"].toArray().size(), lo["layers"].toInt() * lo["heads"].toInt());
        test::expectCliError(test::runCli({"inspect", "--model", fixture("mamba"), "--head-importance"}), "no heads of its own");
        test::expectCliError(test::runCli({"inspect", "--bundled", "mamba", "--head-importance"}), "no heads of its own");
        test::expectCliError(test::runCli({"inspect", "--bundled", "hard-alibi", "--head-importance", "--task", "linear_regression"}), "token tasks");
        test::expectCliError(test::runCli({"inspect", "--bundled", "hard-alibi", "--head-importance", "--task", "text_copy"}), "vocabulary");
    }

    // The bundled Mamba's state quantised: whole and 16-bit copy what it was trained on, 1 bit
    // does not, and every setting's bound lies far beyond where copying fails.
    void inspectStateSweep()
    {
        const auto r = test::runCli({"inspect", "--bundled", "mamba", "--state-sweep", "bits", "--values", "16,1", "--lengths", "4,8",
                                     "--samples", "50", "--json"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QJsonArray points = QJsonDocument::fromJson(r.out.toUtf8()).object()["points"].toArray();
        QCOMPARE(points.size(), 3);
        const auto accuracyAt8 = [&](int i) { return points[i].toObject()["answer_accuracy"].toArray()[1].toDouble(); };
        QVERIFY2(accuracyAt8(0) > 0.9 && accuracyAt8(1) > 0.9 && accuracyAt8(2) < 0.5, qPrintable(r.out));
        for (const auto& p : points) QVERIFY(p.toObject()["bound_length"].toDouble() > 1000);
        QVERIFY(points[2].toObject()["state_bits"].toDouble() < points[1].toObject()["state_bits"].toDouble());
        const QString png = m_dir.filePath("sweep.png");
        const auto drawn = test::runCli({"inspect", "--bundled", "mamba", "--state-sweep", "dims", "--lengths", "4,8", "--samples", "20",
                                         "--out", png, "--size", "600x400"});
        QVERIFY2(drawn.code == 0 && drawn.out.contains("d_state 1 of") && QImage(png).width() > 1000, qPrintable(drawn.out + drawn.err));
        test::expectCliError(test::runCli({"inspect", "--bundled", "hard-alibi", "--state-sweep", "dims", "--json"}), "no state-space layers");
        test::expectCliError(test::runCli({"inspect", "--bundled", "mamba", "--state-sweep", "dims", "--values", "99", "--json"}), "state dimensions");
        test::expectCliError(test::runCli({"inspect", "--bundled", "mamba", "--state-sweep", "volume", "--json"}), "dims, channels or bits");
        test::expectCliError(test::runCli({"inspect", "--bundled", "mamba", "--state-sweep", "bits"}), "--out FILE");
    }

    // In the window: the lookup heads the pane outlines are switched off by clicking their
    // thumbnails, and the copy breaks (more ✗ rows, fewer letters copied, said beside the
    // every-head count); Reset restores it. The weights are never changed.
    void lookupHeadsSwitchedOffInThePane()
    {
        MainWindow w;  // a laptop's screen
        w.resize(1366, 768);
        w.docks()->showTab(Tab::Explore);
        w.show();
        ExplorerPanel& e = *w.explorer();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        e.setInputText("qwertyuiopasdfghjklz");
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        InsidePane* pane = e.left();
        QVERIFY(pane->importanceButton()->isVisible() && pane->ablateModeButton()->isVisible());
        QVERIFY(!pane->sweepButton()->isVisible());      // a Transformer has no state to shrink
        QVERIFY(e.right()->sweepButton()->isVisible());   // the Mamba has
        QVERIFY(!e.right()->ablateModeButton()->isVisible());
        const int copied = [&] {
            const CopyScore sc = scoreCopy(pane->session().tokens(), pane->session().predictions());
            return sc.right;
        }();
        QVERIFY2(copied >= 17, qPrintable(pane->info()));
        const std::vector<float> before = pane->session().subject().model().logits(pane->session().tokens(), 1, int(pane->session().tokens().size()));
        pane->ablateModeButton()->setChecked(true);
        const InsideView view = pane->shown();
        int switched = 0;
        for (size_t i = 0; i < view.maps.size(); ++i) {
            if (!view.highlighted[i]) continue;
            QCOMPARE(pane->thumbnails()->buttons().size(), view.maps.size());
            QTest::mouseClick(pane->thumbnails()->buttons()[i], Qt::LeftButton);
            QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
            ++switched;
        }
        QVERIFY(switched >= 2);
        QCOMPARE(int(pane->session().ablation().heads.size()), switched);
        const CopyScore after = scoreCopy(pane->session().tokens(), pane->session().predictions());
        QVERIFY2(after.right <= copied - 8, qPrintable(pane->info()));
        QCOMPARE(pane->session().plainScore().right, copied);
        QVERIFY2(pane->info().contains("With heads") && pane->info().contains(QString("with every head: %1 of 20").arg(copied)), qPrintable(pane->info()));
        QVERIFY(int(pane->heatmap()->data().markedRows.size()) >= 20 - after.right - 1);
        QVERIFY(pane->session().status().contains("zeroed"));
        QVERIFY(pane->session().subject().model().logits(pane->session().tokens(), 1, int(pane->session().tokens().size())) == before);  // weights untouched
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) {
            w.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/explore-heads-off-1366.png");
            w.resize(1920, 1080);
            QTest::qWait(200);
            w.grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/explore-heads-off-1920.png");
        }
        // the mean over the input instead of zero, then every head back
        pane->setAblationMethod(HeadAblation::Method::Mean);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        QVERIFY2(pane->session().status().contains("mean"), qPrintable(pane->session().status()));
        QVERIFY(pane->resetHeadsButton()->isEnabled());
        QTest::mouseClick(pane->resetHeadsButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        QVERIFY(pane->session().ablation().isEmpty());
        QCOMPARE(scoreCopy(pane->session().tokens(), pane->session().predictions()).right, copied);
        QVERIFY(!pane->info().contains("With heads"));
        // a head the subject lacks is refused with the reason, nothing switched
        QSignalSpy failed(&pane->session(), &InsideSession::failed);
        pane->setHeadOff(7, 0, true);
        QCOMPARE(failed.size(), 1);
        QVERIFY(pane->session().ablation().isEmpty());
    }

    // The dialogs run off the GUI thread, show progress, stop with what they have, and draw.
    void causalDialogsRunAndStop()
    {
        ExplorerPanel e;
        e.resize(1400, 1000);
        e.show();
        QTRY_VERIFY_WITH_TIMEOUT(idle(e), 30000);
        HeadImportanceDialog* hi = e.left()->openHeadImportance();
        QVERIFY(hi);
        hi->show();
        hi->samplesBox()->setValue(50);
        QSignalSpy measured(hi, &CausalDialog::measured);
        QTest::mouseClick(hi->runButton(), Qt::LeftButton);
        QVERIFY(hi->busy() && hi->stopButton()->isEnabled() && !hi->runButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(measured.size() == 1, 60000);
        QCOMPARE(hi->table()->rowCount(), 16);
        QVERIFY(hi->result().complete);
        QVERIFY2(hi->status().contains("Full model"), qPrintable(hi->status()));
        QVERIFY(hi->plot()->plottableCount() >= 1);
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) hi->grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/head-importance-dialog.png");
        const QString csv = m_dir.filePath("dialog-importance.csv");
        hi->save(csv);
        QCOMPARE(QString::fromUtf8(test::readAll(csv)).count('\n'), 17);
        // Stop: a long run ends early with the heads measured so far
        hi->samplesBox()->setValue(20000);
        QTest::mouseClick(hi->runButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(hi->progressBar()->maximum() > 1 && hi->progressBar()->value() >= 1, 60000);
        QTest::mouseClick(hi->stopButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(measured.size() == 2, 60000);
        QVERIFY2(!hi->result().complete && hi->result().rows.size() < 16, qPrintable(hi->status()));
        QVERIFY(hi->status().contains("Stopped"));
        hi->close();

        StateSweepDialog* sw = e.right()->openStateSweep();
        QVERIFY(sw);
        QVERIFY(!e.left()->openStateSweep());
        sw->show();
        sw->modeBox()->setCurrentIndex(sw->modeBox()->findData("bits"));
        sw->lengthsEdit()->setText("4,8");
        sw->samplesBox()->setValue(30);
        QSignalSpy swept(sw, &CausalDialog::measured);
        QTest::mouseClick(sw->runButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(swept.size() == 1, 60000);
        QCOMPARE(int(sw->result().points.size()), 6);  // the whole state and 16, 8, 4, 2, 1 bits
        QCOMPARE(sw->table()->rowCount(), 6);
        if (qEnvironmentVariableIsSet("PARROT_SHOT_DIR")) sw->grab().save(qEnvironmentVariable("PARROT_SHOT_DIR") + "/state-sweep-dialog.png");
        QVERIFY(sw->result().points.back().curve.stringAccuracy.back() < sw->result().points.front().curve.stringAccuracy.back());
        sw->lengthsEdit()->setText("four");
        QTest::mouseClick(sw->runButton(), Qt::LeftButton);
        QTRY_VERIFY(swept.size() == 2);
        QVERIFY2(sw->status().contains("four"), qPrintable(sw->status()));
        sw->close();
    }

    // The one choice between a task example and a copy input: InsideSubject's lookupQueries and
    // score read the example given (its queries, its answers), else the tokens as a copy input.
    void subjectChoosesTaskOrCopyQueries()
    {
        ExperimentConfig c = test::tinyConfig();
        asSmallMqar(c);
        const InsideSubject mqar(Model::create(c), "mqar");
        const TaskInput in = mqar.taskInput(4, 2);
        QCOMPARE(mqar.lookupQueries(in.tokens, &in), scoredQueries(in.example));
        const CopyScore none = mqar.score(in.tokens, std::vector<int>(in.tokens.size(), -1), &in);
        QCOMPARE(none.answers, in.example.answers());
        QCOMPARE(none.right, 0);
        QCOMPARE(mqar.score(in.tokens, in.example.tokens, &in).answers, in.example.answers());

        const InsideSubject construction(ConstructionOptions{3, 26});
        const std::vector<int> copy = randomCopyInput(6, 26, 1);
        QCOMPARE(construction.lookupQueries(copy, nullptr), copyQueries(copy, CopyVocab::Sep));
        const CopyScore copied = construction.score(copy, construction.predictions(copy), nullptr);
        QCOMPARE(copied.answers, 6);  // the second copy's letters
        QCOMPARE(copied.right, scoreCopy(copy, construction.predictions(copy)).right);
    }

    // InsideSession without a pane: the construction opened with no input yet, then probed on a
    // copy input, its heads analysed and its answers scored; a head it does not have and letters
    // outside its alphabet are refused with what is wrong.
    void sessionProbesWithoutAPane()
    {
        InsideSession s;
        QSignalSpy refreshed(&s, &InsideSession::refreshed);
        s.openConstruction(3, 26);
        QVERIFY(refreshed.wait(30000));
        QCOMPARE(s.status(), QString("No input yet."));
        QVERIFY(s.subject().isConstruction() && s.tokens().empty() && !s.analysis());
        const std::vector<int> copy = randomCopyInput(12, 26, 4);
        s.setInput(copy);
        QVERIFY(s.busy());
        QTRY_VERIFY_WITH_TIMEOUT(!s.busy(), 30000);
        QCOMPARE(s.tokens(), copy);
        QCOMPARE(s.status(), s.subject().summary());
        QVERIFY(s.queries() && s.analysis());
        QCOMPARE(*s.queries(), copyQueries(copy, CopyVocab::Sep));
        QCOMPARE(int(s.analysis()->heads.size()), 2 * 3);
        QVERIFY(s.scored());
        QCOMPARE(s.score().answers, 12);
        QCOMPARE(s.score().right, scoreCopy(copy, s.subject().predictions(copy)).right);
        QVERIFY(!s.shownTask());

        QSignalSpy failed(&s, &InsideSession::failed);
        QVERIFY(!s.setHeadOff(2, 0, true));
        QCOMPARE(failed.size(), 1);
        QVERIFY2(s.status().contains("no head 2.0"), qPrintable(s.status()));
        QVERIFY(s.ablation().isEmpty());
        s.setInput(copyInput("abcXYZ", 52));
        QVERIFY(failed.wait(30000));
        QVERIFY2(s.status().contains("outside this model's alphabet of 26"), qPrintable(s.status()));
        QVERIFY(s.tokens().empty() && !s.analysis() && !s.scored());
    }

    // The line under a pane's map, worded without a pane: a head's scores at its best order, a
    // task's answers, the every-head score while heads are off, a continuation on one line.
    void infoLinesWordWhatIsShown()
    {
        HeadLookup h;
        h.label = "n-gram lookup (n = 2)";
        h.scored[1] = h.scored[2] = 10;
        h.lookup[1] = 0.5;
        h.lookup[2] = 0.9;
        h.match[2] = 0.25;
        LookupAnalysis an;
        an.ambiguous[2] = 3;
        InsideInfo i = headInfo(h, an);
        QCOMPARE(i.brief, QStringList{"n-gram lookup (n = 2) — lookup 0.90, match 0.25 at n = 2; previous-token 0.00"});
        QVERIFY2(i.whole.contains("<tr><td>lookup</td><td>0.50</td><td>0.90</td><td>–</td>"), qPrintable(i.whole));
        QVERIFY2(i.whole.contains("<tr><td>ambiguous queries</td><td>0</td><td>3</td>"), qPrintable(i.whole));

        CopyScore score;
        score.right = 3;
        score.answers = 5;
        AnswersShown a;
        a.task = "mqar";
        a.score = &score;
        i = withAnswers(viewInfo("state"), a);
        QVERIFY2(i.whole.endsWith("<br>Answers 3 of 5 of this mqar example's answer tokens (rows marked ✗ are wrong)."), qPrintable(i.whole));
        QCOMPARE(i.brief, (QStringList{viewInfo("state").whole, "Answers 3 of 5"}));
        a.task.clear();
        a.ablation = "heads 0.1 off (zeroed)";
        a.plainScore.right = a.plainScore.answers = 5;
        i = withAnswers(viewInfo("attention"), a);
        QCOMPARE(i.brief, QStringList{"Copies 3 of 5 letters with heads 0.1 off (zeroed); with every head: 5"});
        QVERIFY2(i.whole.contains("<b>With heads 0.1 off (zeroed)</b>; with every head: 5 of 5."), qPrintable(i.whole));

        AnswersShown lm;
        lm.readsText = true;
        lm.tokens = 7;
        lm.continuation = "a<b\nc";
        i = withAnswers(viewInfo("attention"), lm);
        QCOMPARE(i.brief, QStringList{"continues: a<b⏎c"});
        QCOMPARE(i.whole, QString("<br>7 tokens. Greedy continuation: <b>a&lt;b⏎c</b>"));
        QCOMPARE(noMapInfo(false).whole, QString());
        QCOMPARE(noMapInfo(true).whole, QString("Nothing to show in this view."));
    }

    // The thumbnails without a pane: one per map, captioned in a grid, uncaptioned when a short
    // pane flows them; a switched-off head says so in its tooltip; a click names its map.
    void thumbnailGridLaysOutAndReportsClicks()
    {
        InsideView v;
        v.view = "state";
        for (int i = 0; i < 3; ++i) {
            HeatmapData d;
            d.rows = d.cols = 2;
            d.values = {0, 1, 2, 3};
            v.maps.push_back(d);
            v.captions.push_back(QString("block %1").arg(i));
            v.layers.push_back(i);
            v.heads.push_back(0);
            v.blocks.push_back(i);
            v.highlighted.push_back(i == 1);
        }
        ThumbnailGrid g;
        g.build(v, false, 0);
        g.paint(v, HeatmapStyle{}, {false, true, false}, "\nswitched off");
        QCOMPARE(g.buttons().size(), size_t(3));
        QCOMPARE(g.buttons()[0]->toolButtonStyle(), Qt::ToolButtonTextUnderIcon);
        QCOMPARE(g.buttons()[0]->text(), QString("block 0"));
        QCOMPARE(g.buttons()[1]->toolTip(), QString("block 1\nswitched off"));
        QCOMPARE(g.buttons()[2]->toolTip(), QString("block 2"));
        QSignalSpy clicked(&g, &ThumbnailGrid::clicked);
        g.buttons()[2]->click();
        QCOMPARE(clicked.size(), 1);
        QCOMPARE(clicked.front().at(0).toInt(), 2);
        g.setSelected(2);
        QVERIFY(g.buttons()[2]->isChecked() && !g.buttons()[0]->isChecked());
        g.build(v, true, 300);
        QCOMPARE(g.buttons().size(), size_t(3));
        QCOMPARE(g.buttons()[0]->toolButtonStyle(), Qt::ToolButtonIconOnly);
    }

    // `inspect --figure`'s drawing reads a look computed before it (lookInside) and runs no model:
    // the construction's lookup head drawn from it, a view it does not have refused.
    void renderInsideDrawsTheLookItIsHanded()
    {
        const InsideSubject construction(ConstructionOptions{3, 26});
        const std::vector<int> copy = randomCopyInput(8, 26, 2);
        const InsideLook look = lookInside(construction, copy);
        QVERIFY(look.analysis && !look.task);
        QCOMPARE(look.queries, copyQueries(copy, CopyVocab::Sep));
        QCOMPARE(look.score.answers, 8);
        const QString csv = m_dir.filePath("look.csv");
        const QString drawn = renderInside(look, InsideFigureRequest{}, csv);
        QVERIFY2(drawn.startsWith(construction.name() + ": ") && drawn.contains("n-gram lookup"), qPrintable(drawn));
        QCOMPARE(QString::fromUtf8(test::readAll(csv)).split('\n', Qt::SkipEmptyParts).size(), 1 + int(copy.size()));
        InsideFigureRequest state;
        state.figure = "state";
        QVERIFY_THROWS_EXCEPTION(Error, renderInside(look, state, csv));
    }

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
