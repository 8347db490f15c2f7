#pragma once
// The CTC Viterbi lattice, shared by the beam search's path of a hypothesis
// (stages/ctc_prediction.h ctcBestPath) and the forced alignment of a truth
// (trace/ctc_alignment.h ctcViterbi). Torch-free.
//
// The lattice is the label with blanks around every class: blank, y1, blank, y2, ..., yn, blank.
// A path stays on a state, moves to the next, or skips the blank between two different classes,
// and ends on yn or the last blank. Ties go to the path that stays longest on each state.
#include <vector>

namespace foveal::core {

/// blank, y1, blank, y2, ..., yn, blank.
std::vector<int> ctcExtendedLabel(const std::vector<int>& labels, int blank);

struct CtcLatticePath {
  std::vector<int> states;  ///< per frame: the state on the path (index into ctcExtendedLabel)
  double logProb = 0;       ///< log p of the path
};

/// The most probable path over `frames` rows of `logProbs` ([frames x classes], row-major) that
/// collapses to `labels`; no states when none has a finite log p (too few frames, or a class of
/// probability 0 on every way through). Sizes are the caller's to check.
CtcLatticePath ctcBestLatticePath(const std::vector<double>& logProbs, int frames, int classes,
                                  const std::vector<int>& labels, int blank);

}  // namespace foveal::core
