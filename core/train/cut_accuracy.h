#pragma once
// How well a model's character cuts cover the true characters (issue 63, item 3; kraken #755
// "cuts substantially narrower than the character", #756 "cuts drift to the right as the line
// gets longer"): on data whose characters' true boxes are known (digit sequences' 32-pixel
// slots, synthetic words' glyph boxes), per character the IoU of a model's box with the true box,
// the box's width over the true width and its centre's offset from the true centre (in true
// widths, + to the right), also split by where the character sits on the line (first, middle,
// last third of its characters). Three kinds of box:
//   greedy     a CTC model's read steps (the columns the greedy path emitted each token from,
//              mapped as the trace maps them), step t against true character t;
//   forced     the same model's forced alignment of the truth (trace/ctc_alignment.h): true
//              character c against the frames the truth's best path gives it;
//   greedy-frames, forced-frames  the same frames cut as kraken cuts them: from the first
//              frame's centre to the last's, half a frame stride beyond each (rpred's mapping of
//              frames to the line), not their receptive fields;
//   attention  an attention model's step boxes (localisation.h: the region of largest alpha,
//              the selected region, the STN's quad), step t against character t.
// A step the reading does not have (too short a reading) counts as IoU 0, as eval's
// localisation counts it; so greedy and attention figures over all images fall with every
// insertion or deletion, and the "read right" figures, over the images read right, do not.
#include <cstdint>
#include <string>
#include <vector>

#include "formats/model_format.h"
#include "model/geometry.h"

namespace foveal::core::train {

struct CutStats {
  int64_t chars = 0;  ///< true characters scored
  double iouSum = 0;
  int64_t boxed = 0;         ///< of them, with a box (the others count IoU 0 and nothing else)
  double widthRatioSum = 0;  ///< box width / true width
  double offsetSum = 0;      ///< (box centre - true centre) / true width
  double absOffsetSum = 0;
  int64_t centreInside = 0;  ///< the box's centre inside the true box
  double meanIou() const { return chars ? iouSum / chars : 0.0; }
  double meanWidthRatio() const { return boxed ? widthRatioSum / boxed : 0.0; }
  double meanOffset() const { return boxed ? offsetSum / boxed : 0.0; }
  double meanAbsOffset() const { return boxed ? absOffsetSum / boxed : 0.0; }
  double centreHits() const { return chars ? static_cast<double>(centreInside) / chars : 0.0; }
  void add(const CutStats& o);
};

/// One image's boxes against its true boxes, index by index: boxes[i] against truth[i] for i <
/// truth.size() (a missing box counts as IoU 0).
CutStats scoreCuts(const std::vector<Box>& boxes, const std::vector<Box>& truth);

/// One kind of box (greedy, forced, attention) over a dataset.
struct CutKind {
  std::string name;
  /// The boxes belong to the true characters whatever was read (forced alignment); else box t
  /// is step t's, which stands for true character t only where the line was read right.
  bool aligned = false;
  CutStats all, right;  ///< over every image, over the images read right
  /// By position along the line: the first, middle and last third of each image's characters,
  /// over the images read right (aligned boxes: over every image).
  CutStats thirds[3];
  /// The figures of the boxes' shape (width, offset): `all` for aligned boxes, else `right`.
  const CutStats& shape() const { return aligned ? all : right; }
};

struct CutReport {
  std::string model;
  std::string kind;  ///< "ctc" or the glimpse ("soft", "hard", "sharp")
  std::string stages;
  std::string dataset;
  int64_t images = 0, right = 0;
  int64_t skipped = 0;    ///< no true boxes, unreadable, outside the charset
  int64_t unaligned = 0;  ///< CTC: truths the frames could not hold (not in "forced")
  /// CTC: greedy, forced, greedy-frames, forced-frames; attention: attention.
  std::vector<CutKind> kinds;
  std::string toJson() const;
};

struct CutOptions {
  int64_t limit = 0;  ///< first N entries (0: all)
  ImportOptions importOptions;
};

/// Reads every entry of `dataset` that knows its character boxes with `model`, one image at a
/// time, and scores its boxes. Throws Error for a model or dataset that cannot be opened or a
/// dataset without character boxes.
CutReport measureCuts(const std::string& model, const std::string& dataset,
                      const CutOptions& options = {});

/// The table `foveal-cli eval --cuts` prints: one row per model and kind of box.
std::string cutTable(const std::vector<CutReport>& reports);

}  // namespace foveal::core::train
