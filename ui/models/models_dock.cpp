#include "models_dock.h"

#include <QAction>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLineEdit>
#include <QListView>
#include <QPushButton>
#include <QVBoxLayout>

#include "engines/tesseract_engine.h"
#include "model_list_model.h"
#include "reading_document.h"
#include "settings.h"

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
  setWidget(panel);

  connect(add, &QPushButton::clicked, this, &ModelsDock::addRequested);
  connect(m_tesseract, &QPushButton::clicked, this, [this] {
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
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    // The document moves the inspector on when the inspected model goes.
    m_document->models()->removeModel(m_view->currentIndex().row());
  });
  connect(m_view, &QListView::doubleClicked, this, [this](const QModelIndex& index) {
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
  });
}

}  // namespace foveal::ui
