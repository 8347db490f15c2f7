#include "reading_controls.h"

#include <QAction>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QShortcut>
#include <QSpinBox>
#include <QWidgetAction>

#include "reading_document.h"

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
    if (!m_actions.isEmpty()) {
      auto* separator = new QAction(this);
      separator->setSeparator(true);
      m_actions << separator;
    }
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
}

}  // namespace foveal::ui
