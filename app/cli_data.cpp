// foveal-cli data: thin wrappers over core/data. Parse, call, print.
#include "cli_data.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "base/error.h"
#include "cli_args.h"
#include "cli_model.h"
#include "data/data_bench.h"
#include "data/data_check.h"
#include "data/dataset_export.h"
#include "data/dataset_factory.h"
#include "data/dataset_tools.h"
#include "data/digit_sequences.h"
#include "data/output_guard.h"
#include "data/random.h"
#include "data/synthetic_words.h"
#include "image/preprocessing_check.h"
#include "model/charset.h"
#include "trace/model_session.h"
#include "train/train_config.h"

namespace foveal::app {

using namespace foveal::core;
using namespace foveal::core::data;

const char* kDataUsage =
    R"(  data make-digits --len N [--rotated] [--split train|test|stream] [--seed S] [--count N]
              --out PATH [--format packed|lmdb|folder] [--scale S]
              digit sequences as in the paper (20,000 train / 10,000 test unless --count)
  data make-words [--seed S] [--count N] [--minlen N] [--maxlen N] --out PATH [--format ...]
              synthetic words rendered from installed fonts (needs OpenCV)
  data pack DATASET --out FILE [--scale S] [--input-w W] [--input-h H] [FILTERS] [--skip-bad]
              [--limit N]   preprocess into one memory-mappable file
  data convert DATASET --out PATH --format lmdb|folder|packed [FILTERS] [--skip-bad] [--limit N]
  data info DATASET [--charset CHARS] [--limit N] [FILTERS] [--problems N]
              counts, label-length histogram, charset coverage; reads every entry
  data check DATASET --model FILE|--preset NAME [--width W] [stage options] [--max-length N]
              [--limit N] [--examples N] [--threads N] [DTRB options]
              what a run with that model would see: entries, how many it would drop and why
              (characters outside its charset, with counts; labels longer than it can read or,
              for CTC, than its feature columns allow; unreadable images), label-length and
              image-size histograms; exits 1 when nothing usable remains
  data show DATASET --out PNG [--count N] [--columns C] [--height H] [--first I]
              [--random --seed S]
              contact sheet of N samples
  data glyphs --out PNG [--charset CHARS]   reference glyphs (Roboto Bold 36, 24x32)
  data bench [--seconds S] [--only NAME,...] [--threads N] [--json]
              images/s per core for each source
              DATASET: a packed file, an LMDB folder, a folder with gt.txt, a gt.txt, or a spec
              (digits:len=5,rotated,split=test,seed=1  words:seed=1,count=1000)
              FILTERS: --max-length N --filter-charset CHARS --case-insensitive
              --remove-punctuation
              Commands that write refuse to replace a model file, another dataset or their own
              input; --force replaces the first two.
)";

namespace {

const std::set<std::string> kFilterValued = {"max-length", "filter-charset"};
const std::set<std::string> kFilterFlags = {"case-insensitive", "remove-punctuation", "skip-bad",
                                            "force"};

// Upper bounds for counts a user types: enough for any real dataset, small enough that a typo
// (an extra zero or ten) is refused instead of running for days.
constexpr int kMaxCount = 100000000;

std::set<std::string> with(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

OpenOptions openOptions(const CliArgs& a) {
  OpenOptions o;
  o.filter.maxLength = a.intInRange("max-length", 0, 0, 100000);  // 0: no limit
  o.filter.charset = a.value("filter-charset");
  o.filter.caseInsensitive = a.has("case-insensitive");
  o.filter.removePunctuation = a.has("remove-punctuation");
  o.skipBad = a.has("skip-bad");
  return o;
}

std::string onePositional(const CliArgs& a, const std::string& cmd) {
  if (a.positionals().size() != 1) throw std::invalid_argument(cmd + " needs exactly one DATASET");
  return a.positionals()[0];
}

size_t count(const CliArgs& a, const std::string& name, size_t fallback) {
  const int v = a.intValue(name, static_cast<int>(fallback));
  if (v < 0) throw std::invalid_argument("--" + name + " must not be negative");
  return static_cast<size_t>(v);
}

// A count that must be given as at least 1 when it is given at all (0 meant "the default").
size_t positiveCount(const CliArgs& a, const std::string& name, size_t fallback) {
  if (!a.has(name)) return fallback;
  return static_cast<size_t>(a.intInRange(name, 1, 1, kMaxCount));
}

void printFiltered(const Dataset& ds) {
  if (const auto* f = dynamic_cast<const FilteredDataset*>(&ds))
    std::printf("filter: %zu kept, %zu left out by the label filter, %zu unreadable skipped\n",
                f->size(), f->filteredOut(), f->unreadable());
}

int exportCommand(const Dataset& ds, const CliArgs& a, const std::string& format, size_t limit,
                  const std::vector<std::string>& inputs = {}) {
  ExportOptions ex;
  ex.format = format;
  ex.preprocessing.regionScale = a.doubleValue("scale", ex.preprocessing.regionScale);
  ex.preprocessing.inputW = a.intValue("input-w", ex.preprocessing.inputW);
  ex.preprocessing.inputH = a.intValue("input-h", ex.preprocessing.inputH);
  if (format == "packed") checkPreprocessing(ex.preprocessing);
  ex.skipBad = a.has("skip-bad");
  ex.limit = limit;
  size_t lastShown = 0;
  ex.progress = [&](size_t done, size_t total) {
    if (done - lastShown >= 10000 || done == total) {
      std::fprintf(stderr, "\r%zu / %zu", done, total);
      lastShown = done;
    }
  };
  const std::string out = a.required("out");
  checkOutputPath(out, format + " dataset", inputs, a.has("force"));
  const auto r = exportDataset(ds, out, ex);
  std::fprintf(stderr, "\n");
  printFiltered(ds);
  std::printf("wrote %s (%s): %zu entries", out.c_str(), format.c_str(), r.written);
  if (r.skipped) std::printf(", %zu bad entries skipped", r.skipped);
  std::printf("\n");
  for (size_t i = 0; i < r.skippedMessages.size() && i < 20; ++i)
    std::printf("  skipped: %s\n", r.skippedMessages[i].c_str());
  if (r.skippedMessages.size() > 20)
    std::printf("  ... and %zu more\n", r.skippedMessages.size() - 20);
  return 0;
}

int makeDigits(const std::vector<std::string>& args) {
  const CliArgs a(args, {"len", "split", "seed", "count", "out", "format", "scale", "mnist"},
                  {"rotated", "force"});
  DigitSequenceSpec s;
  s.length = a.intValue("len", 5);
  s.rotated = a.has("rotated");
  const std::string split = a.value("split", "train");
  if (split == "test")
    s.split = DigitSplit::Test;
  else if (split == "stream")
    s.stream = true;
  else if (split != "train")
    throw std::invalid_argument("--split must be train, test or stream");
  s.seed = static_cast<uint64_t>(a.intValue("seed", 1));
  s.count = positiveCount(a, "count", 0);
  if (s.stream && !s.count) throw std::invalid_argument("--split stream needs --count");
  auto digits = a.has("mnist") ? MnistDigits::load(a.value("mnist")) : MnistDigits::bundled();
  DigitSequenceDataset ds(digits, s);
  std::printf("%s\n", ds.describe().c_str());
  return exportCommand(ds, a, a.value("format", "packed"), s.stream ? s.count : 0,
                       {a.value("mnist")});
}

int makeWords(const std::vector<std::string>& args) {
  const CliArgs a(args, {"seed", "count", "minlen", "maxlen", "out", "format", "scale", "wordlist"},
                  {"force"});
  WordSpec s;
  s.seed = static_cast<uint64_t>(a.intValue("seed", 1));
  s.count = positiveCount(a, "count", 10000);
  s.minLength = a.intInRange("minlen", s.minLength, 1, 1000);
  s.maxLength = a.intInRange("maxlen", s.maxLength, s.minLength, 1000);
  s.wordList = a.value("wordlist", s.wordList);
  auto ds = makeSyntheticWords(s);
  std::printf("%s\n", ds->describe().c_str());
  return exportCommand(*ds, a, a.value("format", "packed"), 0, {s.wordList});
}

int pack(const std::vector<std::string>& args, bool convert) {
  const CliArgs a(args,
                  with({"out", "scale", "input-w", "input-h", "limit", "format"}, kFilterValued),
                  kFilterFlags);
  const std::string input = onePositional(a, convert ? "convert" : "pack");
  auto ds = openDataset(input, openOptions(a));
  std::printf("%s\n", ds->describe().c_str());
  const std::string format = convert ? a.required("format") : "packed";
  if (!convert && a.has("format")) throw std::invalid_argument("pack always writes packed files");
  return exportCommand(*ds, a, format, count(a, "limit", 0), {input});
}

int info(const std::vector<std::string>& args) {
  const CliArgs a(args, with({"charset", "limit", "problems", "threads"}, kFilterValued),
                  kFilterFlags);
  auto ds = openDataset(onePositional(a, "info"), openOptions(a));
  std::optional<Charset> cs;
  if (a.has("charset")) {
    checkCharsetUtf8(a.value("charset"), "--charset");
    cs.emplace(a.value("charset"), a.has("case-insensitive"));
  }
  const auto r =
      inspectDataset(*ds, cs ? &*cs : nullptr, count(a, "limit", 0), a.intValue("threads", 0));
  std::printf("%s\n", ds->describe().c_str());
  printFiltered(*ds);
  std::printf("entries read: %zu\nreadable:     %zu\nunreadable:   %zu\nempty labels: %zu\n",
              r.entries, r.readable, r.unreadable, r.emptyLabels);
  if (cs) std::printf("outside charset: %zu\n", r.outsideCharset);
  if (r.maxW > 0)
    std::printf("image sizes: width %d..%d, height %d..%d\n", r.minW, r.maxW, r.minH, r.maxH);
  std::printf("label lengths:\n");
  size_t peak = 1;
  for (const auto& [len, n] : r.lengthHistogram) peak = std::max(peak, n);
  for (const auto& [len, n] : r.lengthHistogram)
    std::printf("  %3zu %8zu %s\n", len, n, std::string(n * 40 / peak, '#').c_str());
  std::printf("characters (%zu distinct):", r.characters.size());
  for (const auto& [c, n] : r.characters) std::printf(" %s:%zu", c.c_str(), n);
  std::printf("\n");
  if (cs) {
    std::string absent, outside;
    for (int i = 1; i < cs->size(); ++i)
      if (!r.characters.count(cs->token(i))) absent += cs->token(i);
    for (const auto& [c, n] : r.characters)
      if (!cs->covers(c)) outside += c;
    std::printf("charset coverage: %d of %d characters present",
                cs->size() - 1 - static_cast<int>(splitUtf8(absent).size()), cs->size() - 1);
    if (!absent.empty()) std::printf("; absent: %s", absent.c_str());
    if (!outside.empty()) std::printf("; outside the charset: %s", outside.c_str());
    std::printf("\n");
  }
  const size_t show = count(a, "problems", 50);
  if (!r.problems.empty()) std::printf("problems (%zu):\n", r.problems.size());
  for (size_t i = 0; i < r.problems.size() && i < show; ++i)
    std::printf("  %s\n", r.problems[i].second.c_str());
  if (r.problems.size() > show) std::printf("  ... and %zu more\n", r.problems.size() - show);
  return 0;
}

int check(const std::vector<std::string>& args) {
  const CliArgs a(args,
                  with(withImportOptions({"model", "preset", "width", "max-length", "limit",
                                          "examples", "threads"}),
                       kStageOptions),
                  withImportFlags(kStageFlags));
  const std::string input = onePositional(a, "check");
  if (a.has("model") == a.has("preset"))
    throw std::invalid_argument("data check needs either --model FILE or --preset NAME");
  ModelConfig config;
  std::string name;
  if (a.has("model")) {
    if (a.has("width"))
      throw std::invalid_argument("--width is for --preset (a model file has its own)");
    name = a.value("model");
    config = ModelSession::open(name, importOptions(a))->config();
  } else {
    name = "preset " + a.value("preset");
    config = train::presetConfig(a.value("preset"), a.doubleInRange("width", 1.0, 0.01, 4.0)).model;
    applyStageOptions(a, config);  // as train applies them over the preset
    config.validate();
  }
  // As `train --max-length` does: the longest label the run's model will emit.
  if (a.has("max-length")) config.maxLength = a.intInRange("max-length", config.maxLength, 1, 1000);
  const LabelLimits limits = labelLimits(config, name);
  auto ds = openDataset(input, OpenOptions{});
  std::printf("%s\n", ds->describe().c_str());
  const DataCheck r = checkDataset(*ds, limits, count(a, "limit", 0),
                                   a.intInRange("threads", 0, 0, kMaxComputeThreads));
  std::printf("%s", r.text(limits, count(a, "examples", 10)).c_str());
  if (r.usable == 0) {
    std::fprintf(stderr, "error: %s: nothing usable for %s: a run would have no data\n",
                 input.c_str(), limits.model.c_str());
    return 1;
  }
  return 0;
}

int show(const std::vector<std::string>& args) {
  const CliArgs a(args, with({"out", "count", "columns", "first", "seed", "height"}, kFilterValued),
                  with({"random"}, kFilterFlags));
  auto ds = openDataset(onePositional(a, "show"), openOptions(a));
  const size_t n = count(a, "count", 16), first = count(a, "first", 0);
  const size_t size = ds->endless() ? first + n : ds->size();
  SampleRng rng(static_cast<uint64_t>(a.intValue("seed", 0)));
  std::vector<GreyImage> images;
  for (size_t k = 0; k < n && (a.has("random") || first + k < size); ++k) {
    const size_t i = a.has("random") ? rng.below(size) : first + k;
    try {
      const Sample s = ds->get(i);
      std::printf("%6zu  %s\n", i, s.label.c_str());
      images.push_back(s.image);
    } catch (const Error& e) {
      if (!a.has("skip-bad")) throw;
      std::printf("%6zu  skipped: %s\n", i, e.what());
    }
  }
  if (images.empty()) throw Error(ds->describe() + ": nothing to show");
  const std::string out = a.required("out");
  checkOutputPath(out, "contact sheet", {onePositional(a, "show")}, a.has("force"));
  const int height = std::clamp(a.intValue("height", 32), 8, 512);
  writePng(contactSheet(images, a.intValue("columns", 4), height, height * 14), out);
  std::printf("wrote %s (%zu samples)\n", out.c_str(), images.size());
  return 0;
}

int glyphs(const std::vector<std::string>& args) {
  const CliArgs a(args, {"out", "charset", "font"}, {"case-insensitive", "force"});
  checkCharsetUtf8(a.value("charset", "0123456789"), "--charset");
  const Charset cs(a.value("charset", "0123456789"), a.has("case-insensitive"));
  auto g = referenceGlyphs(cs, a.value("font"));
  g.erase(g.begin());  // the blank end token
  const std::string out = a.required("out");
  checkOutputPath(out, "glyph sheet", {a.value("font")}, a.has("force"));
  writePng(contactSheet(g, std::min<int>(static_cast<int>(g.size()), 12), 32, 24), out);
  std::printf("wrote %s (%zu glyphs, 24x32, %s at 36)\n", out.c_str(), g.size(),
              (a.has("font") ? a.value("font") : referenceFontPath()).c_str());
  return 0;
}

int bench(const std::vector<std::string>& args) {
  const CliArgs a(args, {"seconds", "only", "threads", "scratch"}, {"json"});
  DataBenchOptions o;
  o.seconds = a.doubleInRange("seconds", 1.0, 0.01, 3600);
  o.loaderThreads = a.intInRange("threads", 0, 0, kMaxComputeThreads);
  o.scratchDir = a.value("scratch");
  std::string only = a.value("only");
  for (size_t pos = 0; !only.empty() && pos != std::string::npos;) {
    const size_t comma = only.find(',', pos);
    o.only.push_back(only.substr(pos, comma == std::string::npos ? comma : comma - pos));
    pos = comma == std::string::npos ? comma : comma + 1;
  }
  const auto results = runDataBenchmarks(o);
  if (results.empty()) throw std::invalid_argument("--only matched no benchmark");
  if (a.has("json"))
    std::printf("[\n");
  else
    std::printf("%-34s %8s %14s %14s\n", "source", "threads", "images/s", "images/s/core");
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (a.has("json"))
      std::printf(
          "  {\"name\": \"%s\", \"threads\": %d, \"images_per_s\": %.1f, "
          "\"images_per_s_per_core\": %.1f}%s\n",
          r.name.c_str(), r.threads, r.imagesPerS, r.perCore(), i + 1 < results.size() ? "," : "");
    else
      std::printf("%-34s %8d %14.0f %14.0f\n", r.name.c_str(), r.threads, r.imagesPerS,
                  r.perCore());
  }
  if (a.has("json")) std::printf("]\n");
  return 0;
}

}  // namespace

int runDataCommand(const std::vector<std::string>& args) {
  if (args.empty()) throw std::invalid_argument("data needs a subcommand");
  const std::string sub = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (sub == "make-digits") return makeDigits(rest);
  if (sub == "make-words") return makeWords(rest);
  if (sub == "pack") return pack(rest, false);
  if (sub == "convert") return pack(rest, true);
  if (sub == "info") return info(rest);
  if (sub == "show") return show(rest);
  if (sub == "check") return check(rest);
  if (sub == "glyphs") return glyphs(rest);
  if (sub == "bench") return bench(rest);
  throw std::invalid_argument("unknown data subcommand '" + sub + "'");
}

}  // namespace foveal::app
