// lm-eval request files without a task run: `foxeval lm-eval requests` writes every request the
// tasks build (JSON lines, no model needed), and `foxeval score` answers a file of loglikelihood /
// loglikelihood_rolling requests with a model, one answer line per request line.
#pragma once
#include <cstdint>
#include <string>

#include "models/model.h"

namespace foxeval::lm_eval {

// Every request of `tasks` (a --tasks list, task_config.h) over `data` (a --data value), the first
// `limit` documents of each task (-1: all) or the first ceil(limit_fraction x documents) when
// limit_fraction > 0, as lm-eval builds them, to `out` (one JSON object per line, under the output
// lock, atomically). Prints the count on stderr.
void write_request_file(const std::string& tasks, const std::string& data, int64_t limit, double limit_fraction,
                        const std::string& out);

// `foxeval score`: lm-eval's loglikelihood / loglikelihood_rolling requests from a JSONL file,
// scored as lm-eval 0.4.4 HFLM(add_bos_token=True) with the official JSONGPT2Tokenizer would
// (hflm.h for the tokenization and its quirks), one answer line per request line.
//
// Answers: {"logprob": float, "is_greedy": bool}. lm-eval's loglikelihood_rolling returns only the
// float; here its is_greedy is the AND over the text's windows (every token of the text is the
// argmax after what precedes it), so every answer line has the same shape.
struct ScoreRequestSettings {
  std::string model, requests, out;  // --model, --requests, --out
  int64_t max_length = 16384, batch_size = 0, max_batch_tokens = 32768;
  RunOptions run;
};
void score_request_file(const ScoreRequestSettings& s);

}  // namespace foxeval::lm_eval
