#include "patch_strip.h"

#include <QMouseEvent>
#include <QPainter>
#include <QScrollArea>
#include <algorithm>

#include "base/text_metrics.h"
#include "model/charset.h"
#include "qt_convert.h"
#include "trace/localisation.h"

namespace foveal::ui {

namespace {
constexpr int kTokenH = 22;
constexpr int kGap = 4;
}  // namespace

QImage PatchStrip::shownPatch(const QImage& patch) {
  // The strip has 32 rows of patch (at its scale) above the tokens. A patch far smaller (PARSeq's
  // 20x10 cell fields) is enlarged by a whole factor, pixels kept square and sharp; a taller one
  // (EasyOCR's 64-row crops, which ran under the tokens) is shrunk to 32 rows; the 32-row patches
  // of the digit models stay as they are.
  if (patch.isNull()) return patch;
  if (patch.height() > 32) return patch.scaledToHeight(32, Qt::SmoothTransformation);
  if (patch.height() >= 24) return patch;
  const int factor = std::max(1, 32 / patch.height());
  return patch.scaled(patch.size() * factor, Qt::KeepAspectRatio, Qt::FastTransformation);
}

PatchStrip::PatchStrip(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(static_cast<int>(32 * m_scale) + kTokenH + 8);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setCursor(Qt::PointingHandCursor);
  setFocusPolicy(Qt::StrongFocus);  // a click takes the focus: the step keys work from here
}

void PatchStrip::setTrace(std::shared_ptr<const core::Trace> trace) {
  m_trace = std::move(trace);
  m_patches.clear();
  if (m_trace)
    for (const auto& s : m_trace->steps) m_patches.push_back(shownPatch(toQImage(s.patch)));
  m_step = 0;
  m_doubtful.clear();
  updateCorrect();
  updateHits();
  updateGeometry();
  update();
  scrollToStep();
}

void PatchStrip::setDoubtful(std::vector<bool> flags) {
  m_doubtful = std::move(flags);
  update();
}

void PatchStrip::setTruth(const QString& truth) {
  m_truth = truth;
  updateCorrect();
  update();
}

void PatchStrip::setTruthBoxes(std::vector<core::Box> boxes) {
  m_truthBoxes = std::move(boxes);
  updateHits();
  update();
}

void PatchStrip::updateHits() {
  m_hits.assign(m_trace ? m_trace->steps.size() : 0, -1);
  if (!m_trace) return;
  for (size_t t = 0; t < m_hits.size() && t < m_truthBoxes.size(); ++t)
    m_hits[t] = core::contains(m_truthBoxes[t], m_trace->steps[t].focus) ? 1 : 0;
}

void PatchStrip::setStep(int step) {
  m_step = step;
  update();
  scrollToStep();
}

void PatchStrip::setScale(double scale) {
  m_scale = scale;
  setMinimumHeight(static_cast<int>(32 * m_scale) + kTokenH + 8);
  updateGeometry();
  update();
}

QRect PatchStrip::stepRect(int step) const {
  const double cw = cellWidth(m_scale);
  return QRect(static_cast<int>(4 + step * cw), 0, static_cast<int>(cw), height());
}

void PatchStrip::scrollToStep() {
  // The strip is the widget of a scroll area: its parent is the viewport.
  QWidget* viewport = parentWidget();
  auto* area = viewport ? qobject_cast<QScrollArea*>(viewport->parentWidget()) : nullptr;
  if (!area) return;
  if (m_watchedViewport != viewport) {
    // A page laid out later (a hidden tab shown) changes the viewport: scroll again then.
    viewport->installEventFilter(this);
    m_watchedViewport = viewport;
  }
  if (m_step < 0 || m_step >= static_cast<int>(m_patches.size())) return;
  // A strip that has just grown is laid out by the scroll area first.
  if (width() < sizeHint().width()) resize(sizeHint().width(), height());
  const QRect r = stepRect(m_step);
  area->ensureVisible(r.center().x(), r.center().y(), r.width() / 2 + 8, 0);
}

void PatchStrip::updateCorrect() {
  m_correct.assign(m_trace ? m_trace->steps.size() : 0, true);
  if (!m_trace || m_truth.isEmpty()) return;
  // Align the prediction to the truth; the end step is wrong when the reading is too short.
  const auto ok = core::correctPredictedCharacters(m_trace->prediction, m_truth.toStdString());
  size_t c = 0;
  for (size_t t = 0; t < m_trace->steps.size(); ++t) {
    if (isEndToken(m_trace->steps[t])) {
      m_correct[t] = core::splitUtf8(m_trace->prediction).size() >=
                     core::splitUtf8(m_truth.toStdString()).size();
    } else {
      m_correct[t] = c < ok.size() ? ok[c] : false;
      ++c;
    }
  }
}

double PatchStrip::cellWidth(double scale) const {
  int w = 24;
  for (const auto& img : m_patches) w = std::max(w, img.width());
  return w * scale + kGap;
}

QSize PatchStrip::sizeHint() const {
  return {static_cast<int>(cellWidth(m_scale) * std::max<size_t>(1, m_patches.size())) + 8,
          static_cast<int>(32 * m_scale) + kTokenH + 8};
}

int PatchStrip::stepAt(const QPoint& p) const {
  const double cw = cellWidth(m_scale);
  const int i = static_cast<int>((p.x() - 4) / cw);
  return i >= 0 && i < static_cast<int>(m_patches.size()) ? i : -1;
}

void PatchStrip::paintStrip(QPainter& p, double scale) const {
  const double cw = cellWidth(scale);
  QFont f = p.font();
  f.setPointSizeF(f.pointSizeF() * 1.2);
  for (size_t t = 0; t < m_patches.size(); ++t) {
    const QImage& img = m_patches[t];
    const double x = 4 + t * cw;
    const QRectF target(x + (cw - kGap - img.width() * scale) / 2, 4, img.width() * scale,
                        img.height() * scale);
    p.drawImage(target, img);
    if (t < m_hits.size() && m_hits[t] == 0) {
      // The step's focus misses its character: a red frame and a mark in the corner.
      p.setPen(QPen(QColor(230, 40, 40), 2, Qt::DashLine));
      p.setBrush(Qt::NoBrush);
      p.drawRect(target.adjusted(-3, -3, 3, 3));
      QFont small = f;
      small.setPointSizeF(f.pointSizeF() * 0.6);
      small.setBold(true);
      p.setFont(small);
      const QRectF tag(target.right() - 26, target.top() - 2, 28, 12);
      p.fillRect(tag, QColor(230, 40, 40));
      p.setPen(Qt::white);
      p.drawText(tag, Qt::AlignCenter, tr("miss"));
    }
    if (t < m_doubtful.size() && m_doubtful[t]) paintDoubtMark(p, target, x, cw, scale, f);
    if (static_cast<int>(t) == m_step) {
      p.setPen(QPen(QColor(255, 200, 0), 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(target.adjusted(-1, -1, 1, 1));
    }
    const auto& s = m_trace->steps[t];
    f.setBold(static_cast<int>(t) == m_step);
    p.setFont(f);
    p.setPen(m_correct[t] ? QColor(30, 30, 30) : QColor(210, 30, 30));
    p.drawText(QRectF(x, 4 + 32 * scale, cw - kGap, kTokenH), Qt::AlignCenter, displayToken(s));
  }
}

void PatchStrip::paintDoubtMark(QPainter& p, const QRectF& target, double x, double cw,
                                double scale, const QFont& font) const {
  // Amber, apart from the truth's red and the cursor's yellow: an underline bar under the token
  // and a "?" tag at the patch's top left corner (the "miss" tag takes the right one).
  const QColor amber(240, 130, 0);
  p.fillRect(QRectF(x + 2, 4 + 32 * scale + kTokenH - 3, cw - kGap - 4, 3), amber);
  QFont small = font;
  small.setPointSizeF(font.pointSizeF() * 0.7);
  small.setBold(true);
  p.setFont(small);
  const QRectF tag(target.left() - 2, target.top() - 2, 14, 13);
  p.fillRect(tag, amber);
  p.setPen(Qt::white);
  p.drawText(tag, Qt::AlignCenter, QStringLiteral("?"));
}

QImage PatchStrip::render(double scale) const {
  const int w = static_cast<int>(cellWidth(scale) * std::max<size_t>(1, m_patches.size())) + 8;
  QImage img(w, static_cast<int>(32 * scale) + kTokenH + 8, QImage::Format_RGB32);
  img.fill(Qt::white);
  QPainter p(&img);
  p.setRenderHint(QPainter::Antialiasing);
  paintStrip(p, scale);
  return img;
}

void PatchStrip::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), Qt::white);
  if (m_patches.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("patches of every step appear here"));
    return;
  }
  paintStrip(p, m_scale);
}

bool PatchStrip::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_watchedViewport &&
      (event->type() == QEvent::Resize || event->type() == QEvent::Show))
    QMetaObject::invokeMethod(this, &PatchStrip::scrollToStep, Qt::QueuedConnection);
  return QWidget::eventFilter(watched, event);
}

void PatchStrip::mousePressEvent(QMouseEvent* event) {
  setFocus(Qt::MouseFocusReason);
  const int step = stepAt(event->position().toPoint());
  if (step >= 0) Q_EMIT stepClicked(step);
}

}  // namespace foveal::ui
