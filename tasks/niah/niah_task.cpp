#include "tasks/niah/niah_task.h"

#include <ATen/Device.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <re2/re2.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "data/model_files.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/niah/niah_score.h"
#include "tasks/run/generation_loop.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tasks/run/task_runner_settings.h"

namespace fs = std::filesystem;

namespace foxeval::niah {
namespace {

std::string item_id(int64_t length, int64_t depth) { return fmt::format("len_{}_depth_{}", length, depth); }

struct Cell {
  int64_t length, depth;
};

// A folder to write into, made when missing; a refusal names the flag (`--out afile/x` included).
void make_folder(const std::string& dir, const char* flag) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw Error(fmt::format("{} {}: cannot make this folder ({})", flag, dir,
                            ec ? ec.message() : std::string("something else is in the way")));
}

std::vector<Cell> grid_cells(const Mode& m) {
  std::vector<Cell> cells;
  for (int64_t L : m.lengths)
    for (int64_t D : m.depths) cells.push_back({L, D});
  return cells;
}

}  // namespace

ResolvedSpec resolve_spec(const NiahSpec& spec) {
  ResolvedSpec r{load_mode(spec.mode), load_prompt_definition()};
  if (!spec.needle.empty()) {
    // The offline scorer looks for the answer in the prediction: a new needle needs its answer.
    if (spec.answer.empty()) throw Error("--needle: give --answer too (the words of the needle the scorer looks for)");
    r.mode.needle = spec.needle;
    r.mode.judge_reference = spec.needle;
  }
  if (!spec.answer.empty()) r.mode.answer = spec.answer;
  if (!spec.question.empty()) {
    r.mode.retrieval_question = spec.question;
    r.mode.judge_question = spec.question;
  }
  if (!spec.lengths.empty()) r.mode.lengths = spec.lengths;
  if (!spec.depths.empty()) r.mode.depths = spec.depths;
  validate_grid(r.mode.lengths, r.mode.depths, r.def.buffer);
  if (answer_key_words(r.mode.answer).empty()) throw Error(fmt::format("--answer '{}': no word to look for", r.mode.answer));
  return r;
}


int64_t write_prompt_files(const NiahSpec& spec, const std::string& haystack_dir, const std::string& out_dir) {
  const ResolvedSpec r = resolve_spec(spec);
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load("");
  PromptBuilder builder(tok, haystack_dir, r.mode.lengths, r.mode.needle, r.mode.retrieval_question, r.def);
  // Built in memory first: a bad haystack leaves no partial folder behind.
  std::vector<std::pair<std::string, std::string>> files;
  for (const Cell& c : grid_cells(r.mode))
    files.emplace_back(cell_stem(r.def.file_prefix, c.length, c.depth) + "_prompts.json",
                       prompt_file_text(builder.escaped_user_message(c.length, c.depth)));
  make_folder(out_dir, "--out");
  for (const auto& [name, text] : files) write_text_atomic((fs::path(out_dir) / name).string(), text);
  return static_cast<int64_t>(files.size());
}

nlohmann::json run_sweep(const RunSettings& s) {
  const ResolvedSpec r = resolve_spec(s.spec);
  if (s.max_new_tokens < 1) throw Error(fmt::format("--max-new-tokens {} must be >= 1", s.max_new_tokens));
  const std::vector<std::string> hay = haystack_files(s.haystack_dir);  // checked before the model loads
  const ModelFiles files = task_model_files(s.model, s.model_dir);
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
  PromptBuilder builder(tok, s.haystack_dir, r.mode.lengths, r.mode.needle, r.mode.retrieval_question, r.def);
  const std::vector<Cell> cells = grid_cells(r.mode);
  std::vector<std::vector<int64_t>> prompts;
  std::vector<WorkItem> items;
  for (const Cell& c : cells) {
    prompts.push_back(builder.prompt_ids(c.length, c.depth));
    items.push_back({item_id(c.length, c.depth), static_cast<double>(prompts.back().size() + s.max_new_tokens)});
  }
  const std::shared_ptr<const LoadedModel> loaded = task_model(s.model, files, s.run);
  CausalLM* model = loaded->get();
  const ModelInfo& info = model->info();
  nlohmann::json identity = {
      {"mode", r.mode.name},
      {"needle", r.mode.needle},
      {"retrieval_question", r.mode.retrieval_question},
      {"answer", r.mode.answer},
      {"haystack_digest", digest_paths(hay)},
      {"lengths", r.mode.lengths},
      {"depths", r.mode.depths},
      {"max_new_tokens", s.max_new_tokens},
      {"dtype", s.run.dtype},
      {"device_type", at::Device(s.run.device).is_cuda() ? "cuda" : "cpu"}};
  identity.update(model_identity(*loaded));  // model, type, size, numerics options

  GenerationLoop loop("niah", s.generation, s.stop_after, s.run.device);
  loop.unit = "cells";
  loop.shorten = "--max-new-tokens, --lengths or --depths";
  loop.per_batch = std::max<size_t>(1, r.mode.depths.size());
  // header.generation among the run statistics: what the loop generated.
  const RunnerSettings rs = with_generation_stats(
      task_runner_settings(s, s.out_path, model), loop);
  RecordRunner runner(rs, "niah", identity, items);
  if (!s.pred_dir.empty()) make_folder(s.pred_dir, "--pred-dir");

  // Work is handed out a length at a time (tasks/run/generation_loop.h: longest first, so no GPU
  // idles while another works through the 32k cells); the cells of a length go to the scheduler
  // together. Each finished cell is journaled as it finishes, so a stop request loses nothing.
  // Cells finished before this run (journals read at the start: in a distributed run every rank's),
  // so the result counts the cells this run did on every rank.
  const int64_t done_before = std::count_if(items.begin(), items.end(), [&](const WorkItem& it) { return runner.done(it.id); });
  run_generation_loop(
      runner, *model, loop, [&](size_t i) { return OpenTokens{static_cast<int64_t>(prompts[i].size()), s.max_new_tokens}; },
      [&](size_t i) { return GenerationRequest{prompts[i], s.max_new_tokens, {tok.eos_id()}}; },
      [&](size_t i, const GenerationRequest&, const GenerationAnswer& a) {
        const Cell& c = cells[i];
        const std::string prediction = python_strip(tok.decode(a.ids, true, true));
        if (!s.pred_dir.empty()) {
          // pred.py's layout: the prediction, then the empty sentinel that marks it whole.
          const std::string stem = (fs::path(s.pred_dir) / cell_stem(r.def.file_prefix, c.length, c.depth)).string();
          write_text_atomic(stem + ".txt", prediction);
          write_text_atomic(stem + ".txt.done", "");
        }
        return nlohmann::json{{"length", c.length},
                              {"depth", c.depth},
                              {"prediction", prediction},
                              {"prompt_tokens", prompts[i].size()},
                              {"generated_tokens", a.ids.size()},
                              {"stop", stop_reason_name(a.reason)}};
      });

  const GenerateStats& total = loop.totals.stats;
  const int64_t new_tokens = loop.totals.new_tokens;
  nlohmann::json run_stats = {{"cells", loop.totals.requests},
                              {"prompt_tokens", total.prompt_tokens},
                              {"generated_tokens", new_tokens},
                              {"prefill_s", total.prefill_seconds},
                              {"decode_s", total.decode_seconds},
                              {"prefill_tokens_per_s", total.prefill_seconds > 0 ? total.prompt_tokens / total.prefill_seconds : 0.0},
                              {"decode_tokens_per_s", total.decode_seconds > 0 ? new_tokens / total.decode_seconds : 0.0}};
  if (const auto peak = peak_gpu_memory_bytes(s.run.device)) run_stats["peak_gpu_memory_bytes"] = *peak;
  nlohmann::json result = runner.complete([&](const nlohmann::json& id, const std::vector<nlohmann::json>& records) {
    nlohmann::json out = build_result(id, records);
    // Timings of this invocation only (a resumed run counts the cells it did): not part of what
    // `foxeval merge` rebuilds, and never part of a score. In a distributed run the builder runs
    // on rank 0: the cells are every rank's, the token counts and rates rank 0's.
    out["this_run"] = run_stats;
    if (runner.distributed()) {
      out["this_run"]["cells"] = static_cast<int64_t>(records.size()) - done_before;
      out["this_run"]["rates_of"] = "rank 0";
      out["this_run"]["world_size"] = runner.world();
    }
    return out;
  });
  return result;
}

std::vector<nlohmann::json> read_prediction_folder(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(fmt::format("--pred-dir {}: not a folder", dir));
  const re2::RE2 name_re("^" + re2::RE2::QuoteMeta(prefix) + "_len_([0-9]+)_depth_([0-9]+)\\.txt$");
  std::map<std::pair<int64_t, int64_t>, nlohmann::json> cells;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".txt") != 0) continue;
    std::string m1, m2;  // RE2 (linear time): a file name is text from outside
    if (!re2::RE2::FullMatch(name, name_re, &m1, &m2))
      throw Error(fmt::format("--pred-dir {}: {} is not named {}_len_L_depth_D.txt", dir, name, prefix));
    if (!fs::exists(e.path().string() + ".done")) {
      std::fprintf(stderr, "[niah] %s: no %s.done (unfinished), skipped as eval.py does\n", dir.c_str(), name.c_str());
      continue;
    }
    if (m1.size() > 9 || m2.size() > 9)
      throw Error(fmt::format("--pred-dir {}: {}: the length or depth is out of range", dir, name));
    const int64_t L = std::stoll(m1), D100 = std::stoll(m2);
    if (D100 % 100 != 0)
      throw Error(fmt::format("--pred-dir {}: {}: depth_{} is not a whole percent (x100)", dir, name, D100));
    // A plain name of the folder; a link is followed (the user's own), a FIFO or device refused.
    const std::string file = model_file(dir, name, fmt::format("--pred-dir {}", dir));
    cells[{L, D100 / 100}] = {{"length", L}, {"depth", D100 / 100}, {"prediction", python_strip(read_text_file(file))}};
  }
  if (cells.empty()) throw Error(fmt::format("--pred-dir {}: no finished prediction ({}_len_L_depth_D.txt + .done)", dir, prefix));
  std::vector<nlohmann::json> records;
  for (auto& [key, rec] : cells) records.push_back(std::move(rec));
  return records;
}

nlohmann::json score_identity(const ResolvedSpec& r, const std::string& source) {
  return {{"mode", r.mode.name},   {"needle", r.mode.needle}, {"retrieval_question", r.mode.retrieval_question},
          {"answer", r.mode.answer}, {"source", source}};
}

void print_summary(const nlohmann::json& result) {
  auto row = [](const nlohmann::json& arr, const char* key, const char* label) {
    std::printf("%-16s", label);
    for (const nlohmann::json& e : arr) std::printf(" %7lld", static_cast<long long>(e.at(key).get<int64_t>()));
    std::printf("\n%-16s", "mean score");
    for (const nlohmann::json& e : arr) std::printf(" %7.2f", e.at("mean").get<double>());
    std::printf("\n");
  };
  if (!result.contains("mean_by_length")) return;  // a shard part: the means come with `foxeval merge`
  row(result["mean_by_length"], "length", "length");
  row(result["mean_by_depth"], "depth", "depth %");
  std::printf("%-16s %7.2f (1-10, offline scorer)\n", "mean", result["mean"].get<double>());
  if (result.contains("judge"))
    std::printf("%-16s %7.2f (judge %s)\n", "judge mean", result["judge"]["mean"].get<double>(),
                result["judge"].value("model", std::string("?")).c_str());
  if (result.contains("this_run")) {
    const nlohmann::json& t = result["this_run"];
    const std::string ranks = t.contains("world_size") ? fmt::format(" on {} ranks; rates of rank 0", t["world_size"].get<int64_t>()) : "";
    std::printf("prefill %.1f tok/s, decode %.1f tok/s (%lld cells this run%s)\n", t["prefill_tokens_per_s"].get<double>(),
                t["decode_tokens_per_s"].get<double>(), static_cast<long long>(t["cells"].get<int64_t>()), ranks.c_str());
    if (t.contains("peak_gpu_memory_bytes"))
      std::printf("peak GPU memory %.2f GiB\n", t["peak_gpu_memory_bytes"].get<double>() / (1 << 30));
  }
}

}  // namespace foxeval::niah
