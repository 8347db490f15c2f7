#pragma once
// The image view's overlays as named painters. TraceView draws the enabled ones over the image in
// the registry's order; the inspector's toggles (and the settings that remember them) and the
// compare page's overlays are built from the same registry. A new overlay, such as the heat of a
// new per-step map, is one OverlayPainter in overlay_painter.cpp and one line in
// overlayPainters(): nothing else names it.
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QTransform>
#include <memory>
#include <vector>

#include "trace/trace.h"

class QPainter;

namespace foveal::ui {

class TraceView;

/// What a painter draws from: the trace at the view's current step, where the image lies in the
/// widget, and the view itself (its font, palette, cached heat map, the other overlays' state).
struct TraceViewContext {
  const TraceView& view;
  const core::Trace& trace;
  size_t stepIndex;
  const core::TraceStep& step;
  QTransform toWidget;  ///< source-image pixels to widget coordinates
  QRectF imageRect;     ///< the image in widget coordinates
  /// Each character's true box in source pixels (empty: unknown).
  const std::vector<core::Box>& truthBoxes;
};

/// One overlay of the image view, with its toggle. Painters are stateless: the view saves and
/// restores the QPainter around each, so none sees another's pen, brush or font.
class OverlayPainter {
 public:
  virtual ~OverlayPainter() = default;
  /// The key: the toggle's object name is "overlay-" + name, the setting that remembers it and
  /// TraceView::setOverlay take it. Stable: renaming one forgets the users' choice.
  virtual QString name() const = 0;
  /// The toggle's text and tooltip (translated).
  virtual QString label() const = 0;
  virtual QString toolTip() const { return {}; }
  virtual bool defaultOn() const = 0;
  /// Draws the overlay for the context's step; a trace without what it draws draws nothing.
  virtual void paint(QPainter& p, const TraceViewContext& c) const = 0;
};

/// Every overlay in drawing order: heat first so every outline stays on top of it, then the
/// mechanisms' own extras, localisation, and the tokens read so far.
const std::vector<std::unique_ptr<const OverlayPainter>>& overlayPainters();
/// The painter called `name`, or null.
const OverlayPainter* overlayPainter(const QString& name);
/// The names of the painters on by default, in drawing order.
QStringList defaultOverlays();

/// The overlays the user left on (defaults where never toggled), and remembering one toggle; the
/// inspector's toggles write them, the pages that show overlays start from them.
QStringList rememberedOverlays();
void rememberOverlay(const QString& name, bool on);

/// The built-in overlays' names, for code and tests that refer to one.
namespace overlay {
inline constexpr char kHeatImage[] = "heat-image";
inline constexpr char kHeatStrip[] = "heat-strip";
inline constexpr char kRegion[] = "region";
inline constexpr char kFiducials[] = "fiducials";
inline constexpr char kStn[] = "stn";
inline constexpr char kTruth[] = "truth";
inline constexpr char kFocus[] = "focus";
inline constexpr char kTokens[] = "tokens";
inline constexpr char kDoubt[] = "doubt";
}  // namespace overlay

}  // namespace foveal::ui
