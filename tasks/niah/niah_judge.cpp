#include "tasks/niah/niah_judge.h"

#include <curl/curl.h>
#include <re2/re2.h>
#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/url_secrets.h"
#include "tasks/niah/niah_prompts.h"

namespace fs = std::filesystem;

namespace foxeval::niah {
namespace {

// The reply's body, up to a cap: a longer reply aborts the transfer at once (the callback returns
// 0, curl stops with CURLE_WRITE_ERROR) instead of growing memory.
struct Body {
  std::string text;
  size_t cap = 0;
  bool too_big = false;
};

size_t append_body(char* data, size_t size, size_t n, void* out) {
  Body& b = *static_cast<Body*>(out);
  const size_t bytes = size * n;
  if (b.text.size() + bytes > b.cap) {
    b.too_big = true;
    return 0;
  }
  b.text.append(data, bytes);
  return bytes;
}

struct Reply {
  bool ok = false;
  std::string content, error;  // error: why this try failed (retried), printable
  bool fatal = false;          // not worth retrying (eval.py: "maximum context length"; a reply over the cap)
};

// The URL without user:password@ (never printed).
std::string shown_url(const std::string& url) { return printable_reply(url_without_secrets(url), "", 200); }

Reply ask_once(const JudgeSettings& s, const std::string& body, const std::string& key) {
  Reply r;
  CURL* curl = curl_easy_init();
  if (!curl) throw Error("judge: cannot initialise libcurl");
  Body response;
  response.cap = static_cast<size_t>(s.max_reply_bytes);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  if (!key.empty()) headers = curl_slist_append(headers, (std::string("Authorization: Bearer ") + key).c_str());
  const long timeout_ms = static_cast<long>(std::ceil(s.timeout_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_URL, s.url.c_str());
  // Only http and https, also after a redirect (none is followed anyway): never file://, ftp:// ...
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response);
  // A declared Content-Length over the cap is refused before the body arrives.
  curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(s.max_reply_bytes));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, timeout_ms);  // the whole request, a slow reply included
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  const CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (response.too_big || rc == CURLE_FILESIZE_EXCEEDED) {
    r.error = fmt::format("the reply is larger than {} bytes; refused", s.max_reply_bytes);
    r.fatal = true;
    return r;
  }
  if (rc != CURLE_OK) {
    r.error = curl_easy_strerror(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) r.error += fmt::format(" (--judge-timeout {} s)", s.timeout_seconds);
    return r;
  }
  if (status != 200) {
    r.error = fmt::format("HTTP {}: {}", status, printable_reply(response.text, key));
    r.fatal = response.text.find("maximum context length") != std::string::npos;
    return r;
  }
  const nlohmann::json j = nlohmann::json::parse(response.text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() ||
      !j["choices"][0].is_object() || !j["choices"][0].contains("message") || !j["choices"][0]["message"].is_object() ||
      !j["choices"][0]["message"].contains("content") || !j["choices"][0]["message"]["content"].is_string()) {
    r.error = "not an OpenAI chat-completions reply: " + printable_reply(response.text, key);
    return r;
  }
  r.ok = true;
  r.content = j["choices"][0]["message"]["content"].get<std::string>();
  return r;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Settings that need no network to be found wrong, all checked before the first request.
void check_settings(const JudgeSettings& s) {
  if (s.url.empty() || s.model.empty()) throw Error("--judge-url and --judge-model go together");
  const std::string scheme = lower(s.url.substr(0, s.url.find("://") == std::string::npos ? 0 : s.url.find("://") + 3));
  if ((scheme != "http://" && scheme != "https://") || s.url.size() <= scheme.size())
    throw Error(fmt::format("--judge-url {}: only http:// and https:// URLs are allowed", shown_url(s.url)));
  if (s.tries < 1 || s.tries > 100) throw Error(fmt::format("--judge-tries {}: must be an integer in [1, 100]", s.tries));
  if (!std::isfinite(s.backoff_seconds) || s.backoff_seconds < 0 || s.backoff_seconds > 3600)
    throw Error(fmt::format("--judge-backoff {}: must be a number of seconds in [0, 3600]", s.backoff_seconds));
  if (!std::isfinite(s.timeout_seconds) || s.timeout_seconds <= 0 || s.timeout_seconds > 86400)
    throw Error(fmt::format("--judge-timeout {}: must be a number of seconds in (0, 86400]", s.timeout_seconds));
  if (s.max_reply_bytes < 1) throw Error("judge: the reply size cap must be positive");
  if (s.api_key_env.empty()) throw Error("--judge-key-env: give the name of an environment variable");
  const char* key = std::getenv(s.api_key_env.c_str());
  if (s.api_key_required && (!key || !*key))
    throw Error(fmt::format("--judge-key-env {}: the environment variable is not set or empty (it must hold the "
                            "judge's API key)", printable_reply(s.api_key_env, "", 100)));
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
  // RE2: linear time on any reply (std::regex recursed per character and overflowed the stack on
  // "[[" + 30,000 digits). eval.py's pattern r"\[\[(\d+)\]\]", first match.
  static const re2::RE2 pattern(R"(\[\[([0-9]+)\]\])");
  std::string digits;
  if (!re2::RE2::PartialMatch(reply, pattern, &digits)) return -1;
  return digits.size() > 3 ? 1000 : std::stoi(digits);
}

std::string printable_reply(const std::string& body, const std::string& secret, size_t max_chars) {
  std::string text = body;
  if (!secret.empty())
    for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at + 10))
      text.replace(at, secret.size(), "[redacted]");
  std::string out;
  for (size_t i = 0; i < text.size() && out.size() < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += text[i];
  }
  if (out.size() < text.size()) {
    // Do not end inside a UTF-8 sequence.
    while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
    if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0xC0) out.pop_back();
    out += fmt::format("... ({} bytes)", body.size());
  }
  return out;
}

void judge_records(std::vector<nlohmann::json>& records, const JudgeSettings& s, const std::string& question,
                   const std::string& reference) {
  check_settings(s);
  const char* key_env = std::getenv(s.api_key_env.c_str());
  const std::string key = key_env ? key_env : "";
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
      r = ask_once(s, text, key);
      if (r.ok || r.fatal) break;
      std::fprintf(stderr, "[niah] judge %s, cell %s, try %d of %d: %s\n", shown_url(s.url).c_str(), cell.c_str(), k,
                   s.tries, r.error.c_str());
      if (k < s.tries)
        // doubling, but one wait at most 10 minutes (or the backoff itself, when longer): bounded
        std::this_thread::sleep_for(std::chrono::duration<double>(
            std::min(s.backoff_seconds * std::pow(2.0, k - 1), std::max(s.backoff_seconds, 600.0))));
    }
    if (!r.ok) {
      if (r.fatal && r.error.rfind("the reply is larger", 0) == 0)
        throw Error(fmt::format("judge {} failed for cell {}: {} (not retried)", shown_url(s.url), cell, r.error));
      throw Error(fmt::format("judge {} failed for cell {} after {} tries: {}", shown_url(s.url), cell, s.tries, r.error));
    }
    const int rating = parse_rating(r.content);
    if (rating < 1 || rating > 10)
      throw Error(fmt::format("judge {} gave cell {} no [[rating]] in 1..10 (eval.py's pattern \\[\\[(\\d+)\\]\\]): '{}'",
                              shown_url(s.url), cell, printable_reply(r.content, key)));
    rec["judge_score"] = rating;
    // Kept in the result: never with the key in it (a server may echo the request).
    std::string reply = r.content;
    if (!key.empty())
      for (size_t at = reply.find(key); at != std::string::npos; at = reply.find(key, at + 10))
        reply.replace(at, key.size(), "[redacted]");
    rec["judge_reply"] = reply;
  }
}

}  // namespace foxeval::niah
