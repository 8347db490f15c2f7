#include "live_preview.h"
#include "run_folder.h"

#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QSlider>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "dataset_factory.h"
#include "model_session.h"
#include "patch_strip.h"
#include "qt_convert.h"
#include "reading_card.h"
#include "trace_view.h"

namespace foveal::ui {

LivePreview::LivePreview(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* card = new ReadingCard(this);  // its strip scrolls: a long reading keeps the page narrow
  layout->addWidget(card);
  m_title = card->title();
  m_view = card->view();
  m_strip = card->strip();
  card->info()->hide();
  m_title->setText(tr("<i>Live preview: select a run.</i>"));
  m_view->setMaximumHeight(170);
  m_slider = new QSlider(Qt::Horizontal, this);
  m_slider->setToolTip(
      tr("Checkpoints read while following this run: drag back to watch the attention form"));
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

void LivePreview::checkForUpdate() {
  if (m_runDir.isEmpty()) return;
  const QFileInfo f(QDir(m_runDir).filePath(QString::fromLatin1(core::run_folder::kLatestModel)));
  if (!f.isFile()) return;
  if (f.lastModified() == m_lastModified && f.size() == m_lastSize) return;
  m_lastModified = f.lastModified();
  m_lastSize = f.size();
  if (m_watcher.isRunning()) {
    m_pending = true;  // trace the newest file once this one is done
    return;
  }
  start();
}

void LivePreview::start() {
  const std::string model =
      QDir(m_runDir).filePath(QString::fromLatin1(core::run_folder::kLatestModel)).toStdString();
  const std::string spec = m_sampleSpec.toStdString();
  const QString runDir = m_runDir;
  m_watcher.setFuture(QtConcurrent::run([model, spec, runDir]() {
    PreviewResult r;
    r.runDir = runDir;
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
    if (m_pending || !m_runDir.isEmpty()) {
      m_pending = false;
      m_lastModified = {};
      m_lastSize = -1;
      checkForUpdate();
    }
    return;
  }
  ++m_done;
  if (!r.error.isEmpty()) {
    m_title->setText(QStringLiteral("<span style='color:#c62828'>%1</span>")
                         .arg(tr("Preview: %1").arg(r.error).toHtmlEscaped()));
  } else {
    // Follow the newest unless the user scrubbed back.
    const bool follow = m_history.empty() || m_slider->value() == m_slider->maximum();
    m_history.push_back({m_lastModified, r});
    {
      const QSignalBlocker block(m_slider);
      m_slider->setRange(0, historySize() - 1);
      if (follow) m_slider->setValue(historySize() - 1);
    }
    m_slider->setVisible(historySize() > 1);
    if (follow) showShot(m_history.back());
  }
  if (m_pending) {
    m_pending = false;
    start();
  }
  Q_EMIT updated();
}

int LivePreview::historyIndex() const { return m_history.empty() ? -1 : m_slider->value(); }

void LivePreview::showHistory(int index) {
  if (index < 0 || index >= historySize()) return;
  if (m_slider->value() != index) {
    const QSignalBlocker block(m_slider);
    m_slider->setValue(index);
  }
  showShot(m_history[size_t(index)]);
}

void LivePreview::showShot(const Shot& shot) {
  const PreviewResult& r = shot.result;
  m_trace = r.trace;
  m_view->setImage(r.image);
  m_view->setTrace(r.trace);
  m_view->setStep(0);
  m_strip->setTrace(r.trace);
  m_strip->setTruth(r.truth);
  const QString which = historySize() > 1
                            ? tr("checkpoint %1 of %2, ").arg(historyIndex() + 1).arg(historySize())
                            : QString();
  m_title->setText(tr("<b>Live preview</b> (latest.fvm, %1%2): reads \"%3\", truth \"%4\", mean "
                      "attention entropy %5")
                       .arg(which, shot.modified.toString(QStringLiteral("HH:mm:ss")),
                            qstr(r.trace->prediction).toHtmlEscaped(), r.truth.toHtmlEscaped())
                       .arg(r.trace->meanEntropy, 0, 'f', 3));
}

}  // namespace foveal::ui
