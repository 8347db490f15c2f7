#include "model/model_config.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "model/charset.h"
#include "model/geometry.h"
#include "model/stages/stage_registry.h"
#include "model/vgsl_spec.h"

namespace foveal::core {

using nlohmann::json;

std::string toString(ContextKind k) {
  switch (k) {
    case ContextKind::Pooling:
      return "pooling";
    case ContextKind::Chain:
      return "chain";
    case ContextKind::Weighting:
      return "weighting";
  }
  return "?";
}

ContextKind contextFromString(const std::string& s) {
  if (s == "pooling") return ContextKind::Pooling;
  if (s == "chain") return ContextKind::Chain;
  if (s == "weighting") return ContextKind::Weighting;
  throw Error("unknown context '" + s + "' (expected pooling, chain or weighting)");
}

int Preprocessing::upsampledW() const {
  return static_cast<int>(std::lround(inputW * regionScale));
}

std::string Preprocessing::easyocrPipeline() const {
  if (!variableWidth) return {};
  std::ostringstream s;
  const std::string grey = colour == "opencv_grey" ? "cv2.cvtColor(BGR2GRAY) of the colours"
                           : colour == "pil_luma"  ? "PIL's luma"
                                                   : "the file's grey as cv2.imread reads it";
  if (preResize == "opencv_linear")
    s << "read as EasyOCR's readtext reads a crop: " << grey << ", cv2.resize (INTER_LINEAR) to "
      << inputH << " px high, then AlignCollate's PIL bicubic";
  else
    s << "read as EasyOCR's recogniser alone: " << grey
      << ", AlignCollate's PIL bicubic from the source";
  if (contrastThreshold > 0)
    s << "; contrast retry under confidence " << contrastThreshold << " (adjust_contrast "
      << adjustContrast << ")";
  else
    s << "; no contrast retry";
  return s.str();
}

int ModelConfig::cnnChannels() const {
  if (featureChannels > 0) return featureChannels;
  return stageOption(StageKind::Features, features).channels(width);
}
int ModelConfig::hidden() const { return hiddenSize > 0 ? hiddenSize : cnnChannels() / 2; }
int ModelConfig::featureDim() const {
  if (sequence == "none") return cnnChannels();
  return sequenceProjection ? hidden() : 2 * hidden();
}
int ModelConfig::depth() const {
  return std::max(8, static_cast<int>(std::lround(attentionDepth * width)));
}

bool ModelConfig::isGrid() const { return stageOption(StageKind::Features, features).grid; }

bool ModelConfig::needsUpsampled() const {
  return !isCtc() && stageOption(StageKind::Glimpse, attention).needsUpsampled;
}

bool ModelConfig::selectsRegions() const {
  return !isCtc() && stageOption(StageKind::Glimpse, attention).selectsRegions;
}

std::vector<LayerSpec> ModelConfig::featureLayers() const {
  if (features == "vgsl") return parseVgsl(kraken.vgsl, "kraken VGSL spec").geometryLayers();
  if (features == "vit") {
    LayerSpec patch;
    patch.kh = patch.sh = transformer.patchH;
    patch.kw = patch.sw = transformer.patchW;
    patch.outChannels = cnnChannels();
    return {patch};
  }
  return stageOption(StageKind::Features, features).layers(width);
}

ClassLayout ModelConfig::classLayout() const {
  if (isCtc()) return ClassLayout::BlankFirst;
  if (isTransformer()) return ClassLayout::EndFirst;   // strhub's head: [E], the characters
  if (cell == "strhub") return ClassLayout::GoEndPad;  // strhub's TRBA: [B], [E], [P] first
  return cell == "dtrb" ? ClassLayout::GoEnd : ClassLayout::EndFirst;
}

std::string ModelConfig::stageString() const {
  std::string s = transformation + "-" + features + "-" + sequence + "-" + prediction;
  if (!isCtc() && !isTransformer()) s += "(" + attention + ")";
  return s;
}

namespace {

[[noreturn]] void fail(const std::string& m) { throw Error("invalid model config: " + m); }

void validateStageNames(const ModelConfig& c) {
  for (auto [kind, name] :
       {std::pair{StageKind::Transformation, &c.transformation},
        std::pair{StageKind::Features, &c.features}, std::pair{StageKind::Sequence, &c.sequence},
        std::pair{StageKind::Prediction, &c.prediction},
        std::pair{StageKind::Glimpse, &c.attention}, std::pair{StageKind::Cell, &c.cell}}) {
    try {
      stageOption(kind, *name);
    } catch (const Error& e) {
      fail(e.what());
    }
  }
}

void validateSizes(const ModelConfig& c) {
  const auto& preprocessing = c.preprocessing;
  if (!(c.width > 0 && c.width <= 4)) fail("width must be in (0, 4]");
  if (c.attentionDepth < 1 || c.attentionDepth > 4096) fail("attention_depth must be in [1, 4096]");
  if (c.maxLength < 1 || c.maxLength > 1000) fail("max_length must be in [1, 1000]");
  if (c.numStns != 1 && c.numStns != 2) fail("stns must be 1 or 2");
  if (c.fiducials < 4 || c.fiducials > 100 || c.fiducials % 2 != 0)
    fail("fiducials must be even and in [4, 100]");
  if (c.patchW < 8 || c.patchH < 8 || c.coarsePatchW < 8 || c.patchW > 1024 || c.patchH > 1024 ||
      c.coarsePatchW > 1024)
    fail("patch sizes must be in [8, 1024]");
  if (preprocessing.inputW < 8 || preprocessing.inputH < 8 || preprocessing.inputW > 4096 ||
      preprocessing.inputH > 4096)
    fail("input size must be in [8, 4096]");
  if (!(preprocessing.regionScale >= 1.0 && preprocessing.regionScale <= 8.0))
    fail("region_scale must be in [1, 8]");
}

// A kraken network (the vgsl features) and its VGSL spec, which must fit the rest.
void validateKraken(const ModelConfig& c, bool vgsl) {
  const auto& preprocessing = c.preprocessing;
  const auto& kraken = c.kraken;
  if (vgsl != !kraken.empty() ||
      (vgsl && (c.sequence != "none" || c.transformation != "none" || c.prediction != "ctc")))
    fail(
        "the vgsl features (a kraken network) go with its VGSL spec and the ctc prediction, "
        "nothing between (" +
        c.stageString() + " given)");
  if (vgsl != (preprocessing.resize == "kraken") ||
      vgsl != (preprocessing.normalisation == "kraken"))
    fail(
        "a kraken network reads lines as kraken does (resize and normalisation \"kraken\") and "
        "only it does");
  if (vgsl) {
    const VgslSpec spec = parseVgsl(kraken.vgsl, "kraken VGSL spec");
    if (spec.inputHeight() != preprocessing.inputH ||
        spec.inputChannels() != preprocessing.channels())
      fail("the VGSL input " + std::to_string(spec.inputHeight()) + " px high with " +
           std::to_string(spec.inputChannels()) + " channels does not match the preprocessing");
    if (spec.featureChannels() != c.cnnChannels())
      fail("feature_channels must be the VGSL output layer's input (" +
           std::to_string(spec.featureChannels()) + ")");
    if (spec.outputLayer().outChannels != c.makeCharset().size())
      fail("the VGSL output layer has " + std::to_string(spec.outputLayer().outChannels) +
           " classes and the charset " + std::to_string(c.makeCharset().size()));
    if (kraken.padding < 0 || kraken.padding > 1024) fail("kraken padding must be in [0, 1024]");
  }
}

void validatePreprocessing(const ModelConfig& c, bool vgsl) {
  const auto& preprocessing = c.preprocessing;
  if (preprocessing.normalisation != "minus_one_one" && !vgsl)
    fail("unknown normalisation '" + preprocessing.normalisation + "'");
  if (preprocessing.colour != "grey" && preprocessing.colour != "pil_luma" &&
      preprocessing.colour != "opencv_grey" && preprocessing.colour != "rgb")
    fail("unknown colour '" + preprocessing.colour +
         "' (expected grey, pil_luma, opencv_grey or rgb)");
  if (preprocessing.resize != "bilinear_antialias" && preprocessing.resize != "pil_bicubic" &&
      !vgsl)
    fail("unknown resize '" + preprocessing.resize +
         "' (expected bilinear_antialias or pil_bicubic)");
  if (preprocessing.variableWidth && !preprocessing.keepRatioPad)
    fail("variable_width needs keep_ratio_pad");
  if (preprocessing.variableWidth && (c.transformation != "none" || c.needsUpsampled()))
    fail("variable_width needs a model without a transformation and without the sharpener");
  if (preprocessing.preResize != "none" && preprocessing.preResize != "opencv_linear")
    fail("unknown pre_resize '" + preprocessing.preResize + "' (expected none or opencv_linear)");
  if (preprocessing.preResize != "none" &&
      (!preprocessing.keepRatioPad || preprocessing.channels() != 1))
    fail("pre_resize (EasyOCR's readtext) needs keep_ratio_pad and a grey input");
  if (!(preprocessing.contrastThreshold >= 0 && preprocessing.contrastThreshold <= 1) ||
      !(preprocessing.adjustContrast > 0 && preprocessing.adjustContrast <= 1))
    fail("the contrast retry's threshold must be in [0, 1] and its adjust_contrast in (0, 1]");
  if (preprocessing.contrastThreshold > 0 &&
      (!preprocessing.keepRatioPad || preprocessing.channels() != 1))
    fail("the contrast retry (EasyOCR's get_text) needs keep_ratio_pad and a grey input");
}

// The prediction's options and the widths between the stages.
void validateStageOptions(const ModelConfig& c, bool vgsl) {
  const auto& ctcConfidence = c.ctcConfidence;
  const auto& attention = c.attention;
  const auto& positions = c.positions;
  if (ctcConfidence != "product" && ctcConfidence != "easyocr" && ctcConfidence != "kraken")
    fail("unknown ctc_confidence '" + ctcConfidence + "' (expected product, easyocr or kraken)");
  if (c.featureChannels < 0 || c.featureChannels > 8192 || c.hiddenSize < 0 || c.hiddenSize > 8192)
    fail("feature_channels and hidden_size must be in [0, 8192]");
  if (c.featureChannels > 0 && c.featureChannels < 16 && !vgsl)
    fail("feature_channels must be at least 16 (its layers take 1/16 of it)");
  if (c.preprocessing.channels() == 3 && c.needsUpsampled())
    fail("the sharp glimpse reads grey images only");
  if (c.reference && attention != "sharp") fail("reference needs sharp attention");
  if (c.isCtc() && (attention != "soft" || c.reference))
    fail("a CTC model has no attention glimpse (attention '" + attention + "' given)");
  if (c.sequenceProjection && c.sequence != "bilstm") fail("sequence_projection needs the bilstm");
  if (positions != "none" && positions != "sine2d")
    fail("unknown positions '" + positions + "' (expected none or sine2d)");
  if (positions == "sine2d" && c.featureDim() % 4 != 0)
    fail("positions sine2d needs a feature size divisible by 4 (it is " +
         std::to_string(c.featureDim()) + ")");
}

// The vit features, their parseq or vitstr prediction and the transformer's sizes.
void validateTransformer(const ModelConfig& c) {
  const auto& preprocessing = c.preprocessing;
  const bool vit = c.features == "vit";
  if (vit != c.isTransformer() || (vit && (c.sequence != "none" || c.transformation != "none")))
    fail("the vit features go with the parseq or vitstr prediction and nothing between (" +
         c.stageString() + " given)");
  if (!vit) return;
  const auto& t = c.transformer;
  const int d = c.cnnChannels();
  if (t.patchH < 1 || t.patchW < 1 || t.patchH > preprocessing.inputH ||
      t.patchW > preprocessing.inputW)
    fail("the patch size must be in [1, the input size]");
  if (preprocessing.inputH % t.patchH != 0 || preprocessing.inputW % t.patchW != 0)
    fail("the input size must be a multiple of the patch size");
  auto heads = [&](int h, const char* what) {
    if (h < 1 || d % h != 0)
      fail(std::string(what) + " heads must divide the embedding width " + std::to_string(d));
  };
  heads(t.encoderHeads, "encoder");
  if (t.encoderDepth < 1 || t.encoderDepth > 64 || t.encoderMlpHidden < 1 ||
      t.encoderMlpHidden > 65536)
    fail("encoder depth must be in [1, 64] and its MLP width in [1, 65536]");
  if (c.prediction == "parseq") {
    heads(t.decoderHeads, "decoder");
    if (t.decoderDepth < 1 || t.decoderDepth > 64 || t.decoderMlpHidden < 1 ||
        t.decoderMlpHidden > 65536 || t.refineIters < 0 || t.refineIters > 16)
      fail(
          "decoder depth must be in [1, 64], its MLP width in [1, 65536], refine_iters in "
          "[0, 16]");
    if (t.classToken) fail("PARSeq's encoder has no class token");
  } else {
    if (!t.classToken) fail("ViTSTR's encoder has a class token");
    const int patches = (preprocessing.inputH / t.patchH) * (preprocessing.inputW / t.patchW);
    if (patches < c.steps())
      fail("ViTSTR reads max_length + 1 = " + std::to_string(c.steps()) +
           " tokens from its patches, and the input has " + std::to_string(patches));
  }
}

// The rows the features leave at the input height, and the sharpener's and TPS's input sizes.
void validateGeometry(const ModelConfig& c, const StageOption& feat) {
  const auto& preprocessing = c.preprocessing;
  const auto& features = c.features;
  const auto rf = receptiveField(c.featureLayers(), preprocessing.inputW, preprocessing.inputH);
  if (rf.rows < 1)
    fail(features + " gives no output row for input height " +
         std::to_string(preprocessing.inputH));
  if (c.isCtc() && feat.grid && rf.rows > 1)
    fail("CTC reads one row of columns, and " + features + " keeps " + std::to_string(rf.rows) +
         " rows at input height " + std::to_string(preprocessing.inputH) +
         " (use vgg or resnet, or attention)");
  if (c.needsUpsampled()) {
    const auto prf =
        receptiveField(vggLayers(c.width), c.patchW, c.patchH);  // the sharpener's encoder
    if (prf.rows != 1) fail("patch height must give one encoder row (use 32)");
  }
  if (c.transformation == "tps" && (preprocessing.inputH < 16 || preprocessing.inputW < 16))
    fail("tps needs an input of at least 16x16 (its localisation network pools three times)");
}

}  // namespace

void ModelConfig::validate() const {
  validateStageNames(*this);
  validateSizes(*this);
  const bool vgsl = features == "vgsl";
  validateKraken(*this, vgsl);
  validatePreprocessing(*this, vgsl);
  validateStageOptions(*this, vgsl);
  makeCharset();  // throws on empty / duplicates
  const auto& feat = stageOption(StageKind::Features, features);
  validateTransformer(*this);
  validateGeometry(*this, feat);
}

std::string ModelConfig::toJson() const {
  json j;
  j["transformation"] = transformation;
  j["features"] = features;
  j["sequence"] = sequence;
  j["sequence_projection"] = sequenceProjection;
  j["prediction"] = prediction;
  if (transformation == "tps") j["fiducials"] = fiducials;
  if (positions != "none") j["positions"] = positions;
  j["cell"] = cell;
  j["attention"] = attention;
  j["context"] = toString(context);
  j["stns"] = numStns;
  j["first_stn_translation_only"] = firstStnTranslationOnly;
  j["coarse_patch_w"] = coarsePatchW;
  j["patch_w"] = patchW;
  j["patch_h"] = patchH;
  j["reference"] = reference;
  j["width"] = width;
  if (featureChannels > 0) j["feature_channels"] = featureChannels;
  if (hiddenSize > 0) j["hidden_size"] = hiddenSize;
  j["attention_depth"] = attentionDepth;
  j["max_length"] = maxLength;
  j["charset"] = charset;
  j["case_insensitive"] = caseInsensitive;
  if (charsetRepeats) j["charset_repeats"] = true;  // only where set: other files stay as they were
  j["preprocessing"] = {{"input_w", preprocessing.inputW},
                        {"input_h", preprocessing.inputH},
                        {"region_scale", preprocessing.regionScale},
                        {"normalisation", preprocessing.normalisation},
                        {"colour", preprocessing.colour},
                        {"resize", preprocessing.resize},
                        {"keep_ratio_pad", preprocessing.keepRatioPad}};
  // Written only when set, so that the files of every other model stay as they were.
  if (preprocessing.variableWidth) j["preprocessing"]["variable_width"] = true;
  if (preprocessing.preResize != "none") j["preprocessing"]["pre_resize"] = preprocessing.preResize;
  if (preprocessing.contrastThreshold > 0)
    j["preprocessing"]["contrast_retry"] = {{"contrast_ths", preprocessing.contrastThreshold},
                                            {"adjust_contrast", preprocessing.adjustContrast}};
  if (ctcConfidence != "product") j["ctc_confidence"] = ctcConfidence;
  if (features == "vgsl")
    j["kraken"] = {{"vgsl", kraken.vgsl},
                   {"codec", kraken.codecJson},
                   {"padding", kraken.padding},
                   {"legacy_polygons", kraken.legacyPolygons}};
  if (features == "vit") {
    const auto& t = transformer;
    j["transformer"] = {{"patch_h", t.patchH},
                        {"patch_w", t.patchW},
                        {"encoder_depth", t.encoderDepth},
                        {"encoder_heads", t.encoderHeads},
                        {"encoder_mlp_hidden", t.encoderMlpHidden},
                        {"class_token", t.classToken},
                        {"decoder_depth", t.decoderDepth},
                        {"decoder_heads", t.decoderHeads},
                        {"decoder_mlp_hidden", t.decoderMlpHidden},
                        {"decode_ar", t.decodeAr},
                        {"refine_iters", t.refineIters}};
  }
  return j.dump(2);
}

namespace {
// Integer fields are read through this check: nlohmann's get<int> on a float such as 6.7e36 is an
// undefined conversion (found by fuzz_checkpoint, kept in tests/data/fuzz-regressions).
int intField(const json& j, const char* name, int fallback) {
  if (!j.contains(name)) return fallback;
  const json& v = j.at(name);
  constexpr double kLimit = 1 << 30;
  if (v.is_number_integer()) {
    const auto x = v.get<int64_t>();
    if (x > -kLimit && x < kLimit) return static_cast<int>(x);
  } else if (v.is_number_float()) {
    const double x = v.get<double>();
    if (x > -kLimit && x < kLimit && x == std::floor(x)) return static_cast<int>(x);
  }
  throw Error(std::string("field '") + name + "' must be an integer of reasonable size");
}

// The stages and their sizes, the charset and the confidence rule: the top level of the file.
void readModelFields(const json& j, ModelConfig& c) {
  // Format-2 files (before the stages) hold only the attention model: the defaults below are
  // exactly that model (none-vgg-bilstm-attention, the paper's cell).
  c.transformation = j.value("transformation", std::string("none"));
  c.features = j.value("features", std::string("vgg"));
  c.sequence = j.value("sequence", std::string("bilstm"));
  c.sequenceProjection = j.value("sequence_projection", false);
  c.prediction = j.value("prediction", std::string("attention"));
  c.fiducials = intField(j, "fiducials", 20);
  c.positions = j.value("positions", std::string("none"));
  c.cell = j.value("cell", std::string("paper"));
  c.attention = j.value("attention", std::string("soft"));
  c.context = contextFromString(j.value("context", std::string("pooling")));
  c.numStns = intField(j, "stns", 1);
  c.firstStnTranslationOnly = j.value("first_stn_translation_only", true);
  c.coarsePatchW = intField(j, "coarse_patch_w", 64);
  c.patchW = intField(j, "patch_w", 24);
  c.patchH = intField(j, "patch_h", 32);
  c.reference = j.value("reference", false);
  c.width = j.value("width", 1.0);
  c.featureChannels = intField(j, "feature_channels", 0);
  c.hiddenSize = intField(j, "hidden_size", 0);
  c.attentionDepth = intField(j, "attention_depth", 256);
  if (!j.contains("max_length")) throw Error("field 'max_length' is missing");
  c.maxLength = intField(j, "max_length", 0);
  c.charset = j.at("charset").get<std::string>();
  c.caseInsensitive = j.value("case_insensitive", false);
  c.charsetRepeats = j.value("charset_repeats", false);
  c.ctcConfidence = j.value("ctc_confidence", std::string("product"));
}

void readPreprocessing(const json& p, Preprocessing& pre) {
  pre.inputW = intField(p, "input_w", 100);
  pre.inputH = intField(p, "input_h", 32);
  pre.regionScale = p.value("region_scale", 1.8);
  pre.normalisation = p.value("normalisation", std::string("minus_one_one"));
  pre.colour = p.value("colour", std::string("grey"));
  pre.resize = p.value("resize", std::string("bilinear_antialias"));
  pre.keepRatioPad = p.value("keep_ratio_pad", false);
  pre.variableWidth = p.value("variable_width", false);
  pre.preResize = p.value("pre_resize", std::string("none"));
  if (p.contains("contrast_retry")) {
    const auto& r = p.at("contrast_retry");
    pre.contrastThreshold = r.value("contrast_ths", 0.1);
    pre.adjustContrast = r.value("adjust_contrast", 0.5);
  }
}

void readKraken(const json& k, KrakenConfig& kraken) {
  kraken.vgsl = k.at("vgsl").get<std::string>();
  kraken.codecJson = k.value("codec", std::string("{}"));
  kraken.padding = intField(k, "padding", 16);
  kraken.legacyPolygons = k.value("legacy_polygons", false);
}

void readTransformer(const json& p, TransformerConfig& t) {
  t.patchH = intField(p, "patch_h", t.patchH);
  t.patchW = intField(p, "patch_w", t.patchW);
  t.encoderDepth = intField(p, "encoder_depth", t.encoderDepth);
  t.encoderHeads = intField(p, "encoder_heads", t.encoderHeads);
  t.encoderMlpHidden = intField(p, "encoder_mlp_hidden", t.encoderMlpHidden);
  t.classToken = p.value("class_token", t.classToken);
  t.decoderDepth = intField(p, "decoder_depth", t.decoderDepth);
  t.decoderHeads = intField(p, "decoder_heads", t.decoderHeads);
  t.decoderMlpHidden = intField(p, "decoder_mlp_hidden", t.decoderMlpHidden);
  t.decodeAr = p.value("decode_ar", t.decodeAr);
  t.refineIters = intField(p, "refine_iters", t.refineIters);
}
}  // namespace

ModelConfig ModelConfig::fromJson(const std::string& text, const std::string& origin) {
  ModelConfig c;
  try {
    const json j = json::parse(text);
    if (!j.is_object()) throw Error(origin + ": model config is not a JSON object");
    readModelFields(j, c);
    if (j.contains("preprocessing")) readPreprocessing(j.at("preprocessing"), c.preprocessing);
    if (j.contains("kraken")) readKraken(j.at("kraken"), c.kraken);
    if (j.contains("transformer")) readTransformer(j.at("transformer"), c.transformer);
  } catch (const json::exception& e) {
    throw Error(origin + ": bad model config JSON: " + e.what());
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  try {
    c.validate();
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  return c;
}

std::string ModelConfig::describe() const {
  std::ostringstream s;
  if (features == "vgsl") {
    s << "kraken network " << kraken.vgsl << ", " << makeCharset().size() - 1 << " labels, lines "
      << preprocessing.inputH << " px high, padded " << kraken.padding << " px, "
      << (kraken.legacyPolygons ? "legacy" : "new") << " polygon extractor";
    return s.str();
  }
  if (isCtc()) {
    s << stageString();
    if (featureChannels > 0)
      s << ", " << featureChannels << " channels, hidden " << hidden();
    else
      s << ", width " << width;
    s << ", charset \"" << charset << "\"";
    if (!preprocessing.easyocrPipeline().empty()) s << "; " << preprocessing.easyocrPipeline();
    return s.str();
  }
  if (isTransformer()) {
    const auto& t = transformer;
    s << (prediction == "parseq" ? "PARSeq" : "ViTSTR") << ": ViT " << cnnChannels() << " wide, "
      << t.encoderDepth << " layer" << (t.encoderDepth > 1 ? "s" : "") << " x " << t.encoderHeads
      << " head" << (t.encoderHeads > 1 ? "s" : "") << ", " << t.patchH << "x" << t.patchW
      << " patches";
    if (prediction == "parseq")
      s << "; decoder " << t.decoderDepth << " layer" << (t.decoderDepth > 1 ? "s" : "") << " x "
        << t.decoderHeads << " head" << (t.decoderHeads > 1 ? "s" : "") << ", "
        << (t.decodeAr ? "autoregressive" : "parallel") << ", " << t.refineIters << " refinement"
        << (t.refineIters == 1 ? "" : "s");
    s << ", charset \"" << charset << "\", max length " << maxLength;
    return s.str();
  }
  if (transformation != "none" || features != "vgg" || sequence != "bilstm" || cell != "paper")
    s << transformation << "-" << features << "-" << sequence << (sequenceProjection ? "+proj" : "")
      << "-attention"
      << (cell == "dtrb"     ? " (DTRB cell)"
          : cell == "strhub" ? " (DTRB cell, strhub's tokens)"
                             : "")
      << ", ";
  s << attention;
  if (attention == "sharp") {
    s << " (" << toString(context) << ", " << numStns << " STN" << (numStns > 1 ? "s" : "");
    if (reference) s << ", reference";
    s << ")";
  }
  if (positions != "none") s << ", " << positions << " positions";
  if (featureChannels > 0)
    s << ", " << featureChannels << " channels, hidden " << hidden();
  else
    s << ", width " << width;
  s << ", charset \"" << charset << "\", max length " << maxLength;
  return s.str();
}

}  // namespace foveal::core
