// Removes a directory tree. std::filesystem::remove_all is avoided on purpose: in a binary
// linked with LibTorch, a same-named symbol from the torch libraries was picked up and crashed.
#pragma once
#include <filesystem>
#include <system_error>
#include <vector>

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

}  // namespace foxeval::test
