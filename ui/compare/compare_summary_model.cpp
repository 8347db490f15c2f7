#include "compare_summary_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>

#include "base/text_metrics.h"
#include "doubt_marks.h"
#include "qt_convert.h"
#include "train/evaluation.h"

namespace foveal::ui {

CompareSummaryModel::CompareSummaryModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareSummaryModel::setRows(std::vector<Row> rows) {
  beginResetModel();
  m_rows = std::move(rows);
  endResetModel();
}

void CompareSummaryModel::setTruth(const QString& truth) {
  m_truth = truth;
  if (!m_rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

int CompareSummaryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int CompareSummaryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString CompareSummaryModel::differences(const QString& prediction, const QString& truth) {
  QString out;
  for (const auto& op : core::alignCharacters(prediction.toStdString(), truth.toStdString())) {
    switch (op.kind) {
      case core::CharOp::Kind::Match:
        out += qstr(op.truth);
        break;
      case core::CharOp::Kind::Substitute:
        out += QStringLiteral("[%1→%2]").arg(qstr(op.truth), qstr(op.predicted));
        break;
      case core::CharOp::Kind::Insert:
        out += QStringLiteral("[+%1]").arg(qstr(op.predicted));
        break;
      case core::CharOp::Kind::Delete:
        out += QStringLiteral("[-%1]").arg(qstr(op.truth));
        break;
    }
  }
  return out;
}

QVariant CompareSummaryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Row& r = m_rows[static_cast<size_t>(index.row())];
  const bool known = !m_truth.isEmpty() && r.trace;
  const bool right = known && core::train::scorePrediction(r.trace->prediction,
                                                           m_truth.toStdString(), r.textScoring)
                                  .correct;
  if (role == Qt::ForegroundRole && index.column() == Correct && known)
    return QBrush(right ? QColor(26, 127, 55) : QColor(198, 40, 40));
  if (role == Qt::ToolTipRole && !r.error.isEmpty()) return r.error;
  if (role == Qt::ToolTipRole && index.column() == Doubtful && !r.doubtNote.isEmpty())
    return r.doubtNote;
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Model:
      return r.model;
    case Prediction:
      return r.trace ? qstr(r.trace->prediction) : tr("error: %1").arg(r.error);
    case Correct:
      return known ? (right ? tr("✔ right") : tr("✘ wrong")) : QStringLiteral("–");
    case Differences:
      return known ? (right ? QString() : differences(qstr(r.trace->prediction), m_truth))
                   : QString();
    case Confidence:
      return r.trace ? QString::number(r.trace->confidence, 'f', 3) : QString();
    case Entropy:
      return r.trace ? QString::number(r.trace->meanEntropy, 'f', 3) : QString();
    case Doubtful:
      return doubtText(r);
    default:
      return {};
  }
}

QString CompareSummaryModel::doubtText(const Row& r) {
  if (!r.trace || !DoubtMarks::instance().marking().on()) return QStringLiteral("–");
  if (r.doubtful.empty()) return r.trace->steps.empty() ? tr("no step") : tr("no signal");
  const auto n = std::count(r.doubtful.begin(), r.doubtful.end(), true);
  return tr("%1 of %2").arg(n).arg(r.doubtful.size());
}

QVariant CompareSummaryModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case Model:
      return tr("Model");
    case Prediction:
      return tr("Prediction");
    case Correct:
      return tr("Truth");
    case Differences:
      return tr("Edits (truth→read)");
    case Confidence:
      return tr("Confidence");
    case Entropy:
      return tr("Mean entropy");
    case Doubtful:
      return tr("Doubtful steps");
    default:
      return {};
  }
}

}  // namespace foveal::ui
