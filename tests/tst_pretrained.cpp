// The window's Pretrained tab on the tiny HuggingFace folders: folders load one after the other
// off the GUI thread, a broken one says why and keeps what was loaded, the prompt box shows the
// reference continuation, and a zero-shot run draws one curve per model and can be stopped.
#include "base/weightdtype.h"
#include "core/eval/lmtests.h"
#include "core/text/languagemodel.h"
#include "figures/export.h"
#include "ui/common/appsettings.h"
#include "ui/panels/explorerpanel.h"
#include "ui/panels/pretrainedpanel.h"
#include "ui/window/mainwindow.h"
#include "qcustomplot.h"
#include "testutil.h"

#include <QApplication>
#include <QSettings>
#include <QTest>
#include <QComboBox>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>

using namespace parrot;

namespace {
QString fixture(const QString& name) { return QString(PARROT_TEST_DATA) + "/hf_tiny/" + name; }
}

class TestPretrained : public QObject {
    Q_OBJECT

private slots:
    // Preferences' Pretrained weights: auto and the three dtypes, applied on OK to the models opened
    // after it, kept for the next start (AppSettings), and a word the settings file should not
    // hold falls back to auto.
    void preferencesChooseTheWeightDtype()
    {
        MainWindow w;
        w.show();
        QDialog* dialog = w.showPreferences();
        QVERIFY(QTest::qWaitForWindowExposed(dialog));
        auto* dtype = dialog->findChild<QComboBox*>("weightDtype");
        QVERIFY(dtype);
        QCOMPARE(dtype->count(), 4);
        QCOMPARE(dtype->currentData().toString(), QString("auto"));
        dtype->setCurrentIndex(dtype->findData("bfloat16"));
        dialog->accept();
        QCOMPARE(weightDtypeChoice(), WeightDtype::BFloat16);
        QCOMPARE(AppSettings::load().weightDtype, QString("bfloat16"));
        const LanguageModel lm = LanguageModel::load(QString(PARROT_TEST_DATA) + "/hf_tiny/neox");
        QCOMPARE(lm.model.weightDtype(), QString("bfloat16"));
        QSettings().setValue("weightDtype", "float8");
        QCOMPARE(AppSettings::load().weightDtype, QString("auto"));
        setWeightDtypeChoice(WeightDtype::Auto);
        QSettings().remove("weightDtype");
    }


    void loadsGeneratesAndRuns()
    {
        PretrainedPanel panel;
        panel.resize(1200, 700);
        panel.show();
        QSignalSpy loaded(&panel, &PretrainedPanel::modelsChanged), failed(&panel, &PretrainedPanel::failed);
        panel.addFolder(fixture("neox"));
        panel.addFolder(fixture("mamba"));  // queued behind the first, not replacing it
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, 60000);
        QCOMPARE(panel.modelCount(), 2);
        QCOMPARE(panel.model(0).architecture, QString("GPT-NeoX"));
        QCOMPARE(panel.model(1).architecture, QString("Mamba"));

        QTemporaryDir tmp;
        panel.addFolder(tmp.path());  // no config.json: an error in the tab, the two models stay
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
        QVERIFY2(panel.status().contains("no config.json"), qPrintable(panel.status()));
        QCOMPARE(panel.modelCount(), 2);
        QTRY_VERIFY(!panel.busy());

        // the selected model (the last loaded: Mamba) continues the reference prompt as transformers did
        const QJsonObject ref = QJsonDocument::fromJson(test::readAll(fixture("model_refs.json"))).object()["mamba"].toArray()[0].toObject();
        std::vector<int> greedy;
        for (const QJsonValue v : ref["greedy"].toArray()) greedy.push_back(v.toInt());
        panel.promptBox()->setPlainText(ref["prompt"].toString());
        QSignalSpy generated(&panel, &PretrainedPanel::generated);
        panel.newTokensBox()->setValue(int(greedy.size()));
        panel.generate();
        QTRY_COMPARE_WITH_TIMEOUT(generated.count(), 1, 60000);
        QCOMPARE(panel.outputBox()->toPlainText(), ref["prompt"].toString() + panel.model(1).tokenizer.decode(greedy, true));

        // a zero-shot run: one curve per model, a point per size
        panel.testBox()->setCurrentIndex(panel.testBox()->findData("copy-text"));
        QCOMPARE(panel.sizesBox()->text(), findLmTest("copy-text")->defaultSizes);
        panel.sizesBox()->setText("4,8");
        panel.samplesBox()->setValue(2);
        QSignalSpy finished(&panel, &PretrainedPanel::testFinished);
        panel.runTest();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 120000);
        QCOMPARE(panel.results().size(), size_t(2));
        QCOMPARE(panel.plot()->graphCount(), 2);
        QCOMPARE(panel.plot()->graph(1)->name(), QString("mamba"));
        QCOMPARE(panel.plot()->graph(0)->dataCount(), 2);
        QVERIFY(panel.plot()->legend->brush().color().lightness() > 128);  // light theme: a light legend box

        // in the dark theme a new result is drawn dark too: light text on a dark legend box
        setDarkPlots(true);
        panel.runTest();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 120000);
        QVERIFY(panel.plot()->legend->brush().color().lightness() < 128);
        QVERIFY(panel.plot()->legend->item(0)->textColor().lightness() > 128);
        setDarkPlots(false);

        // a bad sizes field is refused in the tab
        panel.sizesBox()->setText("4,x");
        panel.runTest();
        QVERIFY2(panel.status().contains("sizes"), qPrintable(panel.status()));

        // Stop: what finished is drawn, the rest is not
        panel.sizesBox()->setText("4,8,16,32");
        panel.samplesBox()->setValue(50);
        panel.runTest();
        QTest::qWait(300);
        panel.stop();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 3, 120000);
        QVERIFY(panel.results().size() <= 2);
        QVERIFY(panel.results().empty() || panel.results().front().curve.lengths.size() < 4);
        QVERIFY(panel.status().startsWith("Stopped"));
    }

    // The models the HuggingFace cache holds are offered beside Add folder, one click to load.
    void offersTheCachedModels()
    {
        QTemporaryDir tmp;
        test::addToHubCache(tmp.filePath("hub"), "EleutherAI/tiny-neox", fixture("neox"), "feed");
        qputenv("HF_HUB_CACHE", tmp.filePath("hub").toUtf8());
        PretrainedPanel panel;
        qunsetenv("HF_HUB_CACHE");
        QSignalSpy scanned(&panel, &PretrainedPanel::cacheScanned), loaded(&panel, &PretrainedPanel::modelsChanged);
        QTRY_COMPARE_WITH_TIMEOUT(scanned.count(), 1, 30000);
        QCOMPARE(panel.cachedBox()->count(), 1);
        QVERIFY2(panel.cachedBox()->itemText(0).startsWith("EleutherAI/tiny-neox · GPT-NeoX · "), qPrintable(panel.cachedBox()->itemText(0)));
        QVERIFY(panel.cachedBox()->itemText(0).contains("M parameters"));
        panel.findChild<QPushButton*>("loadCached")->click();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
        QCOMPARE(panel.model(0).name, QString("tiny-neox"));
        // an empty cache says so
        qputenv("HF_HUB_CACHE", tmp.filePath("empty").toUtf8());
        panel.scanCache();
        qunsetenv("HF_HUB_CACHE");
        QTRY_COMPARE_WITH_TIMEOUT(scanned.count(), 2, 30000);
        QVERIFY(panel.cachedBox()->itemText(0).startsWith("no GPT-NeoX or Mamba model in"));
        QVERIFY(!panel.cachedBox()->isEnabled());
    }

    // Question answering in the tab (the bundled set, or a file), then each model's perplexity
    // against its F1 at the largest bucket both reached.
    void questionAnsweringAndPerplexity()
    {
        PretrainedPanel panel;
        panel.resize(1200, 700);
        panel.show();
        QSignalSpy loaded(&panel, &PretrainedPanel::modelsChanged), finished(&panel, &PretrainedPanel::testFinished);
        panel.addFolder(fixture("mamba"));
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 60000);
        QTRY_VERIFY(!panel.busy());
        QVERIFY(!panel.dataBox()->parentWidget()->isEnabled());  // only question answering reads a file
        QVERIFY(!panel.lossButton()->isEnabled());               // nothing to place yet
        panel.testBox()->setCurrentIndex(panel.testBox()->findData("squad"));
        QVERIFY(panel.dataBox()->parentWidget()->isEnabled());
        panel.sizesBox()->setText("1,200,10000");
        panel.samplesBox()->setValue(2);
        panel.runTest();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 240000);
        QCOMPARE(panel.results().size(), size_t(1));
        QVERIFY(!panel.results().front().curve.lengths.empty());
        QCOMPARE(panel.plot()->yAxis->label(), QString("F1"));
        QVERIFY(panel.lossButton()->isEnabled());
        panel.drawLossVsRetrieval();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 240000);
        QVERIFY(panel.showsLossVsRetrieval());
        QVERIFY2(panel.plot()->xAxis->label().startsWith("perplexity"), qPrintable(panel.plot()->xAxis->label()));
        QCOMPARE(panel.plot()->graphCount(), 1);
        QVERIFY(panel.plot()->graph(0)->data()->constBegin()->key > 1);  // a perplexity
        // a file that is not a SQuAD set: an error in the tab
        QTemporaryDir tmp;
        panel.dataBox()->setText(tmp.filePath("missing.json"));
        QSignalSpy failed(&panel, &PretrainedPanel::failed);
        panel.runTest();
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 60000);
        QVERIFY2(panel.status().contains("missing.json"), qPrintable(panel.status()));
    }

    // Look inside: the selected model opens in the Explore tab beside the other architecture's,
    // on the prompt box's text (or a phone book when it is empty), and the explorer's source
    // lists offer the tab's models.
    void looksInsideInTheExploreTab()
    {
        MainWindow w;
        w.resize(1366, 768);
        w.show();
        PretrainedPanel* panel = w.pretrained();
        auto* look = panel->findChild<QPushButton*>("lookInside");
        QVERIFY(look && !look->isEnabled());  // nothing loaded yet
        panel->addFolder(fixture("neox"));
        panel->addFolder(fixture("mamba"));
        QTRY_VERIFY_WITH_TIMEOUT(panel->modelCount() == 2 && !panel->busy(), 60000);
        QVERIFY(look->isEnabled());
        panel->selectModel(1);  // Mamba selected: it goes left, GPT-NeoX right
        panel->promptBox()->setPlainText("Alice was beginning to get very tired of sitting by her sister");
        QSignalSpy asked(panel, &PretrainedPanel::lookInside);
        look->click();
        QCOMPARE(asked.size(), 1);
        QCOMPARE(w.docks()->currentPanelName(), QString("Explore"));
        ExplorerPanel* e = w.explorer();
        QCOMPARE(e->prompt(), panel->promptBox()->toPlainText());
        QTRY_VERIFY_WITH_TIMEOUT(!e->left()->busy() && !e->right()->busy() && e->left()->session().subject().readsText(), 60000);
        QTRY_VERIFY_WITH_TIMEOUT(!e->left()->busy() && !e->right()->busy() && !e->right()->session().tokens().empty(), 60000);
        QCOMPARE(e->left()->session().subject().languageModel()->architecture, QString("Mamba"));
        QCOMPARE(e->right()->session().subject().languageModel()->architecture, QString("GPT-NeoX"));
        QCOMPARE(e->left()->view(), QString("implicit"));
        QCOMPARE(e->right()->view(), QString("attention"));
        QCOMPARE(e->right()->session().tokens(), panel->model(0).tokenizer.encode(e->prompt()));
        auto* source = e->left()->findChild<QComboBox*>("source");
        QVERIFY(source->findData("lm:" + panel->model(0).folder) >= 0 && source->findData("lm:" + panel->model(1).folder) >= 0);
    }
};

QTEST_MAIN(TestPretrained)
#include "tst_pretrained.moc"
