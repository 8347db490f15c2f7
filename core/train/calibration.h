#pragma once
// Calibration of a reader's confidences (`foveal-cli eval --calibration`): a reliability diagram
// (Guo et al. 2017, "On Calibration of Modern Neural Networks", section 2) of the line
// confidence (Trace::confidence, by the model's own rule) against whether the line was read
// right, and of each read character's probability (a step's `prob`) against whether that
// character is right (a minimal-edit alignment of the reading to the truth, as the Errors page
// aligns them). Confidences fall into B equal-width bins of [0, 1] (the last closed); per bin
// the mean confidence and the accuracy; the expected calibration error
//   ECE = sum over bins of (n_b / N) |accuracy_b - confidence_b|
// and the maximum calibration error (the largest gap of a non-empty bin). kraken's #608
// ("overly confident") is a diagram whose bars sit under the diagonal.
// Torch-free except evaluateCalibration, which reads the dataset through ModelSession.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "formats/model_format.h"

namespace foveal::core {
struct Trace;
}

namespace foveal::core::train {

struct CalibrationBin {
  double lower = 0, upper = 0;  ///< [lower, upper); the last bin includes 1
  int64_t count = 0;
  int64_t correct = 0;
  double confidenceSum = 0;
  double meanConfidence() const { return count ? confidenceSum / count : 0.0; }
  double accuracy() const { return count ? static_cast<double>(correct) / count : 0.0; }
};

struct ReliabilityDiagram {
  std::string level;  ///< "line" or "character"
  std::vector<CalibrationBin> bins;
  int64_t count = 0, correct = 0;
  double confidenceSum = 0;

  /// Expected calibration error (0 with nothing counted).
  double ece() const;
  /// Maximum calibration error over the non-empty bins.
  double mce() const;
  double accuracy() const { return count ? static_cast<double>(correct) / count : 0.0; }
  double meanConfidence() const { return count ? confidenceSum / count : 0.0; }
  /// Adds one prediction. Throws Error for a confidence that is not a number in [0, 1] (a
  /// rounding excess up to 1e-9 is taken as 1).
  void add(double confidence, bool correct);
};

/// An empty diagram of `bins` equal-width bins (1..1000; Error otherwise).
ReliabilityDiagram makeReliabilityDiagram(int bins, const std::string& level);

/// One reading's characters: each read character's (step's) probability and whether it is right,
/// its steps' tokens aligned with `truth` (end tokens left out; a step of several code points is
/// right when all of them are). `textScoring`: letters compared case-blind (ASCII). `truth` in
/// the order of the steps (evaluateCalibration puts a kraken truth in kraken's reading order).
struct CharacterConfidences {
  std::vector<double> confidence;
  std::vector<bool> correct;
};
CharacterConfidences characterConfidences(const Trace& trace, const std::string& truth,
                                          bool textScoring);

struct CalibrationReport {
  std::string model;
  std::string dataset;
  std::string scoring;  ///< "text" or "exact": how a line counts as right (as eval scores it)
  std::string confidenceRule;  ///< the model's line confidence, in words
  int64_t images = 0;
  int64_t skipped = 0;  ///< entries the model cannot read (label outside its charset...)
  std::vector<std::string> skippedExamples;
  ReliabilityDiagram lines, characters;

  /// Both diagrams as a table: per bin its range, count, mean confidence, accuracy and gap;
  /// then ECE and MCE.
  std::string toTable() const;
  std::string toJson() const;
  /// The reliability diagrams (lines beside characters) as SVG.
  std::string svg() const;
  /// The same as a PNG (ChartCanvas: needs OpenCV), `width` x `height` pixels.
  void writePng(const std::string& path, int width = 1000, int height = 520) const;
};

struct CalibrationOptions {
  int bins = 10;
  int64_t limit = 0;  ///< first N entries (0: all)
  std::string scoring = "auto";
  int beamWidth = 1;
  ImportOptions importOptions;
  /// Called after each image with the images done and the total; false stops (EvalCancelled).
  std::function<bool(int64_t, int64_t)> progress;
};

/// Reads every entry of `dataset` with `model` (a model file, or tesseract:LANG) one image at a
/// time, as `foveal-cli trace` reads it, and fills both diagrams. Entries the model cannot read
/// are skipped and counted. Throws Error for a model or dataset that cannot be opened, or a
/// dataset none of whose entries can be read.
CalibrationReport evaluateCalibration(const std::string& model, const std::string& dataset,
                                      const CalibrationOptions& options = {});

/// Writes `report`'s diagram to `path`: .svg as SVG, .png as PNG; Error for another suffix.
void writeCalibrationPlot(const CalibrationReport& report, const std::string& path);

}  // namespace foveal::core::train
