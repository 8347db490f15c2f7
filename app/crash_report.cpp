#include "crash_report.h"

#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace foveal::app {

namespace {

char g_prefix[256];     // "foveal-cli COMMAND: crashed (", written before the signal's name
char g_stack[1 << 16];  // the handler's own stack (SIGSEGV from a stack overflow)
constexpr int kMaxFrames = 64;

void put(const char* s) {
  const size_t n = std::strlen(s);
  if (n > 0 && ::write(STDERR_FILENO, s, n) < 0) return;
}

const char* signalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV, an invalid memory access";
    case SIGBUS:
      return "SIGBUS, a bus error";
    case SIGFPE:
      return "SIGFPE, an arithmetic fault";
    case SIGILL:
      return "SIGILL, an illegal instruction (a build for another CPU?)";
    case SIGABRT:
      return "SIGABRT, an abort";
    default:
      return "a fatal signal";
  }
}

void onFatalSignal(int sig) {
  put("\n");
  put(g_prefix);
  put(signalName(sig));
  put("). Call stack, innermost first:\n");
  void* frames[kMaxFrames];
  const int n = ::backtrace(frames, kMaxFrames);
  ::backtrace_symbols_fd(frames, n, STDERR_FILENO);
  put("Please report it with this output and the command line.\n");
  // SA_RESETHAND restored the default action: dying of the same signal keeps the exit status.
  std::raise(sig);
}

}  // namespace

void installCrashReport(const std::string& command) {
  std::snprintf(g_prefix, sizeof g_prefix, "foveal-cli %s: crashed (", command.c_str());
  // backtrace() loads libgcc's unwinder on its first call, which allocates: not in the handler.
  void* warm[1];
  ::backtrace(warm, 1);
  stack_t ss{};
  ss.ss_sp = g_stack;
  ss.ss_size = sizeof g_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = onFatalSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace foveal::app
