#pragma once
// The one exception type core throws for anything a user can act on (bad file, bad config).
// Messages name the file and the problem; callers print them as they are.
#include <stdexcept>
#include <string>

namespace foveal::core {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace foveal::core
