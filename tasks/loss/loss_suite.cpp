// `foxeval suite`'s loss entry: the settings of `foxeval loss` (flags without "--"). The suite's
// cap keeps the first cap windows (--tokens cap x seq-len; needs seq-len).
#include <algorithm>

#include "tasks/loss/loss.h"
#include "tasks/suite/suite_registry.h"

namespace foxeval {
namespace {

const suite::TaskRegistrar loss_suite("loss", [](suite::TaskSettings& t, int64_t cap) {
  LossSettings s;
  s.data_path = t.path("data");
  s.text_source = t.has("text") && t.text("text", "").rfind("hf:", 0) == 0 ? t.text("text", "") : t.path("text");
  if (s.data_path.empty() == s.text_source.empty()) t.fail("data", "give one of data (token rows) and text (documents)");
  s.text_field = t.text("text-field", "");
  s.text_split = t.text("text-split", "");
  s.pack = t.flag("pack", false);
  s.separator_id = t.integer("separator-id", s.separator_id, 0);
  s.seq_len = t.integer("seq-len", 0, 1, int64_t(1) << 20);
  s.max_tokens = t.integer("tokens", s.max_tokens, 1);
  s.bos_id = t.integer("bos-id", s.bos_id, 0);
  s.batch_size = t.integer("batch-size", s.batch_size, 1, 1 << 20);
  if (cap > 0) {
    if (s.seq_len == 0) t.fail("seq-len", "the suite's cap counts windows: give seq-len");
    s.max_tokens = std::min(s.max_tokens, cap * s.seq_len);
  }
  suite::PreparedTask p;
  p.run = [s](const suite::TaskContext& c) mutable {
    s.model_dir = c.model_dir, s.model = c.model, s.run = c.run, s.out_path = c.out_path;
    s.resume = c.resume, s.num_shards = c.num_shards, s.shard_index = c.shard_index, s.ranks = c.ranks;
    s.stop_after_windows = c.stop_after > 0 ? c.stop_after : 0;
    run_loss(s);
  };
  return p;
});

}  // namespace
}  // namespace foxeval
