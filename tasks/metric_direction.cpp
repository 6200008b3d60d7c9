#include "tasks/metric_direction.h"

#include <utility>
#include <vector>

namespace foxeval {
namespace {

// First match wins. The sources: lm-eval 0.4.4's higher_is_better of each metric (acc, acc_norm
// up; perplexity, word/byte perplexity, bits_per_byte down), the paper's tables (loss down,
// LongBench scores up), the NIAH 1-10 score and recall (up).
const std::vector<std::pair<const char*, Direction>>& rules() {
  static const std::vector<std::pair<const char*, Direction>> r = {
      {"*stderr*", Direction::None},
      {"*perplexity*", Direction::Lower},
      {"*bits_per_byte*", Direction::Lower},
      {"*loss*", Direction::Lower},
      {"*acc,*", Direction::Higher},
      {"*acc_norm,*", Direction::Higher},
      {"*/acc", Direction::Higher},
      {"*/acc_norm", Direction::Higher},
      {"scores/*", Direction::Higher},              // LongBench (and LongBench-E's buckets), RULER's tasks
      {"ruler/*", Direction::Higher},               // RULER: the group's mean per length
      {"categories/*", Direction::Higher},          // RULER's categories per length
      {"mean", Direction::Higher},                  // NIAH: the grid mean, per length and per depth
      {"judge/mean", Direction::Higher},
      {"mean_by_*/mean", Direction::Higher},
      {"judge/mean_by_*/mean", Direction::Higher},
      {"cells/*/score", Direction::Higher},
      {"cells/*/judge_score", Direction::Higher},
      {"cells/*/answer_recall", Direction::Higher},
  };
  return r;
}

}  // namespace

Direction metric_direction(const std::string& metric) {
  std::string m = metric;
  // per_item/METRIC/values goes the way of METRIC.
  const std::string prefix = "per_item/", suffix = "/values";
  if (m.rfind(prefix, 0) == 0 && m.size() > prefix.size() + suffix.size() &&
      m.compare(m.size() - suffix.size(), suffix.size(), suffix) == 0)
    m = m.substr(prefix.size(), m.size() - prefix.size() - suffix.size());
  else if (m.rfind(prefix, 0) == 0)
    return Direction::None;  // ids, weights, n, aggregation
  for (const auto& [pattern, d] : rules())
    if (glob_match(pattern, m)) return d;
  return Direction::None;
}

const char* direction_name(Direction d) {
  return d == Direction::Higher ? "higher" : d == Direction::Lower ? "lower" : "none";
}

bool glob_match(const std::string& pattern, const std::string& s) {
  size_t p = 0, i = 0, star = std::string::npos, mark = 0;
  while (i < s.size()) {
    if (p < pattern.size() && pattern[p] != '*' && pattern[p] == s[i]) {
      ++p, ++i;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = i;
    } else if (star != std::string::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace foxeval
