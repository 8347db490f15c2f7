#include "run/run_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "base/error.h"

namespace fs = std::filesystem;

namespace foveal::core {

namespace {

std::string lockPath(const std::string& dir) { return (fs::path(dir) / kRunLockFile).string(); }

std::string readHolder(int fd) {
  char buf[256] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0')) s.pop_back();
  return s.empty() ? "another process" : s;
}

}  // namespace

RunLock::RunLock(const std::string& dir) {
  const std::string path = lockPath(dir);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(path + ": cannot create the run folder's lock (" + std::strerror(errno) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string who = err == EWOULDBLOCK ? readHolder(fd) : std::string();
    ::close(fd);
    if (err == EWOULDBLOCK)
      throw Error(dir + ": another training process (" + who +
                  ") is writing this run folder; wait for it to finish or stop it first");
    throw Error(path + ": cannot lock the run folder (" + std::strerror(err) + ")");
  }
  // Ours now (a stale lock's old text is replaced): say who holds it.
  char host[128] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::time(nullptr);
  char when[32] = {};
  std::tm tm{};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", ::localtime_r(&now, &tm));
  const std::string text =
      "pid " + std::to_string(::getpid()) + " on " + host + ", since " + when + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    // The lock holds without the text; only a refusal's wording would suffer.
  }
  m_fd = fd;
}

RunLock::~RunLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing drops the flock; the file stays (harmless, reused)
}

}  // namespace foveal::core
