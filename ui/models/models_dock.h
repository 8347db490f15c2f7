#pragma once
// The Models dock: the document's model files, ticked ones compared and a double-click
// inspecting one, with Add and Remove.
#include <QDockWidget>

class QListView;

namespace foveal::ui {

class ReadingDocument;

class ModelsDock : public QDockWidget {
  Q_OBJECT
 public:
  ModelsDock(ReadingDocument* document, QWidget* parent = nullptr);

  QListView* view() const { return m_view; }

 Q_SIGNALS:
  /// Add... was clicked: the window asks for the file as File > Open Model does.
  void addRequested();
  /// A model was double-clicked and is now the document's inspected one.
  void inspected();
  /// A double-clicked model cannot be used: the reason, naming the file.
  void failed(const QString& message);
  void message(const QString& text);

 private:
  ReadingDocument* m_document;
  QListView* m_view;
};

}  // namespace foveal::ui
