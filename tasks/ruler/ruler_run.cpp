#include "tasks/ruler/ruler_run.h"

#include <c10/core/Device.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "data/python/unicode.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "tasks/run/generation_loop.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tasks/run/task_runner_settings.h"
#include "tasks/ruler/ruler_results.h"

namespace foxeval::ruler {
namespace {

// The first or last code point of UTF-8 text (text is valid UTF-8: the generators made it).
char32_t first_code_point(const std::string& s) { return utf8_to_u32(s.substr(0, std::min<size_t>(4, s.size())), "gen_prefix").front(); }
char32_t last_code_point(const std::string& s) {
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;  // back to the lead byte
  return utf8_to_u32(s.substr(i), "input").front();
}

// One doc to run: where it is in the samples, its lm-eval doc_id.
struct Job {
  size_t doc;
  int64_t doc_id;
};

nlohmann::json identity(const RunSettings& s, const std::vector<std::pair<std::string, RulerDoc>>& docs,
                        const std::vector<std::string>& tasks, const std::vector<int64_t>& lengths, const LoadedModel& model,
                        const Gpt2Tokenizer& tok) {
  // The docs themselves stand for the data they were made from (essays, word lists, Punkt, seeds).
  Sha256 h;
  for (const auto& [task, d] : docs) {
    nlohmann::json doc = {{"task", task}, {"index", d.index}, {"input", d.input}, {"outputs", d.outputs},
                          {"max_length", d.max_length}, {"gen_prefix", d.gen_prefix}};
    h.update(doc.dump() + "\n");
  }
  nlohmann::json id = {{"tokenizer", digest_paths({tok.vocab_path()})},
                       {"definitions", digest_paths({ruler_tasks_path()})},
                       {"samples", "sha256:" + h.hex()},
                       {"tasks", tasks},
                       {"lengths", lengths},
                       {"limit", s.limit},
                       {"max_length", s.max_length},
                       {"max_gen_toks", s.max_gen_toks},
                       {"dtype", s.run.dtype},
                       {"device_type", c10::Device(s.run.device).is_cuda() ? "cuda" : "cpu"}};
  id.update(model_identity(model));
  return id;
}

}  // namespace

TaskGeneration task_generation(const nlohmann::json& ruler_tasks, const std::string& task) {
  const nlohmann::json& g = ruler_tasks.at("generation");
  nlohmann::json merged = g.at("default");
  if (g.at("tasks").contains(task)) merged.update(g.at("tasks").at(task));
  return {merged.at("max_gen_toks").get<int64_t>(), merged.at("target_delimiter").get<std::string>()};
}

std::string lm_eval_prompt(const std::string& input, const std::string& gen_prefix, const std::string& target_delimiter) {
  if (gen_prefix.empty()) return input;  // no assistant turn, no delimiter
  // api/utils.py requires_delimiter(q, gen_prefix): q non-empty, no whitespace at the join.
  const bool delimit = !input.empty() && !py_isspace(last_code_point(input)) && !py_isspace(first_code_point(gen_prefix));
  return input + (delimit ? target_delimiter : "") + gen_prefix;
}

nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  const nlohmann::json defs = read_json(ruler_tasks_path());
  std::vector<ScoredDoc> scored;
  for (const nlohmann::json& r : records)
    scored.push_back({r.at("task").get<std::string>(), r.at("max_length").get<int64_t>(), r.at("doc_id").get<int64_t>(),
                      r.at("score").get<double>()});
  // Records come in item order: task by task in the order run, each task's docs in doc_id order.
  nlohmann::json result = {{"kind", "foxeval-ruler"}, {"identity", identity}, {"docs", records.size()}};
  result.update(aggregate_scores(scored, defs.at("scoring")));
  result["samples"] = records;
  return result;
}

nlohmann::json run_ruler(const RunSettings& s) {
  if (s.limit < 0) throw Error(fmt::format("--limit {}: must be >= 1", s.limit));
  const nlohmann::json defs = read_json(ruler_tasks_path());
  // The docs first (the data are read and checked before the model is loaded), with the model's
  // tokenizer (the model resolved once, here).
  const ModelFiles files = task_model_files(s.model, s.samples.model_dir);
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
  const std::vector<std::pair<std::string, RulerDoc>> docs = generate_samples(s.samples, tok);
  std::vector<std::string> tasks;
  for (const auto& [task, d] : docs)
    if (std::find(tasks.begin(), tasks.end(), task) == tasks.end()) tasks.push_back(task);
  const std::vector<int64_t> lengths = s.samples.lengths.empty() ? std::vector<int64_t>{4096} : s.samples.lengths;
  std::map<std::string, TaskGeneration> gen;
  for (const std::string& t : tasks) {
    gen[t] = task_generation(defs, t);
    if (s.max_gen_toks > 0) gen[t].max_gen_toks = s.max_gen_toks;
    if (s.max_length != 0 && s.max_length <= gen[t].max_gen_toks)
      throw Error(fmt::format("--max-length {}: must be more than {}'s max_gen_toks ({})", s.max_length, t, gen[t].max_gen_toks));
  }

  // Items in the docs' order (task by task, lengths in the order given), --limit per task and length.
  std::vector<Job> jobs;
  std::vector<WorkItem> items;
  std::map<std::string, int64_t> next_doc_id;
  std::map<std::pair<std::string, int64_t>, int64_t> taken;
  for (size_t i = 0; i < docs.size(); ++i) {
    const auto& [task, d] = docs[i];
    const int64_t doc_id = next_doc_id[task]++;  // lm-eval's doc_id: lengths concatenated
    if (s.limit > 0 && taken[{task, d.max_length}]++ >= s.limit) continue;
    jobs.push_back({i, doc_id});
    // The cost before tokenizing (prompts are tokenized when claimed): the length the doc was sized to.
    items.push_back({fmt::format("{}/{}/{}", task, d.max_length, doc_id), static_cast<double>(d.max_length + gen[task].max_gen_toks)});
  }
  std::fprintf(stderr, "[ruler] %zu docs: %zu tasks x %zu lengths\n", jobs.size(), tasks.size(), lengths.size());

  const std::shared_ptr<const LoadedModel> loaded = task_model(s.model, files, s.run);
  CausalLM* model = loaded->get();
  GenerationLoop loop("ruler", s.generation, s.stop_after, s.run.device);
  loop.unit = "docs";
  loop.shorten = "--limit, --lengths or --tasks";
  // header.generation among the run statistics: what the loop generated.
  const RunnerSettings rs = with_generation_stats(
      task_runner_settings(s, s.out_path, model), loop);
  RecordRunner runner(rs, "ruler", identity(s, docs, tasks, lengths, *loaded, tok), items);
  std::vector<char> truncated(jobs.size(), 0);  // set as each prompt is built (when its item is claimed)
  run_generation_loop(
      runner, *model, loop,
      [&](size_t k) {  // the length the doc was sized to: prompts are tokenized when claimed
        const auto& [task, d] = docs[jobs[k].doc];
        return OpenTokens{d.max_length, gen[task].max_gen_toks};
      },
      [&](size_t k) {
        const auto& [task, d] = docs[jobs[k].doc];
        std::vector<int64_t> ids = tok.encode(lm_eval_prompt(d.input, d.gen_prefix, gen[task].target_delimiter));
        const int64_t max_new = gen[task].max_gen_toks;
        truncated[k] = hflm_left_truncate(ids, s.max_length, max_new);
        return GenerationRequest{std::move(ids), max_new, {tok.eos_id()}};
      },
      [&](size_t k, const GenerationRequest& request, const GenerationAnswer& answer) {
        const Job& job = jobs[k];
        const auto& [task, d] = docs[job.doc];
        const std::string pred = tok.decode(answer.ids, /*json_unescape=*/true, /*skip_special=*/true);
        return nlohmann::json{{"task", task},
                              {"max_length", d.max_length},
                              {"doc_id", job.doc_id},
                              {"index", d.index},
                              {"outputs", d.outputs},
                              {"prediction", pred},
                              {"score", score_doc(task, pred, d.outputs, defs.at("scoring"))},
                              {"prompt_tokens", request.prompt.size()},
                              {"new_tokens", answer.ids.size()},
                              {"truncated", truncated[k] != 0}};
      });
  return runner.complete(build_result);
}

}  // namespace foxeval::ruler
