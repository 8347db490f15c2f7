#pragma once
// The current step's top-k tokens as a table (token, probability) for the inspector.
#include <QAbstractTableModel>
#include <memory>

#include "trace/trace.h"

namespace foveal::ui {

class TopkModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { TokenColumn, ProbabilityColumn, ColumnCount };
  explicit TopkModel(QObject* parent = nullptr);

  void setTrace(std::shared_ptr<const core::Trace> trace);
  void setStep(int step);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  const core::TraceStep* current() const;

  std::shared_ptr<const core::Trace> m_trace;
  int m_step = 0;
};

}  // namespace foveal::ui
