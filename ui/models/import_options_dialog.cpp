#include "import_options_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace foveal::ui {

namespace {
// The dialog shows every option of the format without scrolling while it fits a 1280x720
// screen (less a title bar); the options of a format with more scroll.
constexpr int kMaxDialogHeight = 680;
constexpr int kMinOptionsHeight = 40;
constexpr int kMinOptionsWidth = 600;    // a charset of DTRB's 36 or more characters in view
const QColor kErrorColour(180, 30, 30);  // as the Models dock's failed rows

QLabel* wrappedLabel(const QString& text, QWidget* parent) {
  auto* label = new QLabel(text, parent);
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

QLabel* helpLabel(const QString& text, QWidget* parent) {
  QLabel* label = wrappedLabel(text, parent);
  label->setForegroundRole(QPalette::PlaceholderText);
  return label;
}

QLabel* errorLabel(const QString& text, QWidget* parent) {
  QLabel* label = wrappedLabel(text, parent);
  QPalette p = label->palette();
  p.setColor(QPalette::WindowText, kErrorColour);
  label->setPalette(p);
  return label;
}

// An error names the file first ("/path/model.pth: the file has 13 classes ..."): the dialog
// names it in its title and first line.
QString withoutFile(QString message, const QString& path) {
  for (const QString& name : {path, QFileInfo(path).absoluteFilePath()})
    if (!name.isEmpty() && message.startsWith(name + QLatin1String(": "))) {
      message.remove(0, name.size() + 2);
      if (!message.isEmpty()) message[0] = message[0].toUpper();
      break;
    }
  return message;
}

QString tooltipOf(const core::FormatOption& o) {
  QString tip = QStringLiteral("--") + QString::fromStdString(o.key) + QLatin1String(": ") +
                QString::fromStdString(o.help);
  if (!o.defaultValue.empty())
    tip +=
        QLatin1Char('\n') + QObject::tr("Default: %1").arg(QString::fromStdString(o.defaultValue));
  return tip;
}
}  // namespace

ImportOptionsDialog::ImportOptionsDialog(const ImportQuestion& question, QWidget* parent)
    : QDialog(parent),
      m_question(question),
      m_message(withoutFile(question.message, question.path)) {
  const QString fileName = QFileInfo(question.path).fileName();
  setWindowTitle(tr("Open Model: %1").arg(fileName));
  for (const auto& [key, value] : question.options)
    if (key != core::kFormatOption) m_values[key] = value;

  auto* layout = new QVBoxLayout(this);
  layout->setSizeConstraint(QLayout::SetNoConstraint);  // fitOptions() sets the minimum size
  QString head = QStringLiteral("<b>%1</b>").arg(fileName.toHtmlEscaped());
  if (!question.format.isEmpty())
    head += QLatin1String("<br>") +
            tr("Recognised as <b>%1</b>: %2")
                .arg(question.format.toHtmlEscaped(), question.why.toHtmlEscaped());
  if (!question.description.isEmpty())
    head += QLatin1String("<br>") + tr("It holds %1").arg(question.description.toHtmlEscaped());
  QLabel* intro = wrappedLabel(head, this);
  intro->setObjectName(QStringLiteral("importRecognised"));
  intro->setToolTip(question.path);
  layout->addWidget(intro);
  if (question.format.isEmpty()) {
    QLabel* none = errorLabel(
        tr("No format recognises this file: %1").arg(withoutFile(question.why, question.path)),
        this);
    none->setObjectName(QStringLiteral("importNotRecognised"));
    layout->addWidget(none);
  }

  auto* formatRow = new QHBoxLayout;
  m_format = new QComboBox(this);
  m_format->setObjectName(QStringLiteral("importFormat"));
  if (question.format.isEmpty()) m_format->addItem(tr("(choose a format)"), QString());
  for (const auto& f : core::modelFormats()) {
    const QString name = QString::fromStdString(f.name);
    m_format->addItem(name == question.format ? tr("%1 (recognised)").arg(name) : name, name);
    m_format->setItemData(m_format->count() - 1, QString::fromStdString(f.summary),
                          Qt::ToolTipRole);
  }
  auto* formatLabel = new QLabel(tr("&Format:"), this);
  formatLabel->setBuddy(m_format);
  formatRow->addWidget(formatLabel);
  formatRow->addWidget(m_format, 1);
  layout->addLayout(formatRow);
  m_summary = helpLabel(QString(), this);
  layout->addWidget(m_summary);

  m_topMessage = errorLabel(m_message, this);
  m_topMessage->setObjectName(QStringLiteral("importMessage"));
  layout->addWidget(m_topMessage);

  m_scroll = new QScrollArea(this);
  m_scroll->setWidgetResizable(true);
  m_scroll->setFrameShape(QFrame::NoFrame);
  m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  layout->addWidget(m_scroll, 1);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
  m_open = buttons->button(QDialogButtonBox::Open);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);

  const auto forced = question.options.find(core::kFormatOption);
  const QString initial = forced != question.options.end() &&
                                  m_format->findData(QString::fromStdString(forced->second)) >= 0
                              ? QString::fromStdString(forced->second)
                              : question.format;
  m_format->setCurrentIndex(std::max(0, m_format->findData(initial)));
  showOptions();
  connect(m_format, &QComboBox::currentIndexChanged, this, [this] {
    keepValues();
    showOptions();
  });
}

QString ImportOptionsDialog::format() const { return m_format->currentData().toString(); }

void ImportOptionsDialog::setFormat(const QString& name) {
  const int index = m_format->findData(name);
  if (index >= 0) m_format->setCurrentIndex(index);
}

QWidget* ImportOptionsDialog::optionWidget(const QString& key) const {
  auto it = m_widgets.find(key.toStdString());
  return it == m_widgets.end() ? nullptr : it->second;
}

void ImportOptionsDialog::keepValues() {
  for (const auto& [key, widget] : m_widgets) {
    if (auto* box = qobject_cast<QCheckBox*>(widget))
      m_values[key] = box->isChecked() ? "1" : "";
    else if (auto* edit = qobject_cast<QLineEdit*>(widget))
      m_values[key] = edit->text().toStdString();
  }
}

void ImportOptionsDialog::showOptions() {
  m_widgets.clear();
  const core::ModelFormat* f = core::findModelFormat(format().toStdString());
  m_open->setEnabled(f != nullptr);
  m_summary->setText(f ? QString::fromStdString(f->summary) : QString());
  m_faulty = f && !m_message.isEmpty() ? optionNamedIn(m_message, *f) : QString();
  m_topMessage->setVisible(!m_message.isEmpty() && m_faulty.isEmpty());

  auto* page = new QWidget;
  auto* form = new QFormLayout(page);
  form->setContentsMargins(0, 4, 0, 4);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  if (f && f->options.empty())
    form->addRow(
        helpLabel(tr("Files of this format have no options: all they need is in them."), page));
  QWidget* faultyWidget = nullptr;
  for (const core::FormatOption& o : f ? f->options : std::vector<core::FormatOption>{}) {
    const QString key = QString::fromStdString(o.key);
    const std::string given = m_values.count(o.key) ? m_values.at(o.key) : std::string();
    auto* field = new QWidget(page);
    auto* column = new QVBoxLayout(field);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    QWidget* control = nullptr;
    if (o.flag) {
      auto* box = new QCheckBox(QString::fromStdString(o.help), field);
      box->setChecked(!given.empty() && given != "0" && given != "false");
      control = box;
      column->addWidget(box);
    } else {
      auto* edit = new QLineEdit(QString::fromStdString(given), field);
      edit->setPlaceholderText(o.defaultValue.empty() ? tr("inferred")
                                                      : QString::fromStdString(o.defaultValue));
      edit->setClearButtonEnabled(true);
      control = edit;
      column->addWidget(edit);
      column->addWidget(helpLabel(QString::fromStdString(o.help), field));
    }
    control->setObjectName(QStringLiteral("option-") + key);
    control->setToolTip(tooltipOf(o));
    m_widgets[o.key] = control;
    if (key == m_faulty) {
      QLabel* error = errorLabel(m_message, field);
      error->setObjectName(QStringLiteral("optionError-") + key);
      column->addWidget(error);
      faultyWidget = control;
    }
    auto* label = new QLabel(key + QLatin1Char(':'), page);
    label->setBuddy(control);
    label->setToolTip(control->toolTip());
    if (key == m_faulty) {
      QPalette p = label->palette();
      p.setColor(QPalette::WindowText, kErrorColour);
      label->setPalette(p);
    }
    form->addRow(label, field);
  }
  m_scroll->setWidget(page);  // deletes the previous format's page
  fitOptions();
  if (isVisible()) resize(width(), minimumHeight());  // no blank left by a longer format
  if (faultyWidget) {
    faultyWidget->setFocus();
    if (auto* edit = qobject_cast<QLineEdit*>(faultyWidget)) edit->selectAll();
  }
}

void ImportOptionsDialog::fitOptions() {
  QWidget* page = m_scroll->widget();
  if (!page) return;
  // As wide as what cannot wrap (a flag's text), with room for the scroll bar. (On the scroll
  // area, not the dialog, whose minimum width follows.)
  const int bar = m_scroll->verticalScrollBar()->sizeHint().width();
  const int least = page->minimumSizeHint().width();
  m_scroll->setMinimumWidth(std::max(kMinOptionsWidth, least + bar));
  // The rows above and below the options at the dialog's width, each word-wrapped label as tall
  // as its text is there: a layout's minimum size counts them unwrapped, and the dialog came out
  // too short for its buttons.
  auto* box = static_cast<QBoxLayout*>(layout());
  const QMargins margins = box->contentsMargins();
  const int inner = (isVisible() ? width() : sizeHint().width()) - margins.left() - margins.right();
  int rest = margins.top() + margins.bottom(), rows = 0;
  for (int i = 0; i < box->count(); ++i) {
    QLayoutItem* item = box->itemAt(i);
    if (item->isEmpty()) continue;  // a hidden label
    ++rows;
    if (item->widget() != m_scroll)
      rest += item->hasHeightForWidth() ? item->heightForWidth(inner) : item->sizeHint().height();
  }
  rest += box->spacing() * std::max(0, rows - 1);
  // The options as tall as they are at that width, up to what keeps the dialog on the screen.
  const int pageWidth = std::max(least, inner);
  const int want =
      page->hasHeightForWidth() ? page->heightForWidth(pageWidth) : page->sizeHint().height();
  const int h = std::max(kMinOptionsHeight, std::min(want, kMaxDialogHeight - rest));
  if (h != m_scroll->minimumHeight()) m_scroll->setMinimumHeight(h);
  const QSize needed(box->minimumSize().width(), rest + h);
  if (minimumSize() != needed) setMinimumSize(needed);
}

void ImportOptionsDialog::showEvent(QShowEvent* event) {
  QDialog::showEvent(event);
  fitOptions();
  resize(width(), minimumHeight());  // its size hint counts the labels unwrapped
}

void ImportOptionsDialog::resizeEvent(QResizeEvent* event) {
  QDialog::resizeEvent(event);
  fitOptions();
}

core::ImportOptions ImportOptionsDialog::options() const {
  core::ImportOptions o;
  for (const auto& [key, widget] : m_widgets) {
    if (auto* box = qobject_cast<QCheckBox*>(widget)) {
      if (box->isChecked()) o[key] = "1";
    } else if (auto* edit = qobject_cast<QLineEdit*>(widget)) {
      if (!edit->text().isEmpty()) o[key] = edit->text().toStdString();
    }
  }
  const QString chosen = format();
  if (!chosen.isEmpty() && chosen != m_question.format)
    o[core::kFormatOption] = chosen.toStdString();
  return o;
}

void askImportOptions(const QString& path, const core::ImportOptions& initial, QWidget* parent,
                      std::function<void(std::optional<core::ImportOptions>)> answered) {
  auto* watcher = new QFutureWatcher<ImportQuestion>(parent);
  QObject::connect(watcher, &QFutureWatcherBase::finished, parent,
                   [watcher, parent, answered = std::move(answered)] {
                     watcher->deleteLater();
                     if (watcher->future().resultCount() == 0) return;
                     ImportOptionsDialog dialog(watcher->result(), parent);
                     const bool open = dialog.exec() == QDialog::Accepted;
                     answered(open ? std::optional(dialog.options()) : std::nullopt);
                   });
  watcher->setFuture(QtConcurrent::run(&recogniseImportFile, path, initial));
}

}  // namespace foveal::ui
