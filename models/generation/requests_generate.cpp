// generate_until: the one generation engine, for every generation task and `foxeval generate`.
//
// Requests are grouped by capacity bucket (prompt + new tokens rounded up on a geometric grid)
// and run longest bucket first. A bucket gets S decoding slots (model.h's SlotState) of its
// capacity: S from the device memory left after the weights (or --max-batch-tokens), at most
// max_batch. Each request's prompt is prefilled alone (batch 1, in chunks), its first token chosen,
// and its state moved into a free slot; the slots then decode together through SlotDecoder (a
// CUDA graph per bucket on the GPU). A row that stops (EOS or its max_new_tokens) frees its slot
// for the next request (continuous batching); prefill is interleaved with decode steps so the
// running rows keep going while a long prompt is read.
//
// What a request's answer depends on: its own prompt (prefilled alone), and the slot count S of
// its bucket (the M of the decode GEMMs). S depends on the model, the device, the options and the
// bucket, never on which requests run beside it, in what order, on which shard or whether the
// run was resumed. (On a GPU in bf16, GEMMs of another M may round differently: README.)
// An out-of-memory error halves S and retries the bucket's unfinished requests.
//
// Greedy decode runs steps_per_look steps a look (a CUDA graph on the GPU); sampling picks each
// token on the host from the step's logits, with the request's own generator (seeded by its index,
// so its draws never depend on its neighbours, and a retried request draws the same again).
// Without a cache (use_cache false) every token comes from a forward over the whole sequence, with
// the same pick and the same stop rules: the reference the slots are tested against.
// The stop rules (stop ids, stop strings, max_new_tokens) live in accept() only.
#include <ATen/Functions.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <random>

#include "data/errors.h"
#include "data/tokenizer.h"
#include "models/layers/layers.h"
#include "models/requests.h"
#include "models/generation/slot_decoder.h"

namespace foxeval {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Device bytes generation may fill: the options' share of the GPU's memory less what is allocated
// now (the weights). 0 off the GPU (no memory plan there).
int64_t memory_budget(const at::Device& device, double fraction) {
  if (!device.is_cuda()) return 0;
  const int index = device.has_index() ? device.index() : c10::cuda::current_device();
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) throw Error("generate: cannot read the GPU's properties");
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(index);
  const int64_t in_use = stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].current;
  return static_cast<int64_t>(static_cast<double>(prop.totalGlobalMem) * fraction) - in_use;
}

// Capacity of a sequence of `total` tokens: the next value m * 2^k (at least 256) above total + one
// run's overshoot. Below 16384 tokens m runs over 8..15 (caches waste under 1/8, few buckets);
// from 16384 on over 32..63 (under 1/32): there caches are gigabytes a slot, slots are few and
// memory is what binds (16 slots of a 32k prompt fit an 80 GB GPU only with the finer grid).
int64_t bucket_capacity(int64_t total, int64_t steps_per_look) {
  const int64_t need = total + steps_per_look;
  const int64_t m_min = need >= 16384 ? 32 : 8;
  int64_t step = 32;
  while (step * 2 * m_min < need) step *= 2;
  return std::max<int64_t>(256, (need + step - 1) / step * step);
}

// The slots of a bucket of `capacity` holding `queued` requests, given `budget` (memory_budget()).
SlotPlan bucket_plan(CausalLM& model, const at::Device& device, int64_t budget, int64_t capacity, int64_t queued,
                     const GenerateUntilOptions& opt) {
  SlotPlan plan;
  plan.capacity = capacity;
  plan.slot_bytes = model.slot_bytes(capacity);
  int64_t s = opt.max_batch;
  if (opt.max_batch_tokens > 0) s = std::min(s, std::max<int64_t>(1, opt.max_batch_tokens / capacity));
  if (device.is_cuda() && opt.max_batch_tokens <= 0) {
    // What is left after the weights, less ~2 GiB of activations and, where the family prefills
    // into a state of its own (SlotState::prefill_state gives none), that state.
    const int64_t per_slot = std::max<int64_t>(1, plan.slot_bytes);
    const int64_t prefill_state = model.prefills_in_slot() ? 0 : per_slot;
    const int64_t room = budget - prefill_state - (int64_t(2) << 30);
    plan.memory_slots = std::max<int64_t>(0, room / per_slot);
    s = std::min(s, std::max<int64_t>(1, plan.memory_slots));
  }
  if (!device.is_cuda()) s = std::min<int64_t>(s, queued);  // the CPU pays for idle rows
  plan.slots = std::max<int64_t>(1, s);
  return plan;
}

// A request in flight: its answer so far and its sampling generator.
struct Active {
  size_t request = 0;
  GenerationAnswer answer;
  std::mt19937_64 rng;
};

class Scheduler {
 public:
  Scheduler(CausalLM& model, const std::vector<GenerationRequest>& requests, const GenerateUntilOptions& options,
            const std::function<void(size_t, const GenerationAnswer&)>& on_done)
      : model_(model),
        requests_(requests),
        opt_(options),
        on_done_(on_done),
        device_(model.lm_head().device()),
        budget_(memory_budget(device_, options.gpu_memory_fraction)) {}

  GenerateStats run() {
    // Buckets, longest first; inside a bucket the longest prompt first.
    std::map<int64_t, std::vector<size_t>, std::greater<>> buckets;
    for (size_t i = 0; i < requests_.size(); ++i) {
      const GenerationRequest& r = requests_[i];
      if (r.max_new_tokens == 0) {  // nothing to generate: no prefill either
        on_done_(i, GenerationAnswer{});
        continue;
      }
      if (!opt_.use_cache) {
        run_uncached(i);
        continue;
      }
      buckets[bucket_capacity(static_cast<int64_t>(r.prompt.size()) + r.max_new_tokens, opt_.steps_per_look)].push_back(i);
    }
    for (auto& [capacity, members] : buckets) {
      std::stable_sort(members.begin(), members.end(),
                       [&](size_t a, size_t b) { return requests_[a].prompt.size() > requests_[b].prompt.size(); });
      run_bucket(capacity, std::deque<size_t>(members.begin(), members.end()));
    }
    return stats_;
  }

 private:
  void run_bucket(int64_t capacity, std::deque<size_t> queue) {
    int64_t S = bucket_plan(model_, device_, budget_, capacity, static_cast<int64_t>(queue.size()), opt_).slots;
    for (;;) {
      try {
        decode_bucket(capacity, S, queue);
        stats_.min_slots = stats_.min_slots == 0 ? S : std::min(stats_.min_slots, S);
        return;
      } catch (const c10::OutOfMemoryError& e) {
        if (S == 1)
          throw Error(fmt::format("generate: out of GPU memory with one slot of {} tokens: {}", capacity,
                                  std::string(e.what()).substr(0, 200)));
        const int64_t smaller = std::max<int64_t>(1, S / 2);
        std::fprintf(stderr, "[generate] out of memory with %lld slots of %lld tokens; retrying with %lld\n",
                     static_cast<long long>(S), static_cast<long long>(capacity), static_cast<long long>(smaller));
        S = smaller;
        ++stats_.oom_backoffs;
        c10::cuda::CUDACachingAllocator::emptyCache();
      }
    }
  }

  // Runs `queue` (request indices) through S slots; finished requests leave the queue, so an
  // exception leaves exactly the unfinished ones in it (those in flight are put back first).
  void decode_bucket(int64_t capacity, int64_t S, std::deque<size_t>& queue) {
    std::unique_ptr<SlotState> slots = model_.new_slots(S, capacity);
    const bool greedy = opt_.sampling.greedy();
    SlotDecoder decoder(model_, *slots, opt_.steps_per_look, opt_.cuda_graphs && greedy);
    for (int64_t s = 0; s < S; ++s) slots->clear(s);  // the decoder's warm-up step touched them
    std::vector<std::optional<Active>> rows(static_cast<size_t>(S));
    auto requeue = [&] {  // in flight -> back to the front of the queue, in their order
      for (auto it = rows.rbegin(); it != rows.rend(); ++it)
        if (*it) queue.push_front((*it)->request), it->reset();
    };
    try {
      for (;;) {
        // Fill free slots: while at least half the slots were decoding before this fill, prefill
        // only ~prefill_per_look prompt tokens before the next decode run (the running rows are
        // not starved); with fewer running (a bucket's start), fill on: idle slots waste every
        // decode step, and rows prefilled now have not started, so nothing waits on them.
        int64_t prefilled = 0;
        const int64_t running = active_count(rows);
        for (int64_t s = 0; s < S && !queue.empty(); ++s) {
          if (rows[s]) continue;
          if (prefilled >= opt_.prefill_per_look && 2 * running >= S) break;
          const size_t i = queue.front();
          prefilled += static_cast<int64_t>(requests_[i].prompt.size());
          Active a = start(i);
          auto [state, first] = prefill(a, slots->prefill_state(s));
          queue.pop_front();
          if (accept(a, first)) {
            finish(a);
            --s;  // the slot is still free
            continue;
          }
          slots->load(s, *state);
          decoder.set_token(s, first);
          rows[s] = std::move(a);
        }
        if (prefilled > 0) report();
        if (!any_active(rows)) {
          if (queue.empty()) return;
          continue;
        }
        int64_t steps = 1;
        for (const auto& r : rows)
          if (r) steps = std::max(steps, requests_[r->request].max_new_tokens - static_cast<int64_t>(r->answer.ids.size()));
        steps = greedy ? std::min(steps, opt_.steps_per_look) : 1;  // sampling: the host picks every token
        const auto t0 = Clock::now();
        const std::vector<int64_t> tokens =
            greedy ? decoder.run(steps) : decoder.run_sampled([&](int64_t s, const float* logits, int64_t vocab) {
              return rows[s] ? pick(*rows[s], logits, vocab) : int64_t(0);  // an idle row's token is never read
            });
        stats_.decode_seconds += seconds_since(t0);
        stats_.decode_steps += steps;
        for (int64_t s = 0; s < S; ++s) {
          if (!rows[s]) continue;
          for (int64_t j = 0; j < steps; ++j)
            if (accept(*rows[s], tokens[s * steps + j])) {
              Active done = std::move(*rows[s]);
              rows[s].reset();
              slots->clear(s);
              finish(done);
              break;
            }
        }
        report();
      }
    } catch (...) {
      requeue();
      throw;
    }
  }

  static int64_t active_count(const std::vector<std::optional<Active>>& rows) {
    return std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.has_value(); });
  }
  static bool any_active(const std::vector<std::optional<Active>>& rows) {
    return std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.has_value(); });
  }

  // A request's fresh answer and generator (seeded by its index alone: Sampling).
  Active start(size_t i) const {
    Active a;
    a.request = i;
    const uint64_t seed = opt_.sampling.seed, stream = opt_.sampling.first_index + i;
    std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(stream),
                      static_cast<uint32_t>(stream >> 32)};
    a.rng.seed(seq);
    return a;
  }

  // The row's next token from its fp32 logits on the host (sampling).
  int64_t pick(Active& a, const float* logits, int64_t vocab) const {
    const Sampling& p = opt_.sampling;
    return choose_token(logits, vocab, p.temperature, p.top_p, a.rng, p.top_k);
  }

  // The row's next token from the last position of final-norm hidden states [1, T, hidden]: the
  // argmax on the device (greedy; a host sync) or a host pick.
  int64_t pick_last(Active& a, const at::Tensor& hidden) const {
    at::Tensor logits = foxeval::linear(hidden.select(1, hidden.size(1) - 1), model_.lm_head()).to(at::kFloat);
    if (opt_.sampling.greedy()) return at::argmax(logits, -1).item<int64_t>();
    at::Tensor cpu = logits.to(at::kCPU).contiguous();
    return pick(a, cpu.data_ptr<float>(), cpu.size(-1));
  }

  // Batch-1 prefill in chunks into `state` (a free slot's own memory: SlotState::prefill_state)
  // or, when null, a state of its own; returns the state and the first generated token.
  std::pair<std::unique_ptr<DecodeState>, int64_t> prefill(Active& a, std::unique_ptr<DecodeState> state) {
    const auto t0 = Clock::now();
    const std::vector<int64_t>& prompt = requests_[a.request].prompt;
    const int64_t L = static_cast<int64_t>(prompt.size());
    at::Tensor ids = at::tensor(prompt, at::kLong).view({1, L}).to(device_);
    if (!state) {
      state = model_.new_state(1, at::Tensor());
      state->reserve(L);
    }
    const int64_t chunk = opt_.prefill_chunk > 0 ? opt_.prefill_chunk : L;
    at::Tensor hidden;
    for (int64_t s = 0; s < L; s += chunk) hidden = model_.forward(ids.slice(1, s, std::min(L, s + chunk)), state.get());
    const int64_t first = pick_last(a, hidden);  // waits for the prefill
    stats_.prefill_seconds += seconds_since(t0);
    stats_.prompt_tokens += L;
    return {std::move(state), first};
  }

  // The reference path (use_cache false): request i alone, every token from a forward over the
  // whole sequence without a state.
  void run_uncached(size_t i) {
    const auto t0 = Clock::now();
    Active a = start(i);
    std::vector<int64_t> seq = requests_[i].prompt;
    stats_.prompt_tokens += static_cast<int64_t>(seq.size());
    for (;;) {
      at::Tensor ids = at::tensor(seq, at::kLong).view({1, static_cast<int64_t>(seq.size())}).to(device_);
      const int64_t token = pick_last(a, model_.forward(ids, nullptr));
      ++stats_.decode_steps;
      if (accept(a, token)) break;
      seq.push_back(token);
    }
    stats_.decode_seconds += seconds_since(t0);
    finish(a);
    report();
  }

  // Takes `token` as the row's next token: stop ids, stop strings and the length limit, the one
  // place they are decided. True when the request is finished.
  bool accept(Active& a, int64_t token) {
    const GenerationRequest& r = requests_[a.request];
    ++progress_.new_tokens;
    if (std::find(r.stop_ids.begin(), r.stop_ids.end(), token) != r.stop_ids.end()) {
      a.answer.reason = StopReason::eos;
      a.answer.stop = std::to_string(token);
      return true;
    }
    a.answer.ids.push_back(token);
    if (!r.stop_strings.empty() && stopped_by_string(a, r.stop_strings)) return true;
    if (static_cast<int64_t>(a.answer.ids.size()) >= r.max_new_tokens) {
      a.answer.reason = StopReason::length;
      return true;
    }
    return false;
  }

  // Whether the decoded answer holds one of `stops`; if so the earliest one ends it: the text is
  // cut before it, and the ids end with this token. (accept() checks after every token, so no
  // shorter prefix of the ids held a stop: this is the shortest one whose text holds it.)
  bool stopped_by_string(Active& a, const std::vector<std::string>& stops) const {
    const std::string text = opt_.tokenizer->decode(a.answer.ids);
    size_t best = std::string::npos;
    const std::string* which = nullptr;
    for (const std::string& s : stops) {
      const size_t pos = text.find(s);
      if (pos != std::string::npos && (best == std::string::npos || pos < best)) best = pos, which = &s;
    }
    if (!which) return false;
    a.answer.reason = StopReason::stop_string;
    a.answer.stop = *which;
    a.answer.text = text.substr(0, best);
    return true;
  }

  void finish(Active& a) {
    if (opt_.tokenizer && a.answer.reason != StopReason::stop_string) a.answer.text = opt_.tokenizer->decode(a.answer.ids);
    ++progress_.requests_done;
    on_done_(a.request, a.answer);
  }

  void report() {
    if (!opt_.on_progress) return;
    progress_.stats = stats_;
    opt_.on_progress(progress_);
  }

  CausalLM& model_;
  const std::vector<GenerationRequest>& requests_;
  const GenerateUntilOptions& opt_;
  const std::function<void(size_t, const GenerationAnswer&)>& on_done_;
  at::Device device_;
  int64_t budget_ = 0;  // memory_budget(): device bytes the slots may take (CUDA)
  GenerateStats stats_;
  GenerationProgress progress_;
};

}  // namespace

SlotPlan plan_slots(CausalLM& model, int64_t total_tokens, int64_t queued, const GenerateUntilOptions& options) {
  const at::Device device = model.lm_head().device();
  return bucket_plan(model, device, memory_budget(device, options.gpu_memory_fraction),
                     bucket_capacity(total_tokens, options.steps_per_look), queued, options);
}

GenerateStats generate_until(CausalLM& model, const std::vector<GenerationRequest>& requests,
                             const GenerateUntilOptions& options,
                             const std::function<void(size_t, const GenerationAnswer&)>& on_done) {
  if (options.max_batch < 1) throw Error(fmt::format("generate: max batch {} must be >= 1", options.max_batch));
  if (options.steps_per_look < 1) throw Error(fmt::format("generate: steps per look {} must be >= 1", options.steps_per_look));
  if (!(options.gpu_memory_fraction > 0 && options.gpu_memory_fraction <= 1))
    throw Error(fmt::format("generate: GPU memory fraction {} must be in (0, 1]", options.gpu_memory_fraction));
  const Sampling& p = options.sampling;
  // NaN fails every comparison: check for what is allowed, not for what is not.
  if (!std::isfinite(p.temperature) || p.temperature < 0 || (p.temperature > 0 && !std::isfinite(1.0 / p.temperature)))
    throw Error(fmt::format("generate: temperature {} must be a finite number >= 0", p.temperature));
  if (!p.greedy() && !(p.top_p > 0 && p.top_p <= 1)) throw Error(fmt::format("generate: top_p {} must be in (0, 1]", p.top_p));
  if (p.top_k < 0) throw Error(fmt::format("generate: top_k {} must be >= 0", p.top_k));
  const int64_t vocab = model.lm_head().size(0);
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].prompt.empty()) throw Error(fmt::format("generate: request {} has an empty prompt", i));
    if (requests[i].max_new_tokens < 0 || requests[i].max_new_tokens > (int64_t(1) << 20))
      throw Error(fmt::format("generate: request {} asks for {} new tokens; allowed: 0..{}", i, requests[i].max_new_tokens,
                              int64_t(1) << 20));
    for (int64_t id : requests[i].prompt)
      if (id < 0 || id >= vocab)
        throw Error(fmt::format("generate: request {} holds id {}, outside the model's vocabulary [0, {})", i, id, vocab));
    if (!requests[i].stop_strings.empty() && !options.tokenizer)
      throw Error(fmt::format("generate: request {} has stop strings, which need a tokenizer", i));
    for (const std::string& s : requests[i].stop_strings)
      if (s.empty()) throw Error(fmt::format("generate: request {} has an empty stop string", i));
  }
  if (requests.empty()) return {};
  if (options.use_cache && !model.has_slots())
    throw Error(fmt::format("generate: {} has no decoding slots (CausalLM::new_slots), which generation runs on",
                            model.info().family));
  return Scheduler(model, requests, options, on_done).run();
}

}  // namespace foxeval
