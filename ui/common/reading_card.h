#pragma once
// One model's reading of one image as a compact card: a title, the image with its overlays, a
// line of information and the strip of every step's patch, which scrolls (the card's width never
// grows with the number of steps). The compare page shows one per model, the Training page's
// live preview one for the latest checkpoint.
#include <QFrame>

class QLabel;
class QScrollArea;

namespace foveal::ui {

class PatchStrip;
class TraceView;

class ReadingCard : public QFrame {
  Q_OBJECT
 public:
  explicit ReadingCard(QWidget* parent = nullptr);

  QLabel* title() const { return m_title; }
  TraceView* view() const { return m_view; }
  QLabel* info() const { return m_info; }
  PatchStrip* strip() const { return m_strip; }
  QScrollArea* stripArea() const { return m_stripArea; }
  /// Compact: the strip's patches at their own size (half the height), for several cards in a
  /// row on a laptop screen.
  void setCompact(bool compact);

 private:
  QLabel* m_title;
  TraceView* m_view;
  QLabel* m_info;
  PatchStrip* m_strip;
  QScrollArea* m_stripArea;
};

}  // namespace foveal::ui
