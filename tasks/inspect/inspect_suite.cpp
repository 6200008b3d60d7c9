// `foxeval suite`'s inspect-gates entry: the settings of `foxeval inspect gates` (flags without
// "--"). The suite's cap keeps at most cap documents of --data (--tokens cap x the row length is
// the command's way; here tokens is capped at cap x 65536, LongCrawl64's rows).
#include <algorithm>

#include "tasks/inspect/inspect_task.h"
#include "tasks/suite/suite_registry.h"

namespace foxeval {
namespace {

const suite::TaskRegistrar inspect_suite("inspect-gates", [](suite::TaskSettings& t, int64_t cap) {
  inspect::GatesSettings s;
  s.data_path = t.path("data");
  s.text_path = t.path("text");
  if (s.data_path.empty() == s.text_path.empty()) t.fail("data", "give one of data (token rows) and text (a text file)");
  s.max_tokens = t.integer("tokens", 0, 1);  // 0: the command's default
  if (cap > 0 && !s.data_path.empty())
    s.max_tokens = std::min(s.max_tokens > 0 ? s.max_tokens : inspect::kDefaultDataTokens, cap * (int64_t(1) << 16));
  s.bos_id = t.integer("bos-id", s.bos_id, 0);
  suite::PreparedTask p;
  p.run = [s](const suite::TaskContext& c) mutable {
    s.model_dir = c.model_dir, s.model = c.model, s.run = c.run, s.out_path = c.out_path;
    s.resume = c.resume, s.num_shards = c.num_shards, s.shard_index = c.shard_index, s.ranks = c.ranks;
    inspect::run_gates(s);
  };
  return p;
});

}  // namespace
}  // namespace foxeval
