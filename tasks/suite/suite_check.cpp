#include "tasks/suite/suite_check.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"

namespace fs = std::filesystem;

namespace foxeval::suite {
namespace {

std::vector<std::string> suite_results(const std::string& dir) {
  const fs::path p = fs::path(dir) / "suite.json";
  if (!fs::is_regular_file(p)) throw Error(fmt::format("{}: no suite.json (not a `foxeval suite run` folder)", dir));
  const nlohmann::json s = read_json(p.string());
  if (!s.is_object() || s.value("kind", "") != "foxeval-suite" || !s.contains("tasks") || !s["tasks"].is_array())
    throw Error(fmt::format("{}: not a suite.json (kind foxeval-suite with tasks)", p.string()));
  std::vector<std::string> out;
  for (const auto& t : s["tasks"]) {
    if (!t.is_object() || !t.contains("result") || !t["result"].is_string())
      throw Error(fmt::format("{}: a task without its result path", p.string()));
    const std::string r = t["result"].get<std::string>();
    if (fs::path(r).is_absolute() || r.find("..") != std::string::npos)
      throw Error(fmt::format("{}: result path '{}' leaves the folder", p.string(), r));
    out.push_back(r);
  }
  return out;
}

}  // namespace

std::vector<FileCheck> check_suite(const std::string& out_dir, const std::string& baseline_dir, const CheckOptions& options) {
  const std::vector<std::string> base = suite_results(baseline_dir), now = suite_results(out_dir);
  std::vector<FileCheck> checks;
  for (const std::string& r : base) {
    FileCheck c{r, "", {}};
    const fs::path result = fs::path(out_dir) / r;
    if (!fs::is_regular_file(result))
      c.problem = "missing in " + out_dir;
    else
      c.report = check_against_baseline(result.string(), (fs::path(baseline_dir) / r).string(), options);
    checks.push_back(std::move(c));
  }
  const std::set<std::string> in_base(base.begin(), base.end());
  for (const std::string& r : now)
    if (!in_base.count(r)) checks.push_back({r, "not in the baseline " + baseline_dir, {}});
  return checks;
}

}  // namespace foxeval::suite
