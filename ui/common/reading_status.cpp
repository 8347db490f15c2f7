#include "reading_status.h"

#include <QFileInfo>
#include <QProgressBar>
#include <QStatusBar>

#include "model_list_model.h"
#include "reading_document.h"

namespace foveal::ui {

ReadingStatus::ReadingStatus(ReadingDocument* document, QStatusBar* bar)
    : QObject(bar), m_document(document), m_bar(bar), m_progress(new QProgressBar(bar)) {
  m_progress->setObjectName(QStringLiteral("readingProgress"));
  m_progress->setMaximumWidth(160);
  m_progress->hide();
  bar->addPermanentWidget(m_progress);
  connect(document, &ReadingDocument::readingStarted, this, [this](int n) {
    m_progress->setRange(0, n);
    m_progress->setValue(0);
    m_progress->show();
    m_bar->showMessage(tr("Reading %1 with %n model(s)...", nullptr, n)
                           .arg(QFileInfo(m_document->source()).fileName()));
  });
  connect(document, &ReadingDocument::readingProgress, m_progress, &QProgressBar::setValue);
  connect(document, &ReadingDocument::tracesChanged, m_progress, &QProgressBar::hide);
  connect(document, &ReadingDocument::modelLoaded, this, [this](ModelId id, bool requested) {
    const ModelListModel* models = m_document->models();
    if (requested)
      m_bar->showMessage(
          tr("Model: %1")
              .arg(models->data(models->index(models->rowOf(id)), ModelListModel::DescriptionRole)
                       .toString()));
    else if (!models->loadingCount() && !m_document->isBusy())
      m_bar->showMessage(tr("Models loaded"), 3000);
  });
  connect(document, &ReadingDocument::truthWarningChanged, this, [this](const QString& warning) {
    if (!warning.isEmpty()) m_bar->showMessage(warning, 8000);
  });
  connect(document->models(), &ModelListModel::compareLimitReached, this, [this] {
    m_bar->showMessage(
        tr("Compare shows at most %1 models: untick one first.").arg(ModelListModel::kMaxCompared),
        8000);
  });
}

}  // namespace foveal::ui
