#include "page_reading_runner.h"

#include <QMetaObject>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "base/error.h"

namespace foveal::ui {

PageReadingRunner::PageReadingRunner(QObject* parent) : QObject(parent) {}

PageReadingRunner::~PageReadingRunner() {
  ++m_latest;  // the task stops after its current line; its notifications go with this object
  wait();
}

void PageReadingRunner::wait() {
  for (auto& t : m_tasks) t.waitForFinished();
  m_tasks.clear();
}

void PageReadingRunner::cancel() {
  if (!m_running) return;
  ++m_latest;
  m_running = false;
  Q_EMIT cancelled();
}

std::string PageReadingRunner::lineSource(const QString& imagePath, const core::LayoutLine& line) {
  return imagePath.toStdString() + "#" + line.id;
}

core::LineReading PageReadingRunner::readLine(const core::ModelSession& session,
                                              const core::GreyImage& page,
                                              const core::PageLayout& layout, size_t line,
                                              const QString& imagePath,
                                              const core::TraceOptions& options) {
  const auto& l = layout.lines.at(line);
  core::KrakenLineSpec spec;
  try {
    spec = core::krakenLineOf(l, layout.textDirection);
  } catch (const core::Error& e) {  // neither a baseline nor a box: named, the others read
    core::LineReading r;
    r.empty = true;
    r.why = e.what();
    return r;
  }
  return session.traceLine(page, spec, lineSource(imagePath, l), options);
}

void PageReadingRunner::start(std::shared_ptr<const core::GreyImage> page,
                              std::shared_ptr<const core::PageLayout> layout,
                              const QString& imagePath,
                              std::vector<std::shared_ptr<core::ModelSession>> sessions,
                              const core::TraceOptions& options) {
  const quint64 generation = ++m_latest;
  m_tasks.erase(std::remove_if(m_tasks.begin(), m_tasks.end(),
                               [](const QFuture<void>& f) { return f.isFinished(); }),
                m_tasks.end());
  m_running = true;
  const int lines = static_cast<int>(layout->lines.size());
  const int models = static_cast<int>(sessions.size());
  const int total = lines * models;
  Q_EMIT started(total);
  m_tasks.push_back(QtConcurrent::run(
      [this, generation, page, layout, imagePath, sessions, options, lines, models, total] {
        int done = 0;
        for (int l = 0; l < lines; ++l)
          for (int m = 0; m < models; ++m) {
            if (m_latest.load() != generation) return;  // cancelled or superseded
            std::shared_ptr<const core::LineReading> reading;
            QString error;
            try {
              reading = std::make_shared<const core::LineReading>(
                  readLine(*sessions[static_cast<size_t>(m)], *page, *layout,
                           static_cast<size_t>(l), imagePath, options));
            } catch (const std::exception& e) {
              error = QString::fromStdString(e.what());
            }
            ++done;
            QMetaObject::invokeMethod(
                this,
                [this, generation, m, l, reading, error, done, total] {
                  if (m_latest.load() != generation) return;
                  if (reading)
                    Q_EMIT lineRead(m, l, reading);
                  else
                    Q_EMIT lineFailed(m, l, error);
                  Q_EMIT progress(done, total);
                  if (done == total) {
                    m_running = false;
                    Q_EMIT finished();
                  }
                },
                Qt::QueuedConnection);
          }
        if (total == 0)
          QMetaObject::invokeMethod(
              this,
              [this, generation] {
                if (m_latest.load() != generation) return;
                m_running = false;
                Q_EMIT finished();
              },
              Qt::QueuedConnection);
      }));
}

}  // namespace foveal::ui
