#include "errors_page.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <climits>

#include "base/atomic_file.h"
#include "base/error.h"
#include "confusion_view.h"
#include "data/dataset_factory.h"
#include "error_analysis_runner.h"
#include "error_filter_model.h"
#include "error_table_model.h"
#include "exporter.h"
#include "model_list_model.h"
#include "model_names.h"
#include "qt_convert.h"
#include "reading_controls.h"
#include "reading_document.h"
#include "settings.h"

namespace foveal::ui {

namespace {
const Setting<QString> kDataset(QStringLiteral("errors/dataset"),
                                QStringLiteral("digits:len=7,rotated,split=test,seed=1"));
const Setting<int> kLimit(QStringLiteral("errors/limit"), 1000);
const Setting<int> kShow(QStringLiteral("errors/show"), ErrorFilterModel::Wrong);
const Setting<QByteArray> kSplitter(QStringLiteral("errors/splitter"), {});
const Setting<QString> kExportFolder(QStringLiteral("errors/exportFolder"), {});

// The names the whole window uses (model_names.h), told apart among the analysis's models.
QString modelName(const core::train::ErrorAnalysis* a, const std::string& path) {
  QStringList all;
  if (a) {
    for (const auto& m : a->models) all << qstr(m.model);
    for (const auto& u : a->unread) all << qstr(u.model);
  }
  return modelDisplayName(qstr(path), all);
}

/// Shows `text`, sorts by `value` (QTableWidgetItem alone sorts "1000" before "7").
class NumberItem : public QTableWidgetItem {
 public:
  NumberItem(double value, const QString& text) {
    setData(Qt::DisplayRole, text);
    setData(Qt::UserRole, value);
    setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  }
  bool operator<(const QTableWidgetItem& other) const override {
    return data(Qt::UserRole).toDouble() < other.data(Qt::UserRole).toDouble();
  }
};

QTableWidgetItem* numberItem(double value, const QString& text) {
  return new NumberItem(value, text);
}

QTableWidget* statsTable(const QStringList& headers, QWidget* parent) {
  auto* t = new QTableWidget(0, int(headers.size()), parent);
  t->setHorizontalHeaderLabels(headers);
  t->verticalHeader()->hide();
  t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  t->horizontalHeader()->setMinimumSectionSize(30);
  t->horizontalHeader()->setSortIndicator(0, Qt::AscendingOrder);
  return t;
}
}  // namespace

ErrorsPage::ErrorsPage(QWidget* parent)
    : QWidget(parent),
      m_runner(new ErrorAnalysisRunner(this)),
      m_table(new ErrorTableModel(this)),
      m_filter(new ErrorFilterModel(this)) {
  m_filter->setTable(m_table);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 4);
  layout->setSpacing(4);
  buildRunRow(layout);
  m_status = new QLabel(this);
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_status);

  buildFilterRow(layout);
  buildRowsAndSide(layout);
  connectRunner();
  setModels({});
  updateSummary();
}

void ErrorsPage::buildRunRow(QVBoxLayout* layout) {
  auto* row1 = new QHBoxLayout;
  auto* dataLabel = new QLabel(tr("&Dataset:"), this);
  row1->addWidget(dataLabel);
  m_dataset = new QLineEdit(kDataset.value(), this);
  m_dataset->setPlaceholderText(
      tr("dataset path or spec (LMDB, folder with gt.txt, packed, digits:...)"));
  m_dataset->setToolTip(
      tr("Any dataset Foveal reads: an LMDB folder, a folder with gt.txt, a packed file, or a "
         "generated set such as digits:len=7,rotated,split=test,seed=1"));
  dataLabel->setBuddy(m_dataset);
  row1->addWidget(m_dataset, 1);
  auto* browse = new QToolButton(this);
  browse->setText(tr("..."));
  browse->setToolTip(tr("Choose a dataset folder or packed file"));
  connect(browse, &QToolButton::clicked, this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Dataset folder"));
    if (!d.isEmpty()) m_dataset->setText(d);
  });
  row1->addWidget(browse);
  m_limit = new QSpinBox(this);
  m_limit->setRange(0, 10'000'000);
  m_limit->setSingleStep(1000);
  m_limit->setValue(kLimit.value());
  m_limit->setSpecialValueText(tr("all images"));
  m_limit->setSuffix(tr(" images"));
  m_limit->setToolTip(tr("Read the first N images (0: all)"));
  row1->addWidget(m_limit);
  m_imageShare = new QCheckBox(tr("From the image %"), this);
  m_imageShare->setObjectName(QStringLiteral("image-share"));
  m_imageShare->setToolTip(
      tr("Also measure, for each wrong reading, how much of its least-read character came from "
         "the image rather than the previous tokens (integrated gradients; attention models; "
         "about a second an image), and sort by it, the most guessed first"));
  row1->addWidget(m_imageShare);
  m_run = new QPushButton(tr("&Analyse"), this);
  m_run->setToolTip(
      tr("Read the dataset with the models ticked in the Models dock (or the "
         "inspected model)"));
  m_cancel = new QPushButton(tr("Cancel"), this);
  m_cancel->setEnabled(false);
  row1->addWidget(m_run);
  row1->addWidget(m_cancel);
  m_progress = new QProgressBar(this);
  m_progress->setMaximumWidth(180);
  m_progress->setFormat(tr("%v / %m images"));
  m_progress->hide();
  row1->addWidget(m_progress);
  layout->addLayout(row1);
  connect(m_run, &QPushButton::clicked, this, [this] { analyse(); });
  connect(m_dataset, &QLineEdit::returnPressed, this, [this] { analyse(); });
  connect(m_cancel, &QPushButton::clicked, this, &ErrorsPage::cancel);
}

void ErrorsPage::buildFilterRow(QVBoxLayout* layout) {
  auto* row2 = new QHBoxLayout;
  auto* showLabel = new QLabel(tr("&Show:"), this);
  row2->addWidget(showLabel);
  m_show = new QComboBox(this);
  m_show->addItem(tr("all images"), ErrorFilterModel::All);
  m_show->addItem(tr("misread"), ErrorFilterModel::Wrong);
  m_show->addItem(tr("read right"), ErrorFilterModel::Right);
  m_show->addItem(tr("misread by any model"), ErrorFilterModel::WrongByAny);
  m_show->addItem(tr("misread by every model"), ErrorFilterModel::WrongByAll);
  m_show->addItem(tr("models disagree"), ErrorFilterModel::Disagree);
  m_show->setToolTip(tr("Misread / read right: by the chosen model"));
  m_show->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_show->setMinimumContentsLength(10);
  showLabel->setBuddy(m_show);
  m_show->setCurrentIndex(std::max(0, m_show->findData(kShow.value())));
  m_filter->setStatus(static_cast<ErrorFilterModel::Status>(m_show->currentData().toInt()));
  connect(m_show, &QComboBox::currentIndexChanged, this, [this] {
    const int s = m_show->currentData().toInt();
    kShow.set(s);
    m_filter->setStatus(static_cast<ErrorFilterModel::Status>(s));
    updateSummary();
  });
  row2->addWidget(m_show);
  auto* byLabel = new QLabel(tr("b&y:"), this);
  row2->addWidget(byLabel);
  m_focus = new QComboBox(this);
  m_focus->setObjectName(QStringLiteral("focusModel"));
  m_focus->setToolTip(
      tr("The model the filters, the confusion matrix and the statistics are "
         "about"));
  m_focus->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_focus->setMinimumContentsLength(9);
  byLabel->setBuddy(m_focus);
  connect(m_focus, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (i >= 0) setFocusModel(i);
  });
  row2->addWidget(m_focus);
  row2->addSpacing(8);
  auto* lengthLabel = new QLabel(tr("&Length:"), this);
  row2->addWidget(lengthLabel);
  m_minLength = new QSpinBox(this);
  m_maxLength = new QSpinBox(this);
  for (QSpinBox* s : {m_minLength, m_maxLength}) {
    s->setRange(0, 999);
    s->setSpecialValueText(tr("any"));
    row2->addWidget(s);
    connect(s, &QSpinBox::valueChanged, this, [this] {
      m_filter->setLengthRange(m_minLength->value(), m_maxLength->value());
      updateSummary();
    });
  }
  m_minLength->setToolTip(tr("Shortest label shown"));
  m_maxLength->setToolTip(tr("Longest label shown"));
  lengthLabel->setBuddy(m_minLength);
  row2->insertWidget(row2->count() - 1, new QLabel(QStringLiteral("–"), this));
  row2->addSpacing(8);
  buildSearchControls(row2);
  layout->addLayout(row2);
}

void ErrorsPage::buildSearchControls(QHBoxLayout* row2) {
  auto* confLabel = new QLabel(tr("C&onfusion:"), this);
  row2->addWidget(confLabel);
  m_confusionEdit = new QLineEdit(this);
  m_confusionEdit->setPlaceholderText(tr("7>1"));
  m_confusionEdit->setToolTip(
      tr("Images whose truth has the first character where the reading has the second, as "
         "\"7>1\"; \"7>\" a dropped 7, \">1\" an inserted 1. Or click a cell of the matrix."));
  m_confusionEdit->setClearButtonEnabled(true);
  m_confusionEdit->setMinimumWidth(60);
  m_confusionEdit->setMaximumWidth(90);
  confLabel->setBuddy(m_confusionEdit);
  connect(m_confusionEdit, &QLineEdit::editingFinished, this, &ErrorsPage::applyConfusionText);
  connect(m_confusionEdit, &QLineEdit::textChanged, this, [this](const QString& t) {
    if (t.isEmpty() && m_filter->hasConfusion()) {
      m_filter->clearConfusion();
      m_confusion->setSelectedCell(-1, -1);
      updateSummary();
    }
  });
  row2->addWidget(m_confusionEdit);
  row2->addSpacing(8);
  auto* findLabel = new QLabel(tr("&Find:"), this);
  row2->addWidget(findLabel);
  m_search = new QLineEdit(this);
  m_search->setPlaceholderText(tr("truth or reading"));
  m_search->setClearButtonEnabled(true);
  m_search->setMinimumWidth(90);
  m_search->setMaximumWidth(200);
  findLabel->setBuddy(m_search);
  connect(m_search, &QLineEdit::textChanged, this, [this](const QString& t) {
    m_filter->setText(t);
    updateSummary();
  });
  row2->addWidget(m_search);
  row2->addStretch(1);
  m_shown = new QLabel(this);
  auto* doubtful = new QToolButton(this);
  doubtful->setObjectName(QStringLiteral("doubtfulFirst"));
  doubtful->setText(tr("Do&ubtful first"));
  doubtful->setToolTip(
      tr("Sort the rows by the doubt of their worst step under the chosen model (its lowest "
         "token probability), the most doubtful first"));
  connect(doubtful, &QToolButton::clicked, this, &ErrorsPage::sortByDoubt);
  row2->addWidget(doubtful);
  m_export = new QToolButton(this);
  m_export->setText(tr("E&xport"));
  m_export->setPopupMode(QToolButton::InstantPopup);
  m_export->setMenu(new QMenu(m_export));
  connect(m_export->menu(), &QMenu::aboutToShow, this, &ErrorsPage::exportMenu);
  row2->addWidget(m_export);
}

void ErrorsPage::buildRowsAndSide(QVBoxLayout* layout) {
  m_split = new QSplitter(Qt::Horizontal, this);
  auto* rows = new QWidget(m_split);
  auto* rl = new QVBoxLayout(rows);
  rl->setContentsMargins(0, 0, 0, 0);
  rl->setSpacing(2);
  m_view = new QTableView(rows);
  rl->addWidget(m_view, 1);
  rl->addWidget(m_shown);
  m_view->setModel(m_filter);
  m_view->setSortingEnabled(true);
  m_view->sortByColumn(ErrorTableModel::Entry, Qt::AscendingOrder);
  m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_view->setSelectionMode(QAbstractItemView::SingleSelection);
  m_view->setIconSize(ErrorTableModel::kThumbnail);
  m_view->verticalHeader()->hide();
  m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  m_view->verticalHeader()->setDefaultSectionSize(ErrorTableModel::kThumbnail.height() + 4);
  m_view->horizontalHeader()->setStretchLastSection(true);
  m_view->setWordWrap(false);
  m_view->setToolTip(tr("Double-click (or Enter) opens the image at its first wrong step"));
  // Double-click or Enter (activated covers both; connecting doubleClicked too would open the
  // image twice).
  connect(m_view, &QTableView::activated, this,
          [this](const QModelIndex& i) { chooseRow(i.row()); });

  QWidget* side = buildSide();
  m_split->addWidget(rows);
  m_split->addWidget(side);
  m_split->setStretchFactor(0, 3);
  m_split->setStretchFactor(1, 2);
  if (!m_split->restoreState(kSplitter.value())) m_split->setSizes({620, 380});
  connect(m_split, &QSplitter::splitterMoved, this,
          [this] { kSplitter.set(m_split->saveState()); });
  layout->addWidget(m_split, 1);
}

QWidget* ErrorsPage::buildSide() {
  auto* side = new QWidget(m_split);
  auto* sl = new QVBoxLayout(side);
  sl->setContentsMargins(0, 0, 0, 0);
  sl->setSpacing(2);
  m_matrixTitle = new QLabel(tr("<b>Confusion matrix</b>"), side);
  m_matrixTitle->setToolTip(
      tr("Truth characters (rows) against read characters (columns); ∅: no character "
         "(an insertion or a dropped character). Click a cell to show its images."));
  sl->addWidget(m_matrixTitle);
  m_confusion = new ConfusionView(side);
  sl->addWidget(m_confusion, 3);
  connect(m_confusion, &ConfusionView::cellClicked, this, [this](int t, int r) {
    if (!m_filter->setConfusionCell(t, r)) return;
    m_confusion->setSelectedCell(t, r);
    const auto& c = m_table->analysis()->models[size_t(m_filter->focusModel())].confusion;
    const QSignalBlocker block(m_confusionEdit);
    m_confusionEdit->setText(qstr(c.symbol(t)) + QLatin1Char('>') + qstr(c.symbol(r)));
    if (t == r && m_show->currentData().toInt() == ErrorFilterModel::Wrong)
      m_show->setCurrentIndex(m_show->findData(ErrorFilterModel::All));  // they are read right
    updateSummary();
  });
  m_statsTabs = new QTabWidget(side);
  m_statsTabs->setDocumentMode(true);
  m_byLength = statsTable({tr("length"), tr("images"), tr("acc. %"), tr("CER")}, m_statsTabs);
  m_byLength->setToolTip(tr("Click a length to show its images"));
  connect(m_byLength, &QTableWidget::cellClicked, this, [this](int row) {
    const int len = m_byLength->item(row, 0)->data(Qt::UserRole).toInt();
    m_minLength->setValue(len);
    m_maxLength->setValue(len);
  });
  m_byChar = statsTable(
      {tr("char"), tr("count"), tr("acc. %"), tr("subst."), tr("dropped"), tr("inserted")},
      m_statsTabs);
  m_byChar->setToolTip(
      tr("Per truth character: how often it was read right, read as another "
         "character, or dropped; and how often it was read where the truth "
         "has none"));
  m_statsTabs->addTab(m_byLength, tr("By length"));
  m_statsTabs->addTab(m_byChar, tr("By character"));
  sl->addWidget(m_statsTabs, 2);
  return side;
}

void ErrorsPage::connectRunner() {
  connect(m_runner, &ErrorAnalysisRunner::progress, this, [this](qint64 done, qint64 total) {
    m_progress->setRange(0, int(std::min<qint64>(total, INT_MAX)));
    m_progress->setValue(int(std::min<qint64>(done, INT_MAX)));
  });
  connect(m_runner, &ErrorAnalysisRunner::finished, this, &ErrorsPage::onFinished);
  connect(m_runner, &ErrorAnalysisRunner::failed, this, [this](const QString& message) {
    setRunning(false);
    setStatus(QStringLiteral("<span style='color:#c62828'>%1</span>")
                  .arg(tr("Analysis failed: %1").arg(message).toHtmlEscaped()));
    Q_EMIT failed(tr("Error analysis: %1").arg(message));
  });
  connect(m_runner, &ErrorAnalysisRunner::cancelled, this, [this] {
    setRunning(false);
    setStatus(tr("Analysis cancelled: nothing is shown."));
  });
}

void ErrorsPage::sortByDoubt() {
  if (!m_table->analysis()) return;
  const int column = m_table->column(m_filter->focusModel(), ErrorTableModel::Doubt);
  m_view->sortByColumn(column, Qt::AscendingOrder);
  if (m_view->model()->rowCount() > 0)
    m_view->scrollTo(m_view->model()->index(0, column), QAbstractItemView::EnsureVisible);
}

ErrorsPage::~ErrorsPage() = default;

void ErrorsPage::observe(ReadingDocument* document) {
  m_controls = new ReadingControls(document, ReadingControls::Beam, this);
  auto readWith = [this, document] {
    const ModelListModel* models = document->models();
    QStringList paths;
    for (int r : models->comparedRows()) paths << models->path(r);
    QString origin = tr("ticked in the Models dock");
    const int inspected = models->rowOf(document->inspectedModel());
    if (paths.isEmpty() && models->session(inspected)) {
      paths << models->path(inspected);
      origin = tr("the inspected model");
    }
    setModels(paths, origin);
  };
  connect(document, &ReadingDocument::modelsChanged, this, readWith);
  connect(document, &ReadingDocument::beamWidthChanged, this, &ErrorsPage::setBeamWidth);
  setBeamWidth(document->beamWidth());
  readWith();
}

QList<QAction*> ErrorsPage::toolBarActions() const {
  return m_controls ? m_controls->actions() : QList<QAction*>();
}

void ErrorsPage::setModels(const QStringList& paths, const QString& origin) {
  m_modelPaths = paths;
  m_modelOrigin = origin;
  const QStringList shown = modelDisplayNames(paths);
  m_run->setToolTip(paths.isEmpty()
                        ? tr("Open a model first (tick several in the Models dock to compare)")
                        : tr("Read the dataset with %1").arg(shown.join(QStringLiteral(", "))));
  if (isRunning() || m_table->analysis()) return;  // the status describes the run or its result
  if (paths.isEmpty())
    setStatus(
        tr("<i>Open a model (tick several in the Models dock to compare them), choose a "
           "dataset and press Analyse.</i>"));
  else {
    const QStringList names = modelDisplayNames(paths);
    setStatus(tr("Models: <b>%1</b>%2. Press Analyse to read the dataset with %3.")
                  .arg(names.join(QStringLiteral(", ")).toHtmlEscaped(),
                       origin.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(origin),
                       paths.size() == 1 ? tr("it") : tr("each")));
  }
}

void ErrorsPage::setDataset(const QString& spec) { m_dataset->setText(spec); }
QString ErrorsPage::dataset() const { return m_dataset->text().trimmed(); }
void ErrorsPage::setLimit(int images) { m_limit->setValue(images); }

void ErrorsPage::setMeasureImageShare(bool on) { m_imageShare->setChecked(on); }
bool ErrorsPage::isRunning() const { return m_runner->isRunning(); }
void ErrorsPage::waitForRunner() { m_runner->wait(); }
QString ErrorsPage::statusText() const { return m_status->text(); }
void ErrorsPage::setStatus(const QString& html) { m_status->setText(html); }

void ErrorsPage::setRunning(bool running) {
  m_run->setEnabled(!running);
  m_cancel->setEnabled(running);
  m_progress->setVisible(running);
}

bool ErrorsPage::analyse() {
  auto refuse = [this](const QString& why) {
    setStatus(QStringLiteral("<span style='color:#c62828'>%1</span>").arg(why.toHtmlEscaped()));
    Q_EMIT failed(why);
    return false;
  };
  if (m_modelPaths.isEmpty())
    return refuse(tr("No model to analyse: open one, or tick several in the Models dock."));
  if (dataset().isEmpty()) return refuse(tr("Choose a dataset."));
  kDataset.set(dataset());
  kLimit.set(m_limit->value());
  core::train::ErrorRunOptions o;
  o.limit = m_limit->value();
  o.beamWidth = m_beamWidth;
  o.imageShare = m_imageShare->isChecked();
  m_runningShare = o.imageShare;
  m_runningBeam = m_beamWidth;
  m_runningDataset = dataset();
  // A new analysis replaces the old one at once: never rows of one beside another's models.
  m_table->clear();
  m_focus->clear();
  m_confusion->setMatrix({});
  m_byLength->setRowCount(0);
  m_byChar->setRowCount(0);
  m_progress->setRange(0, 0);
  setRunning(true);
  const QStringList names = modelDisplayNames(m_modelPaths);
  setStatus(tr("Reading %1 with %2 ...")
                .arg(m_runningDataset.toHtmlEscaped(), names.join(QStringLiteral(", "))));
  m_runner->start(m_modelPaths, m_runningDataset, o);
  updateSummary();
  return true;
}

void ErrorsPage::cancel() { m_runner->cancel(); }

void ErrorsPage::onFinished(std::shared_ptr<const core::train::ErrorAnalysis> analysis) {
  setRunning(false);
  core::data::DatasetPtr ds;
  try {
    ds = core::data::openDataset(analysis->dataset);
  } catch (const std::exception&) {  // read a moment ago; without it only the thumbnails go
  }
  m_table->setAnalysis(analysis, ds);
  {
    const QSignalBlocker block(m_focus);
    m_focus->clear();
    for (const auto& m : analysis->models) m_focus->addItem(modelName(analysis.get(), m.model));
    m_focus->setCurrentIndex(0);
  }
  m_filter->setFocusModel(0);
  const bool several = analysis->models.size() > 1;
  for (int i = 3; i <= 5; ++i)  // the filters about several models
    qobject_cast<QStandardItemModel*>(m_show->model())->item(i)->setEnabled(several);
  if (!several && m_show->currentData().toInt() >= ErrorFilterModel::WrongByAny)
    m_show->setCurrentIndex(m_show->findData(ErrorFilterModel::Wrong));
  {
    const QSignalBlocker block(m_confusionEdit);
    m_confusionEdit->clear();
  }
  m_view->resizeColumnsToContents();
  m_view->setColumnWidth(ErrorTableModel::Image, ErrorTableModel::kThumbnail.width() + 8);
  // Read or guessed measured: the most guessed readings first.
  if (m_runningShare) {
    const int share = m_table->column(0, ErrorTableModel::ImageShare);
    m_view->sortByColumn(share, Qt::AscendingOrder);
    // In view, not off to the right past every model's other columns (issue 64).
    if (m_view->model()->rowCount() > 0)
      m_view->scrollTo(m_view->model()->index(0, share), QAbstractItemView::PositionAtCenter);
  }
  showFocus();

  // The status: what was read, and what was left out and why.
  int64_t images = 0;
  for (const auto& m : analysis->models) images = std::max(images, m.overall.images);
  QStringList parts;
  parts << (images == 1 ? tr("<b>%1</b>: %2 image") : tr("<b>%1</b>: %2 images"))
               .arg(qstr(analysis->dataset).toHtmlEscaped(), QString::number(images));
  m_status->setToolTip(qstr(analysis->description));
  for (const auto& m : analysis->models) {
    QString s = tr("%1 %2 % right, CER %3")
                    .arg(modelName(analysis.get(), m.model).toHtmlEscaped())
                    .arg(100.0 * m.overall.accuracy(), 0, 'f', 1)
                    .arg(m.overall.cer(), 0, 'f', 3);
    if (m.skipped > 0)
      s += QStringLiteral(" <span style='color:#c62828'>(%1)</span>")
               .arg((m.skipped == 1 ? tr("skipped %2 entry it cannot read: %1")
                                    : tr("skipped %2 entries it cannot read: %1"))
                        .arg(qstr(m.skippedSummary).toHtmlEscaped(), QString::number(m.skipped)));
    parts << s;
  }
  // Issue 64: a model that could read no entry is named with why, once; the others are analysed.
  for (const auto& u : analysis->unread)
    parts << QStringLiteral("%1 <span style='color:#c62828'>(%2)</span>")
                 .arg(modelName(analysis.get(), u.model).toHtmlEscaped(),
                      tr("skipped, it can read no entry: %1").arg(qstr(u.why).toHtmlEscaped()));
  if (m_runningBeam > 1) parts << tr("beam search, width %1").arg(m_runningBeam);
  setStatus(parts.join(QStringLiteral(" · ")));
  updateSummary();
  Q_EMIT message(tr("Error analysis of %1 done").arg(qstr(analysis->dataset)));
  Q_EMIT analysed();
}

void ErrorsPage::setFocusModel(int model) {
  if (model < 0 || model >= m_table->modelCount()) return;
  if (m_focus->currentIndex() != model) {
    const QSignalBlocker block(m_focus);
    m_focus->setCurrentIndex(model);
  }
  m_filter->setFocusModel(model);
  {
    const QSignalBlocker block(m_confusionEdit);
    m_confusionEdit->clear();
  }
  showFocus();
  updateSummary();
}

void ErrorsPage::showFocus() {
  const auto* a = m_table->analysis();
  const int f = m_filter->focusModel();
  if (!a || f < 0 || f >= int(a->models.size())) return;
  const auto& m = a->models[size_t(f)];
  m_matrixTitle->setText(tr("<b>Confusion matrix</b> of %1 (truth ↓ × read →)")
                             .arg(modelName(a, m.model).toHtmlEscaped()));
  m_confusion->setMatrix(m.confusion);
  m_byLength->setSortingEnabled(false);
  m_byLength->setRowCount(int(m.byLength.size()));
  int row = 0;
  for (const auto& [len, g] : m.byLength) {
    m_byLength->setItem(row, 0, numberItem(len, QString::number(len)));
    m_byLength->setItem(row, 1, numberItem(double(g.images), QString::number(g.images)));
    m_byLength->setItem(row, 2,
                        numberItem(g.accuracy(), QString::number(100.0 * g.accuracy(), 'f', 1)));
    m_byLength->setItem(row, 3, numberItem(g.cer(), QString::number(g.cer(), 'f', 4)));
    ++row;
  }
  m_byChar->setSortingEnabled(false);
  m_byChar->setRowCount(int(m.byCharacter.size()));
  row = 0;
  for (const auto& [ch, c] : m.byCharacter) {
    auto* name = new QTableWidgetItem(ch == " " ? QStringLiteral("␣") : qstr(ch));
    name->setTextAlignment(Qt::AlignCenter);
    m_byChar->setItem(row, 0, name);
    m_byChar->setItem(row, 1, numberItem(double(c.occurrences), QString::number(c.occurrences)));
    m_byChar->setItem(row, 2,
                      c.occurrences
                          ? numberItem(c.accuracy(), QString::number(100.0 * c.accuracy(), 'f', 1))
                          : numberItem(-1, QStringLiteral("—")));
    m_byChar->setItem(row, 3, numberItem(double(c.substituted), QString::number(c.substituted)));
    m_byChar->setItem(row, 4, numberItem(double(c.deleted), QString::number(c.deleted)));
    m_byChar->setItem(row, 5, numberItem(double(c.inserted), QString::number(c.inserted)));
    ++row;
  }
  m_byLength->setSortingEnabled(true);
  m_byChar->setSortingEnabled(true);
}

void ErrorsPage::applyConfusionText() {
  const QString text = m_confusionEdit->text().trimmed();
  if (text.isEmpty() || !m_table->analysis()) return;
  const int sep = text.indexOf(QLatin1Char('>'));
  if (sep < 0) {
    Q_EMIT message(tr("A confusion is written truth>read, as 7>1"));
    return;
  }
  const QString truth = text.left(sep).trimmed(), read = text.mid(sep + 1).trimmed();
  if (!m_filter->setConfusion(truth, read)) {
    Q_EMIT message(tr("%1 never happens for this model").arg(text));
    return;
  }
  const auto& c = m_table->analysis()->models[size_t(m_filter->focusModel())].confusion;
  const int t = c.indexOf(truth.toStdString()), r = c.indexOf(read.toStdString());
  m_confusion->setSelectedCell(t, r);
  if (t == r && m_show->currentData().toInt() == ErrorFilterModel::Wrong)
    m_show->setCurrentIndex(m_show->findData(ErrorFilterModel::All));
  updateSummary();
}

void ErrorsPage::updateSummary() {
  if (!m_table->analysis()) {
    m_shown->clear();
    m_export->setEnabled(false);
    return;
  }
  m_export->setEnabled(true);
  QString text = tr("%1 of %2 images").arg(m_filter->rowCount()).arg(m_table->rowCount());
  if (m_filter->hasConfusion()) text += QStringLiteral(" · ") + m_filter->confusionText();
  m_shown->setText(text);
}

void ErrorsPage::chooseRow(int row) {
  const auto* a = m_table->analysis();
  if (!a || row < 0 || row >= m_filter->rowCount()) return;
  const int source = m_filter->mapToSource(m_filter->index(row, 0)).row();
  const size_t index = m_table->datasetIndex(source);
  QString err;
  try {
    const auto ds = m_table->dataset() ? m_table->dataset() : core::data::openDataset(a->dataset);
    const auto sample = ds->get(index);
    const QImage image = toQImage(sample.image);
    const QString src = QStringLiteral("%1 #%2").arg(qstr(a->dataset)).arg(index);
    const QString truth = qstr(sample.label);
    const QString focus = qstr(a->models[size_t(m_filter->focusModel())].model);
    if (a->models.size() == 1) {
      Q_EMIT inspectRequested(image, src, truth, focus, m_runningBeam);
    } else {
      QStringList paths;
      for (const auto& m : a->models) paths << qstr(m.model);
      Q_EMIT compareRequested(image, src, truth, paths, focus, m_runningBeam);
    }
    return;
  } catch (const std::exception& e) {
    err = QString::fromStdString(e.what());
  }
  Q_EMIT failed(tr("%1 #%2: %3").arg(qstr(a->dataset)).arg(index).arg(err));
}

namespace {
// Through the atomic writer: checked after the flush and the close (a full disk is an error, not
// an empty file), a device or FIFO under the name is refused.
QString writeExport(const QString& path, const std::string& text) {
  try {
    core::writeFileAtomically(path.toStdString(), text, "export");
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}
}  // namespace

QString ErrorsPage::exportTable(const QString& path) const {
  const auto* a = m_table->analysis();
  if (!a) return tr("Nothing to export: run an analysis first.");
  return writeExport(path, a->tableCsv(m_filter->shownEntries()));
}

QString ErrorsPage::exportConfusion(const QString& path, double scale) const {
  const auto* a = m_table->analysis();
  if (!a) return tr("Nothing to export: run an analysis first.");
  const auto& c = a->models[size_t(m_filter->focusModel())].confusion;
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == QLatin1String("csv") || suffix == QLatin1String("svg")) {
    // The SVG is the one `foveal-cli eval --errors` writes: the same figure with or without a
    // display.
    const auto& m = a->models[size_t(m_filter->focusModel())];
    return writeExport(path, suffix == QLatin1String("csv")
                                 ? c.csv()
                                 : c.svg(modelName(a, m.model).toStdString() + " on " + a->dataset +
                                         ": truth (rows) x reading (columns)"));
  }
  if (suffix != QLatin1String("png")) return tr("%1: export as .png, .svg or .csv").arg(path);
  // The matrix alone, at a size where every count fits.
  ConfusionView view;
  view.setMatrix(c);
  view.resize(view.sizeHint());
  QImage image(view.size() * scale, QImage::Format_ARGB32);
  image.setDevicePixelRatio(scale);
  image.fill(Qt::white);
  view.render(&image);
  return exportImage(image, path);  // through QSaveFile, as every export
}

void ErrorsPage::exportMenu() {
  QMenu* menu = m_export->menu();
  menu->clear();
  auto ask = [this](const QString& title, const QString& filter, const QString& name) {
    const QString folder = kExportFolder.value();
    const QString path = QFileDialog::getSaveFileName(
        this, title, folder.isEmpty() ? name : folder + QLatin1Char('/') + name, filter);
    if (!path.isEmpty()) kExportFolder.set(QFileInfo(path).absolutePath());
    return path;
  };
  auto report = [this](const QString& error, const QString& path) {
    if (!error.isEmpty())
      Q_EMIT failed(error);
    else
      Q_EMIT message(tr("Exported %1").arg(path));
  };
  menu->addAction(tr("Table (rows shown) as CSV..."), this, [=] {
    const QString p = ask(tr("Export table"), tr("CSV (*.csv)"), QStringLiteral("errors.csv"));
    if (!p.isEmpty()) report(exportTable(p), p);
  });
  menu->addAction(tr("Confusion matrix as PNG / SVG..."), this, [=] {
    const QString p = ask(tr("Export confusion matrix"), tr("PNG (*.png);;SVG (*.svg)"),
                          QStringLiteral("confusion.png"));
    if (!p.isEmpty()) report(exportConfusion(p), p);
  });
  menu->addAction(tr("Confusion matrix as CSV..."), this, [=] {
    const QString p =
        ask(tr("Export confusion matrix"), tr("CSV (*.csv)"), QStringLiteral("confusion.csv"));
    if (!p.isEmpty()) report(exportConfusion(p), p);
  });
  menu->addAction(tr("Everything to a folder (as foveal-cli eval --errors)..."), this, [=] {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Export folder"), kExportFolder.value());
    if (dir.isEmpty() || !m_table->analysis()) return;
    kExportFolder.set(dir);
    try {
      const auto files = core::train::writeErrorReport(*m_table->analysis(), dir.toStdString());
      Q_EMIT message(tr("Wrote %1 files to %2").arg(files.size()).arg(dir));
    } catch (const std::exception& e) {
      Q_EMIT failed(QString::fromStdString(e.what()));
    }
  });
}

}  // namespace foveal::ui
