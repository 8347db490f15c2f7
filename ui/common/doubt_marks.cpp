#include "doubt_marks.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <cmath>

#include "base/error.h"
#include "settings.h"
#include "trace/doubt_signals.h"
#include "train/doubt_eval.h"

namespace foveal::ui {

namespace {

const Setting<QString> kDoubtSignal(QStringLiteral("doubt/signal"), {});
const Setting<double> kDoubtThreshold(QStringLiteral("doubt/threshold"), 0.5);
const Setting<QString> kDoubtCombinedFile(QStringLiteral("doubt/combinedFile"), {});

QString tr(const char* text) { return QCoreApplication::translate("DoubtMarks", text); }

}  // namespace

QList<QPair<QString, QString>> doubtSignalChoices() {
  return {
      {QString(), tr("No marks")},
      {QStringLiteral("probability"), tr("Probability")},
      {QStringLiteral("margin"), tr("Margin to the runner-up")},
      {QStringLiteral("output_entropy"), tr("Output entropy")},
      {QStringLiteral("attention_entropy"), tr("Attention entropy")},
      {QStringLiteral("attention_peak"), tr("Attention peak")},
      {QStringLiteral("attention_gini"), tr("Attention Gini")},
      {QStringLiteral("attention_coverage"), tr("Attention coverage")},
      {QStringLiteral("beam_disagreement"), tr("Beam disagreement")},
      {QStringLiteral("ctc_run_entropy"), tr("CTC run entropy")},
      {QStringLiteral("ctc_run_min_probability"), tr("CTC run's lowest p")},
      {kCombinedDoubt, tr("Combined score")},
  };
}

bool lowIsDoubtful(const QString& signal) {
  return signal == QLatin1String("probability") || signal == QLatin1String("margin") ||
         signal == QLatin1String("attention_peak") || signal == QLatin1String("attention_gini") ||
         signal == QLatin1String("ctc_run_min_probability");
}

double defaultDoubtThreshold(const QString& signal) {
  // Where the shipped models' balanced accuracy peaks, roughly (docs/RESULTS.md, the doubt
  // signals): a token under 0.9 or a margin under 0.8 is worth a look.
  if (signal == QLatin1String("probability")) return 0.9;
  if (signal == QLatin1String("margin")) return 0.8;
  if (signal == QLatin1String("ctc_run_min_probability")) return 0.9;
  if (signal == QLatin1String("output_entropy") || signal == QLatin1String("ctc_run_entropy"))
    return 0.3;
  if (signal == QLatin1String("attention_entropy")) return 1.0;
  if (signal == QLatin1String("attention_peak")) return 0.3;
  if (signal == QLatin1String("attention_gini")) return 0.5;
  if (signal == QLatin1String("attention_coverage")) return 0.3;
  if (signal == QLatin1String("beam_disagreement")) return 0.1;
  return 0.5;  // the combined score: P(wrong)
}

std::vector<bool> doubtfulSteps(const core::Trace& trace, const DoubtMarking& marking,
                                const core::train::CombinedDoubt* combined, QString* why,
                                std::vector<double>* values) {
  if (values) values->clear();
  if (!marking.on()) return {};
  if (trace.steps.empty()) return {};
  const core::DoubtSignals signals = core::doubtSignals(trace);
  std::vector<double> value;
  bool low = false;
  if (marking.signal == kCombinedDoubt) {
    if (!combined) {
      if (why)
        *why =
            tr("no combined score for this model: load the output of foveal-cli eval --doubt "
               "--json made with it");
      return {};
    }
    value = core::train::combinedDoubt(*combined, signals);
  } else {
    const int index = signals.indexOf(marking.signal.toStdString());
    if (index < 0) {
      if (why) *why = tr("this reading has no %1 signal").arg(marking.signal);
      return {};
    }
    value = signals.values[static_cast<size_t>(index)];
    low = !signals.signals[static_cast<size_t>(index)].higherIsDoubtful;
  }
  std::vector<bool> flags(trace.steps.size(), false);
  for (size_t t = 0; t < flags.size() && t < value.size(); ++t)
    flags[t] = std::isfinite(value[t]) &&
               (low ? value[t] <= marking.threshold : value[t] >= marking.threshold);
  if (values) *values = std::move(value);
  return flags;
}

DoubtMarks& DoubtMarks::instance() {
  static DoubtMarks marks;
  return marks;
}

DoubtMarks::DoubtMarks() {
  m_marking.signal = kDoubtSignal.value();
  m_marking.threshold = kDoubtThreshold.value();
  const QString file = kDoubtCombinedFile.value();
  if (!file.isEmpty()) {
    try {
      m_combined = core::train::readCombinedDoubt(file.toStdString());
      m_combinedFile = file;
    } catch (const core::Error&) {
      // The remembered report is gone or changed: the combined score is then offered as not
      // loaded (its tooltip says how to load one), the single signals work as before.
    }
  }
}

DoubtMarks::~DoubtMarks() = default;

void DoubtMarks::setMarking(const DoubtMarking& marking) {
  if (marking.signal == m_marking.signal && marking.threshold == m_marking.threshold) return;
  m_marking = marking;
  kDoubtSignal.set(marking.signal);
  kDoubtThreshold.set(marking.threshold);
  Q_EMIT changed();
}

void DoubtMarks::loadCombined(const QString& path) {
  m_combined = core::train::readCombinedDoubt(path.toStdString());
  m_combinedFile = path;
  kDoubtCombinedFile.set(path);
  Q_EMIT changed();
}

QStringList DoubtMarks::combinedModels() const {
  QStringList names;
  for (const auto& c : m_combined)
    names << QFileInfo(QString::fromStdString(c.model)).fileName() + QStringLiteral(" (") +
                 QString::fromStdString(c.dataset) + QLatin1Char(')');
  return names;
}

const core::train::CombinedDoubt* DoubtMarks::combinedFor(const QString& modelPath) const {
  if (modelPath.isEmpty()) return nullptr;
  const QFileInfo model(modelPath);
  for (const auto& c : m_combined) {
    const QFileInfo fitted(QString::fromStdString(c.model));
    if (fitted.isAbsolute() && fitted.exists() && model.exists() &&
        fitted.canonicalFilePath() == model.canonicalFilePath())
      return &c;
  }
  // A report names the model as the command line did (often a relative path): its file name.
  for (const auto& c : m_combined)
    if (QFileInfo(QString::fromStdString(c.model)).fileName() == model.fileName()) return &c;
  return nullptr;
}

std::vector<bool> DoubtMarks::flags(const core::Trace& trace, const QString& modelPath,
                                    QString* why, std::vector<double>* values) const {
  return doubtfulSteps(trace, m_marking, combinedFor(modelPath), why, values);
}

}  // namespace foveal::ui
