#include "models_dock.h"

#include <QAction>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "engines/tesseract_engine.h"
#include "model_list_model.h"
#include "qcustomplot_include.h"
#include "reading_document.h"
#include "settings.h"
#include "trace/model_session.h"

namespace foveal::ui {

namespace {
/// The Tesseract spec last added, offered again.
const Setting<QString> kTesseractSpec(QStringLiteral("models/tesseractSpec"),
                                      QStringLiteral("tesseract:eng,psm=7"));
}  // namespace

ModelsDock::ModelsDock(ReadingDocument* document, QWidget* parent)
    : QDockWidget(tr("Models"), parent), m_document(document) {
  toggleViewAction()->setText(tr("&Models"));
  setObjectName(QStringLiteral("modelsDock"));
  auto* panel = new QWidget(this);
  auto* layout = new QVBoxLayout(panel);
  layout->setContentsMargins(4, 4, 4, 4);
  m_view = new QListView(panel);
  m_view->setModel(document->models());
  m_view->setToolTip(tr("Tick up to four models to compare; double-click one to inspect it."));
  layout->addWidget(m_view);
  auto* buttons = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add..."), panel);
  m_tesseract = new QPushButton(tr("Tesseract..."), panel);
  if (core::tesseractAvailable()) {
    m_tesseract->setToolTip(tr("Add %1 as a reference engine: it reads the same image with its "
                               "own preprocessing; its characters' boxes are its steps")
                                .arg(QString::fromStdString(core::tesseractVersion())));
  } else {
    m_tesseract->setEnabled(false);
    m_tesseract->setToolTip(QString::fromStdString(core::tesseractVersion()));  // says why not
  }
  auto* remove = new QPushButton(tr("Remove"), panel);
  buttons->addWidget(add);
  buttons->addWidget(m_tesseract);
  buttons->addWidget(remove);
  layout->addLayout(buttons);
  buildStoredHistoryPlot(panel);
  layout->addWidget(m_history);
  setWidget(panel);
  connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& index) { showStoredHistory(index.row()); });
  // A model selected while it loaded shows its curve once it is loaded.
  connect(document->models(), &QAbstractItemModel::dataChanged, this,
          [this] { showStoredHistory(m_view->currentIndex().row()); });

  connect(add, &QPushButton::clicked, this, &ModelsDock::addRequested);
  connect(m_tesseract, &QPushButton::clicked, this, [this] { askForTesseract(); });
  connect(remove, &QPushButton::clicked, this, [this] {
    // The document moves the inspector on when the inspected model goes.
    m_document->models()->removeModel(m_view->currentIndex().row());
  });
  connect(m_view, &QListView::doubleClicked, this,
          [this](const QModelIndex& index) { inspectModel(index); });
}

void ModelsDock::buildStoredHistoryPlot(QWidget* panel) {
  m_history = new QCustomPlot(panel);
  m_history->setObjectName(QStringLiteral("storedHistory"));
  m_history->setMinimumHeight(130);
  m_history->setMaximumHeight(170);
  m_history->setToolTip(
      tr("The training curve stored in the model file (kraken keeps its "
         "validation accuracy after each evaluation)"));
  m_history->plotLayout()->insertRow(0);
  m_history->plotLayout()->addElement(
      0, 0, new QCPTextElement(m_history, tr("stored in the file"), QFont(font().family(), 8)));
  m_history->xAxis->setLabel(tr("evaluation"));
  m_history->hide();
}

void ModelsDock::askForTesseract() {
  bool ok = false;
  const QString spec =
      QInputDialog::getText(
          this, tr("Add Tesseract"),
          tr("Tesseract spec: tesseract:LANG[,psm=N][,chars=SET]\n(psm 7: one text line; chars: "
             "the characters it may read)"),
          QLineEdit::Normal, kTesseractSpec.value(), &ok)
          .trimmed();
  if (!ok || spec.isEmpty()) return;
  try {
    core::parseTesseractSpec(spec.toStdString());  // refused here, with the reason
  } catch (const std::exception& e) {
    Q_EMIT failed(QString::fromStdString(e.what()));
    return;
  }
  kTesseractSpec.set(spec);
  Q_EMIT engineRequested(spec);
}

void ModelsDock::inspectModel(const QModelIndex& index) {
  ModelListModel* models = m_document->models();
  const int row = index.row();
  if (!models->isLoading(row) && !models->session(row)) {
    Q_EMIT failed(models->data(index, ModelListModel::ErrorRole).toString());
    return;
  }
  if (models->isLoading(row))  // inspected as soon as it is loaded
    Q_EMIT message(tr("%1 is still loading...").arg(models->displayName(row)));
  m_document->inspect(models->idAt(row));
  Q_EMIT inspected();
}

void ModelsDock::showStoredHistory(int row) {
  ModelListModel* models = m_document->models();
  const auto session = row >= 0 && row < models->rowCount() ? models->session(row) : nullptr;
  const auto history = session
                           ? session->storedHistory()
                           : std::map<std::string, std::vector<core::ModelSession::HistoryPoint>>();
  m_history->clearGraphs();
  if (history.empty()) {
    m_history->hide();
    return;
  }
  static const QColor colours[] = {QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44)};
  int i = 0;
  double lo = 0, hi = 0;
  bool first = true;
  std::vector<const std::vector<core::ModelSession::HistoryPoint>*> shown;
  QStringList names;
  for (const auto& [metric, points] : history) {
    // kraken stores val_metric beside val_accuracy; where they are the same curve, draw it once.
    auto same = [&](const std::vector<core::ModelSession::HistoryPoint>* o) {
      if (o->size() != points.size()) return false;
      for (size_t k = 0; k < points.size(); ++k)
        if ((*o)[k].step != points[k].step || (*o)[k].value != points[k].value) return false;
      return true;
    };
    if (std::any_of(shown.begin(), shown.end(), same)) continue;
    shown.push_back(&points);
    names << QString::fromStdString(metric);
    auto* g = m_history->addGraph();
    g->setName(QString::fromStdString(metric));
    g->setPen(QPen(colours[i++ % 3], 1.5));
    for (const auto& p : points) {
      if (!std::isfinite(p.value)) continue;  // a NaN kraken wrote stays out of the curve
      g->addData(p.step, p.value);
      lo = first ? p.value : std::min(lo, p.value);
      hi = first ? p.value : std::max(hi, p.value);
      first = false;
    }
  }
  m_history->legend->setVisible(shown.size() > 1);
  m_history->yAxis->setLabel(shown.size() == 1 ? names.front() : QString());
  m_history->legend->setFont(QFont(font().family(), 7));
  m_history->rescaleAxes();
  if (hi > lo) m_history->yAxis->setRange(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo));
  m_history->show();
  m_history->replot();
}

}  // namespace foveal::ui
