#include "tasks/ruler/ruler_results.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tasks/results/item_stats.h"
#include "tasks/ruler/ruler_metrics.h"

namespace foxeval::ruler {

double score_doc(const std::string& task, const std::string& prediction, const std::vector<std::string>& outputs,
                 const nlohmann::json& scoring) {
  const nlohmann::json& part = scoring.at("part_tasks");
  const bool is_part = std::find(part.begin(), part.end(), task) != part.end();
  return is_part ? string_match_part(prediction, outputs) : string_match_all(prediction, outputs);
}

nlohmann::json aggregate_scores(const std::vector<ScoredDoc>& docs, const nlohmann::json& scoring) {
  std::map<std::string, std::map<int64_t, std::vector<const ScoredDoc*>>> per_task;
  std::vector<std::string> task_order;
  std::set<int64_t> lengths;
  for (const ScoredDoc& d : docs) {
    if (!per_task.count(d.task)) task_order.push_back(d.task);
    per_task[d.task][d.max_length].push_back(&d);
    lengths.insert(d.max_length);
  }
  auto values = [](const std::vector<const ScoredDoc*>& v) {
    std::vector<double> out;
    for (const ScoredDoc* d : v) out.push_back(d->score);
    return out;
  };
  nlohmann::ordered_json scores = nlohmann::ordered_json::object(), n = nlohmann::ordered_json::object(),
                         ruler = nlohmann::ordered_json::object(), categories = nlohmann::ordered_json::object();
  nlohmann::json per_item = nlohmann::json::object();
  for (const std::string& t : task_order)
    for (const auto& [L, v] : per_task[t]) {
      const std::string l = std::to_string(L);
      scores[t][l] = aggregate_metrics(values(v));
      n[t][l] = v.size();
      ItemScores items;
      for (const ScoredDoc* d : v) items.ids.push_back(t + "/" + l + "/" + std::to_string(d->doc_id));
      items.values = values(v);
      per_item["scores/" + t + "/" + l] = per_item_entry(items);
    }
  // The group's score at a length: the unweighted mean over the tasks that have docs there.
  auto mean_over = [&](const std::vector<std::string>& tasks, int64_t L) -> std::optional<double> {
    std::vector<double> v;
    for (const std::string& t : tasks)
      if (per_task.count(t) && per_task[t].count(L)) v.push_back(aggregate_metrics(values(per_task[t][L])));
    if (v.empty()) return std::nullopt;
    return aggregate_metrics(v);
  };
  for (int64_t L : lengths) {
    const std::string l = std::to_string(L);
    ruler[l] = *mean_over(task_order, L);
    for (const auto& [cat, tasks] : scoring.at("categories").items())
      if (auto m = mean_over(tasks.get<std::vector<std::string>>(), L)) categories[l][cat] = *m;
    std::set<size_t> sizes;
    ItemScores all;
    for (const std::string& t : task_order)
      if (per_task[t].count(L)) {
        sizes.insert(per_task[t][L].size());
        for (const ScoredDoc* d : per_task[t][L]) {
          all.ids.push_back(t + "/" + l + "/" + std::to_string(d->doc_id));
          all.values.push_back(d->score);
        }
      }
    if (sizes.size() == 1) per_item["ruler/" + l] = per_item_entry(all);
  }
  std::vector<int64_t> length_list(lengths.begin(), lengths.end());
  return {{"tasks", task_order},
          {"lengths", length_list},
          {"scores", nlohmann::json::parse(scores.dump())},
          {"n", nlohmann::json::parse(n.dump())},
          {"ruler", nlohmann::json::parse(ruler.dump())},
          {"categories", nlohmann::json::parse(categories.dump())},
          {"per_item", per_item}};
}

}  // namespace foxeval::ruler
