#pragma once
// The reading's own controls, for a page's toolbar: the truth the image should read, the
// decoding (greedy, or a beam search of some width) and which steps are marked doubtful (the
// signal and its threshold, doubt_marks.h). The first two belong to the document, the doubt
// setting to the window: each page that shows them builds its own set, and every set follows.
#include <QList>
#include <QObject>

class QAction;

namespace foveal::ui {

class ReadingDocument;

class ReadingControls : public QObject {
  Q_OBJECT
 public:
  enum Control { Truth = 0x1, Beam = 0x2, Doubt = 0x4 };

  /// `controls`: the Control flags of the ones to build.
  ReadingControls(ReadingDocument* document, int controls, QObject* parent);

  /// For a page's toolBarActions(): the truth field, then the beam box, then the doubt signal
  /// and threshold, each with its label.
  QList<QAction*> actions() const { return m_actions; }

 Q_SIGNALS:
  /// Typing is over (Enter or Escape in the truth field, a width chosen in the beam box): the
  /// step keys go back to the page's view.
  void finished();

 private:
  void addSeparator();
  void buildDoubt();
  QList<QAction*> m_actions;
};

}  // namespace foveal::ui
