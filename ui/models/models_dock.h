#pragma once
// The Models dock: the document's model files, ticked ones compared and a double-click
// inspecting one, with Add, Tesseract (a reference engine named by its tesseract:LANG spec) and
// Remove.
#include <QDockWidget>

class QListView;
class QModelIndex;
class QPushButton;

class QCustomPlot;

namespace foveal::ui {

class ReadingDocument;

class ModelsDock : public QDockWidget {
  Q_OBJECT
 public:
  ModelsDock(ReadingDocument* document, QWidget* parent = nullptr);

  QListView* view() const { return m_view; }
  /// The training curve the current model's file holds (kraken stores its validation accuracy
  /// per evaluation), hidden for files that hold none.
  QCustomPlot* storedHistoryPlot() const { return m_history; }
  /// The Tesseract... button (disabled, saying why, in a build without Tesseract).
  QPushButton* tesseractButton() const { return m_tesseract; }

 Q_SIGNALS:
  /// Add... was clicked: the window asks for the file as File > Open Model does.
  void addRequested();
  /// Tesseract... was answered with a spec (tesseract:eng[,psm=N]): open it as a model.
  void engineRequested(const QString& spec);
  /// A model was double-clicked and is now the document's inspected one.
  void inspected();
  /// A double-clicked model cannot be used: the reason, naming the file.
  void failed(const QString& message);
  void message(const QString& text);

 private:
  /// The plot of the stored training curve (m_history), hidden until a model has one.
  void buildStoredHistoryPlot(QWidget* panel);
  /// Tesseract...: asks for the spec, checks it (failed() with the reason) and asks for the
  /// engine (engineRequested()).
  void askForTesseract();
  /// A double-click on a model: inspects it (failed() when it cannot be used).
  void inspectModel(const QModelIndex& index);
  /// Shows the stored curve of the model in `row` (hides the plot when it has none).
  void showStoredHistory(int row);

  ReadingDocument* m_document;
  QListView* m_view;
  QCustomPlot* m_history;
  QPushButton* m_tesseract;
};

}  // namespace foveal::ui
