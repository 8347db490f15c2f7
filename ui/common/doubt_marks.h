#pragma once
// Doubtful steps in the window (issue 67): which steps of a reading the decoder's own signals
// (core/trace/doubt_signals.h) say are likely wrong. One setting for the whole window chooses the
// signal, or the combined score of an `eval --doubt --json` report, and the threshold; the
// Inspector's strip and image and every Compare card mark the steps it flags, and follow it when
// it changes (DoubtMarks::changed).
#include <QObject>
#include <QPair>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "trace/trace.h"

namespace foveal::core::train {
struct CombinedDoubt;
}

namespace foveal::ui {

/// Which steps are marked: a step is doubtful when its signal lies on the doubtful side of the
/// threshold: at or below it for the signals that read low as doubtful (probability, margin,
/// attention peak and Gini, CTC's lowest run probability), at or above it for the others; the
/// combined score is P(wrong), flagged at or above.
struct DoubtMarking {
  QString signal;  ///< a doubt signal's name, kCombinedDoubt, or empty: no marks
  double threshold = 0.5;
  bool on() const { return !signal.isEmpty(); }
};

inline const QString kCombinedDoubt = QStringLiteral("combined");

/// The signals the setting offers, (name, label), in order; the first is "no marks" (empty
/// name). Per-head signals are not offered (each head's attention is as blind as the whole's).
QList<QPair<QString, QString>> doubtSignalChoices();
/// The threshold a signal starts at when chosen.
double defaultDoubtThreshold(const QString& signal);
/// Whether a low value of the signal is the doubtful one.
bool lowIsDoubtful(const QString& signal);

/// Per step of `trace`, whether `marking` flags it, by `combined` where it is the combined score;
/// empty when the marking is off or the trace has no such signal (`why` then says so).
/// `values`: each step's value of the signal (P(wrong) for the combined score; NaN where none).
std::vector<bool> doubtfulSteps(const core::Trace& trace, const DoubtMarking& marking,
                                const core::train::CombinedDoubt* combined, QString* why = nullptr,
                                std::vector<double>* values = nullptr);

/// The window's doubt setting (remembered across sessions) and the combined scores it was given.
class DoubtMarks : public QObject {
  Q_OBJECT
 public:
  static DoubtMarks& instance();
  ~DoubtMarks() override;

  DoubtMarking marking() const { return m_marking; }
  void setMarking(const DoubtMarking& marking);

  /// Reads the combined scores of an `foveal-cli eval --doubt --json` output and remembers the
  /// file. Throws core::Error naming the file and the problem (the scores held stay).
  void loadCombined(const QString& path);
  QString combinedFile() const { return m_combinedFile; }
  /// The models the combined scores were fitted for (file names), e.g. for a tooltip.
  QStringList combinedModels() const;
  /// The combined score fitted for `modelPath` (the same file, or failing that a report of a
  /// model of the same file name); null when none was loaded for it.
  const core::train::CombinedDoubt* combinedFor(const QString& modelPath) const;

  /// Per step of `trace`, read by the model file `modelPath`: doubtfulSteps under the setting.
  std::vector<bool> flags(const core::Trace& trace, const QString& modelPath,
                          QString* why = nullptr, std::vector<double>* values = nullptr) const;

 Q_SIGNALS:
  void changed();

 private:
  DoubtMarks();
  DoubtMarking m_marking;
  QString m_combinedFile;
  std::vector<core::train::CombinedDoubt> m_combined;
};

}  // namespace foveal::ui
