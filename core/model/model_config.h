#pragma once
// The complete description of a recognizer: its four stages (transformation, features, sequence,
// prediction; docs/ARCHITECTURE.md "The model as stages"), the attention decoder's glimpse and
// cell, the charset and the preprocessing. It is serialised as JSON into every checkpoint, so a
// model file is self-describing. Stage and glimpse names are checked against
// core/model/stages/stage_registry.h.
#include <string>

#include "model/charset.h"
#include "model/geometry.h"

#include <vector>

namespace foveal::core {

/// Sharp glimpse: how the context is formed from the sharpener's Z_t and x_s.
enum class ContextKind { Pooling, Chain, Weighting };

std::string toString(ContextKind k);
ContextKind contextFromString(const std::string& s);  ///< throws Error

/// How a source image becomes network input. Recorded in the checkpoint.
struct Preprocessing {
  int inputW = 100;          ///< backbone input width
  int inputH = 32;           ///< backbone input height
  double regionScale = 1.8;  ///< sharpener cuts regions from a (inputW*scale) x inputH copy
  /// Pixel values: grey in [0,255] maps to [-1, 1] ("minus_one_one"), or kraken's: the line
  /// scaled to inputH, padded, in [0, 1] and inverted ("kraken", with resize "kraken": the whole
  /// pipeline of core/image/kraken_line.h).
  std::string normalisation = "minus_one_one";
  /// How a colour file becomes the input: "grey" (Foveal's own, the decoder's conversion: with
  /// OpenCV, cv2.imread(IMREAD_GRAYSCALE)'s, as EasyOCR's readtext reads a file), "pil_luma"
  /// (PIL's convert('L'): ITU-R 601-2 luma in integers, as DTRB), "opencv_grey" (the colours
  /// through cv2.cvtColor(BGR2GRAY), as readtext reads a BGR array), "rgb" (3 channels).
  std::string colour = "grey";
  /// "bilinear_antialias" (Foveal's own) or "pil_bicubic" (PIL's resize(BICUBIC) on 8-bit
  /// pixels: support widened by the scale when shrinking, a = -0.5, fixed-point, as DTRB).
  std::string resize = "bilinear_antialias";
  /// DTRB's --PAD: resize to inputH keeping the ratio (width ceil(inputH * w / h), at most
  /// inputW), then pad on the right by repeating the last column.
  bool keepRatioPad = false;
  /// EasyOCR's variable width (with keepRatioPad): a batch is ceil(max(1, w / h, h / w)) *
  /// inputH wide for its widest image (EasyOCR's max_width), each image resized to inputH
  /// keeping its ratio and padded to that width; inputW is then only the nominal width (the
  /// geometry shown before an image is read, benchmarks).
  bool variableWidth = false;
  /// EasyOCR's readtext (get_image_list's compute_ratio_and_resize): "opencv_linear" resizes
  /// each image to inputH high with OpenCV's INTER_LINEAR (int(inputH * w / h) wide; an image
  /// narrower than tall to inputH wide, int(inputH * h / w) high) before keepRatioPad's `resize`;
  /// "none": `resize` reads the source itself (EasyOCR's recogniser alone).
  std::string preResize = "none";
  /// EasyOCR's get_text contrast retry: a reading whose confidence is under contrastThreshold
  /// is read again from the image with its contrast raised (adjust_contrast_grey to the target
  /// adjustContrast, after preResize), and the second pass kept unless the first was more
  /// confident. 0: no retry (readtext's defaults are 0.1 and 0.5).
  double contrastThreshold = 0;
  double adjustContrast = 0.5;
  int channels() const { return colour == "rgb" ? 3 : 1; }
  /// How EasyOCR's reading of an image is reproduced, in words (info, traces); empty for a
  /// model without EasyOCR's variable width.
  std::string easyocrPipeline() const;
  int upsampledW() const;
};

/// The transformer stages of PARSeq's model hub (features "vit", prediction "parseq" or
/// "vitstr"; imported, not trained): the sizes strhub's hyper-parameters give. The embedding
/// width is ModelConfig::featureChannels.
struct TransformerConfig {
  int patchH = 4, patchW = 8;  ///< the patch embedding's kernel and stride
  int encoderDepth = 12, encoderHeads = 6;
  int encoderMlpHidden = 1536;  ///< timm's int(embed_dim * mlp_ratio)
  bool classToken = false;      ///< ViTSTR keeps timm's class token; PARSeq has none
  int decoderDepth = 1, decoderHeads = 12;
  int decoderMlpHidden = 1536;  ///< embed_dim * dec_mlp_ratio
  bool decodeAr = true;         ///< PARSeq: autoregressive first pass (else all queries at once)
  int refineIters = 1;          ///< PARSeq: cloze refinement passes after the first
};

/// A network imported from kraken (features "vgsl"): its VGSL spec and codec as the file holds
/// them, and the line settings of kraken's rpred (core/formats/kraken_import.cpp).
struct KrakenConfig {
  std::string vgsl;       ///< the whole spec, output layer included ("[1,48,0,1 ... O1c40]")
  std::string codecJson;  ///< kraken's codec: {"a": [1], "ab": [2, 3], ...}
  int padding = 16;       ///< rpred's blank columns left and right of a line (kraken's default)
  /// The model was trained with kraken's legacy polygon extractor (its metadata says so), which
  /// kraken's baseline path then uses.
  bool legacyPolygons = false;
  bool empty() const { return vgsl.empty(); }
};

struct ModelConfig {
  // The four stages, by registry name.
  std::string transformation = "none";   ///< none | tps
  std::string features = "vgg";          ///< vgg | resnet
  std::string sequence = "bilstm";       ///< none | bilstm
  bool sequenceProjection = false;       ///< bilstm: DTRB's Linear(2h -> h) after each layer
  std::string prediction = "attention";  ///< ctc | attention
  int fiducials = 20;                    ///< tps: F fiducial points (F/2 per edge)
  /// A 2-D positional encoding added to the regions after the sequence stage: "none" or
  /// "sine2d" (half the dimensions encode the row, half the column, DETR's sines; scaled by a
  /// learned gain that starts at 0, so a warm start begins as the model it came from).
  std::string positions = "none";

  // The attention decoder.
  std::string cell = "paper";      ///< paper | dtrb (docs/ARCHITECTURE.md "The model as stages")
  std::string attention = "soft";  ///< the glimpse: soft | hard | sharp
  ContextKind context = ContextKind::Pooling;  ///< sharp only
  int numStns = 1;                             ///< sharp only: 1 or 2
  bool firstStnTranslationOnly = true;         ///< with 2 STNs: coarse x-translation STN first
  int coarsePatchW = 64;                       ///< patch width of the first of 2 STNs
  int patchW = 24;                             ///< final STN patch
  int patchH = 32;
  bool reference = false;  ///< sharp + reference: training adds an L2 loss on the patches
  double width = 1.0;      ///< channel multiplier (1.0 = the paper's sizes)
  /// Explicit sizes (imported models; 0 = derived from width): the feature stage's output
  /// channels (DTRB's output_channel; its layers take DTRB's fractions of it) and the LSTM units
  /// (DTRB's hidden_size).
  int featureChannels = 0;
  int hiddenSize = 0;
  int attentionDepth = 256;
  int maxLength = 13;  ///< decoder runs maxLength + 1 steps (end token)
  std::string charset = "0123456789";
  bool caseInsensitive = false;
  /// The charset may list a character twice, each its own class (an imported EasyOCR model whose
  /// character list does: devanagari_g1, arabic_g1). Charset's constructor says how it reads.
  bool charsetRepeats = false;
  /// A CTC reading's confidence: "product" (DTRB's demo: the product of every column's maximum)
  /// or "easyocr" (EasyOCR's custom_mean: the maxima of the columns whose argmax is not the
  /// blank, their product to the power 2 / sqrt(n); 0 when every column is blank).
  std::string ctcConfidence = "product";
  Preprocessing preprocessing;
  TransformerConfig transformer;  ///< features "vit" and its predictions only
  KrakenConfig kraken;            ///< features "vgsl" only

  // Derived sizes.
  int cnnChannels() const;  ///< feature-stage output channels (512 at width 1)
  int hidden() const;       ///< LSTM units per direction and decoder units (256 at width 1)
  int featureDim() const;   ///< size of x_i after the sequence stage
  int steps() const { return maxLength + 1; }
  int depth() const;  ///< attention depth scaled by width
  bool isCtc() const { return prediction == "ctc"; }
  /// The prediction stage is a transformer's (parseq, vitstr): no glimpse, no cell.
  bool isTransformer() const { return prediction == "parseq" || prediction == "vitstr"; }
  /// The feature stage's layer table for this configuration (the ViT's patch embedding is sized
  /// by `transformer`; the others by the registry's table at `width`).
  std::vector<LayerSpec> featureLayers() const;
  /// The feature stage keeps a grid of cells (2-D attention) instead of columns.
  bool isGrid() const;
  /// The glimpse's declared needs (from the registry): the upsampled image, sampled regions.
  bool needsUpsampled() const;
  bool selectsRegions() const;
  /// Where the special classes sit for this prediction stage and cell.
  ClassLayout classLayout() const;
  Charset makeCharset() const {
    return Charset(charset, caseInsensitive, classLayout(), charsetRepeats);
  }
  /// The stages as the field names them: e.g. "none-vgg-bilstm-attention(soft)".
  std::string stageString() const;

  /// Throws Error describing the first inconsistent field.
  void validate() const;
  std::string toJson() const;
  /// Parses and validates; `origin` names the file in error messages.
  static ModelConfig fromJson(const std::string& json, const std::string& origin = "config");
  /// Human summary, e.g. "sharp (chain, 2 STNs), width 0.25, charset 10".
  std::string describe() const;
};

}  // namespace foveal::core
