#include "base/text_metrics.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "model/charset.h"

#ifdef FOVEAL_HAVE_ICU
#include <unicode/brkiter.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>
#endif

namespace foveal::core {

namespace {
std::vector<std::vector<int>> table(const std::vector<std::string>& a,
                                    const std::vector<std::string>& b) {
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j)
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
  return d;
}
}  // namespace

int editDistance(const std::string& a, const std::string& b) {
  const auto ca = splitUtf8(a), cb = splitUtf8(b);
  return table(ca, cb)[ca.size()][cb.size()];
}

double normalisedEditDistance(const std::string& prediction, const std::string& truth) {
  const size_t n = std::max(splitUtf8(prediction).size(), splitUtf8(truth).size());
  if (n == 0) return 1.0;
  return 1.0 - static_cast<double>(editDistance(prediction, truth)) / static_cast<double>(n);
}

std::vector<CharOp> alignCharacters(const std::string& prediction, const std::string& truth) {
  const auto p = splitUtf8(prediction), t = splitUtf8(truth);
  const auto d = table(p, t);
  std::vector<CharOp> ops;
  size_t i = p.size(), j = t.size();
  while (i > 0 || j > 0) {
    if (i > 0 && j > 0 && d[i][j] == d[i - 1][j - 1] + (p[i - 1] == t[j - 1] ? 0 : 1)) {
      ops.push_back({p[i - 1] == t[j - 1] ? CharOp::Kind::Match : CharOp::Kind::Substitute,
                     p[i - 1], t[j - 1]});
      --i;
      --j;
    } else if (i > 0 && d[i][j] == d[i - 1][j] + 1) {
      ops.push_back({CharOp::Kind::Insert, p[i - 1], ""});
      --i;
    } else {
      ops.push_back({CharOp::Kind::Delete, "", t[j - 1]});
      --j;
    }
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

std::vector<bool> correctPredictedCharacters(const std::string& prediction,
                                             const std::string& truth) {
  std::vector<bool> out;
  for (const auto& op : alignCharacters(prediction, truth))
    if (op.kind != CharOp::Kind::Delete) out.push_back(op.kind == CharOp::Kind::Match);
  return out;
}

bool hasGraphemeClusters() {
#ifdef FOVEAL_HAVE_ICU
  return true;
#else
  return false;
#endif
}

std::vector<std::string> graphemeClusters(const std::string& text) {
#ifdef FOVEAL_HAVE_ICU
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(err);
  if (U_FAILURE(err)) return splitUtf8(text);
  const icu::UnicodeString normal = nfc->normalize(icu::UnicodeString::fromUTF8(text), err);
  if (U_FAILURE(err)) return splitUtf8(text);
  std::unique_ptr<icu::BreakIterator> it(
      icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), err));
  if (U_FAILURE(err) || !it) return splitUtf8(text);
  it->setText(normal);
  std::vector<std::string> out;
  for (int32_t start = it->first(), end = it->next(); end != icu::BreakIterator::DONE;
       start = end, end = it->next()) {
    std::string cluster;
    normal.tempSubStringBetween(start, end).toUTF8String(cluster);
    out.push_back(std::move(cluster));
  }
  return out;
#else
  return splitUtf8(text);
#endif
}

CharacterErrors characterErrors(const std::string& prediction, const std::string& truth) {
  const auto p = graphemeClusters(prediction), t = graphemeClusters(truth);
  return {table(p, t)[p.size()][t.size()], static_cast<int>(t.size())};
}

double characterErrorRate(const std::string& prediction, const std::string& truth) {
  const auto e = characterErrors(prediction, truth);
  if (e.distance == 0) return 0.0;
  if (e.truthLength == 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(e.distance) / e.truthLength;
}

}  // namespace foveal::core
