#pragma once
// Entries of an opened dataset (any source the data layer reads) as a list: "#index  label".
// Labels are fetched lazily in chunks, so a 100,000-entry LMDB opens at once.
#include <QAbstractListModel>
#include <memory>
#include <vector>

#include "data/dataset.h"

namespace foveal::ui {

class DatasetModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Role { IndexRole = Qt::UserRole + 1, LabelRole };
  static constexpr int kChunk = 256;

  explicit DatasetModel(QObject* parent = nullptr);

  void setDataset(core::data::DatasetPtr dataset);
  core::data::DatasetPtr dataset() const { return m_dataset; }
  /// Total entries of the dataset (rowCount() grows towards it as rows are fetched).
  int total() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool canFetchMore(const QModelIndex& parent) const override;
  void fetchMore(const QModelIndex& parent) override;

 private:
  core::data::DatasetPtr m_dataset;
  std::vector<QString> m_labels;  ///< fetched so far; an unreadable label is kept as its error
  std::vector<bool> m_bad;
};

}  // namespace foveal::ui
