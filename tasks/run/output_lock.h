// One run per output: a task holds OUT.lock (beside its result OUT) from its start to its end, so
// a second run with the same --out is refused at once instead of racing on the journal, the state
// and the result. The one place every task takes it: the Runner (tasks/run/runner.h).
//
// The lock is flock(2) on OUT.lock, which holds the owner's pid: the kernel drops the flock when
// its process ends however it ends (exit 3, a signal, SIGKILL), so a lock left behind by a dead
// run is stale and taken over; a live process named in the file keeps it (a lock made by hand, or
// by a run on a filesystem where flock does not reach). The destructor removes the file.
#pragma once
#include <string>

namespace foxeval {

class OutputLock {
 public:
  // Takes the lock of `out_path` (creating its folder when missing). Throws foxeval::Error naming
  // `flag`, the path and the holder's pid when another live run holds it, and for an --out that
  // cannot be a file (under a regular file, or a folder itself).
  explicit OutputLock(const std::string& out_path, const std::string& flag = "--out");
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

  const std::string& path() const { return path_; }  // OUT.lock

 private:
  std::string path_;
  int fd_ = -1;
};

// Checks that `out_path` can be a file: its folder exists or can be made (made here), nothing in
// the way is a regular file, and it is not a folder. Throws foxeval::Error naming `flag`.
void prepare_output_path(const std::string& out_path, const std::string& flag = "--out");

}  // namespace foxeval
