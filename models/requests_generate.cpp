// generate_until: requests ordered by prompt length, batched, handed to generate().
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "data/errors.h"
#include "models/requests.h"

namespace foxeval {

GenerateStats generate_until(CausalLM& model, const std::vector<GenerationRequest>& requests,
                             const GenerateUntilOptions& options,
                             const std::function<void(size_t, const GenerationAnswer&)>& on_done) {
  if (options.max_batch < 1) throw Error(fmt::format("generate: max batch {} must be >= 1", options.max_batch));
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].prompt.empty()) throw Error(fmt::format("generate: request {} has an empty prompt", i));
    if (requests[i].max_new_tokens < 0) throw Error(fmt::format("generate: request {} asks for {} new tokens", i, requests[i].max_new_tokens));
  }
  // One batch shares max_new_tokens and stop ids (generate()'s options); inside that, prompts of
  // similar length go together so left padding stays small.
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const GenerationRequest &x = requests[a], &y = requests[b];
    if (x.max_new_tokens != y.max_new_tokens) return x.max_new_tokens < y.max_new_tokens;
    if (x.stop_ids != y.stop_ids) return x.stop_ids < y.stop_ids;
    return x.prompt.size() > y.prompt.size();  // longest first: the largest batch shape is met first
  });

  GenerateStats total;
  size_t start = 0;
  while (start < order.size()) {
    const GenerationRequest& first = requests[order[start]];
    // The first (longest) prompt sets the padded width of the batch.
    const int64_t width = static_cast<int64_t>(first.prompt.size()) + first.max_new_tokens;
    size_t end = start + 1;
    while (end < order.size() && static_cast<int64_t>(end - start) < options.max_batch &&
           width * static_cast<int64_t>(end - start + 1) <= options.max_batch_tokens &&
           requests[order[end]].max_new_tokens == first.max_new_tokens &&
           requests[order[end]].stop_ids == first.stop_ids)
      ++end;
    std::vector<std::vector<int64_t>> prompts;
    for (size_t k = start; k < end; ++k) prompts.push_back(requests[order[k]].prompt);
    GenerateOptions opt;
    opt.max_new_tokens = first.max_new_tokens;
    opt.stop_ids = first.stop_ids;
    opt.prefill_chunk = options.prefill_chunk;
    GenerateStats stats;
    std::vector<Generation> out = generate(model, prompts, opt, nullptr, &stats);
    total.prefill_seconds += stats.prefill_seconds;
    total.decode_seconds += stats.decode_seconds;
    total.decode_steps += stats.decode_steps;
    total.prompt_tokens += stats.prompt_tokens;
    for (size_t k = start; k < end; ++k) {
      Generation& g = out[k - start];
      on_done(order[k], GenerationAnswer{std::move(g.ids), g.reason});
    }
    start = end;
  }
  return total;
}

}  // namespace foxeval
