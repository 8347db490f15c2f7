#include "page_line_model.h"

#include <QBrush>
#include <QColor>
#include <cmath>
#include <limits>

#include "base/text_metrics.h"
#include "confidence_scale.h"

namespace foveal::ui {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

PageLineModel::PageLineModel(QObject* parent) : QAbstractTableModel(parent) {}

void PageLineModel::setLayout(std::shared_ptr<const core::PageLayout> layout) {
  beginResetModel();
  m_layout = std::move(layout);
  const size_t n = m_layout ? m_layout->lines.size() : 0;
  m_readings.assign(n, nullptr);
  m_confidence.assign(n, kNaN);
  m_cer.assign(n, kNaN);
  endResetModel();
}

int PageLineModel::lineCount() const { return static_cast<int>(m_readings.size()); }

void PageLineModel::setReading(int line, std::shared_ptr<const core::LineReading> reading) {
  if (line < 0 || line >= lineCount()) return;
  const auto i = static_cast<size_t>(line);
  m_readings[i] = std::move(reading);
  m_confidence[i] = m_readings[i] ? meanConfidence(m_readings[i]->trace) : kNaN;
  const std::string& truth = m_layout->lines[i].text;
  m_cer[i] = m_readings[i] && !truth.empty()
                 ? core::characterErrorRate(m_readings[i]->trace.prediction, truth)
                 : kNaN;
  rowChanged(line);
}

void PageLineModel::setReadings(std::vector<std::shared_ptr<const core::LineReading>> readings) {
  readings.resize(m_readings.size());
  for (int l = 0; l < lineCount(); ++l) setReading(l, readings[static_cast<size_t>(l)]);
}

std::shared_ptr<const core::LineReading> PageLineModel::reading(int line) const {
  return line >= 0 && line < lineCount() ? m_readings[static_cast<size_t>(line)] : nullptr;
}

void PageLineModel::setThreshold(double threshold) {
  if (threshold == m_threshold) return;
  m_threshold = threshold;
  if (lineCount() > 0) Q_EMIT dataChanged(index(0, 0), index(lineCount() - 1, ColumnCount - 1));
}

double PageLineModel::confidence(int line) const {
  return line >= 0 && line < lineCount() ? m_confidence[static_cast<size_t>(line)] : kNaN;
}

bool PageLineModel::isFlagged(int line) const {
  const double c = confidence(line);
  return std::isfinite(c) && c < m_threshold;
}

QString PageLineModel::readingText(int line) const {
  const auto r = reading(line);
  return r ? QString::fromStdString(r->trace.prediction) : QString();
}

QString PageLineModel::transcription(int line) const {
  return line >= 0 && line < lineCount()
             ? QString::fromStdString(m_layout->lines[static_cast<size_t>(line)].text)
             : QString();
}

bool PageLineModel::hasTranscriptions() const {
  if (!m_layout) return false;
  for (const auto& l : m_layout->lines)
    if (!l.text.empty()) return true;
  return false;
}

double PageLineModel::cer(int line) const {
  return line >= 0 && line < lineCount() ? m_cer[static_cast<size_t>(line)] : kNaN;
}

int PageLineModel::readCount() const {
  int n = 0;
  for (const auto& r : m_readings) n += r != nullptr;
  return n;
}

int PageLineModel::flaggedCount() const {
  int n = 0;
  for (int l = 0; l < lineCount(); ++l) n += isFlagged(l);
  return n;
}

double PageLineModel::pageCer() const {
  // dinglehopper's page CER: the errors of every line over the characters of every line.
  long distance = 0, length = 0;
  for (int l = 0; l < lineCount(); ++l) {
    const auto r = reading(l);
    const std::string& truth = m_layout->lines[static_cast<size_t>(l)].text;
    if (!r || truth.empty()) continue;
    const auto e = core::characterErrors(r->trace.prediction, truth);
    distance += e.distance;
    length += e.truthLength;
  }
  return length ? static_cast<double>(distance) / static_cast<double>(length) : kNaN;
}

int PageLineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : lineCount();
}

int PageLineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant PageLineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= lineCount()) return {};
  const int line = index.row();
  const auto& l = m_layout->lines[static_cast<size_t>(line)];
  const auto r = reading(line);
  const double conf = confidence(line);
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Number:
        return line + 1;
      case Id:
        return QString::fromStdString(l.id);
      case Confidence:
        return std::isfinite(conf) ? QString::number(conf, 'f', 2) : QString();
      case Reading:
        if (!r) return tr("(not read)");
        return r->empty ? tr("(nothing: %1)").arg(QString::fromStdString(r->why))
                        : QString::fromStdString(r->trace.prediction);
      case Transcription:
        return QString::fromStdString(l.text);
      case Cer:
        return std::isfinite(cer(line)) ? QString::number(100 * cer(line), 'f', 1) + "%"
                                        : QString();
      default:
        return {};
    }
  }
  if (role == Qt::BackgroundRole && index.column() == Confidence && std::isfinite(conf))
    return QBrush(confidenceColour(conf, m_threshold).lighter(135));
  if (role == Qt::ForegroundRole) {
    if (!r && index.column() == Reading) return QBrush(QColor(120, 120, 120));
    if (index.column() == Reading && isFlagged(line)) return QBrush(QColor(198, 40, 40));
  }
  if (role == Qt::ToolTipRole) {
    if (index.column() == Reading && r && r->empty) return QString::fromStdString(r->why);
    if (index.column() == Confidence && std::isfinite(conf))
      return isFlagged(line) ? tr("Mean confidence %1, under the threshold %2")
                                   .arg(conf, 0, 'f', 3)
                                   .arg(m_threshold, 0, 'f', 2)
                             : tr("Mean confidence %1").arg(conf, 0, 'f', 3);
    if (index.column() == Id && !l.regionId.empty())
      return tr("In region %1").arg(QString::fromStdString(l.regionId));
  }
  if (role == Qt::TextAlignmentRole &&
      (index.column() == Number || index.column() == Confidence || index.column() == Cer))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant PageLineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Number:
      return tr("#");
    case Id:
      return tr("Line");
    case Confidence:
      return tr("Conf.");
    case Reading:
      return tr("Reading");
    case Transcription:
      return tr("Transcription");
    case Cer:
      return tr("CER");
    default:
      return {};
  }
}

void PageLineModel::rowChanged(int line) {
  Q_EMIT dataChanged(index(line, 0), index(line, ColumnCount - 1));
}

}  // namespace foveal::ui
