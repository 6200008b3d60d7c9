#include "tasks/run/generation_loop.h"

#include <c10/core/Device.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "tasks/run/generation_progress.h"

namespace foxeval {

GenerationLoop::GenerationLoop(std::string task_, GenerateUntilOptions generation_, int64_t stop_after_,
                               const std::string& device)
    : task(std::move(task_)),
      per_batch(generation_batch(generation_)),
      stop_after(stop_after_),
      generation(std::move(generation_)),
      cpu(!c10::Device(device).is_cuda()) {}

GenerateStats run_generation_loop(
    RecordRunner& runner, CausalLM& model, const GenerationLoop& loop, const std::function<OpenTokens(size_t)>& open,
    const std::function<GenerationRequest(size_t)>& request,
    const std::function<nlohmann::json(size_t, const GenerationRequest&, const GenerationAnswer&)>& record) {
  int64_t open_prompt = 0, open_new = 0;
  for (size_t i : runner.todo()) {
    const OpenTokens t = open(i);
    open_prompt += t.prompt;
    open_new += t.max_new;
  }
  GenerationMeter meter(loop.task, loop.unit, static_cast<int64_t>(runner.todo().size()), open_prompt, open_new, loop.cpu,
                        loop.shorten, runner.rank());
  if (loop.stop_after == 0) runner.interrupt();
  GenerateUntilOptions generation = loop.generation;
  GenerateStats total;
  int64_t finished = 0;
  for (;;) {
    if (runner.should_stop()) runner.interrupt();
    const std::vector<size_t> batch = runner.claim_batch(std::max<size_t>(1, loop.per_batch));
    if (batch.empty()) break;
    std::vector<GenerationRequest> requests;
    requests.reserve(batch.size());
    for (size_t i : batch) requests.push_back(request(i));
    generation.on_progress = [&runner, progress = meter.next_call()](const GenerationProgress& p) {
      progress(p);
      if (runner.should_stop()) runner.interrupt();
    };
    const GenerateStats st = generate_until(model, requests, generation, [&](size_t k, const GenerationAnswer& answer) {
      const GenerationRequest& r = requests[k];
      // A stop token took a step too: the meter counts it against the bound.
      meter.request_done(static_cast<int64_t>(answer.ids.size()) + (answer.reason == StopReason::eos ? 1 : 0),
                         r.max_new_tokens);
      const size_t i = batch[k];
      runner.finish(runner.items()[i].id, record(i, r, answer), static_cast<double>(r.prompt.size() + answer.ids.size()));
      ++finished;
      if (runner.should_stop() || (loop.stop_after >= 0 && finished >= loop.stop_after)) runner.interrupt();
    });
    total.prefill_seconds += st.prefill_seconds;
    total.decode_seconds += st.decode_seconds;
    total.decode_steps += st.decode_steps;
    total.prompt_tokens += st.prompt_tokens;
  }
  return total;
}

size_t generation_batch(const GenerateUntilOptions& generation) {
  return 4 * static_cast<size_t>(std::max<int64_t>(1, generation.max_batch));
}

bool hflm_left_truncate(std::vector<int64_t>& ids, int64_t max_length, int64_t max_gen_toks) {
  if (max_length <= 0 || static_cast<int64_t>(ids.size()) <= max_length - max_gen_toks) return false;
  ids.erase(ids.begin(), ids.end() - (max_length - max_gen_toks));
  return true;
}

}  // namespace foxeval
