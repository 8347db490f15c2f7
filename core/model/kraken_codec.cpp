#include "model/kraken_codec.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace foveal::core {
namespace {

void appendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8(const std::u32string& text) {
  std::string out;
  for (char32_t cp : text) appendUtf8(cp, out);
  return out;
}

std::string labelList(const std::vector<int>& labels) {
  std::string s = "[";
  for (size_t i = 0; i < labels.size(); ++i) s += (i ? ", " : "") + std::to_string(labels[i]);
  return s + "]";
}

/// numpy's pairwise summation of doubles (what np.mean adds with), so that a mean of many
/// confidences rounds as kraken's does.
double pairwiseSum(const double* a, size_t n) {
  if (n < 8) {
    double s = 0.;
    for (size_t i = 0; i < n; ++i) s += a[i];
    return s;
  }
  if (n <= 128) {
    double r[8];
    std::copy(a, a + 8, r);
    size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) s += a[i];
    return s;
  }
  size_t half = n / 2;
  half -= half % 8;
  return pairwiseSum(a, half) + pairwiseSum(a + half, n - half);
}

/// The labels of one codec entry: a non-empty list of integers in [1, INT_MAX].
std::vector<int> parseLabels(const nlohmann::json& value, const std::string& key,
                             const std::string& origin) {
  const std::string where = origin + ": codec entry \"" + key + "\"";
  if (!value.is_array() || value.empty()) throw Error(where + " is not a non-empty list of labels");
  std::vector<int> labels;
  for (const auto& v : value) {
    if (!v.is_number_integer()) throw Error(where + " has a label that is not an integer");
    const auto label = v.get<long long>();
    if (label < 1 || label > INT_MAX)
      throw Error(where + " has label " + v.dump() + " (labels are 1 and up; 0 is CTC's blank)");
    labels.push_back(static_cast<int>(label));
  }
  return labels;
}

}  // namespace

std::u32string krakenCodepoints(const std::string& text, const std::string& origin) {
  std::u32string out;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (size_t i = 0, n = text.size(); i < n;) {
    const unsigned c = s[i];
    const size_t len = c < 0x80                 ? 1
                       : c >= 0xC2 && c <= 0xDF ? 2
                       : c >= 0xE0 && c <= 0xEF ? 3
                       : c >= 0xF0 && c <= 0xF4 ? 4
                                                : 0;
    if (len == 0 || i + len > n)
      throw Error(origin + ": invalid UTF-8 at byte " + std::to_string(i));
    char32_t cp = len == 1 ? c : c & (0xFF >> (len + 1));
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80)
        throw Error(origin + ": invalid UTF-8 at byte " + std::to_string(i));
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      throw Error(origin + ": invalid UTF-8 at byte " + std::to_string(i));
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string krakenText(const std::vector<KrakenChar>& chars) {
  std::string out;
  for (const auto& c : chars) appendUtf8(c.codepoint, out);
  return out;
}

std::vector<KrakenRun> krakenGreedyDecode(const float* probs, int classes, int frames, int seqLen) {
  if (classes < 1 || frames < 0 || seqLen < 0 || seqLen > frames)
    throw Error("kraken greedy decoder: " + std::to_string(classes) + " classes x " +
                std::to_string(frames) + " frames cannot hold a line of " + std::to_string(seqLen) +
                " frames");
  std::vector<KrakenRun> runs;
  int runLabel = -1;
  for (int t = 0; t < seqLen; ++t) {
    int label = 0;
    float best = probs[t];
    for (int c = 1; c < classes; ++c) {
      const float p = probs[static_cast<size_t>(c) * frames + t];
      if (!std::isnan(best) && (p > best || std::isnan(p))) {
        best = p;
        label = c;
      }
    }
    if (label != runLabel) {
      runLabel = label;
      if (label != 0) runs.push_back({label, t, t, best});
    } else if (label != 0) {
      KrakenRun& run = runs.back();
      run.end = t;
      // Python's max() keeps the first of equal values and never replaces a NaN
      if (best > run.confidence) run.confidence = best;
    }
  }
  return runs;
}

KrakenCodec KrakenCodec::fromJson(const std::string& codecJson, const std::string& origin) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(codecJson);
  } catch (const nlohmann::json::exception& e) {
    throw Error(origin + ": the codec is not JSON (" + e.what() + ")");
  }
  if (!json.is_object() || json.empty())
    throw Error(origin + ": the codec is not a non-empty object of texts and their labels");
  KrakenCodec codec;
  for (const auto& [key, value] : json.items()) {
    Code code{krakenCodepoints(key, origin + ": codec entry"), parseLabels(value, key, origin)};
    codec.m_maxLabel =
        std::max(codec.m_maxLabel, *std::max_element(code.labels.begin(), code.labels.end()));
    codec.m_codes.push_back(std::move(code));
  }
  // kraken's is_valid: sorted, a repeated code sits next to its twin and a prefix next to a code
  // it begins (everything between them begins with it too)
  std::vector<int> order(codec.m_codes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return codec.m_codes[a].labels < codec.m_codes[b].labels; });
  for (size_t i = 1; i < order.size(); ++i) {
    const Code& a = codec.m_codes[order[i - 1]];
    const Code& b = codec.m_codes[order[i]];
    if (a.labels == b.labels)
      throw Error(origin + ": codec entries \"" + utf8(a.text) + "\" and \"" + utf8(b.text) +
                  "\" have the same labels " + labelList(a.labels) +
                  " (kraken refuses a codec that is not one-to-one)");
    // a sorts before b, so a prefix of b is the shorter (and a longer a never reads past b's
    // end: ASan found memcmp reading a's length from b's labels)
    if (a.labels.size() < b.labels.size() &&
        std::equal(a.labels.begin(), a.labels.end(), b.labels.begin()))
      throw Error(origin + ": codec entry \"" + utf8(a.text) + "\"'s labels " +
                  labelList(a.labels) + " begin \"" + utf8(b.text) + "\"'s " + labelList(b.labels) +
                  " (kraken refuses a codec that is not prefix-free)");
  }
  for (size_t i = 0; i < codec.m_codes.size(); ++i) {
    const auto& labels = codec.m_codes[i].labels;
    if (labels.size() == 1)
      codec.m_single[labels[0]] = static_cast<int>(i);
    else
      codec.m_multi[labels[0]].push_back(static_cast<int>(i));
  }
  return codec;
}

void KrakenCodec::append(const Code& code, const std::vector<KrakenRun>& runs, size_t first,
                         std::vector<KrakenChar>& out) const {
  const size_t n = code.labels.size();
  double confidence = runs[first].confidence;
  if (n > 1) {
    std::vector<double> c(n);
    for (size_t k = 0; k < n; ++k) c[k] = runs[first + k].confidence;
    confidence = pairwiseSum(c.data(), n) / static_cast<double>(n);
  }
  for (char32_t cp : code.text)
    out.push_back({cp, runs[first].start, runs[first + n - 1].end, confidence});
}

std::vector<KrakenChar> KrakenCodec::decode(const std::vector<KrakenRun>& runs) const {
  std::vector<KrakenChar> out;
  for (size_t idx = 0; idx < runs.size();) {
    const int label = runs[idx].label;
    if (auto single = m_single.find(label); single != m_single.end()) {
      append(m_codes[single->second], runs, idx, out);
      ++idx;
      continue;
    }
    size_t used = 1;  // a label that starts no code is skipped
    if (auto multi = m_multi.find(label); multi != m_multi.end()) {
      for (int i : multi->second) {
        const auto& labels = m_codes[i].labels;
        if (idx + labels.size() > runs.size()) continue;
        bool match = true;
        for (size_t k = 1; k < labels.size() && match; ++k)
          match = runs[idx + k].label == labels[k];
        if (match) {
          append(m_codes[i], runs, idx, out);
          used = labels.size();
          break;
        }
      }
    }
    idx += used;
  }
  return out;
}

std::vector<KrakenCodec::EncodedCode> KrakenCodec::encode(const std::u32string& text,
                                                          std::u32string* unencodable) const {
  // kraken's c_sorted: the codes longest first (a stable sort, so equal lengths keep their order).
  std::vector<const Code*> sorted;
  for (const auto& c : m_codes) sorted.push_back(&c);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Code* a, const Code* b) { return a->text.size() > b->text.size(); });
  std::vector<EncodedCode> out;
  for (size_t idx = 0; idx < text.size();) {
    const Code* found = nullptr;
    for (const Code* c : sorted)
      if (!c->text.empty() && text.compare(idx, c->text.size(), c->text) == 0) {
        found = c;
        break;
      }
    if (!found) {
      if (unencodable && unencodable->find(text[idx]) == std::u32string::npos)
        unencodable->push_back(text[idx]);
      ++idx;
      continue;
    }
    out.push_back({found->text, found->labels});
    idx += found->text.size();
  }
  return out;
}

std::vector<KrakenChar> krakenReorder(const std::vector<KrakenChar>& chars, KrakenBaseDir base) {
  std::u32string text;
  for (const auto& c : chars) text.push_back(c.codepoint);
  const BidiDisplayMap map = krakenDisplayMap(text, base);
  std::vector<KrakenChar> out;
  out.reserve(map.order.size());
  for (size_t k = 0; k < map.order.size(); ++k) {
    out.push_back(chars[map.order[k]]);
    out.back().codepoint = map.text[k];
  }
  return out;
}

KrakenScale KrakenScale::forLine(int inputWidth, int outputFrames, int lineWidth, int padding) {
  if (outputFrames < 1 || lineWidth < 1 || padding < 0 || inputWidth - 2 * padding < 1)
    throw Error("kraken line scale: a network input of width " + std::to_string(inputWidth) +
                " (padding " + std::to_string(padding) + ") with " + std::to_string(outputFrames) +
                " output frames for a line of width " + std::to_string(lineWidth));
  KrakenScale s;
  s.netScale = static_cast<double>(inputWidth) / outputFrames;
  s.inScale = static_cast<double>(lineWidth) / (inputWidth - 2 * padding);
  s.padding = padding;
  return s;
}

int KrakenScale::toPixel(int frame, int minValue, int maxValue) const {
  const double x = (frame * netScale - padding) * inScale;
  double v = x < minValue ? minValue : x;
  v = maxValue - 1 < v ? maxValue - 1 : v;
  // Python's round(): to nearest, ties to even
  double r = std::round(v);
  if (std::fabs(v - r) == 0.5) r = 2.0 * std::round(v / 2.0);
  return static_cast<int>(r);
}

}  // namespace foveal::core
