#include "data/dataset_export.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>

#include "base/error.h"
#include "data/char_boxes.h"
#include "data/folder_dataset.h"
#include "data/lmdb_dataset.h"
#include "data/packed_dataset.h"
#include "image/preprocess.h"
#include "image/preprocessing_check.h"
#include "model/charset.h"

namespace foveal::core::data {

PreparedSample prepareSample(const Sample& s, const Preprocessing& pp) {
  const ModelInput in = preprocess({s.image}, pp, true);
  // The boxes follow the image to the model input's size (as traces map regions back).
  std::vector<Box> boxes;
  for (const auto& b : s.boxes) {
    const double sx = double(pp.inputW) / s.image.width, sy = double(pp.inputH) / s.image.height;
    boxes.push_back({b.x * sx, b.y * sy, b.w * sx, b.h * sy});
  }
  return {toGreyImage(in.image[0]), toGreyImage(in.upsampled[0]), s.label, std::move(boxes)};
}

namespace {

// One entry of the chunk being exported: read (and, when packing, preprocessed) by a worker,
// written in order by the caller.
struct Slot {
  std::optional<Sample> sample;
  std::optional<PreparedSample> prepared;
  std::string error;
};

// The writer of the format asked for; the entries go to whichever is open.
struct Writers {
  std::unique_ptr<PackedWriter> packed;
  std::unique_ptr<LmdbWriter> lmdb;
  std::unique_ptr<FolderWriter> folder;

  Writers(const std::string& out, const ExportOptions& opt) {
    if (opt.format == "packed")
      packed = std::make_unique<PackedWriter>(out, opt.preprocessing);
    else if (opt.format == "lmdb")
      lmdb = std::make_unique<LmdbWriter>(out);
    else if (opt.format == "folder")
      folder = std::make_unique<FolderWriter>(out);
    else
      throw Error("unknown dataset format \"" + opt.format + "\" (packed, lmdb or folder)");
  }
  void add(const Slot& slot) {
    if (packed)
      packed->add(*slot.prepared);
    else if (lmdb)
      lmdb->add(*slot.sample);
    else
      folder->add(*slot.sample);
  }
  void finish() {
    if (packed) packed->finish();
    if (lmdb) lmdb->finish();
    if (folder) folder->finish();
  }
};

// Reads and checks entries of one dataset into slots: what every worker of an export shares.
struct EntryReader {
  const Dataset& ds;
  const ExportOptions& opt;
  const PackedDataset* packedSource;  // the source when it is packed (its entries are reused)
  bool packing;

  void read(size_t i, Slot& slot) const;
};

void EntryReader::read(size_t i, Slot& slot) const {
  if (packing && packedSource) {
    slot.prepared = packedSource->prepared(i);
  } else {
    Sample s = ds.get(i);
    if (s.label.empty()) throw Error(ds.entryName(i) + ": empty label");
    // The true character boxes travel with the entry when the source knows them.
    s.boxes = ds.charBoxes(i);
    if (!s.boxes.empty() && s.boxes.size() != splitUtf8(s.label).size())
      throw Error(ds.entryName(i) + ": " + std::to_string(s.boxes.size()) +
                  " character boxes for the " + std::to_string(splitUtf8(s.label).size()) +
                  " characters of \"" + s.label + "\"");
    try {
      checkCharBoxesInImage(s.boxes, s.image.width, s.image.height);
    } catch (const Error& e) {
      throw Error(ds.entryName(i) + ": " + e.what());
    }
    if (packing)
      slot.prepared = prepareSample(s, opt.preprocessing);
    else
      slot.sample = std::move(s);
  }
  if (slot.prepared && slot.prepared->label.empty()) throw Error(ds.entryName(i) + ": empty label");
}

// Reads entries start .. start + m into slots 0 .. m on `threads` threads.
void readChunk(const EntryReader& reader, size_t start, size_t m, int threads,
               std::vector<Slot>& slots) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < m;) {
      Slot& slot = slots[k];
      slot = Slot{};
      try {
        reader.read(start + k, slot);
      } catch (const Error& e) {
        slot.error = e.what();
      } catch (const std::exception& e) {
        // Nothing may escape a worker thread (std::terminate); name the entry instead.
        slot.error = reader.ds.entryName(start + k) + ": " + e.what();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace

ExportReport exportDataset(const Dataset& ds, const std::string& out, const ExportOptions& opt) {
  if (ds.endless() && opt.limit == 0)
    throw Error(ds.describe() + ": an endless stream needs a count to export");
  const size_t n =
      opt.limit ? (ds.endless() ? opt.limit : std::min(opt.limit, ds.size())) : ds.size();
  const auto* packedSource = dynamic_cast<const PackedDataset*>(&ds);
  const bool packing = opt.format == "packed";
  if (packing) checkPreprocessing(opt.preprocessing);  // before any entry is read
  if (packing && packedSource) {
    const auto& a = packedSource->preprocessing();
    const auto& b = opt.preprocessing;
    if (a.inputW != b.inputW || a.inputH != b.inputH || a.upsampledW() != b.upsampledW())
      throw Error(packedSource->path() +
                  ": already packed with other sizes; repack from the original images");
  }
  Writers writers(out, opt);

  // Entries are read (and preprocessed) in parallel in chunks, and written in order.
  const int threads = opt.threads > 0
                          ? opt.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  constexpr size_t kChunk = 256;
  const EntryReader reader{ds, opt, packedSource, packing};
  ExportReport report;
  std::vector<Slot> slots(kChunk);
  for (size_t start = 0; start < n; start += kChunk) {
    const size_t m = std::min(kChunk, n - start);
    readChunk(reader, start, m, threads, slots);
    for (size_t k = 0; k < m; ++k) {
      const Slot& slot = slots[k];
      if (!slot.error.empty()) {
        if (!opt.skipBad) throw Error(slot.error);
        ++report.skipped;
        report.skippedMessages.push_back(slot.error);
        continue;
      }
      writers.add(slot);
      ++report.written;
    }
    if (opt.progress) opt.progress(start + m, n);
  }
  writers.finish();
  return report;
}

}  // namespace foveal::core::data
