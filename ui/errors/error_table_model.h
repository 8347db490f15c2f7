#pragma once
// The Errors page's table: one row per dataset image of an error analysis, with its thumbnail,
// truth and length, then the models' readings side by side, who read it right (with several
// models), and each model's confidence, edit distance, CER, mean attention entropy and (when
// measured) how much of its least-read step came from the image, and the doubt of its worst step
// (the lowest probability a step gave its token). Qt::UserRole
// holds the value to sort by; thumbnails are read from the dataset when a row is first shown.
#include <QAbstractTableModel>
#include <QCache>
#include <QImage>
#include <memory>
#include <vector>

#include "data/dataset.h"
#include "train/error_analysis.h"

namespace foveal::ui {

class ErrorTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Role { SortRole = Qt::UserRole, DatasetIndexRole };
  enum FixedColumn { Image, Entry, Truth, Length, FixedColumns };
  enum ModelColumn { Reading, Confidence, Doubt, Edits, Cer, Entropy, ImageShare, ModelColumns };
  /// A worst step under this probability is drawn as doubtful in the Doubt column.
  static constexpr double kDoubtfulProbability = 0.9;
  static constexpr QSize kThumbnail{150, 28};

  explicit ErrorTableModel(QObject* parent = nullptr);

  /// Shows `analysis`; `dataset` (may be null) gives the thumbnails.
  void setAnalysis(std::shared_ptr<const core::train::ErrorAnalysis> analysis,
                   core::data::DatasetPtr dataset);
  void clear();
  const core::train::ErrorAnalysis* analysis() const { return m_analysis.get(); }
  core::data::DatasetPtr dataset() const { return m_dataset; }

  int modelCount() const;
  /// The column of a model's field.
  int column(int model, ModelColumn field) const;
  /// The "right" column (who read the image right), -1 with one model.
  int rightColumn() const;
  /// The dataset entry of a row.
  size_t datasetIndex(int row) const { return m_entries[size_t(row)]; }
  /// The row of a dataset entry, -1 when no model read it.
  int rowOf(size_t datasetIndex) const;
  /// Position of the row's image in model `m`'s readings, -1 where that model skipped it.
  int position(int row, int model) const;
  /// Whether model `m` read the row's image right (false where it skipped it).
  bool correct(int row, int model) const;
  /// How many models read the row's image right, and how many read it at all.
  std::pair<int, int> rightCount(int row) const;
  QString truth(int row) const;
  QImage thumbnail(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  const core::train::ImageReading* reading(int row, int model) const;
  /// data() by kind of column: the image's own, "right", and a model's fields.
  QVariant fixedData(int row, FixedColumn col, int role) const;
  QVariant rightData(int row, int role) const;
  QVariant readingData(const core::train::ImageReading& r, const core::train::ImageErrors& e,
                       ModelColumn field, int role) const;
  QVariant imageShareData(const core::train::ImageErrors& e, int role) const;
  QVariant doubtData(const core::train::ImageReading& r, int role) const;
  /// The model and field of a column; false for the fixed columns and "right".
  bool modelField(int column, int* model, ModelColumn* field) const;

  std::shared_ptr<const core::train::ErrorAnalysis> m_analysis;
  core::data::DatasetPtr m_dataset;
  std::vector<size_t> m_entries;
  mutable QCache<int, QImage> m_thumbnails{4000};
};

}  // namespace foveal::ui
