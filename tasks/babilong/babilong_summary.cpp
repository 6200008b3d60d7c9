#include "tasks/babilong/babilong_summary.h"

#include <fmt/format.h>

#include <cstdio>
#include <string>

namespace foxeval::babilong {

void print_babilong_summary(const nlohmann::json& r) {
  std::printf("task");
  for (const auto& l : r.at("lengths")) std::printf("\t%s", l.get<std::string>().c_str());
  std::printf("\n");
  for (const auto& t : r.at("tasks")) {
    std::printf("%s", t.get<std::string>().c_str());
    for (const auto& l : r.at("lengths")) {
      const nlohmann::json& row = r.at("acc").at(t.get<std::string>());
      if (row.contains(l.get<std::string>())) std::printf("\t%.1f", 100 * row.at(l.get<std::string>()).get<double>());
      else std::printf("\t-");
    }
    std::printf("\n");
  }
  std::printf("mean");
  for (const auto& l : r.at("lengths")) std::printf("\t%.1f", 100 * r.at("mean_by_length").at(l.get<std::string>()).get<double>());
  std::printf("\n");
}

}  // namespace foxeval::babilong
