// The optional judge: an OpenAI-compatible chat endpoint asked with the official eval.py prompt
// (tasks/niah/judge.json: system message, user template with the criteria, temperature 0), the
// rating read with the official pattern \[\[(\d+)\]\]. Never a silent 0: an unreachable
// endpoint (after the retries) or a reply without a rating in 1..10 is an error naming the cell.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>

#include <string>
#include <vector>

namespace foxeval::niah {

struct JudgeSettings {
  std::string url;    // the full chat-completions URL, e.g. https://api.openai.com/v1/chat/completions (http(s) only)
  std::string model;  // e.g. gpt-4o-2024-08-06 (the paper's)
  std::string api_key_env = "OPENAI_API_KEY";  // sent as a Bearer token when the variable is set
  bool api_key_required = false;  // the variable was named explicitly: unset or empty is an error
  int tries = 5;                 // as eval.py
  double backoff_seconds = 1.0;  // wait before retry k: backoff * 2^(k-1)
  double timeout_seconds = 120;  // per request, as eval.py: the whole request (connect, send, reply)
  int64_t max_reply_bytes = int64_t(8) << 20;  // a longer reply is refused at once, without retries
};

// What may be printed of a server's reply: at most `max_chars` bytes, control characters escaped,
// every occurrence of `secret` (the API key, when not empty) replaced by [redacted].
std::string printable_reply(const std::string& body, const std::string& secret, size_t max_chars = 200);

struct JudgePrompt {
  std::string system, user_template, criteria;
};
JudgePrompt load_judge_prompt();  // tasks/niah/judge.json

// eval.py's user message: the template with {criteria}, {reference}, {input}, {prediction}.
std::string judge_user_message(const JudgePrompt& p, const std::string& question, const std::string& reference,
                               const std::string& prediction);

// The rating in a judge's reply: the first [[N]]; -1 when there is none.
int parse_rating(const std::string& reply);

// Asks the judge about every record (adds "judge_score" and "judge_reply"). `question` and
// `reference` are eval.py's (the mode's judge_question / judge_reference).
void judge_records(std::vector<nlohmann::json>& records, const JudgeSettings& s, const std::string& question,
                   const std::string& reference);

}  // namespace foxeval::niah
