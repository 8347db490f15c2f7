#pragma once
// Data throughput on this machine (foveal-cli data bench): images per second on one core for each
// source, and for the loader on all its threads. Torch-free header.
#include <string>
#include <vector>

namespace foveal::core::data {

struct DataBenchResult {
  std::string name;
  double imagesPerS = 0;  ///< on `threads` threads
  int threads = 1;
  double perCore() const { return imagesPerS / threads; }
};

struct DataBenchOptions {
  double seconds = 1.0;           ///< minimum time per measurement
  std::string scratchDir;         ///< for the LMDB, folder and packed copies; empty: a temp folder
  int loaderThreads = 0;          ///< 0: hardware concurrency
  std::vector<std::string> only;  ///< name prefixes; empty: all
};

std::vector<DataBenchResult> runDataBenchmarks(const DataBenchOptions& options);

}  // namespace foveal::core::data
