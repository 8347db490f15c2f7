#pragma once
// Self time per LibTorch operator (with its input shapes) over a stretch of work, through
// LibTorch's legacy profiler: `bench-train --profile N` and `eval --faithfulness --profile N`.
// Torch-free.
#include <string>
#include <vector>

namespace foveal::core::train {

/// One operator (with its input shapes) over every call the profiler saw.
struct OperatorTime {
  std::string name;  ///< e.g. "aten::convolution_backward [64,4,16,41] [4,4,3,3] ..."
  long calls = 0;
  double selfMs = 0;  ///< time in the operator itself, not in operators it called
};

struct OperatorProfile {
  std::vector<OperatorTime> operators;  ///< costliest first
  double totalMs = 0;                   ///< every operator's self time (before `keep`)
  /// Adds another profile's operators (e.g. another thread's), summing equal names.
  void merge(const OperatorProfile& other);
  /// Keeps the `n` costliest operators (totalMs still counts them all).
  void keep(int n);
  std::string toText(const std::string& heading) const;  ///< a table, one operator a line
  std::string toJson() const;  ///< {"profiled_ms": ..., "operators": [...]}
};

/// Profiles the operators run on the calling thread from construction to `finish` (or
/// destruction). The profiler is per thread: work spread over threads of one's own needs one
/// recorder in each, merged; LibTorch's intra-op threads report to the thread that launched them.
class OperatorRecorder {
 public:
  explicit OperatorRecorder(bool enabled = true);
  ~OperatorRecorder();
  OperatorRecorder(const OperatorRecorder&) = delete;
  OperatorRecorder& operator=(const OperatorRecorder&) = delete;
  OperatorProfile finish();  ///< stops recording; empty if not enabled or already finished

 private:
  bool m_on;
};

}  // namespace foveal::core::train
