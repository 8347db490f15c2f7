#include "reading_document.h"

#include <QFileInfo>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <utility>

#include "engines/tesseract_spec.h"
#include "image_file.h"
#include "import_question.h"
#include "model/charset.h"
#include "settings.h"
#include "trace/model_session.h"

namespace foveal::ui {

namespace {
const Setting<int> kBeamWidth(QStringLiteral("inspector/beamWidth"), 1);
constexpr int kMaxBeamWidth = 16;

QString notThere(const QString& what, const QFileInfo& info) {
  return QObject::tr("%1: cannot open %2 (%3)")
      .arg(info.filePath(), what,
           info.exists() ? QObject::tr("not a file") : QObject::tr("no such file"));
}
}  // namespace

QString charactersOutside(const std::string& charset, const QString& truth) {
  const auto known = core::splitUtf8(charset);
  QString outside;
  for (const auto& ch : core::splitUtf8(truth.toStdString()))
    if (std::find(known.begin(), known.end(), ch) == known.end() &&
        !outside.contains(QString::fromStdString(ch)))
      outside += QString::fromStdString(ch);
  return outside;
}

ReadingDocument::ReadingDocument(QObject* parent)
    : QObject(parent),
      m_models(new ModelListModel(this)),
      m_runner(new TraceRunner(this)),
      m_beamWidth(std::clamp(kBeamWidth.value(), 1, kMaxBeamWidth)) {
  qRegisterMetaType<std::vector<foveal::ui::TraceOutcome>>();
  m_readSoon.setSingleShot(true);
  m_readSoon.setInterval(0);
  connect(&m_readSoon, &QTimer::timeout, this, &ReadingDocument::read);
  connect(m_runner, &TraceRunner::started, this, &ReadingDocument::readingStarted);
  connect(m_runner, &TraceRunner::progress, this, &ReadingDocument::readingProgress);
  connect(m_runner, &TraceRunner::finished, this, &ReadingDocument::onTracesFinished);

  connect(m_models, &ModelListModel::modelLoaded, this, &ReadingDocument::onModelLoaded);
  connect(m_models, &ModelListModel::loadFailed, this, &ReadingDocument::onModelLoadFailed);
  connect(m_models, &ModelListModel::optionsNeeded, this,
          [this](ModelId id, const ImportQuestion& question) {
            // Only for a file the user opened: a folder's files report the error instead.
            if (m_openRequests.contains(m_models->path(m_models->rowOf(id))))
              Q_EMIT optionsNeeded(id, question);
            else
              onModelLoadFailed(id, question.message);
          });
  connect(m_models, &ModelListModel::comparedChanged, this, [this] {
    requestRead();
    modelsChangedHere();
  });
  connect(m_models, &ModelListModel::rowsRemoved, this, &ReadingDocument::onModelsRemoved);
  connect(m_models, &ModelListModel::rowsInserted, this, &ReadingDocument::modelsChangedHere);
  connect(m_models, &ModelListModel::dataChanged, this, &ReadingDocument::modelsChangedHere);
}

// The runner and the model list are children: the runner waits for its task, the list for its
// loads. An image read still going finishes on the pool with nobody to tell.
ReadingDocument::~ReadingDocument() = default;

// ---- The image

bool ReadingDocument::openImage(const QString& path, QString* error) {
  if (const QFileInfo info(path); !info.isFile()) {
    if (error) *error = notThere(tr("image file"), info);
    return false;
  }
  dropImageRead();
  m_truthGiven = false;
  auto* watcher = new QFutureWatcher<ImageFile>(this);
  m_imageRead = watcher;
  connect(watcher, &QFutureWatcher<ImageFile>::finished, this, [this, watcher, path] {
    watcher->deleteLater();
    m_imageRead = nullptr;
    onImageRead(path, watcher->result());
  });
  watcher->setFuture(QtConcurrent::run([path] { return readImageFile(path); }));
  return true;
}

void ReadingDocument::dropImageRead() {
  if (!m_imageRead) return;
  m_imageRead->disconnect(this);  // its result, whenever it comes, is nobody's
  m_imageRead->deleteLater();
  m_imageRead = nullptr;
}

void ReadingDocument::onImageRead(const QString& path, ImageFile read) {
  if (!read.error.isEmpty()) {
    Q_EMIT imageOpenFailed(read.error);
    return;
  }
  if (!m_truthGiven) setTruth(truthFromFileName(path));  // never the previous image's
  setImage(std::move(read.grey), std::move(read.display), path);
  Q_EMIT imageOpened(path);
  if (!read.warning.isEmpty()) Q_EMIT imageWarning(read.warning);
}

void ReadingDocument::setImage(core::GreyImage grey, QImage display, const QString& source,
                               std::vector<core::Box> truthBoxes) {
  dropImageRead();  // an image given now is newer than a file still being read
  m_page.reset();   // a page's line only through setPageLine()
  m_truthBoxes = std::move(truthBoxes);
  m_grey = std::move(grey);
  m_display = std::move(display);
  m_source = source;
  Q_EMIT imageChanged();
  requestRead();
}

void ReadingDocument::setImage(const QImage& image, const QString& source, const QString& truth,
                               std::vector<core::Box> truthBoxes) {
  ImageFile read = imageFromQImage(image);
  setTruth(truth);
  setImage(std::move(read.grey), std::move(read.display), source, std::move(truthBoxes));
}

void ReadingDocument::setPageLine(std::shared_ptr<const core::GreyImage> page,
                                  const core::KrakenLineSpec& spec, core::GreyImage line,
                                  QImage display, const QString& source, const QString& truth) {
  setTruth(truth);
  setImage(std::move(line), std::move(display), source);  // the reading waits for this turn's end
  m_page = std::move(page);
  m_pageLine = spec;
}

void ReadingDocument::setTruth(const QString& truth) {
  if (m_imageRead) m_truthGiven = true;
  const QString t = truth.trimmed();
  if (t == m_truth) return;
  m_truth = t;
  Q_EMIT truthChanged(m_truth);
  updateTruthWarning();
}

// ---- The models

bool ReadingDocument::isLoaded(ModelId id) const {
  return static_cast<bool>(m_models->session(m_models->rowOf(id)));
}

bool ReadingDocument::openModel(const QString& path, QString* error) {
  const QFileInfo info(path);
  const bool engine = core::isTesseractSpec(path.toStdString());  // tesseract:LANG, no file
  if (!engine && !info.isFile()) {
    if (error) *error = notThere(tr("model file"), info);
    return false;
  }
  // What a file does not hold (a deep-text-recognition-benchmark .pth's charset and input size):
  // the answers given once for this file are remembered; otherwise the worker reads it with the
  // import's defaults (DTRB's standard sets where the class count fits) and asks (optionsNeeded)
  // only when they do not do. Nothing is parsed here: a 200 MB file is read once, off the GUI
  // thread.
  const QString absolute = engine ? path : info.absoluteFilePath();
  if (!engine)
    if (const auto remembered = rememberedImportOptions(absolute))
      m_models->setImportOptions(absolute, *remembered);
  const ModelId id = m_models->loadModel(path);
  m_userChoseModel = true;
  if (m_inspected != id && isLoaded(m_inspected)) m_previous = m_inspected;
  m_inspected = id;
  if (isLoaded(id))  // already listed and loaded
    Q_EMIT modelLoaded(id, true);
  else if (!m_openRequests.contains(absolute))
    m_openRequests << absolute;
  modelsChangedHere();  // the inspector lists it; it is read once loaded
  requestRead();
  return true;
}

bool ReadingDocument::openModelWith(const QString& path, const core::ImportOptions& options,
                                    QString* error) {
  if (!core::isTesseractSpec(path.toStdString()) && !QFileInfo(path).isFile())
    return openModel(path, error);  // says what is wrong with the path
  rememberImportOptions(path, options);
  m_models->setImportOptions(path, options);
  // An entry of the file read (or being read) with other options goes: it is read again with
  // these. A failed one stays, as the inspector's way back does: openModel() reads it again.
  const int row = m_models->rowOf(m_models->idOf(path));
  if (row >= 0 && (m_models->session(row) || m_models->isLoading(row))) m_models->removeModel(row);
  return openModel(path, error);
}

void ReadingDocument::addModelFolder(const QString& folder) { m_models->addFolder(folder); }

void ReadingDocument::restoreModels(const QStringList& opened, const QStringList& compared,
                                    const QString& inspected) {
  QStringList all = opened;
  for (const QString& path : compared)
    if (!all.contains(path)) all << path;
  for (const QString& path : all)
    if (core::isTesseractSpec(path.toStdString()) || QFileInfo(path).isFile())
      m_models->loadModel(path);
  if (!all.isEmpty()) m_models->setCompared(compared);
  if (const ModelId id = m_models->idOf(inspected)) inspect(id);
}

bool ReadingDocument::readFailure(const QImage& image, const QString& source, const QString& truth,
                                  const QStringList& models, const QString& focus, int beamWidth,
                                  QString* error) {
  // An engine (tesseract:eng,psm=7) opens through its spec wherever a model file does (issue 64).
  for (const QString& m : models)
    if (const QFileInfo info(m); !core::isTesseractSpec(m.toStdString()) && !info.isFile()) {
      if (error) *error = notThere(tr("model file"), info);
      return false;
    }
  setBeamWidth(beamWidth);  // no reading of the old image at this width: one reading follows
  if (models.size() == 1) {
    // The checkpoint may have changed since it was listed: load it afresh.
    m_models->removeModel(m_models->rowOf(m_models->idOf(models.front())));
    openModel(models.front());
  } else {
    for (const QString& m : models) m_models->loadModel(m);  // listed: kept as the analysis read it
    m_models->setCompared(models);
    if (const ModelId id = m_models->idOf(focus)) inspect(id);
  }
  setImage(image, source, truth);
  return true;
}

void ReadingDocument::inspect(ModelId id) {
  m_inspected = id;
  modelsChangedHere();
  requestRead();
}

void ReadingDocument::onModelLoaded(ModelId id) {
  const bool requested = m_openRequests.removeAll(m_models->path(m_models->rowOf(id))) > 0;
  // A model loaded in the background shows only while the user has chosen none (a failed
  // --model or Open Model leaves the inspector empty with the error, not on a sample).
  const int inspected = m_models->rowOf(m_inspected);
  if (!m_userChoseModel && !m_models->session(inspected) && !m_models->isLoading(inspected))
    m_inspected = id;
  // A ticked model is read by the comparedChanged() that follows.
  if (id == m_inspected) requestRead();
  Q_EMIT modelLoaded(id, requested);
  modelsChangedHere();
}

void ReadingDocument::abandonModel(ModelId id, const QString& message) {
  onModelLoadFailed(id, message);
}

void ReadingDocument::onModelLoadFailed(ModelId id, const QString& message) {
  const QString path = m_models->path(m_models->rowOf(id));
  forgetImportOptions(path);  // a file opened with a wrong answer asks again next time
  // The inspector goes back to the model it showed before, or shows none: never another one
  // that merely happens to be listed.
  if (id == m_inspected) {
    m_inspected = isLoaded(m_previous) ? m_previous : 0;
    m_previous = 0;
  }
  if (m_openRequests.removeAll(path) > 0)
    m_models->removeModel(m_models->rowOf(id));  // as if never opened
  requestRead();
  modelsChangedHere();
  Q_EMIT modelFailed(path, message);
}

void ReadingDocument::onModelsRemoved() {
  // A model the user removed makes way for the first loaded one (a failed load has chosen
  // already, knowing what was shown before).
  if (m_inspected != 0 && m_models->rowOf(m_inspected) < 0) {
    m_inspected = 0;
    for (int r = 0; r < m_models->rowCount() && !m_inspected; ++r)
      if (m_models->session(r)) m_inspected = m_models->idAt(r);
  }
  if (m_models->rowOf(m_previous) < 0) m_previous = 0;
  requestRead();
  modelsChangedHere();
}

void ReadingDocument::modelsChangedHere() {
  updateTruthWarning();
  Q_EMIT modelsChanged();
}

void ReadingDocument::updateTruthWarning() {
  QString warning;
  const int row = m_models->rowOf(m_inspected);
  const auto session = m_models->session(row);
  if (session && !session->isEngine() && !m_truth.isEmpty()) {
    const QString outside = charactersOutside(session->config().charset, m_truth);
    if (!outside.isEmpty())
      warning = tr("the truth uses %1, outside the charset of %2: it cannot be read right")
                    .arg(QLatin1Char('"') + outside + QLatin1Char('"'), m_models->displayName(row));
  }
  if (warning == m_truthWarning) return;
  m_truthWarning = warning;
  Q_EMIT truthWarningChanged(warning);
}

// ---- The readings

void ReadingDocument::setBeamWidth(int width) {
  width = std::clamp(width, 1, kMaxBeamWidth);
  if (width == m_beamWidth) return;
  m_beamWidth = width;
  kBeamWidth.set(width);
  Q_EMIT beamWidthChanged(width);
  requestRead();
}

void ReadingDocument::chooseHypothesis(int index) {
  const auto shown = trace(m_inspected);
  if (!shown || index < 0 || index >= static_cast<int>(shown->hypotheses.size())) return;
  m_hypothesis = index;
  m_readSoon.start();
}

void ReadingDocument::requestRead() {
  m_hypothesis = 0;  // another image, model or width starts from the best
  m_readSoon.start();
}

bool ReadingDocument::isBusy() const {
  return m_imageRead || m_readSoon.isActive() || m_runner->isRunning();
}

void ReadingDocument::read() {
  std::vector<ModelId> ids;
  if (isLoaded(m_inspected)) ids.push_back(m_inspected);
  for (ModelId id : m_models->comparedIds())
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  const int hypothesis = std::exchange(m_hypothesis, 0);
  if (!hasImage() || ids.empty()) {
    m_traced.clear();
    m_outcomes.clear();
    m_readingError.clear();
    Q_EMIT tracesChanged();
    return;
  }
  std::vector<std::shared_ptr<core::ModelSession>> sessions;
  for (ModelId id : ids) sessions.push_back(m_models->session(m_models->rowOf(id)));
  m_traced = std::move(ids);
  core::TraceOptions options;
  options.beamWidth = m_beamWidth;
  options.beamHypothesis = m_beamWidth > 1 && m_traced.front() == m_inspected ? hypothesis : 0;
  if (m_page)
    m_runner->startLine(m_page, m_pageLine, m_source, std::move(sessions), options);
  else
    m_runner->start(m_grey, m_source, std::move(sessions), options);
}

void ReadingDocument::onTracesFinished(const std::vector<TraceOutcome>& outcomes) {
  // The runner reports only its newest request, which is the one m_traced names.
  m_outcomes.clear();
  QStringList errors;
  for (size_t i = 0; i < outcomes.size() && i < m_traced.size(); ++i) {
    m_outcomes[m_traced[i]] = outcomes[i];
    if (!outcomes[i].trace)
      errors << tr("%1: %2").arg(m_models->displayName(m_models->rowOf(m_traced[i])),
                                 outcomes[i].error);
  }
  m_readingError =
      errors.isEmpty() ? QString() : tr("Reading failed: %1").arg(errors.join(QLatin1Char('\n')));
  Q_EMIT tracesChanged();
}

const TraceOutcome* ReadingDocument::outcome(ModelId id) const {
  const auto it = m_outcomes.find(id);
  return it == m_outcomes.end() ? nullptr : &it->second;
}

std::shared_ptr<const core::Trace> ReadingDocument::trace(ModelId id) const {
  const TraceOutcome* o = outcome(id);
  return o ? o->trace : nullptr;
}

}  // namespace foveal::ui
