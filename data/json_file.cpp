#include "data/json_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/errors.h"

namespace foxeval {

void write_text_atomic(const std::string& path, const std::string& text) {
  // The temp name carries the pid: two processes writing the same path never share a temp file.
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw Error(fmt::format("{}: cannot write ({})", tmp, std::strerror(errno)));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
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
}

void write_json_atomic(const std::string& path, const nlohmann::json& value, int indent) {
  write_text_atomic(path, value.dump(indent) + "\n");
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open", path));
  try {
    return nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: malformed JSON: {}", path, e.what()));
  }
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace foxeval
