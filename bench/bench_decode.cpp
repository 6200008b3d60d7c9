// `foxeval bench decode`: decode steps over decoding slots (models/generation/slot_decoder.h), eager and
// replayed as a CUDA graph, against the memory-bandwidth bound of a step; and batch-1 prefill.
//
// Bound: a decode step reads every parameter once plus every row's decoding state, so
//   bytes/step = parameters x bytes per weight + batch x slot bytes at the mean context,
//   bound tokens/s = batch / (bytes/step / copy bandwidth measured in the same run).
// Slot bytes (CausalLM::slot_bytes): the FoX family's KV cache and cumulative log forget gates;
// the recurrent families' fixed-size states.
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "models/generation/generate.h"
#include "models/generation/slot_decoder.h"
#include "models/registry.h"

namespace foxeval {
namespace {

// Seconds per decode step of `decoder`: warm-up runs, then timed runs of 16 steps.
double seconds_per_step(SlotDecoder& decoder, int64_t steps, bool cuda) {
  (void)decoder.run(std::min<int64_t>(16, steps));
  if (cuda) c10::cuda::device_synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  int64_t done = 0;
  while (done < steps) {
    const int64_t n = std::min<int64_t>(16, steps - done);
    (void)decoder.run(n);
    done += n;
  }
  if (cuda) c10::cuda::device_synchronize();
  return seconds_since(t0) / static_cast<double>(steps);
}

}  // namespace

void run_bench_decode(const BenchDecodeArgs& a) {
  const std::vector<int64_t> batches = parse_positive_list(a.batches, "--batch");
  const std::vector<int64_t> lens = parse_positive_list(a.prompt_lens, "--prompt-len");
  const bool cuda = a.run.device.rfind("cuda", 0) == 0;
  const std::string gpu = bench_device_name(a.run);
  auto model = load_model(a.model, a.run);
  const ModelInfo& info = model->info();
  const double weights = weight_bytes(info, a.run.dtype);
  const double bandwidth = cuda ? measured_copy_bandwidth(at::Device(a.run.device)) : a.bandwidth_gbs * 1e9;

  std::printf("%s (%s), %s %s, %lld decode steps timed, copy bandwidth %.0f GB/s%s\n", info.family.c_str(), a.model.c_str(),
              gpu.c_str(), a.run.dtype.c_str(), static_cast<long long>(a.new_tokens), bandwidth / 1e9,
              cuda ? " (measured)" : " (given)");
  std::printf("%6s %9s %12s %10s %10s %12s %12s %9s %8s\n", "batch", "context", "prefill_t/s", "eager_ms", "graph_ms",
              "graph_t/s", "bound_t/s", "of_bound", "speedup");
  nlohmann::json rows = nlohmann::json::array();
  std::mt19937_64 rng(a.seed);
  for (int64_t len : lens) {
    for (int64_t batch : batches) {
      std::vector<int64_t> prompt(static_cast<size_t>(len));
      for (auto& id : prompt) id = static_cast<int64_t>(rng() % static_cast<uint64_t>(info.vocab_size));
      // The decode context grows from len over the timed steps (2 warm-up runs + 2 x new_tokens).
      const int64_t capacity = len + 2 * a.new_tokens + 64;
      const double ctx = static_cast<double>(len) + a.new_tokens;
      const double state_bytes = static_cast<double>(batch) * static_cast<double>(model->slot_bytes(static_cast<int64_t>(ctx)));
      const double bound = decode_bound_tokens_per_s(weights, state_bytes, batch, bandwidth);
      nlohmann::json row = {{"batch", batch}, {"context", len}, {"steps", a.new_tokens},
                            {"weight_bytes", weights}, {"state_bytes", state_bytes},
                            {"bound_tokens_per_s", bound}};
      try {
        auto slots = model->new_slots(batch, capacity);
        if (!slots) throw Error(info.family + " has no decoding slots");
        SlotDecoder eager(*model, *slots, 16, false);
        std::unique_ptr<SlotDecoder> graph;
        if (cuda) graph = std::make_unique<SlotDecoder>(*model, *slots, 16, true);
        // Prefill once (batch 1), the same sequence in every slot.
        const auto t0 = std::chrono::steady_clock::now();
        auto state = model->new_state(1, at::Tensor());
        at::Tensor ids = at::tensor(prompt, at::kLong).view({1, len}).to(at::Device(a.run.device));
        for (int64_t s = 0; s < len; s += a.prefill_chunk)
          (void)model->forward(ids.slice(1, s, std::min(len, s + a.prefill_chunk)), state.get());
        if (cuda) c10::cuda::device_synchronize();
        const double prefill_s = seconds_since(t0);
        auto reload = [&] {
          for (int64_t b = 0; b < batch; ++b) {
            slots->load(b, *state);
            eager.set_token(b, prompt.back());
            if (graph) graph->set_token(b, prompt.back());
          }
        };
        reload();
        const double eager_s = seconds_per_step(eager, a.new_tokens, cuda);
        double graph_s = 0;
        if (graph) {
          reload();
          graph_s = seconds_per_step(*graph, a.new_tokens, cuda);
        }
        const double best = graph ? graph_s : eager_s;
        const double tps = static_cast<double>(batch) / best;
        row["prefill_tokens_per_s"] = static_cast<double>(len) / prefill_s;
        row["eager_ms_per_step"] = 1e3 * eager_s;
        if (graph) row["graph_ms_per_step"] = 1e3 * graph_s;
        row["decode_tokens_per_s"] = tps;
        row["fraction_of_bound"] = tps / bound;
        std::printf("%6lld %9lld %12.0f %10.3f %10.3f %12.1f %12.1f %8.1f%% %7.2fx\n", static_cast<long long>(batch),
                    static_cast<long long>(len), len / prefill_s, 1e3 * eager_s, 1e3 * graph_s, tps, bound,
                    100.0 * tps / bound, graph ? eager_s / graph_s : 1.0);
      } catch (const std::exception& e) {  // typically out of memory at the largest shapes
        std::string what = e.what();
        what = what.substr(0, what.find('\n'));
        row["error"] = what;
        std::printf("%6lld %9lld  failed: %s\n", static_cast<long long>(batch), static_cast<long long>(len), what.c_str());
      }
      if (cuda) c10::cuda::CUDACachingAllocator::emptyCache();
      std::fflush(stdout);
      rows.push_back(row);
    }
  }

  nlohmann::json doc = {{"gpu", gpu},
                        {"date", utc_date()},
                        {"model", a.model},
                        {"family", info.family},
                        {"num_parameters", info.num_parameters},
                        {"device", a.run.device},
                        {"dtype", a.run.dtype},
                        {"steps", a.new_tokens},
                        {"prefill_chunk", a.prefill_chunk},
                        {"bandwidth_bytes_per_s", bandwidth},
                        {"bound", "batch / ((parameters x element size + slot state bytes at the mean context) / copy bandwidth)"},
                        {"rows", rows}};
  write_bench_json(doc, a.out, "decode", gpu);
}

}  // namespace foxeval
