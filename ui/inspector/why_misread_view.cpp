#include "why_misread_view.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "qt_convert.h"

namespace foveal::ui {

namespace {

constexpr double kLabelColumn = 92;  // the rows' names on the left
constexpr double kRight = 12;
constexpr double kTop = 6;
constexpr double kMaxImageHeight = 150;
constexpr int kMaxPosteriorRows = 14;
const QColor kRead(230, 124, 20);     // the read characters (the shown path)
const QColor kTruth(30, 110, 200);    // the true characters (the forced alignment)
const QColor kMisread(198, 40, 40);   // a true character read as something else
const QColor kDiffer(255, 205, 210);  // a frame where the paths differ
const QString kBlankMark = QStringLiteral("\u00b7");

double nan() { return std::numeric_limits<double>::quiet_NaN(); }

// White (0) to dark blue (1): the posteriorgram's cells.
QColor probabilityColour(double p) {
  const double v = std::clamp(p, 0.0, 1.0);
  return QColor::fromRgbF(1.0 - 0.85 * v, 1.0 - 0.62 * v, 1.0 - 0.25 * v);
}

bool misread(const core::AlignedChar& c) { return c.readText != c.text; }

// A row's name in the label column on the left.
void drawRowName(QPainter& p, const QColor& ink, double y, double h, const QString& name) {
  p.setPen(ink);
  p.drawText(QRectF(4, y, kLabelColumn - 10, h), Qt::AlignRight | Qt::AlignVCenter, name);
}

}  // namespace

WhyMisreadView::WhyMisreadView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setBackgroundRole(QPalette::Base);
  setAutoFillBackground(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void WhyMisreadView::setReading(std::shared_ptr<const core::Trace> trace, const QImage& image) {
  m_trace = std::move(trace);
  m_image = image;
  m_heat = {};
  m_index = -1;
  buildPosterior();
  relayout();
  update();
}

void WhyMisreadView::setSelection(Row row, int index) {
  m_row = row;
  m_index = index;
  m_heat = {};
  update();
}

void WhyMisreadView::setHeat(const std::vector<double>& map) {
  m_heat = {};
  if (!m_trace || map.empty() ||
      map.size() != static_cast<size_t>(m_trace->imageW) * static_cast<size_t>(m_trace->imageH)) {
    update();
    return;
  }
  double peak = 0;
  for (double v : map)
    if (std::isfinite(v)) peak = std::max(peak, std::abs(v));
  QImage heat(m_trace->imageW, m_trace->imageH, QImage::Format_ARGB32);
  heat.fill(Qt::transparent);
  if (peak > 0)
    for (int y = 0; y < heat.height(); ++y) {
      auto* line = reinterpret_cast<QRgb*>(heat.scanLine(y));
      for (int x = 0; x < heat.width(); ++x) {
        const double v = map[static_cast<size_t>(y) * heat.width() + x];
        if (!std::isfinite(v)) continue;
        const double a = std::min(1.0, std::abs(v) / peak);
        // Red for evidence for the character, blue against it.
        line[x] = v >= 0 ? qRgba(220, 30, 30, static_cast<int>(200 * a))
                         : qRgba(30, 60, 220, static_cast<int>(200 * a));
      }
    }
  m_heat = heat;
  update();
}

int WhyMisreadView::frameCount() const {
  if (!m_trace) return 0;
  if (m_trace->alignment.ok()) return m_trace->alignment.frames;
  return static_cast<int>(m_trace->columnTopk.size());
}

double WhyMisreadView::frameCentre(int frame) const {
  const auto& a = m_trace->alignment;
  if (a.ok() && static_cast<size_t>(frame) < a.frameX.size()) return a.frameX[frame];
  const int n = std::max(1, frameCount());
  if (m_trace->focusRule != "kraken-cut" && m_trace->regionCentres.size() >= static_cast<size_t>(n))
    return m_trace->regionCentres[static_cast<size_t>(frame)].x;
  return (frame + 0.5) * m_trace->imageW / n;
}

void WhyMisreadView::buildPosterior() {
  m_rowTokens.clear();
  m_rowProbs.clear();
  if (!m_trace) return;
  const int n = frameCount();
  const auto& a = m_trace->alignment;
  // Every class the frames' top-k name, with its probabilities where it is among them.
  std::map<std::string, std::vector<double>> seen;
  std::map<std::string, double> peak;
  for (int f = 0; f < n && static_cast<size_t>(f) < m_trace->columnTopk.size(); ++f)
    for (const auto& t : m_trace->columnTopk[static_cast<size_t>(f)]) {
      auto& row = seen[t.token];
      if (row.empty()) row.assign(static_cast<size_t>(n), nan());
      row[static_cast<size_t>(f)] = t.prob;
      peak[t.token] = std::max(peak[t.token], t.prob);
    }
  const std::string blank = core::Charset::kBlankName;
  auto add = [&](const QString& label, std::vector<double> probs) {
    m_rowTokens.push_back(label);
    m_rowProbs.push_back(std::move(probs));
  };
  // The blank first, exact when the alignment knows it.
  if (a.ok())
    add(QString(), a.blankProb);
  else if (seen.count(blank))
    add(QString(), seen[blank]);
  // The truth's characters, each once, exact.
  std::vector<std::string> truth;
  if (a.ok())
    for (size_t c = 0; c < a.chars.size(); ++c) {
      if (std::find(truth.begin(), truth.end(), a.chars[c].text) != truth.end()) continue;
      truth.push_back(a.chars[c].text);
      add(qstr(a.chars[c].text), a.charProbs[c]);
    }
  // Then the most probable others.
  std::vector<std::pair<double, std::string>> others;
  for (const auto& [token, p] : peak)
    if (token != blank && std::find(truth.begin(), truth.end(), token) == truth.end())
      others.emplace_back(p, token);
  std::sort(others.begin(), others.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  for (const auto& [p, token] : others) {
    if (static_cast<int>(m_rowTokens.size()) >= kMaxPosteriorRows) break;
    add(qstr(token), seen[token]);
  }
}

double WhyMisreadView::posteriorAt(int row, int frame) const {
  if (row < 0 || static_cast<size_t>(row) >= m_rowProbs.size() || frame < 0 ||
      static_cast<size_t>(frame) >= m_rowProbs[static_cast<size_t>(row)].size())
    return nan();
  return m_rowProbs[static_cast<size_t>(row)][static_cast<size_t>(frame)];
}

void WhyMisreadView::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  relayout();
}

void WhyMisreadView::relayout() {
  Layout l;
  const QFontMetricsF fm(font());
  l.bandH = fm.height() + 8;
  l.rowH = fm.height() + 4;
  const double avail = std::max(40.0, width() - kLabelColumn - kRight);
  const int iw = m_trace ? std::max(1, m_trace->imageW) : 1;
  const int ih = m_trace ? std::max(1, m_trace->imageH) : 1;
  l.scale = avail / iw;
  if (ih * l.scale > kMaxImageHeight) l.scale = kMaxImageHeight / ih;
  l.left = kLabelColumn;
  l.width = iw * l.scale;
  l.imageH = ih * l.scale;
  double y = kTop;
  l.readBand = y;
  y += l.bandH;
  l.image = y;
  y += l.imageH;
  l.truthBand = y;
  y += l.bandH + 6;
  l.shownRow = y;
  y += l.rowH;
  l.forcedRow = y;
  y += l.rowH + fm.height() + 10;  // room for the posteriorgram's caption
  l.posterior = y;
  const int rows = std::max<int>(1, static_cast<int>(m_rowTokens.size()));
  l.cellH = std::clamp((height() - y - 22) / rows, 9.0, 18.0);
  m_l = l;
}

QRectF WhyMisreadView::imageRect() const { return {m_l.left, m_l.image, m_l.width, m_l.imageH}; }

QRectF WhyMisreadView::toWidget(const core::Box& b) const {
  return {m_l.left + b.x * m_l.scale, m_l.image + b.y * m_l.scale, b.w * m_l.scale,
          b.h * m_l.scale};
}

QRectF WhyMisreadView::boxRect(Row row, int index) const {
  if (!m_trace || index < 0) return {};
  if (row == Row::Read) {
    if (static_cast<size_t>(index) >= m_trace->steps.size()) return {};
    return toWidget(m_trace->steps[static_cast<size_t>(index)].box);
  }
  const auto& a = m_trace->alignment;
  if (!a.ok() || static_cast<size_t>(index) >= a.chars.size()) return {};
  return toWidget(a.chars[static_cast<size_t>(index)].box);
}

QRectF WhyMisreadView::labelRect(Row row, int index) const {
  if (!m_trace || index < 0) return {};
  QString text;
  double focus = 0;
  if (row == Row::Read) {
    if (static_cast<size_t>(index) >= m_trace->steps.size()) return {};
    const auto& s = m_trace->steps[static_cast<size_t>(index)];
    text = displayToken(s);
    focus = s.focus.x;
  } else {
    const auto& a = m_trace->alignment;
    if (!a.ok() || static_cast<size_t>(index) >= a.chars.size()) return {};
    text = qstr(a.chars[static_cast<size_t>(index)].text);
    focus = a.chars[static_cast<size_t>(index)].focus.x;
  }
  const QFontMetricsF fm(font());
  const double w = std::max(fm.horizontalAdvance(text) + 6, 10.0);
  const double y = row == Row::Read ? m_l.readBand : m_l.truthBand;
  return {m_l.left + focus * m_l.scale - w / 2, y + 2, w, m_l.bandH - 4};
}

int WhyMisreadView::characterAt(Row row, const QPointF& p) const {
  if (!m_trace) return -1;
  const int n = row == Row::Read ? static_cast<int>(m_trace->steps.size())
                                 : static_cast<int>(m_trace->alignment.chars.size());
  // The nearest label containing the point (labels of neighbours may overlap).
  int best = -1;
  double bestDistance = 1e300;
  for (int i = 0; i < n; ++i) {
    const QRectF r = labelRect(row, i);
    if (!r.contains(p)) continue;
    const double d = std::abs(r.center().x() - p.x());
    if (d < bestDistance) bestDistance = d, best = i;
  }
  return best;
}

QRectF WhyMisreadView::frameColumn(int frame) const {
  const int n = frameCount();
  if (!m_trace || frame < 0 || frame >= n) return {};
  const double c = frameCentre(frame);
  const double lo =
      frame > 0 ? (frameCentre(frame - 1) + c) / 2 : c - (n > 1 ? (frameCentre(1) - c) / 2 : c);
  const double hi = frame + 1 < n ? (frameCentre(frame + 1) + c) / 2
                                  : c + (n > 1 ? (c - frameCentre(frame - 1)) / 2 : c);
  const double x0 = std::clamp(lo, 0.0, static_cast<double>(m_trace->imageW));
  const double x1 = std::clamp(hi, 0.0, static_cast<double>(m_trace->imageW));
  return {m_l.left + x0 * m_l.scale, m_l.shownRow, std::max(1.0, (x1 - x0) * m_l.scale), m_l.rowH};
}

QString WhyMisreadView::shownAt(int frame) const {
  if (!m_trace || frame < 0 || frame >= frameCount()) return {};
  const auto& a = m_trace->alignment;
  if (a.ok() && static_cast<size_t>(frame) < a.shownText.size())
    return a.shownText[static_cast<size_t>(frame)].empty()
               ? kBlankMark
               : qstr(a.shownText[static_cast<size_t>(frame)]);
  // Without an alignment: the frame's most probable class (greedy decoding's).
  if (static_cast<size_t>(frame) < m_trace->columnTopk.size() &&
      !m_trace->columnTopk[static_cast<size_t>(frame)].empty()) {
    const auto& top = m_trace->columnTopk[static_cast<size_t>(frame)].front();
    return top.token == core::Charset::kBlankName ? kBlankMark : qstr(top.token);
  }
  return {};
}

QString WhyMisreadView::forcedAt(int frame) const {
  if (!m_trace || !m_trace->alignment.ok() || frame < 0 || frame >= frameCount()) return {};
  const auto& a = m_trace->alignment;
  const int c = a.pathChar[static_cast<size_t>(frame)];
  return c < 0 ? kBlankMark : qstr(a.chars[static_cast<size_t>(c)].text);
}

QString WhyMisreadView::hoverText(const QPointF& p) const {
  if (!m_trace) return {};
  for (Row row : {Row::Read, Row::Truth}) {
    const int i = characterAt(row, p);
    if (i < 0) continue;
    if (row == Row::Read) {
      const auto& s = m_trace->steps[static_cast<size_t>(i)];
      return tr("read \"%1\" at frames %2-%3, p %4")
          .arg(displayToken(s))
          .arg(s.columns.empty() ? -1 : s.columns.front())
          .arg(s.columns.empty() ? -1 : s.columns.back())
          .arg(s.prob, 0, 'f', 3);
    }
    const auto& c = m_trace->alignment.chars[static_cast<size_t>(i)];
    return tr("true \"%1\" at frames %2-%3, log p %4 (best p %5); read there: %6")
        .arg(qstr(c.text))
        .arg(c.firstFrame)
        .arg(c.lastFrame)
        .arg(c.logProb, 0, 'f', 3)
        .arg(c.prob, 0, 'f', 3)
        .arg(c.readText.empty() ? tr("nothing (blank)") : "\"" + qstr(c.readText) + "\"");
  }
  if (p.y() < m_l.shownRow || p.x() < m_l.left || p.x() > m_l.left + m_l.width) return {};
  for (int f = 0; f < frameCount(); ++f) {
    const QRectF col = frameColumn(f);
    if (p.x() < col.left() || p.x() >= col.right()) continue;
    QString text = tr("frame %1: read %2, truth %3").arg(f).arg(shownAt(f)).arg(forcedAt(f));
    if (static_cast<size_t>(f) < m_trace->columnTopk.size()) {
      text += tr("\ntop:");
      for (const auto& t : m_trace->columnTopk[static_cast<size_t>(f)])
        text += QStringLiteral(" %1 %2")
                    .arg(t.token == core::Charset::kBlankName ? tr("blank") : qstr(t.token))
                    .arg(t.prob, 0, 'f', 3);
    }
    return text;
  }
  return {};
}

bool WhyMisreadView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = hoverText(help->pos());
    if (text.isEmpty())
      QToolTip::hideText();
    else
      QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

void WhyMisreadView::mousePressEvent(QMouseEvent* event) {
  for (Row row : {Row::Read, Row::Truth}) {
    const int i = characterAt(row, event->position());
    if (i >= 0) {
      setSelection(row, i);
      Q_EMIT characterClicked(row, i);
      return;
    }
  }
  QWidget::mousePressEvent(event);
}

void WhyMisreadView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  if (!m_trace) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("Nothing to show yet"));
    return;
  }
  const auto& a = m_trace->alignment;
  paintLine(p);
  paintBoxes(p);
  paintBand(p, Row::Read, static_cast<int>(m_trace->steps.size()));
  if (a.ok()) paintBand(p, Row::Truth, static_cast<int>(a.chars.size()));
  paintPaths(p);
  paintPosteriorgram(p);
}

void WhyMisreadView::paintLine(QPainter& p) const {
  const QColor ink = palette().color(QPalette::Text);
  // The line with the heat of the selected character's attribution.
  const QRectF img = imageRect();
  p.drawImage(img, m_image);
  if (!m_heat.isNull()) p.drawImage(img, m_heat);
  p.setPen(QPen(palette().color(QPalette::Mid), 1));
  p.drawRect(img);
  drawRowName(p, ink, m_l.readBand, m_l.bandH, tr("read"));
  drawRowName(p, ink, m_l.image, m_l.imageH, tr("line"));
  drawRowName(p, ink, m_l.truthBand, m_l.bandH, tr("truth"));
}

void WhyMisreadView::paintBoxes(QPainter& p) const {
  const auto& a = m_trace->alignment;
  // Both sets of boxes on the image: read (orange, dashed) and true (blue), the selection bold.
  p.setBrush(Qt::NoBrush);
  for (size_t i = 0; i < m_trace->steps.size(); ++i) {
    const bool sel = m_row == Row::Read && m_index == static_cast<int>(i);
    QRectF r = boxRect(Row::Read, static_cast<int>(i));
    if (r.width() < 2) r.setWidth(2);
    p.setPen(QPen(kRead, sel ? 3 : 1, Qt::DashLine));
    p.drawRect(r.adjusted(0, 1, 0, -1));
  }
  if (a.ok())
    for (size_t i = 0; i < a.chars.size(); ++i) {
      const bool sel = m_row == Row::Truth && m_index == static_cast<int>(i);
      QRectF r = boxRect(Row::Truth, static_cast<int>(i));
      if (r.width() < 2) r.setWidth(2);
      p.setPen(QPen(misread(a.chars[i]) ? kMisread : kTruth, sel ? 3 : 1.5));
      p.drawRect(r.adjusted(1, 3, -1, -3));
    }
}

void WhyMisreadView::paintBand(QPainter& p, Row row, int n) const {
  const auto& a = m_trace->alignment;
  // The bands: each character's label at its focus, its box's extent as a bracket.
  const double y = row == Row::Read ? m_l.readBand : m_l.truthBand;
  for (int i = 0; i < n; ++i) {
    const QRectF box = boxRect(row, i);
    const QRectF label = labelRect(row, i);
    QColor c = kRead;
    QString text;
    if (row == Row::Read) {
      text = displayToken(m_trace->steps[static_cast<size_t>(i)]);
    } else {
      const auto& ch = a.chars[static_cast<size_t>(i)];
      c = misread(ch) ? kMisread : kTruth;
      text = qstr(ch.text);
    }
    const double by = row == Row::Read ? y + m_l.bandH - 2 : y + 1;
    p.setPen(QPen(c, 1));
    p.drawLine(QPointF(box.left(), by), QPointF(box.right(), by));
    const bool sel = m_row == row && m_index == i;
    p.setPen(Qt::NoPen);
    p.setBrush(sel ? c : c.lighter(row == Row::Truth && c == kMisread ? 150 : 175));
    p.drawRoundedRect(label, 3, 3);
    p.setPen(sel ? QColor(Qt::white) : QColor(Qt::black));
    p.drawText(label, Qt::AlignCenter, text);
    p.setBrush(Qt::NoBrush);
  }
}

void WhyMisreadView::paintPaths(QPainter& p) const {
  const QFontMetricsF fm(font());
  const QColor ink = palette().color(QPalette::Text);
  const auto& a = m_trace->alignment;
  // The two paths, frame by frame.
  const int n = frameCount();
  drawRowName(p, ink, m_l.shownRow, m_l.rowH, tr("read path"));
  drawRowName(p, ink, m_l.forcedRow, m_l.rowH, tr("true path"));
  for (int f = 0; f < n; ++f) {
    QRectF col = frameColumn(f);
    const bool differ = a.ok() && static_cast<size_t>(f) < a.shownPath.size() &&
                        a.shownPath[static_cast<size_t>(f)] != a.path[static_cast<size_t>(f)];
    for (int r = 0; r < 2; ++r) {
      if (r == 1 && !a.ok()) break;
      QRectF cell(col.left(), r == 0 ? m_l.shownRow : m_l.forcedRow, col.width(), m_l.rowH);
      const QString text = r == 0 ? shownAt(f) : forcedAt(f);
      if (differ) p.fillRect(cell, kDiffer);
      const QColor c = r == 0 ? kRead : kTruth;
      if (text != kBlankMark) p.fillRect(cell.adjusted(0, cell.height() - 3, 0, 0), c);
      if (cell.width() >= fm.horizontalAdvance(text) + 1) {
        p.setPen(text == kBlankMark ? palette().color(QPalette::Mid) : ink);
        p.drawText(cell, Qt::AlignCenter, text);
      }
    }
  }
}

void WhyMisreadView::paintPosteriorgram(QPainter& p) const {
  const QFontMetricsF fm(font());
  const QColor ink = palette().color(QPalette::Text);
  const auto& a = m_trace->alignment;
  const int n = frameCount();
  // The posteriorgram.
  const double top = m_l.posterior;
  p.setPen(ink);
  p.drawText(QRectF(m_l.left, top - fm.height() - 2, m_l.width, fm.height()),
             Qt::AlignLeft | Qt::AlignVCenter,
             tr("p(class | frame): the truth's characters (exact), the blank and the most "
                "probable others (top-%1; hatched: below it)")
                 .arg(m_trace->columnTopk.empty() ? 0 : m_trace->columnTopk.front().size()));
  for (size_t r = 0; r < m_rowTokens.size(); ++r) {
    const double y = top + r * m_l.cellH;
    const bool isTruth = a.ok() && std::any_of(a.chars.begin(), a.chars.end(), [&](const auto& c) {
                           return qstr(c.text) == m_rowTokens[r] && !m_rowTokens[r].isEmpty();
                         });
    QFont f = font();
    f.setBold(isTruth);
    p.setFont(f);
    p.setPen(isTruth ? kTruth : ink);
    p.drawText(QRectF(4, y, kLabelColumn - 10, m_l.cellH), Qt::AlignRight | Qt::AlignVCenter,
               m_rowTokens[r].isEmpty() ? tr("blank") : m_rowTokens[r]);
    p.setFont(font());
    for (int fr = 0; fr < n; ++fr) {
      const QRectF col = frameColumn(fr);
      const QRectF cell(col.left(), y, col.width(), m_l.cellH - 1);
      const double v = posteriorAt(static_cast<int>(r), fr);
      if (std::isnan(v))
        p.fillRect(cell, QBrush(QColor(225, 225, 225), Qt::BDiagPattern));
      else
        p.fillRect(cell, probabilityColour(v));
    }
  }
  paintForcedPathDots(p);
  p.setBrush(Qt::NoBrush);
  const double bottom = top + m_rowTokens.size() * m_l.cellH;
  p.setPen(QPen(palette().color(QPalette::Mid), 1));
  p.drawRect(QRectF(m_l.left, top, m_l.width, bottom - top));
  // The legend under it.
  p.setPen(ink);
  p.drawText(QRectF(m_l.left, bottom + 2, m_l.width, fm.height() + 2),
             Qt::AlignLeft | Qt::AlignVCenter,
             tr("dashed orange: read characters' boxes; blue: the truth's forced alignment "
                "(red: misread); dots: the true path's class"));
}

void WhyMisreadView::paintForcedPathDots(QPainter& p) const {
  const auto& a = m_trace->alignment;
  const int n = frameCount();
  const double top = m_l.posterior;
  // The forced path over the posteriorgram: a dot in the row of the class it takes.
  if (a.ok())
    for (int fr = 0; fr < n; ++fr) {
      const int c = a.pathChar[static_cast<size_t>(fr)];
      const QString token = c < 0 ? QString() : qstr(a.chars[static_cast<size_t>(c)].text);
      const auto it = std::find(m_rowTokens.begin(), m_rowTokens.end(), token);
      if (it == m_rowTokens.end()) continue;
      const double y = top + (it - m_rowTokens.begin()) * m_l.cellH + m_l.cellH / 2 - 0.5;
      const QRectF col = frameColumn(fr);
      p.setPen(Qt::NoPen);
      p.setBrush(c < 0 ? QColor(120, 120, 120) : QColor(20, 20, 20));
      const double d = std::clamp(col.width() * 0.5, 2.0, 5.0);
      p.drawEllipse(QPointF(col.center().x(), y), d / 2, d / 2);
    }
}

}  // namespace foveal::ui
