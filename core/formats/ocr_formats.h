#pragma once
// The OCR world's page formats, written from a trace: hOCR (with Tesseract's per-step
// alternatives), ALTO v4 and PAGE-XML 2019. What dinglehopper, browse-ocrd, LAREX, OCR4all and
// Transkribus read. Torch-free.
//
// One line image is one page holding one text block, one line and the line's words (the reading
// split at spaces); each character is a step of the trace with its box, its probability and its
// top-k. Boxes are the steps' character boxes (core/trace/localisation.h) rounded to whole pixels
// the way Tesseract writes them: left and top edges, and (hOCR) right and bottom edges exclusive,
// or (ALTO) WIDTH = right - left; the origin is the image's top-left corner.
#include <array>
#include <string>

#include "trace/trace.h"

namespace foveal::core {

enum class OcrFormat { Hocr, Alto, Page };

/// "hocr", "alto", "page".
std::string toString(OcrFormat format);
/// The format called `name` ("hocr", "alto", "page"); throws Error naming the choices.
OcrFormat ocrFormatFromString(const std::string& name);
/// The file name ending a file of the format gets: ".hocr", ".alto.xml", ".page.xml".
std::string ocrFileSuffix(OcrFormat format);

/// The trace as a document of `format`.
std::string toOcrDocument(const Trace& trace, OcrFormat format);

/// hOCR (XHTML), as Tesseract writes it with hocr_char_boxes and lstm_choice_mode=2: ocr_page >
/// ocr_line > ocrx_word; per character an ocrx_cinfo span (`x_bboxes x0 y0 x1 y1; x_conf P`)
/// followed by an ocrx_cinfo span `lstm_choices_...` holding the step's top-k, each an
/// ocrx_cinfo span `choice_...` titled `x_confs P` (P in percent).
std::string toHocr(const Trace& trace);

/// ALTO v4 (namespace ns-v4#; every element and attribute used also exists in v3 except Glyph
/// and Variant, which v3 readers skip): Description (pixel units, the image, the model as the
/// OCR processing step) and Layout > Page > PrintSpace > TextBlock > TextLine > String (SP
/// between words) with HPOS/VPOS/WIDTH/HEIGHT, WC (the word's confidence, 0..1) and CC (one digit
/// per character, 0 sure .. 9 unsure: round(9 (1 - p))); a String's Glyphs carry each step's box
/// and GC, and its Variants the step's other top-k tokens with VC. A beam search's other readings
/// are ALTERNATIVEs of the String when the line is one word.
std::string toAlto(const Trace& trace);

/// PAGE-XML (2019-07-15 schema): PcGts > Metadata (Creator, Created, LastChange) and Page
/// (imageFilename, imageWidth, imageHeight) > TextRegion > TextLine > Word > Glyph, each with
/// Coords (points "x,y x,y ..."; a Glyph's polygon is its STN quad for sharp models, otherwise
/// its box) and TextEquivs (index 0 the reading with conf, the step's other top-k tokens and the
/// beam's other readings as further TextEquivs, by rank). `createdUtc` is the Created and
/// LastChange timestamp (xsd:dateTime); empty: now.
std::string toPageXml(const Trace& trace, const std::string& createdUtc = {});

/// Text for XML content and attribute values: & < > " ' escaped, each character XML 1.0 forbids
/// (C0 controls but tab, newline, return) written as U+FFFD, so the document stays valid and
/// shows where one was.
std::string xmlEscape(const std::string& text);
/// How many characters of `text` XML 1.0 forbids (what xmlEscape replaces).
size_t xmlForbiddenCount(const std::string& text);

/// The characters the writers replace in the readings of one or more traces: in the reading
/// (the prediction) and in its alternatives (the steps' other top-k tokens, the beam's other
/// readings). A charset may hold control characters; the JSON trace keeps them.
struct XmlReplacements {
  size_t reading = 0, alternatives = 0;
  void add(const Trace& trace);
  /// "2 control characters of the reading written as U+FFFD (...)"; empty when none.
  std::string warning() const;
};
/// XmlReplacements of `trace` alone, its source first ("a.png: 1 control character ..."); empty
/// when the writers replace nothing. The CLI prints it on stderr, the window in its status bar.
std::string xmlReplacementWarning(const Trace& trace);
/// A number as XML attributes want it: the C locale whatever the user's, at most `decimals`
/// decimals, no trailing zeros, never "-0".
std::string xmlNumber(double v, int decimals);
/// The time now as xsd:dateTime in UTC ("2026-12-01T23:55:00Z"), for the writers' timestamps.
std::string utcNow();

}  // namespace foveal::core
