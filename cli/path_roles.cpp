#include "cli/path_roles.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "data/errors.h"
#include "data/path_overlap.h"
#include "data/utf8.h"

namespace foxeval {
namespace {

std::set<const CLI::Option*>& marked() {
  static std::set<const CLI::Option*> m;
  return m;
}

bool is_output(const CLI::Option* o) {
  static const std::set<std::string> kOutputNames = {"--out", "--output_path", "--log-samples", "--matrices"};
  if (marked().count(o)) return true;
  for (const std::string& n : o->get_lnames())
    if (kOutputNames.count("--" + n)) return true;
  return false;
}

// A value with its invalid bytes shown as \xNN (the message must stay printable).
std::string escaped(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size() && out.size() < 300;) {
    const size_t bad = utf8::first_invalid(std::string_view(s).substr(i));
    const size_t good = bad == std::string_view::npos ? s.size() - i : bad;
    out += s.substr(i, good);
    i += good;
    if (i < s.size()) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i++]));
  }
  return out;
}

// The candidate paths in an input value: the value, and in a list "k=v,k2=v2" each v.
void add_values(std::vector<NamedPath>& inputs, const std::string& flag, const std::string& value) {
  inputs.push_back({flag, value});
  if (value.find('=') == std::string::npos && value.find(',') == std::string::npos) return;
  size_t start = 0;
  while (start <= value.size()) {
    size_t end = value.find(',', start);
    if (end == std::string::npos) end = value.size();
    const std::string item = value.substr(start, end - start);
    const size_t eq = item.find('=');
    inputs.push_back({flag, eq == std::string::npos ? item : item.substr(eq + 1)});
    start = end + 1;
  }
}

void collect(const CLI::App* app, std::vector<NamedPath>& outputs, std::vector<NamedPath>& inputs) {
  for (const CLI::Option* o : app->get_options()) {
    const std::string flag = o->get_name();
    std::vector<std::string> values = o->results();
    for (const std::string& v : values)
      if (utf8::first_invalid(v) != std::string_view::npos)
        throw Error(fmt::format("{} {}: not valid UTF-8; rename it (foxeval records paths and text as UTF-8)", flag,
                                escaped(v)));
    if (is_output(o)) {
      for (const std::string& v : values) outputs.push_back({flag, v});
      continue;
    }
    if (values.empty() && !o->get_default_str().empty()) values.push_back(o->get_default_str());
    for (const std::string& v : values) add_values(inputs, flag, v);
  }
  for (const CLI::App* sub : app->get_subcommands()) collect(sub, outputs, inputs);
}

}  // namespace

CLI::Option* mark_output(CLI::Option* option) {
  marked().insert(option);
  return option;
}

void check_command_paths(const CLI::App& root) {
  std::vector<NamedPath> outputs, inputs;
  collect(&root, outputs, inputs);
  refuse_output_over_input(outputs, inputs);
}

}  // namespace foxeval
