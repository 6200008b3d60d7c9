// `foxeval generate`: greedy or sampled continuations of prompts, through the one generation
// engine (models/requests.h generate_until: decoding slots; --no-cache: the reference path).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/generation_options.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "data/model_files.h"
#include "data/tokenizer.h"
#include "data/utf8.h"
#include "models/registry.h"
#include "models/requests.h"

namespace foxeval {
namespace {

struct GenerateArgs {
  std::string model, prompt, prompt_ids, prompt_file;
  int64_t max_new_tokens = 0;
  bool no_cache = false, json = false, no_eos = false;
  Sampling sampling;
  std::vector<std::string> stops;
  std::vector<int64_t> stop_ids;
  GenerateUntilOptions gen;
  RunOptions run;
};

// --prompt-file: one text prompt per line (a final newline optional, "\r\n" read as "\n"). A line
// that is empty or only whitespace, or not UTF-8, is refused, naming file:line: an empty prompt
// is a stray blank line far more often than a wish to continue BOS alone.
std::vector<std::string> read_prompt_lines(const std::string& path) {
  check_input_stream(path, "--prompt-file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("--prompt-file: cannot open " + path);
  std::vector<std::string> lines;
  std::string line;
  for (int64_t line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t\f\v") == std::string::npos)
      throw Error(fmt::format("--prompt-file {}:{}: empty line (one prompt per line; remove blank lines)", path, line_no));
    const size_t bad = utf8::first_invalid(line);
    if (bad != std::string_view::npos)
      throw Error(fmt::format("--prompt-file {}:{}: not UTF-8 (byte {} of the line)", path, line_no, bad + 1));
    lines.push_back(line);
  }
  return lines;
}

void run_generate(GenerateArgs& a) {
  const ModelFiles files = find_model_files(a.model);  // resolved once: the tokenizer's files and the weights'
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
  // Prompts in order: --prompt, --prompt-ids, then the lines of --prompt-file.
  std::vector<GenerationRequest> requests;
  std::vector<std::string> shown;  // each prompt as the user gave it, for the blocks of --prompt-file
  auto add = [&](std::vector<int64_t> ids, std::string how) {
    requests.emplace_back();
    requests.back().prompt = std::move(ids);
    shown.push_back(std::move(how));
  };
  if (!a.prompt.empty()) add(tok.encode(a.prompt, true, true), "--prompt: " + a.prompt);
  if (!a.prompt_ids.empty()) {
    std::vector<int64_t> ids = parse_int_list(a.prompt_ids, "--prompt-ids");
    if (ids.empty()) throw Error("--prompt-ids: no ids given");
    add(std::move(ids), "--prompt-ids: " + a.prompt_ids);
  }
  if (!a.prompt_file.empty()) {
    const std::vector<std::string> lines = read_prompt_lines(a.prompt_file);
    for (size_t k = 0; k < lines.size(); ++k)
      add(tok.encode(lines[k], true, true), fmt::format("{} line {}: {}", a.prompt_file, k + 1, lines[k]));
  }
  if (requests.empty()) throw Error("give a prompt: --prompt, --prompt-ids or --prompt-file");
  std::vector<int64_t> stop_ids = a.stop_ids;
  if (stop_ids.empty() && !a.no_eos) stop_ids = {tok.eos_id()};
  for (GenerationRequest& r : requests) {
    r.max_new_tokens = a.max_new_tokens;
    r.stop_ids = stop_ids;
    r.stop_strings = a.stops;
  }

  auto model = load_model(files, a.run);
  a.gen.sampling = a.sampling;  // first_index 0: prompt i draws as prompt i, whatever runs beside it
  a.gen.use_cache = !a.no_cache;
  a.gen.tokenizer = &tok;
  // Answers come in any order; print them in the prompts' order as soon as they can be.
  std::vector<std::optional<GenerationAnswer>> answers(requests.size());
  size_t printed = 0;
  auto print = [&](size_t i, const GenerationAnswer& g) {
    if (a.json) {
      nlohmann::json j = {{"prompt_ids", requests[i].prompt},
                          {"generated_ids", g.ids},
                          {"text", g.text},
                          {"stop_reason", stop_reason_name(g.reason)}};
      std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else if (!a.prompt_file.empty()) {
      // Several prompts: one block each, the prompt shown, so a continuation is never read as the
      // next prompt's (a continuation may hold blank lines and newlines of its own).
      std::printf("=== prompt %zu of %zu ===\n%s\n--- continuation (stopped: %s) ---\n%s\n\n", i + 1, requests.size(),
                  shown[i].c_str(), stop_reason_name(g.reason), g.text.c_str());
    } else {
      std::printf("%s\n", g.text.c_str());
    }
  };
  generate_until(*model, requests, a.gen, [&](size_t i, const GenerationAnswer& g) {
    answers[i] = g;
    for (; printed < answers.size() && answers[printed]; ++printed) print(printed, *answers[printed]);
    std::fflush(stdout);
  });
}

CommandRegistrar generate_command([](CLI::App& root) {
  auto a = std::make_shared<GenerateArgs>();
  CLI::App* cmd = root.add_subcommand("generate", "Greedy or sampled continuation of prompts");
  cmd->add_option("--model", a->model, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  cmd->add_option("--prompt", a->prompt, "prompt text (JSON-escaped GPT-2 BPE, BOS first, as the checkpoints were trained)");
  cmd->add_option("--prompt-ids", a->prompt_ids, "prompt as token ids: 1,2,3 (used as given, no BOS added)");
  cmd->add_option("--prompt-file", a->prompt_file,
                  "one text prompt per line (no blank lines), decoded together on the slots; printed as one block "
                  "per prompt (the prompt, then its continuation)");
  cmd->add_option("--max-new-tokens", a->max_new_tokens, "tokens to generate per prompt")
      ->required()->check(int_range(1, kMaxNewTokens));
  cmd->add_flag("--no-cache", a->no_cache,
                "reference path: every token from a forward over the whole sequence, no state (verification)");
  cmd->add_flag("--json", a->json, "one JSON object per prompt: prompt_ids, generated_ids, text, stop_reason");
  cmd->add_option("--temperature", a->sampling.temperature, "0 = greedy (default); > 0 samples")
      ->check(number_range(0.0, 1e6));
  cmd->add_option("--top-k", a->sampling.top_k, "keep the k most probable tokens (with --temperature > 0; 0 = all)")
      ->check(int_range(0));
  cmd->add_option("--top-p", a->sampling.top_p, "nucleus sampling mass (with --temperature > 0)")->check(number_range(0.0, 1.0, true));
  cmd->add_option("--seed", a->sampling.seed,
                  "sampling seed: prompt i draws from its own generator (seed, i), whatever runs beside it")
      ->check(unsigned_integer());
  cmd->add_option("--stop", a->stops, "stop string (repeatable): the text is cut before it");
  cmd->add_option("--stop-id", a->stop_ids, "stop token id (repeatable; replaces the default EOS 50256)")
      ->check(int_range(0));
  cmd->add_flag("--no-eos", a->no_eos, "do not stop at EOS");
  add_generation_options(cmd, a->gen);
  add_run_options(cmd, a->run);
  cmd->callback([cmd, a] {
    resolve_run(cmd, a->run);
    run_generate(*a);
  });
});

}  // namespace
}  // namespace foxeval
