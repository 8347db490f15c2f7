// Tesseract through its C++ API (libtesseract 5): the one file that includes it.
#include "engines/tesseract_engine.h"

#include <tesseract/baseapi.h>
#include <tesseract/ltrresultiterator.h>
#include <tesseract/resultiterator.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <vector>

#include "base/error.h"

namespace foveal::core {

namespace {

std::string takeText(char* text) {
  std::string out = text ? text : "";
  delete[] text;
  return out;
}

// One LSTM timestep's choices as libtesseract gives them (character, probability; "" is the
// null character, CTC's blank).
using Timestep = std::vector<std::pair<const char*, float>>;

// A symbol of the reading and the timesteps libtesseract segmented to it (its raw LSTM output).
struct SymbolColumns {
  size_t step = 0;  // its index in Trace::steps
  int word = 0;
  Box box;
  std::vector<Timestep> timesteps;
};

std::string choiceToken(const char* text) {
  return (text && *text) ? std::string(text) : std::string("<blank>");
}

double probabilityOf(const Timestep& t, const std::string& token) {
  for (const auto& c : t)
    if (choiceToken(c.first) == token) return static_cast<double>(c.second);
  return 0.0;
}

// The timesteps of `sym` that emit its token (top choice), or where the token is most probable
// when it is never the top choice (none where it never appears).
std::vector<size_t> emittingTimesteps(const SymbolColumns& sym, const std::string& token) {
  std::vector<size_t> emitting;
  for (size_t j = 0; j < sym.timesteps.size(); ++j) {
    const auto& t = sym.timesteps[j];
    if (!t.empty() && choiceToken(t.front().first) == token) emitting.push_back(j);
  }
  if (emitting.empty()) {  // never the top choice: where it is most probable
    size_t best = 0;
    for (size_t j = 1; j < sym.timesteps.size(); ++j)
      if (probabilityOf(sym.timesteps[j], token) > probabilityOf(sym.timesteps[best], token))
        best = j;
    if (!sym.timesteps.empty() && probabilityOf(sym.timesteps[best], token) > 0)
      emitting.push_back(best);
  }
  return emitting;
}

// One word's timesteps across the line: x = x0 + pitch * t, the word's top and bottom, and its
// timestep count.
struct WordPitch {
  double pitch = 0.0, x0 = 0.0, top = 0.0, bottom = 0.0;
  size_t offset = 0;
};

// The least-squares fit of x = x0 + pitch * t for symbols [begin, end), one word.
WordPitch fitWordPitch(const Trace& tr, const std::vector<SymbolColumns>& symbols, size_t begin,
                       size_t end) {
  WordPitch f;
  // The fit points: (timestep index in the word + 0.5, box centre).
  std::vector<std::pair<double, double>> points;
  f.top = symbols[begin].box.y;
  f.bottom = symbols[begin].box.y + symbols[begin].box.h;
  double pitchOfOne = 0.0;
  for (size_t s = begin; s < end; ++s) {
    const auto& sym = symbols[s];
    f.top = std::min(f.top, sym.box.y);
    f.bottom = std::max(f.bottom, sym.box.y + sym.box.h);
    const std::vector<size_t> emitting = emittingTimesteps(sym, tr.steps[sym.step].token);
    if (!emitting.empty()) {
      double mean = 0;
      for (size_t j : emitting) mean += static_cast<double>(f.offset + j) + 0.5;
      mean /= static_cast<double>(emitting.size());
      points.emplace_back(mean, sym.box.x + sym.box.w / 2);
      pitchOfOne = sym.box.w / static_cast<double>(emitting.size());
    }
    f.offset += sym.timesteps.size();
  }
  if (points.size() >= 2) {
    double mt = 0, mx = 0;
    for (const auto& [t, x] : points) mt += t, mx += x;
    mt /= static_cast<double>(points.size());
    mx /= static_cast<double>(points.size());
    double stt = 0, stx = 0;
    for (const auto& [t, x] : points) stt += (t - mt) * (t - mt), stx += (t - mt) * (x - mx);
    if (stt > 0) f.pitch = stx / stt;
    f.x0 = mx - f.pitch * mt;
  } else if (points.size() == 1) {
    f.pitch = pitchOfOne;
    f.x0 = points.front().second - f.pitch * points.front().first;
  }
  if (!(f.pitch > 0) || f.offset == 0) {  // nothing to fit: the word's width shared out evenly
    const double left = symbols[begin].box.x;
    const double right = symbols[end - 1].box.x + symbols[end - 1].box.w;
    f.pitch = std::max(1e-3, (right - left) / static_cast<double>(std::max<size_t>(f.offset, 1)));
    f.x0 = left;
  }
  return f;
}

// Symbols [begin, end)'s timesteps as columns of the trace (their regions by the word's fit);
// each symbol's columns [first, last) into stepColumns.
void addWordColumns(Trace& tr, const std::vector<SymbolColumns>& symbols, size_t begin, size_t end,
                    const WordPitch& f, std::vector<std::pair<size_t, size_t>>& stepColumns) {
  const double top = f.top, bottom = f.bottom;
  const size_t first = tr.columnTopk.size();
  for (size_t s = begin; s < end; ++s) {
    const size_t from = tr.columnTopk.size();
    for (const auto& t : symbols[s].timesteps) {
      const double j = static_cast<double>(tr.columnTopk.size() - first);
      const double a = f.x0 + f.pitch * j, b = a + f.pitch;
      const double w = static_cast<double>(tr.imageW);
      const double l = std::clamp(a, 0.0, std::max(0.0, w - 1)), r = std::clamp(b, l + 1, w);
      tr.regions.push_back({l, top, r - l, bottom - top});
      tr.regionCentres.push_back({(a + b) / 2, (top + bottom) / 2});
      std::vector<TokenProb> choices;
      for (const auto& c : t)
        if (choices.size() < 5)
          choices.push_back({choiceToken(c.first), 0, static_cast<double>(c.second)});
      std::stable_sort(choices.begin(), choices.end(),
                       [](const TokenProb& x, const TokenProb& y) { return x.prob > y.prob; });
      tr.columnTopk.push_back(std::move(choices));
    }
    stepColumns[symbols[s].step] = {from, tr.columnTopk.size()};
  }
}

// Each symbol: its timesteps as its columns; its map, the token's probability at every timestep
// of the line, normalised (the row of the alignment matrix, as for CTC).
void addStepMaps(Trace& tr, const std::vector<std::pair<size_t, size_t>>& stepColumns,
                 StepMap& posterior) {
  double entropySum = 0;
  int withMap = 0;
  for (size_t k = 0; k < tr.steps.size(); ++k) {
    auto& st = tr.steps[k];
    const auto [from, to] = stepColumns[k];
    if (from == to) continue;  // its word was segmented otherwise: no timesteps
    for (size_t c = from; c < to; ++c) st.columns.push_back(static_cast<int>(c));
    std::vector<double> row(tr.columnTopk.size(), 0.0);
    double sum = 0;
    for (size_t c = 0; c < tr.columnTopk.size(); ++c)
      for (const auto& tp : tr.columnTopk[c])
        if (tp.token == st.token) sum += (row[c] = tp.prob);
    int best = st.columns.front();
    for (int c : st.columns)
      if (row[static_cast<size_t>(c)] > row[static_cast<size_t>(best)]) best = c;
    st.region = best;
    if (sum > 0) {
      for (double& v : row) v /= sum;
      st.entropy = entropy(row);
      entropySum += st.entropy;
      ++withMap;
      posterior.steps[k] = std::move(row);
    }
  }
  tr.meanEntropy = withMap ? entropySum / withMap : 0.0;
}

// The timesteps as columns of the line (what a CTC model's trace has). libtesseract says which
// timesteps belong to which symbol but not where they lie; the LSTM's timesteps are evenly spaced
// across its scaled line, and Tesseract's symbol box spans the timesteps that emit the symbol. So,
// per word, x = x0 + pitch * t is fitted by least squares to (the mean index of each symbol's
// emitting timesteps, its box's centre); a word of one symbol takes its pitch from the box's
// width over its emitting timesteps. Each timestep's region is its pitch-wide slice at that x,
// the word's height tall, clipped to the image.
void addTimestepColumns(Trace& tr, const std::vector<SymbolColumns>& symbols) {
  StepMap& posterior = tr.addMap(kAttentionMap, "posterior over timesteps");
  posterior.steps.assign(tr.steps.size(), {});
  std::vector<std::pair<size_t, size_t>> stepColumns(tr.steps.size(), {0, 0});  // [first, last)
  size_t begin = 0;
  while (begin < symbols.size()) {
    size_t end = begin;
    while (end < symbols.size() && symbols[end].word == symbols[begin].word) ++end;
    addWordColumns(tr, symbols, begin, end, fitWordPitch(tr, symbols, begin, end), stepColumns);
    begin = end;
  }
  addStepMaps(tr, stepColumns, posterior);
}

// The languages of a '+'-joined list ("deu+eng"), as Tesseract's ParseLanguageString reads it
// (a spec holds no '~', which would mean "not this one").
std::vector<std::string> splitLanguages(const std::string& list) {
  std::vector<std::string> out;
  size_t begin = 0;
  while (begin <= list.size()) {
    const size_t plus = std::min(list.find('+', begin), list.size());
    if (plus > begin) out.push_back(list.substr(begin, plus - begin));
    begin = plus + 1;
  }
  return out;
}

// Why LANG.traineddata in `folder` did not load: absent, a directory, empty, unreadable, or
// there and readable yet not a traineddata file Tesseract can load (corrupt or truncated).
std::string traineddataProblem(const std::string& folder, const std::string& language) {
  namespace fs = std::filesystem;
  const std::string dir = folder.empty() ? std::string("./") : folder;
  const fs::path file = fs::path(dir) / (language + ".traineddata");
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (ec || !fs::exists(status))
    return "no " + language + ".traineddata in " + dir + "; Debian: apt install tesseract-ocr-" +
           language;
  if (fs::is_directory(status)) return file.string() + " is a directory, not a traineddata file";
  if (!fs::is_regular_file(status)) return file.string() + " is not a regular file";
  const auto size = fs::file_size(file, ec);
  if (!ec && size == 0) return file.string() + " is an empty file, not a traineddata file";
  std::ifstream in(file, std::ios::binary);
  if (!in) return file.string() + " cannot be read (" + std::strerror(errno) + ")";
  return file.string() + " (" + std::to_string(size) +
         " bytes) is corrupt or not a traineddata file: Tesseract could not load it";
}

// Per word: the LSTM's timesteps libtesseract segmented to it (lstm_choice_mode > 0 keeps
// them; they stay valid until api.Clear()), the space step before it, its symbols' steps.
struct WordTimesteps {
  const std::vector<std::vector<Timestep>>* lists = nullptr;
  int space = -1;
  std::vector<size_t> steps;
};

// The gap between two words: a space step, certain, boxed by the gap between the previous
// symbol (its right edge, top and bottom) and this one (l, t, b).
TraceStep spaceStep(int prevRight, int prevTop, int prevBottom, int l, int t, int b) {
  TraceStep space;
  space.token = " ";
  space.prob = 1.0;
  const int top = std::min(prevTop, t), bottom = std::max(prevBottom, b);
  space.box = {static_cast<double>(prevRight), static_cast<double>(top),
               static_cast<double>(std::max(0, l - prevRight)), static_cast<double>(bottom - top)};
  space.focus = {space.box.x + space.box.w / 2, space.box.y + space.box.h / 2};
  space.topk = {{" ", 0, 1.0}};
  return space;
}

// The iterator's symbol as a step: its text, confidence, box (l, t, r, b) and best 5 choices.
TraceStep symbolStep(const tesseract::ResultIterator& it, int l, int t, int r, int b) {
  TraceStep s;
  s.token = takeText(it.GetUTF8Text(tesseract::RIL_SYMBOL));
  s.prob = std::clamp(it.Confidence(tesseract::RIL_SYMBOL) / 100.0, 0.0, 1.0);
  s.box = {static_cast<double>(l), static_cast<double>(t), static_cast<double>(r - l),
           static_cast<double>(b - t)};
  s.focus = {s.box.x + s.box.w / 2, s.box.y + s.box.h / 2};
  tesseract::ChoiceIterator ci(it);
  do {
    const char* text = ci.GetUTF8Text();
    if (text && *text) s.topk.push_back({text, 0, std::clamp(ci.Confidence() / 100.0, 0.0, 1.0)});
  } while (ci.Next());
  std::stable_sort(s.topk.begin(), s.topk.end(),
                   [](const TokenProb& a, const TokenProb& b) { return a.prob > b.prob; });
  if (s.topk.size() > 5) s.topk.resize(5);
  if (s.topk.empty()) s.topk = {{s.token, 0, s.prob}};
  return s;
}

// The reading's symbols as steps of `tr` (a space step between words), and its words.
std::vector<WordTimesteps> readSymbols(tesseract::ResultIterator* it, Trace& tr) {
  bool first = true;
  std::vector<WordTimesteps> words;
  int prevRight = 0, prevTop = 0, prevBottom = 0;
  if (!it) return words;
  do {
    if (it->Empty(tesseract::RIL_SYMBOL)) continue;
    int l = 0, t = 0, r = 0, b = 0;
    it->BoundingBox(tesseract::RIL_SYMBOL, &l, &t, &r, &b);
    if (!first && it->IsAtBeginningOf(tesseract::RIL_WORD)) {
      tr.steps.push_back(spaceStep(prevRight, prevTop, prevBottom, l, t, b));
      tr.prediction += " ";
    }
    if (first || it->IsAtBeginningOf(tesseract::RIL_WORD)) {
      words.emplace_back();
      words.back().lists = it->GetRawLSTMTimesteps();
      if (!first) words.back().space = static_cast<int>(tr.steps.size()) - 1;
    }
    words.back().steps.push_back(tr.steps.size());
    TraceStep s = symbolStep(*it, l, t, r, b);
    tr.prediction += s.token;
    tr.steps.push_back(std::move(s));
    prevRight = r;
    prevTop = t;
    prevBottom = b;
    first = false;
  } while (it->Next(tesseract::RIL_SYMBOL));
  return words;
}

// libtesseract segments a word's timesteps one list per symbol, and a word after the first
// begins with one more list: the timesteps of the space before it (their top choice is " ").
// A word segmented otherwise (a ligature, a dropped symbol) keeps no columns; the others do.
std::vector<SymbolColumns> symbolColumns(const Trace& tr, const std::vector<WordTimesteps>& words) {
  std::vector<SymbolColumns> columns;
  for (size_t w = 0; w < words.size(); ++w) {
    const auto& word = words[w];
    if (!word.lists) continue;
    const size_t n = word.steps.size();
    size_t list = 0;
    if (word.lists->size() == n + 1 && word.space >= 0) {
      const auto& gap = tr.steps[static_cast<size_t>(word.space)];
      columns.push_back(
          {static_cast<size_t>(word.space), static_cast<int>(w), gap.box, (*word.lists)[list++]});
    } else if (word.lists->size() != n) {
      continue;
    }
    for (size_t k = 0; k < n; ++k) {
      const auto& st = tr.steps[word.steps[k]];
      columns.push_back({word.steps[k], static_cast<int>(w), st.box, (*word.lists)[list++]});
    }
  }
  return columns;
}

}  // namespace

struct TesseractEngine::Impl {
  TesseractSpec spec;
  mutable std::mutex mutex;  // a TessBaseAPI reads one image at a time
  mutable tesseract::TessBaseAPI api;
};

bool tesseractAvailable() { return true; }

std::string tesseractVersion() {
  return std::string("Tesseract ") + tesseract::TessBaseAPI::Version();
}

std::shared_ptr<TesseractEngine> TesseractEngine::open(const TesseractSpec& spec) {
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  const bool started =
      impl->api.Init(nullptr, spec.language.c_str(), tesseract::OEM_LSTM_ONLY) == 0;
  // Tesseract starts with the languages it could load and only prints the others' failure
  // ("eng+nope" read with eng alone): each language asked for must be among the loaded ones.
  std::vector<std::string> loaded;
  if (started) impl->api.GetLoadedLanguagesAsVector(&loaded);
  std::string failed, why;
  for (const auto& language : splitLanguages(spec.language)) {
    if (std::find(loaded.begin(), loaded.end(), language) != loaded.end()) continue;
    failed += (failed.empty() ? "'" : ", '") + language + "'";
    // The folder it searched (TESSDATA_PREFIX, or the one compiled in): set by Init even when
    // it fails.
    why += (why.empty() ? "" : "; ") + traineddataProblem(impl->api.GetDatapath(), language);
  }
  if (!failed.empty())
    throw Error(spec.toString() + ": Tesseract cannot load the language" +
                (failed.find(',') == std::string::npos ? " " : "s ") + failed + " (" + why + ")");
  if (!started) throw Error(spec.toString() + ": Tesseract did not start (its messages above)");
  impl->api.SetPageSegMode(static_cast<tesseract::PageSegMode>(spec.psm));
  // The LSTM's choices per symbol (what hOCR's lstm_choices spans show).
  impl->api.SetVariable("lstm_choice_mode", "2");
  if (!spec.characters.empty())
    impl->api.SetVariable("tessedit_char_whitelist", spec.characters.c_str());
  return std::shared_ptr<TesseractEngine>(new TesseractEngine(std::move(impl)));
}

TesseractEngine::TesseractEngine(std::unique_ptr<Impl> impl) : d(std::move(impl)) {}
TesseractEngine::~TesseractEngine() {
  if (d) d->api.End();
}

const TesseractSpec& TesseractEngine::spec() const { return d->spec; }

std::string TesseractEngine::describe() const {
  return tesseractVersion() + " (" + d->spec.language + ", psm " + std::to_string(d->spec.psm) +
         (d->spec.characters.empty() ? "" : ", characters " + d->spec.characters) + ", LSTM)";
}

Trace TesseractEngine::read(const GreyImage& image, const std::string& source) const {
  if (image.width <= 0 || image.height <= 0 ||
      image.pixels.size() != static_cast<size_t>(image.width) * static_cast<size_t>(image.height))
    throw Error(source + ": not an image Tesseract can read (" + std::to_string(image.width) + "x" +
                std::to_string(image.height) + ")");
  Trace tr;
  tr.source = source;
  tr.modelKind = "tesseract";
  tr.decoder = "tesseract";
  tr.modelDescription = describe();
  tr.stages = "tesseract (" + d->spec.toString() + ")";
  tr.focusRule = kTesseractFocusRule;
  tr.imageW = image.width;
  tr.imageH = image.height;

  std::lock_guard<std::mutex> lock(d->mutex);
  auto& api = d->api;
  api.SetImage(image.pixels.data(), image.width, image.height, 1, image.width);
  api.SetSourceResolution(70);  // what Tesseract assumes for an image without one, said aloud
  api.SetInputName(source.c_str());
  if (api.Recognize(nullptr) != 0) throw Error(source + ": Tesseract failed to read the image");
  tr.confidence = std::clamp(api.MeanTextConf() / 100.0, 0.0, 1.0);

  std::unique_ptr<tesseract::ResultIterator> it(api.GetIterator());
  const std::vector<WordTimesteps> words = readSymbols(it.get(), tr);
  const std::vector<SymbolColumns> columns = symbolColumns(tr, words);
  if (!columns.empty()) addTimestepColumns(tr, columns);
  api.Clear();
  return tr;
}

}  // namespace foveal::core
