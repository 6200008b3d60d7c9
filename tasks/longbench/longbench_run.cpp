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
#include "tasks/longbench/longbench_official.h"
#include "tasks/run/generation_loop.h"
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

  GenerationLoop loop("longbench", s.generation, s.stop_after, s.run.device);
  loop.unit = "records";
  loop.shorten = "--max-new-tokens, --limit or --tasks";
  // header.generation among the run statistics: what the loop generated.
  const RunnerSettings rs = with_generation_stats(
      task_runner_settings(s, (fs::path(s.out_dir) / "run.json").string(), model), loop);
  RecordRunner runner(rs, "longbench", identity(s, set, *loaded, tok), items);

  // Batches of 4 x --batch-size records to the one generation engine (tasks/run/generation_loop.h).
  // EOS ends a prediction, as HF generate's eos_token_id; the EOS is not part of it.
  run_generation_loop(
      runner, *model, loop,
      [&](size_t i) {
        return OpenTokens{static_cast<int64_t>(set.prompts[i].ids.size()), generation_length(s, set.config, set.prompts[i].task)};
      },
      [&](size_t i) {
        return GenerationRequest{set.prompts[i].ids, generation_length(s, set.config, set.prompts[i].task), {tok.eos_id()}};
      },
      [&](size_t i, const GenerationRequest&, const GenerationAnswer& answer) {
        const Prompt& p = set.prompts[i];
        const nlohmann::json& r = p.record.data;
        return nlohmann::json{{"task", p.task},
                              {"index", p.record.index},
                              {"pred", tok.decode(answer.ids, /*json_unescape=*/true, /*skip_special=*/true)},
                              {"answers", r.at("answers")},
                              {"all_classes", r.at("all_classes")},
                              {"length", r.at("length")},
                              {"prompt_tokens", p.ids.size()},
                              {"new_tokens", answer.ids.size()}};
      });
  const GenerateStats& stats = loop.totals.stats;
  if (stats.prompt_tokens > 0)  // this process generated (a claimed batch prefills its prompts)
    std::fprintf(stderr, "[longbench] prefill %.1f s, decode %.1f s (%lld steps), %lld prompt tokens\n", stats.prefill_seconds,
                 stats.decode_seconds, static_cast<long long>(stats.decode_steps), static_cast<long long>(stats.prompt_tokens));

  nlohmann::json result = runner.complete(build_result);
  // The official files once, by the process that wrote the result (rank 0 of a distributed run:
  // the other ranks share its out_dir and would race on the same files).
  if (s.num_shards == 1 && runner.writes_result()) write_official_files(result, s.out_dir);
  return result;
}

}  // namespace foxeval::longbench
