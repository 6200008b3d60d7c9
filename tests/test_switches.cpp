// The switch registry (data/switches.h): every FOXEVAL_* name the source tree reads is declared
// there, every declared one is read somewhere; what counts as off the default.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "data/switches.h"

namespace foxeval {
namespace {

// The "FOXEVAL_..." string literals of the C++/CUDA sources under the layers and cli/: the names
// code reads (getenv, env_switch_on, find_resource's variable). Compile-time macros are not quoted.
std::set<std::string> names_in_tree() {
  namespace fs = std::filesystem;
  const std::regex literal("\"(FOXEVAL_[A-Z0-9_]+)\"");
  std::set<std::string> names;
  for (const char* dir : {"cli", "tasks", "models", "kernels", "data"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(FOXEVAL_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh")) continue;
      if (e.path().filename() == "switches.cpp") continue;  // the registry itself
      std::ifstream in(e.path());
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      for (auto it = std::sregex_iterator(text.begin(), text.end(), literal); it != std::sregex_iterator(); ++it)
        names.insert((*it)[1]);
    }
  return names;
}

std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

}  // namespace

TEST_CASE("switches: every FOXEVAL_* name the code reads is declared once, and every declared one is read") {
  const std::set<std::string> read = names_in_tree();
  CHECK(read.size() > 20);
  std::set<std::string> declared;
  for (const Switch& s : switches()) {
    CHECK_MESSAGE(declared.insert(s.name).second, "declared twice: ", s.name);
    CHECK_MESSAGE(std::strlen(s.meaning) > 10, s.name);
  }
  for (const std::string& n : read) CHECK_MESSAGE(declared.count(n), "not declared in data/switches.cpp: ", n);
  for (const std::string& n : declared) CHECK_MESSAGE(read.count(n), "declared but read nowhere: ", n);
  // The numerics path's switches the issue names are marked so.
  for (const char* n : {"FOXEVAL_FA_IMPL", "FOXEVAL_RECURRENT_IMPL", "FOXEVAL_LM_HEAD_LOSS"}) {
    REQUIRE(find_switch(n) != nullptr);
    CHECK_MESSAGE(find_switch(n)->numerics, n);
  }
  CHECK_FALSE(find_switch("FOXEVAL_PROGRESS_SECONDS")->numerics);
}

TEST_CASE("switches: off the default is an on/off switch at 0, or a value switch set") {
  g_env = {{"FOXEVAL_GEMV", "1"}, {"FOXEVAL_PDL", "0"}, {"FOXEVAL_FA_IMPL", "mma"}, {"FOXEVAL_TIMING", ""},
           {"FOXEVAL_NOT_A_SWITCH", "1"}};
  const std::map<std::string, std::string> off = nondefault_switches(fake_env);
  CHECK(off == std::map<std::string, std::string>{{"FOXEVAL_FA_IMPL", "mma"}, {"FOXEVAL_PDL", "0"}});
  g_env.clear();
  CHECK(nondefault_switches(fake_env).empty());
}

}  // namespace foxeval
