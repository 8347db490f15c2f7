#include "data/data_check.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "data/size_range.h"
#include "model/geometry.h"
#include "model/stages/stage_registry.h"

namespace foveal::core::data {

namespace {

constexpr size_t kExamplesPerKind = 5;

enum Kind { kUnreadable, kEmpty, kOutside, kTooLong, kColumns, kKinds };

std::string plural(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// A character as the report shows it: quoted, with spaces and control characters named.
std::string shown(const std::string& c) {
  if (c == " ") return "' ' (space)";
  if (c == "\t") return "'\\t' (tab)";
  if (c.size() == 1 && static_cast<unsigned char>(c[0]) < 0x20) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(c[0]));
    return buf;
  }
  return "'" + c + "'";
}

void histogram(std::ostringstream& o, const std::string& title,
               const std::map<size_t, std::string>& rows, const std::map<size_t, size_t>& counts) {
  o << title << ":\n";
  size_t peak = 1;
  for (const auto& [k, n] : counts) peak = std::max(peak, n);
  for (const auto& [k, n] : counts) {
    char line[96];
    std::snprintf(line, sizeof line, "  %-10s %8zu ", rows.at(k).c_str(), n);
    o << line << std::string(std::max<size_t>(n ? 1 : 0, n * 40 / peak), '#') << "\n";
  }
}

std::string binName(int bin) {
  if (bin == 0) return "< 16";
  return std::to_string(bin) + "-" + std::to_string(2 * bin - 1);
}

}  // namespace

LabelLimits labelLimits(const ModelConfig& config, const std::string& name) {
  LabelLimits l;
  l.charset = config.makeCharset();
  l.maxLength = config.maxLength;
  if (config.isCtc()) {
    l.ctcColumns = receptiveField(config.featureLayers(), config.preprocessing.inputW,
                                  config.preprocessing.inputH)
                       .columns;
  }
  l.model = name + " (" + config.stageString() + ")";
  return l;
}

int ctcColumnsNeeded(const std::vector<int>& classes) {
  int n = static_cast<int>(classes.size());
  for (size_t i = 1; i < classes.size(); ++i) n += classes[i] == classes[i - 1] ? 1 : 0;
  return n;
}

int sizeBin(int pixels) {
  if (pixels < 16) return 0;
  int bin = 16;
  while (bin <= pixels / 2) bin *= 2;
  return bin;
}

namespace {

// Up to kExamplesPerKind problems of each kind: (entry index, message).
using Examples = std::vector<std::vector<std::pair<size_t, std::string>>>;

void addExample(Examples& ex, Kind kind, size_t i, std::string message) {
  if (ex[kind].size() < kExamplesPerKind) ex[kind].emplace_back(i, std::move(message));
}

// An image's size into the ranges and histograms (`first`: the first image of `r`).
void countImageSize(DataCheck& r, int width, int height, bool& first) {
  if (first) {
    r.minW = r.maxW = width;
    r.minH = r.maxH = height;
    first = false;
  }
  r.minW = std::min(r.minW, width);
  r.maxW = std::max(r.maxW, width);
  r.minH = std::min(r.minH, height);
  r.maxH = std::max(r.maxH, height);
  ++r.widthHistogram[sizeBin(width)];
  ++r.heightHistogram[sizeBin(height)];
}

// Entry i's label: its length, and whether the model can learn it (or why not).
void checkLabel(const Dataset& ds, const LabelLimits& limits, size_t i, const std::string& label,
                DataCheck& r, Examples& ex) {
  const auto cps = splitUtf8(label);
  ++r.lengthHistogram[cps.size()];
  if (label.empty()) {
    ++r.emptyLabels;
    addExample(ex, kEmpty, i, ds.entryName(i) + ": empty label");
  } else if (!limits.charset.covers(label)) {
    ++r.outsideCharset;
    std::vector<std::string> seen;
    for (const auto& c : cps)
      if (!limits.charset.covers(c)) {
        ++r.outsideCharacters[c];
        if (std::find(seen.begin(), seen.end(), c) == seen.end()) seen.push_back(c);
      }
    std::string outside;
    for (const auto& c : seen) outside += (outside.empty() ? "" : ", ") + shown(c);
    addExample(
        ex, kOutside, i,
        ds.entryName(i) + ": label \"" + label + "\" has " + outside + " outside the charset");
  } else {
    const auto classes = limits.charset.encode(label);
    const int length = static_cast<int>(classes.size());
    if (limits.maxLength > 0 && length > limits.maxLength) {
      ++r.tooLong;
      addExample(ex, kTooLong, i,
                 ds.entryName(i) + ": label \"" + label + "\" has " + std::to_string(length) +
                     " characters");
    } else if (limits.ctcColumns > 0 && ctcColumnsNeeded(classes) > limits.ctcColumns) {
      ++r.tooLongForColumns;
      addExample(ex, kColumns, i,
                 ds.entryName(i) + ": label \"" + label + "\" needs " +
                     std::to_string(ctcColumnsNeeded(classes)) + " columns");
    } else {
      ++r.usable;
    }
  }
}

// One worker's counts and examples added to the totals.
void addCheck(DataCheck& total, Examples& examples, const DataCheck& r, const Examples& ex) {
  mergeImageSizes(total, r);
  total.entries += r.entries;
  total.usable += r.usable;
  total.outsideCharset += r.outsideCharset;
  total.tooLong += r.tooLong;
  total.tooLongForColumns += r.tooLongForColumns;
  total.emptyLabels += r.emptyLabels;
  total.unreadable += r.unreadable;
  for (const auto& [k, v] : r.outsideCharacters) total.outsideCharacters[k] += v;
  for (const auto& [k, v] : r.lengthHistogram) total.lengthHistogram[k] += v;
  for (const auto& [k, v] : r.widthHistogram) total.widthHistogram[k] += v;
  for (const auto& [k, v] : r.heightHistogram) total.heightHistogram[k] += v;
  for (int k = 0; k < kKinds; ++k)
    examples[k].insert(examples[k].end(), ex[k].begin(), ex[k].end());
}

}  // namespace

DataCheck checkDataset(const Dataset& ds, const LabelLimits& limits, size_t limit, int threads,
                       const std::function<bool(size_t, size_t)>& progress) {
  if (ds.endless() && limit == 0) throw Error(ds.describe() + ": an endless stream needs a limit");
  const size_t n = limit ? (ds.endless() ? limit : std::min(limit, ds.size())) : ds.size();
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  DataCheck total;
  Examples examples(kKinds);
  std::mutex mutex;
  std::atomic<size_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  auto work = [&](bool reports) {
    DataCheck r;
    Examples ex(kKinds);
    bool first = true;
    for (size_t i; !stop && (i = next.fetch_add(1)) < n;) {
      ++r.entries;
      Sample s;
      try {
        s = ds.get(i);
      } catch (const Error& e) {
        ++r.unreadable;
        addExample(ex, kUnreadable, i, e.what());
        continue;
      }
      countImageSize(r, s.image.width, s.image.height, first);
      checkLabel(ds, limits, i, s.label, r, ex);
      const size_t d = ++done;
      if (reports && progress && (d % 64 == 0) && !progress(d, n)) stop = true;
    }
    std::lock_guard<std::mutex> lock(mutex);
    addCheck(total, examples, r, ex);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, false);
  work(true);
  for (auto& t : pool) t.join();
  if (progress) progress(total.entries, n);
  for (auto& kind : examples) {
    std::sort(kind.begin(), kind.end());
    if (kind.size() > kExamplesPerKind) kind.resize(kExamplesPerKind);
    total.examples.insert(total.examples.end(), kind.begin(), kind.end());
  }
  return total;
}

std::string DataCheck::summary() const {
  std::string s = std::to_string(usable) + " of " + plural(entries, "entry", "entries") + " usable";
  if (dropped() == 0) return s;
  std::vector<std::string> why;
  if (outsideCharset)
    why.push_back(std::to_string(outsideCharset) + " with characters outside the charset");
  if (tooLong) why.push_back(std::to_string(tooLong) + " longer than the model can read");
  if (tooLongForColumns)
    why.push_back(std::to_string(tooLongForColumns) + " too long for the CTC columns");
  if (emptyLabels) why.push_back(std::to_string(emptyLabels) + " with an empty label");
  if (unreadable) why.push_back(std::to_string(unreadable) + " unreadable");
  s += "; " + std::to_string(dropped()) + " dropped: ";
  for (size_t i = 0; i < why.size(); ++i) s += (i ? ", " : "") + why[i];
  return s;
}

std::string DataCheck::text(const LabelLimits& limits, size_t showExamples) const {
  std::ostringstream o;
  o << "model: " << limits.model << "\n";
  o << "  charset: " << (limits.charset.size() - limits.charset.specials()) << " characters"
    << (limits.charset.caseInsensitive() ? " (case-insensitive)" : "") << "; at most "
    << limits.maxLength << " characters";
  if (limits.ctcColumns > 0) o << "; CTC over " << limits.ctcColumns << " feature columns";
  o << "\n";
  char line[160];
  std::snprintf(line, sizeof line, "entries:  %zu\nusable:   %zu\ndropped:  %zu\n", entries, usable,
                dropped());
  o << line;
  auto row = [&](const char* what, size_t count) {
    std::snprintf(line, sizeof line, "  %-44s %zu\n", what, count);
    o << line;
  };
  row("characters outside the charset:", outsideCharset);
  if (!outsideCharacters.empty()) {
    std::vector<std::pair<size_t, std::string>> byCount;
    for (const auto& [c, k] : outsideCharacters) byCount.emplace_back(k, c);
    std::sort(byCount.begin(), byCount.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    o << "    characters (occurrences):";
    for (const auto& [k, c] : byCount) o << " " << shown(c) << " x" << k;
    o << "\n";
  }
  std::string tooLongText = "longer than " + std::to_string(limits.maxLength) + " characters:";
  row(tooLongText.c_str(), tooLong);
  if (limits.ctcColumns > 0) {
    const std::string cols = "too long for " + std::to_string(limits.ctcColumns) + " CTC columns:";
    row(cols.c_str(), tooLongForColumns);
  }
  row("empty labels:", emptyLabels);
  row("unreadable images:", unreadable);
  if (!examples.empty() && showExamples > 0) {
    o << "examples:\n";
    for (size_t i = 0; i < examples.size() && i < showExamples; ++i)
      o << "  " << examples[i].second << "\n";
  }
  std::map<size_t, std::string> lengthNames;
  for (const auto& [len, count] : lengthHistogram) lengthNames[len] = std::to_string(len);
  if (!lengthHistogram.empty()) histogram(o, "label lengths", lengthNames, lengthHistogram);
  if (maxW > 0) {
    std::snprintf(line, sizeof line, "image sizes: width %d..%d, height %d..%d\n", minW, maxW, minH,
                  maxH);
    o << line;
    std::map<size_t, size_t> widths, heights;
    std::map<size_t, std::string> names;
    for (const auto& [bin, count] : widthHistogram) {
      widths[static_cast<size_t>(bin)] = count;
      names[static_cast<size_t>(bin)] = binName(bin);
    }
    for (const auto& [bin, count] : heightHistogram) {
      heights[static_cast<size_t>(bin)] = count;
      names[static_cast<size_t>(bin)] = binName(bin);
    }
    histogram(o, "image widths (px)", names, widths);
    histogram(o, "image heights (px)", names, heights);
  }
  o << summary() << "\n";
  return o.str();
}

}  // namespace foveal::core::data
