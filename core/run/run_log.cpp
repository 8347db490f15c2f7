#include "run/run_log.h"
#include "run/run_folder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "base/error.h"
#include "base/safe_read.h"

namespace foveal::core {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr size_t kTailBytes = 64;
/// Reading stops after this many bytes per call; the rest comes with the next call.
constexpr uint64_t kMaxChunk = 64u << 20;

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<double> asNumber(const json& v) {
  if (v.is_null()) return kNaN;
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (auto nf = nonFinite(s)) return nf;
    if (s.empty()) return std::nullopt;
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (end == s.c_str() + s.size()) return d;
  }
  return std::nullopt;
}

void collect(const json& object, std::map<std::string, double>& values,
             std::map<std::string, std::string>* strings) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (auto d = asNumber(it.value()))
      values[it.key()] = *d;
    else if (strings && it.value().is_string())
      (*strings)[it.key()] = it.value().get<std::string>();
  }
}

double secondsSince(const fs::path& p) {
  std::error_code ec;
  const auto t = fs::last_write_time(p, ec);
  if (ec) return std::numeric_limits<double>::infinity();
  return std::chrono::duration<double>(fs::file_time_type::clock::now() - t).count();
}

std::string formatDuration(double seconds) {
  const auto s = static_cast<long long>(seconds);
  if (s < 120) return std::to_string(s) + " s";
  if (s < 7200) return std::to_string(s / 60) + " min";
  return std::to_string(s / 3600) + " h " + std::to_string((s % 3600) / 60) + " min";
}

}  // namespace

std::optional<double> nonFinite(const std::string& s) {
  const std::string l = lower(s);
  if (l == "nan" || l == "-nan" || l == "+nan") return kNaN;
  if (l == "inf" || l == "+inf" || l == "infinity" || l == "+infinity") return kInf;
  if (l == "-inf" || l == "-infinity") return -kInf;
  return std::nullopt;
}

std::string quoteBareNonFinite(const std::string& line) {
  std::string out;
  out.reserve(line.size() + 16);
  bool inString = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (inString) {
      out += c;
      if (c == '\\' && i + 1 < line.size())
        out += line[++i];
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "-NaN", "NaN", "-inf", "inf", "nan"}) {
      const size_t n = std::char_traits<char>::length(token);
      if (line.compare(i, n, token) == 0 &&
          (i + n == line.size() || !std::isalnum(static_cast<unsigned char>(line[i + n])))) {
        out += '"';
        out += token;
        out += '"';
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

double MetricRecord::value(const std::string& key) const {
  const auto it = values.find(key);
  return it == values.end() ? kNaN : it->second;
}

std::string MetricRecord::string(const std::string& key) const {
  const auto it = strings.find(key);
  return it == strings.end() ? std::string() : it->second;
}

int64_t MetricRecord::iteration() const {
  const double v = value("iteration");
  return std::isfinite(v) ? static_cast<int64_t>(v) : -1;
}

MetricRecord parseMetricLine(const std::string& line, int64_t lineNumber) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::exception& first) {
    try {
      j = json::parse(quoteBareNonFinite(line));
    } catch (const json::exception&) {
      std::string what = first.what();
      // nlohmann's messages start with "[json.exception.parse_error.101] parse error at ..."
      const auto pos = what.find("] ");
      if (pos != std::string::npos) what = what.substr(pos + 2);
      throw Error("line " + std::to_string(lineNumber) + ": not JSON (" + what + ")");
    }
  }
  if (!j.is_object()) throw Error("line " + std::to_string(lineNumber) + ": not a JSON object");
  const auto kind = j.find("kind");
  if (kind == j.end() || !kind->is_string() || kind->get<std::string>().empty())
    throw Error("line " + std::to_string(lineNumber) + ": no \"kind\"");
  MetricRecord r;
  r.line = lineNumber;
  r.kind = kind->get<std::string>();
  collect(j, r.values, &r.strings);
  r.strings.erase("kind");
  if (const auto sets = j.find("datasets"); sets != j.end() && sets->is_array())
    for (const auto& s : *sets) {
      if (!s.is_object()) continue;
      MetricRecord::DatasetValues d;
      d.name = s.value("name", std::string());
      collect(s, d.values, nullptr);
      r.datasets.push_back(std::move(d));
    }
  return r;
}

MetricsReader::MetricsReader(std::string path) : m_path(std::move(path)) {}

MetricsReader::Chunk MetricsReader::readNew() {
  Chunk chunk;
  std::error_code ec;
  const bool exists = fs::is_regular_file(m_path, ec);
  if (!exists) {
    chunk.missing = true;
    m_partial = false;
    return chunk;
  }
  const uint64_t size = fs::file_size(m_path, ec);
  if (ec) {
    chunk.error = m_path + ": " + ec.message();
    return chunk;
  }
  std::ifstream in(m_path, std::ios::binary);
  if (!in) {
    chunk.error = m_path + ": cannot open";
    return chunk;
  }
  auto restart = [&] {
    chunk.reset = true;
    m_offset = 0;
    m_lines = 0;
    m_tail.clear();
  };
  if (size < m_offset) {
    restart();
  } else if (m_offset > 0 && !m_tail.empty()) {
    // Same file as last time? Its bytes before the offset must be the ones consumed.
    std::string check(m_tail.size(), '\0');
    in.seekg(static_cast<std::streamoff>(m_offset - m_tail.size()));
    in.read(check.data(), static_cast<std::streamsize>(check.size()));
    if (!in || check != m_tail) restart();
    in.clear();
  }
  const uint64_t want = std::min<uint64_t>(size - m_offset, kMaxChunk);
  std::string buffer(want, '\0');
  in.seekg(static_cast<std::streamoff>(m_offset));
  in.read(buffer.data(), static_cast<std::streamsize>(want));
  buffer.resize(static_cast<size_t>(in.gcount()));

  size_t start = 0;
  for (size_t nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n', start)) {
    std::string line = buffer.substr(start, nl - start);
    start = nl + 1;
    ++m_lines;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    try {
      chunk.records.push_back(parseMetricLine(line, m_lines));
    } catch (const Error& e) {
      chunk.corrupt.push_back({m_lines, e.what()});
    }
  }
  if (start > 0) {
    m_offset += start;
    m_tail += buffer.substr(start > kTailBytes ? start - kTailBytes : 0,
                            std::min<size_t>(start, kTailBytes));
    if (m_tail.size() > kTailBytes) m_tail.erase(0, m_tail.size() - kTailBytes);
  }
  m_partial = start < buffer.size();
  return chunk;
}

const char* runStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::Missing:
      return "missing";
    case RunStatus::Corrupt:
      return "corrupt";
    case RunStatus::Starting:
      return "starting";
    case RunStatus::Running:
      return "running";
    case RunStatus::Finished:
      return "finished";
    case RunStatus::Stopped:
      return "stopped";
    case RunStatus::Failed:
      return "failed";
    case RunStatus::Stale:
      return "stale";
  }
  return "?";
}

RunConfigSummary readRunConfig(const std::string& runDir) {
  RunConfigSummary c;
  const fs::path p = fs::path(runDir) / run_folder::kConfig;
  std::error_code ec;
  if (!fs::exists(p, ec)) {
    c.error = p.string() + ": missing";
    return c;
  }
  std::string text;
  try {
    text = readRegularFile(p.string(), "run configuration", kMaxSmallFileBytes);
  } catch (const Error& e) {
    c.error = e.what();
    return c;
  }
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw Error("not a JSON object");
    c.preset = j.value("preset", std::string());
    if (const auto m = j.find("model"); m != j.end() && m->is_object()) {
      c.attention = m->value("attention", std::string());
      c.width = m->value("width", 0.0);
    }
    c.iterations = j.at("iterations").get<int64_t>();
    c.batchSize = j.value("batch_size", int64_t(0));
    c.maxNonFinite = j.value("max_non_finite", int64_t(20));
    c.device = j.value("device", std::string());
    c.trainData = j.value("train_data", std::vector<std::string>());
    c.evalData = j.value("eval_data", std::vector<std::string>());
    c.ok = true;
  } catch (const std::exception& e) {
    c = RunConfigSummary();
    std::string what = e.what();
    const auto pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    c.error = p.string() + ": " + what;
  }
  return c;
}

RunStatusInfo inferRunStatus(const RunFacts& f, double staleAfterSeconds) {
  using S = RunStatus;
  const std::string corruptNote = f.corruptLines
                                      ? " (" + std::to_string(f.corruptLines) + " corrupt line" +
                                            (f.corruptLines > 1 ? "s" : "") + " skipped)"
                                      : "";
  if (!f.folderExists) return {S::Missing, "the run folder does not exist (moved or deleted?)"};
  if (f.process.state == ProcessFacts::Running)
    return {f.records ? S::Running : S::Starting,
            (f.records ? "training" : "starting") + corruptNote};
  if (f.lastKind == "checkpoint" && f.lastReason == "end")
    return {S::Finished, "finished" + corruptNote};
  if (f.lastKind == "stop") return {S::Stopped, "stopped with a checkpoint; resume continues it"};
  if (f.process.state == ProcessFacts::Exited) {
    if (f.process.exitCode == 130 && !f.process.crashed) return {S::Stopped, "stopped"};
    std::string why = f.process.crashed
                          ? "the trainer crashed"
                          : "the trainer exited with code " + std::to_string(f.process.exitCode);
    if (!f.process.message.empty()) why += ": " + f.process.message;
    return {S::Failed, why};
  }
  if (f.lastKind == "skip" && f.config.ok && f.consecutiveSkips >= f.config.maxNonFinite)
    return {S::Failed, std::to_string(f.consecutiveSkips) +
                           " non-finite steps in a row stopped the run (latest.fvm holds the last "
                           "good weights)"};
  if (f.records == 0 && f.corruptLines > 0)
    return {S::Corrupt, "metrics.jsonl holds no readable record" + corruptNote};
  if (!f.config.ok && f.records == 0) {
    if (!f.metricsExists && f.secondsSinceUpdate < staleAfterSeconds &&
        f.config.error.find(": missing") != std::string::npos)
      return {S::Starting, "waiting for config.json"};
    return {S::Corrupt, "not a run folder: " + f.config.error};
  }
  if (f.secondsSinceUpdate > staleAfterSeconds)
    return {S::Stale, "no update for " + formatDuration(f.secondsSinceUpdate) +
                          " and no final checkpoint" + corruptNote};
  if (f.records == 0) return {S::Starting, "no metrics yet"};
  return {S::Running, "training" + corruptNote};
}

RunLog::RunLog(std::string runDir)
    : m_dir(std::move(runDir)), m_reader((fs::path(m_dir) / run_folder::kMetrics).string()) {}

bool RunLog::refresh() {
  std::error_code ec;
  const bool exists = fs::is_directory(m_dir, ec);
  bool changed = exists != m_exists;
  m_exists = exists;
  if (!exists) return changed;
  // config.json is rewritten when a run resumes (possibly with more iterations).
  const RunConfigSummary config = readRunConfig(m_dir);
  if (config.ok != m_config.ok || config.iterations != m_config.iterations ||
      config.error != m_config.error) {
    changed = true;
  }
  m_config = config;
  auto chunk = m_reader.readNew();
  if (chunk.error != m_error) changed = true;
  m_error = chunk.error;
  if (chunk.reset) {
    m_records.clear();
    m_corrupt.clear();
    ++m_generation;
    changed = true;
  }
  if (!chunk.records.empty() || !chunk.corrupt.empty()) changed = true;
  m_records.insert(m_records.end(), std::make_move_iterator(chunk.records.begin()),
                   std::make_move_iterator(chunk.records.end()));
  m_corrupt.insert(m_corrupt.end(), chunk.corrupt.begin(), chunk.corrupt.end());
  return changed;
}

int64_t RunLog::iteration() const {
  int64_t it = 0;
  for (auto r = m_records.rbegin(); r != m_records.rend(); ++r)
    if (r->iteration() >= 0) return r->iteration();
  return it;
}

double RunLog::bestAccuracy() const {
  double best = kNaN;
  for (const auto& r : m_records)
    if (r.kind == "eval") {
      const double a = r.value("accuracy");
      if (std::isfinite(a) && !(a <= best)) best = a;
    }
  return best;
}

double RunLog::etaSeconds() const {
  // The rate over the last few train records of the current session.
  std::vector<const MetricRecord*> recent;
  for (auto r = m_records.rbegin(); r != m_records.rend() && recent.size() < 20; ++r) {
    if (r->kind == "resume") break;
    if (r->kind == "train" && std::isfinite(r->value("elapsed_s")) && r->iteration() >= 0)
      recent.push_back(&*r);
  }
  if (recent.size() < 2 || m_config.iterations <= 0) return kNaN;
  const auto* last = recent.front();
  const auto* first = recent.back();
  const double dt = last->value("elapsed_s") - first->value("elapsed_s");
  const double di = static_cast<double>(last->iteration() - first->iteration());
  if (dt <= 0 || di <= 0) return kNaN;
  const double left = static_cast<double>(m_config.iterations - iteration());
  return std::max(0.0, left * dt / di);
}

RunFacts RunLog::facts(const ProcessFacts& process) const {
  RunFacts f;
  f.folderExists = m_exists;
  f.config = m_config;
  std::error_code ec;
  f.metricsExists = fs::is_regular_file(m_reader.path(), ec);
  f.records = static_cast<int64_t>(m_records.size());
  f.corruptLines = static_cast<int64_t>(m_corrupt.size());
  if (!m_records.empty()) {
    const auto& last = m_records.back();
    f.lastKind = last.kind;
    f.lastReason = last.string("reason");
    if (last.kind == "skip" && std::isfinite(last.value("consecutive")))
      f.consecutiveSkips = static_cast<int64_t>(last.value("consecutive"));
  }
  const fs::path dir(m_dir);
  f.secondsSinceUpdate = std::min({secondsSince(dir), secondsSince(dir / run_folder::kConfig),
                                   secondsSince(dir / run_folder::kMetrics)});
  f.process = process;
  return f;
}

RunStatusInfo RunLog::status(const ProcessFacts& process, double staleAfterSeconds) const {
  return inferRunStatus(facts(process), staleAfterSeconds);
}

}  // namespace foveal::core
