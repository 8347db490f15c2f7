#pragma once
// Torch-free facade over a loaded recognizer: what the GUI and the CLI use to trace images.
// Thread-safe for concurrent trace() calls (each runs under its own inference guard).
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "formats/dtrb_import.h"
#include "formats/model_format.h"
#include "model/model_config.h"
#include "trace/attribution.h"
#include "trace/faithfulness.h"
#include "trace/kraken_lines.h"
#include "trace/trace.h"

namespace foveal::core {

/// The widest beam the CLI and the GUI offer (beam search costs about width x greedy decoding).
inline constexpr int kMaxBeamWidth = 64;

struct TraceOptions {
  bool sample = false;  ///< hard/sharp: sample regions instead of argmax
  uint64_t seed = 0;    ///< for sampling
  int topk = 5;
  bool stopAtEnd = true;  ///< drop the steps after the first end token
  int beamWidth = 1;      ///< >1: beam search over the tokens (not with sample)
  /// Beam search: the steps show this one of the N best hypotheses (0: the best); the trace's
  /// `hypotheses` lists them all. An index past the hypotheses found is an error.
  int beamHypothesis = 0;
  /// A known transcription: the trace's `alignment` is its forced alignment over the frames the
  /// trace read (CTC models; trace/ctc_alignment.h). One that cannot be made says why in
  /// `alignment.error` (an attention model or an engine, characters outside the charset, a
  /// truth longer than the frames allow). Empty: none.
  std::string truth;
};

/// At most this many compute threads: more only oversubscribe the cores, and thousands of threads
/// made a process slow to start and to stop.
constexpr int kMaxComputeThreads = 256;

/// Sets the CPU threads LibTorch uses (0: one per core). Debian's LibTorch otherwise starts with 1.
/// Throws Error for a negative count or more than kMaxComputeThreads.
void setComputeThreads(int threads);
int computeThreads();

class ModelSession {
 public:
  /// Opens any model file through the registry of formats (formats/model_format.h) with
  /// `options`; `report` says which format, why and what was assumed (throws Error naming the
  /// file and the problem). A `tesseract:LANG[,psm=N]` spec opens Tesseract instead
  /// (engines/tesseract_engine.h): its traces have steps with boxes and top-k but no regions or
  /// attention; its config() is a default one with an empty charset.
  static std::shared_ptr<ModelSession> open(const std::string& path,
                                            const ImportOptions& options = {},
                                            ImportReport* report = nullptr);
  /// The same with DTRB's demo options (formats/dtrb_import.h).
  static std::shared_ptr<ModelSession> open(const std::string& path, const DtrbOptions& dtrb);
  /// A model with random weights drawn from `seed`.
  static std::shared_ptr<ModelSession> create(const ModelConfig& config, uint64_t seed);
  ~ModelSession();

  const ModelConfig& config() const;
  const std::string& path() const;
  /// An engine named by its spec (Tesseract), not a Foveal model.
  bool isEngine() const;
  /// The model's config described, or the engine's name and settings.
  std::string describe() const;
  /// Region boxes of the backbone in model-input pixels (unclipped x, clipped rows).
  std::vector<Box> inputRegions() const;

  /// A kraken model (features "vgsl") reads `image` as one line, as kraken's bounding-box path
  /// does (traceLine with the whole image's box).
  Trace trace(const GreyImage& image, const std::string& source,
              const TraceOptions& options = {}) const;
  /// One line of `page` extracted as kraken's rpred extracts it (image/kraken_line.h) and read:
  /// a kraken model takes kraken's own network input for it (so its readings are kraken's);
  /// any other model reads the extracted line image as it reads an image. An empty reading (no
  /// steps, the reason in `why`) where kraken gives an empty record.
  LineReading traceLine(const GreyImage& page, const KrakenLineSpec& line,
                        const std::string& source, const TraceOptions& options = {}) const;
  /// Per-step attribution of the reading `trace` shows (made by trace() from `image`), teacher
  /// forced (core/trace/attribution.h). Safe beside concurrent trace() and explain() calls: it
  /// differentiates with respect to the image only, never touching the parameters' gradients.
  Explanation explain(const GreyImage& image, const Trace& trace,
                      const AttributionOptions& options) const;
  /// Deletion and insertion curves of each request's map (core/trace/faithfulness.h) for the
  /// reading `trace` shows.
  std::vector<FaithfulnessCurves> curves(const GreyImage& image, const Trace& trace,
                                         const std::vector<CurveRequest>& requests,
                                         const CurveOptions& options = {}) const;
  void save(const std::string& path) const;

  /// A training curve the model file itself holds (kraken stores its validation accuracy per
  /// evaluation): metric -> (step, value) points in order. Empty for files that hold none.
  struct HistoryPoint {
    double step = 0;
    double value = 0;
  };
  std::map<std::string, std::vector<HistoryPoint>> storedHistory() const;

  struct Impl;

 private:
  explicit ModelSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> d;
};

}  // namespace foveal::core
