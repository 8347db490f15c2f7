#include "formats/easyocr_import.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/error.h"
#include "base/safe_read.h"
#include "base/utf8.h"
#include "formats/dtrb_charset_needed.h"
#include "formats/dtrb_weights.h"
#include "formats/model_format.h"
#include "model/charset.h"

namespace foveal::core {

namespace {

constexpr int kEasyOcrImgH = 64;  // EasyOCR's config.py: imgH = 64
// readtext's defaults (easyocr.py): contrast_ths 0.1, adjust_contrast 0.5.
constexpr double kContrastThs = 0.1, kAdjustContrast = 0.5;

bool startsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

std::string trimRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

// Only a comment may follow a quoted scalar's closing quote (at raw[pos]).
void checkAfterClosing(const std::string& raw, size_t pos, const std::string& where) {
  const std::string rest = trimRight(raw.substr(pos));
  if (!rest.empty() && rest[0] != '#')
    throw Error(where + ": text after the closing quote ('" + rest + "')");
}

// A 'single'-quoted scalar: '' is a quote.
std::string singleQuoted(const std::string& raw, const std::string& where) {
  std::string out;
  for (size_t i = 1; i < raw.size(); ++i) {
    if (raw[i] != '\'') {
      out += raw[i];
      continue;
    }
    if (i + 1 < raw.size() && raw[i + 1] == '\'') {
      out += '\'';
      ++i;
      continue;
    }
    checkAfterClosing(raw, i + 1, where);
    return out;
  }
  throw Error(where +
              ": a single-quoted value without its closing quote (multi-line values "
              "are not read)");
}

// The escape of a "double"-quoted scalar whose letter is raw[i] (after the backslash), appended
// to `out`; `i` is left on the escape's last character.
void appendEscape(const std::string& raw, size_t& i, const std::string& where, std::string& out) {
  const char e = raw[i];
  int hex = 0;
  switch (e) {
    case '\\':
      out += '\\';
      break;
    case '"':
      out += '"';
      break;
    case '/':
      out += '/';
      break;
    case ' ':
      out += ' ';
      break;
    case 'n':
      out += '\n';
      break;
    case 't':
      out += '\t';
      break;
    case 'r':
      out += '\r';
      break;
    case '0':
      out += '\0';
      break;
    case 'x':
      hex = 2;
      break;
    case 'u':
      hex = 4;
      break;
    case 'U':
      hex = 8;
      break;
    default:
      throw Error(where + ": unknown escape '\\" + std::string(1, e) + "'");
  }
  if (hex) {
    if (i + static_cast<size_t>(hex) >= raw.size())
      throw Error(where + ": a cut-off \\" + std::string(1, e) + " escape");
    const std::string digits = raw.substr(i + 1, static_cast<size_t>(hex));
    if (digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
      throw Error(where + ": bad hex digits '" + digits + "'");
    appendUtf8(static_cast<char32_t>(std::stoul(digits, nullptr, 16)), out);
    i += static_cast<size_t>(hex);
  }
}

// A "double"-quoted scalar: backslash escapes.
std::string doubleQuoted(const std::string& raw, const std::string& where) {
  std::string out;
  for (size_t i = 1; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '"') {
      checkAfterClosing(raw, i + 1, where);
      return out;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i >= raw.size()) break;
    appendEscape(raw, i, where, out);
  }
  throw Error(where +
              ": a double-quoted value without its closing quote (multi-line values "
              "are not read)");
}

// A YAML scalar as the rest of a `key: ...` line: plain (up to a " #" comment), 'single' ('' is
// a quote) or "double" (backslash escapes).
std::string scalar(const std::string& raw, const std::string& where) {
  if (raw.empty()) return {};
  if (raw[0] == '\'') return singleQuoted(raw, where);
  if (raw[0] == '"') return doubleQuoted(raw, where);
  if (raw[0] == '|' || raw[0] == '>' || raw[0] == '[' || raw[0] == '{' || raw[0] == '&' ||
      raw[0] == '*' || raw[0] == '!')
    throw Error(where + ": this YAML form ('" + raw.substr(0, 1) +
                "') is not read here; write the value on one line, plain or quoted");
  const size_t comment = raw.find(" #");
  return trimRight(comment == std::string::npos ? raw : raw.substr(0, comment));
}

// A one-line flow mapping "{a: 1, b: 2}" (a comment may follow) as its keys and raw values;
// nested collections and quoted keys are not read. Anything else -- a flow list "[...]", a
// scalar -- is refused: `what` is a mapping in EasyOCR's yaml.
std::vector<std::pair<std::string, std::string>> flowMapping(const std::string& raw,
                                                             const std::string& where,
                                                             const std::string& what) {
  if (raw[0] == '[')
    throw Error(where + ": " + what + " is a list ('" + trimRight(raw) +
                "'); EasyOCR's yaml gives a mapping (input_channel, output_channel, "
                "hidden_size)");
  if (raw[0] != '{')
    throw Error(where + ": " + what + " is a value ('" + trimRight(raw) +
                "'), not a mapping of input_channel, output_channel and hidden_size");
  const size_t close = raw.find('}');
  if (close == std::string::npos)
    throw Error(where + ": " + what + " opens '{' without closing it on the line");
  std::string after = trimRight(raw.substr(close + 1));
  after.erase(0, std::min(after.size(), after.find_first_not_of(' ')));
  if (!after.empty() && after[0] != '#')
    throw Error(where + ": text after " + what + "'s closing '}' ('" + after + "')");
  std::vector<std::pair<std::string, std::string>> out;
  const std::string body = raw.substr(1, close - 1);
  size_t start = 0;
  while (start <= body.size()) {
    size_t comma = body.find(',', start);
    if (comma == std::string::npos) comma = body.size();
    std::string item = body.substr(start, comma - start);
    start = comma + 1;
    item.erase(0, std::min(item.size(), item.find_first_not_of(' ')));
    item = trimRight(item);
    if (item.empty()) continue;
    if (item.find_first_of("{}[]\"'") != std::string::npos)
      throw Error(where + ": " + what + " holds '" + item +
                  "': only plain 'key: number' pairs are read in its one-line form");
    const size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw Error(where + ": " + what + " holds '" + item + "', not 'key: value'");
    std::string value = item.substr(colon + 1);
    value.erase(0, std::min(value.size(), value.find_first_not_of(' ')));
    out.emplace_back(trimRight(item.substr(0, colon)), value);
  }
  return out;
}

int intScalar(const std::string& raw, const std::string& where) {
  const std::string v = scalar(raw, where);
  size_t used = 0;
  int x = 0;
  try {
    x = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || x < 1 || x > 8192)
    throw Error(where + ": expected a whole number in [1, 8192], got '" + v + "'");
  return x;
}

// A number option in [lo, hi] (lo excluded when `openLo`).
double numberOption(const ImportOptions& o, const std::string& key, double fallback,
                    const std::string& file, double lo, double hi, bool openLo) {
  auto it = o.find(key);
  if (it == o.end()) return fallback;
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size() || !(openLo ? v > lo : v >= lo) || !(v <= hi)) {
    char range[64];
    std::snprintf(range, sizeof range, "%s%g, %g]", openLo ? "(" : "[", lo, hi);
    throw Error(file + ": --" + key + " must be a number in " + range + " (got '" + it->second +
                "')");
  }
  return v;
}

// How the model reads an image: as EasyOCR's readtext reads a crop (a file, or a BGR array), or
// as its recogniser alone (get_text given the file's pixels).
struct EasyOcrInput {
  std::string name, colour, preResize, words;
  double contrastThs = 0, adjustContrast = kAdjustContrast;
};

EasyOcrInput easyocrInput(const ImportOptions& o, const std::string& path) {
  EasyOcrInput in;
  in.name = stringOption(o, "easyocr-input", "readtext");
  if (in.name == "readtext") {
    in.colour = "grey";  // cv2.imread(IMREAD_GRAYSCALE): Foveal's decoder's grey
    in.preResize = "opencv_linear";
    in.words =
        "as EasyOCR's readtext reads a crop file (cv2.imread's grey, cv2.resize to the "
        "height, AlignCollate)";
  } else if (in.name == "readtext-array") {
    in.colour = "opencv_grey";  // reformat_input's cvtColor(BGR2GRAY) of an array
    in.preResize = "opencv_linear";
    in.words =
        "as EasyOCR's readtext reads a BGR array (cvtColor's grey, cv2.resize to the "
        "height, AlignCollate)";
  } else if (in.name == "recogniser") {
    in.colour = "pil_luma";
    in.preResize = "none";
    in.words =
        "as EasyOCR's recogniser alone reads a crop's pixels (PIL's luma, AlignCollate's "
        "bicubic from the source)";
  } else {
    throw Error(path + ": --easyocr-input " + in.name +
                " is not one of readtext (as readtext reads a crop file), readtext-array (a BGR "
                "array) or recogniser (the recogniser alone)");
  }
  in.contrastThs = numberOption(o, "contrast-ths", in.name == "recogniser" ? 0.0 : kContrastThs,
                                path, 0, 1, false);
  in.adjustContrast = numberOption(o, "adjust-contrast", kAdjustContrast, path, 0, 1, true);
  return in;
}

// EasyOCR's recogniser keys: DTRB's without a transformation, with the BiLSTM and a CTC Linear.
struct KeyShape {
  bool easyocrShaped = false;
  bool prefix = false;
  std::string why;
};

KeyShape keyShape(const StoredStateDict& sd) {
  KeyShape k;
  bool features = false, sequence = false, ctc = false, other = false;
  size_t prefixed = 0;
  for (const auto& t : sd.tensors) {
    const bool pre = startsWith(t.key, "module.");
    prefixed += pre;
    const std::string name = pre ? t.key.substr(7) : t.key;
    if (startsWith(name, "FeatureExtraction."))
      features = true;
    else if (startsWith(name, "SequenceModeling."))
      sequence = true;
    else if (name == "Prediction.weight" || name == "Prediction.bias")
      ctc = true;
    else
      other = true;
  }
  k.prefix = prefixed != 0;
  k.easyocrShaped = features && sequence && ctc && !other;
  if (!k.easyocrShaped)
    k.why =
        "not the keys of EasyOCR's recognisers (FeatureExtraction, SequenceModeling, a CTC "
        "Prediction Linear, nothing else)";
  else
    k.why = "a torch.save " + sd.format + " file of " + std::to_string(sd.tensors.size()) +
            " tensors" + (k.prefix ? " under DataParallel's 'module.'" : "") +
            " with EasyOCR's recogniser keys (FeatureExtraction, SequenceModeling, CTC Prediction)";
  return k;
}

// NAME.yaml beside NAME.pth, whatever it is: a directory or a FIFO there is named when it is
// read (readRegularFile says which), not skipped as if there were none (issue 65).
std::string yamlBeside(const FileProbe& file) {
  std::filesystem::path p(file.path());
  p.replace_extension(".yaml");
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(p, ec);
  return !ec && std::filesystem::exists(st) ? p.string() : std::string();
}

// The yaml the options name, or NAME.yaml beside NAME.pth (EasyOCR's user_network layout).
std::string yamlOf(const FileProbe& file, const ImportOptions& o) {
  const std::string given = stringOption(o, "yaml");
  return given.empty() ? yamlBeside(file) : given;
}

// The characters a list names more than once, each quoted once, in order of their repeat:
// "'.', 'अ', 'ं', 'ः'" for devanagari_g1; empty when every character is listed once.
std::string repeatedCharacters(const std::string& characters) {
  std::set<std::string> seen, reported;
  std::string out;
  for (const auto& cp : splitUtf8(characters))
    if (!seen.insert(cp).second && reported.insert(cp).second)
      out += (out.empty() ? "'" : ", '") + cp + "'";
  return out;
}

struct ChosenCharset {
  std::string characters, source;
};

ChosenCharset charsetFor(const FileProbe& file, const ImportOptions& o,
                         const EasyOcrUserNetwork* yaml, const DtrbArchitecture& a,
                         ImportReport& report) {
  const int n = a.numClasses - 1;  // class 0 is the blank
  ChosenCharset c;
  const std::string named = stringOption(o, "easyocr");
  const EasyOcrReleasedModel* released = nullptr;
  if (!named.empty()) {
    released = findEasyOcrModel(named);
    if (!released) {
      std::string names;
      for (const auto& m : easyOcrReleasedModels())
        names += (names.empty() ? "" : ", ") + std::string(m.name);
      throw Error(file.path() + ": --easyocr " + named + " is not one of EasyOCR's released " +
                  "recognisers (" + names + ")");
    }
  }
  if (!stringOption(o, "character").empty()) {
    c = {stringOption(o, "character"), "--character"};
  } else if (yaml) {
    c = {yaml->characters, "character_list of " + yaml->path};
    if (released)  // it went unused without a word (issue 65)
      report.assumed.push_back("--easyocr " + named + " not used for the characters: " + c.source +
                               " names them (give --character to choose)");
  } else if (released) {
    c = {released->characters, "--easyocr " + named +
                                   ": the character list EasyOCR's config.py "
                                   "gives " +
                                   released->name};
  } else if ((released = findEasyOcrModel(file.stem()))) {
    c = {released->characters, "the file is named as EasyOCR's released " +
                                   std::string(released->filename) +
                                   ": its character list from "
                                   "EasyOCR's config.py (" +
                                   released->name + ")"};
    report.assumed.push_back("charset: " + c.source);
  } else {
    throw DtrbCharsetNeeded(
        file.path() + ": the file has " + std::to_string(a.numClasses) + " classes (" +
            std::to_string(n) +
            " characters besides the blank) and nothing says which: give "
            "--easyocr NAME (a released model; 'foveal-cli formats' lists them), NAME.yaml "
            "beside the file (--yaml), or --character",
        a.describe(), a.numClasses);
  }
  if (released && released->generation == 1 && a.features != "ResNet")
    report.assumed.push_back(std::string(released->name) +
                             " is a generation-1 (ResNet) model; this file has " + a.features +
                             " features: its character list is used as given");
  if (released && released->generation == 2 && a.features != "VGG")
    report.assumed.push_back(std::string(released->name) +
                             " is a generation-2 (VGG) model; this file has " + a.features +
                             " features: its character list is used as given");
  checkCharsetUtf8(c.characters, file.path() + ": " + c.source);  // before counting its tokens
  // A list EasyOCR reads may name a character twice (its released devanagari_g1 and arabic_g1,
  // and the yaml of a network fine-tuned from them): both classes read as it (below). --character
  // is Foveal's own option, which EasyOCR never sees: a repeat there is a typing error, refused
  // as the DTRB import refuses one (it was accepted: issue 65).
  if (c.source == "--character") {
    const std::string repeated = repeatedCharacters(c.characters);
    if (!repeated.empty())
      throw Error(file.path() + ": --character names " + repeated +
                  " more than once (each class needs its own character; EasyOCR's rule for a "
                  "repeat applies to the lists it reads, a yaml's character_list)");
  }
  const int count = static_cast<int>(splitUtf8(c.characters).size());
  if (count != n)
    throw Error(file.path() + ": " + c.source + " has " + std::to_string(count) +
                " characters, giving " + std::to_string(count + 1) +
                " classes with the blank; the file's Prediction has " +
                std::to_string(a.numClasses) + " (" + std::to_string(n) + " characters)");
  return c;
}

void checkNetworkParams(const EasyOcrUserNetwork& y, const DtrbArchitecture& a,
                        const std::string& path) {
  auto check = [&](const char* key, int said, int file, const char* where) {
    if (said != 0 && said != file)
      throw Error(path + ": " + y.path + " says network_params." + key + " " +
                  std::to_string(said) + ", but the file's " + where + " gives " +
                  std::to_string(file));
  };
  check("input_channel", y.inputChannel, a.inputChannels, "first convolution");
  check("output_channel", y.outputChannel, a.outputChannels, "FeatureExtraction");
  check("hidden_size", y.hiddenSize, a.hiddenSize, "SequenceModeling");
}

// The recogniser's stages and preprocessing (None-VGG/ResNet-BiLSTM-CTC, EasyOCR's reading of a
// line), each default it takes said in the report's "assumed" list.
ModelConfig easyocrConfig(const DtrbArchitecture& a, const ChosenCharset& cs,
                          const EasyOcrInput& input, int imgH, const ImportOptions& o,
                          const std::string& path, ImportReport& report) {
  ModelConfig c;
  c.transformation = "none";
  c.features = a.features == "VGG" ? "vgg" : "resnet";
  c.sequence = "bilstm";
  c.sequenceProjection = true;
  c.prediction = "ctc";
  c.cell = "dtrb";
  c.attention = "soft";
  c.featureChannels = a.outputChannels;
  c.hiddenSize = a.hiddenSize;
  c.attentionDepth = a.hiddenSize;
  c.maxLength = 25;  // not used by CTC, which reads as many columns as the width gives
  c.charset = cs.characters;
  // A character listed twice (EasyOCR's devanagari_g1 and arabic_g1 lists): EasyOCR keeps both
  // classes, reads each as the character and encodes a label's character as the later one.
  const auto repeated = repeatedCharacters(cs.characters);
  if (!repeated.empty()) {
    c.charsetRepeats = true;
    report.assumed.push_back("the character list names " + repeated +
                             " twice: each is two classes that both read as it (EasyOCR's "
                             "rule); a label encodes it as the later class");
  }
  c.ctcConfidence = "easyocr";
  c.preprocessing.inputH = imgH;
  c.preprocessing.inputW = 4 * imgH;  // nominal: a word of ratio 4; each batch sets its own
  c.preprocessing.colour = input.colour;
  c.preprocessing.resize = "pil_bicubic";
  c.preprocessing.keepRatioPad = true;
  c.preprocessing.variableWidth = true;
  c.preprocessing.preResize = input.preResize;
  c.preprocessing.contrastThreshold = input.contrastThs;
  c.preprocessing.adjustContrast = input.adjustContrast;
  if (!o.count("easyocr-input"))
    report.assumed.push_back("read " + input.words +
                             "; --easyocr-input recogniser reads as "
                             "the recogniser alone");
  if (!o.count("contrast-ths") && input.contrastThs > 0)
    report.assumed.push_back("get_text's contrast retry with readtext's defaults (contrast_ths " +
                             std::string("0.1, adjust_contrast ") +
                             (o.count("adjust-contrast") ? o.at("adjust-contrast") : "0.5") +
                             "); --contrast-ths 0 turns it off");
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
  return c;
}

LoadedModel loadEasyOcr(const FileProbe& file, const ImportOptions& o, ImportReport& report) {
  const std::string& path = file.path();
  const StoredStateDict* sd = file.stateDict();
  if (!sd) throw Error(path + ": not a torch.save file (EasyOCR's recognisers are .pth files)");
  const DtrbArchitecture a = dtrbArchitecture(*sd, path);
  if (a.transformation != "None" || a.sequence != "BiLSTM" || a.prediction != "CTC")
    throw Error(path +
                ": EasyOCR's recognisers are None-VGG-BiLSTM-CTC or None-ResNet-BiLSTM-CTC;"
                " this file is " +
                a.describe());
  if (a.inputChannels != 1)
    throw Error(path + ": the first convolution takes " + std::to_string(a.inputChannels) +
                " channels; EasyOCR feeds its recognisers grey images (1)");
  std::unique_ptr<EasyOcrUserNetwork> yaml;
  const std::string yamlPath = yamlOf(file, o);
  if (!yamlPath.empty()) {
    yaml = std::make_unique<EasyOcrUserNetwork>(readEasyOcrYaml(yamlPath));
    checkNetworkParams(*yaml, a, path);
  }
  const ChosenCharset cs = charsetFor(file, o, yaml.get(), a, report);
  const EasyOcrInput input = easyocrInput(o, path);
  int imgH = yaml && yaml->imgH ? yaml->imgH : kEasyOcrImgH;
  imgH = intOption(o, "imgH", imgH, path, 8, 4096);
  if (!yaml && !o.count("imgH")) report.assumed.push_back("input height 64 (EasyOCR's imgH)");

  const ModelConfig c = easyocrConfig(a, cs, input, imgH, o, path, report);
  DtrbOptions sizes;  // only the TPS checks read it, and EasyOCR has no TPS
  sizes.imgH = imgH;
  sizes.imgW = c.preprocessing.inputW;
  LoadedModel loaded = importDtrbWeights(*sd, a, c, path, sizes, &report.assumed);
  const std::string generation =
      a.features == "VGG" ? "generation 2 (VGG)" : "generation 1 (ResNet)";
  report.description = "EasyOCR recogniser, " + generation + " (" + sd->format + " format" +
                       (a.modulePrefix ? ", DataParallel 'module.' prefix" : "") +
                       "): " + a.describe() + "; charset: " + cs.source + "; " +
                       c.preprocessing.easyocrPipeline();
  nlohmann::json meta;
  meta["format"] = "foveal-checkpoint";
  meta["model"] = nlohmann::json::parse(c.toJson());
  meta["imported_from"] = {{"kind", "easyocr"},
                           {"file", path},
                           {"save_format", sd->format},
                           {"module_prefix", a.modulePrefix},
                           {"architecture", a.describe()},
                           {"charset", cs.source},
                           {"input", input.name},
                           {"notes", report.assumed}};
  loaded.metadataJson = meta.dump(2);
  report.provenanceJson = meta["imported_from"].dump();
  return loaded;
}

Sniff sniffEasyOcr(const FileProbe& file, const ImportOptions& o) {
  const StoredStateDict* sd = file.stateDict();
  if (!sd) return {};
  const KeyShape k = keyShape(*sd);
  if (!k.easyocrShaped) return {0, k.why};
  if (!stringOption(o, "easyocr").empty())
    return {95, k.why + ", and --easyocr " + stringOption(o, "easyocr") + " given"};
  if (!stringOption(o, "yaml").empty())
    return {95, k.why + ", and --yaml " + stringOption(o, "yaml") + " given"};
  const std::string yaml = yamlBeside(file);
  if (!yaml.empty())
    return {90, k.why + ", and " + yaml + " beside it (EasyOCR's user_network layout)"};
  if (const auto* m = findEasyOcrModel(file.stem()))
    return {80, k.why + ", named as EasyOCR's released " + std::string(m->filename)};
  return {0, k.why +
                 ", but nothing says it is EasyOCR's (no --easyocr NAME, no NAME.yaml beside it, "
                 "not a released model's file name)"};
}

}  // namespace

const EasyOcrReleasedModel* findEasyOcrModel(const std::string& name) {
  for (const auto& m : easyOcrReleasedModels()) {
    const std::string file = m.filename;
    if (name == m.name || name == file || name + ".pth" == file) return &m;
  }
  return nullptr;
}

EasyOcrUserNetwork parseEasyOcrYaml(const std::string& text, const std::string& origin) {
  EasyOcrUserNetwork n;
  n.path = origin;
  bool haveCharacters = false;
  std::string section;  // the top-level key whose nested lines follow
  size_t start = 0;
  for (int line = 1; start <= text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string s = text.substr(start, end - start);
    start = end + 1;
    if (!s.empty() && s.back() == '\r') s.pop_back();
    const std::string where = origin + ":" + std::to_string(line);
    const size_t indent = s.find_first_not_of(' ');
    if (indent == std::string::npos || s[indent] == '#') continue;
    if (s[indent] == '\t') throw Error(where + ": a tab in the indentation (YAML allows spaces)");
    const std::string content = s.substr(indent);
    if (content == "---" || content == "...") continue;
    if (content[0] == '-' && (content.size() == 1 || content[1] == ' ')) {
      if (section.empty()) throw Error(where + ": a list item outside any key");
      continue;  // lang_list's items: EasyOCR's detector, not the recogniser
    }
    size_t colon = std::string::npos;
    if (content[0] != '"' && content[0] != '\'')
      for (size_t i = 0; i < content.size(); ++i)
        if (content[i] == ':' && (i + 1 == content.size() || content[i + 1] == ' ')) {
          colon = i;
          break;
        }
    if (colon == std::string::npos) throw Error(where + ": expected 'key: value'");
    const std::string key = trimRight(content.substr(0, colon));
    std::string rest = content.substr(colon + 1);
    rest.erase(0, std::min(rest.size(), rest.find_first_not_of(' ')));
    // network_params' three sizes, from its block mapping or a flow one.
    auto networkParam = [&](const std::string& name, const std::string& value) {
      if (name == "input_channel")
        n.inputChannel = intScalar(value, where);
      else if (name == "output_channel")
        n.outputChannel = intScalar(value, where);
      else if (name == "hidden_size")
        n.hiddenSize = intScalar(value, where);
    };
    if (indent == 0) {
      section.clear();
      if (rest.empty() || rest[0] == '#') {
        section = key;
        continue;
      }
      if (key == "network_params") {  // written on one line: read, or refused (issue 65)
        for (const auto& [name, value] : flowMapping(rest, where, "network_params"))
          networkParam(name, value);
        continue;
      }
      if (key == "character_list") {
        n.characters = scalar(rest, where);
        haveCharacters = true;
      } else if (key == "imgH") {
        n.imgH = intScalar(rest, where);
      }
      continue;
    }
    if (section.empty()) throw Error(where + ": an indented line outside any key");
    if (section != "network_params") continue;
    networkParam(key, rest);
  }
  if (!haveCharacters || n.characters.empty())
    throw Error(origin +
                ": no character_list (EasyOCR's user_network yaml names the model's characters "
                "there)");
  return n;
}

EasyOcrUserNetwork readEasyOcrYaml(const std::string& path) {
  return parseEasyOcrYaml(readRegularFile(path, "EasyOCR network yaml", 1 << 20), path);
}

// The registry's entry (model_format.cpp).
ModelFormat easyocrModelFormat() {
  ModelFormat f;
  f.name = "easyocr";
  f.summary = "an EasyOCR recogniser (released generation 1 or 2, or a user_network .pth)";
  f.options = {
      {"easyocr", "the released model it is (english_g2, latin_g1, ...: 'foveal-cli formats')",
       false, "from the file's name"},
      {"yaml", "EasyOCR's user_network NAME.yaml", false, "the .yaml beside the file"},
      {"character", "the characters of the classes in order", false,
       "the released list or the yaml's"},
      {"imgH", "the input height", false, "64, or the yaml's imgH"},
      {"easyocr-input",
       "readtext (as readtext reads a crop file), readtext-array (a BGR array) or recogniser "
       "(the recogniser alone)",
       false, "readtext"},
      {"contrast-ths", "under this confidence, read again with more contrast; 0: never", false,
       "0.1; 0 for the recogniser alone"},
      {"adjust-contrast", "the contrast of that second reading", false, "0.5"},
  };

  f.sniff = sniffEasyOcr;
  f.load = loadEasyOcr;
  // The yaml load() reads is an input: `import X.pth --out X.yaml` replaced it (issue 65).
  f.companions = [](const FileProbe& file, const ImportOptions& o) {
    return std::vector<std::string>{yamlOf(file, o)};
  };
  return f;
}

}  // namespace foveal::core
