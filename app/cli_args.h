#pragma once
// A small, strict command-line reader for foveal-cli: --name value, --flag, positionals.
// Unknown options are errors, so a typo never silently changes behaviour.
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace foveal::app {

class CliArgs {
 public:
  /// `valued`: options that take a value; `flags`: options that do not.
  CliArgs(const std::vector<std::string>& args, const std::set<std::string>& valued,
          const std::set<std::string>& flags);

  bool has(const std::string& name) const { return m_values.count(name) || m_flags.count(name); }
  std::string value(const std::string& name, const std::string& fallback = "") const;
  std::string required(const std::string& name) const;
  int intValue(const std::string& name, int fallback) const;
  /// A finite number: "nan", "inf" and overflowing values are refused, naming the option.
  double doubleValue(const std::string& name, double fallback) const;
  /// intValue, refused with a message naming the option and the range unless in [lo, hi].
  int intInRange(const std::string& name, int fallback, int lo, int hi) const;
  double doubleInRange(const std::string& name, double fallback, double lo, double hi) const;
  const std::vector<std::string>& positionals() const { return m_positionals; }

 private:
  std::map<std::string, std::string> m_values;
  std::set<std::string> m_flags;
  std::vector<std::string> m_positionals;
};

/// The non-empty parts of a ';'-separated option value ("a;;b" gives a, b): --data, --eval-data,
/// --slurm-extra.
std::vector<std::string> splitSemicolons(const std::string& s);

}  // namespace foveal::app
