// The model-family and task catalogues: every entry is usable end to end, and no family or task
// id is spelled outside the catalogues and the classes themselves (so adding one is one entry).
#include "base/config.h"
#include "base/error.h"
#include "base/figurecatalog.h"
#include "base/modelcatalog.h"
#include "base/tasks/icltask.h"
#include "base/tasks/taskcatalog.h"
#include "base/tasks/tokentask.h"
#include "core/model.h"
#include "testutil.h"

#include <QDirIterator>
#include <QRegularExpression>
#include <QSet>
#include <QtTest>

#include <set>

using namespace parrot;

class TestCatalogue : public QObject {
    Q_OBJECT
private slots:
    void everyFamilyBuildsAndIsDescribed()
    {
        for (const ModelFamily& f : modelFamilies()) {
            const ExperimentConfig c = test::smallConfig(f.id);
            QVERIFY2(validate(c).isEmpty(), qPrintable(f.id + ": " + validate(c).join("; ")));
            QVERIFY(Model::create(c).parameterCount() > 0);
            QVERIFY2(describeModel(c.model).startsWith(f.id == "hybrid" ? "Hybrid" : f.label), qPrintable(describeModel(c.model)));
            // The estimate that guards memory before building is within 2x of the exact count,
            // small and (per layer) large.
            for (int width : {32, 256}) {
                ExperimentConfig w = c;
                w.model.dModel = width;
                const double exact = double(Model::measure(w).parameters), estimate = estimatedParameters(w);
                QVERIFY2(estimate > 0.5 * exact && estimate < 2.0 * exact,
                         qPrintable(QString("%1 at d_model %2: estimated %3 of %4 parameters").arg(f.id).arg(width).arg(estimate).arg(exact)));
            }
            // What the window enables follows what the family has.
            QCOMPARE(f.options.contains("heads"), f.attention);
            QCOMPARE(f.options.contains("positions"), f.positions);
            QCOMPARE(f.options.contains("d_state"), f.stateSpace);
            // and so do the maps the explorer and the mechanism scores read
            const ModelProbes p = Model::create(c).probe({1, 4, 5, 6, 2, 4, 5, 6, 3});
            QCOMPARE(p.attention.layers > 0, f.attention || f.effectiveAttention);
            QCOMPARE(p.effectiveAttention, f.effectiveAttention && !f.attention);
            QCOMPARE(p.implicitAttention.layers > 0, f.selectiveScan);
        }
    }

    void unknownFamilyNamesTheChoices()
    {
        ExperimentConfig c;
        c.model.kind = "gru";
        const QString problems = validate(c).join("; ");
        QVERIFY2(problems.contains("model.kind") && problems.contains("mambaformer") && problems.contains("\"gru\""), qPrintable(problems));
        QVERIFY_THROWS_EXCEPTION(Error, familyOf(c.model));
    }

    void coloursTellArchitecturesApart()
    {
        std::set<unsigned> seen;
        QStringList keys;
        for (const ModelFamily& f : modelFamilies()) {
            if (!f.positions) keys << f.id;
            else
                for (const PositionScheme& p : positionSchemes()) keys << f.id + "/" + p.id;
        }
        for (const QString& k : keys) QVERIFY2(seen.insert(architectureRgb(k)).second, qPrintable(k + ": colour taken"));
        ModelConfig m;
        m.positions = "rope";
        QCOMPARE(architectureKey(m), QString("transformer/rope"));
        m.kind = "lstm";
        QCOMPARE(architectureKey(m), QString("lstm"));
    }

    void everyTaskDefaultValidates()
    {
        for (const TaskInfo& t : taskCatalog()) {
            ExperimentConfig c;
            c.task = taskDefaults(t.id);
            c.train.evalEvery = 0;
            QCOMPARE(c.task.kind, t.id);
            QVERIFY2(validate(c).isEmpty(), qPrintable(t.id + ": " + validate(c).join("; ")));
            QCOMPARE(isVectorTask(t.id), t.vectors);
            QVERIFY2(t.metric == "accuracy" || (t.metric == "error" && t.vectors), qPrintable(t.id));
            QVERIFY(!t.promptCurve || t.vectors);
            QVERIFY(chanceLevel(c.task) >= 0 && chanceLevel(c.task) < 1);
        }
        QCOMPARE(chanceLevel(taskDefaults("sparse_parity")), 0.5);
        TaskConfig lookup = taskDefaults("suffix_ngram");
        lookup.answerLen = 1;
        QCOMPARE(chanceLevel(lookup), 1.0 / lookup.vocabSize);
        QCOMPARE(findTask("linear_regression")->metric, QString("error"));
        QVERIFY(!findTask("vector_mqar")->promptCurve);
        QCOMPARE(taskDefaults("no_such_task").kind, QString("no_such_task"));
    }

    // The figure catalogue: ids unique, each figure askable somewhere, and a figure of one scope
    // refused where it does not belong, with the scope's list in the message.
    void figuresAreCatalogued()
    {
        QSet<QString> ids;
        for (const FigureKind& f : figureCatalog()) {
            QVERIFY2(!ids.contains(f.id), qPrintable(f.id + ": twice"));
            ids.insert(f.id);
            QVERIFY2(f.scopes != 0 && !f.title.isEmpty() && !f.needs.isEmpty(), qPrintable(f.id));
        }
        QCOMPARE(figureIds(SweepFigure), QStringList({"length", "efficiency", "efficiency-time", "icl", "capacity", "frontier"}));
        checkFigure("frontier", SweepFigure);
        try {
            checkFigure("panel", SweepFigure, "x.json: figure");
            QFAIL("a figure only export draws was taken as a sweep's");
        } catch (const Error& e) {
            QVERIFY2(e.message().startsWith("x.json: figure: expected one of length, ") && e.message().contains("\"panel\""),
                     qPrintable(e.message()));
        }
        QVERIFY_THROWS_EXCEPTION(Error, checkFigure("attention", ExportFigure));
        QVERIFY(findFigure("no_such_figure") == nullptr);
    }

    // Every catalogue task has a generator of its own (a catalogue entry without one is refused
    // by create, not built as another task).
    void everyTaskHasAGenerator()
    {
        for (const TaskInfo& t : taskCatalog()) {
            const TaskConfig c = taskDefaults(t.id);
            try {
                if (t.vectors) IclTask::create(c);
                else TokenTask::create(c);
            } catch (const Error& e) {
                QFAIL(qPrintable(t.id + ": " + e.message()));
            }
        }
        TaskConfig unknown = taskDefaults("mqar");
        unknown.kind = "no_such_task";
        QVERIFY_THROWS_EXCEPTION(Error, TokenTask::create(unknown));
        unknown.kind = "mad_no_such_task";
        QVERIFY_THROWS_EXCEPTION(Error, TokenTask::create(unknown));
    }

    // The catalogue (base, no torch) and the factory's builders (core) name the same families.
    void everyFamilyHasABuilder()
    {
        for (const ModelFamily& f : modelFamilies()) QVERIFY2(canBuild(f.id), qPrintable(f.id));
        QVERIFY(!canBuild("no_such_family"));
    }

    // A family or task id in quotes anywhere but the catalogues, the classes themselves (models/,
    // tasks/) and the places listed below (each with its reason) is a second copy of the catalogue.
    void idsAreSpelledOnlyInTheCatalogues()
    {
        const QStringList ids = familyIds() + taskIds();
        const QMap<QString, QStringList> allowed{
            {"base/config.h", {"transformer", "copy", "hard_alibi"}},  // ModelConfig's / TaskConfig's defaults
            // importers map outside formats to the family and task they are
            {"base/io/importers.cpp", {"mamba", "transformer", "copy", "rope", "learned", "nope", "alibi", "hard_alibi"}},
            {"base/io/hfcache.cpp", {"mamba"}},  // HuggingFace's model_type of its Mamba models
            // the two-layer construction and the explorer's inputs are of the copy tasks
            {"core/analysis/construction.cpp", {"copy", "copy_dup_ngram"}},
            {"core/analysis/construction.h", {"copy"}},
            {"core/analysis/inside.cpp", {"copy", "copy_dup_ngram", "mamba"}},  // "mamba": a bundled checkpoint's id
            {"core/analysis/inside.h", {"copy"}},
            {"core/analysis/causal.cpp", {"copy", "copy_dup_ngram"}},  // the construction's tasks, and the copy bound's
            {"app/inspectcli.cpp", {"copy", "copy_dup_ngram"}},  // inspect's random copy input
            {"ui/panels/constructionview.cpp", {"copy"}},
            // "mamba": the bundled checkpoint's id; "phonebook": the zero-shot test Look inside draws
            {"ui/panels/explorerpanel.cpp", {"copy", "copy_dup_ngram", "mamba", "phonebook"}},
            {"ui/panels/insidepane.cpp", {"copy", "copy_dup_ngram", "mamba", "phonebook"}},
            // pretrained folders are GPT-NeoX or Mamba: their family and its colour
            {"core/text/languagemodel.cpp", {"mamba"}},
            {"figures/lmfigure.cpp", {"mamba", "transformer"}},
            // the zero-shot tests' own ids (eval/lmtests.h); "phonebook" is spelled like the trained task's
            {"core/eval/lmtests.cpp", {"phonebook"}},
            {"bench/bench_lm.cpp", {"transformer", "mamba"}},  // the two pretrained shapes it builds
            // the GPU check's Mamba at 1M and 50M, and the recurrent layers with heads at 1M
            {"bench/bench_gpu.cpp", {"mamba", "mamba2", "gated_deltanet"}},
        };
        const QString root = QStringLiteral(PARROT_SOURCE_DIR);
        QStringList offences;
        int files = 0;
        for (const char* folder : {"base", "core", "figures", "ui", "app", "bench"}) {
            QDirIterator it(root + "/" + QString(folder), {"*.cpp", "*.h", "*.inc"}, QDir::Files, QDirIterator::Subdirectories);
            while (it.hasNext()) {
                const QString path = it.next();
                const QString rel = path.mid(root.size() + 1);
                if (rel == "base/modelcatalog.cpp" || rel == "base/tasks/taskcatalog.cpp" || rel.startsWith("core/models/") ||
                    rel.startsWith("core/tasks/") || rel.startsWith("base/tasks/") || rel.startsWith("bench/python/"))
                    continue;
                ++files;
                int lineNo = 0;
                for (QString line : QString::fromUtf8(test::readAll(path)).split('\n')) {
                    ++lineNo;
                    const qsizetype comment = line.indexOf("//");
                    if (comment >= 0) line.truncate(comment);  // comments may name ids
                    for (const QString& id : ids)
                        if (line.contains('"' + id + '"') && !allowed.value(rel).contains(id))
                            offences << QString("%1:%2: \"%3\"").arg(rel).arg(lineNo).arg(id);
                }
            }
        }
        QVERIFY(files > 50);
        QVERIFY2(offences.isEmpty(), qPrintable("ids outside the catalogues:\n" + offences.join('\n')));
    }
};

QTEST_GUILESS_MAIN(TestCatalogue)
#include "tst_catalogue.moc"
