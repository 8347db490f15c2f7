#include "base/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
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

const char* specialFileKind(const std::string& path) {
  struct stat st {};
  // stat, not lstat: a link to a regular file is replaced by the new file as before, a link to a
  // device or FIFO is refused like the device itself.
  if (::stat(path.c_str(), &st) != 0) return nullptr;  // missing (or unreadable: open will say)
  if (S_ISREG(st.st_mode)) return nullptr;
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "not a regular file";
}

void writeFileAtomically(const std::string& path, std::string_view bytes, const std::string& what,
                         Durability durability) {
  const std::string tmp = atomicTempPath(path);
  auto fail = [&](const std::string& doing, int err) {
    throw Error(path + ": cannot write the " + what + " (" + doing + ": " + std::strerror(err) +
                ")");
  };
  // The rename below replaces whatever PATH is: run as root, `import --out /dev/full --force`
  // turned the device node into a regular file, and a FIFO was replaced even without --force.
  if (const char* kind = specialFileKind(path))
    throw Error(path + ": refusing to write the " + what + " over " + kind +
                " (only a regular file is replaced; choose another name)");
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
  if (durability == Durability::Synced && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
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
