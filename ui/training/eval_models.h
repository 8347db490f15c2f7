#pragma once
// Item models for `foveal-cli eval --json` results: EvalResultModel shows one report as a table
// of datasets (images, accuracy, normalised edit distance, entropy; pointing accuracy and mean
// IoU where the data knows its character boxes), or, for the digit protocol, one row per model in
// the layout of the paper's Table 1 (n5 .. n13, r5 .. r13, mean, then pointing accuracy and IoU).
// FailureModel lists the misread images of `--failures` (dataset, entry, truth, reading).
#include <QAbstractTableModel>
#include <QJsonDocument>
#include <QStringList>
#include <vector>

namespace foveal::ui {

class EvalResultModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit EvalResultModel(QObject* parent = nullptr);

  /// Parses eval's JSON: an object (one report) or an array (the digit protocol). Returns an
  /// error message, or "" when it was understood.
  QString setJson(const QByteArray& json, bool digitProtocol);
  void clear();
  bool isProtocol() const { return m_protocol; }
  /// Entries left out because the model cannot read them (labels outside its charset...),
  /// over every dataset of the report(s).
  qint64 skipped() const { return m_skipped; }
  /// The line under the results: how many were misread, and how many skipped and why.
  QString summary(const QString& model, int misread) const;
  /// The ten column keys of Table 1 ("n5" ... "r13").
  static QStringList protocolColumns();
  /// "n7" for digits:len=7,..., "r9" for digits:len=9,rotated,...; "" otherwise.
  static QString protocolKey(const QString& datasetSpec);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Row {
    QString name;
    std::vector<double> values;  ///< per column after the name; NaN: no value
    bool summary = false;
  };
  /// The digit protocol's rows: a model each, Table 1's columns, the mean, localisation.
  void setProtocolRows(const std::vector<QJsonObject>& reports);
  /// One report's rows: each dataset, "all" (with several), each label length.
  void setDatasetRows(const QJsonObject& report);
  QStringList m_headers;
  std::vector<Row> m_rows;
  bool m_protocol = false;
  qint64 m_skipped = 0;
  qint64 m_counted = 0;
};

class FailureModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Dataset, Entry, Truth, Reading, ColumnCount };
  struct Failure {
    QString dataset;
    qint64 index = 0;
    QString entry, truth, prediction;
  };
  explicit FailureModel(QObject* parent = nullptr);

  /// Parses the TSV eval writes (one header line). Returns the number of failures read.
  int setTsv(const QString& tsv);
  void clear();
  const Failure& failure(int row) const { return m_rows[size_t(row)]; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::vector<Failure> m_rows;
};

}  // namespace foveal::ui
