#pragma once
// The N best readings of a beam search, each with its score (log p of its tokens), in the
// inspector: choosing one asks for that hypothesis's steps (the model decodes it again with its
// tokens and regions forced, as it does the best one). Hidden for greedy decoding.
#include <QTreeWidget>
#include <memory>

#include "trace/trace.h"

namespace foveal::ui {

class BeamList : public QTreeWidget {
  Q_OBJECT
 public:
  enum Column { RankColumn, ReadingColumn, LogProbColumn, ColumnCount };
  explicit BeamList(QWidget* parent = nullptr);

  /// Lists the trace's hypotheses and selects the one it shows (hidden when it has none).
  void setTrace(std::shared_ptr<const core::Trace> trace);
  int rows() const { return topLevelItemCount(); }
  /// The selected row (the hypothesis shown), -1 when none.
  int currentRow() const;
  void setCurrentRow(int row);
  /// The text of row `row`, its columns separated by two spaces ("2  46214  -1.234").
  QString rowText(int row) const;
  /// Where row `row` is drawn, in viewport coordinates.
  QRect rowRect(int row) const;
  QSize sizeHint() const override;

 Q_SIGNALS:
  /// The user chose hypothesis `index` (0: the best) of the shown trace.
  void hypothesisChosen(int index);

 private:
  std::shared_ptr<const core::Trace> m_trace;
};

}  // namespace foveal::ui
