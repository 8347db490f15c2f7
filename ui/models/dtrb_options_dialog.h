#pragma once
// What a deep-text-recognition-benchmark .pth does not hold (its characters, input size,
// keep-ratio padding, decoding length), asked when Foveal cannot infer it and remembered per file.
#include <QDialog>
#include <optional>

#include "formats/dtrb_import.h"

class QCheckBox;
class QLineEdit;
class QSpinBox;

namespace foveal::ui {

class DtrbOptionsDialog : public QDialog {
  Q_OBJECT

 public:
  /// `architecture`: what the file's keys say (DtrbArchitecture::describe()); `why`: why asking.
  DtrbOptionsDialog(const QString& file, const QString& architecture, const QString& why,
                    const core::DtrbOptions& initial, QWidget* parent = nullptr);
  core::DtrbOptions options() const;

 private:
  QLineEdit* m_characters;
  QCheckBox* m_sensitive;
  QSpinBox* m_imgH;
  QSpinBox* m_imgW;
  QCheckBox* m_pad;
  QSpinBox* m_length;
};

/// The options remembered for `path` (absolute), if any.
std::optional<core::DtrbOptions> rememberedDtrbOptions(const QString& path);
void rememberDtrbOptions(const QString& path, const core::DtrbOptions& options);
void forgetDtrbOptions(const QString& path);
/// Asks for the characters of `path`, whose `classes` classes fit none of DTRB's standard sets,
/// and remembers the answer; false when the user declines.
bool askDtrbCharacters(const QString& path, const QString& architecture, int classes,
                       QWidget* parent);

}  // namespace foveal::ui
