#include "why_misread_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "explain_runner.h"
#include "qt_convert.h"

namespace foveal::ui {

namespace {

QString quoted(const QString& s) { return QStringLiteral("\u201c%1\u201d").arg(s.toHtmlEscaped()); }

// The share of a map's absolute mass inside `box` (source pixels): how much of what explains the
// character lies where it is.
double shareInside(const std::vector<double>& map, int w, int h, const core::Box& box) {
  double inside = 0, total = 0;
  const int x0 = std::max(0, static_cast<int>(std::floor(box.x)));
  const int x1 = std::min(w, static_cast<int>(std::ceil(box.x + box.w)));
  const int y0 = std::max(0, static_cast<int>(std::floor(box.y)));
  const int y1 = std::min(h, static_cast<int>(std::ceil(box.y + box.h)));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const double v = std::abs(map[static_cast<size_t>(y) * w + x]);
      if (!std::isfinite(v)) continue;
      total += v;
      if (x >= x0 && x < x1 && y >= y0 && y < y1) inside += v;
    }
  return total > 0 ? inside / total : 0.0;
}

}  // namespace

WhyMisreadPanel::WhyMisreadPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("why-misread"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  m_summary = new QLabel(this);
  m_summary->setTextFormat(Qt::RichText);
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_summary);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Attribution:"), this));
  m_method = new QComboBox(this);
  m_method->setObjectName(QStringLiteral("why-misread-method"));
  for (auto method : core::attributionMethods())
    m_method->addItem(qstr(core::attributionLabel(method)), qstr(core::toString(method)));
  // Saliency first: one backward pass, quick on a long line; the others on demand.
  m_method->setCurrentIndex(
      m_method->findData(qstr(core::toString(core::AttributionMethod::Saliency))));
  m_method->setToolTip(
      tr("How the clicked character's attribution over the line is computed (a true character "
         "is explained at the frames the forced alignment gives it)"));
  row->addWidget(m_method);
  m_progress = new QProgressBar(this);
  m_progress->setRange(0, 100);
  m_progress->setMaximumWidth(160);
  m_progress->hide();
  row->addWidget(m_progress);
  m_attribution = new QLabel(this);
  m_attribution->setTextFormat(Qt::RichText);
  m_attribution->setWordWrap(true);
  row->addWidget(m_attribution, 1);
  layout->addLayout(row);
  m_view = new WhyMisreadView(this);
  layout->addWidget(m_view, 1);

  m_watcher = new QFutureWatcher<WhyMisreadOutcome>(this);
  connect(m_watcher, &QFutureWatcher<WhyMisreadOutcome>::finished, this, &WhyMisreadPanel::onRead);
  m_explainer = new ExplainRunner(this);
  connect(m_explainer, &ExplainRunner::finished, this, &WhyMisreadPanel::onExplained);
  connect(m_explainer, &ExplainRunner::progress, this,
          [this](double f) { m_progress->setValue(static_cast<int>(100 * f)); });
  connect(m_explainer, &ExplainRunner::failed, this, [this](const QString& message) {
    m_progress->hide();
    m_attribution->setText(tr("<span style='color:#c62828'>attribution failed: %1</span>")
                               .arg(message.toHtmlEscaped()));
  });
  connect(m_view, &WhyMisreadView::characterClicked, this, &WhyMisreadPanel::explainCharacter);
  connect(m_method, &QComboBox::currentIndexChanged, this, [this] {
    if (m_view->selectedIndex() >= 0)
      explainCharacter(m_view->selectedRow(), m_view->selectedIndex());
  });
  showSummary();
}

WhyMisreadPanel::~WhyMisreadPanel() {
  ++m_generation;
  m_watcher->waitForFinished();
}

void WhyMisreadPanel::setReading(std::shared_ptr<core::ModelSession> session,
                                 const core::GreyImage& image, const QImage& display,
                                 const QString& source, const QString& truth,
                                 core::TraceOptions options) {
  m_session = std::move(session);
  m_image = image;
  m_truth = truth;
  m_trace.reset();
  m_aligned.reset();
  m_error.clear();
  m_explainer->cancel();
  m_progress->hide();
  m_attribution->clear();
  m_display = display;
  m_view->setReading(nullptr, display);
  if (!m_session || truth.isEmpty()) {
    m_error = !m_session ? tr("no model") : tr("no truth: type the expected text first");
    showSummary();
    return;
  }
  m_busy = true;
  showSummary();
  const quint64 generation = ++m_generation;
  options.truth = truth.toStdString();
  auto session_ = m_session;
  const std::string src = source.toStdString();
  m_watcher->waitForFinished();  // a superseded read is short (one line); its result is dropped
  m_watcher->setProperty("generation", generation);
  m_watcher->setFuture(QtConcurrent::run([session_, image, src, options] {
    WhyMisreadOutcome out;
    try {
      auto traced = std::make_shared<core::Trace>(session_->trace(image, src, options));
      if (traced->alignment.ok())
        out.aligned = std::make_shared<core::Trace>(core::alignedTrace(*traced));
      out.trace = std::move(traced);
    } catch (const std::exception& e) {
      out.error = QString::fromStdString(e.what());
    }
    return out;
  }));
}

void WhyMisreadPanel::onRead() {
  if (m_watcher->property("generation").toULongLong() != m_generation || !m_watcher->isFinished())
    return;
  m_busy = false;
  const WhyMisreadOutcome out = m_watcher->result();
  m_trace = out.trace;
  m_aligned = out.aligned;
  m_error = out.error;
  if (m_trace && !m_trace->isCtc())
    m_error = tr("the forced alignment needs a CTC model: %1 reads by attention")
                  .arg(qstr(m_trace->stages));
  else if (m_trace && !m_trace->alignment.error.empty())
    m_error = qstr(m_trace->alignment.error);
  m_view->setReading(m_trace, m_display);
  showSummary();
  if (!m_error.isEmpty() && !m_trace) {
    Q_EMIT failed(m_error);
    return;
  }
  // The first misread true character (else the first) is the one shown, explained.
  if (m_trace && m_trace->alignment.ok() && !m_trace->alignment.chars.empty()) {
    const auto& chars = m_trace->alignment.chars;
    int first = 0;
    for (size_t i = 0; i < chars.size(); ++i)
      if (chars[i].readText != chars[i].text) {
        first = static_cast<int>(i);
        break;
      }
    explainCharacter(WhyMisreadView::Row::Truth, first);
  }
  Q_EMIT ready();
}

QString WhyMisreadPanel::summaryText() const { return m_summary->text(); }
QString WhyMisreadPanel::attributionText() const { return m_attribution->text(); }

void WhyMisreadPanel::showSummary() {
  if (m_busy) {
    m_summary->setText(tr("<b>Aligning %1...</b>").arg(quoted(m_truth)));
    return;
  }
  if (!m_trace) {
    m_summary->setText(
        m_error.isEmpty()
            ? tr("<b>Nothing to show yet</b>")
            : tr("<span style='color:#c62828'>%1</span>").arg(m_error.toHtmlEscaped()));
    return;
  }
  const auto& a = m_trace->alignment;
  const QString reading = qstr(m_trace->prediction);
  QString text = reading == m_truth ? tr("<b>Read right:</b> %1 (confidence %2)")
                                          .arg(quoted(reading))
                                          .arg(m_trace->confidence, 0, 'f', 3)
                                    : tr("<b>Truth</b> %1 <b>read as</b> %2 (confidence %3)")
                                          .arg(quoted(m_truth), quoted(reading))
                                          .arg(m_trace->confidence, 0, 'f', 3);
  if (!a.ok()) {
    text += tr("<br><span style='color:#c62828'>No forced alignment: %1</span>")
                .arg(m_error.toHtmlEscaped());
    m_summary->setText(text);
    return;
  }
  text += tr("<br>log p over %1 frames: read path <b>%2</b>, the truth's best path <b>%3</b>, the "
             "truth over every path %4")
              .arg(a.frames)
              .arg(a.shownLogProb, 0, 'f', 2)
              .arg(a.logProb, 0, 'f', 2)
              .arg(a.logLikelihood, 0, 'f', 2);
  QStringList wrong;
  for (const auto& c : a.chars)
    if (c.readText != c.text)
      wrong << tr("%1 at frames %2-%3 read as %4 (its best p %5)")
                   .arg(quoted(qstr(c.text)))
                   .arg(c.firstFrame)
                   .arg(c.lastFrame)
                   .arg(c.readText.empty() ? tr("nothing") : quoted(qstr(c.readText)))
                   .arg(c.prob, 0, 'f', 3);
  if (!wrong.isEmpty())
    text += tr("<br><span style='color:#c62828'>Misread:</span> %1")
                .arg(wrong.join(QStringLiteral("; ")));
  m_summary->setText(text);
}

void WhyMisreadPanel::explainCharacter(WhyMisreadView::Row row, int index) {
  if (!m_trace || !m_session || m_session->isEngine()) return;
  const auto explained = row == WhyMisreadView::Row::Truth ? m_aligned : m_trace;
  if (!explained || index < 0 || static_cast<size_t>(index) >= explained->steps.size()) return;
  m_view->setSelection(row, index);
  const auto method =
      core::attributionMethodFromString(m_method->currentData().toString().toStdString());
  m_progress->setValue(0);
  m_progress->show();
  m_attribution->setText(
      tr("%1 of %2 %3...")
          .arg(m_method->currentText())
          .arg(row == WhyMisreadView::Row::Truth ? tr("true") : tr("read"))
          .arg(quoted(qstr(explained->steps[static_cast<size_t>(index)].token))));
  m_explainer->start(m_session, m_image, explained, method, index, /*curves=*/false);
}

void WhyMisreadPanel::onExplained(const ExplainResult& r) {
  m_progress->hide();
  if (!m_trace || (r.trace != m_trace && r.trace != m_aligned)) return;
  const bool truth = r.trace == m_aligned;
  m_view->setHeat(r.map);
  const auto& step = r.trace->steps[static_cast<size_t>(r.step)];
  QString text = tr("%1 of %2 %3: map sum %4 (log p %5)")
                     .arg(m_method->currentText())
                     .arg(truth ? tr("true") : tr("read"))
                     .arg(quoted(qstr(step.token)))
                     .arg(r.figures.imageTotal, 0, 'g', 3)
                     .arg(r.figures.value, 0, 'f', 3);
  if (!r.map.empty()) {
    const int w = r.trace->imageW, h = r.trace->imageH;
    text += tr("; of its mass <b>%1 %</b> in the %2 box")
                .arg(100 * shareInside(r.map, w, h, step.box), 0, 'f', 0)
                .arg(truth ? tr("true") : tr("read"));
    // Beside it, the other box over the same frames: the read step a true character fell in,
    // or the true character a read step stands for.
    const auto* other = truth ? m_trace.get() : m_aligned.get();
    if (other) {
      size_t best = other->steps.size(), overlap = 0;
      for (size_t s = 0; s < other->steps.size(); ++s) {
        size_t n = 0;
        for (int f : other->steps[s].columns)
          n += std::count(step.columns.begin(), step.columns.end(), f);
        if (n > overlap) overlap = n, best = s;
      }
      if (best < other->steps.size())
        text += tr(", %1 % in the %2 box of %3")
                    .arg(100 * shareInside(r.map, w, h, other->steps[best].box), 0, 'f', 0)
                    .arg(truth ? tr("read") : tr("true"))
                    .arg(quoted(qstr(other->steps[best].token)));
    }
  }
  m_attribution->setText(text);
  Q_EMIT explained();
}

}  // namespace foveal::ui
