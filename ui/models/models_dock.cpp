#include "models_dock.h"

#include <QAction>
#include <QHBoxLayout>
#include <QListView>
#include <QPushButton>
#include <QVBoxLayout>

#include "model_list_model.h"
#include "reading_document.h"

namespace foveal::ui {

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
  auto* remove = new QPushButton(tr("Remove"), panel);
  buttons->addWidget(add);
  buttons->addWidget(remove);
  layout->addLayout(buttons);
  setWidget(panel);

  connect(add, &QPushButton::clicked, this, &ModelsDock::addRequested);
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
