// libFuzzer harness: TensorBoard event files -> scanEventRecords, decodeTensorBoardEvent and the
// folder reader (core/run/tensorboard_events.h). The input is one event file; it is framed and
// decoded as bytes, then written into a run folder in two parts (the second appended after a
// read), as a trainer writes it, and read again whole. Nothing may throw out of readNew; the
// records framed lie inside the input, in order; reading in two parts gives what reading whole
// gives; every curve's steps rise.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "fuzz_check.h"
#include "run/tensorboard_events.h"

namespace {

using foveal::core::RunLogReader;
using foveal::core::ScalarSeries;

// The series a monitor holds after applying the updates, as the Update contract says.
void hold(std::vector<ScalarSeries>& held, const RunLogReader::Update& u) {
  if (u.reset) held.clear();
  for (const auto& [tag, step] : u.purged)
    for (auto& s : held)
      if (s.tag == tag)
        s.points.erase(std::remove_if(s.points.begin(), s.points.end(),
                                      [&](const auto& p) { return p.step >= step; }),
                       s.points.end());
  for (const auto& n : u.series) {
    auto it = std::find_if(held.begin(), held.end(), [&](const auto& s) { return s.tag == n.tag; });
    if (it == held.end())
      held.push_back(n);
    else
      it->points.insert(it->points.end(), n.points.begin(), n.points.end());
  }
}

// The same curves, in any order: a tag whose first points were purged before any read returned
// them comes later in a monitor's list than in the reader's.
bool samePoints(const std::vector<ScalarSeries>& a, const std::vector<ScalarSeries>& b) {
  const auto nonEmpty = [](const std::vector<ScalarSeries>& v) {
    std::vector<const ScalarSeries*> out;
    for (const auto& s : v)
      if (!s.points.empty()) out.push_back(&s);
    std::sort(out.begin(), out.end(), [](const auto* x, const auto* y) { return x->tag < y->tag; });
    return out;
  };
  const auto x = nonEmpty(a), y = nonEmpty(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i]->tag != y[i]->tag || x[i]->points.size() != y[i]->points.size()) return false;
    for (size_t k = 0; k < x[i]->points.size(); ++k) {
      const auto &p = x[i]->points[k], &q = y[i]->points[k];
      const bool sameValue = p.value == q.value || (p.value != p.value && q.value != q.value);
      const bool sameTime =
          p.wallTime == q.wallTime || (p.wallTime != p.wallTime && q.wallTime != q.wallTime);
      if (p.step != q.step || !sameValue || !sameTime) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  using namespace foveal::core;
  const std::string input(reinterpret_cast<const char*>(data), size);

  const RecordScan scan = scanEventRecords(input, 0, "fuzz");
  uint64_t last = 0;
  for (const auto& r : scan.records) {
    FUZZ_CHECK(r.offset >= last && r.offset + 16 + r.data.size() <= input.size(),
               "the records framed lie inside the input, in order");
    last = r.offset + 16 + r.data.size();
    try {
      const TensorBoardEvent e = decodeTensorBoardEvent(r.data);
      for (const auto& v : e.values)
        FUZZ_CHECK(!(v.simple && v.scalarTensor), "a value is a simple value or a tensor");
    } catch (const Error&) {
    }
  }
  FUZZ_CHECK(scan.next >= last, "the scan resumes after the last record");
  FUZZ_CHECK(!scan.stopped || scan.next <= input.size(), "a bad length is inside the input");
  for (const auto& d : scan.damage) FUZZ_CHECK(d.offset < input.size(), "damage is inside");

  static const fs::path dir = "/tmp/foveal-fuzz-tensorboard-" + std::to_string(getpid());
  static const fs::path whole = dir / "whole", parts = dir / "parts";
  const std::string name = "events.out.tfevents.1700000000.fuzz.1.0";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(whole, ec);
  fs::create_directories(parts, ec);
  std::ofstream(whole / name, std::ios::binary) << input;
  const size_t half = input.size() / 2;
  std::ofstream(parts / name, std::ios::binary) << input.substr(0, half);

  TensorBoardRunReader split(parts.string());
  std::vector<ScalarSeries> held;
  size_t damage = 0;
  RunLogReader::Update u = split.readNew();
  hold(held, u);
  damage += u.damage.size();
  std::ofstream(parts / name, std::ios::binary | std::ios::app) << input.substr(half);
  u = split.readNew();
  FUZZ_CHECK(!u.reset, "a file that grew is not another file");
  hold(held, u);
  damage += u.damage.size();

  TensorBoardRunReader once(whole.string());
  const RunLogReader::Update all = once.readNew();
  std::vector<ScalarSeries> wholeHeld;
  hold(wholeHeld, all);
  FUZZ_CHECK(samePoints(held, wholeHeld), "reading in two parts gives what reading whole gives");
  FUZZ_CHECK(samePoints(held, split.series()), "the updates add up to the reader's series");
  FUZZ_CHECK(damage == all.damage.size(), "reading in two parts finds the same damage");
  for (const auto& s : wholeHeld)
    for (size_t k = 1; k < s.points.size(); ++k)
      FUZZ_CHECK(s.points[k - 1].step < s.points[k].step, "a curve's steps rise");
  const RunLogReader::Update again = once.readNew();
  FUZZ_CHECK(again.series.empty() && again.damage.empty() && again.purged.empty(),
             "nothing new when nothing changed");
  return 0;
}
