#pragma once
// A multi-threaded prefetching loader: dataset entries -> batches of model-ready tensors.
// Deterministic for a given (seed, epoch): the order, the batch boundaries and every tensor are the
// same whatever the thread count, because batch b is always built from the same entries and handed
// out in batch order. Shards by (rank, worldSize) like torch's DistributedSampler: each rank reads
// every worldSize-th entry of the epoch's order, padded by wrapping so all ranks see the same
// number of batches.
#include <torch/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "data/dataset.h"
#include "model/charset.h"
#include "model/model_config.h"

namespace foveal::core::data {

struct LoaderOptions {
  int batchSize = 32;
  uint64_t seed = 0;
  bool shuffle = true;  ///< finite datasets: a fresh permutation per (seed, epoch)
  int64_t epoch = 0;
  /// First batch handed out (resuming mid-epoch; an endless stream: batches already consumed).
  int64_t startBatch = 0;
  int rank = 0;
  int worldSize = 1;
  int threads = 2;   ///< worker threads
  int prefetch = 4;  ///< batches built ahead of the consumer
  bool dropLast = false;
  /// Leave out unreadable entries, empty labels, labels too long or outside the charset, and count
  /// them (the batch gets smaller). Without it the first such entry throws its Error from next().
  bool skipBad = false;
  int maxLength = 13;
  Charset charset = Charset::digits();
  Preprocessing preprocessing;
  bool withUpsampled = true;
  /// Also collect each entry's character boxes (Dataset::charBoxes) and source size, in the
  /// worker threads (evaluation's localisation metrics).
  bool withBoxes = false;
};

struct Batch {
  int64_t number = 0;       ///< batch index within the epoch (this rank)
  torch::Tensor images;     ///< [B, 1, inputH, inputW] float in [-1, 1]
  torch::Tensor upsampled;  ///< [B, 1, inputH, upsampledW] (undefined without withUpsampled)
  torch::Tensor targets;    ///< [B, maxLength + 1] int64: label classes, then the end token
  torch::Tensor lengths;    ///< [B] int64: label lengths without the end token
  std::vector<std::string> labels;
  std::vector<size_t> indices;  ///< dataset entries
  /// withBoxes: per entry its character boxes in source pixels (empty: unknown) and the source
  /// image's width and height (a packed entry: the model input's).
  std::vector<std::vector<Box>> boxes;
  std::vector<std::pair<int, int>> sourceSizes;
  /// Per entry, the input columns its image fills (keep-ratio padding leaves the rest to the
  /// padding; a variable-width model's batch is as wide as its widest entry needs); empty for a
  /// packed dataset, whose entries fill the nominal width.
  std::vector<int> contentW;
};

class DataLoader {
 public:
  /// Throws Error for inconsistent options (rank outside world, a packed dataset made with other
  /// sizes than `preprocessing`).
  DataLoader(DatasetPtr dataset, LoaderOptions options);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// The next batch, or nothing at the end of the epoch (never for an endless stream).
  std::optional<Batch> next();
  /// Batches of this rank in one epoch; -1 for an endless stream.
  int64_t batchesPerEpoch() const { return m_batches; }
  /// The entries this rank reads this epoch, in order (empty for an endless stream).
  const std::vector<size_t>& order() const { return m_order; }
  /// Entries left out so far with skipBad, and their messages (the first 100).
  int64_t skipped() const { return m_skipped.load(); }
  std::vector<std::string> skippedMessages() const;
  /// The skipped entries counted by reason: "unreadable entry" (missing or undecodable image,
  /// missing key, corrupt entry), "empty label", "label outside the charset C",
  /// "label longer than N characters".
  std::map<std::string, int64_t> skippedByReason() const;
  /// One line: "12 entries skipped (10 label outside the charset 0-9, 2 unreadable entry); first:
  /// MESSAGE". Empty when nothing was skipped.
  std::string skippedSummary() const;

  /// The epoch order of every rank for (size, seed, epoch), before sharding padding: exposed for
  /// tests and for a trainer that wants to log it.
  static std::vector<size_t> epochOrder(size_t size, uint64_t seed, int64_t epoch, bool shuffle);

 private:
  struct Slot {
    std::optional<Batch> batch;
    std::exception_ptr error;
  };
  void worker();
  Batch build(int64_t number);
  /// Adds entry i's label, index and boxes to b, its image (not packed) to `images`, its classes
  /// to `encoded`; throws Error naming the entry, with `reason` saying which kind of problem.
  void addEntry(size_t i, Batch& b, std::vector<GreyImage>& images,
                std::vector<std::vector<int>>& encoded, std::string& reason) const;
  void addPixels(Batch& b, const std::vector<GreyImage>& images) const;
  void addTargets(Batch& b, const std::vector<std::vector<int>>& encoded) const;
  size_t entryAt(int64_t position) const;

  DatasetPtr m_dataset;
  LoaderOptions m_opt;
  std::vector<size_t> m_order;
  int64_t m_batches = 0;
  const void* m_packed = nullptr;  // the dataset as PackedDataset, when it is one

  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::map<int64_t, Slot> m_ready;
  int64_t m_nextToBuild = 0, m_nextToHand = 0;
  bool m_stop = false;
  std::vector<std::thread> m_workers;
  std::atomic<int64_t> m_skipped{0};
  mutable std::mutex m_messageMutex;
  std::vector<std::string> m_messages;
  std::map<std::string, int64_t> m_reasons;
};

}  // namespace foveal::core::data
