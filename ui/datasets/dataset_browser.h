#pragma once
// A dock that opens a dataset (LMDB folder, folder with gt.txt, gt.txt, packed file, or a
// generated spec such as digits:len=7,rotated,split=test) and lists its entries with their
// truth labels; choosing one shows it in the inspector with its truth.
#include <QImage>
#include <QWidget>
#include <vector>

#include "model/geometry.h"

class QLabel;
class QLineEdit;
class QListView;
class QStringListModel;

namespace foveal::ui {

class DatasetModel;

class DatasetBrowser : public QWidget {
  Q_OBJECT
 public:
  explicit DatasetBrowser(QWidget* parent = nullptr);

  /// Opens a path or spec; returns false and emits failed() with the data layer's message.
  bool openDataset(const QString& argument);
  /// Emits entryChosen for entry `row` (or failed when it cannot be read).
  void chooseEntry(int row);
  DatasetModel* model() const { return m_model; }
  /// The datasets opened before, newest first (the spec field offers them).
  QStringList recentDatasets() const;
  /// Opens the last dataset at the entry last shown; false when the last image was not an entry.
  bool restoreLastEntry();
  /// The image shown now is not a dataset entry: the session does not bring an entry back.
  void forgetEntry();
  QListView* view() const { return m_view; }

 Q_SIGNALS:
  /// `truthBoxes`: each character's true box in the image's pixels, when the data knows them.
  void entryChosen(const QImage& image, const QString& source, const QString& truth,
                   const std::vector<foveal::core::Box>& truthBoxes);
  void failed(const QString& message);

 private:
  DatasetModel* m_model;
  QLineEdit* m_spec;
  QListView* m_view;
  QLabel* m_info;
  QStringListModel* m_recent;
};

}  // namespace foveal::ui
