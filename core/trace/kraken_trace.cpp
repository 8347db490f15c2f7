#include "trace/kraken_trace.h"

#include "base/error.h"
#include "model/kraken_codec.h"

namespace foveal::core {

void applyKrakenReading(Trace& tr, const ModelConfig& config, const std::vector<float>& probs,
                        int frames, int classes, const KrakenLineFrame& line) {
  if (frames < 0 || classes < 1 || probs.size() != static_cast<size_t>(frames) * classes)
    throw Error("kraken reading: expected " + std::to_string(frames) + " x " +
                std::to_string(classes) + " probabilities, got " + std::to_string(probs.size()));
  // kraken's layout: classes x frames.
  std::vector<float> byClass(probs.size());
  for (int t = 0; t < frames; ++t)
    for (int c = 0; c < classes; ++c)
      byClass[static_cast<size_t>(c) * frames + t] = probs[static_cast<size_t>(t) * classes + c];
  const auto runs = krakenGreedyDecode(byClass.data(), classes, frames, frames);
  const KrakenCodec codec = KrakenCodec::fromJson(config.kraken.codecJson, "the model's codec");
  if (codec.maxLabel() >= classes)
    throw Error("the model's codec uses label " + std::to_string(codec.maxLabel()) +
                " and the network has " + std::to_string(classes) + " classes");
  const std::vector<KrakenChar> chars = codec.decode(runs);

  // The greedy path's steps are the runs; a character keeps the step of the run it starts at
  // (its top-k, posterior row, patch), so every view goes on working.
  std::vector<TraceStep> old = std::move(tr.steps);
  StepMap* posterior = nullptr;
  for (auto& m : tr.maps)
    if (m.name == kAttentionMap) posterior = &m;
  std::vector<std::vector<double>> oldRows;
  if (posterior) oldRows = std::move(posterior->steps);
  tr.steps.clear();
  std::vector<std::vector<double>> rows;
  const bool cuts = line.inputWidth > 0 && line.lineWidth > 0 && frames > 0;
  KrakenScale scale;
  if (cuts)
    scale = KrakenScale::forLine(line.inputWidth, frames, line.lineWidth, config.kraken.padding);
  double sum = 0;
  for (const auto& ch : chars) {
    TraceStep st;
    size_t from = old.size();
    for (size_t i = 0; i < old.size(); ++i)
      if (!old[i].columns.empty() && old[i].columns.front() == ch.start) from = i;
    if (from < old.size()) st = old[from];
    st.token = krakenText({ch});
    st.prob = ch.confidence;
    st.columns.clear();
    for (int f = ch.start; f <= ch.end; ++f) st.columns.push_back(f);
    if (from == old.size()) st.region = ch.start;
    if (cuts) {
      const int x0 = scale.toPixel(ch.start, 0, line.lineWidth);
      const int x1 = scale.toPixel(ch.end, 0, line.lineWidth);
      st.box = {static_cast<double>(x0), 0.0, static_cast<double>(x1 - x0),
                static_cast<double>(line.lineHeight)};
      st.focus = {0.5 * (x0 + x1), 0.5 * line.lineHeight};
    }
    rows.push_back(from < oldRows.size() ? oldRows[from] : std::vector<double>());
    sum += ch.confidence;
    tr.steps.push_back(std::move(st));
  }
  if (posterior) posterior->steps = std::move(rows);
  double entropySum = 0;
  for (const auto& st : tr.steps) entropySum += st.entropy;
  tr.meanEntropy = tr.steps.empty() ? 0.0 : entropySum / static_cast<double>(tr.steps.size());
  tr.prediction = krakenText(krakenReorder(chars, KrakenBaseDir::Auto));
  tr.confidence = chars.empty() ? 1.0 : sum / static_cast<double>(chars.size());
  tr.focusRule = "kraken-cut";
}

std::vector<std::pair<int, int>> krakenCuts(const Trace& tr) {
  std::vector<std::pair<int, int>> out;
  for (const auto& st : tr.steps)
    out.emplace_back(static_cast<int>(st.box.x), static_cast<int>(st.box.x + st.box.w));
  return out;
}

}  // namespace foveal::core
