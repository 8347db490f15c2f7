#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "base/error.h"

namespace foveal::core {

std::string atomicTempPath(const std::string& path) {
  return path + ".tmp." + std::to_string(::getpid());
}

void writeFileAtomically(const std::string& path, std::string_view bytes, const std::string& what) {
  const std::string tmp = atomicTempPath(path);
  auto fail = [&](const std::string& doing, int err) {
    throw Error(path + ": cannot write the " + what + " (" + doing + ": " + std::strerror(err) +
                ")");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("creating", errno);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      std::remove(tmp.c_str());
      fail("writing", err);
    }
    done += static_cast<size_t>(n);
  }
  // fsync: without it a power cut after the rename can leave an empty file under the new name.
  // Character devices (a test's /dev/full) cannot be synced; that is not an error.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    const int err = errno;
    ::close(fd);
    std::remove(tmp.c_str());
    fail("flushing", err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail("closing", err);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail("renaming " + tmp, err);
  }
}

}  // namespace foveal::core
