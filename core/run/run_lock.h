#pragma once
// The lock that keeps two training processes out of one run folder. Two trainers in one folder
// interleave their metrics and overwrite each other's checkpoints, so `foveal-cli train` (fresh or
// --resume) holds RUN/.lock for as long as it runs. The lock is an flock(2) on that file, which the
// kernel drops when its process ends however it ends: a lock left behind by a SIGKILLed trainer is
// stale and the next trainer takes it over without asking anyone to delete a file. The file holds
// the holder's pid, host and start time, so a refusal can name it. Torch-free and Qt-free.
#include <string>

namespace foveal::core {

/// The lock file's name inside a run folder.
constexpr const char* kRunLockFile = ".lock";

class RunLock {
 public:
  /// Takes the lock of run folder `dir` (which must exist). Throws Error naming the folder and the
  /// holder ("pid 1234 on host x, since 2026-01-01 10:00:00") when another process holds it.
  explicit RunLock(const std::string& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int m_fd = -1;
};

}  // namespace foveal::core
