#pragma once
// Reads every line of a page with one or more models off the GUI thread (each line extracted as
// kraken extracts it and read by ModelSession::traceLine), reporting each line as it is read,
// with progress and cancel. One request at a time: a new one, or cancel(), ends the one in flight
// after its current line, and nothing more of it is emitted (every request is numbered).
#include <QFuture>
#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <vector>

#include "formats/page_layout.h"
#include "image/grey_image.h"
#include "trace/kraken_lines.h"
#include "trace/model_session.h"

namespace foveal::ui {

class PageReadingRunner : public QObject {
  Q_OBJECT
 public:
  explicit PageReadingRunner(QObject* parent = nullptr);
  /// Cancels the request in flight and waits for its current line.
  ~PageReadingRunner() override;

  /// Reads the lines of `layout` on `page` (an image named `imagePath`, which names the lines'
  /// sources) with every session, line by line, each line with every session in turn.
  void start(std::shared_ptr<const core::GreyImage> page,
             std::shared_ptr<const core::PageLayout> layout, const QString& imagePath,
             std::vector<std::shared_ptr<core::ModelSession>> sessions,
             const core::TraceOptions& options = {});
  /// Stops the request in flight: cancelled() now, nothing more of it later.
  void cancel();
  bool isRunning() const { return m_running; }
  /// Blocks until every task has stopped (tests, shutdown).
  void wait();

  /// What a line is called in its trace: "IMAGE#ID", as `foveal-cli trace --layout` names it.
  static std::string lineSource(const QString& imagePath, const core::LayoutLine& line);
  /// Reads one line as the runner does: a line kraken cannot read (neither a baseline nor a box)
  /// is an empty reading saying why, not an error.
  static core::LineReading readLine(const core::ModelSession& session, const core::GreyImage& page,
                                    const core::PageLayout& layout, size_t line,
                                    const QString& imagePath, const core::TraceOptions& options);

 Q_SIGNALS:
  void started(int total);
  /// Line `line` read by session `model` (indices into start()'s lists).
  void lineRead(int model, int line, std::shared_ptr<const foveal::core::LineReading> reading);
  /// `done` of `total` (lines x models) read.
  void progress(int done, int total);
  void finished();
  void cancelled();
  /// A model failed on a line in a way that is not the line's fault (its message names it);
  /// the other lines are still read.
  void lineFailed(int model, int line, const QString& message);

 private:
  std::atomic<quint64> m_latest{0};
  bool m_running = false;
  std::vector<QFuture<void>> m_tasks;  ///< a superseded task ends after its current line
};

}  // namespace foveal::ui
