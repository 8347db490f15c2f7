#include "run/trainer_log_parts.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace foveal::core {

namespace fs = std::filesystem;

namespace {

constexpr size_t kEdgeBytes = 64;
/// Reading stops after this many bytes per call; the rest comes with the next call.
constexpr uint64_t kMaxChunk = 64u << 20;
/// Above this, a wholePrefix file is recognised by its edges only (re-hashing costs a read).
constexpr uint64_t kMaxHashedPrefix = 32u << 20;

uint64_t fnv1a(const char* data, size_t n, uint64_t h = 1469598103934665603ull) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

TextTail::TextTail(std::string path, bool wholePrefix)
    : m_path(std::move(path)), m_wholePrefix(wholePrefix), m_hash(fnv1a(nullptr, 0)) {}

namespace {

std::string readAt(std::istream& in, uint64_t at, size_t n) {
  std::string s(n, '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(at));
  in.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return s;
}

// The non-blank lines of `buffer` (read at `offset`) that end in a newline, into `lines`;
// returns how many bytes they take (up to the last newline).
size_t splitLines(const std::string& buffer, uint64_t offset, std::vector<TextTail::Line>& lines) {
  size_t start = 0;
  for (size_t nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n', start)) {
    std::string line = buffer.substr(start, nl - start);
    const uint64_t at = offset + start;
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    lines.push_back({std::move(line), at});
  }
  return start;
}

}  // namespace

void TextTail::restart(Chunk& chunk) {
  chunk.reset = true;
  m_offset = 0;
  m_head.clear();
  m_tail.clear();
  m_hash = fnv1a(nullptr, 0);
}

void TextTail::consume(const std::string& consumed) {
  if (m_head.size() < kEdgeBytes)
    m_head += consumed.substr(0, std::min(kEdgeBytes - m_head.size(), consumed.size()));
  m_tail += consumed.substr(consumed.size() > kEdgeBytes ? consumed.size() - kEdgeBytes : 0);
  if (m_tail.size() > kEdgeBytes) m_tail.erase(0, m_tail.size() - kEdgeBytes);
  m_hash = fnv1a(consumed.data(), consumed.size(), m_hash);
  m_offset += consumed.size();
}

TextTail::Chunk TextTail::readNew() {
  Chunk chunk;
  try {
    std::error_code ec;
    if (!fs::is_regular_file(m_path, ec)) {
      chunk.missing = true;
      if (m_offset > 0) restart(chunk);  // gone: whatever comes next is a new file
      m_partial = false;
      return chunk;
    }
    const uint64_t size = fs::file_size(m_path, ec);
    if (ec) {
      chunk.error = "cannot read its size (" + ec.message() + ")";
      chunk.offset = m_offset;
      return chunk;
    }
    std::ifstream in(m_path, std::ios::binary);
    if (!in) {
      chunk.error = "cannot open it";
      chunk.offset = m_offset;
      return chunk;
    }
    if (size < m_offset) {
      restart(chunk);
    } else if (m_offset > 0) {
      // The same file as last time? Its consumed bytes must be the ones read before.
      bool same = readAt(in, 0, m_head.size()) == m_head &&
                  readAt(in, m_offset - m_tail.size(), m_tail.size()) == m_tail;
      if (same && m_wholePrefix && m_offset <= kMaxHashedPrefix)
        same = [&] {
          const std::string all = readAt(in, 0, static_cast<size_t>(m_offset));
          return all.size() == m_offset && fnv1a(all.data(), all.size()) == m_hash;
        }();
      if (!same) restart(chunk);
    }
    const uint64_t want = std::min<uint64_t>(size - m_offset, kMaxChunk);
    const std::string buffer = readAt(in, m_offset, static_cast<size_t>(want));
    size_t start = splitLines(buffer, m_offset, chunk.lines);
    if (start == 0 && buffer.size() == kMaxChunk) {
      // No newline in 64 MiB: not a log line; skip it rather than wait for ever.
      chunk.error = "no line break in " + std::to_string(kMaxChunk >> 20) + " MiB: skipped";
      chunk.offset = m_offset;
      start = buffer.size();
    }
    if (start > 0) consume(buffer.substr(0, start));
    m_partial = start < buffer.size();
  } catch (const std::exception& e) {
    chunk.error = e.what();
    chunk.offset = m_offset;
  }
  return chunk;
}

void SeriesBuilder::add(const std::string& format, const std::string& tag, int64_t step,
                        double value, double wallTime) {
  auto idx = m_index.find(tag);
  if (idx == m_index.end()) {
    idx = m_index.emplace(tag, m_pending.size()).first;
    m_pending.push_back({tag, catalogueName(format, tag), {}});
  }
  auto& points = m_pending[idx->second].points;
  if (const auto last = m_last.find(tag); last != m_last.end() && step <= last->second) {
    points.erase(std::remove_if(points.begin(), points.end(),
                                [&](const ScalarPoint& p) { return p.step >= step; }),
                 points.end());
    auto [it, fresh] = m_purged.emplace(tag, step);
    if (!fresh) it->second = std::min(it->second, step);
  }
  points.push_back({step, value, wallTime});
  m_last[tag] = step;
}

void SeriesBuilder::take(RunLogReader::Update& u) {
  for (auto& s : m_pending)
    if (!s.points.empty()) u.series.push_back(std::move(s));
  for (const auto& p : m_purged) u.purged.push_back(p);
  m_pending.clear();
  m_index.clear();
  m_purged.clear();
}

void SeriesBuilder::reset() {
  m_last.clear();
  m_pending.clear();
  m_index.clear();
  m_purged.clear();
}

void applyUpdate(std::vector<ScalarSeries>& series, const RunLogReader::Update& u) {
  if (u.reset) series.clear();
  auto find = [&](const std::string& tag) -> ScalarSeries* {
    for (auto& s : series)
      if (s.tag == tag) return &s;
    return nullptr;
  };
  for (const auto& [tag, step] : u.purged)
    if (ScalarSeries* s = find(tag))
      s->points.erase(std::remove_if(s->points.begin(), s->points.end(),
                                     [&](const ScalarPoint& p) { return p.step >= step; }),
                      s->points.end());
  for (const auto& add : u.series) {
    ScalarSeries* s = find(add.tag);
    if (!s) {
      series.push_back({add.tag, add.catalogue, {}});
      s = &series.back();
    }
    if (s->catalogue.empty()) s->catalogue = add.catalogue;
    s->points.insert(s->points.end(), add.points.begin(), add.points.end());
  }
}

}  // namespace foveal::core
