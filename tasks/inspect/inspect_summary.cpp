#include "tasks/inspect/inspect_summary.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace foxeval::inspect {

namespace {

// The gate's symbol in a family's description ("FoX forget gate f_t = sigmoid(...)" -> "f_t"): the
// word before the first " = "; "gate" when there is none.
std::string gate_symbol(const std::string& what) {
  const size_t eq = what.find(" = ");
  if (eq == std::string::npos) return "gate";
  const size_t start = what.rfind(' ', eq - 1);
  const std::string word = what.substr(start == std::string::npos ? 0 : start + 1, eq - (start == std::string::npos ? 0 : start + 1));
  return word.empty() || word.size() > 4 ? "gate" : word;
}

}  // namespace

void print_gates_summary(const nlohmann::json& r) {
  if (!r.contains("decay")) return;  // a shard part: the statistics come with `foxeval merge`
  const nlohmann::json& d = r.at("decay");
  if (d.at("kind") == "none") {
    std::printf("%s\n", d.at("what").get<std::string>().c_str());
    return;
  }
  std::printf("%s\n%lld documents, %lld tokens\n", d.at("what").get<std::string>().c_str(),
              static_cast<long long>(r.at("documents").get<int64_t>()), static_cast<long long>(r.at("tokens").get<int64_t>()));
  // The columns name the gate as the line above does (FoX f_t, Mamba-2 a_t, HGRN2 g).
  const std::string g = gate_symbol(d.at("what").get<std::string>());
  std::printf("%5s %4s %8s %8s %10s %10s %12s %12s\n", "layer", "head", ("mean " + g).c_str(), (g + " p50").c_str(),
              (g + ">0.99").c_str(), "mean log", "reach5 p50", "reach10 p50");
  auto reach = [](const nlohmann::json& h, const char* t) {
    const nlohmann::json& m = h.at("reach").at(t).at("median");
    return m.is_null() ? std::string("all") : std::to_string(m.get<int64_t>());
  };
  for (const nlohmann::json& l : r.at("layers"))
    for (const nlohmann::json& h : l.at("heads"))
      std::printf("%5lld %4lld %8.4f %8.4f %10.4f %10.4f %12s %12s\n", static_cast<long long>(l.at("layer").get<int64_t>()),
                  static_cast<long long>(h.at("head").get<int64_t>()), h.at("gate").at("mean").get<double>(),
                  h.at("gate").at("quantiles").at("0.5").get<double>(), h.at("gate").at("frac_above").at("0.99").get<double>(),
                  h.at("mean_log_gate").get<double>(), reach(h, "5").c_str(), reach(h, "10").c_str());
  if (r.contains("this_run"))
    std::printf("%.1f tokens/s, %.3f s/document\n", r["this_run"].at("tokens_per_s").get<double>(),
                r["this_run"].at("seconds_per_document").get<double>());
}

}  // namespace foxeval::inspect
