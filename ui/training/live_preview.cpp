#include "live_preview.h"
#include "run/run_folder.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QSlider>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "data/dataset_factory.h"
#include "patch_strip.h"
#include "qt_convert.h"
#include "reading_card.h"
#include "trace/model_session.h"
#include "trace_view.h"

namespace foveal::ui {

LivePreview::LivePreview(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* card = new ReadingCard(this);  // its strip scrolls: a long reading keeps the page narrow
  card->setCompact(true);              // under the curves: they keep most of the height
  layout->addWidget(card);
  m_title = card->title();
  m_view = card->view();
  m_strip = card->strip();
  card->info()->hide();
  m_title->setText(tr("<i>Live preview: select a run.</i>"));
  m_view->setMaximumHeight(170);
  m_slider = new QSlider(Qt::Horizontal, this);
  m_slider->setToolTip(
      tr("The run's checkpoints (its history/ folder, then those read while following it): drag "
         "back to watch the attention form"));
  m_slider->setPageStep(1);
  m_slider->setTickPosition(QSlider::TicksBelow);
  m_slider->hide();  // until a second checkpoint arrives
  layout->addWidget(m_slider);
  connect(m_slider, &QSlider::valueChanged, this, &LivePreview::showHistory);
  connect(&m_watcher, &QFutureWatcher<PreviewResult>::finished, this, &LivePreview::onFinished);
}

LivePreview::~LivePreview() { m_watcher.waitForFinished(); }

void LivePreview::setRun(const QString& runDir, const QString& sampleSpec, bool expectCheckpoint) {
  if (runDir == m_runDir && sampleSpec == m_sampleSpec) {
    if (expectCheckpoint != m_expectCheckpoint && !m_trace && !isBusy()) {
      m_expectCheckpoint = expectCheckpoint;
      m_title->setText(idleText());
    }
    return;
  }
  m_expectCheckpoint = expectCheckpoint;
  m_runDir = runDir;
  m_sampleSpec = sampleSpec;
  m_lastModified = {};
  m_lastSize = -1;
  m_trace.reset();
  m_history.clear();
  m_files.clear();
  m_entries.clear();
  m_wanted.clear();
  m_slider->hide();
  m_view->setTrace(nullptr);
  m_view->setImage({});
  m_strip->setTrace(nullptr);
  m_title->setText(idleText());
  checkForUpdate();
}

QString LivePreview::idleText() const {
  if (m_runDir.isEmpty()) return tr("<i>Live preview: select a run.</i>");
  const QString name = QFileInfo(m_runDir).fileName().toHtmlEscaped();
  if (!m_expectCheckpoint)
    return tr("<i>Live preview: %1 holds no checkpoint (latest.fvm), nothing to read.</i>")
        .arg(name);
  return tr("<i>Live preview: waiting for %1/latest.fvm</i>").arg(name);
}

QString LivePreview::statusText() const { return m_title->text(); }

QString LivePreview::latestPath() const {
  return QDir(m_runDir).filePath(QString::fromLatin1(core::run_folder::kLatestModel));
}

bool LivePreview::scanHistory() {
  const QDir dir(QDir(m_runDir).filePath(QString::fromLatin1(core::run_folder::kHistoryDir)));
  std::vector<HistoryFile> files;
  if (!m_runDir.isEmpty() && dir.exists()) {
    for (const QFileInfo& f : dir.entryInfoList({QStringLiteral("iter-*.fvm")}, QDir::Files)) {
      const qint64 it = core::run_folder::historyIteration(f.fileName().toStdString());
      if (it < 0) continue;
      HistoryFile h{f.filePath(), it, f.lastModified(), f.size(), nullptr};
      for (const auto& old : m_files)  // what was traced of an unchanged file stays
        if (old.path == h.path && old.modified == h.modified && old.size == h.size)
          h.result = old.result;
      files.push_back(std::move(h));
    }
    std::sort(files.begin(), files.end(),
              [](const HistoryFile& a, const HistoryFile& b) { return a.iteration < b.iteration; });
  }
  bool same = files.size() == m_files.size();
  for (size_t i = 0; same && i < files.size(); ++i)
    same = files[i].path == m_files[i].path && files[i].modified == m_files[i].modified;
  m_files = std::move(files);
  return !same;
}

void LivePreview::rebuildEntries() {
  // What the slider was on, to keep it there (or at the end, when following).
  const bool follow = m_entries.empty() || m_slider->value() >= int(m_entries.size()) - 1;
  Entry was;
  if (!m_entries.empty())
    was = m_entries[size_t(std::clamp(m_slider->value(), 0, int(m_entries.size()) - 1))];
  const QString wasPath =
      was.file >= 0 && was.file < int(m_files.size()) ? m_files[size_t(was.file)].path : QString();
  QDateTime newestFile;
  for (const auto& f : m_files)
    if (!newestFile.isValid() || f.modified > newestFile) newestFile = f.modified;
  std::vector<Entry> entries;
  for (int i = 0; i < int(m_files.size()); ++i) entries.push_back({i, -1});
  for (int i = 0; i < int(m_history.size()); ++i)
    if (!newestFile.isValid() || m_history[size_t(i)].modified > newestFile)
      entries.push_back({-1, i});
  m_entries = std::move(entries);
  int index = int(m_entries.size()) - 1;
  bool found = false;
  if (!follow)
    for (int i = 0; i < int(m_entries.size()); ++i) {
      const Entry& e = m_entries[size_t(i)];
      if ((was.shot >= 0 && e.shot == was.shot) ||
          (!wasPath.isEmpty() && e.file >= 0 && m_files[size_t(e.file)].path == wasPath)) {
        index = i;
        found = true;
      }
    }
  {
    const QSignalBlocker block(m_slider);
    m_slider->setRange(0, std::max(0, historySize() - 1));
    m_slider->setValue(std::max(0, index));
  }
  m_slider->setVisible(historySize() > 1);
  // Following, or the checkpoint shown is gone (the trainer thinned it out): show the newest.
  if ((follow || !found) && index >= 0) showEntry(index);
}

QStringList LivePreview::historyLabels() const {
  QStringList labels;
  for (const auto& e : m_entries)
    labels << (e.file >= 0 ? tr("iteration %1").arg(m_files[size_t(e.file)].iteration)
                           : tr("latest.fvm %1")
                                 .arg(m_history[size_t(e.shot)].modified.toString(
                                     QStringLiteral("HH:mm:ss"))));
  return labels;
}

void LivePreview::checkForUpdate() {
  if (m_runDir.isEmpty()) return;
  const bool historyChanged = scanHistory();
  const QFileInfo f(latestPath());
  const bool latestChanged =
      f.isFile() && (f.lastModified() != m_lastModified || f.size() != m_lastSize);
  if (latestChanged) {
    m_lastModified = f.lastModified();
    m_lastSize = f.size();
    m_pending = true;
  }
  if (historyChanged) rebuildEntries();
  startNext();
}

void LivePreview::startNext() {
  if (m_watcher.isRunning() || m_runDir.isEmpty()) return;
  // The file the slider is on first (the user waits for it), then the newest latest.fvm.
  if (!m_wanted.isEmpty()) {
    const QString path = m_wanted;
    m_wanted.clear();
    for (const auto& f : m_files)
      if (f.path == path && !f.result) {
        start(path);
        return;
      }
  }
  if (m_pending) {
    m_pending = false;
    start(latestPath());
  }
}

void LivePreview::start(const QString& modelPath) {
  const std::string model = modelPath.toStdString();
  const std::string spec = m_sampleSpec.toStdString();
  const QString runDir = m_runDir;
  m_watcher.setFuture(QtConcurrent::run([model, spec, runDir, modelPath]() {
    PreviewResult r;
    r.runDir = runDir;
    r.modelPath = modelPath;
    try {
      const auto dataset = core::data::openDataset(spec);
      const auto sample = dataset->get(0);
      auto session = core::ModelSession::open(model);
      r.trace = std::make_shared<const core::Trace>(session->trace(sample.image, spec));
      r.image = toQImage(sample.image);
      r.truth = QString::fromStdString(sample.label);
    } catch (const std::exception& e) {
      r.error = QString::fromStdString(e.what());
    }
    return r;
  }));
}

void LivePreview::onFinished() {
  // A notification left over from the previous future can arrive after setFuture(): the current
  // one is then still running, and result() would block the GUI thread until it ends.
  if (!m_watcher.isFinished() || m_watcher.future().resultCount() == 0) return;
  const PreviewResult r = m_watcher.result();
  if (r.runDir != m_runDir) {
    if (!m_runDir.isEmpty()) {  // the run changed while it read: read the new one's latest
      m_lastModified = {};
      m_lastSize = -1;
      checkForUpdate();
    }
    return;
  }
  ++m_done;
  if (r.modelPath != latestPath()) {  // a history file
    for (int i = 0; i < int(m_files.size()); ++i)
      if (m_files[size_t(i)].path == r.modelPath) {
        m_files[size_t(i)].result = std::make_shared<const PreviewResult>(r);
        const int shown = historyIndex();
        if (shown >= 0 && shown < historySize() && m_entries[size_t(shown)].file == i)
          showEntry(shown);
      }
  } else if (!r.error.isEmpty()) {
    m_title->setText(QStringLiteral("<span style='color:#c62828'>%1</span>")
                         .arg(tr("Preview: %1").arg(r.error).toHtmlEscaped()));
  } else {
    m_history.push_back({m_lastModified, r});
    rebuildEntries();
  }
  startNext();
  Q_EMIT updated();
}

int LivePreview::historyIndex() const { return m_entries.empty() ? -1 : m_slider->value(); }

void LivePreview::showHistory(int index) {
  if (index < 0 || index >= historySize()) return;
  if (m_slider->value() != index) {
    const QSignalBlocker block(m_slider);
    m_slider->setValue(index);
  }
  showEntry(index);
}

void LivePreview::showEntry(int index) {
  const Entry& e = m_entries[size_t(index)];
  const QString which =
      historySize() > 1 ? tr("checkpoint %1 of %2, ").arg(index + 1).arg(historySize()) : QString();
  if (e.shot >= 0) {
    const Shot& shot = m_history[size_t(e.shot)];
    showResult(
        shot.result,
        tr("latest.fvm, %1%2").arg(which, shot.modified.toString(QStringLiteral("HH:mm:ss"))));
    return;
  }
  const HistoryFile& f = m_files[size_t(e.file)];
  const QString name = tr("iteration %1, %2%3")
                           .arg(f.iteration)
                           .arg(which, f.modified.toString(QStringLiteral("HH:mm:ss")));
  if (f.result) {
    showResult(*f.result, name);
    return;
  }
  m_title->setText(tr("<i>Live preview (%1): reading the checkpoint...</i>").arg(name));
  m_wanted = f.path;
  startNext();
}

void LivePreview::showResult(const PreviewResult& r, const QString& which) {
  if (!r.error.isEmpty() || !r.trace) {
    m_title->setText(QStringLiteral("<span style='color:#c62828'>%1</span>")
                         .arg(tr("Preview (%1): %2").arg(which, r.error).toHtmlEscaped()));
    return;
  }
  m_trace = r.trace;
  m_view->setImage(r.image);
  m_view->setTrace(r.trace);
  m_view->setStep(0);
  m_strip->setTrace(r.trace);
  m_strip->setTruth(r.truth);
  m_title->setText(
      tr("<b>Live preview</b> (%1): reads \"%2\", truth \"%3\", mean "
         "attention entropy %4")
          .arg(which, qstr(r.trace->prediction).toHtmlEscaped(), r.truth.toHtmlEscaped())
          .arg(r.trace->meanEntropy, 0, 'f', 3));
}

}  // namespace foveal::ui
