#include "tasks/run/generation_loop.h"

#include <c10/core/Device.h>
#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "data/errors.h"
#include "tasks/run/generation_progress.h"

namespace foxeval {

GenerationLoop::GenerationLoop(std::string task_, GenerateUntilOptions generation_, int64_t stop_after_,
                               const std::string& device)
    : task(std::move(task_)),
      per_batch(generation_batch(generation_)),
      stop_after(stop_after_),
      generation(std::move(generation_)),
      cpu(!c10::Device(device).is_cuda()) {}

void run_generation_loop(
    RecordRunner& runner, CausalLM& model, GenerationLoop& loop, const std::function<OpenTokens(size_t)>& open,
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
  GenerationTotals& totals = loop.totals;  // its requests: the items finished (--stop-after counts them)
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
      ++totals.requests;
      totals.new_tokens += static_cast<int64_t>(answer.ids.size());
      const size_t i = batch[k];
      runner.finish(runner.items()[i].id, record(i, r, answer), static_cast<double>(r.prompt.size() + answer.ids.size()));
      if (runner.should_stop() || (loop.stop_after >= 0 && totals.requests >= loop.stop_after)) runner.interrupt();
    });
    totals.stats.prefill_seconds += st.prefill_seconds;
    totals.stats.decode_seconds += st.decode_seconds;
    totals.stats.decode_steps += st.decode_steps;
    totals.stats.prompt_tokens += st.prompt_tokens;
  }
}

namespace {

const char* const kCountKeys[] = {"requests", "prompt_tokens", "new_tokens", "decode_steps"};
const char* const kSecondKeys[] = {"prefill_s", "decode_s"};

// Two processes' generation counts added up (null + x = x); a count that is not one names its field.
nlohmann::json add_generation_counts(const nlohmann::json& a, const nlohmann::json& b) {
  for (const nlohmann::json* c : {&a, &b}) {
    if (c->is_null()) continue;
    if (!c->is_object()) throw Error("generation counts must be an object");
    for (const char* k : kCountKeys)
      if (!c->contains(k) || !c->at(k).is_number_integer() || c->at(k).get<int64_t>() < 0)
        throw Error(fmt::format("generation counts: {} must be a non-negative integer", k));
    for (const char* k : kSecondKeys)
      if (!c->contains(k) || !c->at(k).is_number() || !(c->at(k).get<double>() >= 0))
        throw Error(fmt::format("generation counts: {} must be a non-negative number", k));
  }
  if (a.is_null()) return b;
  if (b.is_null()) return a;
  nlohmann::json sum = nlohmann::json::object();
  for (const char* k : kCountKeys)
    sum[k] = add_counts(a[k].get<int64_t>(), b[k].get<int64_t>(), fmt::format("generation counts: {}", k));
  for (const char* k : kSecondKeys) sum[k] = a[k].get<double>() + b[k].get<double>();
  return sum;
}

nlohmann::json generation_header(const nlohmann::json& counts) {
  nlohmann::json h = counts;
  auto rate = [&](const char* tokens, const char* seconds) {
    const double s = counts[seconds].get<double>();
    return s > 0 ? nlohmann::json(static_cast<double>(counts[tokens].get<int64_t>()) / s) : nlohmann::json(nullptr);
  };
  h["prefill_tokens_per_s"] = rate("prompt_tokens", "prefill_s");
  h["decode_tokens_per_s"] = rate("new_tokens", "decode_s");
  h["counted"] = "the requests this run answered on every process (items an earlier, resumed run finished are not "
                 "counted); seconds added up over the processes, so a rate is one process's";
  return h;
}

// `foxeval merge` adds the parts' counts up by this kind (tasks/run/result_file.cpp).
const bool generation_kind_registered = register_run_stats_kind({"generation", add_generation_counts, generation_header});

}  // namespace

RunStatsSource generation_stats(const GenerationTotals* totals) {
  return {"generation", [totals] {
            return nlohmann::json{{"requests", totals->requests},
                                  {"prompt_tokens", totals->stats.prompt_tokens},
                                  {"new_tokens", totals->new_tokens},
                                  {"decode_steps", totals->stats.decode_steps},
                                  {"prefill_s", totals->stats.prefill_seconds},
                                  {"decode_s", totals->stats.decode_seconds}};
          }};
}

RunnerSettings with_generation_stats(RunnerSettings rs, const GenerationLoop& loop) {
  rs.stats.push_back(generation_stats(&loop.totals));
  return rs;
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
