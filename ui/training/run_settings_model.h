#pragma once
// The settings that differ between the ticked runs, one row per run and one column per setting,
// with each run's best evaluation accuracy: what TensorBoard's and W&B's run tables show beside
// the curves. Settings come from each run's config.json (nested keys dotted, "model.width"); a
// setting every ticked run shares is left out. Numbers sort as numbers (Qt::EditRole).
#include <QAbstractTableModel>
#include <QDateTime>
#include <QStringList>
#include <map>
#include <vector>

namespace foveal::ui {

class RunListModel;

class RunSettingsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit RunSettingsModel(RunListModel* runs, QObject* parent = nullptr);

  /// The setting keys shown as columns after the run's name (then "best acc.").
  QStringList settingKeys() const { return m_keys; }
  /// Reads the ticked runs' settings again (called on every change of the runs list).
  void rebuild();

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  struct Settings {
    QDateTime modified;
    std::map<QString, QVariant> values;
  };
  const Settings& settingsOf(const QString& dir);

  RunListModel* m_runs;
  std::map<QString, Settings> m_cache;  ///< per run folder, read again when config.json changes
  QStringList m_keys;
  struct Row {
    int run = -1;
    std::vector<QVariant> values;  ///< per key
    double best = 0;
  };
  std::vector<Row> m_rows;
};

}  // namespace foveal::ui
