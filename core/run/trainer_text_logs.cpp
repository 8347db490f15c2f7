#include "run/trainer_text_logs.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "run/run_log.h"
#include "run/trainer_log_parts.h"

namespace foveal::core {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;  // keys in the order the trainer wrote them

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool startsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

/// A whole number (optionally signed), or nothing.
std::optional<int64_t> parseInt(const std::string& text) {
  const std::string s = trim(text);
  if (s.empty() || s.size() > 19) return std::nullopt;
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return s[0] == '-' ? -v : v;
}

/// A number as Python prints one ("0.12345", "1e-05", "nan", "inf", "-inf"), or nothing. A
/// trailing unit after a space ("0.01234 s", "117.8 samples/s") is allowed when `unit` is set.
std::optional<double> parseNumber(const std::string& text, bool unit = false) {
  std::string s = trim(text);
  if (unit) {
    const size_t sp = s.find(' ');
    if (sp != std::string::npos) s = s.substr(0, sp);
  }
  if (s.empty()) return std::nullopt;
  const std::string l = [&] {
    std::string t = s;
    for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  }();
  if (l == "nan" || l == "-nan") return kNaN;
  if (l == "inf" || l == "infinity") return std::numeric_limits<double>::infinity();
  if (l == "-inf" || l == "-infinity") return -std::numeric_limits<double>::infinity();
  // strtod also takes hex and "nan(...)": refuse anything but a decimal number.
  for (char c : s)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
          c == 'e' || c == 'E'))
      return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE) return std::nullopt;
  return d;
}

/// "k: v, k: v" pairs (keys may be quoted, as str(dict) prints them), in order.
std::vector<std::pair<std::string, std::string>> splitPairs(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(", ", start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t colon = part.find(':');
    if (colon != std::string::npos) {
      std::string key = trim(part.substr(0, colon));
      if (key.size() >= 2 && (key.front() == '\'' || key.front() == '"') &&
          key.back() == key.front())
        key = key.substr(1, key.size() - 2);
      out.emplace_back(key, trim(part.substr(colon + 1)));
    }
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  return out;
}

bool isFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string readHead(const fs::path& p, size_t n) {
  std::ifstream in(p, std::ios::binary);
  std::string s(n, '\0');
  in.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return s;
}

std::string damageText(const std::string& file, uint64_t offset, const std::string& what) {
  return file + ": byte " + std::to_string(offset) + ": " + what;
}

// ----------------------------------------------------------------------------------------------
// DTRB's log_train.txt

class DtrbReader : public RunLogReader {
 public:
  explicit DtrbReader(const std::string& runDir)
      : m_tail((fs::path(runDir) / "log_train.txt").string()) {}

  Update readNew() override {
    Update u;
    try {
      auto chunk = m_tail.readNew();
      if (chunk.reset) {
        u.reset = true;
        m_series.reset();
        m_step = -1;
        m_best.clear();
      }
      if (!chunk.error.empty()) u.damage.push_back({m_tail.path(), chunk.offset, chunk.error});
      for (const auto& line : chunk.lines) parse(line, u);
    } catch (const std::exception& e) {
      u.damage.push_back({m_tail.path(), m_tail.offset(), e.what()});
    }
    m_series.take(u);
    return u;
  }

 private:
  void parse(const TextTail::Line& line, Update& u) {
    const std::string& s = line.text;
    auto damage = [&](const std::string& what) {
      u.damage.push_back({m_tail.path(), line.offset, what});
    };
    if (s.find('\0') != std::string::npos) return damage("NUL bytes in the line");
    // "[{iteration+1}/{num_iter}] Train loss: {:0.5f}, Valid loss: {:0.5f}, Elapsed_time: {:0.5f}"
    if (startsWith(s, "[") && s.find("] Train loss:") != std::string::npos) {
      const size_t slash = s.find('/'), close = s.find(']');
      const auto step = slash < close ? parseInt(s.substr(1, slash - 1)) : std::nullopt;
      if (!step) return damage("a loss line without its [iteration/total]");
      std::vector<std::pair<std::string, double>> values;
      for (const auto& [k, v] : splitPairs(s.substr(close + 1))) {
        const auto d = parseNumber(v);
        if (!d) return damage("'" + k + "' is not a number ('" + v + "')");
        std::string tag = k;
        std::replace(tag.begin(), tag.end(), ' ', '_');  // "Train loss" -> "Train_loss"
        values.emplace_back(tag, *d);
      }
      if (values.empty()) return damage("a loss line without values");
      m_step = *step;
      for (const auto& [tag, v] : values) m_series.add("dtrb", tag, m_step, v, kNaN);
      return;
    }
    // "Current_accuracy : 12.000, Current_norm_ED  : 0.45" and the Best_ line after it.
    const bool current = startsWith(s, "Current_accuracy"), best = startsWith(s, "Best_accuracy");
    if (!current && !best) return;  // the sample predictions, dashed lines, headers
    if (m_step < 0) return damage("'" + s.substr(0, s.find(' ')) + "' before any [N/M] line");
    std::map<std::string, double> values;
    for (const auto& [k, v] : splitPairs(s)) {
      const auto d = parseNumber(v);
      if (!d) return damage("'" + k + "' is not a number ('" + v + "')");
      values[k] = *d;
    }
    const char* names[2][2] = {{"Current_accuracy", "Current_norm_ED"},
                               {"Best_accuracy", "Best_norm_ED"}};
    for (const char* k : names[best ? 1 : 0])
      if (!values.count(k)) return damage(std::string("no ") + k + " in the line");
    for (const auto& [k, v] : values) m_series.add("dtrb", k, m_step, v, kNaN);
    if (current) {
      m_current = values;
      m_currentStep = m_step;
      return;
    }
    // train.py saves best_accuracy.pth when the validation's accuracy beats the best so far
    // (strictly), then writes these lines: the printed best rising says a save happened. The
    // first validation always saves (the best starts at -1). For the edit distance, printed with
    // two decimals (four in EasyOCR's), a rise can hide in the rounding: there the current value
    // printed equal to the best means it is the best, so saved (a continuous value that ties the
    // best without beating it is rare; for the accuracy, a count over the set, ties are common).
    const bool first = m_best.empty();
    const double acc = values["Best_accuracy"], ned = values["Best_norm_ED"];
    if (first || acc > m_best["Best_accuracy"])
      u.checkpointSteps.emplace_back("best_accuracy", m_step);
    const bool sameStep = m_currentStep == m_step;
    if (first || ned > m_best["Best_norm_ED"] ||
        (sameStep && m_current.count("Current_norm_ED") && m_current["Current_norm_ED"] == ned))
      u.checkpointSteps.emplace_back("best_norm_ED", m_step);
    m_best = values;
  }

  TextTail m_tail;
  SeriesBuilder m_series;
  int64_t m_step = -1;
  int64_t m_currentStep = -1;
  std::map<std::string, double> m_current, m_best;
};

class DtrbFormat : public RunLogFormat {
 public:
  std::string name() const override { return "dtrb"; }
  std::string trainer(const std::string& runDir) const override {
    // The EasyOCR trainer's opt.txt comes from its YAML config: experiment_name, lang_char
    // (DTRB's has exp_name).
    const fs::path opt = fs::path(runDir) / "opt.txt";
    const std::string text = isFile(opt) ? readHead(opt, 1 << 16) : "";
    if (text.find("\nexperiment_name: ") != std::string::npos ||
        text.find("\nlang_char: ") != std::string::npos)
      return "EasyOCR trainer (deep-text-recognition-benchmark's train.py)";
    return "deep-text-recognition-benchmark";
  }
  int sniff(const std::string& runDir) const override {
    const fs::path log = fs::path(runDir) / "log_train.txt";
    if (isFile(log))
      return readHead(log, 4096).find("] Train loss:") != std::string::npos ? 90 : 40;
    const fs::path opt = fs::path(runDir) / "opt.txt";
    if (isFile(opt) && startsWith(readHead(opt, 64), "------------ Options")) return 30;
    return 0;
  }
  std::unique_ptr<RunLogReader> open(const std::string& runDir) const override {
    return std::make_unique<DtrbReader>(runDir);
  }
};

// ----------------------------------------------------------------------------------------------
// MMEngine's vis_data/scalars.json

std::optional<double> jsonNumber(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    return nonFinite(s);  // Python's NaN, Infinity, -Infinity, quoted by quoteBareNonFinite
  }
  return std::nullopt;
}

/// Every scalars.json of an MMEngine work dir (or of one of its timestamp folders, or of a
/// vis_data folder itself), oldest timestamp first.
std::vector<std::string> findScalarFiles(const std::string& runDir) {
  std::vector<std::string> files;
  const fs::path dir(runDir);
  for (const fs::path& p : {dir / "scalars.json", dir / "vis_data" / "scalars.json"})
    if (isFile(p)) files.push_back(p.string());
  std::error_code ec;
  std::vector<std::string> nested;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path() / "vis_data" / "scalars.json";
    if (it->is_directory(ec) && isFile(p)) nested.push_back(p.string());
  }
  std::sort(nested.begin(), nested.end());  // timestamp folders: %Y%m%d_%H%M%S sorts by time
  files.insert(files.end(), nested.begin(), nested.end());
  return files;
}

class MmengineReader : public RunLogReader {
 public:
  explicit MmengineReader(std::string runDir) : m_dir(std::move(runDir)) {}

  Update readNew() override {
    Update u;
    try {
      const auto files = findScalarFiles(m_dir);
      // A file that sorts before one already read (or one gone): start over, in order.
      bool restart = files.size() < m_tails.size();
      for (size_t i = 0; i < m_tails.size() && !restart; ++i)
        restart = m_tails[i].path() != files[i];
      if (restart) startOver(u);
      // A file replaced or shrunk: everything again, in this call (so `series` holds it all).
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = m_tails.size(); i < files.size(); ++i) m_tails.emplace_back(files[i]);
        bool again = false;
        for (auto& tail : m_tails) {
          auto chunk = tail.readNew();
          if (chunk.reset) {
            again = true;
            break;
          }
          if (!chunk.error.empty()) u.damage.push_back({tail.path(), chunk.offset, chunk.error});
          for (const auto& line : chunk.lines) parse(tail.path(), line, u);
        }
        if (!again) break;
        startOver(u);
      }
    } catch (const std::exception& e) {
      u.damage.push_back({m_dir, 0, e.what()});
    }
    m_series.take(u);
    return u;
  }

 private:
  void startOver(Update& u) {
    u.reset = true;
    u.series.clear();
    u.purged.clear();
    u.damage.clear();  // reported again as the files are read again
    u.checkpointSteps.clear();
    m_series.reset();
    m_tails.clear();
    m_epochEnd.clear();
    m_lastEpoch = -1;
  }

  void parse(const std::string& file, const TextTail::Line& line, Update& u) {
    auto damage = [&](const std::string& what) { u.damage.push_back({file, line.offset, what}); };
    json j;
    try {
      j = json::parse(line.text);
    } catch (const json::exception&) {
      try {
        j = json::parse(quoteBareNonFinite(line.text));
      } catch (const json::exception& e) {
        std::string what = e.what();
        const auto pos = what.find("] ");
        if (pos != std::string::npos) what = what.substr(pos + 2);
        return damage("not JSON (" + what + ")");
      }
    }
    if (!j.is_object()) return damage("not a JSON object");
    const auto stepIt = j.find("step");
    const auto step = stepIt == j.end() ? std::nullopt : jsonNumber(*stepIt);
    if (!step || !std::isfinite(*step)) return damage("no numeric \"step\"");
    const bool train = j.contains("iter");
    int64_t at = static_cast<int64_t>(*step);
    if (train) {
      if (const auto e = j.find("epoch"); e != j.end() && e->is_number()) {
        m_lastEpoch = e->get<int64_t>();
        m_epochEnd[m_lastEpoch] = std::max(m_epochEnd[m_lastEpoch], at);
      }
    } else if (m_epochEnd.count(at)) {
      // after_val_epoch logs at step=epoch (log_metric_by_epoch, the default): placed at the
      // last training iteration logged in that epoch, beside the training curves.
      at = m_epochEnd[at];
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.key() == "step" || it.key() == "iter") continue;
      const auto v = jsonNumber(it.value());
      if (!v) continue;  // strings and arrays are not scalars
      // Validation lines repeat "time" and "data_time" (the evaluation's): kept apart.
      const std::string tag =
          train || it.key().find('/') != std::string::npos ? it.key() : "val/" + it.key();
      m_series.add("mmengine", tag, at, *v, kNaN);
    }
  }

  std::string m_dir;
  std::vector<TextTail> m_tails;
  SeriesBuilder m_series;
  std::map<int64_t, int64_t> m_epochEnd;  ///< epoch -> its last logged training iteration
  int64_t m_lastEpoch = -1;
};

class MmengineFormat : public RunLogFormat {
 public:
  std::string name() const override { return "mmengine"; }
  std::string trainer(const std::string&) const override { return "MMEngine (MMOCR)"; }
  int sniff(const std::string& runDir) const override {
    return findScalarFiles(runDir).empty() ? 0 : 80;
  }
  std::unique_ptr<RunLogReader> open(const std::string& runDir) const override {
    return std::make_unique<MmengineReader>(runDir);
  }
};

// ----------------------------------------------------------------------------------------------
// PaddleOCR's train.log

/// "[2024/05/12 10:00:17]" as the trainer's local time, read as this machine's; NaN if not one.
double paddleTime(const std::string& stamp) {
  std::tm tm{};
  int y, mo, d, h, mi, s;
  char extra;
  if (std::sscanf(stamp.c_str(), "%4d/%2d/%2d %2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &s, &extra) !=
      6)
    return kNaN;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = s;
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  return t == static_cast<std::time_t>(-1) ? kNaN : static_cast<double>(t);
}

class PaddleReader : public RunLogReader {
 public:
  explicit PaddleReader(const std::string& runDir)
      : m_tail((fs::path(runDir) / "train.log").string()) {}

  Update readNew() override {
    Update u;
    try {
      auto chunk = m_tail.readNew();
      if (chunk.reset) {
        u.reset = true;
        m_series.reset();
        m_step = -1;
      }
      if (!chunk.error.empty()) u.damage.push_back({m_tail.path(), chunk.offset, chunk.error});
      for (const auto& line : chunk.lines) parse(line, u);
    } catch (const std::exception& e) {
      u.damage.push_back({m_tail.path(), m_tail.offset(), e.what()});
    }
    m_series.take(u);
    return u;
  }

 private:
  void parse(const TextTail::Line& line, Update& u) {
    const std::string& s = line.text;
    auto damage = [&](const std::string& what) {
      u.damage.push_back({m_tail.path(), line.offset, what});
    };
    if (s.find('\0') != std::string::npos) return damage("NUL bytes in the line");
    // "[%(asctime)s] %(name)s %(levelname)s: %(message)s": other lines (a multi-line message's
    // continuation, a traceback) carry no scalars.
    if (!startsWith(s, "[") || s.size() < 22 || s[20] != ']') return;
    const double wall = paddleTime(s.substr(1, 19));
    const size_t colon = s.find(": ", 22);
    if (colon == std::string::npos) return;
    const std::string msg = s.substr(colon + 2);
    if (startsWith(msg, "epoch: [")) {
      // "epoch: [E/N], global_step: S, lr: 0.000100, loss: ..., avg_reader_cost: 0.1 s, ...,
      // ips: 9.7 samples/s, eta: 0:51:59" (2.6+); "epoch: [E/N], iter: S, 'lr': ..." (2.0-2.5).
      const size_t close = msg.find(']');
      const auto epoch =
          close == std::string::npos ? std::nullopt : parseInt(msg.substr(8, msg.find('/') - 8));
      std::optional<int64_t> step;
      std::vector<std::pair<std::string, double>> values;
      for (const auto& [k, v] :
           splitPairs(close == std::string::npos ? "" : msg.substr(close + 2))) {
        if (k == "global_step" || k == "iter") {
          step = parseInt(v);
          continue;
        }
        if (const auto d = parseNumber(v, /*unit=*/true)) values.emplace_back("TRAIN/" + k, *d);
      }
      if (!epoch || !step) return damage("a training line without its epoch and global_step");
      m_step = *step;
      m_series.add("paddleocr", "epoch", m_step, static_cast<double>(*epoch), wall);
      for (const auto& [tag, v] : values) m_series.add("paddleocr", tag, m_step, v, wall);
      return;
    }
    const bool cur = startsWith(msg, "cur metric, "), best = startsWith(msg, "best metric, ");
    if (cur || best) {
      // The evaluation runs at the global step of the training line just before it.
      const int64_t at = std::max<int64_t>(m_step, 0);
      bool first = true;
      for (const auto& [k, v] : splitPairs(msg.substr(cur ? 12 : 13))) {
        const auto d = parseNumber(v);
        // best_model_dict starts as {main_indicator: 0}: its first key is the main indicator,
        // the one PaddleOCR's own VisualDL curve shows as EVAL/best_<main>.
        if (best && !first) break;
        first = false;
        if (!d) continue;  // "is_float16: False"
        m_series.add("paddleocr", cur ? "EVAL/" + k : "EVAL/best_" + k, at, *d, wall);
      }
      return;
    }
    // save_model (ppocr/utils/save_load.py): "save best model is to ./output/x/best_accuracy",
    // "save model in ./output/x/latest" (and .../iter_epoch_3).
    for (const char* prefix : {"save best model is to ", "save model in "}) {
      if (!startsWith(msg, prefix)) continue;
      std::string path = trim(msg.substr(std::char_traits<char>::length(prefix)));
      while (!path.empty() && (path.back() == '/' || path.back() == '\\')) path.pop_back();
      u.checkpointSteps.emplace_back(fs::path(path).filename().string(), m_step);
    }
  }

  TextTail m_tail;
  SeriesBuilder m_series;
  int64_t m_step = -1;
};

class PaddleFormat : public RunLogFormat {
 public:
  std::string name() const override { return "paddleocr"; }
  std::string trainer(const std::string&) const override { return "PaddleOCR"; }
  int sniff(const std::string& runDir) const override {
    const fs::path log = fs::path(runDir) / "train.log";
    if (isFile(log)) {
      const std::string head = readHead(log, 8192);
      if (head.find("] ppocr ") != std::string::npos ||
          head.find(": epoch: [") != std::string::npos)
        return 80;
    }
    const fs::path config = fs::path(runDir) / "config.yml";
    if (isFile(config) && startsWith(readHead(config, 16), "Global:")) return 30;
    return 0;
  }
  std::unique_ptr<RunLogReader> open(const std::string& runDir) const override {
    return std::make_unique<PaddleReader>(runDir);
  }
};

// ----------------------------------------------------------------------------------------------
// metrics.csv (Lightning's CSVLogger, strhub, PyLaia)

/// Lightning's versions (version_N, numerically) or PyLaia's metrics-vN.csv, oldest first.
std::vector<std::string> findCsvFiles(const std::string& runDir) {
  std::vector<std::pair<std::pair<int, int64_t>, std::string>> found;
  std::error_code ec;
  auto versionOf = [](const std::string& name, const std::string& prefix) -> int64_t {
    if (!startsWith(name, prefix)) return -1;
    const auto v = parseInt(name.substr(prefix.size()));
    return v && *v >= 0 ? *v : -1;
  };
  auto scanFolder = [&](const fs::path& dir, int depth) {
    if (isFile(dir / "metrics.csv")) found.push_back({{depth, 0}, (dir / "metrics.csv").string()});
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      // PyLaia: metrics.csv, then metrics-v1.csv ... for later trainings in the same folder.
      if (startsWith(name, "metrics-v") && name.size() > 13 &&
          name.compare(name.size() - 4, 4, ".csv") == 0) {
        const int64_t v = versionOf(name.substr(0, name.size() - 4), "metrics-v");
        if (v >= 0) found.push_back({{depth, v + 1}, it->path().string()});
      }
    }
  };
  const fs::path dir(runDir);
  scanFolder(dir, 0);
  for (const fs::path& sub : {dir, dir / "lightning_logs", dir / "csv_logs"}) {
    std::vector<std::pair<int64_t, fs::path>> versions;
    for (fs::directory_iterator it(sub, ec), end; !ec && it != end; it.increment(ec)) {
      const int64_t v = versionOf(it->path().filename().string(), "version_");
      if (v >= 0 && isFile(it->path() / "metrics.csv")) versions.push_back({v, it->path()});
    }
    for (const auto& [v, p] : versions) found.push_back({{1, v}, (p / "metrics.csv").string()});
  }
  if (isFile(dir / "experiment" / "metrics.csv")) scanFolder(dir / "experiment", 2);
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (auto& f : found)
    if (std::find(files.begin(), files.end(), f.second) == files.end()) files.push_back(f.second);
  return files;
}

/// One CSV record (Python's csv module: fields quoted with '"' when needed, '""' inside).
std::optional<std::vector<std::string>> splitCsv(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  if (quoted) return std::nullopt;
  return cells;
}

class CsvReader : public RunLogReader {
 public:
  explicit CsvReader(std::string runDir) : m_dir(std::move(runDir)) {}

  Update readNew() override {
    Update u;
    try {
      const auto files = findCsvFiles(m_dir);
      bool restart = files.size() < m_files.size();
      for (size_t i = 0; i < m_files.size() && !restart; ++i)
        restart = m_files[i].tail.path() != files[i];
      if (restart) startOver(u);
      // Lightning rewrites the file with a new header when a key appears: a file replaced or
      // shrunk is read again from the start with the others, in this call.
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = m_files.size(); i < files.size(); ++i)
          m_files.push_back(File{TextTail(files[i], /*wholePrefix=*/true), {}, -1, -1});
        bool again = false;
        for (auto& f : m_files) {
          auto chunk = f.tail.readNew();
          if (chunk.reset) {
            again = true;
            break;
          }
          if (!chunk.error.empty()) u.damage.push_back({f.tail.path(), chunk.offset, chunk.error});
          for (const auto& line : chunk.lines) parse(f, line, u);
        }
        if (!again) break;
        startOver(u);
      }
    } catch (const std::exception& e) {
      u.damage.push_back({m_dir, 0, e.what()});
    }
    m_series.take(u);
    return u;
  }

 private:
  struct File {
    TextTail tail;
    std::vector<std::string> header;
    int stepColumn = -1, epochColumn = -1;
  };

  void startOver(Update& u) {
    u.reset = true;
    u.series.clear();
    u.purged.clear();
    u.damage.clear();  // reported again as the files are read again
    m_series.reset();
    m_files.clear();
  }

  void parse(File& f, const TextTail::Line& line, Update& u) {
    auto damage = [&](const std::string& what) {
      u.damage.push_back({f.tail.path(), line.offset, what});
    };
    if (line.text.find('\0') != std::string::npos) return damage("NUL bytes in the line");
    const auto cells = splitCsv(line.text);
    if (!cells) return damage("an unterminated quoted field");
    if (f.header.empty()) {
      f.header = *cells;
      for (size_t i = 0; i < f.header.size(); ++i) {
        if (f.header[i] == "step") f.stepColumn = static_cast<int>(i);
        if (f.header[i] == "epoch") f.epochColumn = static_cast<int>(i);
      }
      if (f.stepColumn < 0 && f.epochColumn < 0) {
        f.header.clear();
        return damage("the header has neither a step nor an epoch column");
      }
      return;
    }
    if (cells->size() != f.header.size())
      return damage(std::to_string(cells->size()) + " fields where the header has " +
                    std::to_string(f.header.size()));
    // PyLaia writes one row per epoch and no step: the epoch is the step there.
    const int axis = f.stepColumn >= 0 ? f.stepColumn : f.epochColumn;
    const auto step = parseNumber((*cells)[static_cast<size_t>(axis)]);
    if (!step || !std::isfinite(*step))
      return damage("its " + f.header[static_cast<size_t>(axis)] + " is not a number ('" +
                    (*cells)[static_cast<size_t>(axis)] + "')");
    const auto at = static_cast<int64_t>(*step);
    for (size_t i = 0; i < cells->size(); ++i) {
      if (static_cast<int>(i) == f.stepColumn || trim((*cells)[i]).empty()) continue;
      const auto v = parseNumber((*cells)[i]);
      if (!v) {
        damage("'" + f.header[i] + "' is not a number ('" + (*cells)[i] + "')");
        continue;
      }
      m_series.add("metrics-csv", f.header[i], at, *v, kNaN);
    }
  }

  std::string m_dir;
  std::vector<File> m_files;
  SeriesBuilder m_series;
};

class CsvFormat : public RunLogFormat {
 public:
  std::string name() const override { return "metrics-csv"; }
  std::string trainer(const std::string& runDir) const override {
    const auto files = findCsvFiles(runDir);
    if (files.empty()) return "PyTorch Lightning (CSVLogger)";
    const fs::path dir = fs::path(files.front()).parent_path();
    if (dir.filename() == "experiment" || fs::path(files.front()).filename() != "metrics.csv")
      return "PyLaia";
    const fs::path hparams = dir / "hparams.yaml";
    if (isFile(hparams) && readHead(hparams, 65536).find("charset_train") != std::string::npos)
      return "strhub (PARSeq, Lightning)";
    if (isFile(dir / "model") && isFile(dir.parent_path() / "syms.txt")) return "PyLaia";
    return "PyTorch Lightning (CSVLogger)";
  }
  int sniff(const std::string& runDir) const override {
    const auto files = findCsvFiles(runDir);
    if (files.empty()) return 0;
    const std::string head = readHead(files.front(), 4096);
    const std::string first = head.substr(0, head.find('\n'));
    const auto cells = splitCsv(first);
    if (!cells) return 0;
    const bool known = std::find(cells->begin(), cells->end(), "step") != cells->end() ||
                       std::find(cells->begin(), cells->end(), "epoch") != cells->end();
    return known ? 60 : 0;
  }
  std::unique_ptr<RunLogReader> open(const std::string& runDir) const override {
    return std::make_unique<CsvReader>(runDir);
  }
};

}  // namespace

const RunLogFormat& dtrbFormat() {
  static const DtrbFormat f;
  return f;
}
const RunLogFormat& mmengineFormat() {
  static const MmengineFormat f;
  return f;
}
const RunLogFormat& paddleocrFormat() {
  static const PaddleFormat f;
  return f;
}
const RunLogFormat& metricsCsvFormat() {
  static const CsvFormat f;
  return f;
}

}  // namespace foveal::core
