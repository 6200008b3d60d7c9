#include "data/resources.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "data/errors.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

bool holds(const fs::path& p, const Resource& r) {
  std::error_code ec;
  if (r.holds.empty()) return fs::is_regular_file(p, ec);
  for (const std::string& f : r.holds)
    if (!fs::is_regular_file(p / f, ec)) return false;
  return true;
}

}  // namespace

std::string find_resource(const Resource& r) {
  std::vector<fs::path> tried;
  const char* env = r.env.empty() ? nullptr : std::getenv(r.env.c_str());
  if (env && *env) {
    tried.push_back(r.env_relative.empty() ? fs::path(env) : fs::path(env) / r.env_relative);
  } else {
#ifdef FOXEVAL_DATA_DIR
    tried.push_back(fs::path(FOXEVAL_DATA_DIR).parent_path() / r.relative);
#endif
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) tried.push_back(exe.parent_path().parent_path() / r.relative);
  }
  for (const fs::path& p : tried)
    if (holds(p, r)) return p.lexically_normal().string();
  std::string list;
  for (const fs::path& p : tried) list += (list.empty() ? "" : ", ") + p.lexically_normal().string();
  std::string inside;
  for (const std::string& f : r.holds) inside += (inside.empty() ? "" : ", ") + f;
  const std::string set_hint = r.env.empty() ? std::string()
                               : env && *env ? fmt::format(" ({} is set and names this place)", r.env)
                                             : fmt::format("; set {}{}", r.env, r.env_relative.empty() ? "" : " (to the folder holding " + r.env_relative + ")");
  throw Error(fmt::format("{} ({}{}) not found; tried: {}{}", r.what, r.relative, inside.empty() ? "" : ": " + inside, list,
                          set_hint));
}

}  // namespace foxeval
