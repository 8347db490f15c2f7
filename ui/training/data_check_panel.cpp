#include "data_check_panel.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "base/error.h"
#include "data/data_check.h"
#include "data/dataset_factory.h"
#include "train/train_config.h"

namespace foveal::ui {

namespace {

// The run's model: the preset's, scaled, with the dialog's stages over it (as `train` applies
// --transformation, ... over a preset).
core::ModelConfig runModel(const LaunchSpec& spec, std::vector<std::string>* presetData) {
  auto cfg = core::train::presetConfig(spec.preset.toStdString(), spec.width);
  if (presetData) *presetData = cfg.trainData;
  core::ModelConfig& m = cfg.model;
  auto over = [](std::string& field, const QString& value) {
    if (!value.isEmpty()) field = value.toStdString();
  };
  over(m.transformation, spec.transformation);
  over(m.features, spec.features);
  over(m.sequence, spec.sequence);
  over(m.prediction, spec.prediction);
  over(m.cell, spec.cell);
  over(m.attention, spec.attention);
  if (m.prediction == "ctc" && spec.attention.isEmpty()) m.attention = "soft";  // no glimpse
  if (spec.projection >= 0) m.sequenceProjection = spec.projection == 1;
  m.validate();
  return m;
}

}  // namespace

DataCheckOutcome checkLaunchData(const LaunchSpec& spec, size_t limit,
                                 const std::atomic<bool>* cancel) {
  DataCheckOutcome out;
  try {
    std::vector<std::string> sets;
    const core::ModelConfig model = runModel(spec, &sets);
    if (!spec.data.trimmed().isEmpty()) {
      sets.clear();
      for (const QString& part : spec.data.split(QLatin1Char(';'), Qt::SkipEmptyParts))
        if (!part.trimmed().isEmpty()) sets.push_back(part.trimmed().toStdString());
    }
    if (sets.empty()) throw core::Error("no training data to check");
    const auto limits = core::data::labelLimits(model, "preset " + spec.preset.toStdString());
    QStringList lines, details;
    for (const auto& arg : sets) {
      const auto ds = core::data::openDataset(arg);
      const bool partial = ds->endless() || ds->size() > limit;
      const auto r =
          core::data::checkDataset(*ds, limits, partial ? limit : 0, 0,
                                   [cancel](size_t, size_t) { return !(cancel && *cancel); });
      if (cancel && *cancel) return {};
      out.usable += r.usable;
      out.entries += r.entries;
      out.partial = out.partial || partial;
      const QString name = QString::fromStdString(arg);
      lines << QStringLiteral("%1: %2%3")
                   .arg(
                       name, QString::fromStdString(r.summary()),
                       partial ? QObject::tr(" (the first %1 entries)").arg(r.entries) : QString());
      details << QString::fromStdString(ds->describe()) + QStringLiteral("\n") +
                     QString::fromStdString(r.text(limits));
    }
    out.summary = lines.join(QLatin1Char('\n'));
    out.details = details.join(QStringLiteral("\n"));
    out.ok = true;
  } catch (const std::exception& e) {
    out.error = QString::fromStdString(e.what());
  }
  return out;
}

DataCheckPanel::DataCheckPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout;
  m_summary = new QLabel(this);
  m_summary->setObjectName(QStringLiteral("dataCheckSummary"));
  m_summary->setWordWrap(true);
  m_summary->setTextFormat(Qt::RichText);
  m_toggle = new QToolButton(this);
  m_toggle->setText(tr("Details"));
  m_toggle->setCheckable(true);
  m_toggle->setToolTip(tr("What was dropped and why, the label-length and image-size histograms"));
  row->addWidget(m_summary, 1);
  row->addWidget(m_toggle, 0, Qt::AlignTop);
  layout->addLayout(row);
  m_details = new QPlainTextEdit(this);
  m_details->setObjectName(QStringLiteral("dataCheckDetails"));
  m_details->setReadOnly(true);
  m_details->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_details->setLineWrapMode(QPlainTextEdit::NoWrap);
  m_details->setMinimumHeight(m_details->fontMetrics().height() * 12);
  m_details->hide();
  layout->addWidget(m_details);
  connect(m_toggle, &QToolButton::toggled, m_details, &QWidget::setVisible);
  m_delay = new QTimer(this);
  m_delay->setSingleShot(true);
  m_delay->setInterval(400);  // typing a path restarts it
  connect(m_delay, &QTimer::timeout, this, &DataCheckPanel::start);
  connect(&m_watcher, &QFutureWatcher<DataCheckOutcome>::finished, this, &DataCheckPanel::finished);
}

DataCheckPanel::~DataCheckPanel() {
  if (m_cancel) *m_cancel = true;
  m_watcher.waitForFinished();
}

void DataCheckPanel::check(const LaunchSpec& spec) {
  // Only what changes the model or the data matters (not the run folder, the device...).
  auto key = [](const LaunchSpec& s) {
    return QStringList{s.preset,     QString::number(s.width, 'g', 8),
                       s.data,       s.transformation,
                       s.features,   s.sequence,
                       s.prediction, s.cell,
                       s.attention,  QString::number(s.projection)};
  };
  if (m_state != State::Idle && key(spec) == key(m_spec)) return;
  m_spec = spec;
  if (m_state == State::Idle) m_state = State::Checking;  // from now on, compare with it
  m_delay->start();
}

void DataCheckPanel::skip(const QString& why) {
  m_delay->stop();
  if (m_cancel) *m_cancel = true;
  m_again = false;
  m_summary->setText(why.toHtmlEscaped());
  m_details->clear();
  setState(State::Idle);
}

void DataCheckPanel::start() {
  if (m_watcher.isRunning()) {  // supersede it: the newest settings are checked when it ends
    *m_cancel = true;
    m_again = true;
    return;
  }
  m_again = false;
  m_cancel = std::make_shared<std::atomic<bool>>(false);
  m_summary->setText(tr("<i>Checking the training data...</i>"));
  setState(State::Checking);
  const LaunchSpec spec = m_spec;
  auto cancel = m_cancel;
  m_watcher.setFuture(
      QtConcurrent::run([spec, cancel] { return checkLaunchData(spec, kLimit, cancel.get()); }));
}

void DataCheckPanel::finished() {
  if (m_again) {
    start();
    return;
  }
  if (m_state == State::Idle) return;  // skipped meanwhile
  const DataCheckOutcome r = m_watcher.result();
  if (!r.ok) {
    m_summary->setText(tr("<span style='color:#b26a00'>⚠ The data could not be checked: %1</span>")
                           .arg(r.error.toHtmlEscaped()));
    m_details->setPlainText(r.error);
    setState(State::Failed);
    return;
  }
  QString text = r.summary.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"));
  if (r.usable == 0)
    text = tr("<span style='color:#c62828'><b>Nothing usable:</b> the run would have no data."
              "</span><br>%1")
               .arg(text);
  else if (r.usable < r.entries)
    text = tr("<span style='color:#b26a00'>⚠</span> %1").arg(text);
  else
    text = tr("<span style='color:#1a7f37'>✔</span> %1").arg(text);
  m_summary->setText(text);
  m_details->setPlainText(r.details);
  setState(r.usable == 0 ? State::NothingUsable : State::Usable);
}

void DataCheckPanel::setState(State state) {
  m_state = state;
  Q_EMIT stateChanged(state);
}

QString DataCheckPanel::summaryText() const { return m_summary->text(); }

QString DataCheckPanel::detailsText() const { return m_details->toPlainText(); }

}  // namespace foveal::ui
