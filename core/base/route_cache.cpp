#include "base/route_cache.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

#include "base/atomic_file.h"
#include "base/env_switch.h"

namespace foveal::core {

namespace {

// A cache file is a few hundred lines; anything far larger is not one of ours.
constexpr std::uintmax_t kMaxCacheBytes = 1 << 20;

struct Line {
  std::string machine, key, route, evidence;
};

struct Cache {
  std::mutex mutex;
  bool pathChosen = false;
  std::string path;
  bool loaded = false;
  bool writable = true;  // false once the file was found unparsable or could not be written
  std::map<std::pair<std::string, std::string>, TunedRoute> routes;
  int tuning = -1;  // -1: from the environment
};

Cache& cache() {
  static Cache c;
  return c;
}

std::string defaultPath() {
  if (const char* p = std::getenv("FOVEAL_ROUTE_CACHE")) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/foveal/kernel-routes.tsv";
  if (const char* h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/foveal/kernel-routes.tsv";
  return {};
}

const std::string& pathLocked(Cache& c) {
  if (!c.pathChosen) {
    c.path = defaultPath();
    c.pathChosen = true;
  }
  return c.path;
}

bool hasControl(const std::string& s) {
  for (unsigned char ch : s)
    if (ch < 0x20 || ch == 0x7f) return true;
  return false;
}

void warn(const std::string& what) {
  std::fprintf(stderr, "foveal: kernel route cache: %s\n", what.c_str());
}

// The file's lines, parsed; nullopt (and a warning) when it cannot be used: not a regular file,
// too large, unreadable or a line that does not parse. A missing file is an empty one.
std::optional<std::vector<Line>> readLines(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::vector<Line>{};
  if (const char* kind = specialFileKind(path)) {
    warn(path + " is " + kind + ", not a file; the measured routes stay in memory");
    return std::nullopt;
  }
  if (std::filesystem::file_size(path, ec) > kMaxCacheBytes) {
    warn(path +
         " is larger than 1 MiB, not a route cache; it is left alone and the measured "
         "routes stay in memory");
    return std::nullopt;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    warn("cannot read " + path + "; the measured routes stay in memory");
    return std::nullopt;
  }
  std::vector<Line> lines;
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream ss(text);
    for (std::string f; std::getline(ss, f, '\t');) fields.push_back(f);
    bool ok = fields.size() == 4 && !fields[0].empty() && !fields[1].empty() && !fields[2].empty();
    for (const auto& f : fields) ok = ok && !hasControl(f);
    if (!ok) {
      warn(path + " line " + std::to_string(number) +
           " is not MACHINE<TAB>KEY<TAB>ROUTE<TAB>EVIDENCE; the file is left alone (remove it "
           "to let Foveal rewrite it) and the measured routes stay in memory");
      return std::nullopt;
    }
    lines.push_back({fields[0], fields[1], fields[2], fields[3]});
  }
  return lines;
}

void loadLocked(Cache& c) {
  if (c.loaded) return;
  c.loaded = true;
  const std::string& path = pathLocked(c);
  if (path.empty()) return;
  const auto lines = readLines(path);
  if (!lines) {
    c.writable = false;
    return;
  }
  for (const auto& l : *lines) c.routes[{l.machine, l.key}] = {l.route, l.evidence};
}

std::string clean(std::string s) {  // tabs and line breaks would break the file's lines
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = ' ';
  return s;
}

}  // namespace

bool routeTuning() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.tuning < 0) c.tuning = envSwitchOff("FOVEAL_ROUTE_TUNING") ? 0 : 1;
  return c.tuning == 1;
}

void setRouteTuning(bool on) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.tuning = on ? 1 : 0;
}

std::string routeCacheFile() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  return pathLocked(c);
}

void setRouteCacheFile(const std::string& path) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  c.path = path;
  c.pathChosen = true;
  c.loaded = false;
  c.writable = true;
  c.routes.clear();
}

std::optional<TunedRoute> cachedRoute(const std::string& machine, const std::string& key) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  loadLocked(c);
  const auto it = c.routes.find({machine, key});
  if (it == c.routes.end()) return std::nullopt;
  return it->second;
}

void storeRoute(const std::string& machine, const std::string& key, const TunedRoute& route) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  loadLocked(c);
  const Line line{clean(machine), clean(key), clean(route.route), clean(route.evidence)};
  c.routes[{line.machine, line.key}] = {line.route, line.evidence};
  const std::string& path = pathLocked(c);
  if (path.empty() || !c.writable) return;
  // Merged with what the file holds now: another process may have measured other shapes since.
  auto lines = readLines(path);
  if (!lines) {
    c.writable = false;
    return;
  }
  std::string text =
      "# Kernel routes Foveal measured on this machine (base/route_cache.h); safe to delete.\n";
  bool replaced = false;
  for (auto& l : *lines) {
    if (l.machine == line.machine && l.key == line.key) {
      l = line;
      replaced = true;
    }
    text += l.machine + '\t' + l.key + '\t' + l.route + '\t' + l.evidence + '\n';
  }
  if (!replaced)
    text += line.machine + '\t' + line.key + '\t' + line.route + '\t' + line.evidence + '\n';
  try {
    std::error_code ec;
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    writeFileAtomically(path, text, "kernel route cache", Durability::CheckedClose);
  } catch (const std::exception& e) {
    warn(std::string(e.what()) + "; the measured routes stay in memory");
    c.writable = false;
  }
}

}  // namespace foveal::core
