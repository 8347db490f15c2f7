#pragma once
// Data-parallel training over c10d, PyTorch's distributed engine: ProcessGroupGloo on CPU
// (ProcessGroupNCCL is not in Debian's CPU-only LibTorch). Rendezvous through a TCPStore at
// MASTER_ADDR:MASTER_PORT; rank 0 hosts it. The trainer broadcasts rank 0's initial weights,
// all-reduces gradients in buckets and shards data by rank; only rank 0 writes the run directory.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace at {
class Tensor;
}

namespace foveal::core::train {

struct DistributedOptions {
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;
  int rank = 0;
  int worldSize = 1;
  int localRank = 0;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};

  /// From MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK; nothing when WORLD_SIZE is
  /// unset or 1. Throws Error naming the variable when one is malformed or missing.
  static std::optional<DistributedOptions> fromEnvironment();
};

/// True when this LibTorch was built with c10d and its Gloo backend.
bool distributedAvailable();

class ProcessGroup {
 public:
  /// Joins the group (blocks until every rank has arrived or the timeout passes). Throws Error.
  explicit ProcessGroup(const DistributedOptions& options);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return m_options.rank; }
  int worldSize() const { return m_options.worldSize; }

  /// Every tensor (CPU, contiguous) takes its value on rank `root`.
  void broadcast(std::vector<at::Tensor>& tensors, int root = 0);
  /// Sums the tensors over ranks in buckets of about `bucketBytes`, then divides by the world
  /// size. Undefined entries are skipped (every rank must pass the same list).
  void allReduceMean(std::vector<at::Tensor>& tensors, size_t bucketBytes = 25u << 20);
  /// Sum of a few scalars over ranks.
  std::vector<double> allReduceSum(const std::vector<double>& values);
  void barrier();

  struct Impl;

 private:
  DistributedOptions m_options;
  std::unique_ptr<Impl> d;
};

}  // namespace foveal::core::train
