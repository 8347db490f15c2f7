#pragma once
// Export of what the user sees: a widget as PNG, SVG or PDF (chosen by the file extension), an
// image as PNG, and a trace as JSON, CSV, hOCR, ALTO or PAGE-XML.
#include <QImage>
#include <QRect>
#include <QString>

#include "formats/ocr_formats.h"
#include "trace/trace.h"

class QWidget;

namespace foveal::ui {

/// Renders `widget` to `path` (.png, .svg or .pdf). Returns an error message, empty on success.
QString exportWidget(QWidget* widget, const QString& path);
/// A figure of `widget` alone (a view, not the window's controls): PNG at `scale` pixels per
/// screen pixel, or vector SVG / PDF at the widget's size; `region` (widget coordinates; empty:
/// the whole widget) crops it to what it shows. Returns an error message or empty.
QString exportFigure(QWidget* widget, const QString& path, double scale = 1.0,
                     const QRect& region = {});
/// Writes `image` (.png) or wraps it into an SVG / PDF page. Returns an error message or empty.
QString exportImage(const QImage& image, const QString& path);
/// One row per step: step, token, prob, entropy, region, top-k, alpha..., STN quads.
QString traceToCsv(const core::Trace& trace);
/// .json, .csv, .hocr, .alto.xml (ALTO v4) or .page.xml (PAGE-XML 2019) by the file's ending.
/// Returns an error message or empty.
QString exportTrace(const core::Trace& trace, const QString& path);
/// The path a save dialog returned, with the ending of the filter chosen in it ("JSON (*.json)",
/// "ALTO v4 (*.alto.xml)"...): added when the name has none, and for ALTO and PAGE put in front of
/// a bare ".xml" (the dialog turns the suggested "_trace.json" into "_trace.xml", which no format
/// reads as ALTO: issue 64).
QString withFilterSuffix(const QString& path, const QString& filter);

}  // namespace foveal::ui
