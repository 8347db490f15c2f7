#pragma once
// Does a map explain the reading? Faithfulness of per-step maps (docs/DESIGN.md "Explanations and
// faithfulness"), Torch-free: the curves' options and results, the pure scores (area under a
// curve, pointing and weighting games, rank correlation, the random floor), and the table that
// sums them up per method over a dataset. The curves themselves run the model
// (ModelSession::curves).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/geometry.h"

namespace foveal::core {

/// Deletion and insertion (RISE, Petsiuk et al. 2018): the pixels in the map's order (largest
/// first) are set to mid-grey (deletion) or put back into a blurred copy (insertion), `points`
/// fractions from 0 to 1, and the step's token probability is read at each (teacher-forced).
struct CurveOptions {
  int points = 11;       ///< fractions 0, 1/(points-1), ..., 1
  double blurSigma = 0;  ///< insertion's blur, source pixels (0: a quarter of the image height)
  int batch = 64;        ///< images per forward pass
};

struct CurveRequest {
  int step = 0;             ///< the trace step whose token probability is read
  std::vector<double> map;  ///< width x height values over the source image
};

struct FaithfulnessCurves {
  std::vector<double> deletion, insertion;   ///< p(token) at each fraction
  double deletionAuc = 0, insertionAuc = 0;  ///< curveArea of each
};

/// The area under a curve sampled at equally spaced fractions of [0, 1] (trapezoids): for
/// probabilities, a number in [0, 1].
double curveArea(const std::vector<double>& curve);

/// Pixel indices in the map's order: largest value first, ties by index.
std::vector<size_t> mapOrder(const std::vector<double>& map);

/// Pointing game (Zhang et al. 2016): the map's largest value lies in `box` (pixel centres,
/// `tolerance` pixels around it; Zhang et al. allow 15, Foveal's table uses 0). An all-zero map
/// misses.
bool pointingHit(const std::vector<double>& map, int width, int height, const Box& box,
                 double tolerance = 0);

/// Weighting game: the share of the map's positive mass whose pixel centres lie in `box` (0 for a
/// map without positive mass).
double weightingShare(const std::vector<double>& map, int width, int height, const Box& box);

/// Spearman's rank correlation (average ranks for ties); 0 when either side is constant.
double rankCorrelation(const std::vector<double>& a, const std::vector<double>& b);

/// A map of uniform random values, the floor every method is compared with.
std::vector<double> randomMap(int width, int height, uint64_t seed);

/// The per-method sums over many steps: the rows of `eval --faithfulness`.
class FaithfulnessTable {
 public:
  struct Row {
    std::string method;
    int64_t steps = 0;                         ///< steps with curves
    double deletionAuc = 0, insertionAuc = 0;  ///< means over the steps
    int64_t boxed = 0;                         ///< steps with a true box (pointing and weighting)
    double pointing = 0, weighting = 0;        ///< hit share and mean share over `boxed`
    int64_t correlated = 0;                    ///< steps with a rank correlation against attention
    double rankCorrelation = 0;                ///< mean over `correlated`
    double seconds = 0;                        ///< time spent making this method's maps
  };
  /// One step of one method; `box` null when the data has no true box for the step's character,
  /// `correlation` NaN when not measured.
  void add(const std::string& method, const FaithfulnessCurves& curves,
           const std::vector<double>& map, int width, int height, const Box* box,
           double correlation);
  void addSeconds(const std::string& method, double seconds);
  std::vector<Row> rows() const;  ///< in the order the methods were first added
  int64_t images = 0;
  std::string toTable() const;
  std::string toJson(int indent = 2) const;

 private:
  std::vector<std::string> m_order;
  std::map<std::string, Row> m_sums;
};

}  // namespace foveal::core
