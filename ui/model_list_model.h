#pragma once
// The models open in this window (the bundled samples are listed by default). Each row is a
// model file; it is loaded on first use and a file that cannot be loaded keeps its error.
// Rows are checkable: the checked models (two to four) are the ones the compare page shows.
#include <QAbstractListModel>
#include <QStringList>
#include <memory>
#include <vector>

namespace foveal::core {
class ModelSession;
}

namespace foveal::ui {

class ModelListModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Role { PathRole = Qt::UserRole + 1, DescriptionRole, ErrorRole, LoadedRole };
  static constexpr int kMaxCompared = 4;

  explicit ModelListModel(QObject* parent = nullptr);

  /// Adds a model file and loads it. Returns its row; on a load error the row is kept with the
  /// error (shown in red) and `error` receives the message.
  int addModel(const QString& path, QString* error = nullptr);
  void removeModel(int row);
  /// Adds every *.fvm in `folder` (unchecked beyond the first kMaxCompared).
  void addFolder(const QString& folder);

  std::shared_ptr<core::ModelSession> session(int row) const;
  QString path(int row) const;
  QString displayName(int row) const;
  /// Rows checked for comparison, loaded ones only, in list order.
  std::vector<int> comparedRows() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 Q_SIGNALS:
  void comparedChanged();

 private:
  struct Entry {
    QString path;
    std::shared_ptr<core::ModelSession> session;
    QString description;
    QString error;
    bool checked = false;
  };
  std::vector<Entry> m_entries;
};

}  // namespace foveal::ui
