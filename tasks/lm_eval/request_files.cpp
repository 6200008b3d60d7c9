#include "tasks/lm_eval/request_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/model_files.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/lm_eval/hflm.h"
#include "tasks/lm_eval/lm_eval_task.h"
#include "tasks/lm_eval/task_config.h"
#include "tasks/lm_eval/task_data.h"
#include "tasks/run/output_lock.h"
#include "tasks/run/progress.h"

namespace foxeval::lm_eval {

void write_request_file(const std::string& tasks, const std::string& data_dir, int64_t limit, double fraction,
                        const std::string& out) {
  const OutputLock lock(out);  // one writer per --out, as every task run
  std::string text;
  size_t count = 0;
  const std::vector<TaskConfig> configs = parse_task_list(tasks);
  check_data_for_tasks(data_dir, configs.size());
  for (const TaskConfig& c : configs)
    for (const nlohmann::json& line : request_lines(load_task_docs(c, data_dir, limit, fraction))) {
      text += line.dump() + "\n";
      ++count;
    }
  write_text_atomic(out, text);
  std::fprintf(stderr, "[lm-eval] %zu requests written to %s\n", count, out.c_str());
}

namespace {

// A string field of request line `line`; errors name the file, line and field.
std::string request_field(const nlohmann::json& j, const char* field, const std::string& where) {
  auto it = j.find(field);
  if (it == j.end()) throw Error(fmt::format("{}: missing field \"{}\"", where, field));
  if (!it->is_string()) throw Error(fmt::format("{}: field \"{}\" must be a string, got {}", where, field, it->type_name()));
  return it->get<std::string>();
}

}  // namespace

void score_request_file(const ScoreRequestSettings& a) {
  const OutputLock lock(a.out);  // one writer per --out, as every task run
  const ModelFiles files = find_model_files(a.model);  // resolved once: the tokenizer's files and the weights'
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
  check_input_stream(a.requests, "--requests");
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
    const std::string kind = request_field(j, "kind", where);
    std::vector<LoglikelihoodRequest> made;
    if (kind == "loglikelihood") {
      const std::string context = request_field(j, "context", where);
      const std::string continuation = request_field(j, "continuation", where);
      try {
        made.push_back(encode_pair(tok, context, continuation));
      } catch (const Error& e) {
        throw Error(fmt::format("{}: fields \"context\"/\"continuation\": {}", where, e.what()));
      }
    } else if (kind == "loglikelihood_rolling") {
      const std::string body = request_field(j, "text", where);
      try {
        made = rolling_requests(tok, body, a.max_length);
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

  auto model = load_model(files, a.run);
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

}  // namespace foxeval::lm_eval
