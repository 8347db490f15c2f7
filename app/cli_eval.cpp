#include "cli_eval.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "base/error.h"
#include "cli_args.h"
#include "cli_model.h"
#include "data/output_guard.h"
#include "trace/model_session.h"
#include "train/error_analysis.h"
#include "train/evaluation.h"
#include "train/train_config.h"

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
              a model cannot read are skipped and counted
              --model FILE[,FILE...] --digit-protocol [--limit N] [--json] [--beam N]
              the 5 lengths x normal/rotated digit test sets in the layout of Table 1, then
              pointing accuracy in the same layout
              (a DTRB .pth as --model: see import)
)";

namespace {

namespace tr = foveal::core::train;

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

int runErrorAnalysis(const CliArgs& a, const tr::EvalOptions& eval) {
  if (a.has("digit-protocol") || a.has("failures"))
    throw std::invalid_argument("--errors goes with --data, not --digit-protocol or --failures");
  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.size() != 1)
    throw std::invalid_argument("--errors analyses one dataset: give exactly one --data SPEC");
  const std::vector<std::string> models = split(a.required("model"), ',');
  const std::string dir = a.value("errors");
  std::vector<std::string> inputs = models;
  inputs.push_back(sets.front());
  core::data::checkOutputPath(dir, "errors folder", inputs, a.has("force"));
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

}  // namespace

int runEvalCommand(const std::vector<std::string>& args) {
  const CliArgs a(args,
                  withImportOptions({"model", "data", "failures", "errors", "limit", "batch",
                                     "scoring", "device", "threads", "beam"}),
                  withImportFlags({"json", "digit-protocol", "force", "skip-bad"}));
  core::setComputeThreads(a.intValue("threads", 0));
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

  if (a.has("failures")) {  // before the evaluation: refuse at once, not after an hour
    std::vector<std::string> inputs = split(a.value("model"), ',');
    for (const auto& s : split(a.value("data"), ';')) inputs.push_back(s);
    for (const auto& p : a.positionals()) inputs.push_back(p);
    core::data::checkOutputPath(a.value("failures"), "failures file", inputs, a.has("force"));
  }

  if (a.has("errors")) return runErrorAnalysis(a, o);

  if (a.has("digit-protocol")) {
    if (a.has("data") || !a.positionals().empty())
      throw std::invalid_argument("--digit-protocol chooses the datasets itself; drop --data");
    o.keepFailures = a.has("failures");
    std::vector<std::pair<std::string, tr::EvalReport>> rows;
    for (const auto& model : split(a.required("model"), ',')) {
      rows.emplace_back(model, tr::evaluateModelFile(model, tr::digitProtocolSets(), o));
      // Sequences of the training pool's digits: memorising made visible.
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
    if (a.has("failures")) {
      std::ofstream out(a.value("failures"));
      for (size_t i = 0; i < rows.size(); ++i) {
        const auto tsv = rows[i].second.failuresTsv();
        out << (i == 0 ? tsv : tsv.substr(tsv.find('\n') + 1));
      }
      if (!out) throw core::Error(a.value("failures") + ": cannot write the failures file");
    }
    return 0;
  }

  std::vector<std::string> sets = split(a.value("data"), ';');
  for (const auto& p : a.positionals()) sets.push_back(p);
  if (sets.empty()) throw std::invalid_argument("eval needs --data SPEC (or --digit-protocol)");
  o.keepFailures = a.has("failures");
  const auto report = tr::evaluateModelFile(a.required("model"), sets, o);
  std::cout << (a.has("json") ? report.toJson() + "\n" : report.toTable());
  if (a.has("failures")) {
    std::ofstream out(a.value("failures"));
    out << report.failuresTsv();
    if (!out) throw core::Error(a.value("failures") + ": cannot write the failures file");
    if (!a.has("json"))
      std::cout << "\nwrote " << a.value("failures") << " ("
                << report.overall().count - report.overall().correct << " misread images)\n";
  }
  return 0;
}

}  // namespace foveal::app
