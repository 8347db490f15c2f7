#include "data/dataset_factory.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "base/error.h"
#include "data/digit_sequences.h"
#include "data/folder_dataset.h"
#include "data/lmdb_dataset.h"
#include "data/packed_dataset.h"
#include "data/page_dataset.h"
#include "data/synthetic_words.h"

namespace fs = std::filesystem;

namespace foveal::core::data {

namespace {

// "len=5,rotated" -> {len: 5, rotated: ""}
std::map<std::string, std::string> parseSpec(const std::string& spec, const std::string& body) {
  std::map<std::string, std::string> out;
  size_t pos = 0;
  while (pos <= body.size() && !body.empty()) {
    const size_t comma = body.find(',', pos);
    const std::string item = body.substr(pos, comma == std::string::npos ? comma : comma - pos);
    if (item.empty()) throw Error(spec + ": empty item in the spec");
    const size_t eq = item.find('=');
    const std::string k = item.substr(0, eq);
    if (out.count(k)) throw Error(spec + ": '" + k + "' given twice");
    out[k] = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

// The largest count a spec may ask for (digits:count=N, words:count=N): beyond it a typo would
// have a command generate for days.
constexpr uint64_t kMaxSpecCount = 100000000;

uint64_t number(const std::string& spec, const std::string& k, const std::string& v) {
  size_t used = 0;
  unsigned long long n = 0;
  try {
    n = std::stoull(v, &used);
  } catch (...) {
    used = 0;
  }
  if (v.empty() || used != v.size() || v[0] == '-')
    throw Error(spec + ": '" + k + "' needs a non-negative whole number, not \"" + v + "\"");
  if ((k == "count" || k == "len" || k == "length" || k == "minlen" || k == "maxlen") &&
      n > kMaxSpecCount)
    throw Error(spec + ": '" + k + "' is " + v + ", more than the limit of " +
                std::to_string(kMaxSpecCount));
  return n;
}

DatasetPtr openDigits(const std::string& spec, const std::string& body) {
  DigitSequenceSpec s;
  std::string mnist;
  std::vector<std::pair<std::string, std::string>> augmentKeys;
  for (const auto& [k, v] : parseSpec(spec, body)) {
    if (k == "len" || k == "length") {
      s.length = static_cast<int>(number(spec, k, v));
    } else if (k == "rotated") {
      s.rotated = v.empty() || v == "1" || v == "true";
    } else if (k == "normal") {
      s.rotated = false;
    } else if (k == "split") {
      if (v == "train")
        s.split = DigitSplit::Train;
      else if (v == "test")
        s.split = DigitSplit::Test;
      else if (v == "stream")
        s.stream = true;
      else
        throw Error(spec + ": split must be train, test or stream, not \"" + v + "\"");
    } else if (k == "seed") {
      s.seed = number(spec, k, v);
    } else if (k == "count") {
      s.count = static_cast<size_t>(number(spec, k, v));
    } else if (k == "mnist") {
      mnist = v;
    } else if (k == "augment" || k.rfind("aug-", 0) == 0) {
      augmentKeys.emplace_back(k, v);
    } else {
      throw Error(spec + ": unknown key '" + k +
                  "' (digits take len, rotated, split, seed, count, mnist, augment, aug-scale, "
                  "aug-shear, aug-rot, aug-shift, aug-elastic, aug-sigma, aug-thick)");
    }
  }
  // "augment" (the defaults) first, then the single parameters over it, whatever their order.
  std::stable_sort(augmentKeys.begin(), augmentKeys.end(), [](const auto& a, const auto& b) {
    return a.first == "augment" && b.first != "augment";
  });
  for (const auto& [k, v] : augmentKeys) {
    try {
      if (!s.augment.set(k, v)) throw Error("unknown augmentation key '" + k + "'");
    } catch (const Error& e) {
      throw Error(spec + ": " + e.what());
    }
  }
  auto digits = mnist.empty() ? MnistDigits::bundled() : MnistDigits::load(mnist);
  return std::make_shared<DigitSequenceDataset>(digits, s);
}

DatasetPtr openWords(const std::string& spec, const std::string& body) {
  WordSpec s;
  for (const auto& [k, v] : parseSpec(spec, body)) {
    if (k == "seed")
      s.seed = number(spec, k, v);
    else if (k == "count")
      s.count = static_cast<size_t>(number(spec, k, v));
    else if (k == "minlen")
      s.minLength = static_cast<int>(number(spec, k, v));
    else if (k == "maxlen")
      s.maxLength = static_cast<int>(number(spec, k, v));
    else if (k == "wordlist")
      s.wordList = v;
    else if (k == "split" && v == "stream")
      s.stream = true;
    else
      throw Error(spec + ": unknown key '" + k +
                  "' (words take seed, count, minlen, maxlen, wordlist, split=stream)");
  }
  return makeSyntheticWords(s);
}

}  // namespace

std::string datasetKind(const std::string& a) {
  if (a.rfind("digits:", 0) == 0 || a == "digits") return "digits";
  if (a.rfind("words:", 0) == 0 || a == "words") return "words";
  if (a.rfind("page:", 0) == 0) return "page";
  std::error_code ec;
  if (fs::is_regular_file(a, ec)) {
    if (PackedDataset::looksPacked(a)) return "packed";
    if (fs::path(a).filename() == "gt.txt") return "folder";
    return "";
  }
  if (LmdbDataset::looksLmdb(a)) return "lmdb";
  if (fs::is_directory(a, ec) && fs::exists(fs::path(a) / "gt.txt", ec)) return "folder";
  return "";
}

DatasetPtr openDataset(const std::string& a, const OpenOptions& options) {
  const std::string kind = datasetKind(a);
  DatasetPtr ds;
  if (kind == "digits" || kind == "words") {
    const size_t colon = a.find(':');
    const std::string body = colon == std::string::npos ? "" : a.substr(colon + 1);
    ds = kind == "digits" ? openDigits(a, body) : openWords(a, body);
  } else if (kind == "page") {
    ds = std::make_shared<PageDataset>(a.substr(5));
  } else if (kind == "packed") {
    ds = std::make_shared<PackedDataset>(a);
  } else if (kind == "lmdb") {
    ds = std::make_shared<LmdbDataset>(a);
  } else if (kind == "folder") {
    ds = std::make_shared<FolderDataset>(a);
  } else {
    std::error_code ec;
    if (!fs::exists(a, ec))
      throw Error(a + ": no such file or folder, and not a spec (digits:... or words:...)");
    throw Error(a +
                ": not a dataset (expected a packed file, an LMDB folder with data.mdb, a folder "
                "with gt.txt, or a gt.txt file)");
  }
  if (options.filter.active())
    ds = std::make_shared<FilteredDataset>(ds, options.filter, options.skipBad);
  return ds;
}

}  // namespace foveal::core::data
