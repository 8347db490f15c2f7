#pragma once
// What the CPU paths of the backbone use on this machine (Torch-free; defined in backbone.cpp).

#include <cstdint>
#include <string>

// A function compiled once per instruction set named (e.g. FOVEAL_CPU_CLONES("avx2", "default")),
// the best the CPU runs picked at load time by an ifunc resolver. Plain code under
// ThreadSanitizer: it instruments the resolver, which the dynamic loader runs before TSan's
// runtime is up (every binary died in `runDirection [clone .resolver]` before main).
#if defined(__SANITIZE_THREAD__)
#define FOVEAL_CPU_CLONES(...)
#else
#define FOVEAL_CPU_CLONES(...) __attribute__((target_clones(__VA_ARGS__)))
#endif

namespace foveal::core {

/// The CPU's model name and which of the instruction sets the kernels care about it has (AVX2,
/// FMA, AVX-512 F/BW/VL/VNNI/BF16, AMX), as the benchmarks print them: "AMD EPYC (has avx2 fma;
/// lacks avx512f ...)". From /proc/cpuinfo (base/cpu_summary.cpp).
std::string cpuFeatureSummary();

/// Whether the oneDNN paths of the backbone, and the faster kernels of model/conv_dispatch.h, are
/// in use in this process (LibTorch built with MKL-DNN and FOVEAL_PLAIN_CONV not set).
bool fastConvolutions();

/// Whether Winograd convolutions may be used (FOVEAL_WINOGRAD=0: never): oneDNN's in the
/// inference plans (model/conv_plan.h, where the CPU offers them) and Foveal's on the gradient
/// paths (model/winograd.h). Defined in conv_dispatch.cpp.
bool winogradAllowed();

/// Whether this CPU computes in bf16 natively (avx512_bf16 or amx_bf16 in /proc/cpuinfo) and
/// LibTorch can use it (MKL-DNN).
bool cpuHasNativeBf16();
/// Training-mode CPU convolutions of every backbone in this process run under bf16 autocast
/// (thread-local switch; off by default; ignored where cpuHasNativeBf16() is false).
void setCpuBf16Convolutions(bool on);
bool cpuBf16Convolutions();
/// Whether bf16 pays for a VGG whose last layer has `channels` channels: from 128 (width 0.25
/// up). Narrower ones stay in fp32 while cpuBf16Convolutions() is on: their layers are too small
/// for bf16's arithmetic to outweigh the conversions, and Foveal's fp32 kernels for few channels
/// (model/conv_dispatch.h) do not run in bf16 (on a Zen 5 core with AVX512-BF16, training at
/// width 0.125 was 5-9 % slower in bf16; at 0.25 level to 20 % faster; at 0.5 1.4-2x faster).
constexpr int64_t kCpuBf16MinChannels = 128;
bool cpuBf16Pays(int64_t channels);
/// Whether a backbone on this thread has run its convolutions in bf16 since the last
/// setCpuBf16Convolutions() (what a run or a benchmark reports as its precision).
bool cpuBf16Used();

}  // namespace foveal::core
