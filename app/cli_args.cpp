#include "cli_args.h"

#include <cmath>
#include <cstdio>
#include <utility>

namespace foveal::app {

CliArgs::CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valued,
                 const std::set<std::string>& flags) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      m_positionals.push_back(a);
      continue;
    }
    std::string name = a.substr(2), val;
    const auto eq = name.find('=');
    const bool inlineValue = eq != std::string::npos;
    if (inlineValue) {
      val = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name)) {
      if (inlineValue) throw std::invalid_argument("option --" + name + " takes no value");
      m_flags.insert(name);
    } else if (valued.count(name)) {
      if (!inlineValue) {
        if (i + 1 >= args.size())
          throw std::invalid_argument("option --" + name + " needs a value");
        val = args[++i];
      }
      m_values[name] = val;
    } else {
      throw std::invalid_argument("unknown option --" + name);
    }
  }
}

std::string CliArgs::value(const std::string& name, const std::string& fallback) const {
  auto it = m_values.find(name);
  return it == m_values.end() ? fallback : it->second;
}

std::string CliArgs::required(const std::string& name) const {
  auto it = m_values.find(name);
  if (it == m_values.end()) throw std::invalid_argument("missing required option --" + name);
  return it->second;
}

int CliArgs::intValue(const std::string& name, int fallback) const {
  auto it = m_values.find(name);
  if (it == m_values.end()) return fallback;
  try {
    size_t used = 0;
    const int v = std::stoi(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument("");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("--" + name + " expects an integer, got '" + it->second + "'");
  }
}

double CliArgs::doubleValue(const std::string& name, double fallback) const {
  auto it = m_values.find(name);
  if (it == m_values.end()) return fallback;
  try {
    size_t used = 0;
    const double v = std::stod(it->second, &used);
    if (used != it->second.size() || !std::isfinite(v)) throw std::invalid_argument("");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("--" + name + " expects a finite number, got '" + it->second + "'");
  }
}

int CliArgs::intInRange(const std::string& name, int fallback, int lo, int hi) const {
  const int v = intValue(name, fallback);
  if (v < lo || v > hi)
    throw std::invalid_argument("--" + name + " must be between " + std::to_string(lo) + " and " +
                                std::to_string(hi) + ", got " + std::to_string(v));
  return v;
}

double CliArgs::doubleInRange(const std::string& name, double fallback, double lo,
                              double hi) const {
  const double v = doubleValue(name, fallback);
  if (!(v >= lo && v <= hi)) {
    char buf[128];
    std::snprintf(buf, sizeof buf, " must be between %g and %g, got %g", lo, hi, v);
    throw std::invalid_argument("--" + name + buf);
  }
  return v;
}

std::vector<std::string> splitSemicolons(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t semi = s.find(';', pos);
    std::string part = s.substr(pos, semi == std::string::npos ? semi : semi - pos);
    if (!part.empty()) out.push_back(std::move(part));
    if (semi == std::string::npos) break;
    pos = semi + 1;
  }
  return out;
}

}  // namespace foveal::app
