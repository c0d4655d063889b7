#include "ui/panels/constructionview.h"

#include "base/config.h"
#include "base/error.h"
#include "core/analysis/construction.h"
#include "figures/constructionfigure.h"
#include "figures/plotkit.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <qcustomplot.h>

namespace parrot {

ConstructionView::ConstructionView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tr("The copy paper's theorem, built by hand: a two-layer Transformer whose first layer gathers the previous n tokens "
           "at each position and whose second layer attends to the position after the earlier occurrence of the current "
           "n-gram. No training. It fails only where an n-gram repeats in the string, so its string accuracy stays above "
           "1 − L²/|V|^n: with n = 5 and 26 letters it copies 200-letter strings. Open it in the other tab (source: "
           "Two-layer construction) to see its attention."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* row = new QHBoxLayout;
    m_from = new QSpinBox(this);
    m_from->setRange(1, 8);
    m_from->setValue(2);
    m_to = new QSpinBox(this);
    m_to->setRange(1, 8);
    m_to->setValue(5);
    m_letters = new QSpinBox(this);
    m_letters->setRange(2, 52);
    m_letters->setValue(26);
    m_lengths = new QLineEdit("10,25,50,100,150,200", this);
    m_samples = new QSpinBox(this);
    m_samples->setRange(1, 5000);
    m_samples->setValue(100);
    row->addWidget(new QLabel(tr("n from"), this));
    row->addWidget(m_from);
    row->addWidget(new QLabel(tr("to"), this));
    row->addWidget(m_to);
    row->addWidget(new QLabel(tr("|V|"), this));
    row->addWidget(m_letters);
    row->addWidget(new QLabel(tr("lengths"), this));
    row->addWidget(m_lengths, 1);
    row->addWidget(new QLabel(tr("strings per length"), this));
    row->addWidget(m_samples);
    m_run = new QPushButton(tr("Measure"), this);
    m_run->setObjectName("measure");
    m_stop = new QPushButton(tr("Stop"), this);
    m_stop->setEnabled(false);
    row->addWidget(m_run);
    row->addWidget(m_stop);
    layout->addLayout(row);
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    layout->addWidget(m_progress);
    m_status = new QLabel(tr("Press Measure to copy random strings with the construction."), this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    m_plot = new QCustomPlot(this);
    m_plot->setMinimumHeight(300);
    layout->addWidget(m_plot, 1);
    connect(m_run, &QPushButton::clicked, this, &ConstructionView::start);
    connect(m_stop, &QPushButton::clicked, this, &ConstructionView::cancel);
    connect(&m_job, &BackgroundJob::progress, m_progress, &QProgressBar::setValue);
    connect(&m_job, &BackgroundJob::finished, this, [this] {
        m_run->setEnabled(true);
        m_stop->setEnabled(false);
        emit finished();
    });
}

void ConstructionView::setRange(int nFrom, int nTo, int letters, const QString& lengths, int samples)
{
    m_from->setValue(nFrom);
    m_to->setValue(nTo);
    m_letters->setValue(letters);
    m_lengths->setText(lengths);
    m_samples->setValue(samples);
}

QString ConstructionView::status() const { return m_status->text(); }

void ConstructionView::cancel() { m_job.stop(); }

void ConstructionView::start()
{
    if (m_job.isRunning()) return;
    std::vector<int> lengths;
    try {
        lengths = parseLengthList(m_lengths->text(), tr("lengths"));  // the construction checks its own longest
        std::sort(lengths.begin(), lengths.end());
        lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    } catch (const Error& e) {
        m_status->setText(e.message());
        emit finished();
        return;
    }
    const int from = std::min(m_from->value(), m_to->value()), to = std::max(m_from->value(), m_to->value());
    const int letters = m_letters->value(), samples = m_samples->value();
    const int total = (to - from + 1) * int(lengths.size());
    m_progress->setRange(0, total);
    m_progress->setValue(0);
    m_run->setEnabled(false);
    m_stop->setEnabled(true);
    m_status->setText(tr("Measuring…"));
    m_result = ConstructionCurves{letters, {}, {}};
    m_job.start(
        [from, to, letters, samples, lengths, total](JobContext& job) {
            ConstructionCurves result{letters, {}, {}};
            for (int n = from; n <= to && !job.cancelled(); ++n) {
                const int before = int(result.curves.size()) * int(lengths.size());
                result.curves.push_back(CopyConstruction({n, letters}).evaluate(lengths, samples, 1, "copy", [&](int done, int) {
                    job.progress(before + done, total);
                    return !job.cancelled();
                }));
                result.orders.push_back(n);
            }
            return result;
        },
        [this, total](const ConstructionCurves& result) {
            m_result = result;
            drawConstruction(*m_plot, result);
            m_status->setText(m_job.stopRequested() ? tr("Stopped; showing what was measured.")
                                                    : tr("Measured %1 lengths x %2 orders. Dashed: the bound 1 − L²/|V|^n.")
                                                          .arg(total / std::max<size_t>(1, result.orders.size()))
                                                          .arg(result.orders.size()));
        },
        [this](const QString& error) {
            drawConstruction(*m_plot, m_result);  // nothing measured: an empty plot, not the previous run's
            m_status->setText(tr("Could not measure: %1").arg(error));
        });
}

}  // namespace parrot
