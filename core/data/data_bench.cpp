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

}  // namespace

std::vector<DataBenchResult> runDataBenchmarks(const DataBenchOptions& opt) {
  std::vector<DataBenchResult> out;
  auto wanted = [&](const std::string& name) {
    if (opt.only.empty()) return true;
    for (const auto& o : opt.only)
      if (name.rfind(o, 0) == 0) return true;
    return false;
  };
  volatile size_t sink = 0;  // keeps the reads from being optimised away
  auto readAll = [&](const Dataset& ds) {
    return [&](size_t call) { sink = sink + ds.get(call % ds.size()).image.pixels.size(); };
  };

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
      out.push_back({name, rate(opt.seconds, 1,
                                [&](size_t i) { sink = sink + ds.get(i).image.pixels.size(); })});
    }

  const fs::path scratch =
      opt.scratchDir.empty()
          ? fs::temp_directory_path() / ("foveal-data-bench-" + std::to_string(::getpid()))
          : fs::path(opt.scratchDir);
  fs::create_directories(scratch);
  struct Cleanup {
    fs::path p;
    bool own;
    ~Cleanup() {
      std::error_code ec;
      if (own) fs::remove_all(p, ec);
    }
  } cleanup{scratch, opt.scratchDir.empty()};

  // One source set (digit sequences of 9) copied into each format.
  auto source = openDataset("digits:len=9,split=test,seed=7,count=2000");
  Preprocessing pp;
  if (wanted("preprocess")) {
    out.push_back({"preprocess (100x32 + upsampled)", rate(opt.seconds, 1, [&](size_t i) {
                     sink = sink + prepareSample(source->get(i % 2000), pp).input.pixels.size();
                   })});
  }
  ExportOptions ex;
  ex.threads = 0;
  const std::string packedPath = (scratch / "bench.fvpk").string();
  if (wanted("packed") || wanted("loader packed")) {
    ex.format = "packed";
    exportDataset(*source, packedPath, ex);
  }
  if (wanted("packed")) {
    auto ds = openDataset(packedPath);
    out.push_back({"packed (read)", rate(opt.seconds, 1, readAll(*ds))});
  }
  if (wanted("lmdb") && LmdbDataset::available()) {
    ex.format = "lmdb";
    exportDataset(*source, (scratch / "lmdb").string(), ex);
    auto ds = openDataset((scratch / "lmdb").string());
    out.push_back({"lmdb (read + decode)", rate(opt.seconds, 1, readAll(*ds))});
  }
  if (wanted("folder")) {
    ex.format = "folder";
    exportDataset(*source, (scratch / "folder").string(), ex);
    auto ds = openDataset((scratch / "folder").string());
    out.push_back({"folder (read + decode)", rate(opt.seconds, 1, readAll(*ds))});
  }
  if (wanted("words") && canRenderText()) {
    auto ds = openDataset("words:seed=1,count=1000000");
    out.push_back({"words (render)", rate(opt.seconds, 1, readAll(*ds))});
  }

  const int threads = opt.loaderThreads > 0
                          ? opt.loaderThreads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto loaderRate = [&](DatasetPtr ds) {
    LoaderOptions lo;
    lo.batchSize = 64;
    lo.threads = threads;
    lo.maxLength = 13;
    DataLoader loader(ds, lo);
    return rate(opt.seconds, 64, [&](size_t) { sink = sink + loader.next()->indices.size(); });
  };
  if (wanted("loader digits"))
    out.push_back({"loader digits len 9 (batches)",
                   loaderRate(openDataset("digits:len=9,split=stream,seed=3")), threads});
  if (wanted("loader packed")) {
    auto packed = openDataset(packedPath);
    LoaderOptions lo;
    lo.batchSize = 64;
    lo.threads = threads;
    lo.shuffle = true;
    double total = 0;
    size_t images = 0;
    const auto start = std::chrono::steady_clock::now();
    for (int64_t epoch = 0; total < opt.seconds; ++epoch) {
      lo.epoch = epoch;
      DataLoader loader(packed, lo);
      while (auto b = loader.next()) images += b->indices.size();
      total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    out.push_back({"loader packed (batches)", images / total, threads});
  }
  return out;
}

}  // namespace foveal::core::data
