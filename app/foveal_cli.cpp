// foveal-cli: the command-line face of the engine. Parses, calls core, prints; nothing else.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include "base/atomic_file.h"
#include "base/blas_kernels.h"
#include "base/cpu_features.h"
#include "base/error.h"
#include "base/heap_tuning.h"
#include "base/kernel_routes.h"
#include "cli_args.h"
#include "cli_data.h"
#include "cli_eval.h"
#include "cli_explain.h"
#include "cli_model.h"
#include "cli_runs.h"
#include "cli_train.h"
#include "crash_report.h"
#include "data/char_boxes.h"
#include "data/dataset_factory.h"
#include "data/output_guard.h"
#include "engines/tesseract_engine.h"
#include "formats/checkpoint.h"
#include "formats/easyocr_import.h"
#include "formats/ocr_formats.h"

#include "formats/kraken_import.h"
#include "formats/page_export.h"
#include "formats/page_layout.h"
#include "image/grey_image.h"
#include "image/image_checks.h"
#include "model/benchmark.h"
#include "model/charset.h"
#include "model/model_config.h"
#include "model/model_variants.h"
#include "model/vgsl_spec.h"
#include "trace/kraken_lines.h"
#include "trace/model_session.h"
#include "train/model_average.h"

namespace fs = std::filesystem;
using namespace foveal;
using foveal::app::CliArgs;
using foveal::core::setComputeThreads;

namespace {

// The train and eval lines live next to their commands (cli_train.cpp, cli_eval.cpp).
const std::string kUsage =
    R"(foveal-cli - attention-based image-to-sequence recognition

usage: foveal-cli <command> [options]

commands:
  trace       --model FILE IMAGE [--json | --csv | --hocr | --alto | --page] [--out DIR [--force]]
              [--sample] [--seed N] [--all-steps] [--beam N [--hypothesis I]]
              decode IMAGE step by step: token, top-5, attention, entropy, region, STN quads,
              each step's focus point and character box (source pixels);
              --json prints the trace as JSON, --csv one row per step, --hocr an hOCR (XHTML)
              page with one ocrx_cinfo box per character and its top-k as Tesseract's
              x_confs choices, --alto an ALTO v4 document (String, Glyph, Variant), --page a
              PAGE-XML 2019 document (Word, Glyph, TextEquiv); --out writes step patches as
              PNG, trace.json, trace.hocr, trace.alto.xml and trace.page.xml; --beam N decodes
              by beam search with N hypotheses and lists the N best readings with their log p
              (ALTO ALTERNATIVEs, PAGE TextEquivs); the steps show the best one, or the I-th
              best with --hypothesis I (1 = the best); --truth TEXT (CTC models) adds the
              forced alignment of TEXT over the same frames: each true character's frames, box
              and log p beside what the shown path read there ("alignment" in the JSON);
              --align also lists the shown and forced paths frame by frame, and fails
              (status 1) when TEXT cannot be aligned
              --model FILE --dataset SPEC --out DIR [--limit N] [--json]
              [--format hocr|alto|page[,...]]
              trace every entry of a dataset: DIR/NNNNNNNNN.hocr (the default), .alto.xml,
              .page.xml and .json (--json, with the entry's true character boxes where the
              data knows them); --hocr is --format hocr
              --model FILE --layout FILE.xml IMAGE [--json] [--page OUT.xml] [--alto OUT.xml]
              [--force]
              read every text line of a PAGE-XML 2019 or ALTO v4 layout in reading order, each
              extracted as kraken extracts it (a TextLine with a Baseline along it, its Coords
              the boundary polygon; one without through the box of its Coords); --json prints
              {"lines": [{"id", "prediction", "steps" (each with its cut on the page)}, ...]};
              --page / --alto export the page with the readings as PAGE-XML 2019 / ALTO v4
              (regions, lines with ids, baselines and polygons, reading order; each character
              a Glyph with its cut as polygon and its confidence), replacing OUT only with --force;
              --align force-aligns each line's transcription (the XML's text) over its frames
              A kraken model (.mlmodel, .safetensors) reads IMAGE alone as one line, as kraken's
              bounding-box path does; --padding N sets rpred's line padding (default 16)
              --model tesseract:LANG[,psm=N][,chars=SET] reads with Tesseract instead
              (libtesseract's LSTM engine): its symbols as steps, with boxes, confidences
              and the LSTM's per-symbol choices as the top-k
  init-model  [--model NAME] [--transformation none|tps] [--features vgg|vgg2d|resnet]
              [--sequence none|bilstm] [--projection] [--prediction ctc|attention]
              [--cell paper|dtrb] [--fiducials F] [--attention soft|hard|sharp]
              [--preprocess foveal|dtrb] [--keep-ratio-pad] [--positions none|sine2d]
              [--context pooling|chain|weighting] [--stns 1|2] [--reference] [--width W]
              [--charset CHARS] [--max-length N] [--scale S] [--seed N] --out FILE [--force]
              write a model with random weights: any combination of the stages; --model
              starts from a named one (soft, hard, sharp-chain, ..., crnn, rare, trba); refuses to
              replace a model file or a dataset unless --force
  info        --model FILE [format options]
              which format the file is (recognised by its content, and why), what it holds,
              what an import assumes, and the model's configuration
  import      FILE --out MODEL.fvm [--format NAME] [format options] [--force]
              convert a model file of another format (a deep-text-recognition-benchmark
              checkpoint, an EasyOCR recogniser, ...) into Foveal's own; every command that
              takes --model opens such files directly, with the same options. The formats and
              their options: 'foveal-cli formats'
  average     MODEL.fvm MODEL.fvm... --out FILE [--force]
              the mean of several checkpoints of one model (the same configuration), e.g. the
              last ones a run kept in RUN/history/: smooths out the swing between checkpoints
  formats     list the model file formats Foveal opens, their options, and EasyOCR's
              released recognisers (--easyocr NAME)
  bench       --model FILE [--batch N] [--repeats N] [--threads N] [--json] [format options]
              greedy inference of one model file (any format) at batch 1 and batch N, and the
              kernel each layer ran on
  bench       --model FILE --explain IMAGE [--ig-steps N] [--batch N] [--repeats N] [--one-step]
              [--json]
              integrated gradients (default 32 steps) for one decoding step and for all
  bench       --kraken-page [--threads N] [--repeats N] [--json]
              lines per second reading a 30-line page with kraken's default recognition
              network (random weights), each line through kraken's baseline path, at 1 and 2
              threads
  bench       [--width W] [--batch N] [--repeats N] [--only NAME,...] [--no-train] [--json]
              [--threads N] [--no-bf16] [--device cpu|cuda|cuda:N] [--beam N]
              inference latency (batch 1; also with a beam search of width N, default 5, 0 skips),
              batched inference and training images/s for every mechanism on this machine;
              the CPU's instruction sets first, then each mechanism's kernel routes (the kernel
              each layer ran on, with its shape)
)" + std::string(app::kTrainUsage) +
    app::kRunsUsage + app::kEvalUsage + app::kExplainUsage +
    R"(  data        make-digits | make-words | pack | convert | info | show | glyphs | bench
              datasets: generate, convert, inspect, look at, measure (foveal-cli data --help)
  version     print the version

Run 'foveal-cli <command> --help' for a command's options. Exit status: 0 success,
1 error (message on stderr), 2 bad usage.
)";

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::string safeName(const std::string& token) {
  std::string out;
  for (char c : token) out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

core::TraceOptions traceOptions(const CliArgs& a) {
  core::TraceOptions opt;
  opt.sample = a.has("sample");
  opt.seed = static_cast<uint64_t>(a.intValue("seed", 0));
  opt.stopAtEnd = !a.has("all-steps");
  opt.beamWidth = a.intValue("beam", 1);
  if (opt.beamWidth < 1 || opt.beamWidth > core::kMaxBeamWidth)
    throw UsageError("--beam must be between 1 and " + std::to_string(core::kMaxBeamWidth));
  if (opt.sample && opt.beamWidth > 1) throw UsageError("--beam and --sample exclude each other");
  const int64_t hyp = a.intValue("hypothesis", 1);
  if (hyp < 1 || hyp > opt.beamWidth)
    throw UsageError("--hypothesis must be between 1 and the beam width (--beam " +
                     std::to_string(opt.beamWidth) + ")");
  opt.beamHypothesis = static_cast<int>(hyp - 1);
  opt.truth = a.value("truth", "");
  if (a.has("truth") && opt.truth.empty()) throw UsageError("--truth needs the text to align");
  return opt;
}

void createFolder(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw core::Error(dir.string() + ": cannot create output folder (" + ec.message() + ")");
}

void writeText(const fs::path& path, const std::string& text) {
  core::writeFileAtomically(path.string(), text, "trace file");
}

std::string formatLabel(core::OcrFormat f) {
  switch (f) {
    case core::OcrFormat::Alto:
      return "ALTO";
    case core::OcrFormat::Page:
      return "PAGE-XML";
    case core::OcrFormat::Hocr:
      break;
  }
  return "hOCR";
}

// `trace --dataset SPEC --out DIR`: every entry's hOCR, ALTO or PAGE-XML (and JSON) in DIR, named
// by entry index.
using ImageReader = std::function<core::Trace(const core::GreyImage&, const std::string&)>;

// --model: a model file (or DTRB checkpoint) read with `opt`, or Tesseract by its spec.
ImageReader openReader(const CliArgs& a, const core::TraceOptions& opt) {
  const std::string model = a.required("model");
  if (core::isTesseractSpec(model)) {
    if (opt.beamWidth > 1 || opt.sample)
      throw UsageError("--beam and --sample are for Foveal models, not " + model);
    auto engine = core::TesseractEngine::open(core::parseTesseractSpec(model));
    return [engine](const core::GreyImage& image, const std::string& source) {
      return engine->read(image, source);
    };
  }
  std::shared_ptr<const core::ModelSession> session =
      core::ModelSession::open(model, app::importOptions(a, /*formatIsOutput=*/true));
  return [session, opt](const core::GreyImage& image, const std::string& source) {
    return session->trace(image, source, opt);
  };
}

int traceDataset(const CliArgs& a, const ImageReader& read) {
  if (!a.has("out")) throw UsageError("trace --dataset needs --out DIR");
  if (!a.positionals().empty()) throw UsageError("trace --dataset takes no IMAGE");
  auto dataset = core::data::openDataset(a.value("dataset"));
  const int64_t limit = a.intValue("limit", 0);
  if (limit < 0) throw UsageError("--limit must be >= 0");
  if (dataset->endless() && limit == 0)
    throw UsageError(dataset->describe() + ": an endless stream needs --limit N");
  const size_t n =
      limit > 0 ? std::min<size_t>(static_cast<size_t>(limit), dataset->size()) : dataset->size();
  const bool json = a.has("json");
  std::vector<core::OcrFormat> formats;
  std::stringstream names(a.value("format", a.has("hocr") || !json ? "hocr" : ""));
  for (std::string name; std::getline(names, name, ',');)
    if (!name.empty()) formats.push_back(core::ocrFormatFromString(name));
  if (a.has("hocr") && a.has("format")) throw UsageError("--hocr is --format hocr: give one");
  const fs::path dir = a.value("out");
  core::data::checkOutputFolder(dir.string(), "traces", a.has("force"));
  createFolder(dir);
  size_t withBoxes = 0;
  core::XmlReplacements replaced;  // control characters the XML formats cannot hold
  for (size_t i = 0; i < n; ++i) {
    const auto sample = dataset->get(i);
    auto trace = read(sample.image, dataset->entryName(i));
    trace.truthBoxes = dataset->charBoxes(i);
    try {
      core::data::checkCharBoxesInImage(trace.truthBoxes, sample.image.width, sample.image.height);
    } catch (const core::Error& e) {
      throw core::Error(dataset->entryName(i) + ": " + e.what());
    }
    if (!trace.truthBoxes.empty()) ++withBoxes;
    char stem[32];
    std::snprintf(stem, sizeof stem, "%09zu", i);
    for (const auto f : formats)
      writeText(dir / (std::string(stem) + core::ocrFileSuffix(f)), core::toOcrDocument(trace, f));
    if (!formats.empty()) replaced.add(trace);
    if (json) writeText(dir / (std::string(stem) + ".json"), trace.toJson() + "\n");
  }
  if (!replaced.warning().empty())
    std::cerr << "warning: " << dir.string() << ": " << replaced.warning() << "\n";
  std::vector<std::string> kinds;
  for (const auto f : formats) kinds.push_back(formatLabel(f));
  if (json) kinds.push_back("JSON");
  std::string written;
  for (size_t k = 0; k < kinds.size(); ++k)
    written += (k == 0 ? "" : k + 1 == kinds.size() ? " and " : ", ") + kinds[k];
  std::cout << "traced " << n << " entries of " << dataset->describe() << " into " << dir.string()
            << " (" << written << "; " << withBoxes << " with true character boxes)\n";
  return 0;
}

// trace --layout's own checks of the command line: one IMAGE, no other output, and page
// files that replace neither an input nor (without --force) a file.
void checkLayoutArguments(const CliArgs& a) {
  if (a.positionals().size() != 1)
    throw UsageError("trace --layout FILE.xml needs exactly one IMAGE");
  if (a.has("csv") || a.has("hocr") || a.has("out"))
    throw UsageError(
        "trace --layout prints the lines as a table or, with --json, as JSON, and exports the "
        "page with --page OUT.xml (PAGE-XML) or --alto OUT.xml (ALTO)");
  const std::string imagePath = a.positionals()[0];
  const std::string model = a.required("model");
  const std::vector<std::string> inputs = {a.value("layout"), imagePath, model};
  if (a.has("page") && a.has("alto") &&
      fs::absolute(a.value("page")).lexically_normal() ==
          fs::absolute(a.value("alto")).lexically_normal())
    throw UsageError("--page and --alto name the same file");
  for (const char* f : {"page", "alto"})
    if (a.has(f)) {
      if (a.value(f).empty()) throw UsageError(std::string("--") + f + " needs a file name");
      const std::string role = f == std::string("page") ? "PAGE-XML page" : "ALTO page";
      core::data::checkOutputPath(a.value(f), role, inputs, a.has("force"));
      std::error_code ec;
      if (fs::exists(a.value(f), ec) && !a.has("force"))
        throw core::Error(a.value(f) + ": already exists; refusing to replace it with the " + role +
                          " (choose another name, or add --force)");
    }
}

// One line of a layout in --json: its reading, each step's token and cut, its alignment.
nlohmann::json layoutLineJson(const core::LayoutLine& l, const core::LineReading& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < r.trace.steps.size(); ++i) {
    const auto& st = r.trace.steps[i];
    nlohmann::json cut = nlohmann::json::array();
    if (i < r.cuts.size())
      for (const auto& p : r.cuts[i]) cut.push_back({p.x, p.y});
    steps.push_back(
        {{"token", st.token}, {"prob", st.prob}, {"columns", st.columns}, {"cut", cut}});
  }
  nlohmann::json line = {{"id", l.id},
                         {"region", l.regionId},
                         {"baseline", !l.baseline.empty()},
                         {"prediction", r.trace.prediction},
                         {"confidence", r.trace.confidence},
                         {"steps", steps}};
  if (r.empty) line["empty"] = r.why;
  if (!r.trace.alignment.empty())
    line["alignment"] = nlohmann::json::parse(r.trace.alignment.toJson(-1));
  return line;
}

// --page and --alto: the layout with the lines' readings, in PAGE-XML and ALTO.
void exportLayoutPage(const CliArgs& a, const core::PageLayout& layout,
                      const std::vector<core::LineReading>& readings, const std::string& model,
                      const std::string& imagePath) {
  core::PageExportOptions exportOptions;
  for (const auto& r : readings)
    if (!r.trace.modelDescription.empty()) {
      exportOptions.modelDescription = r.trace.modelDescription;
      break;
    }
  if (exportOptions.modelDescription.empty()) exportOptions.modelDescription = model;
  auto& note = a.has("json") ? std::cerr : std::cout;  // --json keeps stdout JSON
  if (a.has("page") || a.has("alto")) {
    core::XmlReplacements replaced;
    for (const auto& r : readings) replaced.add(r.trace);
    if (!replaced.warning().empty())
      std::cerr << "warning: " << imagePath << ": " << replaced.warning() << "\n";
  }
  if (a.has("page")) {
    writeText(a.value("page"), core::toPageXmlPage(layout, readings, exportOptions));
    note << "wrote the page as PAGE-XML 2019 to " << a.value("page") << "\n";
  }
  if (a.has("alto")) {
    writeText(a.value("alto"), core::toAltoPage(layout, readings, exportOptions));
    note << "wrote the page as ALTO v4 to " << a.value("alto") << "\n";
  }
}

// `trace --layout FILE.xml IMAGE`: every text line of a PAGE-XML or ALTO layout in its reading
// order, each extracted as kraken extracts it (a baseline with its boundary polygon, else the box
// of its coordinates) and read by the model; --json prints {"lines": [...]}.
int traceLayout(const CliArgs& a, const core::TraceOptions& opt) {
  checkLayoutArguments(a);
  const std::string imagePath = a.positionals()[0];
  const std::string model = a.required("model");
  const auto layout = core::readPageLayout(a.value("layout"));
  if (core::isTesseractSpec(model)) throw UsageError("--layout reads lines with a model file");
  std::vector<core::LineReading> readings;
  const auto session =
      core::ModelSession::open(model, app::importOptions(a, /*formatIsOutput=*/true));
  std::string warning;
  const auto page = core::readImageWarning(imagePath, /*keepColour=*/true, warning);
  if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : layout.lines) {
    core::LineReading r;
    core::TraceOptions lineOptions = opt;
    if (a.has("align")) lineOptions.truth = l.text;  // the line's transcription, if any
    try {  // a line with neither a usable baseline nor a box is named, and the others read
      r = session->traceLine(page, core::krakenLineOf(l, layout.textDirection),
                             imagePath + "#" + l.id, lineOptions);
    } catch (const core::Error& e) {
      r.empty = true;
      r.why = e.what();
    }
    readings.push_back(r);
    if (!a.has("json")) {
      std::cout << (l.id.empty() ? "-" : l.id) << "\t" << r.trace.prediction
                << (r.empty ? "\t(" + r.why + ")" : "") << "\n";
      continue;
    }
    lines.push_back(layoutLineJson(l, r));
  }
  if (a.has("json"))
    std::cout << nlohmann::json{{"image", imagePath},
                                {"layout", a.value("layout")},
                                {"format", layout.format},
                                {"lines", lines}}
                     .dump(2)
              << "\n";
  exportLayoutPage(a, layout, readings, model, imagePath);
  return 0;
}

// trace's options; with --layout, --page and --alto take the names of the page files.
CliArgs parseTraceArgs(const std::vector<std::string>& args, bool withLayout) {
  std::set<std::string> valued = {"model",   "out",   "seed",   "threads", "beam", "hypothesis",
                                  "dataset", "limit", "format", "layout",  "truth"};
  std::set<std::string> flags = {"json",   "csv",       "hocr",  "alto", "page",
                                 "sample", "all-steps", "force", "align"};
  if (withLayout)
    for (const char* f : {"alto", "page"}) {
      flags.erase(f);
      valued.insert(f);
    }
  return CliArgs(args, app::withImportOptions(valued), app::withImportFlags(flags));
}

// The options that exclude each other: one output for one image, --dataset's formats, --truth.
void checkTraceOutputs(const CliArgs& a, bool withLayout, int outputs) {
  if (outputs > 1 && !a.has("dataset") && !withLayout)
    throw UsageError("--json, --csv, --hocr, --alto and --page choose one output; give one");
  if (a.has("dataset") && (a.has("csv") || a.has("alto") || a.has("page")))
    throw UsageError("trace --dataset writes --format hocr|alto|page and --json");
  if (a.has("format") && !a.has("dataset"))
    throw UsageError("--format goes with --dataset; for one image give --hocr, --alto or --page");
  if (a.has("truth") && (a.has("dataset") || withLayout))
    throw UsageError("--truth aligns one IMAGE; --layout --align aligns each line's own text");
  if (a.has("align") && !a.has("truth") && !withLayout)
    throw UsageError("--align needs --truth TEXT (or --layout, whose lines hold their text)");
}

// One image's trace on stdout, in the output chosen (the table by default).
void printTrace(const CliArgs& a, const core::Trace& trace) {
  if (a.has("json")) {
    std::cout << trace.toJson() << "\n";
  } else if (a.has("csv")) {
    std::cout << trace.toCsv();
  } else if (a.has("hocr")) {
    std::cout << trace.toHocr();
  } else if (a.has("alto")) {
    std::cout << core::toAlto(trace);
  } else if (a.has("page")) {
    std::cout << core::toPageXml(trace);
  } else {
    std::cout << trace.toTable();
    if (!trace.alignment.empty()) {
      std::cout << "\n" << trace.alignment.toTable();
      if (a.has("align")) std::cout << "\n" << trace.alignment.framesTable();
    }
  }
}

// --out DIR: each step's patch (and its STN patches), the trace as JSON, hOCR, ALTO and PAGE.
void writeStepPatches(const fs::path& dir, const core::Trace& trace, int outputs) {
  createFolder(dir);
  for (size_t t = 0; t < trace.steps.size(); ++t) {
    const auto& s = trace.steps[t];
    char stem[64];
    std::snprintf(stem, sizeof stem, "step%02zu", t);
    if (s.patch.width == 0) continue;  // Tesseract's steps have no patch
    core::writePng(s.patch,
                   (dir / (std::string(stem) + "_" + safeName(s.token) + ".png")).string());
    for (size_t k = 0; k < s.stn.size(); ++k)
      core::writePng(
          s.stn[k].patch,
          (dir / (std::string(stem) + "_stn" + std::to_string(k + 1) + ".png")).string());
  }
  writeText(dir / "trace.json", trace.toJson() + "\n");
  for (const auto f : {core::OcrFormat::Hocr, core::OcrFormat::Alto, core::OcrFormat::Page})
    writeText(dir / ("trace" + core::ocrFileSuffix(f)), core::toOcrDocument(trace, f));
  if (outputs == 0)
    std::cout << "\nwrote " << trace.steps.size() << " step patches to " << dir.string() << "\n";
}

int cmdTrace(const std::vector<std::string>& args) {
  // With --layout, --page and --alto name the files the page is exported to.
  const bool withLayout = std::any_of(args.begin(), args.end(), [](const std::string& s) {
    return s == "--layout" || s.rfind("--layout=", 0) == 0;
  });
  const CliArgs a = parseTraceArgs(args, withLayout);
  setComputeThreads(a.intValue("threads", 0));
  const core::TraceOptions opt = traceOptions(a);
  const int outputs = int(a.has("json")) + int(a.has("csv")) + int(a.has("hocr")) +
                      int(a.has("alto")) + int(a.has("page"));
  checkTraceOutputs(a, withLayout, outputs);
  if (a.has("dataset")) return traceDataset(a, openReader(a, opt));
  if (a.has("layout")) return traceLayout(a, opt);
  if (a.positionals().size() != 1) throw UsageError("trace needs exactly one IMAGE");
  const std::string imagePath = a.positionals()[0];
  if (a.has("out")) core::data::checkOutputFolder(a.value("out"), "step patches", a.has("force"));
  const auto read = openReader(a, opt);
  std::string warning;  // a truncated JPEG is traced, and said
  const auto image = core::readImageWarning(imagePath, /*keepColour=*/true, warning);
  if (!warning.empty()) std::cerr << "warning: " << warning << "\n";
  auto trace = read(image, imagePath);
  if (!opt.truth.empty() && trace.alignment.empty()) {  // an engine read it: no frames
    trace.alignment.truth = opt.truth;
    trace.alignment.error = "forced alignment needs a CTC model, not " + a.value("model");
  }

  printTrace(a, trace);
  if (a.has("align") && !trace.alignment.error.empty()) {
    std::cerr << "error: cannot align \"" << opt.truth << "\": " << trace.alignment.error << "\n";
    return 1;
  }
  if (a.has("hocr") || a.has("alto") || a.has("page") || a.has("out")) {
    const std::string replaced = core::xmlReplacementWarning(trace);
    if (!replaced.empty()) std::cerr << "warning: " << replaced << "\n";
  }
  if (a.has("out")) writeStepPatches(a.value("out"), trace, outputs);
  return 0;
}

int cmdInitModel(const std::vector<std::string>& args) {
  std::set<std::string> valued = {"model",   "context",    "stns",          "width",
                                  "charset", "max-length", "scale",         "seed",
                                  "out",     "patch-w",    "coarse-patch-w"};
  valued.insert(app::kStageOptions.begin(), app::kStageOptions.end());
  std::set<std::string> flags = {"reference", "case-insensitive", "affine-first-stn", "force"};
  flags.insert(app::kStageFlags.begin(), app::kStageFlags.end());
  const CliArgs a(args, valued, flags);
  if (!a.positionals().empty()) throw UsageError("init-model takes no positional arguments");
  const double width = a.doubleValue("width", 1.0);
  core::ModelConfig c =
      a.has("model") ? core::modelVariant(a.value("model", ""), width).config : core::ModelConfig();
  c.width = width;
  app::applyStageOptions(a, c);
  if (!a.has("model") && !a.has("attention") && !a.has("prediction"))
    throw UsageError("init-model needs --model NAME, --attention or --prediction");
  const bool sharpOptions = a.has("context") || a.has("stns") || a.has("reference") ||
                            a.has("patch-w") || a.has("coarse-patch-w") ||
                            a.has("affine-first-stn");
  if (sharpOptions && c.attention != "sharp")
    throw UsageError(
        "--context, --stns, --reference and the patch options are for --attention "
        "sharp (this model's glimpse is " +
        (c.isCtc() ? std::string("none: it is a CTC model") : c.attention) + ")");
  c.context = core::contextFromString(a.value("context", core::toString(c.context)));
  c.numStns = a.intValue("stns", c.numStns);
  if (a.has("affine-first-stn")) c.firstStnTranslationOnly = false;
  if (a.has("reference")) c.reference = true;
  if (a.has("charset")) core::checkCharsetUtf8(a.value("charset"), "--charset");
  c.charset = a.value("charset", c.charset);
  if (a.has("case-insensitive")) c.caseInsensitive = true;
  c.maxLength = a.intValue("max-length", c.maxLength);
  c.patchW = a.intValue("patch-w", c.patchW);
  c.coarsePatchW = a.intValue("coarse-patch-w", c.coarsePatchW);
  c.preprocessing.regionScale = a.doubleValue("scale", c.numStns == 2 ? 2.0 : 1.8);
  const std::string out = a.required("out");
  core::data::checkOutputPath(out, "new model", {}, a.has("force"));
  auto session = core::ModelSession::create(c, static_cast<uint64_t>(a.intValue("seed", 0)));
  session->save(out);
  std::cout << "wrote " << out << ": " << c.describe() << " (random weights)\n";
  return 0;
}

int cmdFormats(const std::vector<std::string>& args) {
  const CliArgs a(args, {}, {});
  std::cout << app::importUsage() << "EasyOCR's released recognisers (--easyocr NAME):\n";
  for (const auto& m : core::easyOcrReleasedModels())
    std::cout << "  " << m.name << " (" << m.filename << ", generation " << m.generation << ", "
              << core::splitUtf8(m.characters).size() << " characters)\n";
  return 0;
}

void printImportReport(const core::ImportReport& r) {
  std::cout << "format: " << r.format << " (" << r.why << ")\n";
  if (!r.description.empty()) std::cout << r.description << "\n";
  for (const auto& note : r.assumed) std::cout << "  assumed: " << note << "\n";
}

int cmdImport(const std::vector<std::string>& args) {
  const CliArgs a(args, app::withImportOptions({"out"}), app::withImportFlags({"force"}));
  if (a.positionals().size() != 1) throw UsageError("import needs exactly one model FILE");
  const std::string in = a.positionals()[0];
  const std::string out = a.required("out");
  core::refuseEngine(in, core::kEngineNothingToImport, "import converts a model file to .fvm");
  // Every file the import reads is an input (EasyOCR's yaml beside the .pth or --yaml's).
  const auto inputs = app::modelInputs({in}, app::importOptions(a), out);
  core::data::checkOutputPath(out, "imported model", inputs, a.has("force"));
  core::ImportReport report;
  auto loaded = core::loadModelFile(in, app::importOptions(a), &report);
  std::cout << "read " << in << "\n";
  printImportReport(report);
  const std::string provenance = report.provenanceJson.empty() ? "{}" : report.provenanceJson;
  core::saveCheckpoint(out, loaded.model, "{\"imported_from\": " + provenance + "}");
  std::cout << "wrote " << out << ": " << loaded.config.describe() << "\n";
  return 0;
}

int cmdAverage(const std::vector<std::string>& args) {
  const CliArgs a(args, {"out"}, {"force"});
  const auto& inputs = a.positionals();
  if (inputs.size() < 2) throw UsageError("average needs at least two model files");
  const std::string out = a.required("out");
  core::data::checkOutputPath(out, "averaged model", inputs, a.has("force"));
  const auto r = core::train::averageModelFiles(inputs, out);
  std::cout << "averaged " << r.files.size() << " checkpoints";
  std::string its;
  for (auto i : r.iterations)
    if (i >= 0) its += (its.empty() ? "" : ", ") + std::to_string(i);
  if (!its.empty()) std::cout << " (iterations " << its << ")";
  std::cout << ": " << r.tensors << " tensors averaged";
  if (r.kept > 0) std::cout << ", " << r.kept << " integer buffers from the first";
  std::cout << "\nwrote " << out << ": " << r.description << "\n";
  return 0;
}

int cmdInfo(const std::vector<std::string>& args) {
  const CliArgs a(args, app::withImportOptions({"model"}), app::withImportFlags({}));
  const std::string path = a.required("model");
  {  // which format, and why, before the import (which may refuse the file)
    core::FileProbe probe(path);
    const auto r = core::recogniseModelFile(probe, app::importOptions(a));
    std::cout << "format: " << r.format->name << " (" << r.why << ")\n";
    if (r.format->name == "dtrb") {  // what the file says before a charset is chosen
      const auto arch = core::inspectDtrb(path);
      if (!arch.assumption.empty())
        std::cout << "charset if none is given: " << arch.assumption << "\n";
    }
  }
  core::ImportReport report;
  auto session = core::ModelSession::open(path, app::importOptions(a), &report);
  if (!report.description.empty()) std::cout << report.description << "\n";
  for (const auto& note : report.assumed) std::cout << "  assumed: " << note << "\n";
  std::cout << session->config().describe() << "\n";
  if (session->config().features == "vgsl")  // a kraken network: its layers
    std::cout << core::parseVgsl(session->config().kraken.vgsl, path).describe();
  for (const auto& [metric, points] :
       session->storedHistory()) {  // what the file says of its training
    std::cout << "stored " << metric << " (" << points.size() << " evaluations):";
    for (const auto& p : points) std::cout << " " << p.step << ":" << p.value;
    std::cout << "\n";
  }
  std::cout << session->config().toJson() << "\n";
  return 0;
}

// `bench --model FILE --explain IMAGE`: integrated gradients for one decoding step (the middle
// one) and for every step of the reading, the median of --repeats runs.
int benchExplain(const CliArgs& a) {
  if (a.positionals().size() != 1) throw UsageError("bench --explain needs --model FILE and IMAGE");
  const int repeats = a.intInRange("repeats", 5, 1, 1000);
  core::AttributionOptions o;
  o.method = core::AttributionMethod::IntegratedGradients;
  o.igSteps = a.intInRange("ig-steps", 32, 1, 4096);
  o.batch = a.intInRange("batch", 32, 1, 4096);
  core::refuseEngine(a.required("model"), core::kEngineNoGradients,
                     "bench --explain times a model file's explanation");
  auto session = core::ModelSession::open(a.required("model"), app::importOptions(a));
  const auto image = core::readImage(a.positionals()[0], /*keepColour=*/true);
  const auto trace = session->trace(image, a.positionals()[0]);
  if (trace.steps.empty()) throw core::Error(a.positionals()[0] + ": the model read nothing");
  // Wall-clock and CPU time (all threads: on a machine others load, the CPU time is the work
  // itself, and an idle machine's wall time lies between it and it divided by the threads).
  double cpuMs = 0;
  std::vector<core::RouteUse> routes;  // the kernels of the first (warm-up) explanation
  bool recorded = false;
  auto median = [&](std::vector<int> steps) {
    std::vector<double> t, cpu;
    o.steps = std::move(steps);
    {
      std::optional<core::RouteRecording> recording;
      if (!recorded) recording.emplace();
      session->explain(image, trace, o);  // warm-up
      if (!recorded) routes = core::recordedRoutes();
      recorded = true;
    }
    for (int r = 0; r < repeats; ++r) {
      const std::clock_t c0 = std::clock();
      t.push_back(session->explain(image, trace, o).seconds);
      cpu.push_back(1000.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    }
    std::sort(t.begin(), t.end());
    std::sort(cpu.begin(), cpu.end());
    cpuMs = cpu[cpu.size() / 2];
    return 1000.0 * t[t.size() / 2];
  };
  const int middle = static_cast<int>(trace.steps.size()) / 2;
  const double one = median({middle});
  const double oneCpu = cpuMs;
  // --one-step: the middle step alone (a full-size model's every step takes minutes).
  const bool everyStep = !a.has("one-step");
  const double all = everyStep ? median({}) : 0.0;
  const double allCpu = everyStep ? cpuMs : 0.0;
  if (a.has("json")) {
    // Without every step's figure (--one-step) its keys are null.
    const auto ms = [&](double v) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f", v);
      return everyStep ? std::string(buf) : std::string("null");
    };
    std::printf(
        "{\"model\": \"%s\", \"threads\": %d, \"ig_steps\": %d, \"steps\": %zu, "
        "\"one_step_ms\": %.1f, \"one_step_cpu_ms\": %.1f, \"all_steps_ms\": %s, "
        "\"all_steps_cpu_ms\": %s, \"cpu\": \"%s\", \"routes\": %s}\n",
        a.value("model").c_str(), core::computeThreads(), o.igSteps, trace.steps.size(), one,
        oneCpu, ms(all).c_str(), ms(allCpu).c_str(), core::cpuFeatureSummary().c_str(),
        core::routesJson(routes).c_str());
  } else {
    std::printf(
        "cpu: %s\n"
        "%s (%s), %d threads, integrated gradients with %d steps (batch %d), median of %d:\n"
        "  one decoding step: %.1f ms (CPU %.1f ms)\n",
        core::cpuFeatureSummary().c_str(), a.value("model").c_str(),
        session->config().stageString().c_str(), core::computeThreads(), o.igSteps, o.batch,
        repeats, one, oneCpu);
    if (everyStep)
      std::printf("  all %zu steps of \"%s\": %.1f ms (CPU %.1f ms)\n", trace.steps.size(),
                  trace.prediction.c_str(), all, allCpu);
    std::printf("kernel routes (the first explanation of one step):\n%s",
                core::formatRoutes(routes).c_str());
  }
  return 0;
}

// `bench --kraken-page`: lines per second reading a 30-line page with a kraken-sized network
// (kraken's default recognition spec, 120 px lines, 3 BiLSTMs of 200, random weights), each line
// extracted through kraken's baseline path and read as kraken reads it, at 1 and 2 threads (or
// --threads N). The page is synthetic: 30 lines of ink strokes, 2400 x 90 px each.
int benchKrakenPage(const CliArgs& a) {
  const int repeats = a.intInRange("repeats", 3, 1, 1000);
  std::string charset;
  nlohmann::json codec = nlohmann::json::object();
  for (int c = 33; c < 127; ++c) {
    charset += static_cast<char>(c);
    codec[std::string(1, static_cast<char>(c))] = {c - 32};
  }
  const auto config = core::krakenModelConfig(core::krakenDefaultSpec(95), codec.dump(), false, 16,
                                              "kraken default spec");
  const auto session = core::ModelSession::create(config, 7);
  const int lines = 30, lineH = 90, pageW = 2400;
  core::GreyImage page(pageW, lines * lineH,
                       std::vector<uint8_t>(size_t(pageW) * lines * lineH, 235));
  uint32_t rng = 12345;
  auto next = [&] { return rng = rng * 1664525u + 1013904223u; };
  std::vector<core::KrakenLineSpec> specs;
  for (int l = 0; l < lines; ++l) {
    const int top = l * lineH, base = top + 60;
    for (int x = 40; x < pageW - 40; x += 6 + static_cast<int>(next() % 10)) {  // strokes
      const int h = 15 + static_cast<int>(next() % 30), w = 2 + static_cast<int>(next() % 3);
      for (int y = base - h; y < base; ++y)
        for (int dx = 0; dx < w; ++dx) page.pixels[size_t(y) * pageW + x + dx] = 20;
    }
    specs.push_back(
        core::krakenBaselineLine({{40, double(base)}, {double(pageW - 40), double(base)}},
                                 {{40, double(top + 8)},
                                  {double(pageW - 40), double(top + 8)},
                                  {double(pageW - 40), double(top + lineH - 4)},
                                  {40, double(top + lineH - 4)}}));
  }
  std::vector<int> threads = {1, 2};
  if (a.has("threads")) threads = {core::computeThreads()};
  if (!a.has("json"))
    std::printf("kraken page: %d lines of %dx%d px, %s; OpenBLAS kernels %s\n", lines, pageW, lineH,
                config.describe().c_str(), core::blasKernels().c_str());
  nlohmann::json rows = nlohmann::json::array();
  for (int t : threads) {
    if (!a.has("threads")) setComputeThreads(t);
    std::vector<double> secs;
    for (int r = 0; r <= repeats; ++r) {  // the first pass warms up
      const auto t0 = std::chrono::steady_clock::now();
      for (const auto& s : specs) session->traceLine(page, s, "bench");
      const double dt =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) secs.push_back(dt);
    }
    std::sort(secs.begin(), secs.end());
    const double med = secs[secs.size() / 2];
    rows.push_back({{"threads", t}, {"page_s", med}, {"lines_per_s", lines / med}});
    if (!a.has("json"))
      std::printf("%d thread%s: %.2f s a page, %.1f lines/s\n", t, t > 1 ? "s" : "", med,
                  lines / med);
  }
  if (a.has("json")) std::cout << nlohmann::json{{"kraken_page", rows}}.dump(2) << "\n";
  return 0;
}

// `bench --model FILE`: one model file (a .fvm or a DTRB .pth), greedy inference.
int benchModelCommand(const CliArgs& a) {
  const int batch = a.intValue("batch", 32), repeats = a.intValue("repeats", 20);
  if (batch < 1 || repeats < 1) throw UsageError("--batch and --repeats must be positive");
  core::refuseEngine(a.value("model"), core::kEngineNothingToImport,
                     "bench --model times a model file's network; eval --model " +
                         a.value("model") + " reads with the engine");
  const auto r = core::benchModelFile(a.value("model"), app::importOptions(a), batch, repeats);
  if (a.has("json")) {
    std::printf(
        "{\"model\": \"%s\", \"cpu\": \"%s\", \"threads\": %d, \"batch1_ms\": %.3f, "
        "\"batch\": %d, \"batch_ms\": %.3f, \"routes\": %s}\n",
        a.value("model").c_str(), core::cpuFeatureSummary().c_str(), r.threads, r.latencyMs,
        r.batch, r.batchMs, core::routesJson(r.routes).c_str());
  } else {
    std::printf(
        "cpu: %s\n%s\n%s, %d threads: batch 1 %.2f ms, batch %d %.1f ms (%.0f images/s)\n"
        "kernel routes (one pass at each batch):\n%s",
        core::cpuFeatureSummary().c_str(), a.value("model").c_str(), r.description.c_str(),
        r.threads, r.latencyMs, r.batch, r.batchMs, 1000.0 * r.batch / r.batchMs,
        core::formatRoutes(r.routes).c_str());
  }
  return 0;
}

int cmdBench(const std::vector<std::string>& args) {
  const CliArgs a(
      args,
      app::withImportOptions(
          {"width", "batch", "repeats", "only", "threads", "device", "beam", "model", "ig-steps"}),
      app::withImportFlags({"no-train", "json", "no-bf16", "explain", "one-step", "kraken-page"}));
  setComputeThreads(a.intValue("threads", 0));
  if (a.has("explain")) return benchExplain(a);
  if (a.has("kraken-page")) return benchKrakenPage(a);
  if (a.has("model")) return benchModelCommand(a);
  core::BenchOptions opt;
  opt.width = a.doubleValue("width", 1.0);
  opt.batch = a.intValue("batch", 32);
  opt.repeats = a.intValue("repeats", 20);
  opt.train = !a.has("no-train");
  opt.bf16 = !a.has("no-bf16");
  opt.device = a.value("device", "cpu");
  opt.beamWidth = a.intValue("beam", 5);
  if (opt.batch < 1 || opt.repeats < 1) throw UsageError("--batch and --repeats must be positive");
  if (opt.beamWidth < 0 || opt.beamWidth > core::kMaxBeamWidth)
    throw UsageError("--beam must be between 0 (skip) and " + std::to_string(core::kMaxBeamWidth));
  const std::string device = core::benchDeviceDescription(opt.device);
  const bool cuda = opt.device != "cpu";
  std::string only = a.value("only");
  for (size_t pos = 0; !only.empty() && pos != std::string::npos;) {
    const size_t comma = only.find(',', pos);
    opt.only.push_back(only.substr(pos, comma == std::string::npos ? comma : comma - pos));
    pos = comma == std::string::npos ? comma : comma + 1;
  }
  if (!a.has("json"))
    std::printf(
        "cpu: %s\n"
        "device %s, width %.3g, batch %d; convolutions: %s inference, %s training "
        "(naive: the straightforward fp32 implementation, W x recomputed every step)\n\n"
        "%-22s %12s %12s %14s %14s %16s\n",
        core::cpuFeatureSummary().c_str(), device.c_str(), opt.width, opt.batch,
        cuda                       ? "cuDNN"
        : core::fastConvolutions() ? "oneDNN prepacked"
                                   : "plain",
        opt.train && opt.bf16 && (cuda || core::cpuHasNativeBf16()) ? "bf16" : "fp32", "mechanism",
        "latency ms",
        opt.beamWidth >= 2 ? ("beam" + std::to_string(opt.beamWidth) + " ms").c_str() : "-",
        "infer img/s", "train img/s", "naive train img/s");
  const auto results = core::runBenchmarks(opt);
  if (a.has("json")) std::printf("[\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (a.has("json"))
      std::printf(
          "  {\"name\": \"%s\", \"cpu\": \"%s\", \"device\": \"%s\", \"width\": %g, \"threads\": "
          "%d, "
          "\"latency_ms\": %.3f, \"beam_width\": %d, \"beam_latency_ms\": %.3f, "
          "\"batch\": %d, \"infer_images_per_s\": %.1f, \"train_images_per_s\": %.1f, "
          "\"naive_train_images_per_s\": %.1f, \"train_bf16\": %s, \"routes\": %s}%s\n",
          r.name.c_str(), core::cpuFeatureSummary().c_str(), r.device.c_str(), r.width, r.threads,
          r.latencyMs, r.beamWidth, r.beamLatencyMs, r.batch, r.batchImagesPerS, r.trainImagesPerS,
          r.trainNaiveImagesPerS, r.bf16 ? "true" : "false", core::routesJson(r.routes).c_str(),
          i + 1 < results.size() ? "," : "");
    else
      std::printf("%-22s %12.2f %12.2f %14.1f %14.1f %16.1f\n", r.name.c_str(), r.latencyMs,
                  r.beamLatencyMs, r.batchImagesPerS, r.trainImagesPerS, r.trainNaiveImagesPerS);
  }
  if (a.has("json")) std::printf("]\n");
  if (results.empty()) throw UsageError("--only matched no mechanism");
  if (!a.has("json"))
    for (const auto& r : results)
      std::printf("\n%s: kernel routes (one pass of each measurement)\n%s", r.name.c_str(),
                  core::formatRoutes(r.routes).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  core::chooseBlasKernels(argv);  // first: it may start the process again (base/blas_kernels.h)
  core::tuneHeapForTensors();     // before the first tensor: base/heap_tuning.h
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  app::installCrashReport(cmd);
  for (const auto& a : args)
    if (a == "--help" || a == "-h") {
      std::cout << (cmd == "data" ? std::string("foveal-cli data commands:\n") + app::kDataUsage
                                  : std::string(kUsage));
      return 0;
    }
  try {
    if (cmd == "trace") return cmdTrace(args);
    if (cmd == "init-model") return cmdInitModel(args);
    if (cmd == "info") return cmdInfo(args);
    if (cmd == "import") return cmdImport(args);
    if (cmd == "formats") return cmdFormats(args);
    if (cmd == "average") return cmdAverage(args);
    if (cmd == "bench") return cmdBench(args);
    if (cmd == "data") return app::runDataCommand(args);
    if (cmd == "train") return app::runTrainCommand(args);
    if (cmd == "runs") return app::runRunsCommand(args);
    if (cmd == "bench-train") return app::runTrainBenchCommand(args);
    if (cmd == "eval") return app::runEvalCommand(args);
    if (cmd == "explain") return app::runExplainCommand(args);
    if (cmd == "version") {
      std::cout << "foveal-cli " << FOVEAL_VERSION << "\n";
      return 0;
    }
    std::cerr << "foveal-cli: unknown command '" << cmd << "' (see foveal-cli --help)\n";
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "foveal-cli " << cmd << ": " << e.what() << " (see foveal-cli --help)\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "foveal-cli " << cmd << ": " << e.what() << " (see foveal-cli --help)\n";
    return 2;
  } catch (const core::Error& e) {
    std::cerr << "foveal-cli " << cmd << ": error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "foveal-cli " << cmd << ": internal error: " << e.what() << "\n";
    return 1;
  }
}
