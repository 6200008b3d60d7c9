#include "tasks/lm_eval/lm_eval_summary.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace foxeval::lm_eval {

void print_lm_eval_summary(const nlohmann::json& result) {
  if (!result.contains("results")) return;  // a shard part: `foxeval merge` makes the result
  std::printf("task\tmetric,filter\tvalue\tstderr\n");  // lm-eval's own table names its columns too
  for (auto& [task, r] : result["results"].items())
    for (auto& [key, v] : r.items()) {
      if (key == "alias" || key.find("_stderr,") != std::string::npos) continue;
      const std::string se_key = key.substr(0, key.find(',')) + "_stderr" + key.substr(key.find(','));
      const nlohmann::json& se = r.value(se_key, nlohmann::json("N/A"));
      std::printf("%s\t%s\t%.6f\t%s\n", task.c_str(), key.c_str(), v.get<double>(),
                  se.is_number() ? fmt::format("{:.6f}", se.get<double>()).c_str() : "N/A");
    }
}

}  // namespace foxeval::lm_eval
