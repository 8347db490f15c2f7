#pragma once
// The compare page's summary: one row per model with its reading, whether it is right, the
// character-level differences against the truth, confidence, mean attention entropy and how many
// steps the doubt setting marks (doubt_marks.h).
#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "trace/trace.h"

namespace foveal::ui {

class CompareSummaryModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    Model,
    Prediction,
    Correct,
    Differences,
    Confidence,
    Entropy,
    Doubtful,
    ColumnCount
  };
  struct Row {
    QString model;
    std::shared_ptr<const core::Trace> trace;  ///< null when the model failed
    QString error;
    /// Scored as eval scores this model (train/evaluation.h): case-folded letters and digits for
    /// a text model or an engine, exactly for a digits model. One rule everywhere (issue 64).
    bool textScoring = false;
    QString path;  ///< the model file (the combined doubt score is per model)
    /// Per step: marked doubtful by the window's doubt setting (doubt_marks.h); empty: none, or
    /// the setting is off (`doubtNote` then says why when it is on).
    std::vector<bool> doubtful;
    QString doubtNote;
  };

  explicit CompareSummaryModel(QObject* parent = nullptr);
  void setRows(std::vector<Row> rows);
  void setTruth(const QString& truth);
  const QString& truth() const { return m_truth; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  /// "4[6→5]2_14" style description of the edits from truth to prediction.
  static QString differences(const QString& prediction, const QString& truth);
  /// "2 of 7": the row's doubtful steps under the doubt setting; "–" while it is off.
  static QString doubtText(const Row& r);

 private:
  std::vector<Row> m_rows;
  QString m_truth;
};

}  // namespace foveal::ui
