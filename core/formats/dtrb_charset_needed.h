#pragma once
// What importDtrb() throws when a deep-text-recognition-benchmark checkpoint does not say which
// characters its classes are and none of DTRB's standard sets fits its class count: the GUI reads
// the file on a worker with the inferred defaults and asks for the characters only on this error.
// Torch-free (docs/ARCHITECTURE.md "Other people's models").
#include <string>
#include <utility>

#include "base/error.h"

namespace foveal::core {

class DtrbCharsetNeeded : public Error {
 public:
  DtrbCharsetNeeded(const std::string& what, std::string architecture, int numClasses)
      : Error(what), architecture(std::move(architecture)), numClasses(numClasses) {}
  std::string architecture;  ///< DtrbArchitecture::describe() of the file
  int numClasses = 0;        ///< the output classes, specials included
};

}  // namespace foveal::core
