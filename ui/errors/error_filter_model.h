#pragma once
// The Errors page's filters over ErrorTableModel: right / wrong (for the chosen model, any model,
// every model, or where the models disagree), a label-length range, a character confusion of the
// chosen model (the images behind a confusion-matrix cell) and a text searched in the truth and
// every reading. Sorts by ErrorTableModel::SortRole, so numbers sort as numbers.
#include <QSortFilterProxyModel>
#include <unordered_set>

namespace foveal::ui {

class ErrorTableModel;

class ErrorFilterModel : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  enum Status { All, Wrong, Right, WrongByAny, WrongByAll, Disagree };

  explicit ErrorFilterModel(QObject* parent = nullptr);
  void setTable(ErrorTableModel* table);

  /// The model the status and the confusion filters are about.
  void setFocusModel(int model);
  int focusModel() const { return m_focus; }
  void setStatus(Status status);
  Status status() const { return m_status; }
  /// Label lengths in [min, max]; 0 leaves a side open.
  void setLengthRange(int min, int max);
  /// Only the images whose alignment (for the focus model) has truth character `truth` read as
  /// `read` ("" on either side: an insertion or a deletion). Returns false, keeping the previous
  /// filter, when that pair never occurs.
  bool setConfusion(const QString& truth, const QString& read);
  /// The same by the focus model's confusion-matrix cell.
  bool setConfusionCell(int truthIndex, int readIndex);
  void clearConfusion();
  bool hasConfusion() const { return m_confusionOn; }
  /// "truth 7 read as 1", "" without a confusion filter.
  QString confusionText() const;
  /// Case-insensitive, in the truth or any model's reading.
  void setText(const QString& text);
  /// The dataset entries of the rows shown, in the order shown.
  std::vector<size_t> shownEntries() const;

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  void refilter();

  ErrorTableModel* m_table = nullptr;
  int m_focus = 0;
  Status m_status = All;
  int m_minLength = 0, m_maxLength = 0;
  bool m_confusionOn = false;
  int m_confusionTruth = -1, m_confusionRead = -1;
  std::unordered_set<size_t> m_confusionEntries;  ///< dataset indices behind the cell
  QString m_text;
};

}  // namespace foveal::ui
