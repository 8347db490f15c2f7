#include "cli_eval.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "base/atomic_file.h"
#include "base/error.h"
#include "cli_args.h"
#include "cli_model.h"
#include "data/output_guard.h"
#include "engines/tesseract_engine.h"
#include "trace/model_session.h"
#include "train/calibration.h"
#include "train/cut_accuracy.h"
#include "train/doubt_eval.h"
#include "train/error_analysis.h"
#include "train/evaluation.h"
#include "train/faithfulness_eval.h"
#include "train/reader_evaluation.h"
#include "train/train_config.h"

// Ctrl-C or SIGTERM during `eval --faithfulness`: finish the image in hand and print the table
// of the images done (a second Ctrl-C ends the process at once).
static std::atomic<bool> g_faithfulnessStop{false};
extern "C" void onFaithfulnessStop(int sig) {
  g_faithfulnessStop = true;
  if (sig == SIGINT) std::signal(SIGINT, SIG_DFL);
}

namespace foveal::app {

const char* kEvalUsage =
    R"(  eval        --model FILE --data SPEC[;SPEC...] [SPEC...] [--json] [--failures FILE]
              [--limit N] [--batch N] [--scoring auto|exact|text] [--device D] [--threads N]
              [--beam N] [--skip-bad] [--force]
              word accuracy, normalised edit distance and mean attention entropy, per dataset
              and per label length; where the data knows its character boxes, localisation:
              pointing accuracy (steps whose focus lies in their character's box) and mean IoU
              of step box and true box, over all images and the correctly read ones ("ok"); --failures writes the misread images (TSV); an entry the
              model cannot read (image, label outside its charset or too long) stops the
              command naming it, unless --skip-bad (then counted per reason); an endless
              stream (split=stream) needs --limit
              --model FILE[,FILE...] --data SPEC --errors DIR [--limit N] [--batch N]
              error analysis of one dataset read by each model: writes DIR/table.csv (one
              row per image: truth, each model's reading, confidence, edit distance, CER,
              entropy), by-length.csv, by-character.csv, confusion-MODEL.csv and .svg (truth
              x read character, insertions and deletions included) and summary.txt; entries
              a model cannot read are skipped and counted; a DIR that already holds files is
              refused unless --force
              --model FILE[,FILE...] --digit-protocol [--limit N] [--json] [--beam N]
              the 5 lengths x normal/rotated digit test sets in the layout of Table 1, then
              pointing accuracy in the same layout
              --model FILE[,FILE...] --data SPEC --faithfulness [--methods LIST] [--limit N]
              [--ig-steps N] [--points N] [--profile N] [--json]
              does each map explain the reading? per map (LIST, comma-separated, default
              attention,ig,random; also saliency, grad-input, occlusion; random: one map per
              image, every step's floor) over every character step: deletion and insertion
              AUC (RISE; --points fractions, default 11), pointing and weighting games against
              the true boxes, rank correlation with attention
              (a DTRB .pth as --model: see import); progress on stderr every 10 s; Ctrl-C
              stops and prints the table of the images done; --profile N adds the N
              costliest LibTorch operators with their input shapes (self time, every worker)
              --model FILE --data SPEC --calibration [--bins N] [--plot FILE.png|.svg]
              [--limit N] [--json]
              are the confidences calibrated? a reliability diagram of the line confidence
              (read right or not) and of each read character's probability (right or not, by
              the alignment the Errors page uses): per bin of confidence (N equal bins,
              default 10) the count, mean confidence and accuracy, and the expected and
              maximum calibration errors (ECE, MCE); --plot draws both diagrams
              --model FILE[,FILE...] --data SPEC --cuts [--limit N] [--json]
              character cuts against the true boxes (data that knows them: digits, words):
              per model the IoU, centre hits, width ratio and centre offset of a CTC model's
              greedy cuts and of its forced alignment of the truth, or of an attention
              model's step boxes, with the offset per third of the line (kraken #755, #756)
              --model tesseract:LANG[,psm=N][,chars=SET] evaluates Tesseract (libtesseract,
              LSTM engine; psm 7, one text line, by default) on the same data: its reading,
              its symbols' boxes as the steps' boxes (pointing, IoU); text scoring
              --model FILE[,FILE...] --data SPEC[;SPEC...] --doubt [--limit N] [--beam N]
              [--attribution METHOD] [--ig-steps N] [--no-end-steps] [--csv FILE]
              [--steps-csv FILE] [--plot FILE.png] [--json]
              which steps are likely wrong? every step's doubt signals (probability, margin,
              output entropy, attention entropy/peak/Gini/coverage, per head for PARSeq;
              beam_disagreement with --beam N; CTC columns along the emitting run;
              attribution_gini with --attribution, image_share with --attribution ig), each
              step labelled right or wrong against the truth (edit-distance alignment;
              a deletion marks the step after it; --no-end-steps: character steps
              only); per signal AUROC, balanced accuracy at
              the best threshold and the precision of the 5 % most doubtful steps, on half
              the images (by id), and a combined score (logistic regression) fitted on the
              other half, its weights printed; --csv: those figures, --steps-csv: every
              step's values, --plot: the ROC curves as a PNG
              CER: dinglehopper's, edits over truth characters (Levenshtein over NFC grapheme
              clusters of the raw reading and truth), pooled over the images
)";

namespace {

namespace tr = foveal::core::train;

// A model file, or Tesseract named by a tesseract:LANG[,psm=N] spec, on the datasets.
tr::EvalReport evaluateModelOrEngine(const std::string& model, const std::vector<std::string>& sets,
                                     const tr::EvalOptions& o) {
  if (!core::isTesseractSpec(model)) return tr::evaluateModelFile(model, sets, o);
  if (o.beamWidth > 1) throw std::invalid_argument("--beam is for Foveal models, not " + model);
  auto engine = core::TesseractEngine::open(core::parseTesseractSpec(model));
  auto report = tr::evaluateReader(
      model,
      [engine](const core::GreyImage& image, const std::string& source) {
        return engine->read(image, source);
      },
      sets, o);
  return report;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t at = s.find(sep, pos);
    const std::string part = s.substr(pos, at == std::string::npos ? at : at - pos);
    if (!part.empty()) out.push_back(part);
    if (at == std::string::npos) break;
    pos = at + 1;
  }
  return out;
}

// --model's list: FILE[,FILE...], where a tesseract:LANG,psm=N,chars=SET spec keeps its own
// options (a part "psm=..." or "chars=..." belongs to the Tesseract spec before it).
std::vector<std::string> splitModels(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& part : split(s, ',')) {
    const bool option = part.rfind("psm=", 0) == 0 || part.rfind("chars=", 0) == 0;
    if (option && !out.empty() && core::isTesseractSpec(out.back()))
      out.back() += "," + part;
    else
      out.push_back(part);
  }
  return out;
}

int runErrorAnalysis(const CliArgs& a, const tr::EvalOptions& eval) {
  if (a.has("digit-protocol") || a.has("failures"))
    throw std::invalid_argument("--errors goes with --data, not --digit-protocol or --failures");
  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.size() != 1)
    throw std::invalid_argument("--errors analyses one dataset: give exactly one --data SPEC");
  const std::vector<std::string> models = splitModels(a.required("model"));
  const std::string dir = a.value("errors");
  // The model files with the files each import reads (EasyOCR's yaml).
  std::vector<std::string> inputs = modelInputs(models, eval.importOptions, dir);
  inputs.push_back(sets.front());
  core::data::checkOutputPath(dir, "errors folder", inputs, a.has("force"));
  core::data::checkOutputFolder(dir, "error report", a.has("force"));
  tr::ErrorRunOptions o;
  o.limit = eval.limit;
  o.batchSize = eval.batchSize;
  o.scoring = eval.scoring;
  o.device = eval.device;
  o.beamWidth = eval.beamWidth;
  o.importOptions = eval.importOptions;
  const auto start = std::chrono::steady_clock::now();
  const auto analysis = tr::runErrorAnalysis(models, sets.front(), o);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto files = tr::writeErrorReport(analysis, dir);
  int64_t images = 0;  // read, over every model (the skipped entries are not read)
  for (const auto& m : analysis.models) images += m.overall.images;
  char speed[128];
  std::snprintf(speed, sizeof speed, "%.1f s (%.0f images/s, %d threads)", seconds,
                seconds > 0 ? static_cast<double>(images) / seconds : 0.0, core::computeThreads());
  std::cout << analysis.summary() << "\nanalysed " << images << " readings in " << speed
            << "\nwrote " << files.size() << " files to " << dir << "\n";
  return 0;
}

int runDoubt(const CliArgs& a, const tr::EvalOptions& eval) {
  if (a.has("digit-protocol") || a.has("failures") || a.has("errors") || a.has("faithfulness"))
    throw std::invalid_argument(
        "--doubt goes with --data, not --digit-protocol, --failures, --errors or "
        "--faithfulness");
  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.empty()) throw std::invalid_argument("--doubt needs --data SPEC");
  const std::vector<std::string> models = splitModels(a.required("model"));
  // The outputs are refused before the hours of reading, not after.
  for (const char* out : {"csv", "steps-csv", "plot"})
    if (a.has(out)) {
      std::vector<std::string> inputs = modelInputs(models, eval.importOptions, a.value(out));
      for (const auto& s : sets) inputs.push_back(s);
      core::data::checkOutputPath(a.value(out), std::string("--") + out + " file", inputs,
                                  a.has("force"));
    }
  tr::DoubtOptions o;
  o.limit = eval.limit;
  o.beamWidth = eval.beamWidth;
  o.scoring = eval.scoring;
  o.attribution = a.value("attribution", "");
  o.igSteps = a.intInRange("ig-steps", 16, 1, 4096);
  o.endSteps = !a.has("no-end-steps");
  o.importOptions = eval.importOptions;
  std::signal(SIGINT, onFaithfulnessStop);  // the same stop: the report of the images read
  std::signal(SIGTERM, onFaithfulnessStop);
  std::vector<tr::DoubtReport> reports;
  for (const auto& model : models)
    for (const auto& set : sets) {
      if (g_faithfulnessStop) break;
      const auto started = std::chrono::steady_clock::now();
      auto shown = started;
      o.progress = [&](int64_t done, int64_t total) {
        const auto now = std::chrono::steady_clock::now();
        const bool stop = g_faithfulnessStop;
        if (done == total || stop || now - shown >= std::chrono::seconds(10)) {
          shown = now;
          const double s = std::chrono::duration<double>(now - started).count();
          std::fprintf(stderr, "doubt of %s on %s: %lld / %lld images, %.1f s\n", model.c_str(),
                       set.c_str(), static_cast<long long>(done), static_cast<long long>(total), s);
        }
        return !stop;
      };
      reports.push_back(tr::evaluateDoubt(model, set, o));
    }
  if (reports.empty()) return 0;
  if (a.has("json")) {
    std::cout << "[";
    for (size_t i = 0; i < reports.size(); ++i)
      std::cout << (i ? ",\n" : "\n") << reports[i].toJson();
    std::cout << "\n]\n";
  } else {
    for (size_t i = 0; i < reports.size(); ++i)
      std::cout << (i ? "\n" : "") << reports[i].toTable();
  }
  std::string wrote;
  if (a.has("csv")) {
    std::string text;
    for (size_t i = 0; i < reports.size(); ++i) text += reports[i].summaryCsv(i == 0);
    core::writeFileAtomically(a.value("csv"), text, "doubt CSV file");
    wrote += " " + a.value("csv");
  }
  if (a.has("steps-csv")) {
    core::writeFileAtomically(a.value("steps-csv"), tr::doubtStepsCsv(reports),
                              "doubt steps CSV file");
    wrote += " " + a.value("steps-csv");
  }
  if (a.has("plot")) {
    tr::writeDoubtRocPlot(reports, a.value("plot"));
    wrote += " " + a.value("plot");
  }
  if (!wrote.empty() && !a.has("json")) std::cout << "\nwrote" << wrote << "\n";
  return 0;
}

int runCalibration(const CliArgs& a, const tr::EvalOptions& eval) {
  if (a.has("digit-protocol") || a.has("failures") || a.has("errors") || a.has("faithfulness") ||
      a.has("doubt"))
    throw std::invalid_argument(
        "--calibration goes with --data, not --digit-protocol, --failures, --errors, --doubt or "
        "--faithfulness");
  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.size() != 1)
    throw std::invalid_argument("--calibration measures one dataset: give exactly one --data SPEC");
  tr::CalibrationOptions o;
  o.bins = a.intInRange("bins", 10, 1, 1000);
  o.limit = eval.limit;
  o.scoring = eval.scoring;
  o.beamWidth = eval.beamWidth;
  o.importOptions = eval.importOptions;
  const std::string plot = a.value("plot", "");
  if (a.has("plot")) {  // refused before an hour of reading, not after
    if (plot.empty()) throw std::invalid_argument("--plot needs a file name (.png or .svg)");
    std::vector<std::string> inputs = modelInputs({a.required("model")}, eval.importOptions, plot);
    inputs.push_back(sets.front());
    core::data::checkOutputPath(plot, "reliability diagram", inputs, a.has("force"));
  }
  const auto report = tr::evaluateCalibration(a.required("model"), sets.front(), o);
  std::cout << (a.has("json") ? report.toJson() + "\n" : report.toTable());
  if (a.has("plot")) {
    tr::writeCalibrationPlot(report, plot);
    (a.has("json") ? std::cerr : std::cout) << "wrote the reliability diagram to " << plot << "\n";
  }
  return 0;
}

int runCuts(const CliArgs& a, const tr::EvalOptions& eval) {
  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.size() != 1)
    throw std::invalid_argument("--cuts measures one dataset: give exactly one --data SPEC");
  tr::CutOptions o;
  o.limit = eval.limit;
  o.importOptions = eval.importOptions;
  std::vector<tr::CutReport> reports;
  for (const auto& model : split(a.required("model"), ','))
    reports.push_back(tr::measureCuts(model, sets.front(), o));
  if (a.has("json")) {
    std::cout << "[";
    for (size_t i = 0; i < reports.size(); ++i)
      std::cout << (i ? ",\n" : "\n") << reports[i].toJson();
    std::cout << "\n]\n";
  } else {
    std::cout << "character cuts against the true boxes of " << sets.front() << "\n\n"
              << tr::cutTable(reports);
  }
  return 0;
}

int runFaithfulness(const CliArgs& a, const tr::EvalOptions& eval) {
  if (a.has("digit-protocol") || a.has("failures") || a.has("errors"))
    throw std::invalid_argument(
        "--faithfulness goes with --data, not --digit-protocol, "
        "--failures or --errors");
  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.empty()) throw std::invalid_argument("--faithfulness needs --data SPEC");
  tr::FaithfulnessOptions o;
  if (a.has("methods")) o.methods = split(a.value("methods"), ',');
  o.limit = eval.limit;
  o.igSteps = a.intInRange("ig-steps", 32, 1, 4096);
  o.curves.points = a.intInRange("points", 11, 2, 1001);
  o.profile = a.intInRange("profile", 0, 0, 100000);
  o.importOptions = eval.importOptions;
  // Progress on stderr (a 1,000-image run takes minutes to an hour): every 10 s and at the end.
  std::signal(SIGINT, onFaithfulnessStop);
  std::signal(SIGTERM, onFaithfulnessStop);
  std::vector<std::string> json;
  for (const auto& model : split(a.required("model"), ','))
    for (const auto& set : sets) {
      if (g_faithfulnessStop) break;
      const auto started = std::chrono::steady_clock::now();
      auto shown = started;
      int64_t stoppedAt = -1, of = 0;
      o.progress = [&](int64_t done, int64_t total) {
        const auto now = std::chrono::steady_clock::now();
        const bool stop = g_faithfulnessStop;
        if (stop) stoppedAt = done, of = total;
        if (done == total || stop || now - shown >= std::chrono::seconds(10)) {
          shown = now;
          const double s = std::chrono::duration<double>(now - started).count();
          const double each = s / static_cast<double>(std::max<int64_t>(done, 1));
          std::fprintf(stderr, "faithfulness of %s on %s: %lld / %lld images, %.2f s an image",
                       model.c_str(), set.c_str(), static_cast<long long>(done),
                       static_cast<long long>(total), each);
          if (done < total && !stop)
            std::fprintf(stderr, ", about %.0f min left",
                         each * static_cast<double>(total - done) / 60.0);
          std::fprintf(stderr, "\n");
        }
        return !stop;
      };
      const auto report = tr::evaluateFaithfulness(model, set, o);
      if (stoppedAt >= 0)
        std::fprintf(stderr, "stopped: the table covers the first %lld of %lld images\n",
                     static_cast<long long>(stoppedAt), static_cast<long long>(of));
      if (a.has("json"))
        json.push_back(report.toJson());
      else
        std::cout << report.toTable() << "\n"
                  << (o.profile > 0
                          ? report.profile.toText("profiled (every worker; the profiler slows "
                                                  "each operator)") +
                                "\n"
                          : "");
    }
  if (a.has("json")) {
    std::cout << "[";
    for (size_t i = 0; i < json.size(); ++i) std::cout << (i ? ",\n" : "\n") << json[i];
    std::cout << "\n]\n";
  }
  return 0;
}

// The options every kind of evaluation shares.
tr::EvalOptions parseEvalOptions(const CliArgs& a) {
  tr::EvalOptions o;
  o.limit = a.intValue("limit", 0);
  o.batchSize = a.intValue("batch", 64);
  o.beamWidth = a.intValue("beam", 1);
  if (o.beamWidth < 1 || o.beamWidth > core::kMaxBeamWidth)
    throw std::invalid_argument("--beam must be between 1 and " +
                                std::to_string(core::kMaxBeamWidth));
  o.scoring = a.value("scoring", "auto");
  o.skipBad = a.has("skip-bad");
  o.device = a.value("device", "cpu");
  o.importOptions = importOptions(a);
  if (o.limit < 0 || o.batchSize < 1)
    throw std::invalid_argument("--limit must be >= 0 and --batch positive");
  return o;
}

// --failures FILE, checked before the evaluation: refused at once, not after an hour.
void checkFailuresOutput(const CliArgs& a, const tr::EvalOptions& o) {
  // The model files with the files each import reads (EasyOCR's yaml).
  std::vector<std::string> inputs =
      modelInputs(splitModels(a.value("model")), o.importOptions, a.value("failures"));
  for (const auto& s : split(a.value("data"), ';')) inputs.push_back(s);
  for (const auto& p : a.positionals()) inputs.push_back(p);
  core::data::checkOutputPath(a.value("failures"), "failures file", inputs, a.has("force"));
}

// The digit protocol's tables: Table 1's layout, then localisation, per digit and memorising.
void printDigitProtocol(const tr::EvalOptions& o,
                        const std::vector<std::pair<std::string, tr::EvalReport>>& rows) {
  std::cout << "word accuracy (%) on the digit test sets"
            << (o.limit ? " (first " + std::to_string(o.limit) + " images each)" : "")
            << (o.beamWidth > 1 ? ", beam search width " + std::to_string(o.beamWidth) : "")
            << "\n\n"
            << tr::digitProtocolTable(rows)
            << "\npointing accuracy (%): steps t < len(truth) whose focus lies in the true box "
               "of character t; mean: of the ten\nsettings; pooled: over every step; pt(ok): "
               "over the steps of correctly read images; IoU: mean IoU of step box\nand true "
               "box (pooled)\n\n"
            << tr::digitProtocolLocalisationTable(rows)
            << "\nper-digit accuracy (%): truth digits read right (aligned as the Errors page "
               "aligns them), of all truth digits\n\n"
            << tr::digitProtocolCharTable(rows)
            << "\nmemorising: word accuracy (%) on sequences of training-pool digits against "
               "test-pool digits,\nand per-digit accuracy (%) over those sets\n\n"
            << tr::digitPoolTable(rows);
}

// --digit-protocol: each model on the ten digit test sets and on the training pool's digits.
int runDigitProtocol(const CliArgs& a, tr::EvalOptions o) {
  if (a.has("data") || !a.positionals().empty())
    throw std::invalid_argument("--digit-protocol chooses the datasets itself; drop --data");
  o.keepFailures = a.has("failures");
  std::vector<std::pair<std::string, tr::EvalReport>> rows;
  for (const auto& model : splitModels(a.required("model"))) {
    rows.emplace_back(model, evaluateModelOrEngine(model, tr::digitProtocolSets(), o));
    // Sequences of the training pool's digits: memorising made visible. (An engine that did
    // not train on them has no training pool.)
    if (core::isTesseractSpec(model)) continue;
    tr::EvalOptions po = o;
    po.keepFailures = false;
    po.localisation = false;
    rows.back().second.trainPool =
        tr::evaluateModelFile(model, tr::digitTrainPoolSets(o.limit), po).datasets;
  }
  if (a.has("json")) {
    std::cout << "[";
    for (size_t i = 0; i < rows.size(); ++i)
      std::cout << (i ? ",\n" : "\n") << rows[i].second.toJson();
    std::cout << "\n]\n";
  } else {
    printDigitProtocol(o, rows);
  }
  if (a.has("failures")) {
    std::string text;
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto tsv = rows[i].second.failuresTsv();
      text += i == 0 ? tsv : tsv.substr(tsv.find('\n') + 1);
    }
    // Checked after the flush and the close (a full disk said "wrote" and left 0 bytes).
    core::writeFileAtomically(a.value("failures"), text, "failures file");
  }
  return 0;
}

// One model on the datasets of --data and the positionals.
int runDatasetEval(const CliArgs& a, tr::EvalOptions o) {
  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.empty()) throw std::invalid_argument("eval needs --data SPEC (or --digit-protocol)");
  o.keepFailures = a.has("failures");
  const auto report = evaluateModelOrEngine(a.required("model"), sets, o);
  std::cout << (a.has("json") ? report.toJson() + "\n" : report.toTable());
  if (a.has("failures")) {
    core::writeFileAtomically(a.value("failures"), report.failuresTsv(), "failures file");
    if (!a.has("json"))
      std::cout << "\nwrote " << a.value("failures") << " ("
                << report.overall().count - report.overall().correct << " misread images)\n";
  }
  return 0;
}

}  // namespace

int runEvalCommand(const std::vector<std::string>& args) {
  const CliArgs a(
      args,
      withImportOptions({"model", "data", "failures", "errors", "limit", "batch", "scoring",
                         "device", "threads", "beam", "methods", "ig-steps", "points", "profile",
                         "attribution", "csv", "steps-csv", "plot", "bins"}),
      withImportFlags({"json", "digit-protocol", "force", "skip-bad", "faithfulness", "doubt",
                       "calibration", "cuts", "no-end-steps"}));
  core::setComputeThreads(a.intValue("threads", 0));
  const tr::EvalOptions o = parseEvalOptions(a);
  if (a.has("failures")) checkFailuresOutput(a, o);

  if (a.has("bins") && !a.has("calibration"))
    throw std::invalid_argument("--bins goes with --calibration");
  if (a.has("calibration")) return runCalibration(a, o);
  if (a.has("cuts")) return runCuts(a, o);
  if (a.has("doubt")) return runDoubt(a, o);
  if (a.has("faithfulness")) return runFaithfulness(a, o);
  if (a.has("errors")) return runErrorAnalysis(a, o);
  if (a.has("digit-protocol")) return runDigitProtocol(a, o);
  return runDatasetEval(a, o);
}

}  // namespace foveal::app
