#include "probe_filmstrip.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "image_file.h"
#include "run/run_folder.h"
#include "run/trainer_logs.h"

namespace foveal::ui {

namespace {
constexpr int kLabelWidth = 172;   // the probe's image, truth and verdict
constexpr int kHeaderHeight = 66;  // the step ruler and the probe set's accuracy
constexpr int kThumbHeight = 24;   // a probe's image in a cell
constexpr int kAlignHeight = 6;    // the steps x regions strip under it
const QColor kRight(46, 125, 50);
const QColor kWrong(198, 40, 40);
const QColor kUnknown(90, 90, 90);
const QColor kHeat(255, 96, 0);

QColor verdictColour(const ProbeVerdict& v) {
  switch (v.kind) {
    case ProbeVerdict::FirstCorrect:
      return kRight;
    case ProbeVerdict::StillWrong:
    case ProbeVerdict::Regressed:
      return kWrong;
    default:
      return kUnknown;
  }
}

qint64 fileTimeNs(const QFileInfo& f) { return f.lastModified().toMSecsSinceEpoch() * 1000000LL; }

// The image's regions, each coloured by the most attention any step gave it (the end token's
// step left out) over `drawn`, where the image was drawn.
void paintRegionHeat(QPainter& g, const ProbeReading& rd, const QRect& drawn) {
  const double sx = rd.imageW > 0 ? double(drawn.width()) / rd.imageW : 0;
  const double sy = rd.imageH > 0 ? double(drawn.height()) / rd.imageH : 0;
  std::vector<float> most(rd.regions.size(), 0.f);
  float peak = 0;
  for (size_t s = 0; s < rd.attention.size(); ++s) {
    if (s + 1 == rd.attention.size() && rd.tokens.value(int(s)) == QLatin1String("end"))
      continue;  // where the end token looked says little
    for (size_t i = 0; i < rd.attention[s].size() && i < most.size(); ++i)
      most[i] = std::max(most[i], rd.attention[s][i]);
  }
  for (float m : most) peak = std::max(peak, m);
  // Each region as a band around its centre, as wide as the regions are apart: receptive
  // fields overlap, and drawn whole they covered the image.
  g.save();
  g.setClipRect(drawn);
  const int cols = std::max(1, rd.gridColumns > 0 ? rd.gridColumns : int(rd.regions.size()));
  const int rows = std::max(1, rd.gridRows);
  const double bw = double(drawn.width()) / cols, bh = double(drawn.height()) / rows;
  for (size_t i = 0; i < most.size() && peak > 0; ++i) {
    const double w = double(most[i] / peak);
    if (w < 0.04) continue;
    QColor heat = kHeat;
    heat.setAlphaF(std::clamp(0.6 * w, 0.0, 0.6));
    const QRectF b = rd.regions[i];
    const double cx = drawn.left() + (b.x() + b.width() / 2) * sx;
    const double cy = drawn.top() + (b.y() + b.height() / 2) * sy;
    const QRectF band = rows > 1 ? QRectF(cx - bw / 2, cy - bh / 2, bw, bh)
                                 : QRectF(cx - bw / 2, drawn.top(), bw, drawn.height());
    g.fillRect(band, heat);
  }
  g.restore();
}

// The alignment strip: a row per step, a column per region, each row scaled to its peak.
void paintAlignment(QPainter& g, const ProbeReading& rd, const QRect& align) {
  const int steps = int(rd.attention.size());
  const int regions = int(rd.regions.size());
  const double cw = double(align.width()) / regions, ch = double(align.height()) / steps;
  for (int s = 0; s < steps; ++s) {
    float rowPeak = 0;
    for (float v : rd.attention[size_t(s)]) rowPeak = std::max(rowPeak, v);
    for (int i = 0; i < regions && i < int(rd.attention[size_t(s)].size()); ++i) {
      const double v = rowPeak > 0 ? rd.attention[size_t(s)][size_t(i)] / rowPeak : 0;
      if (v <= 0.05) continue;
      QColor heat = kHeat;
      heat.setAlphaF(std::clamp(v, 0.0, 1.0));
      g.fillRect(QRectF(align.left() + i * cw, align.top() + s * ch, cw + 0.3, ch + 0.3), heat);
    }
  }
  g.setPen(QPen(QColor(200, 200, 200), 1));
  g.setBrush(Qt::NoBrush);
  g.drawRect(align);
}

}  // namespace

/// The cells: one row per probe, one column per checkpoint, under the step ruler.
class FilmstripCanvas : public QWidget {
 public:
  explicit FilmstripCanvas(ProbeFilmstrip* strip) : QWidget(strip), m_strip(strip) {
    setMouseTracking(true);
  }
  QSize sizeHint() const override {
    const int cols = std::max<int>(1, int(m_strip->m_columns.size()));
    const int rows = std::max<int>(1, int(m_strip->m_probes.size()));
    return {kLabelWidth + cols * ProbeFilmstrip::kCellWidth + 8,
            kHeaderHeight + rows * ProbeFilmstrip::kCellHeight + 4};
  }
  QSize minimumSizeHint() const override { return sizeHint(); }
  void relayout() {
    setFixedSize(sizeHint());
    update();
  }
  /// The probe row and column under a point (-1 outside).
  std::pair<int, int> cellAt(QPoint p) const {
    if (p.x() < kLabelWidth || p.y() < kHeaderHeight) return {-1, -1};
    const int col = (p.x() - kLabelWidth) / ProbeFilmstrip::kCellWidth;
    const int row = (p.y() - kHeaderHeight) / ProbeFilmstrip::kCellHeight;
    if (col >= int(m_strip->m_columns.size()) || row >= int(m_strip->m_probes.size()))
      return {-1, -1};
    return {row, col};
  }
  QImage thumbnail(const QString& path) {
    auto it = m_images.find(path);
    if (it == m_images.end()) {
      const ImageFile f = readImageFile(path);
      it = m_images.emplace(path, f.display).first;
    }
    return it->second;
  }
  void forgetImages() { m_images.clear(); }

 protected:
  void mousePressEvent(QMouseEvent* e) override {
    const auto [row, col] = cellAt(e->position().toPoint());
    if (col >= 0) {
      m_strip->chooseCell(row, col);
    } else if (e->position().y() < kHeaderHeight && e->position().x() >= kLabelWidth) {
      // The training time scrubbed: that checkpoint's reading of the probe chosen last.
      const int c = int(e->position().x() - kLabelWidth) / ProbeFilmstrip::kCellWidth;
      if (c < int(m_strip->m_columns.size())) m_strip->chooseCell(m_strip->m_probeRow, c);
    }
  }
  void mouseMoveEvent(QMouseEvent* e) override {
    const auto [row, col] = cellAt(e->position().toPoint());
    if (col < 0) {
      setToolTip({});
      return;
    }
    const auto& c = m_strip->m_columns[size_t(col)];
    const auto& p = m_strip->m_probes[size_t(row)];
    QString tip = QObject::tr("<b>%1</b>, step %2<br>%3")
                      .arg(c.file.toHtmlEscaped())
                      .arg(c.step)
                      .arg(QFileInfo(p.path).fileName().toHtmlEscaped());
    const auto it = c.readings.find(p.path);
    if (!c.error.isEmpty())
      tip +=
          QStringLiteral("<br><span style='color:#c62828'>%1</span>").arg(c.error.toHtmlEscaped());
    else if (it != c.readings.end() && !it->second.error.isEmpty())
      tip += QStringLiteral("<br><span style='color:#c62828'>%1</span>")
                 .arg(it->second.error.toHtmlEscaped());
    else if (it != c.readings.end())
      tip += QObject::tr(
                 "<br>reads \"%1\" (confidence %2)%3<br><i>click: open it in the "
                 "Inspector</i>")
                 .arg(it->second.reading.toHtmlEscaped())
                 .arg(it->second.confidence, 0, 'f', 3)
                 .arg(p.hasTruth() ? QObject::tr(", truth \"%1\"").arg(p.truth.toHtmlEscaped())
                                   : QString());
    setToolTip(tip);
  }
  void paintEvent(QPaintEvent*) override {
    QPainter g(this);
    g.setRenderHint(QPainter::Antialiasing);
    g.fillRect(rect(), palette().base());
    const auto& columns = m_strip->m_columns;
    const auto& probes = m_strip->m_probes;
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    const QFontMetrics fm(small);
    g.setFont(small);
    paintHeader(g, fm);
    for (int r = 0; r < int(probes.size()); ++r) {
      const int y = kHeaderHeight + r * ProbeFilmstrip::kCellHeight;
      if (r % 2) g.fillRect(0, y, width(), ProbeFilmstrip::kCellHeight, palette().alternateBase());
      paintLabel(g, fm, probes[size_t(r)], m_strip->verdict(r),
                 QRect(0, y, kLabelWidth, ProbeFilmstrip::kCellHeight));
      for (int c = 0; c < int(columns.size()); ++c)
        paintCell(g, fm, columns[size_t(c)], probes[size_t(r)],
                  QRect(kLabelWidth + c * ProbeFilmstrip::kCellWidth, y, ProbeFilmstrip::kCellWidth,
                        ProbeFilmstrip::kCellHeight),
                  c == m_strip->m_current);
    }
    if (probes.empty()) {
      g.setPen(kUnknown);
      g.drawText(QRect(8, kHeaderHeight, width() - 16, ProbeFilmstrip::kCellHeight),
                 Qt::AlignLeft | Qt::AlignVCenter | Qt::TextWordWrap,
                 QObject::tr("No probe set yet: choose a few images (Choose probes...) and each "
                             "checkpoint reads them."));
    }
  }

 private:
  void paintHeader(QPainter& g, const QFontMetrics& fm) {
    const auto& columns = m_strip->m_columns;
    g.setPen(kUnknown);
    g.drawText(QRect(4, 2, kLabelWidth - 8, 16), Qt::AlignLeft | Qt::AlignVCenter,
               QObject::tr("training step"));
    g.drawText(QRect(4, 42, kLabelWidth - 8, 16), Qt::AlignLeft | Qt::AlignVCenter,
               QObject::tr("probe accuracy"));
    if (columns.empty()) return;
    // The ruler: the steps on a linear axis, as the curves have them, each checkpoint's tick
    // joined to its column.
    const int x0 = kLabelWidth + 4;
    const int x1 = kLabelWidth + int(columns.size()) * ProbeFilmstrip::kCellWidth - 4;
    qint64 last = std::max<qint64>(1, m_strip->m_lastStep);
    for (const auto& c : columns) last = std::max(last, c.step);
    const auto stepX = [&](qint64 step) {
      return x0 + (x1 - x0) * double(std::max<qint64>(0, step)) / double(last);
    };
    g.setPen(QPen(QColor(150, 150, 150), 1));
    g.drawLine(x0, 8, x1, 8);
    g.drawText(QRect(x0, 9, 60, 12), Qt::AlignLeft | Qt::AlignTop, QStringLiteral("0"));
    const QString lastText = QString::number(last);
    g.drawText(QRect(x1 - 80, 9, 80, 12), Qt::AlignRight | Qt::AlignTop, lastText);
    for (int c = 0; c < int(columns.size()); ++c) {
      const double tx = stepX(columns[size_t(c)].step);
      const double cx = kLabelWidth + (c + 0.5) * ProbeFilmstrip::kCellWidth;
      g.setPen(QPen(c == m_strip->m_current ? QColor(21, 101, 192) : QColor(170, 170, 170), 1));
      g.drawLine(QPointF(tx, 5), QPointF(tx, 11));
      g.drawLine(QPointF(tx, 11), QPointF(cx, 24));
      g.setPen(c == m_strip->m_current ? QColor(21, 101, 192) : palette().text().color());
      g.drawText(QRectF(cx - ProbeFilmstrip::kCellWidth / 2.0, 22, ProbeFilmstrip::kCellWidth, 12),
                 Qt::AlignCenter,
                 fm.elidedText(columns[size_t(c)].step >= 0
                                   ? QObject::tr("step %1").arg(columns[size_t(c)].step)
                                   : QFileInfo(columns[size_t(c)].file).fileName(),
                               Qt::ElideRight, ProbeFilmstrip::kCellWidth - 4));
    }
    // The probe set's accuracy at each checkpoint, 0 at the bottom, 1 at the top.
    const std::vector<double> acc = m_strip->accuracy();
    QPainterPath path;
    bool started = false;
    const double top = 42, bottom = kHeaderHeight - 6;
    g.setPen(QPen(QColor(220, 220, 220), 1, Qt::DotLine));
    g.drawLine(QPointF(x0, top), QPointF(x1, top));
    g.drawLine(QPointF(x0, bottom), QPointF(x1, bottom));
    for (size_t c = 0; c < acc.size(); ++c) {
      if (!std::isfinite(acc[c])) continue;
      const QPointF p(kLabelWidth + (c + 0.5) * ProbeFilmstrip::kCellWidth,
                      bottom - (bottom - top) * acc[c]);
      if (!started)
        path.moveTo(p);
      else
        path.lineTo(p);
      started = true;
      g.setPen(Qt::NoPen);
      g.setBrush(QColor(21, 101, 192));
      g.drawEllipse(p, 2.5, 2.5);
      g.setPen(QColor(21, 101, 192));
      g.drawText(QRectF(p.x() + 5, p.y() - (acc[c] > 0.5 ? -1 : 13), 40, 12),
                 Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("%1%").arg(qRound(acc[c] * 100)));
    }
    g.setBrush(Qt::NoBrush);
    g.setPen(QPen(QColor(21, 101, 192), 1.5));
    g.drawPath(path);
  }

  void paintLabel(QPainter& g, const QFontMetrics& fm, const ProbeImage& p, const ProbeVerdict& v,
                  const QRect& r) {
    const QImage img = thumbnail(p.path);
    const QRect box(r.left() + 4, r.top() + 4, r.width() - 8, 30);
    if (!img.isNull()) {
      const QImage s = img.scaled(box.size(), Qt::KeepAspectRatio, Qt::SmoothTransformation);
      g.drawImage(box.topLeft(), s);
    }
    g.setPen(palette().text().color());
    const QString truth =
        p.hasTruth() ? QObject::tr("truth \"%1\"").arg(p.truth) : QFileInfo(p.path).fileName();
    g.drawText(QRect(r.left() + 4, r.top() + 36, r.width() - 8, 14),
               Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(truth, Qt::ElideMiddle, r.width() - 8));
    g.setPen(verdictColour(v));
    g.drawText(QRect(r.left() + 4, r.top() + 51, r.width() - 8, 14),
               Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(v.text(), Qt::ElideRight, r.width() - 8));
  }

  void paintCell(QPainter& g, const QFontMetrics& fm, const ProbeColumn& c, const ProbeImage& p,
                 const QRect& r, bool current) {
    if (current) g.fillRect(r, QColor(21, 101, 192, 28));
    g.setPen(QPen(QColor(215, 215, 215), 1));
    g.drawLine(r.topLeft(), r.bottomLeft());
    const auto it = c.readings.find(p.path);
    const QRect inner = r.adjusted(4, 4, -4, -4);
    if (!c.error.isEmpty() || (it != c.readings.end() && !it->second.error.isEmpty())) {
      g.setPen(kWrong);
      g.drawText(inner, Qt::AlignCenter | Qt::TextWordWrap,
                 fm.elidedText(QObject::tr("cannot be read"), Qt::ElideRight, inner.width()));
      return;
    }
    if (it == c.readings.end()) {
      g.setPen(kUnknown);
      g.drawText(inner, Qt::AlignCenter,
                 m_strip->m_reading == c.key() ? QObject::tr("reading...") : QObject::tr("..."));
      return;
    }
    const ProbeReading& rd = it->second;
    // The image with the attention over its regions (the most any step gave each region).
    const QImage img = thumbnail(p.path);
    const QRect imgBox(inner.left(), inner.top(), inner.width(), kThumbHeight);
    QRect drawn = imgBox;
    if (!img.isNull()) {
      const QSize s = img.size().scaled(imgBox.size(), Qt::KeepAspectRatio);
      drawn = QRect(imgBox.left(), imgBox.top(), s.width(), s.height());
      g.drawImage(drawn, img);
    }
    paintRegionHeat(g, rd, drawn);
    // The alignment under it: a row per step, a column per region.
    const int steps = int(rd.attention.size());
    const int regions = int(rd.regions.size());
    const QRect align(inner.left(), imgBox.bottom() + 2, drawn.width(), kAlignHeight);
    if (steps > 0 && regions > 0 && rd.gridRows <= 1) paintAlignment(g, rd, align);
    paintReadingText(g, rd, inner, align);
  }

  // The reading in bold (its colour says whether it is right) and its confidence under it.
  void paintReadingText(QPainter& g, const ProbeReading& rd, const QRect& inner,
                        const QRect& align) {
    const QColor colour = !rd.correct ? kUnknown : (*rd.correct ? kRight : kWrong);
    g.setPen(colour);
    QFont bold = g.font();
    bold.setBold(true);
    g.setFont(bold);
    const QString text = rd.reading.isEmpty() ? QObject::tr("(empty)") : rd.reading;
    g.drawText(QRect(inner.left(), align.bottom() + 2, inner.width(), 14),
               Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetrics(bold).elidedText(text, Qt::ElideRight, inner.width()));
    g.setFont(font());
    QFont small = font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    g.setFont(small);
    g.setPen(kUnknown);
    g.drawText(QRect(inner.left(), align.bottom() + 16, inner.width(), 12),
               Qt::AlignLeft | Qt::AlignVCenter,
               QObject::tr("conf. %1%2")
                   .arg(rd.confidence, 0, 'f', 2)
                   .arg(rd.decoder == QLatin1String("ctc") ? QObject::tr(" · CTC") : QString()));
  }

  ProbeFilmstrip* m_strip;
  std::map<QString, QImage> m_images;
};

ProbeFilmstrip::ProbeFilmstrip(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* top = new QHBoxLayout;
  m_status = new QLabel(this);
  m_status->setWordWrap(false);
  m_status->setTextFormat(Qt::RichText);
  m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_choose = new QPushButton(tr("Choose &probes..."), this);
  m_choose->setToolTip(
      tr("The images every checkpoint of this run reads (chosen once per run; their truths come "
         "from their names, truth=TEXT, or a gt.txt beside them)"));
  top->addWidget(m_status, 1);
  top->addWidget(m_choose);
  layout->addLayout(top);
  m_scroll = new QScrollArea(this);
  m_scroll->setFrameShape(QFrame::NoFrame);
  m_canvas = new FilmstripCanvas(this);
  m_scroll->setWidget(m_canvas);
  m_scroll->setWidgetResizable(false);
  layout->addWidget(m_scroll, 1);
  connect(m_choose, &QPushButton::clicked, this, &ProbeFilmstrip::chooseProbes);
  connect(&m_watcher, &QFutureWatcher<ProbeJobResult>::finished, this, &ProbeFilmstrip::onFinished);
  updateView();
}

ProbeFilmstrip::~ProbeFilmstrip() { m_watcher.waitForFinished(); }

void ProbeFilmstrip::setRun(const QString& runDir,
                            std::shared_ptr<const core::TrainerRun> trainer) {
  const QString clean =
      runDir.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(runDir).absoluteFilePath());
  if (clean == m_runDir && trainer == m_trainer) return;
  m_runDir = clean;
  m_trainer = std::move(trainer);
  m_queue.clear();
  m_reading.clear();
  m_current = -1;
  m_sideError.clear();
  // Read where it was kept; made only when there is something to keep.
  m_side = m_runDir.isEmpty() ? QString() : probeSideFolder(m_runDir, &m_sideError, false);
  QString error;
  m_probes = loadProbeSet(m_side, &error);
  m_columns = loadProbeColumns(m_side, &error);
  if (!error.isEmpty()) Q_EMIT failed(error);
  m_canvas->forgetImages();
  checkForUpdate();
  updateView();
  Q_EMIT columnsChanged();
}

std::vector<ProbeColumn> ProbeFilmstrip::listCheckpoints() const {
  std::vector<ProbeColumn> out;
  if (m_runDir.isEmpty()) return out;
  if (m_trainer) {
    for (const auto& c : m_trainer->checkpoints()) {
      ProbeColumn col;
      col.file = QString::fromStdString(c.file);
      col.step = c.step;
      col.size = qint64(c.size);
      col.mtimeNs = c.mtimeNs;
      out.push_back(col);
    }
  } else {
    // Foveal's own run: its history, each written whole and renamed into place.
    const QDir dir(QDir(m_runDir).filePath(QString::fromLatin1(core::run_folder::kHistoryDir)));
    for (const QFileInfo& f : dir.entryInfoList({QStringLiteral("iter-*.fvm")}, QDir::Files)) {
      const qint64 it = core::run_folder::historyIteration(f.fileName().toStdString());
      if (it < 0 || f.fileName().toStdString() != core::run_folder::historyFileName(it))
        continue;  // only the names the trainer writes
      ProbeColumn col;
      col.file =
          QString::fromLatin1(core::run_folder::kHistoryDir) + QLatin1Char('/') + f.fileName();
      col.step = it;
      col.size = f.size();
      col.mtimeNs = fileTimeNs(f);
      out.push_back(col);
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const ProbeColumn& a, const ProbeColumn& b) { return a.step < b.step; });
  return out;
}

bool ProbeFilmstrip::isCurrentFile(const ProbeColumn& c) const {
  // The file as it is (its time in Unix nanoseconds, as the trainer's run lists it, to the ms).
  const QFileInfo f(QDir(m_runDir).filePath(c.file));
  return f.isFile() && f.size() == c.size && fileTimeNs(f) / 1000000 == c.mtimeNs / 1000000;
}

void ProbeFilmstrip::checkForUpdate() {
  if (m_runDir.isEmpty()) return;
  bool added = false;
  const auto listed = listCheckpoints();
  for (const auto& l : listed) {
    const auto same = std::find_if(m_columns.begin(), m_columns.end(),
                                   [&](const ProbeColumn& c) { return c.sameVersion(l); });
    if (same == m_columns.end()) {
      m_columns.push_back(l);
      added = true;
    }
  }
  // A version never read that the trainer replaced before it was (best_accuracy.pth rewritten)
  // has nothing to show.
  const auto gone = std::remove_if(m_columns.begin(), m_columns.end(), [&](const ProbeColumn& c) {
    if (!c.readings.empty() || !c.error.isEmpty() || c.key() == m_reading) return false;
    return std::none_of(listed.begin(), listed.end(),
                        [&](const ProbeColumn& l) { return l.sameVersion(c); });
  });
  if (gone != m_columns.end()) {
    m_columns.erase(gone, m_columns.end());
    added = true;
  }
  if (added)
    std::stable_sort(m_columns.begin(), m_columns.end(),
                     [](const ProbeColumn& a, const ProbeColumn& b) { return a.step < b.step; });
  // What still needs reading: a listed version lacking a probe's reading. Newest first: a new
  // checkpoint shows at once, the backlog fills in behind it.
  m_queue.clear();
  if (!m_probes.empty())
    for (auto c = m_columns.rbegin(); c != m_columns.rend(); ++c) {
      if (!c->error.isEmpty() || c->key() == m_reading) continue;
      const bool listedNow = std::any_of(listed.begin(), listed.end(),
                                         [&](const ProbeColumn& l) { return l.sameVersion(*c); });
      if (!listedNow) continue;
      const bool missing = std::any_of(m_probes.begin(), m_probes.end(), [&](const ProbeImage& p) {
        return !c->readings.count(p.path);
      });
      if (missing) m_queue.push_back(c->key());
    }
  if (added) {
    updateView();
    Q_EMIT columnsChanged();
  }
  startNext();
}

void ProbeFilmstrip::startNext() {
  if (m_watcher.isRunning() || m_queue.empty() || m_runDir.isEmpty()) return;
  const QString key = m_queue.front();
  m_queue.pop_front();
  const auto col = std::find_if(m_columns.begin(), m_columns.end(),
                                [&](const ProbeColumn& c) { return c.key() == key; });
  if (col == m_columns.end()) return startNext();
  ProbeJob job;
  job.runDir = m_runDir;
  job.column = *col;
  job.column.readings.clear();
  for (const auto& p : m_probes)
    if (!col->readings.count(p.path)) job.probes.push_back(p);
  if (job.probes.empty()) return startNext();
  m_reading = key;
  m_opened << key;
  m_watcher.setFuture(QtConcurrent::run([job, key]() {
    ProbeJobResult r;
    r.runDir = job.runDir;
    r.key = key;
    r.column = readProbeColumn(job, &r.changed);
    return r;
  }));
  updateView();
}

void ProbeFilmstrip::onFinished() {
  if (!m_watcher.isFinished() || m_watcher.future().resultCount() == 0) return;
  const ProbeJobResult r = m_watcher.result();
  m_reading.clear();
  const auto col = std::find_if(m_columns.begin(), m_columns.end(),
                                [&](const ProbeColumn& c) { return c.key() == r.key; });
  if (r.runDir != m_runDir) {  // the run changed while it read: the new one's turn
    checkForUpdate();
    return;
  }
  if (col != m_columns.end() && !r.changed) {
    if (!r.column.error.isEmpty()) col->error = r.column.error;
    for (const auto& [path, reading] : r.column.readings) col->readings[path] = reading;
    QString error;
    if (m_side.isEmpty()) m_side = probeSideFolder(m_runDir, &m_sideError);
    if (!m_side.isEmpty() && !saveProbeColumns(m_side, m_columns, &error)) Q_EMIT failed(error);
    if (!r.column.error.isEmpty())
      Q_EMIT failed(
          tr("%1 (step %2): %3").arg(r.column.file).arg(r.column.step).arg(r.column.error));
  }
  updateView();
  Q_EMIT columnsChanged();
  checkForUpdate();  // the next one, or a version that arrived meanwhile
}

void ProbeFilmstrip::setProbes(const std::vector<ProbeImage>& probes) {
  m_probes = probes;
  if (m_side.isEmpty() && !m_runDir.isEmpty()) m_side = probeSideFolder(m_runDir, &m_sideError);
  if (!m_side.isEmpty()) {
    QString error;
    if (!saveProbeSet(m_side, m_probes, &error)) Q_EMIT failed(error);
  } else if (!m_sideError.isEmpty()) {
    Q_EMIT failed(m_sideError);
  }
  m_canvas->forgetImages();
  checkForUpdate();
  updateView();
  Q_EMIT columnsChanged();
}

void ProbeFilmstrip::chooseProbes() {
  if (m_runDir.isEmpty()) {
    Q_EMIT failed(tr("Select a run first: each run has its own probe set."));
    return;
  }
  QString start = m_probes.empty() ? QString() : QFileInfo(m_probes.front().path).absolutePath();
  const QStringList files = QFileDialog::getOpenFileNames(
      this, tr("Probe images for %1").arg(QFileInfo(m_runDir).fileName()), start,
      tr("Images (*.png *.jpg *.jpeg *.bmp *.pgm *.ppm *.tif *.tiff *.webp);;All files (*)"));
  if (!files.isEmpty()) setProbes(probesFromFiles(files));
}

ProbeVerdict ProbeFilmstrip::verdict(int probe) const {
  if (probe < 0 || probe >= int(m_probes.size())) return {};
  return probeVerdict(m_columns, m_probes[size_t(probe)]);
}

void ProbeFilmstrip::chooseCell(int probe, int column) {
  if (probe < 0 || probe >= int(m_probes.size()) || column < 0 || column >= int(m_columns.size()))
    return;
  m_current = column;
  m_probeRow = probe;
  m_canvas->update();
  const ProbeColumn& c = m_columns[size_t(column)];
  Q_EMIT stepChosen(double(c.step));
  if (!isCurrentFile(c)) {
    Q_EMIT failed(tr("%1 of step %2 was replaced by the trainer since it was read: the filmstrip "
                     "keeps what it read then, the Inspector can open only the file as it is now.")
                      .arg(c.file)
                      .arg(c.step));
    return;
  }
  Q_EMIT cellChosen(QDir(m_runDir).filePath(c.file), m_probes[size_t(probe)], c.step);
}

void ProbeFilmstrip::setLastStep(qint64 step) {
  if (step == m_lastStep) return;
  m_lastStep = step;
  m_canvas->update();
}

void ProbeFilmstrip::setCurrentStep(double step) {
  int best = -1;
  double dist = 0;
  if (std::isfinite(step))
    for (int c = 0; c < int(m_columns.size()); ++c) {
      const double d = std::abs(double(m_columns[size_t(c)].step) - step);
      if (best < 0 || d < dist) {
        best = c;
        dist = d;
      }
    }
  if (best == m_current) return;
  m_current = best;
  if (best >= 0) {
    const int x = kLabelWidth + best * kCellWidth;
    m_scroll->ensureVisible(x + kCellWidth / 2, 0, kCellWidth, 0);
  }
  m_canvas->update();
}

QString ProbeFilmstrip::statusText() const { return m_status->text(); }

void ProbeFilmstrip::updateView() {
  QString text;
  if (m_runDir.isEmpty()) {
    text = tr("<i>Probe filmstrip: select a run.</i>");
  } else {
    int read = 0;
    for (const auto& c : m_columns) read += !c.readings.empty();
    text = tr("<b>Probes</b> of %1: %n image(s)", nullptr, int(m_probes.size()))
               .arg(QFileInfo(m_runDir).fileName().toHtmlEscaped());
    text += tr(" · %n checkpoint(s)", nullptr, int(m_columns.size()));
    if (!m_reading.isEmpty()) {
      const auto col = std::find_if(m_columns.begin(), m_columns.end(),
                                    [&](const ProbeColumn& c) { return c.key() == m_reading; });
      if (col != m_columns.end())
        text += tr(" · reading %1 (step %2)...").arg(col->file.toHtmlEscaped()).arg(col->step);
    } else if (m_columns.empty()) {
      text += tr(" · <i>waiting for a complete checkpoint</i>");
    }
    if (!m_sideError.isEmpty())
      text += QStringLiteral(" · <span style='color:#c62828'>%1</span>")
                  .arg(m_sideError.toHtmlEscaped());
  }
  m_status->setText(text);
  m_choose->setEnabled(!m_runDir.isEmpty());
  m_canvas->relayout();
}

}  // namespace foveal::ui
