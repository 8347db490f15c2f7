#include "run/tensorboard_events.h"

#ifdef FOVEAL_HAVE_PROTOBUF
#include <google/protobuf/stubs/common.h>
#if GOOGLE_PROTOBUF_VERSION < 4022000
#include <google/protobuf/stubs/logging.h>  // LogSilencer (gone with protobuf 22's abseil logging)
#endif
#endif
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include "base/crc32.h"
#include "base/error.h"

#ifdef FOVEAL_HAVE_PROTOBUF
#include "tensorboard_event.pb.h"  // generated from run/tensorboard_event.proto
#endif

namespace foveal::core {

namespace fs = std::filesystem;
#ifdef FOVEAL_HAVE_PROTOBUF
namespace pb = foveal::tensorboard;
#endif

namespace {

constexpr const char* kEventFilePrefix = "events.out.tfevents.";
constexpr int kMaxDepth = 3;                          // folders searched below the run folder
constexpr size_t kHeader = 12, kFooter = 4;           // length + its CRC; the data's CRC
constexpr uint64_t kMaxRecord = uint64_t(256) << 20;  // larger records are skipped, not read
constexpr size_t kChunk = size_t(8) << 20;            // bytes read at a time
constexpr size_t kHead = 64;  // a file's first bytes: another file under the same name differs

uint64_t littleEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t littleEndian32(const char* p) {
  return uint32_t(uint8_t(p[0])) | uint32_t(uint8_t(p[1])) << 8 | uint32_t(uint8_t(p[2])) << 16 |
         uint32_t(uint8_t(p[3])) << 24;
}

void putLittleEndian(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// Strict UTF-8 (no overlong forms, surrogates or code points past U+10FFFF): TensorBoard refuses
// an event whose tag is not, and a tag goes on into JSON.
bool validUtf8(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  for (size_t i = 0; i < n;) {
    const unsigned c = p[i];
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = cp << 6 | (p[i + k] & 0x3F);
    }
    static const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The time in an event file's name (events.out.tfevents.<seconds>.<host>...); -1 without one.
int64_t nameTime(const std::string& name) {
  const size_t start = std::strlen(kEventFilePrefix);
  int64_t t = 0;
  size_t i = start;
  for (; i < name.size() && i - start < 18 && name[i] >= '0' && name[i] <= '9'; ++i)
    t = t * 10 + (name[i] - '0');
  return i == start ? -1 : t;
}

struct FoundFile {
  std::string rel;  // relative to the run folder, '/'-separated
  int64_t time = -1;
};

bool writtenBefore(const FoundFile& a, const FoundFile& b) {
  return std::tie(a.time, a.rel) < std::tie(b.time, b.rel);
}

// The event files up to kMaxDepth folders down, in the order they were written. Hidden folders
// (and rsync's hidden temporary files) are not looked at; symbolic links to folders not followed.
std::vector<FoundFile> findEventFiles(const fs::path& dir, size_t limit = SIZE_MAX) {
  std::vector<FoundFile> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (const fs::recursive_directory_iterator end; !ec && it != end && out.size() < limit;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code sec;
    if (it->is_directory(sec)) {
      if (it.depth() >= kMaxDepth || name.empty() || name[0] == '.') it.disable_recursion_pending();
      continue;
    }
    if (name.size() <= std::strlen(kEventFilePrefix) ||
        name.compare(0, std::strlen(kEventFilePrefix), kEventFilePrefix) != 0 ||
        !it->is_regular_file(sec))
      continue;
    out.push_back({fs::relative(it->path(), dir, sec).generic_string(), nameTime(name)});
  }
  std::sort(out.begin(), out.end(), writtenBefore);
  return out;
}

bool isVersionFolder(const std::string& c) {
  const std::string v = "version_";
  return c.size() > v.size() && c.compare(0, v.size(), v) == 0 &&
         std::all_of(c.begin() + v.size(), c.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

// The folders of a file's path, leaving out Lightning's version_N/: the files of one curve set.
std::vector<std::string> streamFolders(const std::string& rel) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t slash; (slash = rel.find('/', start)) != std::string::npos; start = slash + 1) {
    const std::string c = rel.substr(start, slash - start);
    if (!isVersionFolder(c)) parts.push_back(c);
  }
  return parts;
}

std::string join(const std::vector<std::string>& parts, size_t from) {
  std::string s;
  for (size_t i = from; i < parts.size(); ++i) s += (s.empty() ? "" : "/") + parts[i];
  return s;
}

// Each file's stream (its folders without version_N) and its tags' prefix: the part of its stream
// after what every stream of the run shares ("" when the run has one stream).
std::vector<std::pair<std::string, std::string>> streamsAndPrefixes(
    const std::vector<FoundFile>& files) {
  std::vector<std::vector<std::string>> folders;
  for (const auto& f : files) folders.push_back(streamFolders(f.rel));
  size_t common = folders.empty() ? 0 : folders[0].size();
  for (const auto& f : folders) {
    size_t k = 0;
    while (k < common && k < f.size() && f[k] == folders[0][k]) ++k;
    common = k;
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : folders) {
    const std::string rest = join(f, common);
    out.emplace_back(join(f, 0), rest.empty() ? "" : rest + "/");
  }
  return out;
}

constexpr const char* kNoProtobuf =
    "Foveal was built without protobuf, which it needs to read and write TensorBoard event "
    "files (Debian: libprotobuf-dev and protobuf-compiler; then build again)";

}  // namespace

// ---- records ----

bool tensorboardEventsAvailable() {
#ifdef FOVEAL_HAVE_PROTOBUF
  return true;
#else
  return false;
#endif
}

std::string tensorboardUnavailableReason() {
  return tensorboardEventsAvailable() ? std::string() : std::string(kNoProtobuf);
}

uint32_t maskedCrc32c(const void* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string frameEventRecord(const std::string& data) {
  std::string out;
  out.reserve(kHeader + data.size() + kFooter);
  putLittleEndian(out, data.size(), 8);
  putLittleEndian(out, maskedCrc32c(out.data(), 8), 4);
  out += data;
  putLittleEndian(out, maskedCrc32c(data.data(), data.size()), 4);
  return out;
}

RecordScan scanEventRecords(const std::string& bytes, uint64_t offset, const std::string& file) {
  RecordScan s;
  s.next = offset;
  size_t pos = 0;
  while (bytes.size() - pos >= kHeader) {
    const char* p = bytes.data() + pos;
    const uint64_t at = offset + pos;
    const uint64_t length = littleEndian64(p);
    if (maskedCrc32c(p, 8) != littleEndian32(p + 8)) {
      s.damage.push_back({file, at,
                          "the record's length fails its CRC-32C: the rest of the file cannot be "
                          "framed and is not read"});
      s.stopped = true;
      return s;
    }
    if (length > kMaxRecord) {
      // A good length: the record can be stepped over without reading it (an image summary, or
      // damage the CRC did not catch).
      s.damage.push_back({file, at,
                          "a record of " + std::to_string(length) + " bytes, more than the " +
                              std::to_string(kMaxRecord >> 20) + " MiB Foveal reads: skipped"});
      if (length > UINT64_MAX - at - kHeader - kFooter) {
        s.stopped = true;
        return s;
      }
      s.next = at + kHeader + length + kFooter;
      if (s.next - offset > bytes.size()) return s;
      pos = static_cast<size_t>(s.next - offset);
      continue;
    }
    if (bytes.size() - pos - kHeader < length + kFooter) break;  // not yet complete
    const char* data = p + kHeader;
    if (maskedCrc32c(data, length) != littleEndian32(data + length))
      s.damage.push_back(
          {file, at,
           "the record's data (" + std::to_string(length) + " bytes) fails its CRC-32C: skipped"});
    else
      s.records.push_back({at, std::string(data, length)});
    pos += kHeader + length + kFooter;
    s.next = offset + pos;
  }
  return s;
}

TensorBoardEvent decodeTensorBoardEvent(const std::string& data) {
#ifndef FOVEAL_HAVE_PROTOBUF
  (void)data;
  throw Error(kNoProtobuf);
#else
  pb::Event e;
  bool parsed;
  {
#if GOOGLE_PROTOBUF_VERSION < 4022000
    google::protobuf::LogSilencer quiet;  // it would print its own complaint to stderr
#endif
    parsed = e.ParseFromString(data);
  }
  if (!parsed) throw Error("not a TensorBoard Event protobuf (it does not parse)");
  TensorBoardEvent out;
  out.wallTime = e.wall_time();
  out.step = e.step();
  if (e.what_case() == pb::Event::kFileVersion) {
    out.hasFileVersion = true;
    out.fileVersion = e.file_version();
  }
  out.sessionStart =
      e.what_case() == pb::Event::kSessionLog && e.session_log().status() == pb::SessionLog::START;
  if (e.what_case() != pb::Event::kSummary) return out;
  for (const auto& v : e.summary().value()) {
    EventValue ev;
    ev.tag = v.tag().empty() ? v.node_name() : v.tag();  // TF1's node_name when there is no tag
    if (!validUtf8(ev.tag)) throw Error("a summary tag that is not UTF-8");
    if (v.has_metadata()) {
      ev.hasMetadata = true;
      ev.plugin = v.metadata().plugin_data().plugin_name();
      ev.scalarClass = v.metadata().data_class() == pb::DATA_CLASS_SCALAR;
    }
    if (v.value_case() == pb::Summary::Value::kSimpleValue) {
      ev.simple = true;
      ev.value = v.simple_value();
    } else if (v.value_case() == pb::Summary::Value::kTensor) {
      const auto& t = v.tensor();
      const std::string& content = t.tensor_content();
      if (t.tensor_shape().dim_size() == 0 && !t.tensor_shape().unknown_rank()) {
        if (t.dtype() == pb::DT_FLOAT) {
          if (t.float_val_size() == 1 && content.empty()) {
            ev.scalarTensor = true;
            ev.value = t.float_val(0);
          } else if (t.float_val_size() == 0 && content.size() == 4) {
            const uint32_t bits = littleEndian32(content.data());
            float f;
            std::memcpy(&f, &bits, 4);
            ev.scalarTensor = true;
            ev.value = f;
          }
        } else if (t.dtype() == pb::DT_DOUBLE) {
          if (t.double_val_size() == 1 && content.empty()) {
            ev.scalarTensor = true;
            ev.value = t.double_val(0);
          } else if (t.double_val_size() == 0 && content.size() == 8) {
            const uint64_t bits = littleEndian64(content.data());
            double d;
            std::memcpy(&d, &bits, 8);
            ev.scalarTensor = true;
            ev.value = d;
          }
        }
      }
    }
    out.values.push_back(std::move(ev));
  }
  return out;
#endif
}

// ---- the folder reader ----

struct TensorBoardRunReader::State {
  struct File {
    std::string rel, path;
    int64_t time = -1;
    std::string stream, prefix;
    uint64_t offset = 0;    // the next record
    uint64_t seenSize = 0;  // the largest size seen: a smaller one means another file
    std::string head;       // its first bytes, as read
    bool stopped = false;   // a length failed its CRC
    bool told = false;      // without protobuf: said once that it cannot be read
  };
  struct Meta {
    bool known = false;
    std::string plugin;
    bool scalarClass = false;
  };
  struct Tag {
    std::string name, stream;
    std::vector<ScalarPoint> points;  // by step, as TensorBoard shows them
    size_t delivered = 0;             // points[0, delivered) were returned by readNew
    bool purged = false;              // since the last readNew, some returned points are void
    int64_t purgeStep = 0;
  };

  fs::path dir;
  std::vector<File> files;
  std::vector<Tag> tags;
  std::map<std::string, size_t> tagIndex;
  std::map<std::string, Meta> meta;
  bool reported = false;  // a readNew returned something: a rebuild is then a reset

  void clear() {
    files.clear();
    tags.clear();
    tagIndex.clear();
    meta.clear();
  }

  File* tracked(const std::string& rel) {
    for (auto& f : files)
      if (f.rel == rel) return &f;
    return nullptr;
  }

  /// Takes in the files found, with their streams and prefixes. True when what was read so far
  /// no longer holds: a file read from is gone, a tag prefix changes, or a new file was written
  /// before one already read from (the order of the points would change).
  bool update(const std::vector<FoundFile>& found) {
    const auto sp = streamsAndPrefixes(found);
    bool anyRead = false;
    FoundFile lastRead;
    for (const auto& f : files) {
      if (f.offset == 0 && !f.stopped) continue;
      const auto it = std::find_if(found.begin(), found.end(),
                                   [&](const FoundFile& x) { return x.rel == f.rel; });
      if (it == found.end() || sp[size_t(it - found.begin())].second != f.prefix) return true;
      const FoundFile ff{f.rel, f.time};
      if (!anyRead || writtenBefore(lastRead, ff)) lastRead = ff;
      anyRead = true;
    }
    files.erase(std::remove_if(files.begin(), files.end(),
                               [&](const File& f) {
                                 return std::none_of(
                                     found.begin(), found.end(),
                                     [&](const FoundFile& x) { return x.rel == f.rel; });
                               }),
                files.end());  // only files not read from yet can be gone here
    for (size_t i = 0; i < found.size(); ++i) {
      if (File* f = tracked(found[i].rel)) {
        f->stream = sp[i].first;
        f->prefix = sp[i].second;
        continue;
      }
      if (anyRead && writtenBefore(found[i], lastRead)) return true;
      File nf;
      nf.rel = found[i].rel;
      nf.path = (dir / found[i].rel).string();
      nf.time = found[i].time;
      nf.stream = sp[i].first;
      nf.prefix = sp[i].second;
      files.push_back(std::move(nf));
    }
    std::stable_sort(files.begin(), files.end(), [](const File& a, const File& b) {
      return std::tie(a.time, a.rel) < std::tie(b.time, b.rel);
    });
    return false;
  }

  Tag& tag(const std::string& name, const std::string& stream) {
    const auto it = tagIndex.find(name);
    if (it != tagIndex.end()) return tags[it->second];
    tagIndex[name] = tags.size();
    tags.push_back({name, stream, {}, 0, false, 0});
    return tags.back();
  }

  // Drops the tag's points at steps >= step.
  static void cut(Tag& t, int64_t step) {
    const auto it = std::lower_bound(t.points.begin(), t.points.end(), step,
                                     [](const ScalarPoint& p, int64_t s) { return p.step < s; });
    const size_t k = static_cast<size_t>(it - t.points.begin());
    if (k == t.points.size()) return;
    if (k < t.delivered) {
      t.delivered = k;
      t.purged = true;
      t.purgeStep = step;
    }
    t.points.erase(it, t.points.end());
  }

  void apply(const File& f, const TensorBoardEvent& e) {
    if (e.sessionStart)
      for (auto& t : tags)
        if (t.stream == f.stream) cut(t, e.step);
    for (const auto& v : e.values) {
      const std::string name = f.prefix + v.tag;
      Meta& m = meta[name];
      if (!m.known && v.hasMetadata) {
        m.known = true;
        m.plugin = v.plugin;
        m.scalarClass = v.scalarClass;
      }
      const bool scalar =
          v.simple || (v.scalarTensor && m.known && (m.plugin == "scalars" || m.scalarClass));
      if (!scalar) continue;
      Tag& t = tag(name, f.stream);
      cut(t, e.step);
      t.points.push_back({e.step, v.value, e.wallTime});
    }
  }

  /// Reads what was appended to `f`. False when the file is no longer the one read before.
  bool read(File& f, RunLogReader::Update& u) {
    std::error_code ec;
    const uint64_t size = fs::file_size(f.path, ec);
    if (ec) return true;  // gone between the listing and now: the next listing tells
    if (size < f.seenSize) return false;
    f.seenSize = size;
    std::ifstream in(f.path, std::ios::binary);
    if (!in) return true;  // not readable now; try again later
    if (f.head.size() < kHead) {
      std::string head(kHead, '\0');
      in.read(&head[0], static_cast<std::streamsize>(kHead));
      head.resize(static_cast<size_t>(in.gcount()));
      if (head.compare(0, f.head.size(), f.head) != 0) return false;
      f.head = head;
      in.clear();
    } else {
      std::string head(kHead, '\0');
      in.read(&head[0], static_cast<std::streamsize>(kHead));
      if (static_cast<size_t>(in.gcount()) != kHead || head != f.head) return false;
    }
    if (f.stopped || f.offset >= size) return true;
    uint64_t pos = f.offset;
    std::string buf;
    in.seekg(static_cast<std::streamoff>(pos));
    while (pos + buf.size() < size) {
      const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunk, size - pos - buf.size()));
      const size_t had = buf.size();
      buf.resize(had + want);
      in.read(&buf[had], static_cast<std::streamsize>(want));
      buf.resize(had + static_cast<size_t>(in.gcount()));
      if (buf.size() == had) break;  // it shrank under us: the next call sees it
      RecordScan s = scanEventRecords(buf, pos, f.path);
      for (const auto& r : s.records) {
        try {
          apply(f, decodeTensorBoardEvent(r.data));
        } catch (const Error& e) {
          u.damage.push_back({f.path, r.offset, e.what()});
        }
      }
      for (auto& d : s.damage) u.damage.push_back(std::move(d));
      f.offset = s.next;
      if (s.stopped) {
        f.stopped = true;
        return true;
      }
      if (s.next - pos >= buf.size()) {  // all consumed, or a skip past what was read
        buf.clear();
        pos = s.next;
        if (pos >= size) break;
        in.clear();
        in.seekg(static_cast<std::streamoff>(pos));
      } else {
        buf.erase(0, static_cast<size_t>(s.next - pos));
        pos = s.next;
      }
    }
    return true;
  }

  void collect(RunLogReader::Update& u) {
    for (auto& t : tags) {
      if (t.purged) u.purged.emplace_back(t.name, t.purgeStep);
      t.purged = false;
      if (t.delivered < t.points.size())
        u.series.push_back(
            {t.name, "", std::vector<ScalarPoint>(t.points.begin() + t.delivered, t.points.end())});
      t.delivered = t.points.size();
    }
  }
};

TensorBoardRunReader::TensorBoardRunReader(std::string runDir) : m(std::make_unique<State>()) {
  m->dir = fs::path(std::move(runDir));
}

TensorBoardRunReader::~TensorBoardRunReader() = default;

RunLogReader::Update TensorBoardRunReader::readNew() {
  Update u;
  try {
    const std::vector<FoundFile> found = findEventFiles(m->dir);
    if (!tensorboardEventsAvailable()) {
      m->update(found);
      for (auto& f : m->files)
        if (!f.told) {
          f.told = true;
          u.damage.push_back({f.path, 0, kNoProtobuf});
        }
      return u;
    }
    bool rebuild = m->update(found);
    for (int pass = 0; pass < 2; ++pass) {
      if (rebuild) {
        m->clear();
        m->update(found);
        u = Update{};
        u.reset = m->reported;
      }
      rebuild = false;
      for (auto& f : m->files)
        if (!m->read(f, u)) {
          rebuild = true;
          break;
        }
      if (!rebuild) break;
    }
    m->collect(u);
  } catch (const std::exception& e) {  // bad_alloc, a filesystem error: said, never thrown
    u.damage.push_back(
        {m->dir.string(), 0, std::string("cannot read the event files: ") + e.what()});
  }
  if (u.reset || !u.series.empty() || !u.purged.empty() || !u.damage.empty()) m->reported = true;
  return u;
}

std::vector<std::string> TensorBoardRunReader::files() const {
  std::vector<std::string> out;
  for (const auto& f : m->files) out.push_back(f.rel);
  return out;
}

std::vector<ScalarSeries> TensorBoardRunReader::series() const {
  std::vector<ScalarSeries> out;
  for (const auto& t : m->tags) out.push_back({t.name, "", t.points});
  return out;
}

// ---- the format ----

namespace {

class TensorBoardFormat : public RunLogFormat {
 public:
  std::string name() const override { return "tensorboard"; }
  std::string trainer(const std::string& runDir) const override {
    std::error_code ec;
    const fs::path d(runDir);
    if (fs::exists(d / "lightning_logs", ec) || fs::exists(d / "hparams.yaml", ec))
      return "strhub (Lightning)";
    if (fs::exists(d / "config.json", ec) && fs::exists(d / "metrics.jsonl", ec)) return "Foveal";
    return "TensorBoard";
  }
  int sniff(const std::string& runDir) const override {
    return findEventFiles(fs::path(runDir), 1).empty() ? 0 : 50;
  }
  std::unique_ptr<RunLogReader> open(const std::string& runDir) const override {
    return std::make_unique<TensorBoardRunReader>(runDir);
  }
};

}  // namespace

const RunLogFormat& tensorboardFormat() {
  static const TensorBoardFormat format;
  return format;
}

// ---- the writer ----

TensorBoardWriter::TensorBoardWriter(const std::string& dir, double wallTime) {
  if (!tensorboardEventsAvailable())
    throw Error(dir + ": cannot write a TensorBoard event file: " + kNoProtobuf);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(dir + ": cannot create the folder for TensorBoard event files (" + ec.message() +
                ")");
  const double t = std::isfinite(wallTime) ? wallTime : now();
  // As TensorBoard's EventFileWriter names them (tensorboard/summary/writer/event_file_writer.py):
  // the time, the host, the process and a counter of the files this process opened.
  static std::atomic<int> counter{0};
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "localhost");
  for (char* c = host; *c; ++c)
    if (*c == '/') *c = '_';
  // Readers order a folder's files by the time in their names (and then by name, where "12345"
  // sorts before "9999"): a session started within the second the last one ended (a quick
  // resume) is named a second after the latest file, so it is read after it.
  int64_t stamp = static_cast<int64_t>(std::floor(t));
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.compare(0, std::strlen(kEventFilePrefix), kEventFilePrefix) == 0)
      stamp = std::max(stamp, nameTime(n) + 1);
  }
  char name[400];
  std::snprintf(name, sizeof name, "%s%010lld.%s.%lld.%d", kEventFilePrefix,
                static_cast<long long>(stamp), host, static_cast<long long>(getpid()),
                counter.fetch_add(1));
  m_path = (fs::path(dir) / name).string();
  m_file = std::fopen(m_path.c_str(), "wb");
  if (!m_file)
    throw Error(m_path + ": cannot create the TensorBoard event file (" + std::strerror(errno) +
                ")");
#ifdef FOVEAL_HAVE_PROTOBUF
  pb::Event e;
  e.set_wall_time(t);
  e.set_file_version("brain.Event:2");
  write(e.SerializeAsString());
#endif
}

TensorBoardWriter::~TensorBoardWriter() {
  if (m_file) std::fclose(m_file);
}

void TensorBoardWriter::addScalar(const std::string& tag, double value, int64_t step,
                                  double wallTime) {
#ifdef FOVEAL_HAVE_PROTOBUF
  pb::Event e;
  e.set_wall_time(std::isfinite(wallTime) ? wallTime : now());
  e.set_step(step);
  auto* v = e.mutable_summary()->add_value();
  v->set_tag(tag);
  v->set_simple_value(static_cast<float>(value));
  write(e.SerializeAsString());
#else
  (void)tag, (void)value, (void)step, (void)wallTime;
#endif
}

void TensorBoardWriter::addSessionStart(int64_t step, double wallTime) {
#ifdef FOVEAL_HAVE_PROTOBUF
  pb::Event e;
  e.set_wall_time(std::isfinite(wallTime) ? wallTime : now());
  e.set_step(step);
  e.mutable_session_log()->set_status(pb::SessionLog::START);
  write(e.SerializeAsString());
#else
  (void)step, (void)wallTime;
#endif
}

void TensorBoardWriter::write(const std::string& eventBytes) {
  const std::string record = frameEventRecord(eventBytes);
  errno = 0;
  if (std::fwrite(record.data(), 1, record.size(), m_file) != record.size() ||
      std::fflush(m_file) != 0)
    throw Error(m_path + ": cannot write to the TensorBoard event file (" +
                (errno ? std::strerror(errno) : "write failed") + ")");
}

}  // namespace foveal::core
