// `loss`'s definition (tasks/task_def.h): what table, check, merge, identity, CI and suite know of it.
#include <algorithm>

#include "tasks/loss/loss.h"
#include "tasks/loss/loss_table.h"
#include "tasks/task_def.h"

namespace foxeval::loss {
namespace {

// Its `foxeval suite` entry: the settings of `foxeval loss` (flags without "--"). The suite's cap
// keeps the first cap windows (--tokens cap x seq-len; needs seq-len).
suite::PreparedTask read_suite_entry(suite::TaskSettings& t, int64_t cap) {
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
  return suite::prepared([s](const suite::TaskContext& c) mutable {
    c.fill(s);
    s.stop_after_windows = c.stop_after > 0 ? c.stop_after : 0;
    run_loss(s);
  });
}

}  // namespace

const TaskRegistrar registered(
    TaskDef::reduced("loss", table_kind, loss_reducer())  // exact fixed-point sums: shards and resume give one run's bits
        .with_directions({{"*loss*", Direction::Lower}, {"*perplexity*", Direction::Lower}})
        // CPU float32 kernels may round differently on another CPU's vector width.
        .with_tolerances({{"val/loss*", 1e-4, 0}, {"*perplexity*", 0, 1e-5}})
        .with_path_keys({"data_dir", "data_path"})
        .with_paper_settings("loss/loss_table.json")
        .with_baselines({{"default-loss.json",
                          "loss.json",
                          {"loss", "--model", "tests/fixtures/official/fox_pro", "--data", "data/default/tokens.npy",
                           "--bos-id", "0", "--out", "{out}/loss.json"}}})
        .with_suite_entry(read_suite_entry));

}  // namespace foxeval::loss
