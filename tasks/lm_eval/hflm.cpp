#include "tasks/lm_eval/hflm.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "data/errors.h"
#include "data/python/str_strip.h"
#include "data/python/unicode.h"

namespace foxeval::lm_eval {
namespace {

// A string for messages: JSON-quoted, invalid UTF-8 replaced.
std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

size_t python_rstrip_size(std::string_view s) { return py_rstrip_size(s); }

LoglikelihoodRequest encode_pair(const Gpt2Tokenizer& tok, const std::string& context, const std::string& continuation) {
  LoglikelihoodRequest r;
  if (context.empty()) {
    // TemplateLM.loglikelihood: "BOS or EOS as context", the continuation encoded alone (with BOS).
    r.context = {tok.bos_id()};
    r.continuation = tok.encode(continuation, true, true);
  } else {
    // _encode_pair: trailing whitespace belongs to the continuation. The check for an empty
    // context came first, so an all-whitespace context is encoded as "" here: [BOS].
    const size_t keep = python_rstrip_size(context);
    const std::string ctx = context.substr(0, keep);
    const std::string cont = context.substr(keep) + continuation;
    const std::vector<int64_t> whole = tok.encode(ctx + cont, true, true);
    r.context = tok.encode(ctx, true, true);
    if (whole.size() > r.context.size())
      r.continuation.assign(whole.begin() + static_cast<std::ptrdiff_t>(r.context.size()), whole.end());
  }
  if (r.continuation.empty())
    throw Error(fmt::format("continuation {} of context {} has no token of its own (lm-eval asserts a non-empty "
                            "continuation)",
                            quoted(continuation), quoted(context.substr(0, 80))));
  return r;
}

std::vector<LoglikelihoodRequest> rolling_windows(const std::vector<int64_t>& tokens, int64_t prefix,
                                                  int64_t max_length) {
  if (max_length < 1) throw Error(fmt::format("max_length must be at least 1, got {}", max_length));
  std::vector<LoglikelihoodRequest> out;
  const int64_t n = static_cast<int64_t>(tokens.size()), L = max_length;
  if (n == 0) return out;
  auto at = [&](int64_t i) { return tokens.begin() + i; };
  // First window predicts the first min(L, n) tokens from the prefix token (its context after
  // make_disjoint_window is the prefix alone).
  const int64_t first = std::min(L, n);
  out.push_back({{prefix}, std::vector<int64_t>(at(0), at(first))});
  int64_t predicted = first;
  // Then windows of up to L predicted tokens, each with a full L-token input: context
  // tokens[end-L-1, end-pred) (make_disjoint_window drops the overlap), continuation
  // tokens[end-pred, end). end - L - 1 >= 0 here because predicted >= L (context_len = 1).
  while (predicted < n) {
    const int64_t pred = std::min(n - predicted, L);
    const int64_t end = predicted + pred;
    out.push_back({std::vector<int64_t>(at(end - L - 1), at(end - pred)), std::vector<int64_t>(at(end - pred), at(end))});
    predicted += pred;
  }
  return out;
}

std::vector<LoglikelihoodRequest> rolling_requests(const Gpt2Tokenizer& tok, const std::string& text,
                                                   int64_t max_length) {
  // token_list = tok_encode(text) (BOS first), prefix_token = prefix_token_id (BOS).
  return rolling_windows(tok.encode(text, true, true), tok.bos_id(), max_length);
}

}  // namespace foxeval::lm_eval
