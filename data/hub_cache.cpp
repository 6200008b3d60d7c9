#include "data/hub_cache.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "data/errors.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The cache folder as huggingface_hub chooses it.
std::string hub_cache_dir() {
  if (!env("HF_HUB_CACHE").empty()) return env("HF_HUB_CACHE");
  if (!env("HF_HOME").empty()) return (fs::path(env("HF_HOME")) / "hub").string();
  return (fs::path(env("HOME")) / ".cache" / "huggingface" / "hub").string();
}

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

HubModelId parse_hub_model_id(const std::string& spec) {
  std::error_code ec;
  if (spec.empty() || fs::exists(spec, ec)) return {};
  const auto at = spec.find('@');
  const std::string repo = spec.substr(0, at);
  const auto slash = repo.find('/');
  // A repo id is exactly "org/name" (no leading '/', '.', or further slashes).
  if (slash == std::string::npos || slash == 0 || slash + 1 == repo.size() || repo.find('/', slash + 1) != std::string::npos ||
      repo[0] == '.' || repo[0] == '~')
    return {};
  return {repo, at == std::string::npos ? "main" : spec.substr(at + 1)};
}

std::string resolve_model_dir(const std::string& spec) {
  std::error_code ec;
  if (fs::is_directory(spec, ec)) return spec;
  const HubModelId id = parse_hub_model_id(spec);
  if (id.repo_id.empty()) throw Error(fmt::format("model directory {} does not exist", spec));
  const std::string org = id.repo_id.substr(0, id.repo_id.find('/'));
  const std::string name = id.repo_id.substr(id.repo_id.find('/') + 1);
  const fs::path repo_dir = fs::path(hub_cache_dir()) / fmt::format("models--{}--{}", org, name);
  std::vector<std::string> searched;
  const fs::path ref = repo_dir / "refs" / id.revision;
  searched.push_back(ref.string());
  std::string commit;
  if (std::ifstream in{ref}) {
    std::getline(in, commit);
  } else if (is_commit_hash(id.revision)) {
    commit = id.revision;
  }
  if (!commit.empty()) {
    const fs::path snapshot = repo_dir / "snapshots" / commit;
    searched.push_back(snapshot.string());
    if (fs::is_directory(snapshot, ec)) return snapshot.string();
  }
  std::string paths;
  for (const auto& p : searched) paths += "\n  " + p;
  throw Error(fmt::format(
      "model {} is neither a directory nor in the Hugging Face cache (searched:{}). foxeval never downloads; fetch it "
      "with:\n  huggingface-cli download {}{}",
      spec, paths, id.repo_id, id.revision == "main" ? "" : " --revision " + id.revision));
}

std::string model_identity_path(const std::string& spec) {
  return fs::weakly_canonical(resolve_model_dir(spec)).string();
}

HubModelId hub_model_of_path(const std::string& path) {
  const fs::path p = fs::path(path).lexically_normal();
  const fs::path commit = p.filename(), snapshots = p.parent_path().filename(), repo = p.parent_path().parent_path().filename();
  const std::string r = repo.string();
  if (snapshots != "snapshots" || r.rfind("models--", 0) != 0) return {};
  const std::string rest = r.substr(8);
  const auto sep = rest.find("--");
  if (sep == std::string::npos) return {};
  return {rest.substr(0, sep) + "/" + rest.substr(sep + 2), commit.string()};
}

}  // namespace foxeval
