#pragma once
// The N best readings of a beam search, each with its score (log p of its tokens, and p), in the
// inspector: choosing one asks for that hypothesis's steps (the model decodes it again with its
// tokens and regions forced, as it does the best one). Hidden for greedy decoding.
#include <QListWidget>
#include <memory>

#include "trace.h"

namespace foveal::ui {

class BeamList : public QListWidget {
  Q_OBJECT
 public:
  explicit BeamList(QWidget* parent = nullptr);

  /// Lists the trace's hypotheses and selects the one it shows (hidden when it has none).
  void setTrace(std::shared_ptr<const core::Trace> trace);
  /// The text of row `row` ("2.  \"46214\"  log p -1.23 (p 0.29)").
  QString rowText(int row) const;
  QSize sizeHint() const override;

 Q_SIGNALS:
  /// The user chose hypothesis `index` (0: the best) of the shown trace.
  void hypothesisChosen(int index);

 private:
  std::shared_ptr<const core::Trace> m_trace;
};

}  // namespace foveal::ui
