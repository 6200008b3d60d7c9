// Subcommands register themselves: one file in cli/ per subcommand, no central list to edit.
#pragma once
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "data/errors.h"
#include "models/model.h"

namespace foxeval {

using CommandSetup = std::function<void(CLI::App& root)>;

inline std::vector<CommandSetup>& command_setups() {
  static std::vector<CommandSetup> setups;
  return setups;
}

struct CommandRegistrar {
  explicit CommandRegistrar(CommandSetup setup) { command_setups().push_back(std::move(setup)); }
};

}  // namespace foxeval

namespace foxeval {

// A subcommand that groups others (`foxeval bench attention`, `foxeval bench tokenizer`):
// whichever file registers first creates it, the others add to it.
inline CLI::App* command_group(CLI::App& root, const std::string& name, const std::string& about) {
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; }))
    if (sub->get_name() == name) return sub;
  CLI::App* group = root.add_subcommand(name, about);
  group->require_subcommand(1);
  return group;
}

// A flag's list of integers: "1,2,3", "1 2 3" or "[1, 2, 3]". Errors name the flag and the place;
// an empty item ("1,,2", a leading or trailing comma) is refused, not skipped.
inline std::vector<int64_t> parse_int_list(const std::string& s, const std::string& flag) {
  std::vector<int64_t> v;
  std::size_t i = 0;
  bool item_due = false;  // a comma was the last separator: an integer must come next
  while (i < s.size()) {
    const char c = s[i];
    if (c == ',') {
      if (v.empty() || item_due)
        throw Error(fmt::format("{}: empty list item before the comma at character {} of '{}'", flag, i, s.substr(0, 40)));
      item_due = true;
      ++i;
      continue;
    }
    if (c == '[' || c == ']' || std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    std::size_t used = 0;
    try {
      v.push_back(std::stoll(s.substr(i), &used));
    } catch (const std::exception&) {
      throw Error(fmt::format("{}: not an integer at character {}: '{}'", flag, i, s.substr(i, 12)));
    }
    item_due = false;
    i += used;
  }
  if (item_due) throw Error(fmt::format("{}: empty list item after the last comma of '{}'", flag, s.substr(0, 40)));
  return v;
}

}  // namespace foxeval
