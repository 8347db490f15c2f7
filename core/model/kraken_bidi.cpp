#include "model/kraken_bidi.h"

#include <algorithm>

// The rules below follow kraken/lib/bidi/__init__.py function by function (kraken calls it "an
// unoptimized, literal port of the spec"), so that every choice it makes where UAX #9 leaves room
// (X9 characters left out of the level runs, sos from the previous kept character, BD16's
// stack limit ending the pairing, L1 over the kept characters only) is made the same way here.

namespace foveal::core {
namespace {

using C = BidiClass;

constexpr int kMaxDepth = 125;        // BD2
constexpr int kMaxPairingDepth = 63;  // BD16
constexpr int kNone = -1;             // a level removed by X9

bool isIsolateInitiator(C c) { return c == C::LRI || c == C::RLI || c == C::FSI; }
bool isIsolate(C c) { return isIsolateInitiator(c) || c == C::PDI; }
bool isEmbedding(C c) { return c == C::RLE || c == C::LRE || c == C::RLO || c == C::LRO; }
// neutral or isolate formatting character (NI)
bool isNeutralOrIsolate(C c) {
  return c == C::B || c == C::S || c == C::WS || c == C::ON || isIsolate(c);
}
C direction(int level) { return level % 2 ? C::R : C::L; }

/// P2/P3 over types[start, end): the level of the first strong character outside isolates.
int firstStrongLevel(const std::vector<C>& types, size_t start, size_t end) {
  int depth = 0;
  for (size_t i = start; i < end; ++i) {
    const C t = types[i];
    if (isIsolateInitiator(t)) {
      ++depth;
    } else if (t == C::PDI) {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      if (t == C::L) return 0;
      if (t == C::R || t == C::AL) return 1;
    }
  }
  return 0;
}

/// BD9: for each isolate initiator the index of its PDI (kNone when unmatched); which PDIs match.
struct IsolateMatch {
  std::vector<int> pdiOf;
  std::vector<bool> matchedPdi;
};

IsolateMatch matchIsolates(const std::vector<C>& types) {
  IsolateMatch m{std::vector<int>(types.size(), kNone), std::vector<bool>(types.size(), false)};
  std::vector<int> stack;
  for (size_t i = 0; i < types.size(); ++i) {
    if (isIsolateInitiator(types[i])) {
      stack.push_back(static_cast<int>(i));
    } else if (types[i] == C::PDI && !stack.empty()) {
      m.pdiOf[stack.back()] = static_cast<int>(i);
      m.matchedPdi[i] = true;
      stack.pop_back();
    }
  }
  return m;
}

struct StatusEntry {
  int level;
  char override;  // 'N' (neutral), 'L' or 'R'
  bool isolate;
};

void applyOverride(const StatusEntry& top, C& wtype) {
  if (top.override == 'L') wtype = C::L;
  if (top.override == 'R') wtype = C::R;
}

/// X1-X9: explicit levels; the characters X9 removes get kNone. Overrides are written to wtypes.
std::vector<int> explicitLevels(const std::vector<C>& types, std::vector<C>& wtypes,
                                const IsolateMatch& match, int paraLevel) {
  std::vector<int> levels(types.size(), paraLevel);
  std::vector<StatusEntry> stack{{paraLevel, 'N', false}};
  int overflowIsolates = 0, overflowEmbeddings = 0, validIsolates = 0;
  for (size_t i = 0; i < types.size(); ++i) {
    const C t = types[i];
    if (isEmbedding(t)) {  // X2-X5
      levels[i] = kNone;
      const int top = stack.back().level;
      const bool rtl = t == C::RLE || t == C::RLO;
      const int level = rtl ? (top + 1) | 1 : (top + 2) & ~1;
      if (level <= kMaxDepth && !overflowIsolates && !overflowEmbeddings) {
        stack.push_back({level, t == C::RLO ? 'R' : t == C::LRO ? 'L' : 'N', false});
      } else if (!overflowIsolates) {
        ++overflowEmbeddings;
      }
    } else if (isIsolateInitiator(t)) {  // X5a-X5c
      const StatusEntry top = stack.back();
      levels[i] = top.level;
      applyOverride(top, wtypes[i]);
      bool rtl = t == C::RLI;
      if (t == C::FSI) {
        const int pdi = match.pdiOf[i];
        rtl = firstStrongLevel(types, i + 1, pdi != kNone ? pdi : types.size()) == 1;
      }
      const int level = rtl ? (top.level + 1) | 1 : (top.level + 2) & ~1;
      if (level <= kMaxDepth && !overflowIsolates && !overflowEmbeddings) {
        ++validIsolates;
        stack.push_back({level, 'N', true});
      } else {
        ++overflowIsolates;
      }
    } else if (t == C::PDI) {  // X6a
      if (overflowIsolates) {
        --overflowIsolates;
      } else if (validIsolates) {
        overflowEmbeddings = 0;
        while (!stack.back().isolate) stack.pop_back();
        stack.pop_back();
        --validIsolates;
      }
      levels[i] = stack.back().level;
      applyOverride(stack.back(), wtypes[i]);
    } else if (t == C::PDF) {  // X7
      levels[i] = kNone;
      if (!overflowIsolates) {
        if (overflowEmbeddings)
          --overflowEmbeddings;
        else if (!stack.back().isolate && stack.size() > 1)
          stack.pop_back();
      }
    } else if (t == C::B) {  // X8
      levels[i] = paraLevel;
    } else if (t == C::BN) {
      levels[i] = kNone;
    } else {  // X6
      levels[i] = stack.back().level;
      applyOverride(stack.back(), wtypes[i]);
    }
  }
  return levels;
}

struct RunSequence {
  std::vector<int> positions;
  C sos, eos;
};

/// X10/BD13: the isolating run sequences over the kept characters, with their sos and eos.
std::vector<RunSequence> isolatingRunSequences(const std::vector<C>& types,
                                               const std::vector<int>& levels,
                                               const std::vector<int>& keep,
                                               const IsolateMatch& match, int paraLevel) {
  std::vector<std::vector<int>> runs;
  std::vector<int> runOf(types.size(), kNone), keepIndex(types.size(), kNone);
  for (size_t k = 0; k < keep.size(); ++k) {
    const int pos = keep[k];
    if (!runs.empty() && levels[pos] == levels[runs.back().back()])
      runs.back().push_back(pos);
    else
      runs.push_back({pos});
    runOf[pos] = static_cast<int>(runs.size()) - 1;
    keepIndex[pos] = static_cast<int>(k);
  }
  std::vector<RunSequence> sequences;
  for (const auto& run : runs) {
    // a run opened by a matched PDI continues the sequence of its initiator
    if (types[run.front()] == C::PDI && match.matchedPdi[run.front()]) continue;
    std::vector<int> seq = run;
    while (isIsolateInitiator(types[seq.back()]) && match.pdiOf[seq.back()] != kNone) {
      const auto& next = runs[runOf[match.pdiOf[seq.back()]]];
      seq.insert(seq.end(), next.begin(), next.end());
    }
    const int first = seq.front(), last = seq.back();
    const int kf = keepIndex[first];
    const int prevLevel = kf > 0 ? levels[keep[kf - 1]] : paraLevel;
    int nextLevel = paraLevel;
    if (!(isIsolateInitiator(types[last]) && match.pdiOf[last] == kNone)) {
      const size_t kl = keepIndex[last] + 1;
      nextLevel = kl < keep.size() ? levels[keep[kl]] : paraLevel;
    }
    sequences.push_back({std::move(seq), direction(std::max(levels[first], prevLevel)),
                         direction(std::max(levels[last], nextLevel))});
  }
  return sequences;
}

/// W1-W7 over one isolating run sequence.
void resolveWeak(const RunSequence& rs, std::vector<C>& w) {
  const auto& seq = rs.positions;
  const size_t n = seq.size();
  C prev = rs.sos;  // W1
  for (int pos : seq) {
    if (w[pos] == C::NSM) w[pos] = isIsolate(prev) ? C::ON : prev;
    prev = w[pos];
  }
  C strong = rs.sos;  // W2
  for (int pos : seq) {
    if (w[pos] == C::EN && strong == C::AL) w[pos] = C::AN;
    if (w[pos] == C::L || w[pos] == C::R || w[pos] == C::AL) strong = w[pos];
  }
  for (int pos : seq)  // W3
    if (w[pos] == C::AL) w[pos] = C::R;
  for (size_t k = 1; k + 1 < n; ++k) {  // W4
    const C t = w[seq[k]], before = w[seq[k - 1]], after = w[seq[k + 1]];
    if (t == C::ES && before == C::EN && after == C::EN)
      w[seq[k]] = C::EN;
    else if (t == C::CS && before == after && (before == C::EN || before == C::AN))
      w[seq[k]] = before;
  }
  for (size_t k = 0; k < n;) {  // W5
    if (w[seq[k]] != C::ET) {
      ++k;
      continue;
    }
    size_t j = k;
    while (j < n && w[seq[j]] == C::ET) ++j;
    const C before = k > 0 ? w[seq[k - 1]] : rs.sos;
    const C after = j < n ? w[seq[j]] : rs.eos;
    if (before == C::EN || after == C::EN)
      for (size_t m = k; m < j; ++m) w[seq[m]] = C::EN;
    k = j;
  }
  for (int pos : seq)  // W6
    if (w[pos] == C::ET || w[pos] == C::ES || w[pos] == C::CS) w[pos] = C::ON;
  strong = rs.sos;  // W7
  for (int pos : seq) {
    if (w[pos] == C::EN && strong == C::L) w[pos] = C::L;
    if (w[pos] == C::L || w[pos] == C::R) strong = w[pos];
  }
}

/// Within N0, EN and AN count as R; kNoStrong for anything not strong.
constexpr C kNoStrong = C::ON;
C n0Strong(C t) {
  if (t == C::L) return C::L;
  if (t == C::R || t == C::EN || t == C::AN) return C::R;
  return kNoStrong;
}

// N0's canonical equivalents (U+3008/U+3009 pair as U+2329/U+232A).
char32_t canonicalBracket(char32_t cp) {
  return cp == 0x3008 ? 0x2329 : cp == 0x3009 ? 0x232A : cp;
}

/// BD16: the bracket pairs of a sequence, as indices into it, sorted by the opener.
std::vector<std::pair<size_t, size_t>> bracketPairs(const std::vector<int>& seq,
                                                    const std::vector<C>& w,
                                                    const std::u32string& cps) {
  std::vector<std::pair<char32_t, size_t>> stack;
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t k = 0; k < seq.size(); ++k) {
    if (w[seq[k]] != C::ON) continue;
    const BidiBracket b = bidiBracket(cps[seq[k]]);
    if (b.type == 'o') {
      if (stack.size() == static_cast<size_t>(kMaxPairingDepth)) break;
      stack.emplace_back(canonicalBracket(cps[seq[k]]), k);
    } else if (b.type == 'c') {
      const char32_t opener = canonicalBracket(b.pair);
      for (size_t si = stack.size(); si-- > 0;) {
        if (stack[si].first == opener) {
          pairs.emplace_back(stack[si].second, k);
          stack.resize(si);
          break;
        }
      }
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

/// N0: the type a bracket pair takes, or kNoStrong when it stays neutral (N0 d).
C bracketPairType(const std::vector<int>& seq, const std::vector<C>& w, size_t open, size_t close,
                  C sos, C embedding) {
  bool foundOpposite = false;
  for (size_t k = open + 1; k < close; ++k) {  // N0 b
    const C strong = n0Strong(w[seq[k]]);
    if (strong == embedding) return embedding;
    if (strong != kNoStrong) foundOpposite = true;
  }
  if (!foundOpposite) return kNoStrong;
  const C opposite = embedding == C::R ? C::L : C::R;  // N0 c
  C context = sos;
  for (size_t k = open; k-- > 0;) {
    const C strong = n0Strong(w[seq[k]]);
    if (strong != kNoStrong) {
      context = strong;
      break;
    }
  }
  return context == opposite ? opposite : embedding;
}

/// N0 with BD14-BD16 over one sequence.
void resolveBrackets(const RunSequence& rs, const std::vector<C>& types, std::vector<C>& w,
                     const std::u32string& cps, C embedding) {
  const auto& seq = rs.positions;
  for (const auto& [open, close] : bracketPairs(seq, w, cps)) {
    const C type = bracketPairType(seq, w, open, close, rs.sos, embedding);
    if (type == kNoStrong) continue;
    w[seq[open]] = type;
    w[seq[close]] = type;
    // NSMs (by their original class) following a re-typed bracket take its type
    for (size_t bracket : {open, close})
      for (size_t k = bracket + 1; k < seq.size() && types[seq[k]] == C::NSM; ++k) w[seq[k]] = type;
  }
}

/// N1/N2 over one sequence.
void resolveNeutrals(const RunSequence& rs, std::vector<C>& w, C embedding) {
  const auto& seq = rs.positions;
  const size_t n = seq.size();
  auto asStrong = [](C t) { return t == C::EN || t == C::AN ? C::R : t; };
  for (size_t k = 0; k < n;) {
    if (!isNeutralOrIsolate(w[seq[k]])) {
      ++k;
      continue;
    }
    size_t j = k;
    while (j < n && isNeutralOrIsolate(w[seq[j]])) ++j;
    const C before = asStrong(k > 0 ? w[seq[k - 1]] : rs.sos);
    const C after = asStrong(j < n ? w[seq[j]] : rs.eos);
    const C fill = before == after ? before : embedding;
    for (size_t m = k; m < j; ++m) w[seq[m]] = fill;
    k = j;
  }
}

/// I1/I2, then L1 (by the original classes) over the kept characters.
void implicitAndLineLevels(const std::vector<C>& types, const std::vector<C>& w,
                           const std::vector<int>& keep, int paraLevel, std::vector<int>& levels) {
  for (int pos : keep) {
    if (levels[pos] % 2) {
      if (w[pos] != C::R) levels[pos] += 1;
    } else if (w[pos] == C::R) {
      levels[pos] += 1;
    } else if (w[pos] == C::EN || w[pos] == C::AN) {
      levels[pos] += 2;
    }
  }
  bool reset = true;
  for (size_t k = keep.size(); k-- > 0;) {
    const int pos = keep[k];
    const C t = types[pos];
    if (t == C::B || t == C::S) {
      levels[pos] = paraLevel;
      reset = true;
    } else if (t == C::WS || isIsolate(t)) {
      if (reset) levels[pos] = paraLevel;
    } else {
      reset = false;
    }
  }
}

/// L2: the kept characters from left to right.
std::vector<int> visualOrder(const std::vector<int>& keep, const std::vector<int>& levels) {
  std::vector<int> visual = keep;
  if (visual.empty()) return visual;
  int highest = 0, lowestOdd = kNone;
  for (int pos : visual) {
    highest = std::max(highest, levels[pos]);
    if (levels[pos] % 2 && (lowestOdd == kNone || levels[pos] < lowestOdd)) lowestOdd = levels[pos];
  }
  if (lowestOdd == kNone) return visual;
  for (int level = highest; level >= lowestOdd; --level) {
    for (size_t k = 0; k < visual.size();) {
      if (levels[visual[k]] < level) {
        ++k;
        continue;
      }
      size_t j = k;
      while (j < visual.size() && levels[visual[j]] >= level) ++j;
      std::reverse(visual.begin() + k, visual.begin() + j);
      k = j;
    }
  }
  return visual;
}

std::vector<C> classesOf(const std::u32string& text) {
  std::vector<C> types(text.size());
  std::transform(text.begin(), text.end(), types.begin(), bidiClass);
  return types;
}

}  // namespace

int krakenParagraphLevel(const std::u32string& text) {
  return firstStrongLevel(classesOf(text), 0, text.size());
}

BidiDisplayMap krakenDisplayMap(const std::u32string& text, KrakenBaseDir base) {
  const std::vector<C> types = classesOf(text);
  const int paraLevel = base == KrakenBaseDir::Auto ? firstStrongLevel(types, 0, types.size())
                        : base == KrakenBaseDir::L  ? 0
                                                    : 1;
  std::vector<C> w = types;
  const IsolateMatch match = matchIsolates(types);
  std::vector<int> levels = explicitLevels(types, w, match, paraLevel);
  std::vector<int> keep;
  for (size_t i = 0; i < levels.size(); ++i)
    if (levels[i] != kNone) keep.push_back(static_cast<int>(i));
  for (const RunSequence& rs : isolatingRunSequences(types, levels, keep, match, paraLevel)) {
    const C embedding = direction(levels[rs.positions.front()]);
    resolveWeak(rs, w);
    resolveBrackets(rs, types, w, text, embedding);
    resolveNeutrals(rs, w, embedding);
  }
  implicitAndLineLevels(types, w, keep, paraLevel, levels);
  BidiDisplayMap out;
  for (int k : visualOrder(keep, levels)) {
    if (isIsolate(types[k])) continue;
    out.text.push_back(levels[k] % 2 ? bidiMirror(text[k]) : text[k]);  // L4
    out.order.push_back(k);
  }
  return out;
}

}  // namespace foveal::core
