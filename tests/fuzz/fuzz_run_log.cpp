// libFuzzer harness: run folders -> RunLog. The input is split at the first NUL into config.json
// and metrics.jsonl; the metrics are written in two parts (the second appended after a refresh),
// as a live run writes them, and everything the GUI asks of the log is computed.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <string>

#include "fuzz_check.h"
#include "run/run_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = "/tmp/foveal-fuzz-run-" + std::to_string(getpid());
  mkdir(dir.c_str(), 0700);
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t cut = input.find('\0');
  const std::string config = cut == std::string::npos ? std::string() : input.substr(0, cut);
  const std::string metrics = cut == std::string::npos ? input : input.substr(cut + 1);
  std::ofstream(dir + "/config.json", std::ios::trunc) << config;
  const size_t half = metrics.size() / 2;
  std::ofstream(dir + "/metrics.jsonl", std::ios::binary | std::ios::trunc)
      << metrics.substr(0, half);
  foveal::core::RunLog log(dir);
  log.refresh();
  std::ofstream(dir + "/metrics.jsonl", std::ios::binary | std::ios::app) << metrics.substr(half);
  log.refresh();
  // Reading in two parts sees the same records as reading the whole file at once.
  foveal::core::RunLog whole(dir);
  whole.refresh();
  FUZZ_CHECK(whole.records().size() == log.records().size(),
             "reading a log in pieces gives as many records as reading it whole");
  FUZZ_CHECK(whole.iteration() == log.iteration(),
             "reading a log in pieces gives the same last iteration as reading it whole");
  FUZZ_CHECK(log.iteration() >= 0, "the last iteration is never negative");
  log.bestAccuracy();
  log.etaSeconds();
  log.status();
  return 0;
}
