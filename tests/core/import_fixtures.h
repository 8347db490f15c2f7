#pragma once
// What the import exactness suites (test_dtrb_import, test_model_formats, test_strhub_import)
// share: a fixture folder's expected.json (what the other project's own code computed), a model
// file's refusal as text, and how far a fixture's numbers move between two images (their
// "fixtures see the image" checks, which show an exactness test could fail).
#include <QString>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "base/error.h"
#include "trace/model_session.h"

namespace foveal::test {

/// `dir`/expected.json, parsed. A missing fixture says which file, not a JSON parse error.
inline nlohmann::json readExpected(const std::string& dir) {
  std::ifstream in(dir + "expected.json");
  if (!in)
    throw std::runtime_error(dir + "expected.json: cannot open (made by scripts/make-*-fixtures)");
  return nlohmann::json::parse(in);
}

/// What opening `path` with `options` (ImportOptions or DtrbOptions) throws; empty if it opens.
template <typename Options>
QString refusalOf(const std::string& path, const Options& options) {
  try {
    core::ModelSession::open(path, options);
  } catch (const core::Error& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

/// The largest |a[t][k] - b[t][k]| of two arrays of rows of numbers, over the rows both have.
inline double largestDifference(const nlohmann::json& a, const nlohmann::json& b) {
  double d = 0;
  const size_t rows = std::min(a.size(), b.size());
  for (size_t t = 0; t < rows; ++t) {
    const size_t n = std::min(a[t].size(), b[t].size());
    for (size_t k = 0; k < n; ++k)
      d = std::max(d, std::abs(a[t][k].get<double>() - b[t][k].get<double>()));
  }
  return d;
}

/// How far the later rows of `rows` (one attention map per step) move from the first row: the
/// largest |rows[t][i] - rows[0][i]|.
inline double spreadFromFirstRow(const nlohmann::json& rows) {
  double d = 0;
  for (size_t t = 1; t < rows.size(); ++t)
    for (size_t i = 0; i < std::min(rows[t].size(), rows[0].size()); ++i)
      d = std::max(d, std::abs(rows[t][i].get<double>() - rows[0][i].get<double>()));
  return d;
}

}  // namespace foveal::test
