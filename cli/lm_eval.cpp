// `foxeval lm-eval requests` and `foxeval lm-eval run`: the paper's lm-evaluation-harness 0.4.4
// tasks (tasks/lm_eval/), zero-shot, as the official eval/lm_eval_harness/run_lm_eval.py runs them.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "data/json_file.h"
#include "tasks/run/distributed.h"
#include "tasks/run/launcher_env.h"
#include "tasks/lm_eval/lm_eval_output.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/lm_eval/lm_eval_table.h"
#include "tasks/lm_eval/request_files.h"
#include "tasks/lm_eval/task_data.h"
#include "tasks/run/runner.h"
#include "tasks/lm_eval/lm_eval_summary.h"

namespace foxeval {
namespace {

const char* const kTaskHelp =
    "comma-separated lm-eval task names: wikitext, lambada_openai, piqa, hellaswag, winogrande, arc_easy, "
    "arc_challenge, boolq, sciq, copa, openbookqa; all (these 11) or lm-eval's tag ai2_arc";
const char* const kDataHelp =
    "hf (the default): each task's split from the local Hugging Face caches (datasets' Arrow cache, the hub "
    "cache), never downloading; or a folder of DIR/{task}.jsonl, DIR/{task}.parquet or DIR/{task}/ written by "
    "save_to_disk (or one save_to_disk folder for one task)";
const char* const kLimitHelp =
    "only the first N documents of each task, or with 0 < N < 1 the first ceil(N x documents) (lm-eval's --limit)";

// lm-eval's --limit (argparse type=float): below 1 a fraction of each task's documents
// (ceil(n * limit)), else int(limit) documents.
void parse_limit(const std::string& text, int64_t* count, double* fraction) {
  *count = -1;
  *fraction = 0;
  if (text.empty()) return;
  // Decimal digits, an optional fraction and exponent only: strtod alone also takes "0x10", "inf", " 5".
  const bool decimal = text.find_first_not_of("0123456789.eE+-") == std::string::npos &&
                       std::isdigit(static_cast<unsigned char>(text.front())) != 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (!decimal || end == text.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e15)
    throw Error(fmt::format("--limit: '{}' is not allowed: must be an integer >= 1 (documents) or a fraction 0 < N < 1", text));
  if (v < 1) *fraction = v;
  else *count = static_cast<int64_t>(v);
}

// lm-eval's own spellings of `lm_eval --model hf ...`, beside foxeval's: each maps onto a foxeval
// setting; the same setting given twice with different values is refused.
struct LmEvalSpellings {
  std::string limit, batch_size, output_path, model_args, num_fewshot;
  bool log_samples = false;
};

void add_lm_eval_spellings(CLI::App* run, LmEvalSpellings& l) {
  run->add_option("--batch_size", l.batch_size, "lm-eval's spelling: N (= --batch-size N) or auto, auto:N (the default sizing)");
  run->add_option("--output_path", l.output_path,
                  "also write lm-eval's tree: DIR/{model_name_sanitized}/results_{date}.json (and samples with --log_samples)");
  run->add_flag("--log_samples", l.log_samples, "with --output_path: samples_{task}_{date}.jsonl as lm-eval writes them");
  run->add_option("--num_fewshot", l.num_fewshot, "lm-eval's spelling: 0 only (the paper's results are zero-shot)");
  run->add_option("--model_args", l.model_args,
                  "lm-eval's model arguments: pretrained=DIR|ID (= --model), dtype= (= --dtype), max_length= "
                  "(= --max-length), revision=, add_bos_token=True, trust_remote_code= (no effect)");
}

void same_or_refuse(const std::string& what, const std::string& a, const std::string& b) {
  if (a != b) throw Error(fmt::format("{} given twice with different values: '{}' and '{}'", what, a, b));
}

// lm-eval 0.4.4's names of its Hugging Face model class (lm_eval/models/huggingface.py's
// register_model): `lm_eval --model hf --model_args pretrained=M` names the class, not the checkpoint.
bool is_lm_eval_model_type(const std::string& model) { return model == "hf" || model == "hf-auto" || model == "huggingface"; }

void apply_lm_eval_spellings(CLI::App* run, const LmEvalSpellings& l, lm_eval::LmEvalSettings& s) {
  parse_limit(l.limit, &s.limit, &s.limit_fraction);
  if (!l.num_fewshot.empty()) {
    int64_t shots = -1;
    if (!detail::parse_int64(l.num_fewshot, shots) || shots != 0)
      throw Error(fmt::format("--num_fewshot {}: foxeval runs the paper's zero-shot evaluation only (--num_fewshot 0, "
                              "lm-eval's default)",
                              detail::shown(l.num_fewshot)));
  }
  bool model_given = run->get_option("--model")->count() > 0;
  if (model_given && is_lm_eval_model_type(s.model_dir)) {
    if (l.model_args.find("pretrained=") == std::string::npos)
      throw Error(fmt::format("--model {} is lm-eval's model type: name the checkpoint with --model_args pretrained=DIR|ID "
                              "(or give it to --model)",
                              s.model_dir));
    model_given = false;
    s.model_dir.clear();
  }
  // lm-eval's simple_parse_args_string: comma-separated key=value pairs.
  std::string pretrained, revision;
  if (!l.model_args.empty()) {
    size_t start = 0;
    while (start <= l.model_args.size()) {
      size_t end = l.model_args.find(',', start);
      if (end == std::string::npos) end = l.model_args.size();
      const std::string arg = l.model_args.substr(start, end - start);
      start = end + 1;
      if (arg.empty()) continue;
      const size_t eq = arg.find('=');
      if (eq == std::string::npos || arg.find('=', eq + 1) != std::string::npos)
        throw Error(fmt::format("--model_args: '{}' is not key=value", arg));
      const std::string key = arg.substr(0, eq), value = arg.substr(eq + 1);
      if (key == "pretrained") {
        pretrained = value;
      } else if (key == "revision") {
        revision = value;
      } else if (key == "dtype") {
        if (value != "auto" && value != "float32" && value != "bfloat16")
          throw Error(fmt::format("--model_args dtype={}: foxeval runs auto, float32 or bfloat16", value));
        if (run->get_option("--dtype")->count() > 0) same_or_refuse("the dtype (--dtype, --model_args dtype=)", s.run.dtype, value);
        s.run.dtype = value;
      } else if (key == "max_length") {
        const int64_t v = std::atoll(value.c_str());
        if (std::to_string(v) != value || v < 2 || v > kMaxContextTokens)
          throw Error(fmt::format("--model_args max_length={}: an integer from 2 to {}", value, kMaxContextTokens));
        if (run->get_option("--max-length")->count() > 0)
          same_or_refuse("the max length (--max-length, --model_args max_length=)", std::to_string(s.max_length), value);
        s.max_length = v;
      } else if (key == "add_bos_token") {
        if (value != "True" && value != "true")
          throw Error("--model_args add_bos_token: foxeval scores as the paper's run, with add_bos_token=True");
      } else if (key != "trust_remote_code") {
        throw Error(fmt::format("--model_args: unknown key '{}' (known: pretrained, dtype, max_length, revision, "
                                "add_bos_token, trust_remote_code)", key));
      }
    }
    if (!revision.empty() && pretrained.empty()) throw Error("--model_args revision= needs pretrained=");
    if (!pretrained.empty()) {
      const std::string spec = revision.empty() ? pretrained : pretrained + "@" + revision;
      if (model_given) same_or_refuse("the model (--model, --model_args pretrained=)", s.model_dir, spec);
      s.model_dir = spec;
    }
  }
  if (s.model_dir.empty()) throw Error("--model (or --model_args pretrained=...) is required");
  // lm-eval records the model by its model_args; foxeval's own flags make the same string.
  s.model_args = l.model_args.empty() ? fmt::format("pretrained={},dtype={}", s.model_dir, s.run.dtype) : l.model_args;
  if (!l.batch_size.empty()) {
    const bool is_auto = l.batch_size == "auto" || l.batch_size.rfind("auto:", 0) == 0;
    int64_t n = 0;
    if (l.batch_size.rfind("auto:", 0) == 0) {  // lm-eval's auto:N re-sizes N times; N must be a positive number
      double times = 0;
      if (!detail::parse_double(l.batch_size.substr(5), times) || !(times > 0) || !std::isfinite(times))
        throw Error(fmt::format("--batch_size {}: auto:N needs a positive number N", detail::shown(l.batch_size)));
    } else if (!is_auto) {
      n = std::atoll(l.batch_size.c_str());
      if (std::to_string(n) != l.batch_size || n < 1 || n > (1 << 20))
        throw Error(fmt::format("--batch_size {}: N (1 to {}), auto or auto:N", l.batch_size, 1 << 20));
    }
    if (run->get_option("--batch-size")->count() > 0)
      same_or_refuse("the batch size (--batch-size, --batch_size)", std::to_string(s.batch_size), is_auto ? l.batch_size : std::to_string(n));
    s.batch_size = n;  // 0: foxeval sizes forwards by --max-batch-tokens, its "auto"
    s.batch_size_given = l.batch_size;
  } else {
    s.batch_size_given = s.batch_size > 0 ? nlohmann::json(std::to_string(s.batch_size)) : nlohmann::json("auto");
  }
  if (l.log_samples && l.output_path.empty()) throw Error("--log_samples: give --output_path too (as lm-eval requires)");
  s.output_path = l.output_path;
  s.output_log_samples = l.log_samples;
  if (s.out_path.empty() && l.output_path.empty()) throw Error("--out (or --output_path) is required");
  // Checked before the run: a model name that makes no folder inside --output_path is refused now.
  const std::string dir = l.output_path.empty() ? "" : lm_eval::model_output_dir(l.output_path, s.model_args);
  if (s.out_path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(fmt::format("--output_path: cannot create {} ({})", dir, ec.message()));
    s.out_path = dir + "/lm-eval.json";
  }
}

CommandRegistrar lm_eval_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "lm-eval", "lm-evaluation-harness 0.4.4 tasks of the paper (zero-shot)");

  struct RequestArgs {
    std::string tasks, data = "hf", out, limit;
  };
  auto r = std::make_shared<RequestArgs>();
  CLI::App* req = group->add_subcommand("requests", "Write every request as lm-eval builds it (no model needed)");
  req->add_option("--tasks", r->tasks, kTaskHelp)->required();
  req->add_option("--data", r->data, kDataHelp);
  req->add_option("-o,--out", r->out, "requests, one JSON object per line")->required();
  req->add_option("--limit", r->limit, kLimitHelp);
  req->callback([r] {
    int64_t limit = -1;
    double fraction = 0;
    parse_limit(r->limit, &limit, &fraction);
    lm_eval::write_request_file(r->tasks, r->data, limit, fraction, r->out);
  });

  auto s = std::make_shared<lm_eval::LmEvalSettings>();
  auto shards = std::make_shared<ShardArgs>();
  auto spell = std::make_shared<LmEvalSpellings>();
  CLI::App* run = group->add_subcommand("run", "Evaluate a model on the tasks; lm-eval's results dict");
  run->add_option("--model", s->model_dir,
                  "checkpoint folder or Hugging Face repo id (or --model_args pretrained=...; lm-eval's --model hf is "
                  "accepted with it)");
  run->add_option("--tasks", s->tasks, kTaskHelp)->required();
  run->add_option("--data", s->data_dir, kDataHelp);
  run->add_option("-o,--out", s->out_path,
                  "result JSON (a shard part when --num-shards > 1); default with --output_path: "
                  "DIR/{model_name_sanitized}/lm-eval.json");
  run->add_option("--limit", spell->limit, kLimitHelp);
  add_lm_eval_spellings(run, *spell);
  run->add_option("--batch-size", s->batch_size, "requests per forward (default: as many as fit --max-batch-tokens)")
      ->check(int_range(1, 1 << 20));
  run->add_option("--max-batch-tokens", s->max_batch_tokens, "tokens per forward when --batch-size is not set")
      ->check(int_range(1, int64_t(1) << 40));
  run->add_option("--max-length", s->max_length, "HFLM max_length: longer requests keep their end (default 16384)")
      ->check(int_range(2, kMaxContextTokens));
  run->add_option("--log-samples", s->log_samples_path, "write per-document details (JSON lines) here");
  add_run_options(run, s->run);
  add_shard_options(run, *shards, "documents", "journal (OUT.journal.jsonl)");
  run->add_option("--stop-after", s->stop_after_docs, "stop (exit 3, resumable) after N documents (default: none)")->check(int_range(0));
  run->callback([run, s, shards, spell] {
    // One shared run under torchrun/srun/mpirun, else static shards (tasks/run/distributed.h).
    apply_lm_eval_spellings(run, *spell, *s);
    resolve_task_settings(run, "lm-eval", *shards, *s);
    nlohmann::json result;
    run_task("lm-eval", s->ranks, [&] { result = lm_eval::run_lm_eval(*s); }, [&] { lm_eval::print_lm_eval_summary(result); });
  });
});

}  // namespace
}  // namespace foxeval
