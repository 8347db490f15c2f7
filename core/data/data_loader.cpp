#include "data/data_loader.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "base/error.h"
#include "data/char_boxes.h"
#include "data/packed_dataset.h"
#include "data/random.h"
#include "image/preprocess.h"

namespace foveal::core::data {

std::vector<size_t> DataLoader::epochOrder(size_t size, uint64_t seed, int64_t epoch,
                                           bool shuffle) {
  std::vector<size_t> order(size);
  std::iota(order.begin(), order.end(), size_t(0));
  if (shuffle) {
    // Fisher-Yates with our own generator: std::shuffle's result differs between libraries.
    SampleRng rng(mixKey(seed, static_cast<uint64_t>(epoch) + 0x5eed));
    for (size_t i = size; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  }
  return order;
}

DataLoader::DataLoader(DatasetPtr dataset, LoaderOptions options)
    : m_dataset(std::move(dataset)), m_opt(std::move(options)) {
  if (!m_dataset) throw Error("data loader: no dataset");
  if (m_opt.batchSize < 1) throw Error("data loader: batch size must be positive");
  if (m_opt.worldSize < 1 || m_opt.rank < 0 || m_opt.rank >= m_opt.worldSize)
    throw Error("data loader: rank " + std::to_string(m_opt.rank) + " is outside world size " +
                std::to_string(m_opt.worldSize));
  if (m_opt.maxLength < 1) throw Error("data loader: maxLength must be positive");
  m_opt.threads = std::max(1, m_opt.threads);
  m_opt.prefetch = std::max(1, m_opt.prefetch);
  if (const auto* p = dynamic_cast<const PackedDataset*>(m_dataset.get())) {
    const auto& pp = m_opt.preprocessing;
    if (p->preprocessing().inputW != pp.inputW || p->preprocessing().inputH != pp.inputH ||
        (m_opt.withUpsampled && p->upsampledW() != pp.upsampledW()))
      throw Error(p->path() + ": packed for " + std::to_string(p->preprocessing().inputW) + "x" +
                  std::to_string(p->preprocessing().inputH) + " (upsampled width " +
                  std::to_string(p->upsampledW()) + "), but the model needs " +
                  std::to_string(pp.inputW) + "x" + std::to_string(pp.inputH) +
                  " (upsampled width " + std::to_string(pp.upsampledW()) + ")");
    if (pp.resize != p->preprocessing().resize || pp.colour != p->preprocessing().colour ||
        pp.keepRatioPad != p->preprocessing().keepRatioPad)
      throw Error(p->path() +
                  ": packed with Foveal's own preprocessing (grey, bilinear), but the "
                  "model uses " +
                  pp.colour + " and " + pp.resize +
                  (pp.keepRatioPad ? " with keep-ratio padding" : "") +
                  " (an imported deep-text-recognition-benchmark model?): evaluate it on the "
                  "LMDB or folder dataset the pack was made from");
    m_packed = p;
  }
  if (m_dataset->endless()) {
    m_batches = -1;
  } else {
    const size_t n = m_dataset->size();
    if (n == 0) throw Error(m_dataset->describe() + ": no entries");
    const auto all = epochOrder(n, m_opt.seed, m_opt.epoch, m_opt.shuffle);
    const size_t world = static_cast<size_t>(m_opt.worldSize);
    const size_t perRank = (n + world - 1) / world;
    for (size_t k = 0; k < perRank; ++k)
      m_order.push_back(all[(k * world + static_cast<size_t>(m_opt.rank)) % n]);
    const size_t b = static_cast<size_t>(m_opt.batchSize);
    m_batches = static_cast<int64_t>(m_opt.dropLast ? perRank / b : (perRank + b - 1) / b);
  }
  if (m_opt.startBatch < 0 || (m_batches >= 0 && m_opt.startBatch > m_batches))
    throw Error("data loader: start batch " + std::to_string(m_opt.startBatch) +
                " is outside the epoch's " + std::to_string(m_batches) + " batches");
  m_nextToBuild = m_nextToHand = m_opt.startBatch;
  for (int t = 0; t < m_opt.threads; ++t) m_workers.emplace_back([this] { worker(); });
}

DataLoader::~DataLoader() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_stop = true;
  }
  m_cv.notify_all();
  for (auto& t : m_workers) t.join();
}

size_t DataLoader::entryAt(int64_t position) const {
  if (m_batches < 0)  // endless: rank r reads r, r + world, r + 2 world, ...
    return static_cast<size_t>(position) * static_cast<size_t>(m_opt.worldSize) +
           static_cast<size_t>(m_opt.rank);
  return m_order[static_cast<size_t>(position)];
}

void DataLoader::worker() {
  for (;;) {
    int64_t number;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      m_cv.wait(lock, [&] {
        return m_stop || (m_nextToBuild < m_nextToHand + m_opt.prefetch &&
                          (m_batches < 0 || m_nextToBuild < m_batches));
      });
      if (m_stop) return;
      number = m_nextToBuild++;
    }
    Slot slot;
    try {
      slot.batch = build(number);
    } catch (...) {
      slot.error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_ready[number] = std::move(slot);
    }
    m_cv.notify_all();
  }
}

namespace {

// [B, 1, inputH, w] in [-1, 1] from a packed file's 8-bit images of the batch's entries.
torch::Tensor packedPixels(const PackedDataset& packed, const std::vector<size_t>& indices, int h,
                           int w, bool upsampled) {
  const int64_t B = static_cast<int64_t>(indices.size());
  auto t = torch::empty({B, 1, h, w}, torch::kUInt8);
  const size_t plane = static_cast<size_t>(w) * h;
  for (int64_t k = 0; k < B; ++k) {
    const uint8_t* src =
        upsampled ? packed.upsampledPixels(indices[k]) : packed.inputPixels(indices[k]);
    std::memcpy(t.data_ptr<uint8_t>() + k * plane, src, plane);
  }
  // The inverse of toGreyImage's quantisation: v / 127.5 - 1.
  return t.to(torch::kFloat).div_(127.5).sub_(1.0);
}

}  // namespace

Batch DataLoader::build(int64_t number) {
  torch::NoGradGuard noGrad;
  const int64_t first = number * m_opt.batchSize;
  const int64_t last = m_batches < 0 ? first + m_opt.batchSize
                                     : std::min<int64_t>(first + m_opt.batchSize,
                                                         static_cast<int64_t>(m_order.size()));
  Batch b;
  b.number = number;
  std::vector<GreyImage> images;
  std::vector<std::vector<int>> encoded;
  for (int64_t pos = first; pos < last; ++pos) {
    const size_t i = entryAt(pos);
    std::string reason = "unreadable entry";
    try {
      addEntry(i, b, images, encoded, reason);
    } catch (const Error& e) {
      if (!m_opt.skipBad) throw;
      ++m_skipped;
      std::lock_guard<std::mutex> lock(m_messageMutex);
      if (m_messages.size() < 100) m_messages.push_back(e.what());
      ++m_reasons[reason];
    }
  }
  if (b.indices.empty()) return b;
  addPixels(b, images);
  addTargets(b, encoded);
  return b;
}

void DataLoader::addEntry(size_t i, Batch& b, std::vector<GreyImage>& images,
                          std::vector<std::vector<int>>& encoded, std::string& reason) const {
  const auto* packed = static_cast<const PackedDataset*>(m_packed);
  std::string label;
  std::pair<int, int> size{m_opt.preprocessing.inputW, m_opt.preprocessing.inputH};
  if (packed) {
    label = packed->label(i);
    packed->verify(i);  // the pixels' checksum, here where a bad entry can be skipped
  } else {
    Sample s = m_dataset->get(i);
    label = std::move(s.label);
    size = {s.image.width, s.image.height};
    images.push_back(std::move(s.image));
  }
  std::vector<Box> boxes;
  try {
    reason = "empty label";
    if (label.empty()) throw Error("empty label");
    reason = "label outside the charset " + m_opt.charset.characters();
    auto enc = m_opt.charset.encode(label);
    reason = "label longer than " + std::to_string(m_opt.maxLength) + " characters";
    if (static_cast<int>(enc.size()) > m_opt.maxLength)
      throw Error("label \"" + label + "\" has " + std::to_string(enc.size()) +
                  " characters, more than the model's maximum length " +
                  std::to_string(m_opt.maxLength));
    reason = "unreadable entry";
    if (m_opt.withBoxes) {
      boxes = m_dataset->charBoxes(i);
      if (!packed) checkCharBoxesInImage(boxes, size.first, size.second);  // packs: checked
    }
    encoded.push_back(std::move(enc));
  } catch (const Error& e) {
    if (!packed) images.pop_back();
    throw Error(m_dataset->entryName(i) + ": " + e.what());
  }
  b.labels.push_back(std::move(label));
  b.indices.push_back(i);
  if (m_opt.withBoxes) {
    b.boxes.push_back(std::move(boxes));
    b.sourceSizes.push_back(size);
  }
}

void DataLoader::addPixels(Batch& b, const std::vector<GreyImage>& images) const {
  const auto& pp = m_opt.preprocessing;
  if (const auto* packed = static_cast<const PackedDataset*>(m_packed)) {
    b.images = packedPixels(*packed, b.indices, pp.inputH, pp.inputW, false);
    if (m_opt.withUpsampled)
      b.upsampled = packedPixels(*packed, b.indices, pp.inputH, packed->upsampledW(), true);
  } else {
    // The same function inference uses, so the model trains on exactly what it will see.
    ModelInput in = preprocess(images, pp, m_opt.withUpsampled);
    b.images = in.image;
    b.upsampled = in.upsampled;
    b.contentW = std::move(in.contentW);
  }
}

// After the label: the end token (CTC, which has none, gets blanks; its loss reads the lengths).
void DataLoader::addTargets(Batch& b, const std::vector<std::vector<int>>& encoded) const {
  const int64_t B = static_cast<int64_t>(b.indices.size());
  const int64_t pad = std::max(0, m_opt.charset.endIndex());
  b.targets = torch::full({B, m_opt.maxLength + 1}, pad, torch::kInt64);
  b.lengths = torch::empty({B}, torch::kInt64);
  auto tgt = b.targets.accessor<int64_t, 2>();
  auto len = b.lengths.accessor<int64_t, 1>();
  for (int64_t k = 0; k < B; ++k) {
    const auto& enc = encoded[static_cast<size_t>(k)];
    for (size_t t = 0; t < enc.size(); ++t) tgt[k][static_cast<int64_t>(t)] = enc[t];
    len[k] = static_cast<int64_t>(enc.size());
  }
}

std::optional<Batch> DataLoader::next() {
  for (;;) {
    Slot slot;
    {
      std::unique_lock<std::mutex> lock(m_mutex);
      if (m_batches >= 0 && m_nextToHand >= m_batches) return std::nullopt;
      m_cv.wait(lock, [&] { return m_ready.count(m_nextToHand) > 0; });
      slot = std::move(m_ready[m_nextToHand]);
      m_ready.erase(m_nextToHand);
      ++m_nextToHand;
    }
    m_cv.notify_all();
    if (slot.error) std::rethrow_exception(slot.error);
    if (!slot.batch->indices.empty()) return std::move(slot.batch);
    // Every entry of this batch was skipped: go on with the next one.
  }
}

std::vector<std::string> DataLoader::skippedMessages() const {
  std::lock_guard<std::mutex> lock(m_messageMutex);
  return m_messages;
}

std::map<std::string, int64_t> DataLoader::skippedByReason() const {
  std::lock_guard<std::mutex> lock(m_messageMutex);
  return m_reasons;
}

std::string DataLoader::skippedSummary() const {
  std::lock_guard<std::mutex> lock(m_messageMutex);
  const int64_t n = m_skipped.load();
  if (n == 0) return {};
  std::string s = std::to_string(n) + (n == 1 ? " entry" : " entries") + " skipped (";
  bool first = true;
  for (const auto& [reason, count] : m_reasons) {
    s += (first ? "" : ", ") + std::to_string(count) + " " + reason;
    first = false;
  }
  s += ")";
  if (!m_messages.empty()) s += "; first: " + m_messages.front();
  return s;
}

}  // namespace foveal::core::data
