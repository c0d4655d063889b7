#include "ui/panels/runbrowser.h"

#include "base/config.h"
#include "base/error.h"
#include "base/io/runfolder.h"
#include "base/tasks/tokentask.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QTextDocumentFragment>
#include <QVBoxLayout>

namespace parrot {

namespace {

enum Column { Name, Task, Model, Seed, Steps, Lr, DModel, Status, Result, Summary, Columns };
// The names a filter term can compare ("result>0.9", "seed=2", "d_model<=64").
const char* const kKeys[Columns] = {"run", "task", "model", "seed", "steps", "lr", "d_model", "status", "result", "final"};

// Columns compared as numbers; the others compare as text.
bool numeric(int column) { return column == Seed || column == Steps || column == Lr || column == DModel || column == Result; }

// One term of the filter: KEY OP NUMBER with OP one of < <= > >= = !=, KEY = WORD or KEY != WORD
// for a text column, or plain text.
struct Term {
    int column = -1;  // -1: text anywhere in the row
    QString op, text;
    double number = 0;
};

struct Filter {
    QList<Term> terms;
    QStringList errors;  // the terms left out, each with why
};

Filter parseFilter(const QString& filter)
{
    static const QRegularExpression cmp("^([A-Za-z_]+)(<=|>=|!=|<|>|=)(.+)$");
    const QStringList keys(std::begin(kKeys), std::end(kKeys));
    Filter f;
    for (const QString& word : filter.split(' ', Qt::SkipEmptyParts)) {
        Term t;
        t.text = word;
        const auto m = cmp.match(word);
        if (!m.hasMatch()) {
            f.terms << t;
            continue;
        }
        const QString key = m.captured(1), op = m.captured(2), value = m.captured(3);
        t.column = int(keys.indexOf(key.toLower()));
        if (t.column < 0) {
            f.errors << QObject::tr("%1: no column %2 (keys: %3)").arg(word, key, keys.join(", "));
            continue;
        }
        t.text = value;
        if (numeric(t.column)) {
            bool ok = false;
            t.number = value.toDouble(&ok);
            if (!ok) {
                f.errors << QObject::tr("%1: %2 is a number, and %3 is not").arg(word, key, value);
                continue;
            }
            t.op = op;
        } else if (op == "=" || op == "!=") {
            t.op = "text" + op;
        } else {
            f.errors << QObject::tr("%1: %2 is text, compared with = or != only").arg(word, key);
            continue;
        }
        f.terms << t;
    }
    return f;
}

bool matches(const Term& t, const QTableWidget* table, int row)
{
    if (t.column < 0) {
        for (int c = 0; c < Columns; ++c)
            if (auto* item = table->item(row, c); item && item->text().contains(t.text, Qt::CaseInsensitive)) return true;
        return false;
    }
    const QTableWidgetItem* item = table->item(row, t.column);
    if (!item) return false;
    if (t.op.startsWith("text")) {  // a word: equal (or not) to the column's text
        const bool eq = item->text().compare(t.text, Qt::CaseInsensitive) == 0;
        return t.op == "text!=" ? !eq : eq;
    }
    bool ok = false;
    const double v = item->data(Qt::DisplayRole).toDouble(&ok);
    if (!ok || item->text().isEmpty()) return false;  // no value: never matches a comparison
    if (t.op == "<") return v < t.number;
    if (t.op == "<=") return v <= t.number;
    if (t.op == ">") return v > t.number;
    if (t.op == ">=") return v >= t.number;
    if (t.op == "!=") return v != t.number;
    return v == t.number;
}

}  // namespace

RunBrowser::RunBrowser(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->setSpacing(2);  // tight: the panel shares a short dock with the log
    auto* top = new QHBoxLayout;
    m_filter = new QLineEdit(this);
    m_filter->setObjectName("runFilter");
    m_filter->setPlaceholderText(tr("Filter: words in a row, or comparisons: result>0.9 seed=2 d_model<=64 task=copy"));
    m_filter->setToolTip(tr("Every term must match. A term is text found anywhere in the row, or KEY OP VALUE with KEY one of "
                            "run, task, model, seed, steps, lr, d_model, status, result and OP one of < <= > >= = !="));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, &RunBrowser::applyFilter);
    auto* refresh = new QPushButton(tr("Refresh"), this);
    connect(refresh, &QPushButton::clicked, this, &RunBrowser::refresh);
    m_overlay = new QPushButton(tr("Overlay selected"), this);
    m_overlay->setObjectName("overlayRuns");
    m_overlay->setToolTip(tr("Add the selected runs' final evaluations to the accuracy plot"));
    connect(m_overlay, &QPushButton::clicked, this, [this] {
        QStringList dirs;
        for (const QModelIndex& i : m_table->selectionModel()->selectedRows())
            dirs << m_table->item(i.row(), Name)->data(Qt::UserRole).toString();
        if (!dirs.isEmpty()) emit overlayRequested(dirs);
    });
    // buttons that act on the one selected run
    const auto oneRun = [this](const QString& text, const char* name, const QString& tip, void (RunBrowser::*request)(const QString&)) {
        auto* b = new QPushButton(text, this);
        b->setObjectName(name);
        b->setToolTip(tip);
        b->setEnabled(false);
        connect(b, &QPushButton::clicked, this, [this, request] {
            if (const QString run = selectedRun(); !run.isEmpty()) emit(this->*request)(run);
        });
        return b;
    };
    m_continue = oneRun(tr("Continue training"), "continueRun",
                        tr("Resume the selected run where its last autosave left it: the same optimiser state, "
                           "schedule and data, so it goes on as if it had never stopped"),
                        &RunBrowser::continueRequested);
    m_explore = oneRun(tr("Look inside"), "exploreRun",
                       tr("Open the selected run in the Explore tab, where its snapshots can be stepped through: "
                          "the attention maps before, while and after a lookup head forms"),
                       &RunBrowser::exploreRequested);
    m_status = new QLabel(this);
    m_status->setObjectName("runStatus");
    m_status->setTextFormat(Qt::RichText);
    m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // a long folder is cut, never widening the window
    top->addWidget(m_filter, 1);
    top->addWidget(refresh);
    top->addWidget(m_overlay);
    top->addWidget(m_continue);
    top->addWidget(m_explore);
    layout->addLayout(top);
    m_table = new QTableWidget(0, Columns, this);
    m_table->setObjectName("runTable");
    m_table->setHorizontalHeaderLabels({tr("Run"), tr("Task"), tr("Model"), tr("Seed"), tr("Steps"), tr("LR"), tr("d_model"),
                                        tr("Status"), tr("Result"), tr("Final evaluation")});
    m_table->horizontalHeaderItem(Result)->setToolTip(tr("Answer accuracy at the longest training length, or in-context error after the most examples"));
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->verticalHeader()->setVisible(false);
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);  // rows as tight as the text, so more show
    m_table->setMinimumHeight(m_table->horizontalHeader()->sizeHint().height() + m_table->verticalHeader()->defaultSectionSize() +
                              2 * m_table->frameWidth());  // one row at least; raising the Runs tab makes room for more
    m_table->horizontalHeader()->setStretchLastSection(true);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] {
                m_continue->setEnabled(!selectedRun().isEmpty());
                m_explore->setEnabled(!selectedRun().isEmpty());
            });
    // Columns fit the rows in view and those near them, not every row: measuring every cell of a
    // large runs folder would hold the GUI thread at every refresh.
    m_table->horizontalHeader()->setResizeContentsPrecision(100);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_status);
}

void RunBrowser::setFolder(const QString& dir)
{
    m_folder = dir;
    if (dir.isEmpty() || !QFileInfo(dir).isDir()) {
        m_load.cancel();  // a folder being read for an earlier call is not shown
        showRuns(dir, {}, QString());
        return;
    }
    struct Listing {
        std::vector<RunRecord> runs;
        int skipped = 0;
    };
    m_load.start(
        [dir](JobContext&) {
            Listing l;
            l.runs = loadRunsUnder(dir, &l.skipped);
            return l;
        },
        [this, dir](const Listing& l) { showRuns(dir, l.runs, l.skipped ? tr(" (%1 unreadable folders skipped)").arg(l.skipped) : QString()); },
        [this, dir](const QString& error) { showRuns(dir, {}, tr(" (cannot read it: %1)").arg(error)); });
}

void RunBrowser::showRuns(const QString& dir, const std::vector<RunRecord>& runs, const QString& note)
{
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);  // no cell of the last listing is kept
    m_table->setRowCount(int(runs.size()));
    for (int row = 0; row < int(runs.size()); ++row) {
        const RunRecord& r = runs[size_t(row)];
        const QString runDir = r.dir;
        auto text = [&](int col, const QString& s) { m_table->setItem(row, col, new QTableWidgetItem(s)); };
        auto number = [&](int col, double v) {
            auto* item = new QTableWidgetItem;
            item->setData(Qt::DisplayRole, v);  // sorts as a number
            m_table->setItem(row, col, item);
        };
        text(Name, QDir(dir).relativeFilePath(runDir));
        m_table->item(row, Name)->setData(Qt::UserRole, runDir);
        text(Task, r.config.task.kind);
        text(Model, r.architecture());
        number(Seed, double(r.config.seed));
        number(Steps, r.metrics.empty() ? 0.0 : double(r.metrics.back().step));
        number(Lr, r.config.train.lr);
        number(DModel, double(r.config.model.dModel));
        text(Status, r.status.isEmpty() ? tr("unfinished") : r.status);
        if (!r.curves.empty()) {
            const LengthCurve& c = r.curves.back();
            double v = -1;
            if (c.isError()) v = c.error.back();
            else v = c.stringAccuracyAt(r.config.task.maxLen, c.stringAccuracy.back());
            number(Result, std::round(v * 10000) / 10000);
            text(Summary, c.summary());
        } else {
            text(Result, QString());
            text(Summary, tr("(no evaluation)"));
        }
    }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
    m_folderNote = note;
    applyFilter();
    emit loaded();
}

QString RunBrowser::selectedRun() const
{
    const auto rows = m_table->selectionModel()->selectedRows();
    return rows.size() == 1 ? m_table->item(rows.first().row(), Name)->data(Qt::UserRole).toString() : QString();
}

int RunBrowser::runCount() const { return m_table->rowCount(); }

QString RunBrowser::status() const { return QTextDocumentFragment::fromHtml(m_status->text()).toPlainText(); }

int RunBrowser::heightForRows(int rows) const
{
    const int table = m_table->horizontalHeader()->sizeHint().height() + rows * m_table->verticalHeader()->defaultSectionSize() +
                      2 * m_table->frameWidth();
    return sizeHint().height() - m_table->sizeHint().height() + table;
}

QString runLegend(const RunRecord& r)
{
    // the folder's name, and the model in words unless the name already says which it is
    const QString name = QFileInfo(r.dir).fileName();
    return name.contains(r.config.model.kind, Qt::CaseInsensitive) ? name : QString("%1 · %2").arg(name, describeModel(r.config.model));
}

int RunBrowser::visibleRunCount() const
{
    int n = 0;
    for (int r = 0; r < m_table->rowCount(); ++r) n += !m_table->isRowHidden(r);
    return n;
}

void RunBrowser::applyFilter()
{
    const Filter filter = parseFilter(m_filter->text());
    for (int r = 0; r < m_table->rowCount(); ++r) {
        bool match = true;
        for (const Term& t : filter.terms) match = match && matches(t, m_table, r);
        m_table->setRowHidden(r, !match);
    }
    m_filterError = filter.errors.join("; ");
    // the count says what the table shows, and a term that cannot be read says so
    QString text = m_folder.isEmpty() ? tr("No runs folder set")
                   : m_filter->text().trimmed().isEmpty() ? tr("%1 runs in %2").arg(runCount()).arg(m_folder)
                                                          : tr("%1 of %2 runs shown, from %3").arg(visibleRunCount()).arg(runCount()).arg(m_folder);
    text = text.toHtmlEscaped() + m_folderNote.toHtmlEscaped();
    if (!m_filterError.isEmpty()) {
        const bool dark = palette().color(QPalette::Window).lightness() < 128;
        text += QString("<br><span style='color:%1'>%2</span>")
                    .arg(dark ? "#ff7b72" : "#b00020", tr("Filter term left out: %1").arg(m_filterError).toHtmlEscaped());
    }
    m_status->setText(text);
}

}  // namespace parrot
