#pragma once
// The one dialog that asks what a model file does not say, built from the format registry
// (core/formats/model_format.h) so that every format, a new one included, gets it: the format
// the file's content was recognised as and why, a choice of another, and each option of the
// chosen format (a check box for a flag, else a line edit showing the default) with its help.
// The import's message, when it made the window ask, is shown under the option it names.
#include <QDialog>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "import_question.h"

class QComboBox;
class QLabel;
class QPushButton;
class QScrollArea;

namespace foveal::ui {

class ImportOptionsDialog : public QDialog {
  Q_OBJECT

 public:
  explicit ImportOptionsDialog(const ImportQuestion& question, QWidget* parent = nullptr);

  /// The answers for the chosen format: each option filled in (a flag checked is "1", text as
  /// typed; an empty field is left to the import's default), and "format" when the chosen
  /// format is not the one the content was recognised as.
  core::ImportOptions options() const;
  /// The chosen format's registry name; empty while none is chosen (no format claimed the file).
  QString format() const;
  /// Chooses a format and shows its options; what was typed into an option that the new format
  /// shares (its characters) is kept.
  void setFormat(const QString& name);
  /// The widget of the chosen format's option `key` (QCheckBox for a flag, else QLineEdit), or
  /// nullptr when it has none.
  QWidget* optionWidget(const QString& key) const;
  /// The option whose row shows the import's message; empty when the message names none of the
  /// chosen format's options (it is shown above them then) or there is none.
  QString faultyOption() const { return m_faulty; }
  /// The import's message as shown (without the file's path, which the dialog names above).
  QString message() const { return m_message; }

 protected:
  void showEvent(QShowEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void keepValues();
  void showOptions();
  void fitOptions();

  ImportQuestion m_question;
  QString m_message;
  QString m_faulty;
  QComboBox* m_format;
  QLabel* m_summary;
  QLabel* m_topMessage;  ///< the message when it names no option shown
  QScrollArea* m_scroll;
  QPushButton* m_open;
  std::map<std::string, QWidget*> m_widgets;    ///< the shown options' widgets by key
  std::map<std::string, std::string> m_values;  ///< what was given or typed, by key
};

/// File > Open Model with Options...: reads which format `path` is off the GUI thread (a
/// torch.save file is parsed whole), then shows the dialog with `initial` filled in; `answered`
/// receives the options when the user opens the file with them, nothing when they cancel.
void askImportOptions(const QString& path, const core::ImportOptions& initial, QWidget* parent,
                      std::function<void(std::optional<core::ImportOptions>)> answered);

}  // namespace foveal::ui
