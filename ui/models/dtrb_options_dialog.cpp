#include "dtrb_options_dialog.h"

#include <QCheckBox>
#include <QCryptographicHash>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace foveal::ui {

namespace {
QString settingsKey(const QString& path) {
  const QByteArray hash = QCryptographicHash::hash(QFileInfo(path).absoluteFilePath().toUtf8(),
                                                   QCryptographicHash::Sha1)
                              .toHex()
                              .left(16);
  return QStringLiteral("dtrb-options/") + QString::fromLatin1(hash);
}
}  // namespace

DtrbOptionsDialog::DtrbOptionsDialog(const QString& file, const QString& architecture,
                                     const QString& why, const core::DtrbOptions& initial,
                                     QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Open deep-text-recognition-benchmark model"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(tr("<b>%1</b><br>%2<br><br>%3")
                               .arg(QFileInfo(file).fileName().toHtmlEscaped(),
                                    architecture.toHtmlEscaped(), why.toHtmlEscaped()),
                           this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form = new QFormLayout;
  m_characters = new QLineEdit(QString::fromStdString(initial.character), this);
  m_characters->setObjectName(QStringLiteral("dtrbCharacters"));
  m_characters->setPlaceholderText(QString::fromLatin1(core::kDtrbDefaultCharacters));
  m_characters->setToolTip(tr("DTRB's --character: the characters in class order, as trained"));
  form->addRow(tr("&Characters:"), m_characters);
  m_sensitive = new QCheckBox(tr("DTRB's --sensitive set (94 printable characters)"), this);
  m_sensitive->setChecked(initial.sensitive);
  form->addRow(QString(), m_sensitive);
  connect(m_sensitive, &QCheckBox::toggled, m_characters, &QWidget::setDisabled);
  m_characters->setDisabled(initial.sensitive);
  m_imgH = new QSpinBox(this);
  m_imgH->setRange(8, 4096);
  m_imgH->setValue(initial.imgH);
  form->addRow(tr("Input &height (--imgH):"), m_imgH);
  m_imgW = new QSpinBox(this);
  m_imgW->setRange(8, 4096);
  m_imgW->setValue(initial.imgW);
  form->addRow(tr("Input &width (--imgW):"), m_imgW);
  m_pad = new QCheckBox(tr("Keep the aspect ratio and pad (--PAD)"), this);
  m_pad->setChecked(initial.pad);
  form->addRow(QString(), m_pad);
  m_length = new QSpinBox(this);
  m_length->setRange(1, 1000);
  m_length->setValue(initial.batchMaxLength);
  form->addRow(tr("&Longest reading (--batch_max_length):"), m_length);
  layout->addLayout(form);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

core::DtrbOptions DtrbOptionsDialog::options() const {
  core::DtrbOptions o;
  o.sensitive = m_sensitive->isChecked();
  if (!o.sensitive) o.character = m_characters->text().toStdString();
  o.imgH = m_imgH->value();
  o.imgW = m_imgW->value();
  o.pad = m_pad->isChecked();
  o.batchMaxLength = m_length->value();
  return o;
}

std::optional<core::DtrbOptions> rememberedDtrbOptions(const QString& path) {
  QSettings s;
  s.beginGroup(settingsKey(path));
  if (!s.contains(QStringLiteral("imgH"))) return std::nullopt;
  core::DtrbOptions o;
  o.character = s.value(QStringLiteral("character")).toString().toStdString();
  o.sensitive = s.value(QStringLiteral("sensitive"), false).toBool();
  o.imgH = s.value(QStringLiteral("imgH"), 32).toInt();
  o.imgW = s.value(QStringLiteral("imgW"), 100).toInt();
  o.pad = s.value(QStringLiteral("PAD"), false).toBool();
  o.batchMaxLength = s.value(QStringLiteral("batch_max_length"), 25).toInt();
  return o;
}

void rememberDtrbOptions(const QString& path, const core::DtrbOptions& o) {
  QSettings s;
  s.beginGroup(settingsKey(path));
  s.setValue(QStringLiteral("file"), QFileInfo(path).absoluteFilePath());
  s.setValue(QStringLiteral("character"), QString::fromStdString(o.character));
  s.setValue(QStringLiteral("sensitive"), o.sensitive);
  s.setValue(QStringLiteral("imgH"), o.imgH);
  s.setValue(QStringLiteral("imgW"), o.imgW);
  s.setValue(QStringLiteral("PAD"), o.pad);
  s.setValue(QStringLiteral("batch_max_length"), o.batchMaxLength);
}

void forgetDtrbOptions(const QString& path) { QSettings().remove(settingsKey(path)); }

bool askDtrbCharacters(const QString& path, const QString& architecture, int classes,
                       QWidget* parent) {
  DtrbOptionsDialog dialog(path, architecture,
                           QObject::tr("The file has %1 classes and does not say which characters "
                                       "they are: give the characters the model was trained "
                                       "with, in order.")
                               .arg(classes),
                           core::DtrbOptions{}, parent);
  if (dialog.exec() != QDialog::Accepted) return false;
  rememberDtrbOptions(path, dialog.options());
  return true;
}

}  // namespace foveal::ui
