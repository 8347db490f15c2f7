#include "train/evaluation.h"

#include <torch/torch.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/compute_device.h"
#include "base/error.h"
#include "base/text_metrics.h"
#include "data/data_loader.h"
#include "data/dataset_factory.h"
#include "formats/checkpoint.h"
#include "model/charset.h"
#include "trace/finite_outputs.h"
#include "trace/trace_builder.h"
#include "train/dataset_views.h"
#include "train/evaluate_model.h"
#include "train/train_config.h"

namespace foveal::core::train {

using nlohmann::json;

void EvalStats::add(const EvalStats& o) {
  count += o.count;
  correct += o.correct;
  nedSum += o.nedSum;
  entropySum += o.entropySum;
  charCorrect += o.charCorrect;
  charTotal += o.charTotal;
  cerDistance += o.cerDistance;
  cerLength += o.cerLength;
  localisation.add(o.localisation);
}

std::string normaliseForScoring(const std::string& text) {
  std::string out;
  for (unsigned char c : text)
    if (std::isalnum(c)) out.push_back(static_cast<char>(std::tolower(c)));
  return out;
}

Score scorePrediction(const std::string& prediction, const std::string& truth, bool textScoring) {
  const std::string p = textScoring ? normaliseForScoring(prediction) : prediction;
  const std::string t = textScoring ? normaliseForScoring(truth) : truth;
  Score score{p == t, normalisedEditDistance(p, t)};
  for (const CharOp& op : alignCharacters(p, t)) {
    score.charTotal += op.kind != CharOp::Kind::Insert;
    score.charCorrect += op.kind == CharOp::Kind::Match;
  }
  const CharacterErrors cer = characterErrors(prediction, truth);  // raw, as dinglehopper
  score.cerDistance = cer.distance;
  score.cerLength = cer.truthLength;
  return score;
}

bool wantsTextScoring(const std::string& charset, const std::string& scoring) {
  if (scoring == "text") return true;
  if (scoring == "exact") return false;
  if (scoring != "auto")
    throw Error("scoring must be auto, exact or text, not \"" + scoring + "\"");
  for (unsigned char ch : charset)
    if (std::isalpha(ch)) return true;
  return false;
}

namespace {

/// A CTC path's characters, each the largest probability of its run of frames (kraken's
/// per-character confidence, ctcRunMaxima): the lowest of them, NaN for a path of blanks only.
double lowestCharacterProbability(const std::vector<int>& argmax, const std::vector<double>& maxima,
                                  int blank) {
  const auto runs = ctcRunMaxima(argmax, maxima, blank);
  if (runs.empty()) return std::numeric_limits<double>::quiet_NaN();
  return *std::min_element(runs.begin(), runs.end());
}

/// Per image, as buildTrace computes it (so the inspector and the Errors page agree).
std::vector<double> readingConfidence(const RecognizerOutput& out, const Charset& charset,
                                      int64_t batch, const std::string& ctcRule,
                                      std::vector<double>& lowest) {
  std::vector<double> conf(static_cast<size_t>(batch), 1.0);
  lowest.assign(static_cast<size_t>(batch), std::numeric_limits<double>::quiet_NaN());
  // The chosen token's log p per step [B, T]: the argmax, or a beam search's token.
  auto best = out.logProbs.detach()
                  .gather(2, out.tokens.to(out.logProbs.device()).unsqueeze(2))
                  .squeeze(2)
                  .to(torch::kCPU, torch::kDouble);
  auto lp = best.accessor<double, 2>();
  if (!out.alpha.defined()) {  // CTC: the columns' maxima (its tokens are the argmax path)
    auto tokens = out.tokens.to(torch::kCPU, torch::kLong);
    auto tok = tokens.accessor<int64_t, 2>();
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<int> argmax;
      std::vector<double> maxima;
      for (int64_t t = 0; t < best.size(1); ++t) {
        argmax.push_back(static_cast<int>(tok[b][t]));
        maxima.push_back(std::exp(lp[b][t]));
      }
      conf[static_cast<size_t>(b)] = ctcConfidence(ctcRule, argmax, maxima, charset.blankIndex());
      lowest[static_cast<size_t>(b)] =
          lowestCharacterProbability(argmax, maxima, charset.blankIndex());
    }
    return conf;
  }
  // Attention: the rule traces use (attentionConfidence, trace.h).
  auto tokens = out.tokens.to(torch::kCPU);
  auto tok = tokens.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<int> chosen;
    std::vector<double> probs;
    for (int64_t t = 0; t < tokens.size(1); ++t) {
      chosen.push_back(static_cast<int>(tok[b][t]));
      probs.push_back(std::exp(lp[b][t]));
      if (tok[b][t] == charset.endIndex()) break;
    }
    conf[static_cast<size_t>(b)] = attentionConfidence(charset, chosen, probs);
    if (!probs.empty())
      lowest[static_cast<size_t>(b)] = *std::min_element(probs.begin(), probs.end());
  }
  return conf;
}

/// Per image, the mean attention entropy over the steps up to and including the end token; 0
/// without attention (CTC).
std::vector<double> meanEntropy(const RecognizerOutput& out, const Charset& charset, size_t batch) {
  std::vector<double> mean(batch, 0.0);
  if (!out.alpha.defined()) return mean;
  auto tokens = out.tokens.to(torch::kCPU);                                    // [B, T]
  auto alpha = out.alpha.to(torch::kCPU, torch::kFloat);                       // [B, T, M]
  auto h = -(alpha * alpha.clamp_min(1e-30).log()).sum(2).to(torch::kDouble);  // [B, T]
  auto tok = tokens.accessor<int64_t, 2>();
  auto ent = h.accessor<double, 2>();
  const int64_t T = tokens.size(1);
  for (int64_t b = 0; b < static_cast<int64_t>(batch); ++b) {
    double hsum = 0;
    int64_t steps = 0;
    for (int64_t t = 0; t < T; ++t) {
      hsum += ent[b][t];
      ++steps;
      if (tok[b][t] == charset.endIndex()) break;
    }
    mean[static_cast<size_t>(b)] = hsum / static_cast<double>(steps);
  }
  return mean;
}

/// The first `limit` entries (0: all); an endless stream needs a limit.
data::DatasetPtr limited(const data::DatasetPtr& dataset, int64_t limit) {
  if (dataset->endless() && limit <= 0)
    throw Error(dataset->describe() + ": an endless stream needs a limit (eval --limit N)");
  if (!dataset->endless() && limit <= 0) return dataset;
  const size_t n = limit > 0 ? static_cast<size_t>(limit) : dataset->size();
  return std::make_shared<PrefixDataset>(dataset, n);
}

data::LoaderOptions loaderOptions(const ModelConfig& cfg, const EvalOptions& options,
                                  bool textScoring) {
  data::LoaderOptions lo;
  lo.batchSize = options.batchSize;
  lo.shuffle = false;
  lo.threads = options.loaderThreads;
  lo.skipBad = options.skipBad;
  lo.maxLength = cfg.maxLength;
  lo.charset = cfg.makeCharset();
  if (textScoring && !cfg.caseInsensitive) {
    // Text scoring compares lower-cased (as deep-text-recognition-benchmark does), so a label's
    // case must not make it unreadable: "Hello" is read by a model of lower-case letters.
    try {
      lo.charset = Charset(cfg.charset, true, cfg.classLayout(), cfg.charsetRepeats);
    } catch (const Error&) {  // the charset holds both cases: it reads case itself
    }
  }
  lo.preprocessing = cfg.preprocessing;
  lo.withUpsampled = cfg.needsUpsampled();
  lo.withBoxes = options.localisation;
  return lo;
}

/// Scores the readings of one batch into a DatasetEval: what every batch of one evaluation shares.
struct BatchScorer {
  Recognizer model;
  const data::Dataset& ds;
  const std::string& name;
  const EvalOptions& options;
  const Charset& charset;
  bool textScoring;
  DatasetEval& result;

  void score(const data::Batch& batch, const RecognizerOutput& out);
  EvalStats scoreImage(const data::Batch& batch, const RecognizerOutput& out, size_t k,
                       const std::string& prediction, double entropy, bool& correct);
};

void BatchScorer::score(const data::Batch& batch, const RecognizerOutput& out) {
  const auto read = model->readings(out);
  const int64_t B = static_cast<int64_t>(read.size());
  const std::vector<double> entropy = meanEntropy(out, charset, read.size());
  std::vector<double> lowest;
  const std::vector<double> confidence =
      options.keepImages ? readingConfidence(out, charset, B, model->config.ctcConfidence, lowest)
                         : std::vector<double>();
  for (size_t k = 0; k < read.size(); ++k) {
    const std::string prediction = charset.decode(read[k]);
    const std::string& truth = batch.labels[k];
    bool correct = false;
    const EvalStats one = scoreImage(batch, out, k, prediction, entropy[k], correct);
    result.overall.add(one);
    result.byLength[static_cast<int>(splitUtf8(truth).size())].add(one);
    const size_t index = batch.indices[k];
    if (!correct && options.keepFailures)
      result.failures.push_back({name, index, ds.entryName(index), truth, prediction});
    if (options.keepImages) {
      ImageReading r;
      r.index = index;
      r.entry = ds.entryName(index);
      r.truth = truth;
      r.reading = prediction;
      r.confidence = confidence[k];
      r.lowestStepProbability = lowest[k];
      if (out.alpha.defined()) r.entropy = entropy[k];
      result.images.push_back(std::move(r));
    }
  }
}

EvalStats BatchScorer::scoreImage(const data::Batch& batch, const RecognizerOutput& out, size_t k,
                                  const std::string& prediction, double entropy, bool& correct) {
  const std::string& truth = batch.labels[k];
  const Score s = scorePrediction(prediction, truth, textScoring);
  correct = s.correct;
  EvalStats one;
  one.count = 1;
  one.correct = s.correct ? 1 : 0;
  one.nedSum = s.ned;
  one.entropySum = entropy;
  one.charCorrect = s.charCorrect;
  one.charTotal = s.charTotal;
  one.cerDistance = s.cerDistance;
  one.cerLength = s.cerLength;
  // Boxes that do not match the label character for character say nothing about it.
  if (k < batch.boxes.size() && !batch.boxes[k].empty() &&
      batch.boxes[k].size() == splitUtf8(truth).size()) {
    const auto [w, h] = batch.sourceSizes[k];
    one.localisation.add(
        scoreLocalisation(locateDecodedSteps(model, out, static_cast<int>(k), w, h,
                                             static_cast<int>(batch.images.size(3)),
                                             k < batch.contentW.size() ? batch.contentW[k] : 0),
                          batch.boxes[k]),
        s.correct);
  }
  return one;
}

}  // namespace

DatasetEval evaluateDataset(Recognizer model, const data::DatasetPtr& dataset,
                            const std::string& name, const EvalOptions& options,
                            const torch::Device& device) {
  const ModelConfig& cfg = model->config;
  const bool textScoring = wantsTextScoring(cfg.charset, options.scoring);
  const bool wasTraining = model->is_training();
  model->eval();
  DatasetEval result;
  result.name = name;
  const data::DatasetPtr ds = limited(dataset, options.limit);
  result.description = ds->describe();
  const data::LoaderOptions lo = loaderOptions(cfg, options, textScoring);
  data::DataLoader loader(ds, lo);
  BatchScorer scorer{model, *ds, name, options, lo.charset, textScoring, result};
  const int64_t total = static_cast<int64_t>(ds->size());
  {
    c10::InferenceMode guard;
    while (auto batch = loader.next()) {
      auto images = batch->images.to(device);
      auto up = batch->upsampled.defined() ? batch->upsampled.to(device) : torch::Tensor();
      DecodeOptions dec;
      dec.beamWidth = options.beamWidth;
      dec.stopWhenAllEnded = true;  // the steps after every end token change nothing measured
      const RecognizerOutput out = model->forward(images, up, dec);
      // NaN outputs were scored as readings (issue 65): the model, not the entry, is at fault.
      if (const int64_t bad = firstNonFiniteRow(out.logProbs); bad >= 0)
        throw Error(nonFiniteOutputsMessage(
            options.model, ds->entryName(batch->indices[static_cast<size_t>(bad)])));
      scorer.score(*batch, out);
      // Entries read and skipped alike: the loader hands out whole batches of the order.
      const int64_t done =
          std::min(total, (batch->number + 1) * static_cast<int64_t>(options.batchSize));
      if (options.progress && !options.progress(done, total)) {
        if (wasTraining) model->train();
        throw EvalCancelled();
      }
    }
  }
  result.skipped = loader.skipped();
  result.skippedByReason = loader.skippedByReason();
  const auto messages = loader.skippedMessages();
  result.skippedExamples.assign(messages.begin(),
                                messages.begin() + std::min<size_t>(messages.size(), 5));
  if (wasTraining) model->train();
  result.skippedSummary = loader.skippedSummary();
  return result;
}

EvalReport evaluateModelFile(const std::string& modelPath, const std::vector<std::string>& datasets,
                             const EvalOptions& options) {
  if (datasets.empty()) throw Error("evaluation: no dataset given");
  auto loaded = loadModelFile(modelPath, options.importOptions);
  const torch::Device device = resolveDevice(options.device);
  loaded.model->to(device);
  EvalReport report;
  report.model = modelPath;
  report.beamWidth = std::max(1, options.beamWidth);
  EvalOptions named = options;
  if (named.model.empty()) named.model = modelPath;
  for (const auto& spec : datasets) {
    report.datasets.push_back(
        evaluateDataset(loaded.model, data::openDataset(spec), spec, named, device));
    const auto& d = report.datasets.back();
    if (d.overall.count == 0 && d.skipped > 0)  // "0 images 0.00%" would read as a result
      throw Error(d.description + ": no entry this model can read; " + d.skippedSummary);
  }
  return report;
}

EvalStats EvalReport::overall() const {
  EvalStats s;
  for (const auto& d : datasets) s.add(d.overall);
  return s;
}

std::map<int, EvalStats> EvalReport::byLength() const {
  std::map<int, EvalStats> m;
  for (const auto& d : datasets)
    for (const auto& [len, s] : d.byLength) m[len].add(s);
  return m;
}

namespace {

json statsJson(const EvalStats& s) {
  json j = {{"count", s.count},
            {"correct", s.correct},
            {"accuracy", s.accuracy()},
            {"ned", s.ned()},
            {"char_accuracy", s.charAccuracy()},
            {"cer", s.cer()},
            {"cer_edits", s.cerDistance},
            {"cer_chars", s.cerLength},
            {"entropy", s.entropy()}};
  const auto& l = s.localisation;
  if (!l.empty()) {  // absent: the data has no character boxes
    j["pointing"] = l.pointing();
    j["mean_iou"] = l.meanIou();
    j["localised_images"] = l.images;
    j["localised_steps"] = l.steps;
    j["pointing_correct"] = l.correctSteps ? json(l.correctPointing()) : json(nullptr);
    j["mean_iou_correct"] = l.correctSteps ? json(l.correctMeanIou()) : json(nullptr);
    j["localised_correct_images"] = l.correctImages;
  }
  return j;
}

json lengthsJson(const std::map<int, EvalStats>& m) {
  json a = json::array();
  for (const auto& [len, s] : m) {
    json j = statsJson(s);
    j["length"] = len;
    a.push_back(j);
  }
  return a;
}

std::string row(const std::string& name, const EvalStats& s) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%-44s %8lld %9.2f%% %9.4f %8.2f%% %9.4f", name.c_str(),
                static_cast<long long>(s.count), 100.0 * s.accuracy(), s.ned(), 100.0 * s.cer(),
                s.entropy());
  std::string out = buf;
  const auto& l = s.localisation;
  if (l.empty()) {
    std::snprintf(buf, sizeof buf, " %9s %9s %9s %9s\n", "-", "-", "-", "-");
  } else {
    char pc[16] = "-", ic[16] = "-";
    if (l.correctSteps) {
      std::snprintf(pc, sizeof pc, "%.2f%%", 100.0 * l.correctPointing());
      std::snprintf(ic, sizeof ic, "%.4f", l.correctMeanIou());
    }
    std::snprintf(buf, sizeof buf, " %8.2f%% %9.4f %9s %9s\n", 100.0 * l.pointing(), l.meanIou(),
                  pc, ic);
  }
  return out + buf;
}

const char* kHeadFormat = "%-44s %8s %10s %9s %9s %9s %9s %9s %9s %9s\n";

}  // namespace

std::string EvalReport::toJson() const {
  json j;
  j["model"] = model;
  j["beam_width"] = beamWidth;
  j["overall"] = statsJson(overall());
  j["by_length"] = lengthsJson(byLength());
  j["datasets"] = json::array();
  for (const auto& d : datasets) {
    json dj = statsJson(d.overall);
    dj["name"] = d.name;
    dj["description"] = d.description;
    dj["skipped"] = d.skipped;
    dj["skipped_by_reason"] = d.skippedByReason;
    dj["skipped_examples"] = d.skippedExamples;
    dj["by_length"] = lengthsJson(d.byLength);
    j["datasets"].push_back(dj);
  }
  if (!trainPool.empty()) {
    j["train_pool"] = json::array();
    for (const auto& d : trainPool) {
      json dj = statsJson(d.overall);
      dj["name"] = d.name;
      j["train_pool"].push_back(dj);
    }
  }
  return j.dump(2);
}

std::string EvalReport::toTable() const {
  std::ostringstream o;
  char head[320];
  std::snprintf(head, sizeof head, kHeadFormat, "dataset", "images", "accuracy", "norm ED", "CER",
                "entropy", "pointing", "IoU", "point(ok)", "IoU(ok)");
  o << "model " << model;
  if (beamWidth > 1) o << "  (beam search, width " << beamWidth << ")";
  o << "\n\n" << head;
  for (const auto& d : datasets) {
    o << row(d.name.size() > 44 ? "..." + d.name.substr(d.name.size() - 41) : d.name, d.overall);
    if (d.skipped) {
      o << "    (" << d.skipped << (d.skipped == 1 ? " entry" : " entries")
        << " skipped, unreadable by this model:";
      bool first = true;
      for (const auto& [reason, n] : d.skippedByReason) {
        o << (first ? " " : ", ") << n << " " << reason;
        first = false;
      }
      o << ")\n";
      for (const auto& e : d.skippedExamples) o << "      " << e << "\n";
    }
  }
  if (datasets.size() > 1) o << row("all", overall());
  o << "\n";
  std::snprintf(head, sizeof head, kHeadFormat, "label length", "images", "accuracy", "norm ED",
                "CER", "entropy", "pointing", "IoU", "point(ok)", "IoU(ok)");
  o << head;
  for (const auto& [len, s] : byLength()) o << row(std::to_string(len), s);
  o << "\nCER: dinglehopper's character error rate, edits over truth characters (Levenshtein over "
       "NFC grapheme clusters\nof the raw reading and truth"
    << (hasGraphemeClusters() ? "" : "; this build has no ICU: code points, unnormalised")
    << "), pooled over the images\n";
  if (!overall().localisation.empty())
    o << "\npointing: share of the steps t < len(truth) whose focus lies in the true box of "
         "character t;\nIoU: mean IoU of step box and true box; (ok): over the correctly read "
         "images only\n";
  return o.str();
}

std::string EvalReport::failuresTsv() const {
  std::ostringstream o;
  o << "dataset\tindex\tentry\ttruth\tprediction\n";
  for (const auto& d : datasets)
    for (const auto& f : d.failures)
      o << f.dataset << "\t" << f.index << "\t" << f.entry << "\t" << f.truth << "\t"
        << f.prediction << "\n";
  return o.str();
}

namespace {

// Column k of Table 1 is the k-th set of digitProtocolSets(); a dataset matches it when its
// argument has the same length and rotation (count and seed may differ).
std::string protocolKey(const std::string& spec) {
  if (spec.find("split=train") != std::string::npos) return "train";  // never a Table 1 column
  const bool rotated = spec.find("rotated") != std::string::npos;
  const auto p = spec.find("len=");
  const std::string len =
      p == std::string::npos ? "" : spec.substr(p + 4, spec.find(',', p) - p - 4);
  return std::string(rotated ? "r" : "n") + len;
}

// Table 1's layout: a row per model, a column per digit setting, then their mean and `tail`
// (the pooled figures). `value` gives a dataset's figure in %, or NaN when it has none.
std::string protocolLayout(const std::vector<std::pair<std::string, EvalReport>>& rows,
                           const std::function<double(const EvalStats&)>& value,
                           const std::string& tailHead,
                           const std::function<std::string(const EvalReport&)>& tail) {
  std::vector<std::string> columns;
  for (const auto& s : digitProtocolSets()) columns.push_back(protocolKey(s));
  std::ostringstream o;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%-28s", "model");
  o << buf;
  for (const auto& c : columns) {
    std::snprintf(buf, sizeof buf, " %6s", c.c_str());
    o << buf;
  }
  o << "   mean" << tailHead << "\n";
  for (const auto& [path, report] : rows) {
    // A model file is named by its stem: "samples/models/sharp-pooling-reference.fvm" and
    // "samples/models/sharp-pooling.fvm" cut at 28 characters would read alike.
    std::string name = path.substr(path.find_last_of('/') + 1);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".fvm") == 0)
      name.resize(name.size() - 4);
    std::snprintf(buf, sizeof buf, "%-28s", name.substr(0, 28).c_str());
    o << buf;
    double sum = 0;
    int n = 0;
    for (const auto& c : columns) {
      const DatasetEval* found = nullptr;
      for (const auto& d : report.datasets)
        if (protocolKey(d.name) == c) found = &d;
      const double v = found && found->overall.count ? value(found->overall) : std::nan("");
      if (std::isfinite(v)) {
        std::snprintf(buf, sizeof buf, " %6.1f", v);
        sum += v;
        ++n;
      } else {
        std::snprintf(buf, sizeof buf, " %6s", "-");
      }
      o << buf;
    }
    if (n) {
      std::snprintf(buf, sizeof buf, " %6.1f", sum / n);
    } else {
      std::snprintf(buf, sizeof buf, " %6s", "-");
    }
    o << buf << tail(report) << "\n";
  }
  return o.str();
}

}  // namespace

std::string digitProtocolTable(const std::vector<std::pair<std::string, EvalReport>>& rows) {
  return protocolLayout(
      rows, [](const EvalStats& s) { return 100.0 * s.accuracy(); }, "    ned  entropy",
      [](const EvalReport& report) {
        // Normalised edit distance and mean attention entropy (nats), pooled over every image.
        const auto all = report.overall();
        char buf[64];
        std::snprintf(buf, sizeof buf, " %6.3f %8.3f", all.ned(), all.entropy());
        return std::string(buf);
      });
}

std::string digitProtocolCharTable(const std::vector<std::pair<std::string, EvalReport>>& rows) {
  return protocolLayout(
      rows, [](const EvalStats& s) { return 100.0 * s.charAccuracy(); }, "",
      [](const EvalReport&) { return std::string(); });
}

std::string digitPoolTable(const std::vector<std::pair<std::string, EvalReport>>& rows) {
  std::ostringstream o;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-28s %9s %9s %9s %9s %11s %11s\n", "model", "n5 train",
                "n5 test", "n13 train", "n13 test", "digit train", "digit test");
  o << buf;
  // The unrotated set of `len` digits in `report`, drawn from the training pool or not.
  const auto find = [](const std::vector<DatasetEval>& sets, int len,
                       bool train) -> const EvalStats* {
    const std::string want = "len=" + std::to_string(len) + ",";
    for (const auto& d : sets)
      if (d.name.find(want) != std::string::npos && d.name.find("rotated") == std::string::npos &&
          (d.name.find("split=train") != std::string::npos) == train && d.overall.count)
        return &d.overall;
    return nullptr;
  };
  for (const auto& [path, report] : rows) {
    std::string name = path.substr(path.find_last_of('/') + 1);
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".fvm") == 0)
      name.resize(name.size() - 4);
    std::snprintf(buf, sizeof buf, "%-28s", name.substr(0, 28).c_str());
    o << buf;
    EvalStats digits[2];  // per-digit accuracy over n5 and n13: [0] training pool, [1] test pool
    for (int len : {5, 13})
      for (bool train : {true, false}) {
        const EvalStats* s = find(train ? report.trainPool : report.datasets, len, train);
        if (s) digits[train ? 0 : 1].add(*s);
        if (s)
          std::snprintf(buf, sizeof buf, " %9.1f", 100.0 * s->accuracy());
        else
          std::snprintf(buf, sizeof buf, " %9s", "-");
        o << buf;
      }
    for (const EvalStats& s : digits) {
      if (s.charTotal)
        std::snprintf(buf, sizeof buf, " %11.2f", 100.0 * s.charAccuracy());
      else
        std::snprintf(buf, sizeof buf, " %11s", "-");
      o << buf;
    }
    o << "\n";
  }
  return o.str();
}

std::string digitProtocolLocalisationTable(
    const std::vector<std::pair<std::string, EvalReport>>& rows) {
  return protocolLayout(
      rows,
      [](const EvalStats& s) {
        return s.localisation.empty() ? std::nan("") : 100.0 * s.localisation.pointing();
      },
      "  pooled  pt(ok)    IoU  IoU(ok)",
      [](const EvalReport& report) {
        const auto l = report.overall().localisation;
        char buf[64];
        if (l.empty()) return std::string("       -       -      -        -");
        std::snprintf(buf, sizeof buf, " %7.1f %7.1f %6.3f %8.3f", 100.0 * l.pointing(),
                      100.0 * l.correctPointing(), l.meanIou(), l.correctMeanIou());
        return std::string(buf);
      });
}

}  // namespace foveal::core::train
