#include "data/json_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "data/errors.h"
#include "data/path_overlap.h"

namespace foxeval {

namespace {

// 16 hex digits from the kernel's random source: a temp name nobody can plant a link at ahead of time.
std::string random_suffix() {
  uint64_t r = 0;
  if (::getrandom(&r, sizeof r, 0) != static_cast<ssize_t>(sizeof r)) {
    std::random_device dev;
    r = (static_cast<uint64_t>(dev()) << 32) ^ dev();
  }
  return fmt::format("{:016x}", r);
}

// The folder's own entry for a renamed file reaches the disk only with an fsync of the folder.
void sync_folder_of(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // a folder we cannot open for reading: the rename stands, unsynced
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void write_text_atomic(const std::string& path, const std::string& text) {
  // A fresh file under an unpredictable name beside the result, never an existing file or a link:
  // then fsync, rename over the result (a link there is replaced, not written through), fsync the folder.
  refuse_writing_over_input(path);
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = path + ".tmp." + random_suffix();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && (errno != EEXIST || attempt >= 16))
      throw Error(fmt::format("{}: cannot write ({})", tmp, std::strerror(errno)));
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(fmt::format("{}: write failed ({})", tmp, std::strerror(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw Error(fmt::format("{}: fsync/close failed", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("{}: cannot rename to {} ({})", tmp, path, std::strerror(err)));
  }
  sync_folder_of(path);
}

void write_json_atomic(const std::string& path, const nlohmann::json& value, int indent) {
  write_text_atomic(path, value.dump(indent) + "\n");
}

namespace {

// Files, pipes and process substitutions are read; a folder or a device (/dev/zero never ends) is refused.
void check_readable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // the open below says why
  if (S_ISDIR(st.st_mode)) throw Error(fmt::format("{}: is a folder, not a file", path));
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) throw Error(fmt::format("{}: is a device, not a file", path));
}

// The deepest nesting of arrays and objects in JSON text (strings skipped).
size_t nesting_depth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

void check_json_depth(std::string_view text, const std::string& source) {
  // Code that walks a value recursively (printing it, converting it) must never exhaust the stack.
  constexpr size_t kMaxDepth = 512;
  if (nesting_depth(text) > kMaxDepth)
    throw Error(fmt::format("{}: JSON nested more than {} levels deep; refusing it", source, kMaxDepth));
}

nlohmann::json read_json(const std::string& path) {
  const std::string text = read_text_file(path);
  check_json_depth(text, path);
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: malformed JSON: {}", path, e.what()));
  }
}

void check_input_stream(const std::string& path, const std::string& flag) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw Error(fmt::format("{} {}: not a file (a folder or a device)", flag, path));
}

std::string read_text_file(const std::string& path) {
  check_readable(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace foxeval
