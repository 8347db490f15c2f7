#pragma once
// Typed settings, each declared once next to its use: Setting<T> reads and writes one QSettings
// key with a default. Only ui/ and app/ touch QSettings.
#include <QSettings>
#include <QString>
#include <QVariant>

namespace foveal::ui {

template <typename T>
class Setting {
 public:
  Setting(QString key, T fallback) : m_key(std::move(key)), m_default(std::move(fallback)) {}
  T value() const {
    return QSettings().value(m_key, QVariant::fromValue(m_default)).template value<T>();
  }
  void set(const T& v) const { QSettings().setValue(m_key, QVariant::fromValue(v)); }
  const QString& key() const { return m_key; }

 private:
  QString m_key;
  T m_default;
};

/// Where the window's file dialogs start (opening an image or a model, exporting): the folder a
/// file was last opened from. Shared by the window and the exports it offers.
inline const Setting<QString> kLastFolder(QStringLiteral("inspector/lastFolder"), {});

}  // namespace foveal::ui
