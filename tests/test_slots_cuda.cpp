// Decoding slots on the GPU (every case returns early with a message where CUDA is unavailable,
// as in CI): the decode kernel with per-row key counts (kv_len) against the exact torch path on
// each row's keys alone, and CUDA-graph decoding against eager decoding, token for token, for
// the seven reference fixtures in bf16.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include "data/safetensors.h"
#include "kernels/forgetting_attention.h"
#include "models/registry.h"
#include "models/slot_decoder.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

bool have_cuda() { return at::hasCUDA() && at::cuda::device_count() > 0; }

std::vector<int64_t> row_ids(const at::Tensor& t, int64_t a, int64_t b) {
  at::Tensor c = t.slice(0, a, b).to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

}  // namespace

TEST_CASE("forgetting attention cuda: kv_len decode equals each row's keys alone") {
  if (!have_cuda()) {
    MESSAGE("CUDA unavailable: skipping");
    return;
  }
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
  if (!have_cuda()) {
    MESSAGE("CUDA unavailable: skipping");
    return;
  }
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
