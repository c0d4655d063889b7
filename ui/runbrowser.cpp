#include "runbrowser.h"

#include "error.h"
#include "io/runfolder.h"
#include "tasks/tokentask.h"

#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QTableWidget>
#include <QVBoxLayout>

namespace parrot {

namespace {

enum Column { Name, Task, Model, Seed, Steps, Lr, DModel, Status, Result, Summary, Columns };
// The names a filter term can compare ("result>0.9", "seed=2", "d_model<=64").
const char* const kKeys[Columns] = {"run", "task", "model", "seed", "steps", "lr", "d_model", "status", "result", "final"};

// One term of the filter: KEY OP NUMBER with OP one of < <= > >= = !=, or plain text.
struct Term {
    int column = -1;  // -1: text anywhere in the row
    QString op, text;
    double number = 0;
};

QList<Term> parseFilter(const QString& filter)
{
    static const QRegularExpression cmp("^([A-Za-z_]+)(<=|>=|!=|<|>|=)(.+)$");
    QList<Term> terms;
    for (const QString& word : filter.split(' ', Qt::SkipEmptyParts)) {
        Term t;
        t.text = word;
        const auto m = cmp.match(word);
        bool ok = false;
        const double v = m.hasMatch() ? m.captured(3).toDouble(&ok) : 0.0;
        for (int c = 0; c < Columns && m.hasMatch(); ++c)
            if (m.captured(1).compare(kKeys[c], Qt::CaseInsensitive) == 0) {
                t.column = c;
                t.op = m.captured(2);
                t.number = v;
                if (!ok) t.op = m.captured(2) == "=" ? "text=" : QString("text") + m.captured(2);
                t.text = m.captured(3);
            }
        terms << t;
    }
    return terms;
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
    layout->setContentsMargins(4, 4, 4, 4);
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
    m_status = new QLabel(this);
    top->addWidget(m_filter, 1);
    top->addWidget(refresh);
    top->addWidget(m_overlay);
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
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_status);
}

void RunBrowser::setFolder(const QString& dir)
{
    m_folder = dir;
    m_table->setSortingEnabled(false);
    m_table->setRowCount(0);
    int skipped = 0;
    if (!dir.isEmpty() && QFileInfo(dir).isDir()) {
        for (const RunRecord& r : loadRunsUnder(dir, &skipped)) {
            const QString runDir = r.dir;
            const int row = m_table->rowCount();
            m_table->insertRow(row);
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
    }
    m_table->setSortingEnabled(true);
    m_table->resizeColumnsToContents();
    m_status->setText(dir.isEmpty() ? tr("No runs folder set") : tr("%1 runs in %2%3").arg(m_table->rowCount()).arg(dir)
                          .arg(skipped > 0 ? tr(" (%1 unreadable folders skipped)").arg(skipped) : QString()));
    applyFilter();
}

int RunBrowser::runCount() const { return m_table->rowCount(); }

int RunBrowser::visibleRunCount() const
{
    int n = 0;
    for (int r = 0; r < m_table->rowCount(); ++r) n += !m_table->isRowHidden(r);
    return n;
}

void RunBrowser::applyFilter()
{
    const QList<Term> terms = parseFilter(m_filter->text());
    for (int r = 0; r < m_table->rowCount(); ++r) {
        bool match = true;
        for (const Term& t : terms) match = match && matches(t, m_table, r);
        m_table->setRowHidden(r, !match);
    }
}

}  // namespace parrot
