// `foxeval score`: lm-eval's loglikelihood / loglikelihood_rolling requests from a JSONL file,
// scored as lm-eval 0.4.4 HFLM(add_bos_token=True) with the official JSONGPT2Tokenizer would
// (tasks/lm_eval/hflm.h for the tokenization and its quirks), one answer line per request line.
//
// Answers: {"logprob": float, "is_greedy": bool}. lm-eval's loglikelihood_rolling returns only the
// float; here its is_greedy is the AND over the text's windows (every token of the text is the
// argmax after what precedes it), so every answer line has the same shape.
#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "data/json_file.h"
#include "data/errors.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/lm_eval/hflm.h"
#include "tasks/output_lock.h"
#include "tasks/progress.h"

namespace foxeval {
namespace {

struct ScoreArgs {
  std::string model, requests, out;
  int64_t max_length = 16384, batch_size = 0, max_batch_tokens = 32768;
  RunOptions run;
};

// A string field of request line `line`; errors name the file, line and field.
std::string string_field(const nlohmann::json& j, const char* field, const std::string& where) {
  auto it = j.find(field);
  if (it == j.end()) throw Error(fmt::format("{}: missing field \"{}\"", where, field));
  if (!it->is_string()) throw Error(fmt::format("{}: field \"{}\" must be a string, got {}", where, field, it->type_name()));
  return it->get<std::string>();
}

void run_score(const ScoreArgs& a) {
  const OutputLock lock(a.out);  // one writer per --out, as every task run
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(a.model);
  struct stat st {};
  if (::stat(a.requests.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
    throw Error(fmt::format("--requests {}: not a file (a folder or a device)", a.requests));
  std::ifstream in(a.requests, std::ios::binary);
  if (!in) throw Error(fmt::format("--requests: cannot open {}", a.requests));

  // Token requests of every line; a rolling line owns several (its windows).
  std::vector<LoglikelihoodRequest> token_requests;
  std::vector<size_t> owner;  // line index (0-based) of each token request
  size_t lines = 0;
  std::string text;
  while (std::getline(in, text)) {
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const std::string where = fmt::format("{} line {}", a.requests, lines + 1);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      throw Error(fmt::format("{}: malformed JSON ({})", where, e.what()));
    }
    if (!j.is_object()) throw Error(fmt::format("{}: a request must be a JSON object", where));
    const std::string kind = string_field(j, "kind", where);
    std::vector<LoglikelihoodRequest> made;
    if (kind == "loglikelihood") {
      const std::string context = string_field(j, "context", where);
      const std::string continuation = string_field(j, "continuation", where);
      try {
        made.push_back(lm_eval::encode_pair(tok, context, continuation));
      } catch (const Error& e) {
        throw Error(fmt::format("{}: fields \"context\"/\"continuation\": {}", where, e.what()));
      }
    } else if (kind == "loglikelihood_rolling") {
      const std::string body = string_field(j, "text", where);
      try {
        made = lm_eval::rolling_requests(tok, body, a.max_length);
      } catch (const Error& e) {
        throw Error(fmt::format("{}: field \"text\": {}", where, e.what()));
      }
    } else {
      throw Error(fmt::format("{}: field \"kind\" is \"{}\"; expected \"loglikelihood\" or \"loglikelihood_rolling\"",
                              where, kind));
    }
    for (LoglikelihoodRequest& r : made) {
      if (static_cast<int64_t>(r.continuation.size()) > a.max_length)
        throw Error(fmt::format("{}: the continuation has {} tokens, more than --max-length {}", where,
                                r.continuation.size(), a.max_length));
      token_requests.push_back(std::move(r));
      owner.push_back(lines);
    }
    ++lines;
  }
  if (in.bad()) throw Error(fmt::format("--requests: read error in {}", a.requests));

  auto model = load_model(a.model, a.run);
  LoglikelihoodOptions o;
  o.max_length = a.max_length;
  o.batch_size = a.batch_size;
  o.max_batch_tokens = a.max_batch_tokens;
  std::vector<double> logprob(lines, 0.0);
  std::vector<char> greedy(lines, 1);
  Progress progress("score", static_cast<int64_t>(token_requests.size()), "tok");
  int64_t done = 0;
  double work = 0;
  loglikelihood(*model, token_requests, o, [&](size_t i, const LoglikelihoodAnswer& answer) {
    logprob[owner[i]] += answer.logprob;
    greedy[owner[i]] = greedy[owner[i]] && answer.is_greedy;
    work += static_cast<double>(token_requests[i].context.size() + token_requests[i].continuation.size());
    progress.update(++done, work);
  });
  progress.update(done, work, true);

  std::string out;
  for (size_t l = 0; l < lines; ++l)
    out += nlohmann::json{{"logprob", logprob[l]}, {"is_greedy", greedy[l] != 0}}.dump() + "\n";
  write_text_atomic(a.out, out);
}

CommandRegistrar score_command([](CLI::App& root) {
  auto a = std::make_shared<ScoreArgs>();
  CLI::App* cmd = root.add_subcommand(
      "score", "Log-likelihoods of lm-eval requests (JSONL in, JSONL out), as lm-eval 0.4.4 HFLM(add_bos_token=True)");
  cmd->add_option("--model", a->model, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  cmd->add_option("--requests", a->requests,
                  "JSONL: {\"kind\":\"loglikelihood\",\"context\",\"continuation\"} or "
                  "{\"kind\":\"loglikelihood_rolling\",\"text\"} per line")
      ->required();
  cmd->add_option("-o,--out", a->out, "JSONL: {\"logprob\",\"is_greedy\"} per request line, same order (atomic write)")
      ->required();
  cmd->add_option("--max-length", a->max_length, "HFLM max_length: input window and rolling window size")
      ->check(int_range(1, kMaxContextTokens));
  cmd->add_option("--batch-size", a->batch_size, "requests per forward (0: as many as fit --max-batch-tokens)")
      ->check(int_range(0, 1 << 20));
  cmd->add_option("--max-batch-tokens", a->max_batch_tokens, "padded tokens per forward when --batch-size is 0")
      ->check(int_range(1, int64_t(1) << 40));
  add_run_options(cmd, a->run);
  cmd->callback([cmd, a] {
    resolve_run(cmd, a->run);
    run_score(*a);
  });
});

}  // namespace
}  // namespace foxeval
