#include "dataset_browser.h"

#include <QCompleter>
#include <QStringListModel>

#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QToolButton>
#include <QVBoxLayout>

#include "base/error.h"
#include "data/dataset_factory.h"
#include "dataset_model.h"
#include "qt_convert.h"
#include "settings.h"

namespace foveal::ui {

namespace {
const Setting<QString> kLastDataset(QStringLiteral("datasets/last"),
                                    QStringLiteral("digits:len=7,rotated,split=test,seed=1"));
/// The entry last shown (-1: the last image shown was not a dataset entry) and the datasets
/// opened before, newest first: they come back with the session (issue 64).
const Setting<int> kLastEntry(QStringLiteral("datasets/lastEntry"), -1);
const Setting<QStringList> kRecentDatasets(QStringLiteral("datasets/recent"), {});
constexpr int kMaxRecentDatasets = 12;
}  // namespace

DatasetBrowser::DatasetBrowser(QWidget* parent) : QWidget(parent), m_model(new DatasetModel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* row = new QHBoxLayout;
  m_spec = new QLineEdit(this);
  m_spec->setPlaceholderText(tr("path or spec, e.g. digits:len=7,rotated,split=test"));
  m_spec->setText(kLastDataset.value());
  m_spec->setToolTip(
      tr("An LMDB folder, a folder with gt.txt, a gt.txt file, a packed dataset, or a "
         "generated spec (digits:len=L[,rotated][,split=train|test][,seed=S][,augment] or "
         "words:...). Press Enter to open. ',augment' distorts each training digit as "
         "training with it does (aug-scale, aug-shear, aug-rot, aug-shift, aug-elastic, "
         "aug-sigma, aug-thick set single ranges): choose an entry to see it."));
  connect(m_spec, &QLineEdit::returnPressed, this, [this] { openDataset(m_spec->text()); });
  // The datasets opened before, offered as the spec is typed (and all of them on Alt+Down).
  m_recent = new QStringListModel(kRecentDatasets.value(), this);
  auto* completer = new QCompleter(m_recent, this);
  completer->setCaseSensitivity(Qt::CaseInsensitive);
  completer->setFilterMode(Qt::MatchContains);
  m_spec->setCompleter(completer);
  row->addWidget(m_spec, 1);
  auto* browse = new QToolButton(this);
  browse->setText(tr("..."));
  browse->setToolTip(tr("Choose a dataset folder or file"));
  auto* menu = new QMenu(browse);
  menu->addAction(tr("Folder (LMDB or gt.txt)..."), this, [this] {
    const QString dir = QFileDialog::getExistingDirectory(this, tr("Open dataset folder"));
    if (!dir.isEmpty()) openDataset(dir);
  });
  menu->addAction(tr("File (gt.txt or packed)..."), this, [this] {
    const QString file = QFileDialog::getOpenFileName(this, tr("Open dataset file"));
    if (!file.isEmpty()) openDataset(file);
  });
  browse->setMenu(menu);
  browse->setPopupMode(QToolButton::InstantPopup);
  row->addWidget(browse);
  layout->addLayout(row);
  m_info = new QLabel(this);
  m_info->setWordWrap(true);
  layout->addWidget(m_info);
  m_view = new QListView(this);
  m_view->setModel(m_model);
  m_view->setUniformItemSizes(true);
  layout->addWidget(m_view, 1);
  connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) {
            if (current.isValid()) chooseEntry(current.row());
          });
}

bool DatasetBrowser::openDataset(const QString& argument) {
  core::data::DatasetPtr dataset;
  try {
    dataset = core::data::openDataset(argument.trimmed().toStdString());
  } catch (const core::Error& e) {
    m_info->setText(tr("<span style='color:#c62828'>cannot open</span>"));
    Q_EMIT failed(QString::fromStdString(e.what()));
    return false;
  }
  m_spec->setText(argument.trimmed());
  kLastDataset.set(argument.trimmed());
  QStringList recent = kRecentDatasets.value();
  recent.removeAll(argument.trimmed());
  recent.prepend(argument.trimmed());
  while (recent.size() > kMaxRecentDatasets) recent.removeLast();
  kRecentDatasets.set(recent);
  m_recent->setStringList(recent);
  m_spec->setText(argument.trimmed());
  m_model->setDataset(dataset);
  m_info->setText(qstr(dataset->describe()).toHtmlEscaped());
  return true;
}

void DatasetBrowser::chooseEntry(int row) {
  const auto dataset = m_model->dataset();
  if (!dataset || row < 0) return;
  try {
    const auto sample = dataset->get(static_cast<size_t>(row));
    kLastEntry.set(row);
    Q_EMIT entryChosen(toQImage(sample.image), qstr(dataset->entryName(static_cast<size_t>(row))),
                       qstr(sample.label), dataset->charBoxes(static_cast<size_t>(row)));
  } catch (const core::Error& e) {
    Q_EMIT failed(QString::fromStdString(e.what()));
  }
}

QStringList DatasetBrowser::recentDatasets() const { return m_recent->stringList(); }

void DatasetBrowser::forgetEntry() { kLastEntry.set(-1); }

bool DatasetBrowser::restoreLastEntry() {
  const int row = kLastEntry.value();
  if (row < 0 || kLastDataset.value().isEmpty()) return false;
  if (!openDataset(kLastDataset.value())) return false;
  if (row >= m_model->total()) return false;
  while (row >= m_model->rowCount() && m_model->canFetchMore({})) m_model->fetchMore({});
  m_view->setCurrentIndex(m_model->index(row, 0));  // chooses it: the image and its truth
  m_view->scrollTo(m_model->index(row, 0));
  return true;
}

}  // namespace foveal::ui
