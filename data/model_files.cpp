#include "data/model_files.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <filesystem>

#include "data/errors.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

// The name as it may be printed: control characters shown as '?', at most 120 bytes.
std::string shown(const std::string& s) {
  std::string out = s.substr(0, 120);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s.size() > 120 ? out + "..." : out;
}

}  // namespace

bool is_plain_file_name(const std::string& name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '/' || c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

std::string model_file(const std::string& dir, const std::string& name, const std::string& where) {
  if (!is_plain_file_name(name))
    throw Error(fmt::format("{}: '{}' is not a plain file name in the model folder (no '/', '..' or absolute paths)",
                            where, shown(name)));
  const fs::path path = fs::path(dir) / name;
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) return path.string();  // missing: the caller says so
  // Links on disk are the user's own (a checkpoint assembled from links to a store elsewhere, the
  // hub cache's links to blobs): followed for reading. What is at the end must be a regular file:
  // a FIFO would block the reader forever, a device never ends.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const std::string why = std::strerror(errno);
    throw Error(fmt::format("{}: {} is a symbolic link to {}, which cannot be read ({})", where, path.string(),
                            shown(fs::read_symlink(path, ec).string()), why));
  }
  if (!S_ISREG(st.st_mode))
    throw Error(fmt::format("{}: {} is not a regular file ({}); refusing to read it", where, path.string(),
                            S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket"));
  return path.string();
}

ModelFiles find_model_files(const std::string& spec) {
  ModelFiles f;
  f.spec = spec;
  f.dir = resolve_model_dir(spec);  // a directory, or a repo id in the hub cache
  f.identity_path = fs::weakly_canonical(f.dir).string();  // = model_identity_path(spec), without resolving again
  f.hub = parse_hub_model_id(spec);
  std::error_code ec;
  if (fs::is_regular_file(fs::path(f.dir) / "vocab.json", ec)) f.vocab_json = (fs::path(f.dir) / "vocab.json").string();
  if (fs::is_regular_file(fs::path(f.dir) / "merges.txt", ec)) f.merges_txt = (fs::path(f.dir) / "merges.txt").string();
  return f;
}

}  // namespace foxeval
