// The switch registry (data/switches.h): every FOXEVAL_* name the source tree reads is declared
// there, every declared one is read somewhere; what counts as off the default; the values are read
// once (a later change to the environment is not seen; only SwitchOverride changes one), and the
// kernels and models read them nowhere else.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
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

TEST_CASE("switches: read once; a later change to the environment is not seen, an override is") {
  const char* name = "FOXEVAL_GLA_GROUPS";
  const char* before = switch_value(name);  // the first read of any switch reads them all
  const std::string had = before ? before : "";
  const char* env = std::getenv(name);
  const std::string env_had = env ? env : "";
  ::setenv(name, "3", 1);
  CHECK(std::string(switch_value(name) ? switch_value(name) : "") == had);
  static const SwitchSlot slot(name);
  CHECK(std::string(slot.value() ? slot.value() : "") == had);
  CHECK(nondefault_switches().count(name) == (had.empty() ? 0u : 1u));
  {
    SwitchOverride over(name, "2");
    REQUIRE(switch_value(name) != nullptr);
    CHECK(std::string(switch_value(name)) == "2");
    CHECK(std::string(slot.value()) == "2");  // a slot found before the override sees it
    CHECK(nondefault_switches().at(name) == "2");
    CHECK(numerics_switches().at(name) == "2");  // GLA_GROUPS changes the numbers
    CHECK(nondefault_switches_text().find("FOXEVAL_GLA_GROUPS=2") != std::string::npos);
    {
      SwitchOverride unset(name, nullptr);
      CHECK(switch_value(name) == nullptr);
      CHECK(nondefault_switches().count(name) == 0);
    }
    CHECK(std::string(switch_value(name)) == "2");  // the outer override back
  }
  CHECK(std::string(switch_value(name) ? switch_value(name) : "") == had);
  env_had.empty() ? (void)::unsetenv(name) : (void)::setenv(name, env_had.c_str(), 1);
}

TEST_CASE("switches: an on/off switch is off only at 0; misuse is a logic error") {
  const char* name = "FOXEVAL_GEMV";
  const bool was = switch_on(name);
  {
    SwitchOverride off(name, "0");
    CHECK_FALSE(switch_on(name));
    CHECK_FALSE(SwitchSlot(name).on());
    CHECK(nondefault_switches().at(name) == "0");
  }
  {
    SwitchOverride on(name, "1");
    CHECK(switch_on(name));
    CHECK(nondefault_switches().count(name) == 0);
  }
  CHECK(switch_on(name) == was);
  CHECK_THROWS_AS(switch_value("FOXEVAL_NOT_A_SWITCH"), std::logic_error);
  CHECK_THROWS_AS(SwitchSlot("FOXEVAL_NOT_A_SWITCH"), std::logic_error);
  CHECK_THROWS_AS(SwitchOverride("FOXEVAL_NOT_A_SWITCH", "1"), std::logic_error);
  CHECK_THROWS_AS(switch_on("FOXEVAL_FA_IMPL"), std::logic_error);  // a value switch
}

TEST_CASE("switches: the kernels and models read no environment variable but through the registry") {
  namespace fs = std::filesystem;
  const std::regex direct(R"(\b(getenv|secure_getenv|env_switch_on)\s*\()");
  int files = 0;
  for (const char* dir : {"kernels", "models"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(FOXEVAL_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh")) continue;
      ++files;
      std::ifstream in(e.path());
      std::string text((std::istreambuf_iterator<char>(in)), {});
      // Another library's own variable is no foxeval switch: models/cpu_threads.cpp checks MKL's
      // MKL_CBWR (refuses a non-strict mode, sets the strict one) before MKL reads it.
      for (const char* other : {"std::getenv(\"MKL_CBWR\")"})
        for (size_t at; (at = text.find(other)) != std::string::npos;) text.erase(at, std::string(other).size());
      CHECK_MESSAGE(!std::regex_search(text, direct), e.path().string(), ": reads the environment; use data/switches.h");
    }
  CHECK(files > 50);
}

}  // namespace foxeval
