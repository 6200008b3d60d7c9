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
#include "data/flag_values.h"  // parse_int_list
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

}  // namespace foxeval
