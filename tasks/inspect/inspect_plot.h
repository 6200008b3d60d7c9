// Figures of `foxeval inspect` as self-contained SVG (no plotting library):
//   attention_svg: one head's decay matrix and attention matrix side by side (query rows, key
//     columns, log colour scale, empty above the diagonal), as the FoX paper's figures;
//   gates_heatmap_svg: heads x layers, the colour the median decay reach (log scale), from an
//     `inspect gates` result.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "tasks/inspect/inspect_task.h"

namespace foxeval::inspect {

// Values below 10^log10_min take the darkest colour.
std::string attention_svg(const AttentionMaps& m, const std::string& title, double log10_min = -6.0);

// sort: "head" (heads in index order, the same in every layer) or "reach" (each layer's heads by
// median reach, longest at the top; a cell then names its head). tolerance: 5 or 10.
std::string gates_heatmap_svg(const nlohmann::json& result, double tolerance, const std::string& sort,
                              const std::string& title);

// Reads an `inspect gates` result (errors name the file), draws, writes `out` atomically.
void plot_gates_file(const std::string& file, const std::string& out, double tolerance, const std::string& sort,
                     const std::string& title);

}  // namespace foxeval::inspect
