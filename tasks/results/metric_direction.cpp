#include "tasks/results/metric_direction.h"

#include "tasks/task_def.h"

namespace foxeval {

Direction metric_direction(const std::string& metric, const std::string& task) {
  std::string m = metric;
  // per_item/METRIC/values goes the way of METRIC.
  const std::string prefix = "per_item/", suffix = "/values";
  if (m.rfind(prefix, 0) == 0 && m.size() > prefix.size() + suffix.size() &&
      m.compare(m.size() - suffix.size(), suffix.size(), suffix) == 0)
    m = m.substr(prefix.size(), m.size() - prefix.size() - suffix.size());
  else if (m.rfind(prefix, 0) == 0)
    return Direction::None;  // ids, weights, n, aggregation
  // Standard errors are foxeval's own bookkeeping, whatever the task: no direction.
  if (glob_match("*stderr*", m)) return Direction::None;
  return task_metric_direction(task, m);
}

Direction metric_direction(const std::string& metric) { return metric_direction(metric, ""); }

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
