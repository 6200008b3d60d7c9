#include "tasks/run/output_lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>

#include "data/errors.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

// The pid written in an open lock file, or 0.
long read_pid(int fd) {
  char buf[32] = {0};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return 0;
  char* end = nullptr;
  const long pid = std::strtol(buf, &end, 10);
  return pid > 0 ? pid : 0;
}

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

}  // namespace

void prepare_output_path(const std::string& out_path, const std::string& flag) {
  if (out_path.empty()) throw Error(fmt::format("{}: empty path", flag));
  const fs::path out(out_path);
  std::error_code ec;
  if (fs::is_directory(out, ec))
    throw Error(fmt::format("{} {}: is a folder; give the path of the file to write", flag, out_path));
  const fs::path parent = out.parent_path();
  if (parent.empty()) return;
  // The first part of the folder that exists must be a folder (`--out afile/x` has none).
  for (fs::path p = parent; !p.empty(); p = p.parent_path()) {
    const fs::file_status st = fs::status(p, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st))
        throw Error(fmt::format("{} {}: {} is not a folder, so nothing can be written under it", flag, out_path, p.string()));
      break;
    }
    if (p == p.parent_path()) break;
  }
  fs::create_directories(parent, ec);
  if (ec) throw Error(fmt::format("{} {}: cannot create the folder {} ({})", flag, out_path, parent.string(), ec.message()));
}

OutputLock::OutputLock(const std::string& out_path, const std::string& flag) : path_(out_path + ".lock") {
  prepare_output_path(out_path, flag);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd < 0)
      throw Error(fmt::format("{} {}: cannot create the lock file {} ({})", flag, out_path, path_, std::strerror(errno)));
    struct stat held {};
    if (::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) {
      ::close(fd);
      throw Error(fmt::format("{} {}: the lock file {} is not a regular file", flag, out_path, path_));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const long pid = read_pid(fd);
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw Error(fmt::format("{} {}: another foxeval run{} is writing this output (it holds {}); wait for it to end, "
                                "or give another {}",
                                flag, out_path, pid ? fmt::format(" (pid {})", pid) : std::string(), path_, flag));
      throw Error(fmt::format("{} {}: cannot lock {} ({})", flag, out_path, path_, std::strerror(err)));
    }
    // The file we locked must still be the one at the path: a run that just ended removes it
    // between our open and our flock; then lock the new one.
    struct stat now {};
    if (::stat(path_.c_str(), &now) != 0 || now.st_ino != held.st_ino || now.st_dev != held.st_dev) {
      ::close(fd);
      continue;
    }
    const long pid = read_pid(fd);
    if (pid != 0 && pid != static_cast<long>(::getpid()) && alive(pid)) {
      ::close(fd);
      throw Error(fmt::format("{} {}: {} names a running process (pid {}) as its writer; if no foxeval run is writing "
                              "this output, delete {}",
                              flag, out_path, path_, pid, path_));
    }
    // Ours (a stale lock of a run that died is taken over): our pid in it.
    const std::string text = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
      const int err = errno;
      ::close(fd);
      throw Error(fmt::format("{} {}: cannot write the lock file {} ({})", flag, out_path, path_, std::strerror(err)));
    }
    fd_ = fd;
    return;
  }
  throw Error(fmt::format("{} {}: the lock file {} keeps changing; is another run starting?", flag, out_path, path_));
}

OutputLock::~OutputLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // before the flock goes with the close: see the constructor's check
  ::close(fd_);
}

}  // namespace foxeval
