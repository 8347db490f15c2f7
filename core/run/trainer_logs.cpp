#include "run/trainer_logs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "run/run_folder.h"
#include "run/tensorboard_events.h"
#include "run/trainer_log_parts.h"
#include "run/trainer_text_logs.h"

namespace foveal::core {

namespace fs = std::filesystem;

// ----------------------------------------------------------------------------------------------
// The registry

const std::vector<const RunLogFormat*>& runLogFormats() {
  static const std::vector<const RunLogFormat*> formats = {&tensorboardFormat(), &dtrbFormat(),
                                                           &mmengineFormat(), &paddleocrFormat(),
                                                           &metricsCsvFormat()};
  return formats;
}

const RunLogFormat* detectRunLogFormat(const std::string& runDir) {
  const RunLogFormat* best = nullptr;
  int bestScore = 0;
  for (const RunLogFormat* f : runLogFormats()) {
    int score = 0;
    try {
      score = f->sniff(runDir);
    } catch (const std::exception&) {
      score = 0;  // a sniffer that cannot read the folder does not know it
    }
    if (score > bestScore) {
      best = f;
      bestScore = score;
    }
  }
  return best;
}

// ----------------------------------------------------------------------------------------------
// The catalogue

namespace {

bool endsWith(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}
bool startsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

bool isFovealMetric(const std::string& key) {
  for (const auto& m : run_folder::metricCatalogue())
    if (key == m.key) return true;
  return false;
}

}  // namespace

std::string catalogueName(const std::string& format, const std::string& tag) {
  if (format == "dtrb") {
    // train.py's log_train.txt (and the EasyOCR trainer's).
    if (tag == "Train_loss") return "loss";
    if (tag == "Valid_loss") return "val_loss";
    if (tag == "Current_accuracy") return "accuracy";
    if (tag == "Current_norm_ED") return "ned";
    return "";
  }
  // PaddleOCR's own names (its VisualDL curves: TRAIN/<k>, EVAL/<k>), in train.log and in event
  // files a PaddleOCR run writes through a TensorBoard-compatible logger.
  if (tag == "TRAIN/loss") return "loss";
  if (tag == "TRAIN/lr") return "lr";
  if (tag == "TRAIN/acc") return "train_accuracy";
  if (tag == "TRAIN/ips") return "images_per_s";
  if (tag == "EVAL/acc") return "accuracy";
  if (tag == "EVAL/norm_edit_dis") return "ned";
  if (format == "paddleocr") return "";
  // MMOCR's metrics (recog_metric.py), with or without a dataset prefix ("IIIT5K/recog/...").
  // Foveal's accuracy ignores case and punctuation, as word_acc_ignore_case_symbol does.
  if (endsWith(tag, "recog/word_acc_ignore_case_symbol")) return "accuracy";
  if (endsWith(tag, "recog/1-N.E.D")) return "ned";
  // Lightning's (strhub's, PyLaia's), kraken's, MMEngine's and Foveal's own names.
  static const std::map<std::string, std::string> common = {
      {"loss", "loss"},
      {"train_loss", "loss"},
      {"train/loss", "loss"},
      {"tr_loss", "loss"},
      {"loss_step", "loss"},
      {"val_loss", "val_loss"},
      {"val/loss", "val_loss"},
      {"va_loss", "val_loss"},
      {"valid_loss", "val_loss"},
      {"val_accuracy", "accuracy"},
      {"val/accuracy", "accuracy"},
      {"eval/accuracy", "accuracy"},
      {"val_NED", "ned"},
      {"eval/ned", "ned"},
      {"lr", "lr"},
      {"learning_rate", "lr"},
      {"train/lr", "lr"},
      {"grad_norm", "grad_norm"},
      {"train/grad_norm", "grad_norm"},
  };
  if (const auto it = common.find(tag); it != common.end()) return it->second;
  // LearningRateMonitor: "lr-Adam", "lr-AdamW", "lr-SGD/pg1".
  if (startsWith(tag, "lr-")) return "lr";
  // Foveal's own keys (its event files write the metrics.jsonl names, bare or under train/, eval/).
  for (const char* prefix : {"", "train/", "eval/"})
    if (startsWith(tag, prefix) && isFovealMetric(tag.substr(std::strlen(prefix))))
      return tag.substr(std::strlen(prefix));
  return "";
}

double catalogueValue(const std::string& format, const std::string& tag, double value) {
  if (format == "dtrb") {
    if (tag == "Current_accuracy") return value / 100;  // train.py: n_correct / n * 100
    if (tag == "Current_norm_ED") return 1 - value;     // test.py: mean of 1 - ED / max length
    return value;
  }
  // PaddleOCR's RecMetric and MMOCR's OneMinusNEDMetric log 1 - NED; strhub 100 * (1 - NED).
  if (tag == "EVAL/norm_edit_dis" || endsWith(tag, "recog/1-N.E.D")) return 1 - value;
  if (tag == "val_NED") return 1 - value / 100;
  return value;
}

// ----------------------------------------------------------------------------------------------
// Checkpoints

namespace {

/// What a file's name says about it as a checkpoint.
struct CheckpointName {
  bool checkpoint = false;
  int64_t step = -1, epoch = -1;
  std::string stem;          ///< the name the logs use ("best_accuracy", "iter_epoch_3")
  bool latest = false;       ///< last.ckpt, latest.pdparams: written at the newest step
  bool zipCheck = false;     ///< a torch.save container: whole once its zip end record is there
  bool safetensors = false;  ///< whole once its header's last tensor ends at the file's end
};

std::optional<int64_t> digits(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// The number after the last occurrence of `key` in `stem` when digits follow it up to the end
/// or to a separator.
std::optional<int64_t> numberAfter(const std::string& stem, const std::string& key) {
  const size_t at = stem.rfind(key);
  if (at == std::string::npos) return std::nullopt;
  if (at > 0 && std::isalnum(static_cast<unsigned char>(stem[at - 1])) && key[0] != '_')
    return std::nullopt;
  size_t end = at + key.size();
  while (end < stem.size() && std::isdigit(static_cast<unsigned char>(stem[end]))) ++end;
  if (end < stem.size() && stem[end] != '-' && stem[end] != '_' && stem[end] != '.')
    return std::nullopt;
  return digits(stem.substr(at + key.size(), end - at - key.size()));
}

CheckpointName classify(const fs::path& rel) {
  CheckpointName c;
  const std::string name = rel.filename().string();
  if (name.empty() || name[0] == '.' || name.back() == '~') return c;  // rsync's temporaries
  std::string ext = rel.extension().string();
  std::string stem = rel.stem().string();
  // "x.pth.tar", and partial downloads "x.pth.part", "x.ckpt.tmp": never checkpoints.
  for (const char* partial : {".part", ".partial", ".tmp", ".temp", ".crdownload"})
    if (ext == partial) return c;
  if (ext == ".tar" && endsWith(stem, ".pth")) {
    ext = ".pth";
    stem = stem.substr(0, stem.size() - 4);
  }
  static const std::vector<std::string> known = {".pth",     ".pt",          ".ckpt",
                                                 ".mlmodel", ".safetensors", ".pdparams"};
  if (std::find(known.begin(), known.end(), ext) == known.end()) return c;
  c.checkpoint = true;
  c.zipCheck = ext == ".pth" || ext == ".pt" || ext == ".ckpt";
  c.safetensors = ext == ".safetensors";
  // PaddleOCR's uniform output keeps best_accuracy/model_state.pdparams: the folder names it.
  if ((stem == "model_state" || stem == "model") && rel.has_parent_path())
    stem = rel.parent_path().filename().string();
  c.stem = stem;
  // Lightning's "{epoch}-{step}" names: epoch=3-step=1200-val_accuracy=81.2.ckpt.
  if (const auto e = numberAfter(stem, "epoch=")) c.epoch = *e;
  if (const auto s = numberAfter(stem, "step=")) c.step = *s;
  // PaddleOCR iter_epoch_N; MMEngine epoch_N, iter_N, best_<metric>_epoch_N / _iter_N; DTRB's
  // and EasyOCR's iter_N.
  if (c.epoch < 0)
    if (const auto e = numberAfter(stem, "epoch_")) c.epoch = *e;
  if (c.step < 0 && stem.find("iter_epoch_") == std::string::npos)
    if (const auto s = numberAfter(stem, "iter_")) c.step = *s;
  // kraken's ketos: <prefix>_N.mlmodel / .safetensors after epoch N, <prefix>_best.*.
  if (c.epoch < 0 && c.step < 0 && (ext == ".mlmodel" || ext == ".safetensors")) {
    const size_t us = stem.rfind('_');
    if (us != std::string::npos)
      if (const auto e = digits(stem.substr(us + 1))) c.epoch = *e;
  }
  c.latest = stem == "last" || stem == "latest" || endsWith(stem, "-last");
  return c;
}

uint32_t le32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/// A zip (torch.save's container since PyTorch 1.6) is whole once its end-of-central-directory
/// record closes the file: torch writes it last. A file that is not a zip (a legacy torch.save
/// pickle) cannot tell, and counts as whole.
bool zipWhole(const fs::path& path, uint64_t size) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  if (!in.read(magic, 4)) return false;
  if (std::memcmp(magic, "PK\x03\x04", 4) != 0) return true;
  const uint64_t tail = std::min<uint64_t>(size, 22 + 65535 + 20);
  std::string buf(static_cast<size_t>(tail), '\0');
  in.seekg(static_cast<std::streamoff>(size - tail));
  if (!in.read(buf.data(), static_cast<std::streamsize>(tail))) return false;
  const auto* b = reinterpret_cast<const unsigned char*>(buf.data());
  for (size_t p = tail >= 22 ? tail - 22 : 0;; --p) {
    if (std::memcmp(b + p, "PK\x05\x06", 4) == 0) {
      const uint32_t comment = uint32_t(b[p + 20]) | uint32_t(b[p + 21]) << 8;
      if (p + 22 + comment == tail) {
        const uint32_t cdSize = le32(b + p + 12), cdOffset = le32(b + p + 16);
        const uint64_t eocd = size - tail + p;
        if (cdSize == 0xFFFFFFFFu || cdOffset == 0xFFFFFFFFu)  // ZIP64: its locator precedes
          return p >= 20 && std::memcmp(b + p - 20, "PK\x06\x07", 4) == 0;
        if (uint64_t(cdOffset) + cdSize == eocd) return true;
        // A ZIP64 end record sits between the central directory and this one.
        return p >= 20 && std::memcmp(b + p - 20, "PK\x06\x07", 4) == 0;
      }
    }
    if (p == 0) break;
  }
  return false;
}

/// safetensors: an 8-byte header length, the JSON header, then the tensors; whole when the
/// furthest data_offsets end is the file's end.
bool safetensorsWhole(const fs::path& path, uint64_t size) {
  std::ifstream in(path, std::ios::binary);
  unsigned char len[8];
  if (!in.read(reinterpret_cast<char*>(len), 8)) return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = n << 8 | len[i];
  if (n > (100u << 20) || 8 + n > size) return false;
  std::string header(static_cast<size_t>(n), '\0');
  if (!in.read(header.data(), static_cast<std::streamsize>(n))) return false;
  try {
    const auto j = nlohmann::json::parse(header);
    uint64_t end = 0;
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "__metadata__" && it->contains("data_offsets"))
        end = std::max(end, (*it)["data_offsets"].at(1).get<uint64_t>());
    return 8 + n + end == size;
  } catch (const std::exception&) {
    return false;
  }
}

/// A file time in its clock's own nanoseconds (libstdc++'s file clock does not count from 1970):
/// for comparing times and ages only.
int64_t fileClockNs(const fs::file_time_type& t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

/// Nanoseconds since 1970 of a file clock time (C++17 has no clock_cast: the offset between the
/// clocks is taken once, so a file's time converts to the same number every time).
int64_t unixNs(int64_t fileNs) {
  static const int64_t offset = [] {
    const auto sys = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    return sys - fileClockNs(fs::file_time_type::clock::now());
  }();
  return fileNs + offset;
}

}  // namespace

// ----------------------------------------------------------------------------------------------
// TrainerRun

struct TrainerRun::State {
  std::string dir;
  double settleSeconds = 3;
  const RunLogFormat* format = nullptr;
  std::unique_ptr<RunLogReader> reader;
  std::vector<ScalarSeries> series;
  std::vector<LogDamage> damage;
  std::map<std::string, int64_t> loggedSteps;  ///< checkpoint stem -> step the log says

  struct Seen {
    uint64_t size = 0;
    int64_t mtime = 0;
    std::chrono::steady_clock::time_point since;
    bool listed = false;
    bool notWhole = false;  ///< checked at this size and time: not whole yet
  };
  std::map<std::string, Seen> seen;  ///< by path relative to the folder
  std::vector<TrainerCheckpoint> checkpoints;

  int64_t epochEnd(int64_t epoch) const {
    for (const auto& s : series)
      if (s.tag == "epoch") {
        int64_t at = -1;
        for (const auto& p : s.points)
          if (std::isfinite(p.value) && static_cast<int64_t>(p.value) == epoch)
            at = std::max(at, p.step);
        return at;
      }
    return -1;
  }

  int64_t newestStep() const {
    int64_t at = -1;
    for (const auto& s : series)
      if (!s.points.empty()) at = std::max(at, s.points.back().step);
    return at;
  }

  bool readLogs() {
    if (!format) {
      format = detectRunLogFormat(dir);
      if (!format) return false;
      try {
        reader = format->open(dir);
      } catch (const std::exception& e) {
        damage.push_back({dir, 0, std::string("cannot read its logs: ") + e.what()});
        format = nullptr;
        return true;
      }
    }
    RunLogReader::Update u;
    try {
      u = reader->readNew();
    } catch (const std::exception& e) {  // the seam says never; a reader that does is damage
      u.damage.push_back({dir, 0, e.what()});
    }
    if (u.reset) {
      damage.clear();
      loggedSteps.clear();
    }
    const bool changed = u.reset || !u.series.empty() || !u.purged.empty() || !u.damage.empty();
    applyUpdate(series, u);
    for (auto& s : series)
      if (s.catalogue.empty()) s.catalogue = catalogueName(format->name(), s.tag);
    damage.insert(damage.end(), u.damage.begin(), u.damage.end());
    for (const auto& [stem, step] : u.checkpointSteps) loggedSteps[stem] = step;
    return changed;
  }

  TrainerCheckpoint describe(const std::string& rel, const Seen& s) const {
    const CheckpointName c = classify(fs::path(rel));
    TrainerCheckpoint t;
    t.file = rel;
    t.size = s.size;
    t.mtimeNs = unixNs(s.mtime);
    t.epoch = c.epoch;
    t.step = c.step;
    if (t.step < 0)
      if (const auto it = loggedSteps.find(c.stem); it != loggedSteps.end()) t.step = it->second;
    if (t.step < 0 && c.epoch >= 0) t.step = epochEnd(c.epoch);
    if (t.step < 0 && c.latest) t.step = newestStep();
    return t;
  }

  void unlist(const std::string& rel) {
    checkpoints.erase(std::remove_if(checkpoints.begin(), checkpoints.end(),
                                     [&](const TrainerCheckpoint& c) { return c.file == rel; }),
                      checkpoints.end());
  }

  // Checkpoint `rel` (at `p`) as this look finds it: listed once complete. Whether the list
  // changed.
  bool lookAtCheckpoint(const fs::path& p, const std::string& rel, uint64_t size, int64_t mtime,
                        std::chrono::steady_clock::time_point now, int64_t wallNow) {
    bool changed = false;
    auto found = seen.find(rel);
    if (found == seen.end() || found->second.size != size || found->second.mtime != mtime) {
      if (found != seen.end() && found->second.listed) {
        // Rewritten (DTRB's best_accuracy.pth at a new best): gone until it settles again.
        unlist(rel);
        changed = true;
      }
      Seen s;
      s.size = size;
      s.mtime = mtime;
      s.since = now;
      found = seen.insert_or_assign(rel, s).first;
    }
    Seen& s = found->second;
    if (s.listed || s.notWhole) return changed;
    // Complete: unchanged for settleSeconds, by two looks that far apart or by its own time
    // (a file renamed into place keeps the time its writer finished at).
    const double age = (wallNow - mtime) / 1e9;
    const auto settle = std::chrono::duration<double>(settleSeconds);
    if (now - s.since < settle && !(age >= settleSeconds)) return changed;
    const CheckpointName c = classify(fs::path(rel));
    bool whole = true;
    try {
      if (c.zipCheck) whole = zipWhole(p, size);
      if (c.safetensors) whole = safetensorsWhole(p, size);
    } catch (const std::exception&) {
      whole = false;
    }
    if (!whole) {
      s.notWhole = true;  // looked at again once its size or time changes
      return changed;
    }
    s.listed = true;
    checkpoints.push_back(describe(rel, s));
    return true;
  }

  // The checkpoints this look did not find are forgotten; whether the list changed.
  bool forgetGone(const std::map<std::string, bool>& present) {
    bool changed = false;
    for (auto it = seen.begin(); it != seen.end();) {
      if (present.count(it->first)) {
        ++it;
        continue;
      }
      if (it->second.listed) {
        unlist(it->first);
        changed = true;
      }
      it = seen.erase(it);
    }
    return changed;
  }

  bool scanCheckpoints() {
    bool changed = false;
    const auto now = std::chrono::steady_clock::now();
    const int64_t wallNow = fileClockNs(fs::file_time_type::clock::now());
    std::map<std::string, bool> present;
    std::error_code ec;
    const fs::path root(dir);
    for (auto it = fs::recursive_directory_iterator(
             root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path& p = it->path();
      const std::string name = p.filename().string();
      std::error_code fec;
      if (it->is_directory(fec)) {
        // Hidden folders (Foveal's own side folder, rsync's) and deep trees are not the run's.
        if (name.empty() || name[0] == '.' || it.depth() >= 3 || it->is_symlink(fec))
          it.disable_recursion_pending();
        continue;
      }
      if (!it->is_regular_file(fec)) continue;
      const std::string rel = fs::relative(p, root, fec).generic_string();
      if (fec || !classify(fs::path(rel)).checkpoint) continue;
      const uint64_t size = it->file_size(fec);
      if (fec) continue;
      const int64_t mtime = fileClockNs(it->last_write_time(fec));
      if (fec) continue;
      present[rel] = true;
      if (lookAtCheckpoint(p, rel, size, mtime, now, wallNow)) changed = true;
    }
    if (forgetGone(present)) changed = true;
    // By step (unknown steps last), then by name: the order training wrote them in.
    std::sort(checkpoints.begin(), checkpoints.end(),
              [](const TrainerCheckpoint& a, const TrainerCheckpoint& b) {
                const int64_t sa = a.step < 0 ? std::numeric_limits<int64_t>::max() : a.step;
                const int64_t sb = b.step < 0 ? std::numeric_limits<int64_t>::max() : b.step;
                return sa != sb ? sa < sb : a.file < b.file;
              });
    return changed;
  }
};

TrainerRun::TrainerRun(std::string runDir) : m(std::make_unique<State>()) {
  m->dir = std::move(runDir);
}
TrainerRun::~TrainerRun() = default;
TrainerRun::TrainerRun(TrainerRun&&) noexcept = default;
TrainerRun& TrainerRun::operator=(TrainerRun&&) noexcept = default;

bool TrainerRun::refresh() {
  bool changed = false;
  try {
    changed |= m->readLogs();
  } catch (const std::exception& e) {
    m->damage.push_back({m->dir, 0, e.what()});
    changed = true;
  }
  try {
    changed |= m->scanCheckpoints();
  } catch (const std::exception& e) {
    m->damage.push_back({m->dir, 0, std::string("cannot list its checkpoints: ") + e.what()});
    changed = true;
  }
  return changed;
}

const std::string& TrainerRun::dir() const { return m->dir; }
const RunLogFormat* TrainerRun::format() const { return m->format; }
std::string TrainerRun::trainer() const {
  if (!m->format) return "";
  try {
    return m->format->trainer(m->dir);
  } catch (const std::exception&) {
    return m->format->name();
  }
}
const std::vector<ScalarSeries>& TrainerRun::series() const { return m->series; }
const ScalarSeries* TrainerRun::find(const std::string& tagOrCatalogue) const {
  for (const auto& s : m->series)
    if (s.tag == tagOrCatalogue) return &s;
  for (const auto& s : m->series)
    if (s.catalogue == tagOrCatalogue) return &s;
  return nullptr;
}
const std::vector<TrainerCheckpoint>& TrainerRun::checkpoints() const { return m->checkpoints; }
const std::vector<LogDamage>& TrainerRun::damage() const { return m->damage; }
void TrainerRun::setSettleSeconds(double seconds) {
  m->settleSeconds = std::isfinite(seconds) && seconds >= 0 ? seconds : 0;
}

}  // namespace foveal::core
