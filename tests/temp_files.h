// Temporary directories and error capture for tests (torch-free, usable by every test file).
// remove_tree removes a directory tree. std::filesystem::remove_all is avoided on purpose: in a binary
// linked with LibTorch, a same-named symbol from the torch libraries was picked up and crashed.
#pragma once
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "data/errors.h"

namespace foxeval::test {

inline void remove_tree(const std::filesystem::path& root) {
  std::error_code ec;
  if (!std::filesystem::exists(root, ec)) return;
  std::vector<std::filesystem::path> entries;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec); !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec))
    entries.push_back(it->path());
  // Deepest first: files and empty folders go before the folders holding them.
  for (auto e = entries.rbegin(); e != entries.rend(); ++e) std::filesystem::remove(*e, ec);
  std::filesystem::remove(root, ec);
}

// A fresh temporary directory, removed at scope exit.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name = "test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("foxeval_" + name + "_XXXXXX")).string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { remove_tree(path); }
};

// The message of the exception of type E (by default foxeval's user-facing Error) that `f` throws,
// or "" if it throws none.
template <typename E = foxeval::Error, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

}  // namespace foxeval::test
