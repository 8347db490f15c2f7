#include "image/preprocess.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/nn/functional/upsampling.h>

#include <algorithm>
#include <cmath>
#include <list>
#include <map>
#include <mutex>
#include <tuple>

#include "base/error.h"
#include "image/pil_resize.h"

namespace foveal::core {

namespace F = torch::nn::functional;

static torch::Tensor resize(const torch::Tensor& img, int64_t w, int64_t h) {
  return F::interpolate(img, F::InterpolateFuncOptions()
                                 .size(std::vector<int64_t>{h, w})
                                 .mode(torch::kBilinear)
                                 .align_corners(false)
                                 .antialias(true));
}

namespace {

// The image's interleaved 8-bit planes as the model reads them: RGB (a grey image's grey in every
// band, as PIL's convert('RGB')), PIL's luma or OpenCV's grey of a colour image, or the grey
// pixels.
static std::vector<uint8_t> inputPlanes(const GreyImage& g, const Preprocessing& pp, int c) {
  const size_t n = static_cast<size_t>(g.width) * g.height;
  if (c == 3) {
    if (!g.rgb.empty()) return g.rgb;
    std::vector<uint8_t> planes(n * 3);
    for (size_t i = 0; i < n; ++i)
      planes[3 * i] = planes[3 * i + 1] = planes[3 * i + 2] = g.pixels[i];
    return planes;
  }
  if (pp.colour == "pil_luma" && !g.rgb.empty()) return pilLuma(g.rgb.data(), n);
  if (pp.colour == "opencv_grey" && !g.rgb.empty()) return opencvGrey(g.rgb.data(), n);
  return g.pixels;
}

// The planes AlignCollate receives (EasyOCR): the input planes, resized to inputH by OpenCV's
// bilinear for readtext (get_image_list), with get_text's second-pass contrast when asked.
struct CollateSource {
  std::vector<uint8_t> planes;
  int width = 0, height = 0;
  ContrastAdjustment contrast;
};

CollateSource collateSource(const GreyImage& g, const Preprocessing& pp, bool contrastPass) {
  CollateSource s{inputPlanes(g, pp, pp.channels()), g.width, g.height, {}};
  if (pp.preResize == "opencv_linear") {
    const auto size = easyocrResizedSize(g.width, g.height, pp.inputH);
    s.planes = opencvResizeLinear(s.planes.data(), g.width, g.height, size.width, size.height);
    s.width = size.width;
    s.height = size.height;
  }
  if (contrastPass) {
    s.contrast = easyocrContrast(s.planes.data(), s.planes.size(), pp.adjustContrast);
    s.planes = applyContrast(s.planes.data(), s.planes.size(), s.contrast);
  }
  return s;
}

// DTRB's and EasyOCR's keep-ratio width of a w x h image: ceil(inputH * w / h), at most `maxW`.
int keepRatioWidth(int w, int h, const Preprocessing& pp, int maxW) {
  const double ratio = static_cast<double>(w) / static_cast<double>(h);
  return std::max(1, static_cast<int>(std::min<double>(maxW, std::ceil(pp.inputH * ratio))));
}

// DTRB's input: the image's planes (PIL luma or RGB), PIL-bicubic resized to `w` x `h` (or
// Foveal's bilinear), / 255, then (x - 0.5) / 0.5 as torchvision's ToTensor and DTRB do, and
// padded to `padW` by repeating the last column. [1, C, h, padW].
torch::Tensor pilInput(const GreyImage& image, const Preprocessing& pp, int w, int h, int padW,
                       const CollateSource* collate = nullptr) {
  const int c = pp.channels();
  GreyImage g{image.width, image.height};
  std::vector<uint8_t> planes;
  if (collate) {  // EasyOCR's: what AlignCollate receives
    planes = collate->planes;
    g.width = collate->width;
    g.height = collate->height;
  } else {
    planes = inputPlanes(image, pp, c);
  }
  torch::Tensor t;
  if (pp.resize == "pil_bicubic") {
    auto r = pilResizeBicubic(planes.data(), g.width, g.height, c, w, h);
    t = torch::from_blob(r.data(), {h, w, c}, torch::kUInt8).permute({2, 0, 1}).to(torch::kFloat);
    t = t.div(255.0f).sub(0.5f).div(0.5f).unsqueeze(0);
  } else {
    t = torch::from_blob(planes.data(), {g.height, g.width, c}, torch::kUInt8)
            .permute({2, 0, 1})
            .to(torch::kFloat)
            .div(255.0)
            .unsqueeze(0);
    t = resize(t, w, h).mul(2.0).sub(1.0).clamp(-1.0, 1.0);
  }
  if (padW > w) t = torch::cat({t, t.narrow(3, w - 1, 1).expand({1, c, h, padW - w})}, 3);
  return t.contiguous();
}

bool ownPreprocessing(const Preprocessing& pp) {
  return pp.colour == "grey" && pp.resize == "bilinear_antialias" && !pp.keepRatioPad;
}

}  // namespace

int variableInputWidth(const std::vector<GreyImage>& images, const Preprocessing& pp) {
  // EasyOCR's get_image_list: max_ratio starts at 1 and takes each crop's calculate_ratio
  // (w / h, or h / w for a tall crop); max_width = ceil(max_ratio) * imgH.
  double maxRatio = 1.0;
  for (const auto& g : images) {
    if (g.empty()) continue;
    double r = static_cast<double>(g.width) / static_cast<double>(g.height);
    if (r < 1.0) r = 1.0 / r;
    maxRatio = std::max(maxRatio, r);
  }
  const double w = std::ceil(maxRatio) * pp.inputH;
  if (w > 16384)
    throw Error("an image of ratio " + std::to_string(maxRatio) + " would make an input " +
                std::to_string(static_cast<long>(w)) + " pixels wide (at most 16384)");
  return static_cast<int>(w);
}

namespace {
// kraken's line input depends on the line (its box or baseline: core/image/kraken_line.h), so
// kraken models read through ModelSession::trace and traceLine, not through a batch of images.
void refuseKrakenLines(const Preprocessing& pp) {
  if (pp.resize == "kraken")
    throw Error(
        "a kraken model reads each line as kraken's rpred does (its box or baseline, "
        "then kraken's own scaling): open the image or page with the model instead; "
        "batch evaluation, training and explanations do not take kraken models yet");
}
}  // namespace

ContrastAdjustment contrastAdjustmentOf(const GreyImage& image, const Preprocessing& pp) {
  if (image.empty()) throw Error("cannot preprocess an empty image");
  return collateSource(image, pp, true).contrast;
}

ModelInput preprocess(const std::vector<GreyImage>& images, const Preprocessing& pp,
                      bool withUpsampled, bool contrastPass) {
  refuseKrakenLines(pp);
  std::vector<torch::Tensor> small, big;
  ModelInput in;
  const int batchW = pp.variableWidth ? variableInputWidth(images, pp) : pp.inputW;
  for (const auto& g : images) {
    if (g.empty()) throw Error("cannot preprocess an empty image");
    if (!ownPreprocessing(pp)) {
      int w = batchW;
      if (pp.keepRatioPad) {
        // DTRB and EasyOCR's AlignCollate: ceil(imgH * (w / h)) of the image it receives (for
        // readtext, get_image_list's resized crop), at most imgW.
        const CollateSource collate = collateSource(g, pp, contrastPass);
        w = keepRatioWidth(collate.width, collate.height, pp, batchW);
        small.push_back(pilInput(g, pp, w, pp.inputH, batchW, &collate));
        if (withUpsampled)
          big.push_back(pilInput(g, pp, pp.upsampledW(), pp.inputH, pp.upsampledW()));
        in.contentW.push_back(w);
        continue;
      }
      if (contrastPass || pp.preResize != "none")
        throw Error("EasyOCR's pre-resize and contrast pass need keep-ratio padding");
      small.push_back(pilInput(g, pp, w, pp.inputH, batchW));
      if (withUpsampled)
        big.push_back(pilInput(g, pp, pp.upsampledW(), pp.inputH, pp.upsampledW()));
      in.contentW.push_back(w);
      continue;
    }
    auto t = torch::from_blob(const_cast<uint8_t*>(g.pixels.data()), {1, 1, g.height, g.width},
                              torch::kUInt8)
                 .to(torch::kFloat)
                 .div(255.0);
    small.push_back(resize(t, pp.inputW, pp.inputH).mul(2.0).sub(1.0).clamp(-1.0, 1.0));
    if (withUpsampled)
      big.push_back(resize(t, pp.upsampledW(), pp.inputH).mul(2.0).sub(1.0).clamp(-1.0, 1.0));
    in.contentW.push_back(pp.inputW);
  }
  in.image = torch::cat(small, 0);
  if (withUpsampled) in.upsampled = torch::cat(big, 0);
  return in;
}

torch::Tensor sourceTensor(const GreyImage& g, const Preprocessing& pp) {
  refuseKrakenLines(pp);
  if (g.empty()) throw Error("cannot preprocess an empty image");
  const int c = pp.channels();
  std::vector<uint8_t> planes = inputPlanes(g, pp, c);
  return torch::from_blob(planes.data(), {g.height, g.width, c}, torch::kUInt8)
      .permute({2, 0, 1})
      .to(torch::kFloat)
      .div(255.0)
      .mul(2.0)
      .sub(1.0)
      .unsqueeze(0)
      .contiguous();
}

namespace {

// The antialiased resize of one axis from `from` to `to` samples, as interpolate computes it: a
// band of taps per output sample. `starts` [to] (int64): each output's first source sample;
// `weights` [to, K]: its K taps (zero past its own support). Memory and work linear in the sizes
// (a dense [to, from] matrix of a 16000-pixel line took 3.2 GB: issue 65).
struct ResizeBand {
  torch::Tensor starts, weights;
  size_t bytes() const {
    return static_cast<size_t>(starts.numel()) * 8 +
           static_cast<size_t>(weights.numel()) * weights.element_size();
  }
};

// The kinds of resize a band is made for.
enum class BandKind { Bilinear, Bicubic, OpenCvColumns, OpenCvRows };

// One output sample's non-zero taps: (source sample, weight), in source order.
using Taps = std::vector<std::pair<int64_t, double>>;

// The band from each output's taps, as the dense matrix's rows gave it: K = the widest support
// (first to last non-zero), each row's window starting at its first tap (moved left where the
// window would pass the last sample).
ResizeBand bandFromTaps(const std::vector<Taps>& rows, int64_t from, torch::ScalarType type) {
  const auto to = static_cast<int64_t>(rows.size());
  int64_t taps = 1;
  for (const auto& r : rows)
    if (!r.empty()) taps = std::max(taps, r.back().first - r.front().first + 1);
  ResizeBand band;
  band.starts = torch::empty({to}, torch::kLong);
  auto w = torch::zeros({to, taps}, torch::kDouble);
  auto sa = band.starts.accessor<int64_t, 1>();
  auto wa = w.accessor<double, 2>();
  for (int64_t j = 0; j < to; ++j) {
    const auto& r = rows[static_cast<size_t>(j)];
    const int64_t first = r.empty() ? from - 1 : r.front().first;
    const int64_t start = std::min(first, from - taps);
    sa[j] = start;
    for (const auto& [p, v] : r) wa[j][p - start] += v;
  }
  band.weights = w.to(type).contiguous();
  return band;
}

// OpenCV's INTER_LINEAR taps: its fixed-point weights / 2048.
ResizeBand opencvBand(int64_t from, int64_t to, bool columns, torch::ScalarType type) {
  const auto taps = opencvLinearTaps(static_cast<int>(from), static_cast<int>(to), columns);
  std::vector<Taps> rows(static_cast<size_t>(to));
  for (int64_t j = 0; j < to; ++j) {
    const auto& t = taps[static_cast<size_t>(j)];
    auto& r = rows[static_cast<size_t>(j)];
    std::map<int64_t, double> sum;  // two taps, or one where they coincide
    sum[t.first] += t.w0 / 2048.0;
    sum[t.second] += t.w1 / 2048.0;
    for (const auto& [p, v] : sum) r.emplace_back(p, v);
    // Zero weights at either end are not taps (an output on a source sample).
    while (!r.empty() && r.back().second == 0) r.pop_back();
    while (!r.empty() && r.front().second == 0) r.erase(r.begin());
  }
  return bandFromTaps(rows, from, type);
}

// interpolate's own antialiased taps (bilinear, or bicubic with a = -0.5), bit for bit: the
// resize is linear, so it maps an impulse at source sample p to p's weight in every output it
// reaches. Impulses `spacing` samples apart (a comb) reach disjoint outputs, since an output's
// support is at most 2 * radius + 1 samples around its centre; resizing `spacing` combs, one per
// phase, yields every weight, each output's taken from the comb's impulse nearest its centre.
// Work: spacing resizes of one row (a few phases at a time, at most kCombElements values).
ResizeBand interpolateBand(int64_t from, int64_t to, bool bicubic, torch::ScalarType type) {
  const double scale = static_cast<double>(from) / static_cast<double>(to);
  const double support = (bicubic ? 2.0 : 1.0) * std::max(1.0, scale);  // in source samples
  const auto radius = static_cast<int64_t>(std::ceil(support)) + 2;     // with room for rounding
  const int64_t spacing = std::min(from, 2 * radius + 2);
  constexpr int64_t kCombElements = int64_t(1) << 22;
  const int64_t perPass = std::clamp<int64_t>(kCombElements / from, 1, spacing);
  std::vector<Taps> rows(static_cast<size_t>(to));
  for (int64_t phase0 = 0; phase0 < spacing; phase0 += perPass) {
    const int64_t n = std::min(perPass, spacing - phase0);
    auto comb = torch::zeros({n, 1, 1, from}, torch::TensorOptions().dtype(type));
    for (int64_t b = 0; b < n; ++b)
      comb.narrow(0, b, 1).slice(3, phase0 + b, from, spacing).fill_(1);
    const auto out =
        F::interpolate(comb,
                       F::InterpolateFuncOptions()
                           .size(std::vector<int64_t>{1, to})
                           .mode(bicubic ? F::InterpolateFuncOptions::mode_t(torch::kBicubic)
                                         : F::InterpolateFuncOptions::mode_t(torch::kBilinear))
                           .align_corners(false)
                           .antialias(true))
            .view({n, to})
            .to(torch::kDouble)
            .contiguous();
    const auto oa = out.accessor<double, 2>();
    for (int64_t b = 0; b < n; ++b) {
      const int64_t phase = phase0 + b;
      for (int64_t j = 0; j < to; ++j) {
        const double v = oa[b][j];
        if (v == 0) continue;
        const double centre = (static_cast<double>(j) + 0.5) * scale - 0.5;
        // The comb's impulse nearest the centre (k-th after the phase, within the row).
        const auto k = std::clamp<int64_t>(
            std::llround((centre - static_cast<double>(phase)) / static_cast<double>(spacing)), 0,
            (from - 1 - phase) / spacing);
        const int64_t p = phase + k * spacing;
        if (p < 0 || p >= from || std::abs(static_cast<double>(p) - centre) > radius)
          throw Error("internal error: a resize tap " + std::to_string(p) + " outside output " +
                      std::to_string(j) + "'s support (" + std::to_string(from) + " -> " +
                      std::to_string(to) + ")");
        rows[static_cast<size_t>(j)].emplace_back(p, v);
      }
    }
  }
  for (auto& r : rows) std::sort(r.begin(), r.end());
  return bandFromTaps(rows, from, type);
}

// The bands made so far, the most recently used first, at most kBandCacheBytes together (an
// explanation resizes the same sizes at every path point; a long line's band is a few MB).
constexpr size_t kBandCacheBytes = size_t(64) << 20;

ResizeBand resizeBand(int64_t from, int64_t to, BandKind kind, torch::ScalarType type) {
  using Key = std::tuple<int64_t, int64_t, int, int>;
  static std::mutex lock;
  static std::list<std::pair<Key, ResizeBand>> cache;
  const Key key{from, to, static_cast<int>(kind), static_cast<int>(type)};
  {
    std::lock_guard<std::mutex> g(lock);
    for (auto it = cache.begin(); it != cache.end(); ++it)
      if (it->first == key) {
        cache.splice(cache.begin(), cache, it);
        return cache.front().second;
      }
  }
  ResizeBand band;
  {
    // Plain tensors (not inference ones) without a graph: they are used where gradients are
    // recorded, whatever mode the first call came in.
    c10::InferenceMode notInference(false);
    torch::NoGradGuard noGrad;
    if (kind == BandKind::OpenCvColumns || kind == BandKind::OpenCvRows)
      band = opencvBand(from, to, kind == BandKind::OpenCvColumns, type);
    else
      band = interpolateBand(from, to, kind == BandKind::Bicubic, type);
  }
  std::lock_guard<std::mutex> g(lock);
  cache.emplace_front(key, band);
  size_t total = 0;
  for (auto it = cache.begin(); it != cache.end();) {
    if (it != cache.begin() && total + it->second.bytes() > kBandCacheBytes) {
      it = cache.erase(it);
    } else {
      total += it->second.bytes();
      ++it;
    }
  }
  return band;
}

// x [..., from] -> [..., to] along the last axis by the band's taps, forward and backward. Each
// output (and each input's gradient) is summed by one thread in one order, so the values do not
// depend on the number of threads (a BLAS product's do: the table of `eval --faithfulness` is
// the same whatever the threads, and near-ties in an attribution map would otherwise reorder).
class ResizeAxisFunction : public torch::autograd::Function<ResizeAxisFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x0,
                               const torch::Tensor& starts, const torch::Tensor& weights) {
    const auto x = x0.contiguous();
    const int64_t from = x.size(-1), to = weights.size(0), taps = weights.size(1);
    const int64_t rows = from > 0 ? x.numel() / from : 0;
    auto sizes = x.sizes().vec();
    sizes.back() = to;
    auto out = torch::empty(sizes, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "resize axis", [&] {
      const scalar_t* in = x.data_ptr<scalar_t>();
      const scalar_t* w = weights.data_ptr<scalar_t>();
      const int64_t* st = starts.data_ptr<int64_t>();
      scalar_t* o = out.data_ptr<scalar_t>();
      at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t j = 0; j < to; ++j) {
            const scalar_t* src = in + r * from + st[j];
            const scalar_t* wj = w + j * taps;
            scalar_t sum = 0;
            for (int64_t k = 0; k < taps; ++k) sum += src[k] * wj[k];
            o[r * to + j] = sum;
          }
      });
    });
    ctx->save_for_backward({starts, weights});
    ctx->saved_data["from"] = from;
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &starts = saved[0], &weights = saved[1];
    const int64_t from = ctx->saved_data["from"].toInt(), to = weights.size(0),
                  taps = weights.size(1);
    const auto g = grads[0].contiguous();
    const int64_t rows = to > 0 ? g.numel() / to : 0;
    auto sizes = g.sizes().vec();
    sizes.back() = from;
    auto gx = torch::zeros(sizes, g.options());
    AT_DISPATCH_FLOATING_TYPES(g.scalar_type(), "resize axis backward", [&] {
      const scalar_t* go = g.data_ptr<scalar_t>();
      const scalar_t* w = weights.data_ptr<scalar_t>();
      const int64_t* st = starts.data_ptr<int64_t>();
      scalar_t* gi = gx.data_ptr<scalar_t>();
      at::parallel_for(0, rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t j = 0; j < to; ++j) {
            scalar_t* dst = gi + r * from + st[j];
            const scalar_t* wj = w + j * taps;
            const scalar_t d = go[r * to + j];
            for (int64_t k = 0; k < taps; ++k) dst[k] += d * wj[k];
          }
      });
    });
    return {gx, torch::Tensor(), torch::Tensor()};
  }
};

torch::Tensor resizeAxis(const torch::Tensor& x, int64_t to, BandKind kind) {
  const auto band = resizeBand(x.size(-1), to, kind, x.scalar_type());
  if (!x.is_cpu()) {  // there: each output's taps gathered [..., to, K], weighted and summed
    const int64_t taps = band.weights.size(1);
    const auto index =
        (band.starts.view({to, 1}) + torch::arange(taps, torch::kLong).view({1, taps}))
            .view({-1})
            .to(x.device());
    auto sizes = x.sizes().vec();
    sizes.back() = to;
    sizes.push_back(taps);
    return (x.index_select(x.dim() - 1, index).view(sizes) * band.weights.to(x.device())).sum(-1);
  }
  return ResizeAxisFunction::apply(x, band.starts, band.weights);
}

}  // namespace

ModelInput inputFromSource(const torch::Tensor& source, const Preprocessing& pp, bool withUpsampled,
                           const ContrastAdjustment* contrast) {
  // [B, C, H, W] in [-1, 1]. The resize weights sum to one, so resizing the normalised values
  // is the same as normalising the resized ones, as preprocess() does. Each axis by its band of
  // taps (resizeAxis): the same sums as interpolate's separable passes (to float rounding), and
  // a gradient many times cheaper than interpolate's backward.
  const BandKind kind = pp.resize == "pil_bicubic" ? BandKind::Bicubic : BandKind::Bilinear;
  auto resizedFrom = [&](const torch::Tensor& from, int64_t w, int64_t h, int64_t padW) {
    torch::Tensor t = from;
    if (h != from.size(2)) t = resizeAxis(t.transpose(2, 3), h, kind).transpose(2, 3);
    if (w != from.size(3)) t = resizeAxis(t, w, kind);
    if (padW > w)
      t = torch::cat({t, t.narrow(3, w - 1, 1).expand({t.size(0), t.size(1), h, padW - w})}, 3);
    return t;
  };
  const int srcW = static_cast<int>(source.size(3)), srcH = static_cast<int>(source.size(2));
  // What AlignCollate receives (EasyOCR): for readtext the crop resized to inputH by OpenCV's
  // bilinear, rows then columns as cv::resize; in the second pass, its contrast raised.
  torch::Tensor collate = source;
  if (pp.preResize == "opencv_linear") {
    const auto size = easyocrResizedSize(srcW, srcH, pp.inputH);
    if (size.height != srcH)
      collate =
          resizeAxis(collate.transpose(2, 3), size.height, BandKind::OpenCvRows).transpose(2, 3);
    if (size.width != srcW) collate = resizeAxis(collate, size.width, BandKind::OpenCvColumns);
  }
  if (contrast && contrast->adjusted) {  // on grey levels: [-1, 1] -> [0, 255] and back
    const auto v = collate.add(1.0).mul(127.5).sub(contrast->low - 25.0).mul(contrast->ratio);
    collate = v.clamp(0.0, 255.0).div(127.5).sub(1.0);
  }
  ModelInput in;
  int w = pp.inputW, padW = pp.inputW;
  if (pp.variableWidth) {  // EasyOCR's max_width for the source's ratio
    GreyImage dims(srcW, srcH);
    padW = variableInputWidth({dims}, pp);
  }
  if (pp.keepRatioPad)
    w = keepRatioWidth(static_cast<int>(collate.size(3)), static_cast<int>(collate.size(2)), pp,
                       padW);
  in.image = resizedFrom(collate, w, pp.inputH, padW);
  if (withUpsampled)
    in.upsampled = resizedFrom(source, pp.upsampledW(), pp.inputH, pp.upsampledW());
  in.contentW.assign(static_cast<size_t>(source.size(0)), w);
  return in;
}

GreyImage toGreyImage(const torch::Tensor& normalised) {
  auto t = normalised.detach().to(torch::kCPU, torch::kFloat);
  if (t.dim() == 4) t = t.squeeze(0);
  if (t.dim() == 3 && t.size(0) == 3) t = t.mean(0);  // an RGB model's input, shown grey
  while (t.dim() > 2) t = t.squeeze(0);
  t = ((t + 1.0) * 127.5).round().clamp(0, 255).to(torch::kUInt8).contiguous();
  GreyImage g{static_cast<int>(t.size(1)), static_cast<int>(t.size(0)), {}};
  g.pixels.assign(t.data_ptr<uint8_t>(), t.data_ptr<uint8_t>() + t.numel());
  return g;
}

}  // namespace foveal::core
