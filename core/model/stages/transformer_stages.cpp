// The transformer stages of PARSeq's model hub (strhub, github.com/baudm/parseq), imported for
// reading (core/formats/strhub_import.cpp): the feature stage "vit" (timm's VisionTransformer as
// strhub builds it: a patch-embedding convolution, learned position embeddings, pre-norm blocks
// of multi-head self-attention and a GELU MLP, a final LayerNorm; ViTSTR's with a class token),
// and the prediction stages "parseq" (PARSeq's decoder: position queries attending to the token
// context and to the patch memory, autoregressive decoding then cloze refinement) and "vitstr"
// (a Linear over the first max_length + 1 patch tokens). Parameter names follow strhub's keys
// under "features." (the encoder) and "prediction." (the rest), so the import is a rename.
// Attention weights are computed as PyTorch computes them (q scaled by 1/sqrt(head dim), softmax
// with masked keys at -inf), so that the maps the trace shows are strhub's within float rounding.
#include <torch/nn/cloneable.h>
#include <torch/nn/functional/activation.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "base/error.h"
#include "model/charset.h"
#include "model/dnnl_matmul.h"
#include "model/stages/stage.h"
#include "model/stages/stage_factories.h"

namespace foveal::core {

namespace {

namespace nn = torch::nn;

nn::LayerNorm layerNorm(int64_t d, double eps) {
  return nn::LayerNorm(nn::LayerNormOptions({d}).eps(eps).elementwise_affine(true));
}

// A Linear layer (and GELU after it): on oneDNN for inference (model/dnnl_matmul.h), else
// LibTorch's.
torch::Tensor dense(nn::Linear& l, const torch::Tensor& x, bool gelu = false) {
  if (auto y = dnnl_ops::linear(x, l->weight, l->bias, gelu)) return *y;
  auto y = l->forward(x);
  return gelu ? torch::gelu(y) : y;
}

// x W^T + b for a slice of a packed projection (MultiheadAttention's in_proj).
torch::Tensor projected(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  if (auto y = dnnl_ops::linear(x, w, b)) return *y;
  return torch::nn::functional::linear(x, w, b);
}

// a [..., M, K] x b [..., K, N] x scale.
torch::Tensor product(const torch::Tensor& a, const torch::Tensor& b, double scale = 1.0) {
  if (auto y = dnnl_ops::matmul(a, b, scale)) return *y;
  return scale == 1.0 ? torch::matmul(a, b) : torch::matmul(a * scale, b);
}

// ---- the encoder: timm's VisionTransformer ------------------------------------------------------

struct PatchEmbedImpl : nn::Cloneable<PatchEmbedImpl> {
  PatchEmbedImpl(int64_t in, int64_t d, int ph, int pw) : in(in), d(d), ph(ph), pw(pw) { reset(); }
  void reset() override {
    proj = register_module(
        "proj", nn::Conv2d(nn::Conv2dOptions(in, d, {ph, pw}).stride({ph, pw}).bias(true)));
  }
  int64_t in, d;
  int ph, pw;
  nn::Conv2d proj{nullptr};
};
TORCH_MODULE(PatchEmbed);

// timm's Attention: qkv Linear, heads, softmax(q k^T / sqrt(hd)), proj.
struct VitAttentionImpl : nn::Cloneable<VitAttentionImpl> {
  VitAttentionImpl(int64_t d, int heads) : d(d), heads(heads) { reset(); }
  void reset() override {
    qkv = register_module("qkv", nn::Linear(nn::LinearOptions(d, 3 * d).bias(true)));
    proj = register_module("proj", nn::Linear(d, d));
  }
  /// x [B, N, D] -> [B, N, D]; `weights` receives the attention [B, H, N, N] when given.
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor* weights) {
    const int64_t b = x.size(0), n = x.size(1), hd = d / heads;
    auto t = dense(qkv, x).reshape({b, n, 3, heads, hd}).permute({2, 0, 3, 1, 4});
    auto a =
        product(t[0], t[1].transpose(-2, -1), 1.0 / std::sqrt(static_cast<double>(hd))).softmax(-1);
    if (weights) *weights = a;
    auto o = product(a, t[2]).transpose(1, 2).reshape({b, n, d});
    return dense(proj, o);
  }
  int64_t d;
  int heads;
  nn::Linear qkv{nullptr}, proj{nullptr};
};
TORCH_MODULE(VitAttention);

struct MlpImpl : nn::Cloneable<MlpImpl> {
  MlpImpl(int64_t d, int64_t hidden) : d(d), hidden(hidden) { reset(); }
  void reset() override {
    fc1 = register_module("fc1", nn::Linear(d, hidden));
    fc2 = register_module("fc2", nn::Linear(hidden, d));
  }
  torch::Tensor forward(const torch::Tensor& x) { return dense(fc2, dense(fc1, x, true)); }
  int64_t d, hidden;
  nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Mlp);

struct VitBlockImpl : nn::Cloneable<VitBlockImpl> {
  VitBlockImpl(int64_t d, int heads, int64_t hidden) : d(d), heads(heads), hidden(hidden) {
    reset();
  }
  void reset() override {
    norm1 = register_module("norm1", layerNorm(d, 1e-6));
    attn = register_module("attn", VitAttention(d, heads));
    norm2 = register_module("norm2", layerNorm(d, 1e-6));
    mlp = register_module("mlp", Mlp(d, hidden));
  }
  torch::Tensor forward(torch::Tensor x, torch::Tensor* weights) {
    x = x + attn->forward(norm1(x), weights);
    return x + mlp->forward(norm2(x));
  }
  int64_t d;
  int heads;
  int64_t hidden;
  nn::LayerNorm norm1{nullptr}, norm2{nullptr};
  VitAttention attn{nullptr};
  Mlp mlp{nullptr};
};
TORCH_MODULE(VitBlock);

class VitFeaturesImpl : public nn::Cloneable<VitFeaturesImpl>, public FeatureExtractor {
 public:
  explicit VitFeaturesImpl(const ModelConfig& c) : config(c) { reset(); }
  void reset() override {
    const auto& t = config.transformer;
    const int64_t d = config.cnnChannels();
    const auto rf = geometry(config.preprocessing.inputW, config.preprocessing.inputH);
    m_rows = rf.rows;
    m_columns = rf.columns;
    patch_embed = register_module(
        "patch_embed", PatchEmbed(config.preprocessing.channels(), d, t.patchH, t.patchW));
    const int64_t tokens = m_rows * m_columns + (t.classToken ? 1 : 0);
    if (t.classToken) cls_token = register_parameter("cls_token", torch::zeros({1, 1, d}));
    pos_embed = register_parameter("pos_embed", torch::zeros({1, tokens, d}));
    blocks = register_module("blocks", nn::ModuleList());
    for (int i = 0; i < t.encoderDepth; ++i)
      blocks->push_back(VitBlock(d, t.encoderHeads, t.encoderMlpHidden));
    norm = register_module("norm", layerNorm(d, 1e-6));
  }

  torch::Tensor grid(const torch::Tensor& image) override {
    return gridWithAttention(image, nullptr);
  }

  torch::Tensor gridWithAttention(const torch::Tensor& image,
                                  torch::Tensor* lastAttention) override {
    if (image.size(2) != config.preprocessing.inputH ||
        image.size(3) != config.preprocessing.inputW)
      throw Error("the ViT encoder reads " + std::to_string(config.preprocessing.inputW) + "x" +
                  std::to_string(config.preprocessing.inputH) + " inputs (got " +
                  std::to_string(image.size(3)) + "x" + std::to_string(image.size(2)) + ")");
    auto x = patch_embed->proj(image).flatten(2).transpose(1, 2);  // [B, N, D]
    const int64_t b = x.size(0), d = x.size(2);
    const bool cls = config.transformer.classToken;
    if (cls) x = torch::cat({cls_token.expand({b, 1, d}), x}, 1);
    x = x + pos_embed;
    const size_t n = blocks->size();
    for (size_t i = 0; i < n; ++i)
      x = blocks->ptr<VitBlockImpl>(i)->forward(x, i + 1 == n ? lastAttention : nullptr);
    x = norm(x);
    if (cls) {
      x = x.slice(1, 1);
      // The patches' attention: queries and keys without the class token, each row
      // renormalised over the patches (the class token's share left out).
      if (lastAttention && lastAttention->defined()) {
        auto a = lastAttention->slice(2, 1).slice(3, 1);
        *lastAttention = a / a.sum(-1, true);
      }
    }
    return x.reshape({b, m_rows, m_columns, d});
  }

  ReceptiveField geometry(int inputW, int inputH) const override {
    ReceptiveField rf = receptiveField(config.featureLayers(), inputW, inputH);
    rf.grid = true;
    return rf;
  }

  ModelConfig config;
  PatchEmbed patch_embed{nullptr};
  torch::Tensor cls_token, pos_embed;
  nn::ModuleList blocks{nullptr};
  nn::LayerNorm norm{nullptr};

 private:
  int64_t m_rows = 0, m_columns = 0;
};

// ---- PARSeq's decoder
// ----------------------------------------------------------------------------

// torch.nn.MultiheadAttention (batch_first) with its parameter names; the weights per head.
struct MhaImpl : nn::Cloneable<MhaImpl> {
  MhaImpl(int64_t d, int heads) : d(d), heads(heads) { reset(); }
  void reset() override {
    in_proj_weight = register_parameter("in_proj_weight", torch::zeros({3 * d, d}));
    in_proj_bias = register_parameter("in_proj_bias", torch::zeros({3 * d}));
    out_proj = register_module("out_proj", nn::Linear(d, d));
  }
  /// Keys and values of `kv` [B, S, D], each [B, H, S, hd]: what a decoder step reuses for
  /// the patch memory (the same for every step and the refinement).
  std::pair<torch::Tensor, torch::Tensor> keysValues(const torch::Tensor& kv) const {
    const int64_t b = kv.size(0), ns = kv.size(1), hd = d / heads;
    auto w = in_proj_weight.chunk(3, 0);
    auto bias = in_proj_bias.chunk(3, 0);
    auto k = projected(kv, w[1], bias[1]);
    auto v = projected(kv, w[2], bias[2]);
    return {k.view({b, ns, heads, hd}).transpose(1, 2), v.view({b, ns, heads, hd}).transpose(1, 2)};
  }
  /// query [B, Q, D], key and value [B, S, D]; mask [Q, S] bool (true: masked), padding [B, S]
  /// bool; either undefined. `weights` receives [B, H, Q, S].
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& kv,
                        const torch::Tensor& mask, const torch::Tensor& padding,
                        torch::Tensor* weights) {
    return attend(query, keysValues(kv), mask, padding, weights);
  }
  /// As forward, with the keys and values already projected (keysValues).
  torch::Tensor attend(const torch::Tensor& query,
                       const std::pair<torch::Tensor, torch::Tensor>& kv, const torch::Tensor& mask,
                       const torch::Tensor& padding, torch::Tensor* weights) {
    const int64_t b = query.size(0), nq = query.size(1), hd = d / heads;
    const auto& [k, v] = kv;
    const int64_t ns = k.size(2);
    auto q = projected(query, in_proj_weight.chunk(3, 0)[0], in_proj_bias.chunk(3, 0)[0]);
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
    const float inf = std::numeric_limits<float>::infinity();
    torch::Tensor o;
    if (nq == 1) {
      // One query (each autoregressive step). As matmuls these were B x H BLAS calls of one
      // hd-long row each, twice a step; here each is one product per image over all heads, in
      // the keys' and values' own [B, S, H x hd] layout: the scores against the query's heads
      // laid out block-diagonally ([H x hd, H]), the output's heads the diagonal blocks of
      // [H, H x hd]. The zeros add nothing; no [B, S, H, hd] temporary is made.
      auto qd = torch::diag_embed((q.view({b, heads, hd}) * scale).transpose(1, 2))  // [B,hd,H,H]
                    .permute({0, 2, 1, 3})
                    .reshape({b, heads * hd, heads});
      auto s = torch::bmm(k.transpose(1, 2).reshape({b, ns, heads * hd}), qd);  // [B, S, H]
      if (mask.defined()) s = s.masked_fill(mask.view({1, ns, 1}), -inf);
      if (padding.defined()) s = s.masked_fill(padding.view({b, ns, 1}), -inf);
      auto a = s.softmax(1);
      if (weights) *weights = a.transpose(1, 2).unsqueeze(2);  // [B, H, 1, S]
      o = torch::bmm(a.transpose(1, 2), v.transpose(1, 2).reshape({b, ns, heads * hd}))
              .view({b, heads, heads, hd})
              .diagonal(0, 1, 2)  // [B, hd, H]
              .transpose(1, 2)
              .reshape({b, nq, d});
    } else {
      q = q.view({b, nq, heads, hd}).transpose(1, 2) * scale;
      auto s = torch::matmul(q, k.transpose(-2, -1));  // [B, H, Q, S]
      if (mask.defined()) s = s.masked_fill(mask.view({1, 1, nq, ns}), -inf);
      if (padding.defined()) s = s.masked_fill(padding.view({b, 1, 1, ns}), -inf);
      auto a = s.softmax(-1);
      if (weights) *weights = a;
      o = torch::matmul(a, v).transpose(1, 2).reshape({b, nq, d});
    }
    return dense(out_proj, o);
  }
  int64_t d;
  int heads;
  torch::Tensor in_proj_weight, in_proj_bias;
  nn::Linear out_proj{nullptr};
};
TORCH_MODULE(Mha);

struct DecoderLayerImpl : nn::Cloneable<DecoderLayerImpl> {
  DecoderLayerImpl(int64_t d, int heads, int64_t hidden) : d(d), heads(heads), hidden(hidden) {
    reset();
  }
  void reset() override {
    self_attn = register_module("self_attn", Mha(d, heads));
    cross_attn = register_module("cross_attn", Mha(d, heads));
    linear1 = register_module("linear1", nn::Linear(d, hidden));
    linear2 = register_module("linear2", nn::Linear(hidden, d));
    norm1 = register_module("norm1", layerNorm(d, 1e-5));
    norm2 = register_module("norm2", layerNorm(d, 1e-5));
    norm_q = register_module("norm_q", layerNorm(d, 1e-5));
    norm_c = register_module("norm_c", layerNorm(d, 1e-5));
  }
  // One stream (query or content): self-attention over the normalised content, cross-attention
  // to the memory, MLP; each pre-norm with a residual.
  // `memory`: the cross-attention's keys and values of the patch memory (keysValues).
  torch::Tensor stream(torch::Tensor tgt, const torch::Tensor& tgtNorm, const torch::Tensor& kv,
                       const std::pair<torch::Tensor, torch::Tensor>& memory,
                       const torch::Tensor& mask, const torch::Tensor& padding,
                       torch::Tensor* crossWeights) {
    tgt = tgt + self_attn->forward(tgtNorm, kv, mask, padding, nullptr);
    tgt = tgt + cross_attn->attend(norm1(tgt), memory, {}, {}, crossWeights);
    return tgt + dense(linear2, dense(linear1, norm2(tgt), true));
  }
  int64_t d;
  int heads;
  int64_t hidden;
  Mha self_attn{nullptr}, cross_attn{nullptr};
  nn::Linear linear1{nullptr}, linear2{nullptr};
  nn::LayerNorm norm1{nullptr}, norm2{nullptr}, norm_q{nullptr}, norm_c{nullptr};
};
TORCH_MODULE(DecoderLayer);

struct DecoderImpl : nn::Cloneable<DecoderImpl> {
  DecoderImpl(int64_t d, int depth, int heads, int64_t hidden)
      : d(d), depth(depth), heads(heads), hidden(hidden) {
    reset();
  }
  void reset() override {
    layers = register_module("layers", nn::ModuleList());
    for (int i = 0; i < depth; ++i) layers->push_back(DecoderLayer(d, heads, hidden));
    norm = register_module("norm", layerNorm(d, 1e-5));
  }
  int64_t d;
  int depth, heads;
  int64_t hidden;
  nn::ModuleList layers{nullptr};
  nn::LayerNorm norm{nullptr};
};
TORCH_MODULE(Decoder);

struct TokenEmbeddingImpl : nn::Cloneable<TokenEmbeddingImpl> {
  TokenEmbeddingImpl(int64_t n, int64_t d) : n(n), d(d) { reset(); }
  void reset() override { embedding = register_module("embedding", nn::Embedding(n, d)); }
  torch::Tensor forward(const torch::Tensor& tokens) {
    return std::sqrt(static_cast<double>(d)) * embedding(tokens);
  }
  int64_t n, d;
  nn::Embedding embedding{nullptr};
};
TORCH_MODULE(TokenEmbedding);

[[noreturn]] void notTrained(const std::string& stage) {
  throw Error("the " + stage +
              " stage is imported for reading (strhub's models): Foveal does not train it or "
              "search it with a beam");
}

std::vector<std::vector<int>> readUntilEnd(const torch::Tensor& tokens) {
  auto t = tokens.to(torch::kCPU, torch::kLong).contiguous();
  std::vector<std::vector<int>> out(static_cast<size_t>(t.size(0)));
  auto a = t.accessor<int64_t, 2>();
  for (int64_t b = 0; b < t.size(0); ++b)
    for (int64_t s = 0; s < t.size(1); ++s) {
      if (a[b][s] == Charset::kEnd) break;
      out[static_cast<size_t>(b)].push_back(static_cast<int>(a[b][s]));
    }
  return out;
}

BatchStats readingStats(const std::vector<std::vector<int>>& read, const torch::Tensor& targets,
                        const torch::Tensor& lengths) {
  BatchStats s;
  auto t = targets.to(torch::kCPU, torch::kLong).contiguous();
  auto l = lengths.to(torch::kCPU, torch::kLong).contiguous();
  auto ta = t.accessor<int64_t, 2>();
  auto la = l.accessor<int64_t, 1>();
  for (int64_t b = 0; b < t.size(0); ++b) {
    std::vector<int> truth;
    for (int64_t i = 0; i < la[b]; ++i) truth.push_back(static_cast<int>(ta[b][i]));
    s.correct += read[static_cast<size_t>(b)] == truth;
  }
  return s;
}

// What the two read-only predictions (PARSeq, ViTSTR) share: no beam search or loss (they are
// imported for reading), readings up to the end token, and a batch's count of right readings.
class ReadOnlyPrediction : public Prediction {
 public:
  explicit ReadOnlyPrediction(std::string stage) : m_stage(std::move(stage)) {}
  BeamResult beamSearch(const torch::Tensor&, const torch::Tensor&, int) override {
    notTrained(m_stage);
  }
  bool searchesWithBeam() const override { return false; }
  LossTerms loss(const RecognizerOutput&, const LossInputs&) const override { notTrained(m_stage); }
  BatchStats stats(const RecognizerOutput& out, const torch::Tensor& targets,
                   const torch::Tensor& lengths) const override {
    return readingStats(readings(out), targets, lengths);
  }
  std::vector<std::vector<int>> readings(const RecognizerOutput& out) const override {
    return readUntilEnd(out.tokens);
  }

 private:
  std::string m_stage;
};

class ParseqPredictionImpl : public nn::Cloneable<ParseqPredictionImpl>, public ReadOnlyPrediction {
 public:
  ParseqPredictionImpl(const ModelConfig& c, int64_t inputDim)
      : ReadOnlyPrediction("parseq"), config(c), m_d(inputDim) {
    reset();
  }
  void reset() override {
    const auto& t = config.transformer;
    m_classes = config.makeCharset().size();  // [E] + characters: strhub's head
    decoder = register_module("decoder",
                              Decoder(m_d, t.decoderDepth, t.decoderHeads, t.decoderMlpHidden));
    head = register_module("head", nn::Linear(m_d, m_classes));
    // strhub's tokenizer: [E], the characters, [B], [P].
    text_embed = register_module("text_embed", TokenEmbedding(m_classes + 2, m_d));
    pos_queries = register_parameter("pos_queries", torch::zeros({1, config.steps(), m_d}));
  }

  // PARSeq's decode: the context [<bos>, pos_0 + e(y_1), ...] (the null context carries no
  // position), the queries; returns the normalised query stream [B, Q, D] and the last layer's
  // cross-attention of the queries [B, H, Q, N].
  using KeysValues = std::vector<std::pair<torch::Tensor, torch::Tensor>>;
  // Each decoder layer's cross-attention keys and values of the patch memory: projected once
  // per image batch instead of at every step (strhub projects them again at each step; the
  // values are the same to the bit).
  KeysValues memoryKeysValues(const torch::Tensor& memory) {
    KeysValues out;
    for (size_t i = 0; i < decoder->layers->size(); ++i)
      out.push_back(decoder->layers->ptr<DecoderLayerImpl>(i)->cross_attn->keysValues(memory));
    return out;
  }

  // `tokenScale` [B, >= L] (attribution, DecodeOptions::tokenScale): a factor on each context
  // token's embedding (position 0 the <bos>, position j the token fed for query j), not on the
  // position queries added to it; undefined: none.
  torch::Tensor decode(const torch::Tensor& tgt, const KeysValues& memory,
                       const torch::Tensor& contentMask, const torch::Tensor& padding,
                       torch::Tensor query, const torch::Tensor& queryMask, torch::Tensor* cross,
                       const torch::Tensor& tokenScale = {}) {
    const int64_t l = tgt.size(1);
    auto tokens = text_embed->forward(tgt);  // [B, L, D]
    if (tokenScale.defined()) tokens = tokens * tokenScale.slice(1, 0, l).unsqueeze(-1);
    auto content = tokens.slice(1, 0, 1);
    if (l > 1)
      content = torch::cat({content, pos_queries.slice(1, 0, l - 1) + tokens.slice(1, 1)}, 1);
    const size_t n = decoder->layers->size();
    for (size_t i = 0; i < n; ++i) {
      auto layer = decoder->layers->ptr<DecoderLayerImpl>(i);
      const bool last = i + 1 == n;
      auto qn = layer->norm_q(query), cn = layer->norm_c(content);
      query = layer->stream(query, qn, cn, memory[i], queryMask, padding, last ? cross : nullptr);
      if (!last) content = layer->stream(content, cn, cn, memory[i], contentMask, padding, nullptr);
    }
    return decoder->norm(query);
  }

  RecognizerOutput predict(const torch::Tensor& memory, const torch::Tensor&,
                           const DecodeOptions& options) override {
    const auto& t = config.transformer;
    const int64_t b = memory.size(0), steps = config.steps();
    const auto opts = torch::TensorOptions().dtype(torch::kLong).device(memory.device());
    const int64_t bos = m_classes, end = Charset::kEnd;
    const bool forced = options.targets.defined();
    auto queries = pos_queries.slice(1, 0, steps).expand({b, steps, m_d});
    auto causal = torch::ones({steps, steps}, opts.dtype(torch::kBool)).triu(1);
    const auto memoryKv = memoryKeysValues(memory);

    torch::Tensor logits, cross, firstCross;
    if (t.decodeAr) {
      auto tgt = torch::full({b, steps}, m_classes + 1, opts);  // [P]
      tgt.select(1, 0).fill_(bos);
      std::vector<torch::Tensor> stepLogits, stepCross;
      for (int64_t i = 0; i < steps; ++i) {
        const int64_t j = i + 1;
        torch::Tensor w;
        auto out = decode(tgt.slice(1, 0, j), memoryKv, causal.slice(0, 0, j).slice(1, 0, j), {},
                          queries.slice(1, i, j), {}, &w, options.tokenScale);
        auto p = head(out);  // [B, 1, K]
        stepLogits.push_back(p);
        stepCross.push_back(w);
        if (j < steps) {
          tgt.select(1, j).copy_(forced ? options.targets.select(1, i) : p.squeeze(1).argmax(-1));
          // Every image has read its end: the rest of the first pass cannot change a reading
          // (the refinement masks the context after the end; without it the steps stop here).
          const bool more = t.refineIters == 0 && !options.stopWhenAllEnded;
          if (!forced && !more && (tgt == end).any(1).all().item<bool>()) break;
        }
      }
      logits = torch::cat(stepLogits, 1);
      cross = torch::cat(stepCross, 2);
    } else {
      auto tgt = torch::full({b, 1}, bos, opts);
      logits = head(decode(tgt, memoryKv, {}, {}, queries, {}, &cross, options.tokenScale));
    }
    const int64_t ran = logits.size(1);
    if (t.refineIters > 0) {
      // The cloze mask: each query sees the whole context but its own token.
      auto cloze = torch::zeros({steps, steps}, opts.dtype(torch::kBool));
      for (int64_t i = 0; i + 1 < steps; ++i) cloze[i][i + 1] = true;
      firstCross = cross;
      torch::Tensor read = logits.argmax(-1);  // [B, ran]
      if (ran < steps)                         // the steps after every end: masked as after the end
        read = torch::cat({read, torch::full({b, steps - ran}, end, opts)}, 1);
      for (int r = 0; r < t.refineIters; ++r) {
        auto prior = forced ? options.targets.slice(1, 0, steps - 1) : read.slice(1, 0, steps - 1);
        auto tgt = torch::cat({torch::full({b, 1}, bos, opts), prior}, 1);
        auto padding = (tgt == end).to(torch::kInt).cumsum(-1) > 0;
        logits = head(
            decode(tgt, memoryKv, causal, padding, queries, cloze, &cross, options.tokenScale));
        read = logits.argmax(-1);
      }
    }
    RecognizerOutput out;
    out.logProbs = torch::log_softmax(logits, -1);
    out.tokens = out.logProbs.argmax(-1);
    auto heads = cross.permute({0, 2, 1, 3});  // [B, T, H, N]
    out.headAlpha = heads;
    out.alpha = heads.mean(2);
    if (firstCross.defined()) {
      auto first = firstCross.permute({0, 2, 1, 3}).mean(2);  // [B, ran, N]
      if (first.size(1) < out.alpha.size(1))
        first = torch::cat(
            {first,
             torch::zeros({b, out.alpha.size(1) - first.size(1), first.size(2)}, first.options())},
            1);
      out.firstAlpha = first;
    }
    out.selected = out.alpha.argmax(-1);
    out.logPSelect = torch::zeros_like(out.alpha.select(2, 0));
    return out;
  }

  ModelConfig config;
  Decoder decoder{nullptr};
  nn::Linear head{nullptr};
  TokenEmbedding text_embed{nullptr};
  torch::Tensor pos_queries;

 private:
  int64_t m_d;
  int64_t m_classes = 0;
};

// ViTSTR: a Linear over the first max_length + 1 patch tokens (strhub drops the class token's
// output). Its attention is the encoder's (RecognizerImpl::forward fills alpha from it).
class VitstrPredictionImpl : public nn::Cloneable<VitstrPredictionImpl>, public ReadOnlyPrediction {
 public:
  VitstrPredictionImpl(const ModelConfig& c, int64_t inputDim)
      : ReadOnlyPrediction("vitstr"), config(c), m_d(inputDim) {
    reset();
  }
  void reset() override {
    head = register_module("head", nn::Linear(m_d, config.makeCharset().size()));
  }
  RecognizerOutput predict(const torch::Tensor& x, const torch::Tensor&,
                           const DecodeOptions&) override {
    RecognizerOutput out;
    out.logProbs = torch::log_softmax(head(x.slice(1, 0, config.steps())), -1);
    out.tokens = out.logProbs.argmax(-1);
    return out;
  }
  ModelConfig config;
  nn::Linear head{nullptr};

 private:
  int64_t m_d;
};

}  // namespace

std::shared_ptr<torch::nn::Module> makeVit(const StageContext& c) {
  return std::make_shared<VitFeaturesImpl>(c.config);
}
std::shared_ptr<torch::nn::Module> makeParseq(const StageContext& c) {
  return std::make_shared<ParseqPredictionImpl>(c.config, c.inputDim);
}
std::shared_ptr<torch::nn::Module> makeVitstr(const StageContext& c) {
  return std::make_shared<VitstrPredictionImpl>(c.config, c.inputDim);
}

}  // namespace foveal::core
