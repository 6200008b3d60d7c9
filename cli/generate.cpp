// `foxeval generate`: greedy or sampled continuations of prompts (models/generate.h).
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "data/errors.h"
#include "data/tokenizer.h"
#include "models/generate.h"
#include "models/registry.h"

namespace foxeval {
namespace {

struct GenerateArgs {
  std::string model, prompt, prompt_ids, prompt_file;
  int64_t max_new_tokens = 0, batch_size = 8, prefill_chunk = 4096;
  bool no_cache = false, json = false, no_eos = false;
  double temperature = 0, top_p = 1.0;
  uint64_t seed = 0;
  std::vector<std::string> stops;
  std::vector<int64_t> stop_ids;
  RunOptions run;
};

void run_generate(const GenerateArgs& a) {
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(a.model);
  // Prompts in order: --prompt, --prompt-ids, then the lines of --prompt-file.
  std::vector<std::vector<int64_t>> prompts;
  std::vector<std::string> shown;  // each prompt as the user gave it, for the blocks of --prompt-file
  if (!a.prompt.empty()) {
    prompts.push_back(tok.encode(a.prompt, true, true));
    shown.push_back("--prompt: " + a.prompt);
  }
  if (!a.prompt_ids.empty()) {
    prompts.push_back(parse_int_list(a.prompt_ids, "--prompt-ids"));
    if (prompts.back().empty()) throw Error("--prompt-ids: no ids given");
    shown.push_back("--prompt-ids: " + a.prompt_ids);
  }
  if (!a.prompt_file.empty()) {
    struct stat st {};
    if (::stat(a.prompt_file.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw Error("--prompt-file " + a.prompt_file + ": not a file (a folder or a device)");
    std::ifstream in(a.prompt_file, std::ios::binary);
    if (!in) throw Error("--prompt-file: cannot open " + a.prompt_file);
    std::string line;
    int64_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      prompts.push_back(tok.encode(line, true, true));
      shown.push_back(fmt::format("{} line {}: {}", a.prompt_file, line_no, line));
    }
  }
  if (prompts.empty()) throw Error("give a prompt: --prompt, --prompt-ids or --prompt-file");

  auto model = load_model(a.model, a.run);
  GenerateOptions o;
  o.max_new_tokens = a.max_new_tokens;
  o.temperature = a.temperature;
  o.top_p = a.top_p;
  o.seed = a.seed;
  o.stop_strings = a.stops;
  o.use_cache = !a.no_cache;
  o.prefill_chunk = a.prefill_chunk;
  if (!a.stop_ids.empty())
    o.stop_ids = a.stop_ids;
  else if (!a.no_eos)
    o.stop_ids = {tok.eos_id()};

  const size_t B = static_cast<size_t>(a.batch_size);
  for (size_t start = 0; start < prompts.size(); start += B) {
    const size_t end = std::min(prompts.size(), start + B);
    std::vector<std::vector<int64_t>> batch(prompts.begin() + start, prompts.begin() + end);
    o.first_index = start;  // a prompt samples the same whatever batch it falls in
    const std::vector<Generation> out = generate(*model, batch, o, &tok);
    for (size_t i = 0; i < out.size(); ++i) {
      if (a.json) {
        nlohmann::json j = {{"prompt_ids", batch[i]},
                            {"generated_ids", out[i].ids},
                            {"text", out[i].text},
                            {"stop_reason", stop_reason_name(out[i].reason)}};
        std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
      } else if (!a.prompt_file.empty()) {
        // Several prompts: one block each, the prompt shown, so a continuation is never read as the
        // next prompt's (a continuation may hold blank lines and newlines of its own).
        std::printf("=== prompt %zu of %zu ===\n%s\n--- continuation (stopped: %s) ---\n%s\n\n", start + i + 1,
                    prompts.size(), shown[start + i].c_str(), stop_reason_name(out[i].reason), out[i].text.c_str());
      } else {
        std::printf("%s\n", out[i].text.c_str());
      }
    }
    std::fflush(stdout);
  }
}

CommandRegistrar generate_command([](CLI::App& root) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = root.add_subcommand("generate", "Greedy or sampled continuation of prompts");
  cmd->add_option("--model", a->model, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  cmd->add_option("--prompt", a->prompt, "prompt text (JSON-escaped GPT-2 BPE, BOS first, as the checkpoints were trained)");
  cmd->add_option("--prompt-ids", a->prompt_ids, "prompt as token ids: 1,2,3 (used as given, no BOS added)");
  cmd->add_option("--prompt-file", a->prompt_file,
                  "one text prompt per line, generated in batches; printed as one block per prompt (the prompt, "
                  "then its continuation)");
  cmd->add_option("--max-new-tokens", a->max_new_tokens, "tokens to generate per prompt")
      ->required()->check(int_range(1, kMaxNewTokens));
  cmd->add_flag("--no-cache", a->no_cache, "recompute the whole prefix every step, row by row (verification)");
  cmd->add_flag("--json", a->json, "one JSON object per prompt: prompt_ids, generated_ids, text, stop_reason");
  cmd->add_option("--temperature", a->temperature, "0 = greedy (default); > 0 samples")
      ->check(number_range(0.0, 1e6));
  cmd->add_option("--top-p", a->top_p, "nucleus sampling mass (with --temperature > 0)")->check(number_range(0.0, 1.0, true));
  cmd->add_option("--seed", a->seed, "sampling seed (deterministic given the seed)")->check(unsigned_integer());
  cmd->add_option("--stop", a->stops, "stop string (repeatable): the text is cut before it");
  cmd->add_option("--stop-id", a->stop_ids, "stop token id (repeatable; replaces the default EOS 50256)")
      ->check(int_range(0));
  cmd->add_flag("--no-eos", a->no_eos, "do not stop at EOS");
  cmd->add_option("--batch-size", a->batch_size, "prompts per batch (left padded)")->check(int_range(1, 1 << 16));
  cmd->add_option("--prefill-chunk", a->prefill_chunk, "prompt tokens per prefill forward")
      ->check(int_range(1, kMaxContextTokens));
  add_run_options(cmd, a->run);
  cmd->callback([cmd, a] {
    resolve_run(cmd, a->run);
    run_generate(*a);
  });
});

}  // namespace
}  // namespace foxeval
