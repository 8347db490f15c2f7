#pragma once
// OpenBLAS (Debian's libtorch does its matrix products with it) picks its kernels for the CPU it
// recognises when it is loaded; OpenBLAS 0.3.21 (Debian 12) does not know the newest Xeons (the
// AMX machines here) and falls back to its Prescott (SSE3) kernels, which are slower and, in
// TRBA's attention, 20 times less accurate than its AVX2 ones (alpha within 2.8e-3 of strhub's
// instead of 1.5e-4). The choice is made before main() and read from OPENBLAS_CORETYPE only then,
// so a process that finds the fallback on a CPU with AVX2 or AVX-512 starts itself again with
// OPENBLAS_CORETYPE set (Haswell or SkylakeX kernels). A coretype the environment already names
// is left alone.
#include <string>

namespace foveal::core {

/// Restarts the process (execv of /proc/self/exe with `argv`) when OpenBLAS fell back to its
/// generic kernels on a CPU that has better ones; returns when nothing needs doing (or the restart
/// failed). Call first thing in main().
void chooseBlasKernels(char** argv);

/// OpenBLAS's kernels in this process ("Haswell", "SkylakeX", ...; "none" without OpenBLAS).
std::string blasKernels();

}  // namespace foveal::core
