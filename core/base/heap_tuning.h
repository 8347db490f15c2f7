#pragma once
// The C heap's settings for a process that allocates and frees tensors of a few megabytes at every
// step (Torch-free).
//
// glibc's malloc moves its mmap threshold up to the largest block freed so far and trims the top
// of the heap whenever more than twice that lies free there. A training step of a sharp model
// frees and reallocates hundreds of tensors of 0.1-4 MB per step, so the heap was trimmed and
// grown again all the time, every regrowth paid in page faults: measured on a Zen 5 VM, one
// thread, sharp pooling at width 0.125, batch 64: 133-138 training images/s with glibc's
// defaults, 207-218 with the settings below (LD_PRELOADed tcmalloc: 200-207); a full-size soft
// step (two threads) 1.3-1.5x faster in fp32 and 1.4x in bf16 (docs/DEVELOPING.md).
#include <string>

namespace foveal::core {

/// Sets glibc's mmap threshold to 32 MiB (its dynamic ceiling, fixed from the start) and its trim
/// threshold to 1 GiB, so that freed blocks stay in the heap for the next step instead of going
/// back to the kernel: a process's resident size stays at its peak. Leaves the heap alone where
/// FOVEAL_DEFAULT_MALLOC is set (the "before" of a benchmark), where the user has tuned malloc
/// (GLIBC_TUNABLES or MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_, MALLOC_TOP_PAD_ in the
/// environment), under AddressSanitizer or ThreadSanitizer (their own allocator) and without
/// glibc. Call it first thing in main(), once; returns heapSettings().
std::string tuneHeapForTensors();

/// What tuneHeapForTensors() did in this process, for reports: "tuned (mmap 32 MiB, trim 1
/// GiB)", "glibc defaults (FOVEAL_DEFAULT_MALLOC)", "the environment's (GLIBC_TUNABLES)", ...,
/// or "glibc defaults" when it was not called.
std::string heapSettings();

}  // namespace foveal::core
