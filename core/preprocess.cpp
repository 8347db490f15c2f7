#include "preprocess.h"

#include <torch/nn/functional/upsampling.h>

#include "error.h"

namespace foveal::core {

namespace F = torch::nn::functional;

static torch::Tensor resize(const torch::Tensor& img, int64_t w, int64_t h) {
  return F::interpolate(img, F::InterpolateFuncOptions()
                                 .size(std::vector<int64_t>{h, w})
                                 .mode(torch::kBilinear)
                                 .align_corners(false)
                                 .antialias(true));
}

ModelInput preprocess(const std::vector<GreyImage>& images, const Preprocessing& pp,
                      bool withUpsampled) {
  std::vector<torch::Tensor> small, big;
  for (const auto& g : images) {
    if (g.empty()) throw Error("cannot preprocess an empty image");
    auto t = torch::from_blob(const_cast<uint8_t*>(g.pixels.data()), {1, 1, g.height, g.width},
                              torch::kUInt8)
                 .to(torch::kFloat)
                 .div(255.0);
    small.push_back(resize(t, pp.inputW, pp.inputH));
    if (withUpsampled) big.push_back(resize(t, pp.upsampledW(), pp.inputH));
  }
  ModelInput in;
  in.image = torch::cat(small, 0).mul(2.0).sub(1.0).clamp(-1.0, 1.0);
  if (withUpsampled) in.upsampled = torch::cat(big, 0).mul(2.0).sub(1.0).clamp(-1.0, 1.0);
  return in;
}

GreyImage toGreyImage(const torch::Tensor& normalised) {
  auto t = normalised.detach().to(torch::kCPU, torch::kFloat);
  while (t.dim() > 2) t = t.squeeze(0);
  t = ((t + 1.0) * 127.5).round().clamp(0, 255).to(torch::kUInt8).contiguous();
  GreyImage g{static_cast<int>(t.size(1)), static_cast<int>(t.size(0)), {}};
  g.pixels.assign(t.data_ptr<uint8_t>(), t.data_ptr<uint8_t>() + t.numel());
  return g;
}

}  // namespace foveal::core
