// Decoding slots on the GPU (every case returns early with a message where CUDA is unavailable,
// as in CI): the decode kernel with per-row key counts (kv_len) against the exact torch path on
// each row's keys alone, CUDA-graph decoding against eager decoding, token for token, for
// the seven reference fixtures in bf16, and the scheduler backing off (halving its slots) when the
// GPU runs out of memory.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "data/safetensors.h"
#include "kernels/forgetting_attention.h"
#include "models/registry.h"
#include "models/requests.h"
#include "models/generation/slot_decoder.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

std::vector<int64_t> row_ids(const at::Tensor& t, int64_t a, int64_t b) {
  at::Tensor c = t.slice(0, a, b).to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

TEST_CASE("forgetting attention cuda: kv_len decode equals each row's keys alone") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(3);
  const auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  for (int64_t D : {64, 128}) {
    const int64_t B = 4, H = 4, Hkv = 2, C = 3000;
    const std::vector<int64_t> lens{1, 700, 2999, 3000};
    at::Tensor q = at::randn({B, H, 1, D}, opts), k = at::randn({B, Hkv, C, D}, opts), v = at::randn({B, Hkv, C, D}, opts);
    at::Tensor c = at::cumsum(at::log_sigmoid(at::randn({B, H, C}, opts.dtype(at::kFloat)) + 3.0), -1);
    AttentionArgs a;
    a.q = q, a.k = k, a.v = v, a.cum_log_fgate = c;
    a.kv_len = at::tensor(lens, at::kLong).to(at::kCUDA);
    REQUIRE(forgetting_attention_cuda_supports(a));
    at::Tensor got = forgetting_attention_cuda(a).to(at::kFloat);
    at::Tensor via_torch = forgetting_attention_torch(a).to(at::kFloat);  // the masked full-capacity path
    for (int64_t b = 0; b < B; ++b) {
      AttentionArgs r;
      const int64_t n = lens[b];
      r.q = q.slice(0, b, b + 1), r.k = k.slice(0, b, b + 1).slice(2, 0, n), r.v = v.slice(0, b, b + 1).slice(2, 0, n);
      r.cum_log_fgate = c.slice(0, b, b + 1).slice(2, 0, n).contiguous();
      at::Tensor want = forgetting_attention_torch(r).to(at::kFloat)[0];
      INFO("D " << D << " row " << b << " keys " << n);
      // bf16 output rounding (2^-8 relative) on values of size ~1: measured <= 8e-3.
      CHECK((got[b] - want).abs().max().item<double>() < 2e-2);
      CHECK((via_torch[b] - want).abs().max().item<double>() < 1e-5);
    }
  }
}

TEST_CASE("decode slots cuda: CUDA-graph decoding equals eager decoding, token for token (seven families, bf16)") {
  SKIP_WITHOUT_CUDA();
  for (const char* name : {"fox_pro", "fox_llama", "transformer_pro", "transformer_llama", "mamba2", "hgrn2", "delta_net"}) {
    INFO(name);
    const std::string dir = test::source_path(std::string("tests/fixtures/official/") + name);
    SafetensorsFile ref(dir + "/reference.safetensors");
    at::Tensor input = ref.read("input_ids");
    auto model = load_model(dir, RunOptions{"cuda", "bfloat16"});
    const std::vector<std::vector<int64_t>> prompts{row_ids(input[0], 0, 50), row_ids(input[1], 0, 13), row_ids(input[1], 20, 90)};
    std::vector<std::vector<int64_t>> tokens;
    for (bool graph : {false, true}) {
      auto slots = model->new_slots(4, 160);
      SlotDecoder decoder(*model, *slots, 16, graph);
      CHECK(decoder.graphed() == graph);
      for (int64_t s = 0; s < 4; ++s) slots->clear(s);
      for (size_t i = 0; i < prompts.size(); ++i) {
        auto st = model->new_state(1, at::Tensor());
        (void)model->forward(at::tensor(prompts[i], at::kLong).view({1, -1}).to(at::kCUDA), st.get());
        slots->load(static_cast<int64_t>(i), *st);
        decoder.set_token(static_cast<int64_t>(i), prompts[i].back());
      }
      std::vector<int64_t> all;  // rows 0-2 (row 3 is idle: its tokens mean nothing)
      for (int run = 0; run < 4; ++run) {
        std::vector<int64_t> t = decoder.run(16);
        all.insert(all.end(), t.begin(), t.begin() + 3 * 16);
      }
      tokens.push_back(all);
    }
    CHECK(tokens[0] == tokens[1]);
  }
}

namespace {

// Caps the CUDA caching allocator of `device` at `fraction` of the GPU's memory while alive, so
// that an allocation beyond it raises c10::OutOfMemoryError (a real out-of-memory to the caller).
struct AllocatorCap {
  c10::DeviceIndex device;
  AllocatorCap(double fraction, c10::DeviceIndex d) : device(d) {
    c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, device);
  }
  ~AllocatorCap() { c10::cuda::CUDACachingAllocator::setMemoryFraction(1.0, device); }
};

// A reference fixture (fox_pro by default) with one head of 64 (its weights; the per-head rows of
// the forget gate and shift projections cut to the first head): the GPU's attention kernels
// (head sizes 64 and 128) and the fused decode step (kernels/fox_decode.h) take it, where the
// fixtures' four heads of 16 take the torch paths.
struct OneHeadFox {
  std::string dir = test::temp_dir("slots-one-head");
  explicit OneHeadFox(const std::string& name = "fox_pro") {
    const std::string src = test::source_path("tests/fixtures/official/" + name);
    nlohmann::json config = nlohmann::json::parse(std::ifstream(src + "/config.json"));
    const int64_t heads = config["num_heads"].get<int64_t>();
    config["num_heads"] = 1;
    if (config.contains("num_kv_heads") && !config["num_kv_heads"].is_null()) config["num_kv_heads"] = 1;
    std::ofstream(dir + "/config.json") << config.dump(1);
    SafetensorsFile f(src + "/model.safetensors");
    std::map<std::string, at::Tensor> tensors;
    for (const auto& [name, e] : f.entries()) {
      at::Tensor t = f.read(name);
      const bool per_head = name.find("fgate_proj") != std::string::npos || name.find("shift_proj") != std::string::npos;
      if (per_head) {
        REQUIRE(t.size(0) == heads);
        t = t.slice(0, 0, 1).contiguous();
      }
      tensors[name] = t;
    }
    test::write_safetensors(dir + "/model.safetensors", tensors);
  }
  ~OneHeadFox() { test::remove_tree(dir); }
};

// Teacher-forced decode steps on two slots (prompts of 30 and 11 tokens, then 8 given tokens
// each): the final hidden states [8, 2, hidden] fp32, on slots or, with `slots` false, on one
// decoding state per row (the path without the fused step).
at::Tensor forced_decode(CausalLM& model, const at::Tensor& input, bool slots) {
  const std::vector<std::vector<int64_t>> prompts{row_ids(input[0], 0, 30), row_ids(input[1], 5, 16)};
  const at::Device dev = model.lm_head().device();
  auto next = [&](int64_t row, int64_t step) { return input[row][40 + step].item<int64_t>(); };
  std::vector<at::Tensor> out;
  if (slots) {
    auto sl = model.new_slots(2, 64);
    for (int64_t i = 0; i < 2; ++i) {
      auto st = model.new_state(1, at::Tensor());
      (void)model.forward(at::tensor(prompts[i], at::kLong).view({1, -1}).to(dev), st.get());
      sl->load(i, *st);
    }
    for (int64_t t = 0; t < 8; ++t) {
      at::Tensor ids = at::tensor(std::vector<int64_t>{next(0, t), next(1, t)}, at::kLong).to(dev);
      out.push_back(model.decode_slots(ids, *sl).to(at::kCPU, at::kFloat));
    }
  } else {
    std::vector<at::Tensor> rows(2);
    for (int64_t i = 0; i < 2; ++i) {
      auto st = model.new_state(1, at::Tensor());
      (void)model.forward(at::tensor(prompts[i], at::kLong).view({1, -1}).to(dev), st.get());
      std::vector<at::Tensor> hs;
      for (int64_t t = 0; t < 8; ++t)
        hs.push_back(model.forward(at::tensor(std::vector<int64_t>{next(i, t)}, at::kLong).view({1, 1}).to(dev), st.get())
                         .view({-1})
                         .to(at::kCPU, at::kFloat));
      rows[i] = at::stack(hs);  // [8, hidden]
    }
    for (int64_t t = 0; t < 8; ++t) out.push_back(at::stack({rows[0][t], rows[1][t]}));
  }
  return at::stack(out);
}

}  // namespace

TEST_CASE("decode slots cuda: the fused decode step equals the CPU's steps (fp32) and the unfused GPU path (bf16)") {
  SKIP_WITHOUT_CUDA();
  // FoX and Transformer, LLaMA and Pro: shift, qk-norm, output gate, rotary, forget gate or none.
  for (const char* name : {"fox_pro", "fox_llama", "transformer_pro", "transformer_llama"}) {
    INFO(name);
    OneHeadFox fixture(name);
    SafetensorsFile ref(test::source_path(std::string("tests/fixtures/official/") + name) + "/reference.safetensors");
    at::Tensor input = ref.read("input_ids");
    REQUIRE(input.size(1) >= 48);
    // fp32: the fused step on the GPU against the torch ops on the CPU, step for step.
    auto cpu = load_model(fixture.dir, RunOptions{"cpu", "float32"});
    auto gpu = load_model(fixture.dir, RunOptions{"cuda", "float32"});
    const at::Tensor want = forced_decode(*cpu, input, true);
    const at::Tensor got = forced_decode(*gpu, input, true);
    const double fp32_diff = (got - want).abs().max().item<double>();
    // bf16: the fused slot step against one decoding state per row (separate projections, the
    // torch-op and fused-glue kernels), relative to the hidden state's scale.
    auto bf = load_model(fixture.dir, RunOptions{"cuda", "bfloat16"});
    const at::Tensor slot = forced_decode(*bf, input, true), state = forced_decode(*bf, input, false);
    const double bf16_rel = ((slot - state).abs().max() / state.abs().max()).item<double>();
    MESSAGE(name << ": fp32 GPU fused vs CPU max |diff| " << fp32_diff << ", bf16 fused slots vs states max rel "
                 << bf16_rel << " (scale " << state.abs().max().item<double>() << ")");
    CHECK(fp32_diff < 1e-4);
    CHECK(bf16_rel < 5e-2);
  }
}

TEST_CASE("decode slots cuda: out of GPU memory halves the slots and gives the tokens of an unconstrained run") {
  SKIP_WITHOUT_CUDA();
  OneHeadFox fixture;
  RunOptions options;
  options.device = "cuda", options.dtype = "bfloat16";
  auto model = load_model(fixture.dir, options);
  // Six requests in one bucket of 59392 tokens (prompts of ~59k), so a slot holds ~32 MB of cache
  // and the default 64 slots ~2 GB. Slots this large make the out-of-memory error come from
  // allocating them: what a decode step needs beside them (activations, the 32 MiB cuBLAS
  // workspace of the stream a CUDA graph is captured on) stays well inside the room left.
  std::mt19937_64 rng(15);
  std::vector<GenerationRequest> requests(6);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].prompt.resize(59000 + 20 * i);
    for (int64_t& id : requests[i].prompt) id = static_cast<int64_t>(rng() % 256);
    requests[i].max_new_tokens = 32;  // no stop ids: every request runs to its length
  }
  GenerateUntilOptions opt;  // the default slot count, 64
  const SlotPlan plan = plan_slots(*model, 59000 + 32, 6, opt);
  for (const GenerationRequest& r : requests)
    REQUIRE(plan_slots(*model, static_cast<int64_t>(r.prompt.size()) + r.max_new_tokens, 6, opt).capacity == plan.capacity);
  // max_batch_tokens turns the memory plan off: the scheduler starts at 64 slots whatever fits.
  opt.max_batch_tokens = opt.max_batch * plan.capacity;
  auto run = [&](const GenerateUntilOptions& o, GenerateStats& stats) {
    std::vector<std::vector<int64_t>> out(requests.size());
    std::vector<int> calls(requests.size(), 0);
    stats = generate_until(*model, requests, o, [&](size_t i, const GenerationAnswer& a) {
      out[i] = a.ids;
      ++calls[i];
    });
    for (size_t i = 0; i < requests.size(); ++i) {
      CHECK(calls[i] == 1);
      CHECK(static_cast<int64_t>(out[i].size()) == requests[i].max_new_tokens);
    }
    return out;
  };
  const c10::DeviceIndex dev = c10::cuda::current_device();
  const size_t all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
  const double total = static_cast<double>(at::cuda::getDeviceProperties(dev)->totalGlobalMem);
  const double room = 24.0 * static_cast<double>(plan.slot_bytes);  // 64 and 32 slots cannot fit
  REQUIRE(32.0 * static_cast<double>(plan.slot_bytes) > 1.25 * room);

  for (bool graphs : {true, false}) {
    INFO("CUDA graphs " << graphs);
    opt.cuda_graphs = graphs;
    c10::cuda::CUDACachingAllocator::emptyCache();
    const double held = static_cast<double>(c10::cuda::CUDACachingAllocator::getDeviceStats(dev).reserved_bytes[all].current);
    GenerateStats tight;
    std::vector<std::vector<int64_t>> constrained;
    {
      AllocatorCap cap((held + room) / total, dev);
      constrained = run(opt, tight);
    }
    MESSAGE("graphs " << graphs << ": " << tight.oom_backoffs << " back-offs, finished with " << tight.min_slots
                      << " slots of " << plan.capacity << " tokens (" << plan.slot_bytes << " bytes each)");
    CHECK(tight.oom_backoffs >= 2);  // the catch-and-halve path ran: 64 -> 32 -> 16 at least
    CHECK(tight.min_slots >= 1);
    CHECK(tight.min_slots <= 16);
    CHECK(tight.min_slots == opt.max_batch >> tight.oom_backoffs);

    // The same requests with no memory cap, at the slot count the back-off ended at: a request's
    // tokens depend only on its prompt and S (README), so they are equal token for token.
    c10::cuda::CUDACachingAllocator::emptyCache();
    GenerateUntilOptions free_opt;
    free_opt.max_batch = tight.min_slots;
    free_opt.cuda_graphs = graphs;
    GenerateStats loose;
    const std::vector<std::vector<int64_t>> unconstrained = run(free_opt, loose);
    CHECK(loose.oom_backoffs == 0);
    CHECK(loose.min_slots == tight.min_slots);
    for (size_t i = 0; i < requests.size(); ++i) {
      INFO("request " << i);
      CHECK(constrained[i] == unconstrained[i]);
    }
  }
}
