#include "tasks/longbench/longbench_run.h"

#include <ATen/Context.h>
#include <c10/core/Device.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/run/generation_progress.h"
#include "tasks/longbench/longbench_official.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tasks/run/task_runner_settings.h"

namespace fs = std::filesystem;

namespace foxeval::longbench {
namespace {

int64_t generation_length(const RunSettings& s, const TaskConfig& config, const std::string& task) {
  const int64_t n = config.maxlen.at(task);
  return s.max_new_tokens > 0 ? std::min(n, s.max_new_tokens) : n;
}

// Everything that changes a prediction. A journal or part made with other values is refused.
nlohmann::json identity(const RunSettings& s, const PromptSet& set, const LoadedModel& model, const Gpt2Tokenizer& tok) {
  nlohmann::json maxlen = nlohmann::json::object(), templates = nlohmann::json::object();
  for (const std::string& t : set.tasks) {
    maxlen[t] = generation_length(s, set.config, t);
    templates[t] = set.config.prompt.at(t);
  }
  nlohmann::json id = {{"tokenizer", digest_paths({tok.vocab_path()})},  // what it is, not where: a moved checkout still resumes
          {"data", digest_sources(set.data_sources)},  // a data.zip member and its unzipped file: one digest
          {"tasks", set.tasks},
          {"e", s.prompts.e},
          {"limit", s.prompts.limit},
          {"max_length", s.prompts.max_length},
          {"max_new_tokens", s.max_new_tokens},
          {"maxlen", maxlen},
          {"prompt_templates", templates},
          {"dtype", s.run.dtype},
          {"device_type", c10::Device(s.run.device).is_cuda() ? "cuda" : "cpu"}};
  id.update(model_identity(model));  // model, type, size, numerics options
  return id;
}

}  // namespace

nlohmann::json run_longbench(const RunSettings& s) {
  // Data and prompts first: a bad record fails before the model is loaded.
  const ModelFiles files = task_model_files(s.model, s.model_dir);
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
  const PromptSet set = build_prompt_set(s.prompts, tok);
  const std::shared_ptr<const LoadedModel> loaded = task_model(s.model, files, s.run);
  CausalLM* model = loaded->get();

  std::vector<WorkItem> items;
  items.reserve(set.prompts.size());
  for (const Prompt& p : set.prompts)
    items.push_back({fmt::format("{}/{}", p.task, p.record.index),
                     static_cast<double>(p.ids.size() + static_cast<size_t>(generation_length(s, set.config, p.task)))});

  const RunnerSettings rs = task_runner_settings(s, (fs::path(s.out_dir) / "run.json").string(), model);
  RecordRunner runner(rs, "longbench", identity(s, set, *loaded, tok), items);

  // Records are handed out in batches (Runner::claim_batch: longest first; in a distributed run
  // from the shared counter in the store, so no GPU idles while another works through the long
  // prompts) and each batch goes to the scheduler (models/requests.h), which runs it by capacity
  // bucket through its decoding slots. A batch is 4 x --batch-size records: consecutive records of
  // the longest-first order fall in one or two buckets, so a bucket has a few records per slot and
  // its slots stay busy (continuous batching) until its last rows drain; a larger batch would only
  // lengthen the tail, when one rank still works through its last batch while the others have
  // nothing left (the last batches hold the cheapest records). A record's answer depends on its
  // prompt and its bucket's slot count, not on its batch, order or rank (models/generation/requests_generate.cpp).
  // EOS ends a prediction, as HF generate's eos_token_id; the EOS is not part of it.
  const size_t per_batch = 4 * static_cast<size_t>(std::max<int64_t>(1, s.generation.max_batch));
  if (s.stop_after == 0) runner.interrupt();
  int64_t finished = 0;
  bool generated = false;
  GenerateStats stats;  // summed over the batches
  int64_t open_prompt_tokens = 0, open_new_tokens = 0;
  for (size_t i : runner.todo()) {
    open_prompt_tokens += static_cast<int64_t>(set.prompts[i].ids.size());
    open_new_tokens += generation_length(s, set.config, set.prompts[i].task);
  }
  GenerationMeter meter("longbench", "records", static_cast<int64_t>(runner.todo().size()), open_prompt_tokens,
                        open_new_tokens, !c10::Device(s.run.device).is_cuda(), "--max-new-tokens, --limit or --tasks",
                        runner.rank());
  GenerateUntilOptions generation = s.generation;
  for (;;) {
    if (runner.should_stop()) runner.interrupt();
    const std::vector<size_t> batch = runner.claim_batch(per_batch);
    if (batch.empty()) break;
    std::vector<GenerationRequest> requests;
    requests.reserve(batch.size());
    for (size_t i : batch)
      requests.push_back({set.prompts[i].ids, generation_length(s, set.config, set.prompts[i].task), {tok.eos_id()}});
    generated = true;
    // A signal is honoured within a decode run, not only when a request finishes (one may take
    // minutes): what is journaled is kept, the requests in flight are redone on --resume.
    generation.on_progress = [&runner, progress = meter.next_call()](const GenerationProgress& p) {
      progress(p);
      if (runner.should_stop()) runner.interrupt();
    };
    const GenerateStats st = generate_until(*model, requests, generation, [&](size_t k, const GenerationAnswer& answer) {
      meter.request_done(static_cast<int64_t>(answer.ids.size()) + (answer.reason == StopReason::eos ? 1 : 0),
                         requests[k].max_new_tokens);
      const Prompt& p = set.prompts[batch[k]];
      const nlohmann::json& r = p.record.data;
      nlohmann::json record = {{"task", p.task},
                               {"index", p.record.index},
                               {"pred", tok.decode(answer.ids, /*json_unescape=*/true, /*skip_special=*/true)},
                               {"answers", r.at("answers")},
                               {"all_classes", r.at("all_classes")},
                               {"length", r.at("length")},
                               {"prompt_tokens", p.ids.size()},
                               {"new_tokens", answer.ids.size()}};
      runner.finish(items[batch[k]].id, std::move(record), static_cast<double>(p.ids.size() + answer.ids.size()));
      ++finished;
      if (runner.should_stop() || (s.stop_after >= 0 && finished >= s.stop_after)) runner.interrupt();
    });
    stats.prefill_seconds += st.prefill_seconds;
    stats.decode_seconds += st.decode_seconds;
    stats.decode_steps += st.decode_steps;
    stats.prompt_tokens += st.prompt_tokens;
  }
  if (generated)
    std::fprintf(stderr, "[longbench] prefill %.1f s, decode %.1f s (%lld steps), %lld prompt tokens\n", stats.prefill_seconds,
                 stats.decode_seconds, static_cast<long long>(stats.decode_steps), static_cast<long long>(stats.prompt_tokens));

  nlohmann::json result = runner.complete(build_result);
  // The official files once, by the process that wrote the result (rank 0 of a distributed run:
  // the other ranks share its out_dir and would race on the same files).
  if (s.num_shards == 1 && runner.writes_result()) write_official_files(result, s.out_dir);
  return result;
}

}  // namespace foxeval::longbench
