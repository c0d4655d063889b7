#include "ui/panels/causaldialog.h"

#include "base/error.h"
#include "figures/causalfigure.h"
#include "figures/figures.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

namespace parrot {

CausalDialog::CausalDialog(const QString& title, QWidget* parent) : QDialog(parent)
{
    setWindowTitle(title);
    setAttribute(Qt::WA_DeleteOnClose);
    auto* layout = new QVBoxLayout(this);
    auto* buttons = new QHBoxLayout;
    m_run = new QPushButton(tr("Run"), this);
    m_run->setObjectName("run");
    m_run->setDefault(true);
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setObjectName("stop");
    m_stop->setEnabled(false);
    m_stop->setToolTip(tr("Stop and keep what is measured so far"));
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_save = new QPushButton(tr("Save…"), this);
    m_save->setObjectName("save");
    m_save->setToolTip(tr("The figure as PNG, PDF or SVG, or the table as CSV (by the file's extension)"));
    m_save->setEnabled(false);
    buttons->addWidget(m_run);
    buttons->addWidget(m_stop);
    buttons->addWidget(m_progress, 1);
    buttons->addWidget(m_save);
    layout->addLayout(buttons);
    m_status = new QLabel(this);
    m_status->setObjectName("status");
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_status);
    auto* split = new QSplitter(Qt::Vertical, this);
    m_plot = new QCustomPlot(split);
    m_plot->setMinimumHeight(220);
    m_table = new QTableWidget(split);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setStretchLastSection(true);
    split->addWidget(m_plot);
    split->addWidget(m_table);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({430, 200});
    layout->addWidget(split, 1);
    connect(m_run, &QPushButton::clicked, this, [this] { run(); });
    connect(m_stop, &QPushButton::clicked, this, [this] {
        m_job.stop();
        setStatus(tr("Stopping after the evaluation under way…"));
    });
    connect(m_save, &QPushButton::clicked, this, &CausalDialog::askAndSave);
    connect(&m_job, &BackgroundJob::progress, this, [this](int done, int total) {
        m_progress->setRange(0, std::max(1, total));
        m_progress->setValue(done);
    });
    resize(820, 720);
}

void CausalDialog::addControls(QWidget* controls) { static_cast<QVBoxLayout*>(layout())->insertWidget(0, controls); }

QString CausalDialog::status() const { return m_status->text(); }

void CausalDialog::setStatus(const QString& text) { m_status->setText(text); }

void CausalDialog::started()
{
    m_run->setEnabled(false);
    m_stop->setEnabled(true);
    m_progress->setRange(0, 0);  // busy until the first report
}

void CausalDialog::ended()
{
    m_run->setEnabled(true);
    m_stop->setEnabled(false);
    m_progress->setRange(0, 1);
    m_progress->setValue(1);
    m_save->setEnabled(!m_csv.isEmpty());
    emit measured();
}

void CausalDialog::save(const QString& file) const
{
    savePlot(*m_plot, file, 900, 600, m_title, m_csv);
}

void CausalDialog::askAndSave()
{
    const QString file = QFileDialog::getSaveFileName(this, tr("Save figure or table"), m_title.section(':', 0, 0).toLower().replace(' ', '-') + ".png",
                                                      tr("Figures and tables (*.png *.pdf *.svg *.csv)"));
    if (file.isEmpty()) return;
    try {
        save(file);
        setStatus(tr("Wrote %1").arg(QFileInfo(file).absoluteFilePath()));
    } catch (const Error& e) {
        QMessageBox::warning(this, tr("Cannot save"), e.message());
    }
}

HeadImportanceDialog::HeadImportanceDialog(const InsideSubject& subject, QWidget* parent)
    : CausalDialog(tr("Head importance — %1").arg(subject.name()), parent), m_subject(subject)
{
    auto* controls = new QWidget(this);
    auto* form = new QHBoxLayout(controls);
    form->setContentsMargins(0, 0, 0, 0);
    m_task = new QComboBox(controls);
    m_task->setObjectName("task");
    m_task->addItems(headImportanceTasks(subject));
    m_task->setToolTip(tr("What each head is measured on: the model's own task, or one that reads the same letters"));
    m_length = new QSpinBox(controls);
    m_length->setObjectName("length");
    m_length->setRange(1, 4000);
    m_length->setPrefix(tr("length "));
    m_length->setValue(std::max(1, defaultImportanceLength(subject, m_task->currentText())));
    m_length->setToolTip(tr("What the task's length counts: letters, pairs, phone-book entries or tokens"));
    m_samples = new QSpinBox(controls);
    m_samples->setObjectName("samples");
    m_samples->setRange(1, 100000);
    m_samples->setValue(subject.readsText() ? 10 : 200);
    m_samples->setSuffix(tr(" examples"));
    m_samples->setToolTip(tr("The same examples for the full model and every head (fixed by the seed)"));
    m_seed = new QSpinBox(controls);
    m_seed->setRange(0, 1000000);
    m_seed->setValue(1);
    m_seed->setPrefix(tr("seed "));
    m_method = new QComboBox(controls);
    m_method->setObjectName("method");
    m_method->addItem(tr("zeroed"), "zero");
    m_method->addItem(tr("mean over the input"), "mean");
    m_method->setToolTip(tr("Zeroed: the head's output taken away. Mean: replaced by its mean over the input's positions, "
                            "which keeps its average contribution and removes what depends on where it looks."));
    form->addWidget(new QLabel(tr("Each head"), controls));
    form->addWidget(m_method);
    form->addWidget(new QLabel(tr("alone, on"), controls));
    form->addWidget(m_task);
    form->addWidget(m_length);
    form->addWidget(m_samples);
    form->addWidget(m_seed);
    form->addStretch(1);
    addControls(controls);
    connect(m_task, &QComboBox::currentTextChanged, this,
            [this](const QString& t) { m_length->setValue(std::max(1, defaultImportanceLength(m_subject, t))); });
    m_table->setColumnCount(6);
    m_table->setHorizontalHeaderLabels({tr("head"), tr("answer drop"), tr("token drop"), tr("answers right"), tr("lookup"), tr("label")});
    setStatus(tr("Run switches every head off in turn and measures what the answers lose."));
}

void HeadImportanceDialog::run()
{
    HeadImportanceRequest r;
    r.task = m_task->currentText();
    r.length = m_length->value();
    r.samples = m_samples->value();
    r.seed = static_cast<unsigned long long>(m_seed->value());
    r.method = m_method->currentData().toString() == "mean" ? HeadAblation::Method::Mean : HeadAblation::Method::Zero;
    const InsideSubject subject = m_subject;
    setStatus(tr("Measuring %1 with each head %2…").arg(subject.name(), m_method->currentText()));
    launch([subject, r](const std::function<bool(int, int)>& keepGoing) { return measureHeadImportance(subject, r, keepGoing); },
           [this](const HeadImportance& h) { display(h); }, tr("Cannot measure"));
}

void HeadImportanceDialog::display(const HeadImportance& h)
{
    m_result = h;
    m_csv = h.csv();
    m_title = tr("Head importance: %1").arg(h.subject);
    drawHeadImportance(*m_plot, h);
    m_table->setRowCount(int(h.rows.size()));
    const auto pct = [](double v, double e) { return QString("%1% ± %2").arg(v * 100, 0, 'f', 1).arg(e * 100, 0, 'f', 1); };
    for (int i = 0; i < int(h.rows.size()); ++i) {
        const HeadImportanceRow& r = h.rows[size_t(i)];
        const QStringList cells{QString("%1.%2").arg(r.layer).arg(r.head), pct(r.answerDrop, r.answerDropErr), pct(r.tokenDrop, r.tokenDropErr),
                                pct(r.answer, r.answerErr), r.label.isEmpty() ? QString("–") : QString::number(r.lookup, 'f', 2), r.label};
        for (int c = 0; c < cells.size(); ++c) m_table->setItem(i, c, new QTableWidgetItem(cells[c]));
    }
    m_table->resizeColumnsToContents();
    QString text = tr("Full model: %1 of answers right on %2 at length %3 (%4 examples).")
                       .arg(QString("%1% ± %2").arg(h.answer * 100, 0, 'f', 1).arg(h.answerErr * 100, 0, 'f', 1), h.task)
                       .arg(h.length).arg(h.samples);
    if (!h.complete) text += tr(" Stopped: %1 of %2 heads measured.").arg(h.rows.size()).arg(h.layers * h.heads);
    setStatus(text);
}

StateSweepDialog::StateSweepDialog(const InsideSubject& subject, QWidget* parent)
    : CausalDialog(tr("State sweep — %1").arg(subject.name()), parent), m_subject(subject)
{
    auto* controls = new QWidget(this);
    auto* form = new QHBoxLayout(controls);
    form->setContentsMargins(0, 0, 0, 0);
    m_mode = new QComboBox(controls);
    m_mode->setObjectName("mode");
    m_mode->addItem(tr("first k of d_state"), "dims");
    m_mode->addItem(tr("a fraction of the channels"), "channels");
    m_mode->addItem(tr("b bits an entry"), "bits");
    m_mode->setToolTip(tr("How the state is made smaller at inference; the weights are untouched"));
    m_lengths = new QLineEdit(controls);
    m_lengths->setObjectName("lengths");
    QStringList ls;
    if (!subject.isNull() && !subject.isConstruction() && !subject.readsText())
        for (int L : evaluationLengths(subject.model().config().task)) ls << QString::number(L);
    m_lengths->setText(ls.join(','));
    m_lengths->setToolTip(tr("The string lengths evaluated, comma-separated"));
    m_samples = new QSpinBox(controls);
    m_samples->setObjectName("samples");
    m_samples->setRange(1, 100000);
    m_samples->setValue(100);
    m_samples->setSuffix(tr(" examples"));
    m_seed = new QSpinBox(controls);
    m_seed->setRange(0, 1000000);
    m_seed->setValue(1);
    m_seed->setPrefix(tr("seed "));
    form->addWidget(new QLabel(tr("Keep"), controls));
    form->addWidget(m_mode);
    form->addWidget(new QLabel(tr("lengths"), controls));
    form->addWidget(m_lengths, 1);
    form->addWidget(m_samples);
    form->addWidget(m_seed);
    addControls(controls);
    m_table->setColumnCount(4);
    m_table->setHorizontalHeaderLabels({tr("state"), tr("bits"), tr("bound: longest copyable"), tr("longest copied (≥ 90%)")});
    setStatus(tr("Run evaluates copying with the whole state and with each smaller one, and draws the bound of each."));
}

void StateSweepDialog::run()
{
    std::vector<int> lengths;
    try {
        lengths = parseLengthList(m_lengths->text(), tr("lengths"));
    } catch (const Error& e) {
        setStatus(e.message());
        emit measured();
        return;
    }
    const InsideSubject subject = m_subject;
    const StateShrink::Mode mode = stateShrinkModeFromName(m_mode->currentData().toString());
    const int samples = m_samples->value();
    const auto seed = static_cast<unsigned long long>(m_seed->value());
    setStatus(tr("Sweeping %1's state…").arg(subject.name()));
    launch([subject, mode, lengths, samples, seed](const std::function<bool(int, int)>& keepGoing) {
               return measureStateSweep(subject.model(), subject.name(), mode, {}, lengths, samples, seed, keepGoing);
           },
           [this](const StateSweep& s) { display(s); }, tr("Cannot sweep"));
}

void StateSweepDialog::display(const StateSweep& s)
{
    m_result = s;
    m_csv = s.csv();
    m_title = tr("State sweep: %1").arg(s.subject);
    drawStateSweep(*m_plot, s);
    m_table->setRowCount(int(s.points.size()));
    const QLocale en(QLocale::English);
    for (int i = 0; i < int(s.points.size()); ++i) {
        const StateSweepPoint& p = s.points[size_t(i)];
        const QStringList cells{p.label, p.stateBits > 0 ? en.toString(p.stateBits, 'f', 0) : tr("grows"),
                                p.boundLength > 0 ? en.toString(p.boundLength, 'f', 0) : QString("–"), QString::number(p.longestCopied)};
        for (int c = 0; c < cells.size(); ++c) m_table->setItem(i, c, new QTableWidgetItem(cells[c]));
    }
    m_table->resizeColumnsToContents();
    QString text = s.copyTask ? tr("Dashed: the bound for each state — no state of m bits copies more than 2^m of the strings, so accuracy "
                                   "falls to 0 beyond m / log2 %1 letters.").arg(s.vocab)
                              : tr("The copy bound is drawn for copy tasks only; this model's task is %1.").arg(s.task);
    if (!s.complete) text += tr(" Stopped after %1 settings.").arg(s.points.size());
    setStatus(text);
}

}  // namespace parrot
