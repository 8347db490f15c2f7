#pragma once
// Localisation (docs/DESIGN.md "Localisation"; docs/ARCHITECTURE.md "Localisation"): where each
// decoding step looks, as a focus point and a character box in source-image pixels, and how well
// that matches the true boxes of the label's characters. Torch-free: traces, evaluation and the
// GUI share it.
//
// How a step's focus and box follow from what the step used (FocusRule):
//   soft (alpha-mean)  focus = the alpha-weighted mean of the region centres; box = the region of
//                      largest alpha. (Not an alpha-weighted union: any union is at least one
//                      receptive field wide and grows with every region holding a little mass, so
//                      it says more about how spread alpha is, which the entropy already reports.
//                      The argmax region is the box hard attention would draw, so soft and hard
//                      differ only where their focus differs.)
//   hard (selected)    the region the step used (argmax at evaluation, or sampled): its centre and
//                      box.
//   sharp (stn-quad)   the last STN's quad (what the context is computed from): the mean of its
//                      four corners and its bounding box.
//   CTC (columns)      the columns that emitted the token: the mean of their region centres and
//                      the union of their regions.
//   2-D attention (a grid of cells): as soft and hard, over the cells: the focus is the
//                      alpha-weighted mean of the cell centres (soft) or the selected cell's centre
//                      (hard); a cell's centre is its receptive field's, which the clipped box's
//                      centre is not (every cell of vgg2d sees 62 rows of a 32-row image).
// Boxes are clipped to the image (receptive fields reach past its edges; true boxes do not);
// focus points are not. With a TPS transformation the regions are those of the rectified image
// scaled to the source (as the trace draws them), not mapped back through the spline.
#include <cstdint>
#include <string>
#include <vector>

#include "model/geometry.h"
#include "trace/trace.h"

namespace foveal::core {

enum class FocusRule { AlphaMean, Selected, StnQuad, Columns };

/// "alpha-mean", "selected", "stn-quad", "columns".
std::string toString(FocusRule rule);

struct StepLocation {
  PointF focus;
  Box box;
};

/// The focus and box of one step by `rule` from its attention map `alpha` (alpha-mean only), its
/// region, STN quads or columns, with `regions` the receptive fields in source pixels. Throws
/// Error when the step lacks what the rule needs (no STN for stn-quad, no columns for columns,
/// alpha of another length). `centres`: the regions' receptive-field centres (empty: the boxes').
StepLocation locateStep(const TraceStep& step, const std::vector<double>& alpha,
                        const std::vector<Box>& regions, FocusRule rule, int imageW, int imageH,
                        const std::vector<PointF>& centres = {});
/// Sets focus, box and focusRule of every step of `trace`.
void locateSteps(Trace& trace, FocusRule rule);

/// Whether `p` lies in `box` (left and top edges inside, right and bottom outside).
bool contains(const Box& box, const PointF& p);
double intersectionOverUnion(const Box& a, const Box& b);
Box boundingBox(const Quad& quad);
Box clipToImage(const Box& box, int imageW, int imageH);
/// Boxes in one image's pixels mapped to an image of another size (both axes scaled).
std::vector<Box> scaleBoxes(const std::vector<Box>& boxes, double sx, double sy);

/// One image's localisation: over the steps t < len(truth) (a step the decoder did not make, or
/// made after its end token, counts as a miss with IoU 0).
struct ImageLocalisation {
  int64_t steps = 0;  ///< len(truth)
  int64_t hits = 0;   ///< steps whose focus lies in the true box of their character
  double iouSum = 0;  ///< sum over those steps of IoU(step box, true box)
};
/// `located`: the decoded steps up to and including the end token, in order.
ImageLocalisation scoreLocalisation(const std::vector<StepLocation>& located,
                                    const std::vector<Box>& truth);
/// Per step of `trace`: 1 when its focus lies in the true box of its character, 0 when not, -1
/// when there is no true box for it (no truthBoxes, or a step at or past len(truth)).
std::vector<int> stepHits(const Trace& trace);

/// Pointing accuracy and mean IoU summed over images; "correct": over the correctly read ones.
struct LocalisationStats {
  int64_t images = 0, steps = 0, hits = 0;
  double iouSum = 0;
  int64_t correctImages = 0, correctSteps = 0, correctHits = 0;
  double correctIouSum = 0;

  void add(const ImageLocalisation& image, bool readCorrectly);
  void add(const LocalisationStats& other);
  bool empty() const { return steps == 0; }
  double pointing() const { return steps ? static_cast<double>(hits) / steps : 0.0; }
  double meanIou() const { return steps ? iouSum / steps : 0.0; }
  double correctPointing() const {
    return correctSteps ? static_cast<double>(correctHits) / correctSteps : 0.0;
  }
  double correctMeanIou() const { return correctSteps ? correctIouSum / correctSteps : 0.0; }
};

}  // namespace foveal::core
