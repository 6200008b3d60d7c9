// The two small rules huggingface_hub (data/hub_cache.cpp) and datasets (data/datasets_cache.cpp)
// both apply when they pick their cache folders from the environment.
#pragma once
#include <cstdlib>
#include <string>

namespace foxeval {

// A variable's value, or nullptr when it is unset. Deviation from Python's os.getenv: a variable set
// to "" counts as unset too (Python would make the cache a relative folder of the working
// directory, never what `HF_HOME= foxeval ...` means).
inline const char* env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// posixpath.join(a, b): an absolute b replaces a.
inline std::string path_join(const std::string& a, const std::string& b) {
  if (!b.empty() && b[0] == '/') return b;
  if (a.empty() || a.back() == '/') return a + b;
  return a + "/" + b;
}

}  // namespace foxeval
