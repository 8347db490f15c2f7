#include "base/safe_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "base/error.h"

namespace foveal::core {

namespace {

std::string kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string sizeText(uint64_t bytes) {
  if (bytes >= (uint64_t(1) << 30)) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (uint64_t(1) << 20)) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

void checkStat(const std::string& path, const std::string& what, uint64_t maxBytes,
               const struct stat& st) {
  if (!S_ISREG(st.st_mode))
    throw Error(path + ": cannot read " + what + " (" + kindOf(st.st_mode) +
                ", not a regular file)");
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    throw Error(path + ": the " + what + " is too large (" +
                sizeText(static_cast<uint64_t>(st.st_size)) + ", the limit is " +
                sizeText(maxBytes) + ")");
}

}  // namespace

uint64_t checkRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw Error(path + ": cannot open " + what + " (" + std::strerror(errno) + ")");
  checkStat(path, what, maxBytes, st);
  return static_cast<uint64_t>(st.st_size);
}

namespace {

std::string readChecked(const std::string& path, const std::string& what, uint64_t maxBytes,
                        size_t limit) {
  checkRegularFile(path, what, maxBytes);
  // O_NONBLOCK: should the name be swapped for a FIFO between stat and open, open returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(path + ": cannot open " + what + " (" + std::strerror(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw Error(path + ": cannot open " + what + " (" + std::strerror(err) + ")");
  }
  try {
    checkStat(path, what, maxBytes, st);
  } catch (...) {
    ::close(fd);
    throw;
  }
  std::string bytes(std::min(static_cast<size_t>(st.st_size), limit), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw Error(path + ": cannot read " + what + " (" + std::strerror(err) + ")");
    }
    if (n == 0) break;  // the file shrank while it was read: what is there is what it holds
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

}  // namespace

std::string readRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes) {
  return readChecked(path, what, maxBytes, SIZE_MAX);
}

std::string readFileHead(const std::string& path, const std::string& what, uint64_t maxBytes,
                         size_t n) {
  return readChecked(path, what, maxBytes, n);
}

}  // namespace foveal::core
