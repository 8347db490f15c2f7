#include "base/compute_device.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/cuda.h>

#include "base/error.h"

namespace foveal::core {

c10::Device resolveDevice(const std::string& name) {
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name != "cuda" && name.rfind("cuda:", 0) != 0)
    throw Error("device must be cpu, cuda or cuda:N, not \"" + name + "\"");
  int index = 0;
  if (name.size() > 5) {
    size_t used = 0;
    try {
      index = std::stoi(name.substr(5), &used);
    } catch (...) {
      used = 0;
    }
    if (used != name.size() - 5 || index < 0)
      throw Error("device \"" + name + "\": the CUDA index must be a whole number");
  }
  if (!torch::cuda::is_available())
    throw Error("device \"" + name + "\": CUDA is not available (this LibTorch build or machine " +
                "has no usable GPU); use --device cpu");
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (index >= count)
    throw Error("device \"" + name + "\": only " + std::to_string(count) + " CUDA device(s)");
  return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void prepareDevice(const c10::Device& device) {
  if (device.is_cuda()) at::globalContext().setBenchmarkCuDNN(true);
}

std::string describeDevice(const c10::Device& device) {
  if (device.is_cpu()) return "cpu (" + std::to_string(at::get_num_threads()) + " threads)";
  return device.str();
}

}  // namespace foveal::core
