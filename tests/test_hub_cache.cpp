// Models by name: a cache tree laid out as huggingface_hub leaves it (refs, snapshots of symlinks
// into blobs), found through HF_HUB_CACHE / HF_HOME; a missing model names the paths and the fetch command.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "models/registry.h"
#include "tests/temp_files.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

// models--org--name/{blobs/<file>, snapshots/<commit>/<file> -> ../../blobs/<file>, refs/<ref>}.
void add_snapshot(const fs::path& cache, const std::string& repo, const std::string& commit, const std::string& ref,
                  const fs::path& from) {
  const fs::path root = cache / repo;
  fs::create_directories(root / "blobs");
  fs::create_directories(root / "snapshots" / commit);
  fs::create_directories(root / "refs");
  for (const auto& e : fs::directory_iterator(from)) {
    const std::string blob = commit.substr(0, 8) + "-" + e.path().filename().string();
    fs::copy_file(e.path(), root / "blobs" / blob, fs::copy_options::overwrite_existing);
    fs::create_symlink(fs::path("..") / ".." / "blobs" / blob, root / "snapshots" / commit / e.path().filename());
  }
  if (!ref.empty()) std::ofstream(root / "refs" / ref) << commit;
}

struct EnvVar {
  std::string name;
  EnvVar(const std::string& n, const std::string& value) : name(n) { setenv(n.c_str(), value.c_str(), 1); }
  ~EnvVar() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("hub cache: a model by repo id and by revision, through HF_HUB_CACHE and HF_HOME") {
  test::TempDir dir("hub");
  const fs::path cache = dir.path / "hub";
  const std::string main_commit(40, 'a'), old_commit(40, 'b');
  add_snapshot(cache, "models--zhixuan-lin--fox-tiny", main_commit, "main", "tests/fixtures/official/fox_pro");
  add_snapshot(cache, "models--zhixuan-lin--fox-tiny", old_commit, "v1", "tests/fixtures/official/fox_llama");
  {
    EnvVar hub("HF_HUB_CACHE", cache.string());
    CHECK(resolve_model_dir("zhixuan-lin/fox-tiny") == (cache / "models--zhixuan-lin--fox-tiny/snapshots" / main_commit).string());
    CHECK(resolve_model_dir("zhixuan-lin/fox-tiny@v1") == (cache / "models--zhixuan-lin--fox-tiny/snapshots" / old_commit).string());
    CHECK(resolve_model_dir("zhixuan-lin/fox-tiny@" + old_commit) ==
          (cache / "models--zhixuan-lin--fox-tiny/snapshots" / old_commit).string());
    CHECK(load_model("zhixuan-lin/fox-tiny", RunOptions{})->info().family == "FoX (Pro)");
    CHECK(load_model("zhixuan-lin/fox-tiny@v1", RunOptions{})->info().family == "FoX (LLaMA)");
    const std::string msg = test::error_of<Error>([] { resolve_model_dir("zhixuan-lin/fox-pro-760m-longcrawl64-48b"); });
    CHECK(msg.find("models--zhixuan-lin--fox-pro-760m-longcrawl64-48b/refs/main") != std::string::npos);
    CHECK(msg.find("huggingface-cli download zhixuan-lin/fox-pro-760m-longcrawl64-48b") != std::string::npos);
    CHECK(test::error_of<Error>([] { resolve_model_dir("zhixuan-lin/fox-tiny@v2"); }).find("--revision v2") != std::string::npos);
  }
  {
    EnvVar home("HF_HOME", dir.path.string());  // HF_HOME/hub
    CHECK(resolve_model_dir("zhixuan-lin/fox-tiny") == (cache / "models--zhixuan-lin--fox-tiny/snapshots" / main_commit).string());
  }
  // A local path that does not exist is not mistaken for a repo id.
  CHECK(test::error_of<Error>([] { resolve_model_dir("./no/such"); }).find("does not exist") != std::string::npos);
}

}  // namespace foxeval

namespace foxeval {
TEST_CASE("hub cache: a snapshot folder names its repo id and commit; other folders none") {
  const HubModelId id = hub_model_of_path("/c/hub/models--zhixuan-lin--fox-pro-760m-longcrawl64-48b/snapshots/" + std::string(40, 'a'));
  CHECK(id.repo_id == "zhixuan-lin/fox-pro-760m-longcrawl64-48b");
  CHECK(id.revision == std::string(40, 'a'));
  CHECK(hub_model_of_path("/models/fox-pro").repo_id.empty());
  CHECK(hub_model_of_path("/c/hub/models--nodash/snapshots/abc").repo_id.empty());
}
}  // namespace foxeval

#include "tasks/runner.h"

namespace foxeval {
TEST_CASE("hub cache: a result header records the repo id and commit of a model from the cache") {
  const std::string snap = "/c/hub/models--zhixuan-lin--fox-pro-760m-longcrawl64-48b/snapshots/" + std::string(40, 'c');
  const nlohmann::json h = result_header("niah", {{"model", snap}}, 1.0);
  CHECK(h.at("model_repo").at("repo_id") == "zhixuan-lin/fox-pro-760m-longcrawl64-48b");
  CHECK(h.at("model_repo").at("revision") == std::string(40, 'c'));
  CHECK(!result_header("niah", {{"model", "/models/fox"}}, 1.0).contains("model_repo"));
}
}  // namespace foxeval
