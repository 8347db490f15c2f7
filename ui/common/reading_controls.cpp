#include "reading_controls.h"

#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QShortcut>
#include <QSpinBox>
#include <QWidgetAction>
#include <algorithm>

#include "base/error.h"
#include "doubt_marks.h"
#include "reading_document.h"
#include "settings.h"

namespace foveal::ui {

namespace {
/// A toolbar item of a widget the action owns while no toolbar shows it.
QAction* item(QWidget* widget, QObject* parent) {
  auto* action = new QWidgetAction(parent);
  action->setDefaultWidget(widget);
  return action;
}

/// A field and its label (its buddy: Alt+letter focuses it), as two toolbar items.
QList<QAction*> labelled(const QString& text, QWidget* field, QObject* parent) {
  auto* label = new QLabel(text);
  label->setBuddy(field);
  return {item(label, parent), item(field, parent)};
}
}  // namespace

ReadingControls::ReadingControls(ReadingDocument* document, int controls, QObject* parent)
    : QObject(parent) {
  if (controls & Truth) {
    auto* edit = new QLineEdit;
    edit->setPlaceholderText(tr("expected text (optional)"));
    edit->setMaximumWidth(240);
    edit->setClearButtonEnabled(true);
    edit->setText(document->truth());
    connect(edit, &QLineEdit::textChanged, document, &ReadingDocument::setTruth);
    connect(document, &ReadingDocument::truthChanged, edit, [edit](const QString& truth) {
      if (edit->text().trimmed() == truth) return;
      const QSignalBlocker block(edit);
      edit->setText(truth);
    });
    connect(edit, &QLineEdit::returnPressed, this, &ReadingControls::finished);
    auto* leave = new QShortcut(QKeySequence(Qt::Key_Escape), edit);
    leave->setContext(Qt::WidgetShortcut);
    connect(leave, &QShortcut::activated, this, &ReadingControls::finished);
    m_actions << labelled(tr(" &Truth: "), edit, this);
  }
  if (controls & Beam) {
    addSeparator();
    auto* beam = new QSpinBox;
    beam->setObjectName(QStringLiteral("beamWidth"));
    beam->setRange(1, 16);
    beam->setSpecialValueText(tr("greedy"));  // shown for 1
    beam->setValue(document->beamWidth());
    beam->setToolTip(
        tr("Decoding: greedy takes the most probable token at each step; a beam search of width "
           "N keeps the N most probable readings so far and returns the best whole reading "
           "(about N times slower). Regions are chosen by argmax either way."));
    beam->setKeyboardTracking(false);  // typing "12" reads once, not for 1 then 12
    connect(beam, &QSpinBox::valueChanged, document, &ReadingDocument::setBeamWidth);
    connect(document, &ReadingDocument::beamWidthChanged, beam, [beam](int width) {
      const QSignalBlocker block(beam);
      beam->setValue(width);
    });
    connect(beam, &QSpinBox::editingFinished, this, [this, beam] {
      if (beam->hasFocus()) Q_EMIT finished();
    });
    m_actions << labelled(tr(" &Beam: "), beam, this);
  }
  if (controls & Doubt) buildDoubt();
}

void ReadingControls::addSeparator() {
  if (m_actions.isEmpty()) return;
  auto* separator = new QAction(this);
  separator->setSeparator(true);
  m_actions << separator;
}

void ReadingControls::buildDoubt() {
  addSeparator();
  auto& marks = DoubtMarks::instance();
  auto* signal = new QComboBox;
  signal->setObjectName(QStringLiteral("doubtSignal"));
  for (const auto& [name, label] : doubtSignalChoices()) signal->addItem(label, name);
  signal->addItem(tr("Load combined score..."), QStringLiteral("load"));
  signal->setToolTip(
      tr("Mark the steps that are likely wrong, by one of the decoder's own signals or by the "
         "combined score fitted by foveal-cli eval --doubt --json (load its output). The token's "
         "probability and margin find wrong steps best; the attention signals barely better "
         "than chance (docs/RESULTS.md)."));
  auto* threshold = new QDoubleSpinBox;
  threshold->setObjectName(QStringLiteral("doubtThreshold"));
  threshold->setRange(-1000, 1000);
  threshold->setDecimals(2);
  threshold->setSingleStep(0.05);
  threshold->setKeyboardTracking(false);
  const auto sync = [signal, threshold] {
    const DoubtMarking m = DoubtMarks::instance().marking();
    const QSignalBlocker a(signal), b(threshold);
    signal->setCurrentIndex(std::max(0, signal->findData(m.signal)));
    threshold->setValue(m.threshold);
    threshold->setEnabled(m.on());
    threshold->setPrefix(m.on() ? (m.signal == kCombinedDoubt || !lowIsDoubtful(m.signal)
                                       ? QStringLiteral("\u2265 ")
                                       : QStringLiteral("\u2264 "))
                                : QString());
    threshold->setToolTip(m.on() ? tr("A step is marked when its %1 is %2 this")
                                       .arg(signal->currentText().toLower(),
                                            m.signal == kCombinedDoubt || !lowIsDoubtful(m.signal)
                                                ? tr("at or above")
                                                : tr("at or below"))
                                 : tr("Choose a signal to mark doubtful steps"));
  };
  sync();
  connect(&marks, &DoubtMarks::changed, signal, sync);
  connect(signal, &QComboBox::activated, this, [this, signal, sync](int index) {
    QString name = signal->itemData(index).toString();
    if (name == QLatin1String("load")) {
      const QString file = QFileDialog::getOpenFileName(
          signal, tr("Load a combined doubt score"), kLastFolder.value(),
          tr("eval --doubt --json output (*.json);;All files (*)"));
      if (file.isEmpty()) return sync();
      try {
        DoubtMarks::instance().loadCombined(file);
      } catch (const core::Error& e) {
        sync();
        QMessageBox::warning(signal, tr("Combined doubt score"), QString::fromStdString(e.what()));
        return;
      }
      name = kCombinedDoubt;
    }
    DoubtMarks::instance().setMarking({name, defaultDoubtThreshold(name)});
    sync();
    Q_EMIT finished();
  });
  connect(threshold, &QDoubleSpinBox::valueChanged, this, [](double value) {
    DoubtMarking m = DoubtMarks::instance().marking();
    m.threshold = value;
    DoubtMarks::instance().setMarking(m);
  });
  m_actions << labelled(tr(" D&oubt: "), signal, this) << item(threshold, this);
}

}  // namespace foveal::ui
