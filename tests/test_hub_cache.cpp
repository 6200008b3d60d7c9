// Models by name: a cache tree laid out as huggingface_hub leaves it (refs, snapshots of symlinks
// into blobs), found through HF_HUB_CACHE / HF_HOME; a missing model names the paths and the fetch command.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

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

// Every variable the cache location depends on, cleared (HOME set to `home`) for the scope and
// restored after, so that the runner's own settings neither leak in nor get lost.
struct CleanHubEnv {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  explicit CleanHubEnv(const std::string& home) {
    for (const char* n : {"HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "HOME"}) {
      const char* v = getenv(n);
      saved.emplace_back(n, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(n);
    }
    setenv("HOME", home.c_str(), 1);
  }
  ~CleanHubEnv() {
    for (const auto& [n, v] : saved) v ? (void)setenv(n.c_str(), v->c_str(), 1) : (void)unsetenv(n.c_str());
  }
};

}  // namespace

TEST_CASE("hub cache: a model by repo id and by revision, through HF_HUB_CACHE and HF_HOME") {
  test::TempDir dir("hub");
  CleanHubEnv clean((dir.path / "nohome").string());
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
    CHECK(msg.find("\n  hf download zhixuan-lin/fox-pro-760m-longcrawl64-48b\n") != std::string::npos);
    CHECK(msg.find("huggingface-cli download zhixuan-lin/fox-pro-760m-longcrawl64-48b") != std::string::npos);
    CHECK(msg.find("$HF_HUB_CACHE") != std::string::npos);
    CHECK(test::error_of<Error>([] { resolve_model_dir("zhixuan-lin/fox-tiny@v2"); }).find("hf download zhixuan-lin/fox-tiny --revision v2") !=
          std::string::npos);
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
  CHECK(hub_model_of_path("/c/hub/models--a--b--c/snapshots/abc").repo_id.empty());  // not a valid repo id
  CHECK(hub_model_of_path("/c/hub/models--/snapshots/abc").repo_id.empty());
  CHECK(hub_model_of_path("/c/hub/models--x/blobs/abc").repo_id.empty());
  // Without an organisation: models--{name}.
  const HubModelId gpt2 = hub_model_of_path("/c/hub/models--gpt2/snapshots/" + std::string(40, 'd') + "/");
  CHECK(gpt2.repo_id == "gpt2");
  CHECK(gpt2.revision == std::string(40, 'd'));
}
}  // namespace foxeval

#include "tasks/run/runner.h"

namespace foxeval {
TEST_CASE("hub cache: a result header records the repo id and commit of a model from the cache") {
  const std::string snap = "/c/hub/models--zhixuan-lin--fox-pro-760m-longcrawl64-48b/snapshots/" + std::string(40, 'c');
  const nlohmann::json h = result_header("niah", {{"model", snap}}, 1.0);
  CHECK(h.at("model_repo").at("repo_id") == "zhixuan-lin/fox-pro-760m-longcrawl64-48b");
  CHECK(h.at("model_repo").at("revision") == std::string(40, 'c'));
  CHECK(!result_header("niah", {{"model", "/models/fox"}}, 1.0).contains("model_repo"));
}
}  // namespace foxeval

namespace foxeval {
TEST_CASE("hub cache: the cache folder as huggingface_hub picks it (precedence, ~ and $VAR expansion)") {
  CleanHubEnv clean("/h");
  CHECK(hub_cache_dir() == "/h/.cache/huggingface/hub");
  {
    EnvVar xdg("XDG_CACHE_HOME", "/x");
    CHECK(hub_cache_dir() == "/x/huggingface/hub");
    {
      EnvVar home("HF_HOME", "/hh/");
      CHECK(hub_cache_dir() == "/hh/hub");  // HF_HOME wins over XDG_CACHE_HOME
      {
        EnvVar legacy("HUGGINGFACE_HUB_CACHE", "/legacy");
        CHECK(hub_cache_dir() == "/legacy");  // the legacy name wins over HF_HOME
        EnvVar hub("HF_HUB_CACHE", "/new");
        CHECK(hub_cache_dir() == "/new");  // and HF_HUB_CACHE over it
      }
    }
    EnvVar empty("HF_HOME", "");  // set but empty: as if unset
    CHECK(hub_cache_dir() == "/x/huggingface/hub");
  }
  // A leading ~ (not a later one), $VAR and ${VAR}; an unset variable stays as written.
  {
    EnvVar xdg("XDG_CACHE_HOME", "~/xdg");
    CHECK(hub_cache_dir() == "/h/xdg/huggingface/hub");
  }
  {
    EnvVar home("HF_HOME", "~");
    CHECK(hub_cache_dir() == "/h/hub");
  }
  EnvVar t("FOXEVAL_TEST_ROOT", "/t");
  unsetenv("FOXEVAL_TEST_UNSET");
  const std::pair<const char*, const char*> cases[] = {
      {"~/c", "/h/c"},
      {"/a/~/c", "/a/~/c"},
      {"$FOXEVAL_TEST_ROOT/c", "/t/c"},
      {"${FOXEVAL_TEST_ROOT}/c", "/t/c"},
      {"/a${FOXEVAL_TEST_ROOT}b", "/a/tb"},
      {"$FOXEVAL_TEST_ROOTx/c", "$FOXEVAL_TEST_ROOTx/c"},
      {"$FOXEVAL_TEST_UNSET/c", "$FOXEVAL_TEST_UNSET/c"},
      {"${FOXEVAL_TEST_UNSET}/$FOXEVAL_TEST_ROOT", "${FOXEVAL_TEST_UNSET}//t"},
      {"/c/$", "/c/$"},
      {"/c/${}", "/c/${}"},
      {"/c/${FOXEVAL_TEST_ROOT", "/c/${FOXEVAL_TEST_ROOT"},
      {"$HOME/c", "/h/c"},
  };
  for (const auto& [value, expected] : cases) {
    EnvVar hub("HF_HUB_CACHE", value);
    CHECK_MESSAGE(hub_cache_dir() == expected, value);
  }
  {
    EnvVar legacy("HUGGINGFACE_HUB_CACHE", "${FOXEVAL_TEST_ROOT}/legacy");  // the legacy value is expanded too
    CHECK(hub_cache_dir() == "/t/legacy");
  }
  EnvVar home("HF_HOME", "$FOXEVAL_TEST_ROOT/hf");
  CHECK(hub_cache_dir() == "/t/hf/hub");
}

TEST_CASE("hub cache: models found through XDG_CACHE_HOME and HUGGINGFACE_HUB_CACHE, and ids without an organisation") {
  test::TempDir dir("hub");
  CleanHubEnv clean((dir.path / "home").string());
  const std::string main_commit(40, 'a'), old_commit(40, 'b');
  const fs::path xdg_cache = dir.path / "xdg" / "huggingface" / "hub";
  add_snapshot(xdg_cache, "models--zhixuan-lin--fox-tiny", main_commit, "main", "tests/fixtures/official/fox_pro");
  add_snapshot(xdg_cache, "models--fox-tiny", main_commit, "main", "tests/fixtures/official/fox_pro");
  add_snapshot(xdg_cache, "models--fox-tiny", old_commit, "v1", "tests/fixtures/official/fox_llama");
  {
    EnvVar xdg("XDG_CACHE_HOME", (dir.path / "xdg").string());
    CHECK(resolve_model_dir("zhixuan-lin/fox-tiny") == (xdg_cache / "models--zhixuan-lin--fox-tiny/snapshots" / main_commit).string());
    CHECK(resolve_model_dir("fox-tiny") == (xdg_cache / "models--fox-tiny/snapshots" / main_commit).string());
    CHECK(resolve_model_dir("fox-tiny@v1") == (xdg_cache / "models--fox-tiny/snapshots" / old_commit).string());
    CHECK(resolve_model_dir("fox-tiny@" + old_commit) == (xdg_cache / "models--fox-tiny/snapshots" / old_commit).string());
    CHECK(load_model("fox-tiny@v1", RunOptions{})->info().family == "FoX (LLaMA)");
    const HubModelId id = parse_hub_model_id("fox-tiny");
    CHECK(id.repo_id == "fox-tiny");
    CHECK(id.revision == "main");
    // A missing org-less model: its folder, the cache's origin, and the fetch commands.
    const std::string msg = test::error_of<Error>([] { resolve_model_dir("gpt2"); });
    CHECK(msg.find((xdg_cache / "models--gpt2/refs/main").string()) != std::string::npos);
    CHECK(msg.find("$XDG_CACHE_HOME") != std::string::npos);
    CHECK(msg.find("\n  hf download gpt2\n") != std::string::npos);
    CHECK(msg.find("huggingface-cli download gpt2") != std::string::npos);
  }
  {
    // The legacy variable, written with ~ (HOME is dir/home) and a $VAR.
    fs::create_directories(dir.path / "home");
    const fs::path legacy = dir.path / "home" / "legacy-hub";
    add_snapshot(legacy, "models--zhixuan-lin--fox-tiny", old_commit, "main", "tests/fixtures/official/fox_llama");
    EnvVar xdg("XDG_CACHE_HOME", (dir.path / "xdg").string());  // the legacy variable wins over it
    EnvVar leaf("FOXEVAL_TEST_LEAF", "legacy-hub");
    EnvVar var("HUGGINGFACE_HUB_CACHE", "~/$FOXEVAL_TEST_LEAF");
    CHECK(resolve_model_dir("zhixuan-lin/fox-tiny") == (legacy / "models--zhixuan-lin--fox-tiny/snapshots" / old_commit).string());
    CHECK(load_model("zhixuan-lin/fox-tiny", RunOptions{})->info().family == "FoX (LLaMA)");
    CHECK(test::error_of<Error>([] { resolve_model_dir("fox-tiny"); }).find("legacy $HUGGINGFACE_HUB_CACHE") != std::string::npos);
  }
  {
    // ~/.cache/huggingface/hub when nothing is set.
    const fs::path home_cache = dir.path / "home" / ".cache" / "huggingface" / "hub";
    add_snapshot(home_cache, "models--fox-tiny", old_commit, "main", "tests/fixtures/official/fox_llama");
    CHECK(resolve_model_dir("fox-tiny") == (home_cache / "models--fox-tiny/snapshots" / old_commit).string());
  }
}

TEST_CASE("hub cache: repo ids follow huggingface_hub's validate_repo_id; nothing leaves the cache") {
  for (const std::string ok : {"foo", "foo/bar", "123", "Foo-BAR_foo.bar123", "a", "_/_", "zhixuan-lin/fox-pro-760m-longcrawl64-48b"})
    CHECK_MESSAGE(repo_id_problem(ok).empty(), ok);
  CHECK(repo_id_problem(std::string(96, 'a') + "/" + std::string(96, 'b')).empty());
  for (const std::string& bad : std::vector<std::string>{"", "datasets/foo/bar", ".repo_id", "foo--bar", "foo.git", "other..repo..id", "org/..", "..", ".",
                                "org/../x", "/abs/x", "/x", "org\\name", "org//name", "org/", "/", "-org/name", "org/name-",
                                "org/na me", "org/na\xc3\xa9", std::string(97, 'a')})
    CHECK_MESSAGE(!repo_id_problem(bad).empty(), bad);

  test::TempDir dir("hub");
  CleanHubEnv clean((dir.path / "home").string());
  const fs::path cache = dir.path / "hub";
  EnvVar hub("HF_HUB_CACHE", cache.string());
  add_snapshot(cache, "models--org--name", std::string(40, 'a'), "main", "tests/fixtures/official/fox_pro");
  for (const std::string bad : {"org/../x", "org/..", "../x", "/no/such/dir", "org\\name", "org//name", "a--b", "org/a..b",
                                "org/name@", "org/name@../../x", "org/name@/etc/passwd", "org/name@a//b", "org/name@a\\b",
                                "org/name.git", "@main"}) {
    CHECK_MESSAGE(parse_hub_model_id(bad).repo_id.empty(), bad);
    const std::string msg = test::error_of<Error>([&] { resolve_model_dir(bad); });
    CHECK_MESSAGE(msg.find("not a Hugging Face repo id") != std::string::npos, bad, " -> ", msg);
  }
  // A refs file naming something other than a commit folder is refused, not followed.
  std::ofstream(cache / "models--org--name/refs/evil") << "../../../etc";
  CHECK(test::error_of<Error>([] { resolve_model_dir("org/name@evil"); }).find("not a commit hash") != std::string::npos);
  // Revisions with slashes stay inside refs/ (huggingface_hub stores "refs/pr/1" as refs/refs/pr/1).
  fs::create_directories(cache / "models--org--name/refs/refs/pr");
  std::ofstream(cache / "models--org--name/refs/refs/pr/1") << std::string(40, 'a') << "\n";
  CHECK(resolve_model_dir("org/name@refs/pr/1") == (cache / "models--org--name/snapshots" / std::string(40, 'a')).string());
}
}  // namespace foxeval
