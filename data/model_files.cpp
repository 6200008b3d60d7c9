#include "data/model_files.h"

#include <fmt/format.h>

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

bool inside(const fs::path& file, const fs::path& root) {
  const fs::path rel = file.lexically_relative(root);
  return !rel.empty() && rel.is_relative() && *rel.begin() != "..";
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
  const fs::path root = fs::canonical(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot resolve the model folder {} ({})", where, dir, ec.message()));
  const fs::path real = fs::canonical(path, ec);
  if (ec) throw Error(fmt::format("{}: {} cannot be resolved ({})", where, path.string(), ec.message()));
  fs::path boundary = root;
  // The hub cache: snapshots/<commit>/<file> -> ../../blobs/<hash>, inside models--org--name/.
  const fs::path snapshots = root.parent_path(), repo = snapshots.parent_path();
  if (snapshots.filename() == "snapshots" && repo.filename().string().rfind("models--", 0) == 0) boundary = repo;
  if (!inside(real, boundary))
    throw Error(fmt::format("{}: {} resolves to a file outside the folder {}; refusing to read it", where,
                            path.string(), boundary.string()));
  return path.string();
}

}  // namespace foxeval
