#pragma once
// The lines of an opened page as a table, in reading order: the line's id, one model's reading
// of it and its mean confidence (coloured on the confidence scale, flagged under the threshold),
// and, where the layout holds one, its transcription and the reading's character error rate.
// The Page view's canvas and its table both show this model through one selection model.
#include <QAbstractTableModel>
#include <QString>
#include <memory>
#include <vector>

#include "formats/page_layout.h"
#include "trace/kraken_lines.h"

namespace foveal::ui {

class PageLineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Number, Id, Confidence, Reading, Transcription, Cer, ColumnCount };

  explicit PageLineModel(QObject* parent = nullptr);

  /// A new page: its lines, none read yet.
  void setLayout(std::shared_ptr<const core::PageLayout> layout);
  std::shared_ptr<const core::PageLayout> layout() const { return m_layout; }
  /// The reading of line `line` (null: not read).
  void setReading(int line, std::shared_ptr<const core::LineReading> reading);
  /// Every line's reading at once (one per line; nulls for lines not read).
  void setReadings(std::vector<std::shared_ptr<const core::LineReading>> readings);
  std::shared_ptr<const core::LineReading> reading(int line) const;
  /// Lines under this mean confidence are flagged (the canvas draws them red).
  void setThreshold(double threshold);
  double threshold() const { return m_threshold; }

  int lineCount() const;
  /// The line's mean confidence (confidence_scale.h); NaN when not read or read as nothing.
  double confidence(int line) const;
  /// Read, with a confidence under the threshold.
  bool isFlagged(int line) const;
  /// The reading as text (empty when not read or empty).
  QString readingText(int line) const;
  QString transcription(int line) const;
  bool hasTranscriptions() const;
  /// The reading's CER against the transcription (dinglehopper's); NaN without either.
  double cer(int line) const;
  /// Lines read, lines flagged; the CER over every transcribed line read (NaN when none).
  int readCount() const;
  int flaggedCount() const;
  double pageCer() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  void rowChanged(int line);

  std::shared_ptr<const core::PageLayout> m_layout;
  std::vector<std::shared_ptr<const core::LineReading>> m_readings;
  std::vector<double> m_confidence;  ///< per line, cached
  std::vector<double> m_cer;         ///< per line, cached
  double m_threshold = 0.8;
};

}  // namespace foveal::ui
