// `foxeval babilong run`'s summary on stdout: accuracy x 100 per task (rows) and length (columns),
// and the mean per length.
#pragma once
#include <nlohmann/json.hpp>

namespace foxeval::babilong {

void print_babilong_summary(const nlohmann::json& r);

}  // namespace foxeval::babilong
