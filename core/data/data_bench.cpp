#include "data/data_bench.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include <unistd.h>

#include "base/error.h"
#include "data/data_loader.h"
#include "data/dataset_export.h"
#include "data/dataset_factory.h"
#include "data/digit_sequences.h"
#include "data/lmdb_dataset.h"
#include "data/synthetic_words.h"

namespace fs = std::filesystem;

namespace foveal::core::data {

namespace {

// Calls `step` (which processes `per` images) until `seconds` have passed; images per second.
double rate(double seconds, size_t per, const std::function<void(size_t)>& step) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  size_t done = 0, calls = 0;
  double elapsed = 0;
  do {
    step(calls++);
    done += per;
    elapsed = std::chrono::duration<double>(clock::now() - start).count();
  } while (elapsed < seconds);
  return done / elapsed;
}

// A scratch folder for the format copies, removed at the end unless the caller named it.
struct ScratchFolder {
  fs::path path;
  bool own;
  explicit ScratchFolder(const std::string& dir)
      : path(dir.empty()
                 ? fs::temp_directory_path() / ("foveal-data-bench-" + std::to_string(::getpid()))
                 : fs::path(dir)),
        own(dir.empty()) {
    fs::create_directories(path);
  }
  ~ScratchFolder() {
    std::error_code ec;
    if (own) fs::remove_all(path, ec);
  }
};

// The measurements of runDataBenchmarks, in the order they are listed.
class DataBench {
 public:
  explicit DataBench(const DataBenchOptions& opt) : m_opt(opt) {}
  std::vector<DataBenchResult> run();

 private:
  bool wanted(const std::string& name) const {
    if (m_opt.only.empty()) return true;
    for (const auto& o : m_opt.only)
      if (name.rfind(o, 0) == 0) return true;
    return false;
  }
  std::function<void(size_t)> readAll(const Dataset& ds) {
    return [&](size_t call) { m_sink = m_sink + ds.get(call % ds.size()).image.pixels.size(); };
  }
  void generators();
  void formats(const Dataset& source, const fs::path& scratch, const std::string& packedPath);
  void loaders(const std::string& packedPath);
  double loaderRate(DatasetPtr ds, int threads);
  double packedEpochsRate(const std::string& packedPath, int threads);

  const DataBenchOptions& m_opt;
  std::vector<DataBenchResult> m_out;
  volatile size_t m_sink = 0;  // keeps the reads from being optimised away
};

std::vector<DataBenchResult> DataBench::run() {
  generators();
  const ScratchFolder scratch(m_opt.scratchDir);
  // One source set (digit sequences of 9) copied into each format.
  auto source = openDataset("digits:len=9,split=test,seed=7,count=2000");
  const std::string packedPath = (scratch.path / "bench.fvpk").string();
  formats(*source, scratch.path, packedPath);
  loaders(packedPath);
  return m_out;
}

void DataBench::generators() {
  auto digits = MnistDigits::bundled();
  for (bool rotated : {false, true})
    for (int len : {5, 9, 13}) {
      const std::string name =
          std::string("digits ") + (rotated ? "rotated" : "normal") + " len " + std::to_string(len);
      if (!wanted(name)) continue;
      DigitSequenceSpec spec;
      spec.length = len;
      spec.rotated = rotated;
      spec.stream = true;
      DigitSequenceDataset ds(digits, spec);
      m_out.push_back({name, rate(m_opt.seconds, 1, [&](size_t i) {
                         m_sink = m_sink + ds.get(i).image.pixels.size();
                       })});
    }
  // What a digit training run's loader makes (train --augment: every glyph distorted).
  for (bool rotated : {false, true}) {
    const std::string name =
        std::string("digits ") + (rotated ? "rotated" : "normal") + " len 9 augmented";
    if (!wanted(name)) continue;
    DigitSequenceSpec spec;
    spec.length = 9;
    spec.rotated = rotated;
    spec.stream = true;
    spec.augment = GlyphAugmentSpec::defaults();
    DigitSequenceDataset ds(digits, spec);
    m_out.push_back({name, rate(m_opt.seconds, 1, [&](size_t i) {
                       m_sink = m_sink + ds.get(i).image.pixels.size();
                     })});
  }
}

// Preprocessing, then reading each format (and rendering words).
void DataBench::formats(const Dataset& source, const fs::path& scratch,
                        const std::string& packedPath) {
  Preprocessing pp;
  if (wanted("preprocess")) {
    m_out.push_back({"preprocess (100x32 + upsampled)", rate(m_opt.seconds, 1, [&](size_t i) {
                       m_sink =
                           m_sink + prepareSample(source.get(i % 2000), pp).input.pixels.size();
                     })});
  }
  ExportOptions ex;
  ex.threads = 0;
  if (wanted("packed") || wanted("loader packed")) {
    ex.format = "packed";
    exportDataset(source, packedPath, ex);
  }
  if (wanted("packed")) {
    auto ds = openDataset(packedPath);
    m_out.push_back({"packed (read)", rate(m_opt.seconds, 1, readAll(*ds))});
  }
  if (wanted("lmdb") && LmdbDataset::available()) {
    ex.format = "lmdb";
    exportDataset(source, (scratch / "lmdb").string(), ex);
    auto ds = openDataset((scratch / "lmdb").string());
    m_out.push_back({"lmdb (read + decode)", rate(m_opt.seconds, 1, readAll(*ds))});
  }
  if (wanted("folder")) {
    ex.format = "folder";
    exportDataset(source, (scratch / "folder").string(), ex);
    auto ds = openDataset((scratch / "folder").string());
    m_out.push_back({"folder (read + decode)", rate(m_opt.seconds, 1, readAll(*ds))});
  }
  if (wanted("words") && canRenderText()) {
    auto ds = openDataset("words:seed=1,count=1000000");
    m_out.push_back({"words (render)", rate(m_opt.seconds, 1, readAll(*ds))});
  }
}

// The loader on all its threads: an endless stream, then whole shuffled epochs of the packed copy.
void DataBench::loaders(const std::string& packedPath) {
  const int threads = m_opt.loaderThreads > 0
                          ? m_opt.loaderThreads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (wanted("loader digits"))
    m_out.push_back({"loader digits len 9 (batches)",
                     loaderRate(openDataset("digits:len=9,split=stream,seed=3"), threads),
                     threads});
  if (wanted("loader packed"))
    m_out.push_back({"loader packed (batches)", packedEpochsRate(packedPath, threads), threads});
}

double DataBench::loaderRate(DatasetPtr ds, int threads) {
  LoaderOptions lo;
  lo.batchSize = 64;
  lo.threads = threads;
  lo.maxLength = 13;
  DataLoader loader(ds, lo);
  return rate(m_opt.seconds, 64, [&](size_t) { m_sink = m_sink + loader.next()->indices.size(); });
}

double DataBench::packedEpochsRate(const std::string& packedPath, int threads) {
  auto packed = openDataset(packedPath);
  LoaderOptions lo;
  lo.batchSize = 64;
  lo.threads = threads;
  lo.shuffle = true;
  double total = 0;
  size_t images = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t epoch = 0; total < m_opt.seconds; ++epoch) {
    lo.epoch = epoch;
    DataLoader loader(packed, lo);
    while (auto b = loader.next()) images += b->indices.size();
    total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return images / total;
}

}  // namespace

std::vector<DataBenchResult> runDataBenchmarks(const DataBenchOptions& opt) {
  return DataBench(opt).run();
}

}  // namespace foveal::core::data
