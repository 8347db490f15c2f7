#pragma once
// A fatal signal's report for foveal-cli: where the process died, on a machine without a
// debugger (a GPU server, a cluster node, a user's laptop).
#include <string>

namespace foveal::app {

/// From now on SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT write "foveal-cli COMMAND: crashed
/// (SIGSEGV, ...)" and the call stack (function names where the binary exports them) to stderr,
/// then end the process with the same signal, so its exit status is what it would have been.
/// The handler runs on its own stack (a stack overflow is reported too) and only calls
/// async-signal-safe functions (write, glibc's backtrace, already loaded here).
void installCrashReport(const std::string& command);

}  // namespace foveal::app
