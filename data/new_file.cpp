#include "data/new_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "data/errors.h"
#include "data/path_overlap.h"

namespace foxeval {

int create_new_file(const std::string& path) {
  refuse_writing_over_input(path);
  // O_EXCL with O_CREAT fails on anything already there, a symbolic link included (never followed).
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      throw Error(fmt::format("{}: is a symbolic link; foxeval never writes through one (delete it)", path));
    throw Error(fmt::format("{}: cannot create ({})", path, std::strerror(err)));
  }
  return fd;
}

}  // namespace foxeval
