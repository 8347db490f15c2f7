#pragma once
// Inference-only products on oneDNN for the transformer stages (core/model/stages/
// transformer_stages.cpp): a Linear layer with its bias and, where asked, GELU (erf) fused into
// the product, and batched matrix products over strided views (attention's per-head products).
// LibTorch runs a Linear as a BLAS product, a separate bias pass and a separate GELU pass over a
// fresh tensor, and a batched product as one small multi-threaded BLAS call per matrix; oneDNN
// does each in one parallel primitive. Measured on the 2-core VM (AVX2), ViT-S sizes at batch 32:
// fc1 + GELU 54 -> 33 ms, the attention's products 5.5 -> 3.0 ms (docs/DEVELOPING.md).
//
// Each returns nullopt where it does not apply (built without oneDNN, FOVEAL_PLAIN_MATMUL set, a
// tensor that is not a float CPU tensor, gradients being recorded): the caller then uses LibTorch.
#include <torch/types.h>

#include <optional>

namespace foveal::core::dnnl_ops {

/// x [..., K] x weight [N, K]^T + bias [N] -> [..., N]; `gelu`: GELU (erf) applied to the result.
std::optional<torch::Tensor> linear(const torch::Tensor& x, const torch::Tensor& weight,
                                    const torch::Tensor& bias, bool gelu = false);

/// a [..., M, K] x b [..., K, N] -> [..., M, N] (the same leading dimensions), times `scale`.
std::optional<torch::Tensor> matmul(const torch::Tensor& a, const torch::Tensor& b,
                                    double scale = 1.0);

/// out = a [B, M, K] x b [B, K, N] into out [B, M, N] (any strides but zero ones, no overlap);
/// false, out untouched, where oneDNN does not apply (built without it, FOVEAL_PLAIN_MATMUL,
/// not float CPU tensors, gradients recorded through a or b, shapes that do not fit). For the
/// Winograd kernels' 36 products (model/winograd.cpp): LibTorch's bmm runs them on OpenBLAS,
/// which on the 2-core AVX2 EPYC reached 60-120 GFLOP/s at two threads where oneDNN's matmul
/// reached 150-170.
bool matmulInto(const torch::Tensor& a, const torch::Tensor& b, torch::Tensor& out);

/// Whether the products above can run on oneDNN (built with it, FOVEAL_PLAIN_MATMUL not set).
bool matmulAvailable();

}  // namespace foveal::core::dnnl_ops
