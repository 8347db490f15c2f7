#pragma once
// Every step's patch in reading order with its token underneath, like the paper's Figures 3 and
// 4: the receptive field (hard), the alpha-weighted field (soft) or the STN output (sharp).
// Tokens that disagree with the truth are red; a step whose focus misses its character's true box
// (when the data knows the boxes) gets a red frame and a "miss" mark; a step the doubt setting
// flags (doubt_marks.h) an amber bar and a "?". Click a patch to select its
// step. Inside a QScrollArea the strip keeps its full width and scrolls the selected step into
// view.
#include <QImage>
#include <QWidget>
#include <memory>
#include <vector>

#include "trace/trace.h"

namespace foveal::ui {

class PatchStrip : public QWidget {
  Q_OBJECT
 public:
  explicit PatchStrip(QWidget* parent = nullptr);

  void setTrace(std::shared_ptr<const core::Trace> trace);
  /// The expected transcription; empty when unknown.
  void setTruth(const QString& truth);
  /// Each character's true box in source pixels (empty: unknown): marks the steps that miss.
  void setTruthBoxes(std::vector<core::Box> boxes);
  /// Per step: 1 its focus lies in its character's true box, 0 a miss, -1 unknown.
  const std::vector<int>& hits() const { return m_hits; }
  void setStep(int step);
  int stepAt(const QPoint& p) const;
  /// The cell of `step` (its patch and token) in widget coordinates.
  QRect stepRect(int step) const;
  /// Per step: false when the token is wrong against the truth (all true without a truth).
  const std::vector<bool>& correct() const { return m_correct; }
  /// Per step: whether it is marked doubtful (doubt_marks.h): an amber bar under its token and
  /// a "?" tag. Empty: none. setTrace() clears them.
  void setDoubtful(std::vector<bool> flags);
  const std::vector<bool>& doubtful() const { return m_doubtful; }
  /// Screen pixels per patch pixel (2: the inspector; 1: the compare page's compact cards).
  void setScale(double scale);
  double scale() const { return m_scale; }
  /// Renders the strip alone (for export) at `scale` pixels per patch pixel.
  QImage render(double scale = 2.0) const;
  QSize sizeHint() const override;
  /// A step's patch as the strip draws it: one under 24 rows enlarged by a whole factor towards
  /// 32 (nearest neighbour), one over 32 rows shrunk to 32, any other as it is.
  static QImage shownPatch(const QImage& patch);
  /// As wide as every step: inside a scroll area the strip scrolls instead of squeezing.
  QSize minimumSizeHint() const override { return sizeHint(); }

 Q_SIGNALS:
  void stepClicked(int step);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void paintStrip(QPainter& p, double scale) const;
  void paintDoubtMark(QPainter& p, const QRectF& target, double x, double cw, double scale,
                      const QFont& font) const;
  void updateCorrect();
  void updateHits();
  void scrollToStep();
  double cellWidth(double scale) const;

  std::shared_ptr<const core::Trace> m_trace;
  double m_scale = 2.0;
  std::vector<QImage> m_patches;
  std::vector<bool> m_correct;
  std::vector<bool> m_doubtful;
  std::vector<int> m_hits;
  std::vector<core::Box> m_truthBoxes;
  QString m_truth;
  int m_step = 0;
  QWidget* m_watchedViewport = nullptr;  ///< the scroll area's viewport, re-scrolled on resize
};

}  // namespace foveal::ui
