#pragma once
// The models open in this window (the bundled samples are listed by default). Each row is a
// model file. Files are loaded off the GUI thread (a full-size model is tens of megabytes): a
// row shows "loading..." until modelLoaded() or loadFailed() arrives; a file that cannot be
// loaded keeps its row with the error (shown in red) unless the caller removes it.
// Rows are checkable: the checked models (two to four) are the ones the compare page shows.
// Each entry has an id that stays with it while rows around it come and go: whoever remembers a
// model (the document, a load in flight, a question being asked) keeps its id, never its row.
#include <QAbstractListModel>
#include <QStringList>
#include <QThreadPool>
#include <map>
#include <memory>
#include <vector>

#include "import_question.h"

namespace foveal::core {
class ModelSession;
}

namespace foveal::ui {

/// A model entry's id: unique for the life of the list, never reused; 0 is no model.
using ModelId = quint64;

class ModelListModel : public QAbstractListModel {
  Q_OBJECT
 public:
  enum Role { PathRole = Qt::UserRole + 1, DescriptionRole, ErrorRole, LoadedRole, LoadingRole };
  static constexpr int kMaxCompared = 4;

  explicit ModelListModel(QObject* parent = nullptr);
  ~ModelListModel() override;

  /// Adds a model file and loads it on the calling thread (tools and tests; the window uses
  /// loadModel). Returns its id; on a load error the row is kept with the error and `error`
  /// receives the message.
  ModelId addModel(const QString& path, QString* error = nullptr);
  /// Adds a model file and loads it on a worker thread; returns its id at once. A file already
  /// listed, loaded or loading, keeps its entry; one that failed is loaded again.
  ModelId loadModel(const QString& path);
  void removeModel(int row);
  /// Adds every *.fvm in `folder`, loaded off the GUI thread (checked up to kMaxCompared).
  void addFolder(const QString& folder);

  ModelId idAt(int row) const;  ///< 0 outside the list
  int rowOf(ModelId id) const;  ///< -1 for an id no longer (or never) listed
  /// The entry of a file (any spelling of its path); 0 when it is not listed.
  ModelId idOf(const QString& path) const;

  std::shared_ptr<core::ModelSession> session(int row) const;
  QString path(int row) const;
  /// The file's base name; a name that two rows share, or a run's checkpoint (latest, best),
  /// is prefixed with its folder ("run-a/latest").
  QString displayName(int row) const;
  bool isLoading(int row) const;
  /// The import options a file is opened with (what it does not hold: a DTRB .pth's charset and
  /// sizes; "format" forces one), used by its next load; empty options: the import's defaults.
  void setImportOptions(const QString& path, const core::ImportOptions& options);
  /// Rows still loading.
  int loadingCount() const;
  /// Rows checked for comparison, loaded ones only, in list order.
  std::vector<int> comparedRows() const;
  /// The same entries by id.
  std::vector<ModelId> comparedIds() const;
  /// The files of the ticked rows, loaded or still loading, in list order (what the session
  /// keeps: a model still loading is ticked all the same).
  QStringList checkedPaths() const;
  /// Checks the rows whose path is in `paths` (up to kMaxCompared) and unchecks the others.
  void setCompared(const QStringList& paths);

  int rowCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;

 Q_SIGNALS:
  void comparedChanged();
  /// A row could not be ticked: kMaxCompared are ticked already.
  void compareLimitReached();
  /// A file given to loadModel()/addFolder() is loaded (emitted before comparedChanged()).
  void modelLoaded(foveal::ui::ModelId id);
  /// A file given to loadModel()/addFolder() cannot be used; `message` names it.
  void loadFailed(foveal::ui::ModelId id, const QString& message);
  /// A file given to loadModel() could not be imported without an answer: nothing names its
  /// characters (core::DtrbCharsetNeeded, a DTRB or EasyOCR file), or the import refused an
  /// option it was given, naming it (--character has 10 characters ...). The row stays failed
  /// until loadModel() reads it again (after setImportOptions()); `question` says which format,
  /// why, and the message.
  void optionsNeeded(foveal::ui::ModelId id, const foveal::ui::ImportQuestion& question);

 private:
  struct Entry {
    ModelId id = 0;
    QString path;
    std::shared_ptr<core::ModelSession> session;
    QString description;
    QString error;
    bool checked = false;
    bool loading = false;
  };
  struct LoadResult {
    std::shared_ptr<core::ModelSession> session;
    QString description;
    QString error;
    bool optionsNeeded = false;  ///< the import needs an answer: `question` asks it
    ImportQuestion question;
  };
  static LoadResult load(const QString& path, const core::ImportOptions& options);
  void startLoad(Entry& e);
  void onLoaded(ModelId id, const LoadResult& result);
  int checkedCount() const;

  std::vector<Entry> m_entries;
  std::map<QString, core::ImportOptions> m_options;  ///< per file, by absolute path
  ModelId m_nextId = 1;
  QThreadPool m_pool;  ///< loads; its destructor waits for the ones still running
};

}  // namespace foveal::ui
