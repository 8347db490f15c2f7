#pragma once
// Device choice shared by training, evaluation and the benchmarks: "cpu", "cuda" or "cuda:N",
// checked against what this LibTorch build and machine offer.
#include <c10/core/Device.h>

#include <string>

namespace foveal::core {

/// Throws Error when the name is malformed or CUDA is asked for but unavailable.
c10::Device resolveDevice(const std::string& name);

/// Per-device setup for training: cuDNN autotuning on CUDA. No-op on the CPU.
void prepareDevice(const c10::Device& device);

/// "cpu (2 threads)" or "cuda:0 (NVIDIA ...)".
std::string describeDevice(const c10::Device& device);

}  // namespace foveal::core
