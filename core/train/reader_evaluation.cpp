#include "train/reader_evaluation.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/text_metrics.h"
#include "data/dataset_factory.h"
#include "engines/tesseract_engine.h"
#include "model/charset.h"
#include "trace/localisation.h"

namespace foveal::core::train {

DatasetEval evaluateReaderOn(const TraceReader& read, const data::Dataset& ds,
                             const std::string& name, const EvalOptions& options) {
  if (ds.endless() && options.limit <= 0)
    throw Error(ds.describe() + ": an endless stream needs a limit (eval --limit N)");
  size_t n = ds.endless() ? static_cast<size_t>(options.limit) : ds.size();
  if (options.limit > 0) n = std::min(n, static_cast<size_t>(options.limit));
  if (options.scoring != "auto" && options.scoring != "exact" && options.scoring != "text")
    throw Error("scoring must be auto, exact or text, not \"" + options.scoring + "\"");
  const bool textScoring = options.scoring != "exact";
  DatasetEval result;
  result.name = name;
  result.description = ds.describe();
  for (size_t i = 0; i < n; ++i) {
    data::Sample sample;
    try {
      sample = ds.get(i);
    } catch (const Error& e) {
      if (!options.skipBad) throw;
      ++result.skipped;
      ++result.skippedByReason["unreadable image"];
      if (result.skippedExamples.size() < 5) result.skippedExamples.push_back(e.what());
      continue;
    }
    const std::string entry = ds.entryName(i);
    const Trace trace = read(sample.image, entry);
    const std::string& truth = sample.label;
    const Score s = scorePrediction(trace.prediction, truth, textScoring);
    EvalStats one;
    one.count = 1;
    one.correct = s.correct ? 1 : 0;
    one.nedSum = s.ned;
    one.charCorrect = s.charCorrect;
    one.charTotal = s.charTotal;
    one.cerDistance = s.cerDistance;
    one.cerLength = s.cerLength;
    if (options.localisation) {
      const auto boxes = ds.charBoxes(i);
      if (!boxes.empty() && boxes.size() == splitUtf8(truth).size()) {
        std::vector<StepLocation> located;
        for (const auto& step : trace.steps) {
          if (step.token == " " || step.token == Charset::kEndName) continue;
          located.push_back({step.focus, step.box});
        }
        one.localisation.add(scoreLocalisation(located, boxes), s.correct);
      }
    }
    result.overall.add(one);
    result.byLength[static_cast<int>(splitUtf8(truth).size())].add(one);
    if (!s.correct && options.keepFailures)
      result.failures.push_back({name, i, entry, truth, trace.prediction});
    if (options.keepImages) {
      ImageReading r;
      r.index = i;
      r.entry = entry;
      r.truth = truth;
      r.reading = trace.prediction;
      r.confidence = trace.confidence;
      for (const auto& step : trace.steps)  // an engine's symbols, each with its probability
        if (std::isnan(r.lowestStepProbability) || step.prob < r.lowestStepProbability)
          r.lowestStepProbability = step.prob;
      result.images.push_back(r);
    }
    if (options.progress && (i + 1) % 16 == 0 &&
        !options.progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(n)))
      throw EvalCancelled();
  }
  if (options.progress && !options.progress(static_cast<int64_t>(n), static_cast<int64_t>(n)))
    throw EvalCancelled();
  if (result.skipped) result.skippedSummary = std::to_string(result.skipped) + " unreadable images";
  return result;
}

TraceReader tesseractReader(const std::string& spec) {
  std::shared_ptr<const TesseractEngine> engine = TesseractEngine::open(parseTesseractSpec(spec));
  return [engine](const GreyImage& image, const std::string& source) {
    return engine->read(image, source);
  };
}

EvalReport evaluateReader(const std::string& name, const TraceReader& read,
                          const std::vector<std::string>& datasets, const EvalOptions& options) {
  if (datasets.empty()) throw Error("evaluation: no dataset given");
  EvalReport report;
  report.model = name;
  for (const auto& spec : datasets) {
    const auto ds = data::openDataset(spec);
    report.datasets.push_back(evaluateReaderOn(read, *ds, spec, options));
    const auto& d = report.datasets.back();
    if (d.overall.count == 0 && d.skipped > 0)
      throw Error(d.description + ": no entry could be read; " + d.skippedSummary);
  }
  return report;
}

}  // namespace foveal::core::train
