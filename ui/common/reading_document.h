#pragma once
// The document of the main window (Tiled's MapDocument): what is being read and with what. The
// image (the grey copy the models read, the copy shown, where it came from, its truth and true
// character boxes), the open models (a ModelListModel, whose entries the document knows by id,
// never by row), the inspected one, and the readings: every shown model's trace of the image,
// made off the GUI thread by a TraceRunner and kept per model id. The pages observe it through
// its signals; the window only passes the user's requests on. Whatever changes a reading (the
// image, the models shown, the beam width) reads again, once per turn of the event loop however
// many changes that turn brought.
#include <QImage>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "image/grey_image.h"
#include "image/kraken_line.h"
#include "model/geometry.h"
#include "model_list_model.h"
#include "trace_runner.h"

template <typename T>
class QFutureWatcher;

namespace foveal::ui {

struct ImageFile;

/// The characters of `truth` that `charset` (a model's, UTF-8) lacks, each once, in order of
/// appearance: a model cannot read such a truth right (the inspector warns).
QString charactersOutside(const std::string& charset, const QString& truth);

class ReadingDocument : public QObject {
  Q_OBJECT
 public:
  explicit ReadingDocument(QObject* parent = nullptr);
  ~ReadingDocument() override;

  // ---- The image

  /// Reads an image file off the GUI thread; imageOpened() or imageOpenFailed() follows. A later
  /// openImage() or setImage() supersedes a read still going: its result is dropped. The truth
  /// becomes the one the file name states (none: empty), unless a truth is set while the file
  /// is read (the command line's --truth, or one typed meanwhile). False, with `error`, for a
  /// file that is not there.
  bool openImage(const QString& path, QString* error = nullptr);
  /// The image, as read by the models (`grey`) and as shown (`display`, same size), and the true
  /// box of each character of its label in its pixels when the data knows them (a dataset entry).
  void setImage(core::GreyImage grey, QImage display, const QString& source,
                std::vector<core::Box> truthBoxes = {});
  /// An image already in memory (paste, a dataset entry) with its truth (empty: unknown).
  void setImage(const QImage& image, const QString& source, const QString& truth,
                std::vector<core::Box> truthBoxes = {});
  /// The expected text, trimmed; empty: unknown.
  void setTruth(const QString& truth);
  /// One line of a page (the Page view): `line` is what kraken's extraction cuts out of `page`
  /// for `spec` (shown, and the pixels of every trace), and every model reads it as it reads that
  /// line on the page (ModelSession::traceLine), so a kraken model gives the reading it gives
  /// there. `truth`: the layout's transcription. Any other image given later ends it.
  void setPageLine(std::shared_ptr<const core::GreyImage> page, const core::KrakenLineSpec& spec,
                   core::GreyImage line, QImage display, const QString& source,
                   const QString& truth);
  /// The image is a page's line (setPageLine), read through its page.
  bool isPageLine() const { return m_page != nullptr; }

  bool hasImage() const { return !m_grey.empty(); }
  const core::GreyImage& image() const { return m_grey; }
  const QImage& displayImage() const { return m_display; }
  const QString& source() const { return m_source; }
  const QString& truth() const { return m_truth; }
  const std::vector<core::Box>& truthBoxes() const { return m_truthBoxes; }

  // ---- The models

  ModelListModel* models() const { return m_models; }
  /// Lists a model file the user named (loading off the GUI thread) and inspects it once loaded;
  /// the inspector goes back to the model it showed before when the load fails, and the entry
  /// goes. False, with `error`, for a file that is not there.
  bool openModel(const QString& path, QString* error = nullptr);
  /// The same with `options` for the import (the import dialog's answers), remembered for the
  /// file; an entry of the file already listed is read again with them.
  bool openModelWith(const QString& path, const core::ImportOptions& options,
                     QString* error = nullptr);
  /// Lists the *.fvm files of a folder (the bundled samples) without inspecting them; the first
  /// one loaded is inspected while the user has opened none.
  void addModelFolder(const QString& folder);
  /// Last session's models: those of `compared` still there are listed and ticked, `inspected`
  /// is inspected.
  /// `opened`: every model and engine listed last time, ticked or not (issue 64: the unticked
  /// ones were lost); `compared`: the ticked ones.
  void restoreModels(const QStringList& opened, const QStringList& compared,
                     const QString& inspected);
  /// A misread image to read again as its evaluation did: with `models` at `beamWidth`. One
  /// model is loaded afresh (its file may have changed since it was listed) and inspected;
  /// several keep their entries (the analysis read those), are ticked, and `focus` is inspected.
  /// False, with `error`, when a model file is gone.
  bool readFailure(const QImage& image, const QString& source, const QString& truth,
                   const QStringList& models, const QString& focus, int beamWidth,
                   QString* error = nullptr);
  /// Shows `id` in the inspector (read as soon as it is loaded).
  void inspect(ModelId id);
  ModelId inspectedModel() const { return m_inspected; }
  /// A load whose question (a DTRB file's characters) the user declined: as if it had failed.
  void abandonModel(ModelId id, const QString& message);
  /// Truth characters outside the inspected model's charset, as a sentence; empty: none.
  const QString& truthWarning() const { return m_truthWarning; }

  // ---- The readings

  /// Decoding of every reading: 1 greedy, more a beam search of that width (remembered).
  int beamWidth() const { return m_beamWidth; }
  void setBeamWidth(int width);
  /// Reads again showing the inspected model's `index`th best beam hypothesis; an index the
  /// shown trace does not list is ignored. Anything else that reads again starts from the best.
  void chooseHypothesis(int index);
  /// Model `id`'s reading of the image: its trace (null: failed, see the outcome's error) or
  /// null when the last reading did not include it.
  const TraceOutcome* outcome(ModelId id) const;
  std::shared_ptr<const core::Trace> trace(ModelId id) const;
  /// The models of the last reading that failed, one line each; empty when none failed.
  const QString& readingError() const { return m_readingError; }
  bool hasReadings() const { return !m_outcomes.empty(); }
  /// True while the image is read from its file, a reading waits to start or traces are made.
  bool isBusy() const;

 Q_SIGNALS:
  void imageChanged();
  void truthChanged(const QString& truth);
  void imageOpened(const QString& path);
  /// The file given to openImage() cannot be used; `message` names it. The image stays.
  void imageOpenFailed(const QString& message);
  /// The image opened but is damaged (a truncated JPEG): after imageOpened, naming the file.
  void imageWarning(const QString& message);
  /// The models listed, their names or state, the ticked ones or the inspected one changed.
  void modelsChanged();
  /// A model finished loading; `requested`: one the user opened (openModel()).
  void modelLoaded(foveal::ui::ModelId id, bool requested);
  /// A model cannot be used (the entry of one the user opened is gone by now).
  void modelFailed(const QString& path, const QString& message);
  /// A file the user opened cannot be imported without an answer (a DTRB file's characters, or
  /// an option given that the import refused): answer with openModelWith() or abandonModel().
  void optionsNeeded(foveal::ui::ModelId id, const foveal::ui::ImportQuestion& question);
  void truthWarningChanged(const QString& warning);
  void beamWidthChanged(int width);
  void readingStarted(int models);
  void readingProgress(int done, int models);
  /// The readings changed: a reading ended, or there is nothing to read.
  void tracesChanged();

 private:
  void requestRead();
  void read();
  void onTracesFinished(const std::vector<TraceOutcome>& outcomes);
  void onImageRead(const QString& path, ImageFile read);
  void dropImageRead();
  bool isLoaded(ModelId id) const;
  void onModelLoaded(ModelId id);
  void onModelLoadFailed(ModelId id, const QString& message);
  void onModelsRemoved();
  void modelsChangedHere();
  void updateTruthWarning();

  core::GreyImage m_grey;
  QImage m_display;
  QString m_source;
  QString m_truth;
  std::vector<core::Box> m_truthBoxes;
  std::shared_ptr<const core::GreyImage> m_page;     ///< setPageLine(): the page m_grey is cut from
  core::KrakenLineSpec m_pageLine;                   ///< ... and the line it is
  QFutureWatcher<ImageFile>* m_imageRead = nullptr;  ///< the newest openImage() still reading
  bool m_truthGiven = false;                         ///< a truth was set while m_imageRead reads

  ModelListModel* m_models;
  ModelId m_inspected = 0;
  ModelId m_previous = 0;      ///< inspected before the pending openModel(); back to it on failure
  QStringList m_openRequests;  ///< files given to openModel() still loading (absolute paths)
  bool m_userChoseModel = false;  ///< a model was opened by name: background loads do not show
  QString m_truthWarning;

  TraceRunner* m_runner;
  QTimer m_readSoon;  ///< coalesces the changes of one event-loop turn into one reading
  int m_beamWidth = 1;
  int m_hypothesis = 0;                        ///< for the next reading only
  std::vector<ModelId> m_traced;               ///< the models of the newest reading, in order
  std::map<ModelId, TraceOutcome> m_outcomes;  ///< the last reading's, per model
  QString m_readingError;
};

}  // namespace foveal::ui
