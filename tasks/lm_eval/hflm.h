// lm-evaluation-harness 0.4.4 `HFLM` (add_bos_token=True, the official run_lm_eval.py): strings to
// token requests, as its TemplateLM.loglikelihood/_encode_pair and HFLM.loglikelihood_rolling make
// them with the official JSONGPT2Tokenizer. The engine (models/requests.h) scores the requests.
//
// What HFLM + this tokenizer really do (quirks kept on purpose, they change the numbers):
// - Every tok_encode call passes add_special_tokens=True (HFLM: `False or self.add_bos_token`),
//   and GPT2Tokenizer(add_bos_token=True) then puts BOS 50256 first in EVERY encoding.
// - encode_pair, non-empty context: trailing Python-whitespace of the context moves to the front
//   of the continuation; whole = encode(context + continuation), ctx = encode(context) (both with
//   BOS), continuation = whole[len(ctx):]. A BPE merge across the boundary is not undone: the
//   split is by the context's token count, as lm-eval slices.
// - encode_pair, empty context: context = [prefix_token_id] = [BOS], continuation =
//   encode(continuation), which starts with BOS too: the answer includes log p(BOS | BOS).
// - rolling: the token list is encode(text) = [BOS] + text tokens and the prefix token is BOS again,
//   so the first window is context [BOS], continuation [BOS, t1, ...]: the model sees BOS BOS and
//   the text's log-likelihood includes log p(BOS | BOS). Later windows carry no BOS.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "data/tokenizer.h"
#include "models/requests.h"

namespace foxeval::lm_eval {

// TemplateLM.loglikelihood's encoding of one (context, continuation) request. Throws foxeval::Error
// when the continuation gets no token (lm-eval asserts len(continuation_enc) > 0).
LoglikelihoodRequest encode_pair(const Gpt2Tokenizer& tok, const std::string& context, const std::string& continuation);

// loglikelihood_rolling: the disjoint windows lm-eval scores (utils.get_rolling_token_windows with
// context_len=1, then make_disjoint_window); the text's logprob is the sum of their answers.
std::vector<LoglikelihoodRequest> rolling_requests(const Gpt2Tokenizer& tok, const std::string& text, int64_t max_length);

// The same windows for a token list already made (exposed for tests): `prefix` first.
std::vector<LoglikelihoodRequest> rolling_windows(const std::vector<int64_t>& tokens, int64_t prefix, int64_t max_length);

// Byte length of `s` after Python's str.rstrip() (no argument: Unicode whitespace as str.isspace).
size_t python_rstrip_size(std::string_view s);

}  // namespace foxeval::lm_eval
