#include "train/error_analysis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "base/atomic_file.h"
#include "base/compute_device.h"
#include "base/error.h"
#include "base/text_metrics.h"
#include "data/dataset_factory.h"
#include "engines/tesseract_spec.h"
#include "formats/checkpoint.h"
#include "model/charset.h"
#include "trace/model_session.h"
#include "train/evaluate_model.h"
#include "train/reader_evaluation.h"

namespace foveal::core::train {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// ConfusionMatrix

void ConfusionMatrix::build(const std::vector<std::string>& symbols) {
  m_symbols = symbols;
  std::sort(m_symbols.begin(), m_symbols.end());
  m_symbols.erase(std::unique(m_symbols.begin(), m_symbols.end()), m_symbols.end());
  const size_t n = static_cast<size_t>(size());
  m_counts.assign(n * n, 0);
  m_images.assign(n * n, {});
}

void ConfusionMatrix::add(int truth, int read, size_t image) {
  const size_t cell = static_cast<size_t>(truth * size() + read);
  ++m_counts[cell];
  auto& list = m_images[cell];
  if (list.empty() || list.back() != image) list.push_back(image);  // images come in order
}

int ConfusionMatrix::indexOf(const std::string& symbol) const {
  if (symbol.empty()) return gap();
  const auto it = std::lower_bound(m_symbols.begin(), m_symbols.end(), symbol);
  return it != m_symbols.end() && *it == symbol ? static_cast<int>(it - m_symbols.begin()) : -1;
}

std::string ConfusionMatrix::symbol(int i) const {
  return i >= 0 && i < gap() ? m_symbols[static_cast<size_t>(i)] : std::string();
}

int64_t ConfusionMatrix::count(int truth, int read) const {
  if (truth < 0 || read < 0 || truth >= size() || read >= size()) return 0;
  return m_counts[static_cast<size_t>(truth * size() + read)];
}

const std::vector<size_t>& ConfusionMatrix::images(int truth, int read) const {
  static const std::vector<size_t> none;
  if (truth < 0 || read < 0 || truth >= size() || read >= size()) return none;
  return m_images[static_cast<size_t>(truth * size() + read)];
}

int64_t ConfusionMatrix::maxOffDiagonal() const {
  int64_t m = 0;
  for (int t = 0; t < size(); ++t)
    for (int r = 0; r < size(); ++r)
      if (t != r) m = std::max(m, count(t, r));
  return m;
}

namespace {

std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + '"';
}

std::string xmlEscape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// The name a symbol gets in files: the gap is "(none)", a space "(space)".
std::string shownSymbol(const std::string& s) {
  if (s.empty()) return "(none)";
  if (s == " ") return "(space)";
  return s;
}

}  // namespace

std::string ConfusionMatrix::csv() const {
  std::ostringstream o;
  o << "truth\\read";
  for (int r = 0; r < size(); ++r) o << ',' << csvField(shownSymbol(symbol(r)));
  o << '\n';
  for (int t = 0; t < size(); ++t) {
    o << csvField(shownSymbol(symbol(t)));
    for (int r = 0; r < size(); ++r) o << ',' << count(t, r);
    o << '\n';
  }
  return o.str();
}

std::string ConfusionMatrix::svg(const std::string& title) const {
  const int cell = 30, left = 70, top = 80, n = size();
  const int width = left + n * cell + 20, height = top + n * cell + 20;
  int64_t maxDiag = 0;
  for (int i = 0; i < n; ++i) maxDiag = std::max(maxDiag, count(i, i));
  const int64_t maxOff = maxOffDiagonal();
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"11\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">" << xmlEscape(title)
    << "</text>\n"
    << "<text x=\"" << left + n * cell / 2 << "\" y=\"42\" text-anchor=\"middle\">read</text>\n"
    << "<text x=\"14\" y=\"" << top + n * cell / 2
    << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 " << top + n * cell / 2
    << ")\">truth</text>\n";
  for (int i = 0; i < n; ++i) {
    const std::string label = i == gap() ? "\xE2\x88\x85" : xmlEscape(symbol(i));  // the empty set
    o << "<text x=\"" << left + i * cell + cell / 2 << "\" y=\"" << top - 8
      << "\" text-anchor=\"middle\">" << label << "</text>\n"
      << "<text x=\"" << left - 8 << "\" y=\"" << top + i * cell + cell / 2 + 4
      << "\" text-anchor=\"end\">" << label << "</text>\n";
  }
  for (int t = 0; t < n; ++t)
    for (int r = 0; r < n; ++r) {
      const int64_t c = count(t, r);
      // Correct readings in green, confusions in red, each scaled to its own maximum: the
      // diagonal would otherwise wash the confusions out.
      std::string fill = "#ffffff";
      if (c > 0) {
        const double v = std::sqrt(static_cast<double>(c) / static_cast<double>(std::max<int64_t>(
                                                                1, t == r ? maxDiag : maxOff)));
        const int fade = static_cast<int>(std::lround(235 - 175 * v));
        char buf[16];
        if (t == r)
          std::snprintf(buf, sizeof buf, "#%02x%02x%02x", fade, 235 - (235 - fade) / 3, fade);
        else
          std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 235 - (235 - fade) / 5, fade, fade);
        fill = buf;
      }
      o << "<rect x=\"" << left + r * cell << "\" y=\"" << top + t * cell << "\" width=\"" << cell
        << "\" height=\"" << cell << "\" fill=\"" << fill << "\" stroke=\"#d0d0d0\"/>\n";
      if (c > 0)
        o << "<text x=\"" << left + r * cell + cell / 2 << "\" y=\""
          << top + t * cell + cell / 2 + 4 << "\" text-anchor=\"middle\" font-size=\""
          << (c >= 1000 ? 8 : 10) << "\">" << c << "</text>\n";
    }
  o << "</svg>\n";
  return o.str();
}

// ---------------------------------------------------------------------------------------------
// Analysis

int ModelErrors::positionOf(size_t index) const {
  return index < positions.size() ? positions[index] : -1;
}

ModelErrors analyseReadings(const std::string& model, std::vector<ImageReading> readings,
                            bool textScoring) {
  ModelErrors m;
  m.model = model;
  m.textScoring = textScoring;
  m.readings = std::move(readings);
  std::vector<std::vector<CharOp>> ops(m.readings.size());
  std::set<std::string> symbols;
  m.errors.resize(m.readings.size());
  size_t maxIndex = 0;
  for (size_t i = 0; i < m.readings.size(); ++i) {
    const ImageReading& r = m.readings[i];
    const std::string truth = textScoring ? normaliseForScoring(r.truth) : r.truth;
    const std::string read = textScoring ? normaliseForScoring(r.reading) : r.reading;
    ops[i] = alignCharacters(read, truth);
    ImageErrors& e = m.errors[i];
    int truthChars = 0;
    for (const CharOp& op : ops[i]) {
      if (op.kind != CharOp::Kind::Match) ++e.distance;
      if (op.kind != CharOp::Kind::Insert) ++truthChars;
      if (!op.truth.empty()) symbols.insert(op.truth);
      if (!op.predicted.empty()) symbols.insert(op.predicted);
    }
    e.correct = truth == read;
    e.length = static_cast<int>(splitUtf8(r.truth).size());
    e.cer = truthChars ? static_cast<double>(e.distance) / truthChars : e.distance;
    GroupStats one;
    one.images = 1;
    one.correct = e.correct ? 1 : 0;
    one.edits = e.distance;
    one.chars = truthChars;
    for (GroupStats* g : {&m.overall, &m.byLength[e.length]}) {
      g->images += one.images;
      g->correct += one.correct;
      g->edits += one.edits;
      g->chars += one.chars;
    }
    maxIndex = std::max(maxIndex, r.index);
  }
  m.confusion.build({symbols.begin(), symbols.end()});
  for (size_t i = 0; i < ops.size(); ++i)
    for (const CharOp& op : ops[i]) {
      m.confusion.add(m.confusion.indexOf(op.truth), m.confusion.indexOf(op.predicted), i);
      switch (op.kind) {
        case CharOp::Kind::Match:
          ++m.byCharacter[op.truth].occurrences;
          ++m.byCharacter[op.truth].matched;
          break;
        case CharOp::Kind::Substitute:
          ++m.byCharacter[op.truth].occurrences;
          ++m.byCharacter[op.truth].substituted;
          break;
        case CharOp::Kind::Delete:
          ++m.byCharacter[op.truth].occurrences;
          ++m.byCharacter[op.truth].deleted;
          break;
        case CharOp::Kind::Insert:
          ++m.byCharacter[op.predicted].inserted;
          break;
      }
    }
  m.positions.assign(m.readings.empty() ? 0 : maxIndex + 1, -1);
  for (size_t i = 0; i < m.readings.size(); ++i)
    m.positions[m.readings[i].index] = static_cast<int>(i);
  return m;
}

std::vector<size_t> ErrorAnalysis::entries() const {
  std::set<size_t> all;
  for (const auto& m : models)
    for (const auto& r : m.readings) all.insert(r.index);
  return {all.begin(), all.end()};
}

namespace {

std::string modelStem(const std::string& path) {
  const std::string stem = fs::path(path).stem().string();
  return stem.empty() ? "model" : stem;
}

/// File-system-safe, distinct names per model ("soft", "soft-2" for a second soft.fvm).
std::vector<std::string> modelNames(const ErrorAnalysis& a) {
  std::vector<std::string> names;
  for (const auto& m : a.models) {
    std::string base;
    for (char c : modelStem(m.model))
      base += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')
                  ? c
                  : '_';
    std::string name = base;
    for (int k = 2; std::find(names.begin(), names.end(), name) != names.end(); ++k)
      name = base + "-" + std::to_string(k);
    names.push_back(name);
  }
  return names;
}

}  // namespace

std::string ErrorAnalysis::tableCsv() const { return tableCsv(entries()); }

std::string ErrorAnalysis::tableCsv(const std::vector<size_t>& rows) const {
  const auto names = modelNames(*this);
  std::ostringstream o;
  o << "index,entry,truth,length";
  for (const auto& n : names)
    for (const char* c : {"reading", "correct", "confidence", "edits", "cer", "entropy"})
      o << ',' << csvField(n + ":" + c);
  o << '\n';
  for (size_t index : rows) {
    const ImageReading* any = nullptr;
    int length = 0;
    for (const auto& m : models)
      if (const int p = m.positionOf(index); p >= 0) {
        any = &m.readings[static_cast<size_t>(p)];
        length = m.errors[static_cast<size_t>(p)].length;
        break;
      }
    if (!any) continue;  // no model read it
    o << index << ',' << csvField(any->entry) << ',' << csvField(any->truth) << ',' << length;
    for (const auto& m : models) {
      const int p = m.positionOf(index);
      if (p < 0) {
        o << ",,,,,,";
        continue;
      }
      const ImageReading& r = m.readings[static_cast<size_t>(p)];
      const ImageErrors& e = m.errors[static_cast<size_t>(p)];
      o << ',' << csvField(r.reading) << ',' << (e.correct ? 1 : 0) << ',' << fixed(r.confidence, 6)
        << ',' << e.distance << ',' << fixed(e.cer, 6) << ',' << fixed(r.entropy, 6);
    }
    o << '\n';
  }
  return o.str();
}

std::string ErrorAnalysis::byLengthCsv() const {
  const auto names = modelNames(*this);
  std::ostringstream o;
  o << "model,length,images,correct,accuracy,edits,chars,cer\n";
  for (size_t k = 0; k < models.size(); ++k)
    for (const auto& [len, g] : models[k].byLength)
      o << csvField(names[k]) << ',' << len << ',' << g.images << ',' << g.correct << ','
        << fixed(g.accuracy(), 6) << ',' << g.edits << ',' << g.chars << ',' << fixed(g.cer(), 6)
        << '\n';
  return o.str();
}

std::string ErrorAnalysis::byCharacterCsv() const {
  const auto names = modelNames(*this);
  std::ostringstream o;
  o << "model,character,occurrences,matched,substituted,deleted,inserted,accuracy,error_rate\n";
  for (size_t k = 0; k < models.size(); ++k)
    for (const auto& [ch, c] : models[k].byCharacter)
      o << csvField(names[k]) << ',' << csvField(shownSymbol(ch)) << ',' << c.occurrences << ','
        << c.matched << ',' << c.substituted << ',' << c.deleted << ',' << c.inserted << ','
        << fixed(c.accuracy(), 6) << ',' << fixed(c.errorRate(), 6) << '\n';
  return o.str();
}

std::string ErrorAnalysis::summary() const {
  std::ostringstream o;
  o << "dataset " << dataset << " (" << description << ")\n";
  for (const auto& m : models) {
    o << "\nmodel " << m.model << (m.textScoring ? "  (text scoring)" : "") << "\n"
      << "  images " << m.overall.images << ", read right " << m.overall.correct << " ("
      << fixed(100.0 * m.overall.accuracy(), 2) << " %), CER " << fixed(m.overall.cer(), 4) << "\n";
    if (m.skipped > 0) o << "  skipped: " << m.skippedSummary << "\n";
    o << "  by label length:";
    for (const auto& [len, g] : m.byLength)
      o << "  " << len << ": " << fixed(100.0 * g.accuracy(), 1) << " % (CER " << fixed(g.cer(), 3)
        << ")";
    o << "\n";
    struct Cell {
      int64_t n;
      int t, r;
    };
    std::vector<Cell> cells;
    const ConfusionMatrix& c = m.confusion;
    for (int t = 0; t < c.size(); ++t)
      for (int r = 0; r < c.size(); ++r)
        if (t != r && c.count(t, r) > 0) cells.push_back({c.count(t, r), t, r});
    std::sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
      return a.n != b.n ? a.n > b.n : std::tie(a.t, a.r) < std::tie(b.t, b.r);
    });
    o << "  most frequent confusions:\n";
    if (cells.empty()) o << "    none\n";
    for (size_t i = 0; i < cells.size() && i < 10; ++i) {
      const Cell& x = cells[i];
      o << "    ";
      if (x.t == c.gap())
        o << "inserted \"" << c.symbol(x.r) << "\"";
      else if (x.r == c.gap())
        o << "dropped \"" << c.symbol(x.t) << "\"";
      else
        o << "truth \"" << c.symbol(x.t) << "\" read as \"" << c.symbol(x.r) << "\"";
      o << ": " << x.n << " times in " << c.images(x.t, x.r).size() << " images\n";
    }
  }
  for (const auto& u : unread)
    o << "\nmodel " << u.model << "\n  skipped: " << u.skipped << " of " << u.skipped
      << " entries, none read (" << u.why << ")\n";
  return o.str();
}

namespace {

// Read or guessed, for each wrong reading of `m`: the image read again on its own (a trace), and
// integrated gradients over the image and the previous tokens at its character steps.
void measureImageShares(ModelErrors& m, const data::Dataset& ds, const std::string& modelPath,
                        const ErrorRunOptions& options, const std::function<bool()>& goOn) {
  std::shared_ptr<ModelSession> session;
  for (size_t i = 0; i < m.readings.size(); ++i) {
    if (m.errors[i].correct) continue;
    if (!session) session = ModelSession::open(modelPath, options.importOptions);
    const size_t index = m.readings[i].index;
    const auto image = ds.get(index).image;
    const Trace trace = session->trace(image, m.readings[i].entry);
    const int end = session->config().makeCharset().endIndex();
    AttributionOptions o;
    o.method = AttributionMethod::IntegratedGradients;
    o.igSteps = options.igSteps;
    o.tokens = true;
    for (size_t t = 0; t < trace.steps.size(); ++t)
      if (trace.steps[t].tokenIndex != end) o.steps.push_back(static_cast<int>(t));
    if (o.steps.empty()) continue;  // read nothing: no step to ask
    double lowest = 1.0;
    for (const auto& st : session->explain(image, trace, o).steps)
      if (std::isfinite(st.imageShare)) lowest = std::min(lowest, st.imageShare);
    m.errors[i].imageShare = lowest;
    if (!goOn()) throw EvalCancelled();
  }
}

}  // namespace

ErrorAnalysis runErrorAnalysis(const std::vector<std::string>& models, const std::string& dataset,
                               const ErrorRunOptions& options, const ErrorProgress& progress) {
  if (models.empty()) throw Error("error analysis: no model given");
  ErrorAnalysis a;
  a.dataset = dataset;
  const data::DatasetPtr ds = data::openDataset(dataset);
  const int64_t perModel =
      options.limit > 0 && (ds->endless() || static_cast<size_t>(options.limit) < ds->size())
          ? options.limit
          : static_cast<int64_t>(ds->size());
  const int64_t total = perModel * static_cast<int64_t>(models.size());
  const torch::Device device = resolveDevice(options.device);
  for (size_t k = 0; k < models.size(); ++k) {
    const bool engine = isTesseractSpec(models[k]);  // Tesseract, read image by image
    LoadedModel loaded;
    if (!engine) {
      loaded = loadModelFile(models[k], options.importOptions);
      loaded.model->to(device);
    }
    EvalOptions o;
    o.limit = options.limit;
    o.batchSize = options.batchSize;
    o.scoring = options.scoring;
    o.device = options.device;
    o.beamWidth = options.beamWidth;
    o.keepFailures = false;
    o.keepImages = true;
    o.skipBad = true;
    o.model = models[k];
    const int64_t before = perModel * static_cast<int64_t>(k);
    if (progress)
      o.progress = [&](int64_t done, int64_t) { return progress(before + done, total); };
    DatasetEval d = engine ? evaluateReaderOn(tesseractReader(models[k]), *ds, dataset, o)
                           : evaluateDataset(loaded.model, ds, dataset, o, device);
    a.description = d.description;
    if (d.overall.count == 0 && d.skipped > 0) {
      a.unread.push_back({models[k], d.skipped, d.skippedSummary});
      continue;
    }
    ModelErrors m =
        analyseReadings(models[k], std::move(d.images),
                        engine ? options.scoring != "exact"
                               : wantsTextScoring(loaded.config.charset, options.scoring));
    m.skipped = d.skipped;
    m.skippedByReason = d.skippedByReason;
    m.skippedSummary = d.skippedSummary;
    if (options.imageShare && !engine && !loaded.config.isCtc())
      measureImageShares(m, *ds, models[k], options,
                         [&] { return !progress || progress(before + perModel, total); });
    a.models.push_back(std::move(m));
  }
  if (a.models.empty()) {
    std::string why;
    for (const auto& u : a.unread) why += (why.empty() ? "" : "; ") + u.model + ": " + u.why;
    throw Error("no model can read an entry of " + a.description + " (" + why + ")");
  }
  return a;
}

std::vector<std::string> writeErrorReport(const ErrorAnalysis& analysis, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw Error(dir + ": cannot create the output folder (" + ec.message() + ")");
  std::vector<std::string> written;
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (fs::path(dir) / name).string();
    writeFileAtomically(path, text, "error report file");
    written.push_back(path);
  };
  write("table.csv", analysis.tableCsv());
  write("by-length.csv", analysis.byLengthCsv());
  write("by-character.csv", analysis.byCharacterCsv());
  const auto names = modelNames(analysis);
  for (size_t k = 0; k < analysis.models.size(); ++k) {
    const auto& m = analysis.models[k];
    write("confusion-" + names[k] + ".csv", m.confusion.csv());
    write("confusion-" + names[k] + ".svg",
          m.confusion.svg(modelStem(m.model) + " on " + analysis.dataset +
                          ": truth (rows) x reading (columns)"));
  }
  write("summary.txt", analysis.summary());
  return written;
}

}  // namespace foveal::core::train
