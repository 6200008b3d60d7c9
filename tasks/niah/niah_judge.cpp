#include "tasks/niah/niah_judge.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <thread>

#include "data/errors.h"
#include "data/json_file.h"
#include "tasks/niah/niah_prompts.h"

namespace fs = std::filesystem;

namespace foxeval::niah {
namespace {

size_t append_body(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct Reply {
  bool ok = false;
  std::string content, error;  // error: why this try failed (retried)
  bool fatal = false;          // not worth retrying (eval.py: "maximum context length")
};

Reply ask_once(const JudgeSettings& s, const std::string& body) {
  Reply r;
  CURL* curl = curl_easy_init();
  if (!curl) throw Error("judge: cannot initialise libcurl");
  std::string response;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  if (const char* key = std::getenv(s.api_key_env.c_str()); key && *key)
    headers = curl_slist_append(headers, (std::string("Authorization: Bearer ") + key).c_str());
  curl_easy_setopt(curl, CURLOPT_URL, s.url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(s.timeout_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (rc != CURLE_OK) {
    r.error = curl_easy_strerror(rc);
    return r;
  }
  if (status != 200) {
    r.error = fmt::format("HTTP {}: {}", status, response.substr(0, 300));
    r.fatal = response.find("maximum context length") != std::string::npos;
    return r;
  }
  const nlohmann::json j = nlohmann::json::parse(response, nullptr, false);
  if (j.is_discarded() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
      !j["choices"][0].contains("message") || !j["choices"][0]["message"].contains("content") ||
      !j["choices"][0]["message"]["content"].is_string()) {
    r.error = "not an OpenAI chat-completions reply: " + response.substr(0, 300);
    return r;
  }
  r.ok = true;
  r.content = j["choices"][0]["message"]["content"].get<std::string>();
  return r;
}

}  // namespace

JudgePrompt load_judge_prompt() {
  const std::string file = (fs::path(definition_dir()) / "judge.json").string();
  const nlohmann::json j = read_json(file);
  JudgePrompt p;
  try {
    p.system = j.at("system").get<std::string>();
    p.user_template = j.at("user_template").get<std::string>();
    p.criteria = j.at("criteria").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: needs string fields system, user_template, criteria ({})", file, e.what()));
  }
  return p;
}

std::string judge_user_message(const JudgePrompt& p, const std::string& question, const std::string& reference,
                               const std::string& prediction) {
  // As str.format: the template's fields are filled in one pass, so a prediction holding
  // "{input}" stays as it is.
  std::string out;
  const std::string& t = p.user_template;
  size_t pos = 0;
  while (pos < t.size()) {
    const size_t open = t.find('{', pos);
    if (open == std::string::npos) {
      out += t.substr(pos);
      break;
    }
    const size_t close = t.find('}', open);
    if (close == std::string::npos) throw Error("judge.json: user_template has an unclosed '{'");
    out += t.substr(pos, open - pos);
    const std::string field = t.substr(open + 1, close - open - 1);
    if (field == "criteria") out += p.criteria;
    else if (field == "reference") out += reference;
    else if (field == "input") out += question;
    else if (field == "prediction") out += prediction;
    else throw Error(fmt::format("judge.json: user_template has an unknown field {{{}}}", field));
    pos = close + 1;
  }
  return out;
}

int parse_rating(const std::string& reply) {
  static const std::regex pattern(R"(\[\[(\d+)\]\])");
  std::smatch m;
  if (!std::regex_search(reply, m, pattern)) return -1;
  const std::string digits = m[1].str();
  return digits.size() > 3 ? 1000 : std::stoi(digits);
}

void judge_records(std::vector<nlohmann::json>& records, const JudgeSettings& s, const std::string& question,
                   const std::string& reference) {
  if (s.url.empty() || s.model.empty()) throw Error("--judge-url and --judge-model go together");
  if (s.tries < 1) throw Error(fmt::format("--judge-tries {} must be >= 1", s.tries));
  static const bool curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  if (!curl_ready) throw Error("judge: libcurl failed to initialise");
  const JudgePrompt prompt = load_judge_prompt();
  for (nlohmann::json& rec : records) {
    const std::string cell = fmt::format("len_{}_depth_{}", rec.at("length").get<int64_t>(), rec.at("depth").get<int64_t>());
    const nlohmann::json body = {
        {"model", s.model},
        {"messages",
         {{{"role", "system"}, {"content", prompt.system}},
          {{"role", "user"},
           {"content", judge_user_message(prompt, question, reference, rec.at("prediction").get<std::string>())}}}},
        {"temperature", 0.0}};
    const std::string text = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    Reply r;
    for (int k = 1; k <= s.tries; ++k) {
      r = ask_once(s, text);
      if (r.ok || r.fatal) break;
      std::fprintf(stderr, "[niah] judge %s, cell %s, try %d of %d: %s\n", s.url.c_str(), cell.c_str(), k, s.tries,
                   r.error.c_str());
      if (k < s.tries)
        std::this_thread::sleep_for(std::chrono::duration<double>(s.backoff_seconds * std::pow(2.0, k - 1)));
    }
    if (!r.ok)
      throw Error(fmt::format("judge {} failed for cell {} after {} tries: {}", s.url, cell, s.tries, r.error));
    const int rating = parse_rating(r.content);
    if (rating < 1 || rating > 10)
      throw Error(fmt::format("judge {} gave cell {} no [[rating]] in 1..10 (eval.py's pattern \\[\\[(\\d+)\\]\\]): '{}'",
                              s.url, cell, r.content.substr(0, 200)));
    rec["judge_score"] = rating;
    rec["judge_reply"] = r.content;
  }
}

}  // namespace foxeval::niah
