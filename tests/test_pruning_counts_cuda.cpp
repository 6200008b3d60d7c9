// The adaptive-pruning counts of the CUDA attention kernels (AttentionArgs::pruning_counts) and of
// a FoX model (CausalLM::pruning_stats). Runs on a GPU machine; every case returns early with a
// message where CUDA is unavailable. Run it with FOXEVAL_FA_IMPL=mma as well on an H100 (both
// prefill kernels count).
#include <ATen/ATen.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "data/safetensors.h"
#include "kernels/forgetting_attention.h"
#include "models/registry.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

namespace foxeval {
namespace {

// q, k with row norm sqrt(D), v random, strong decay (log f = logsigmoid(randn + bias)).
AttentionArgs strong_decay(int64_t H, int64_t Tq, int64_t Tk, int64_t D, double gate_bias, uint64_t seed) {
  at::manual_seed(seed);
  const auto f32 = at::TensorOptions().device(at::kCUDA).dtype(at::kFloat);
  auto unit_rows = [&](int64_t T) {
    at::Tensor x = at::randn({1, H, T, D}, f32);
    return (x * (std::sqrt(static_cast<double>(D)) / at::linalg_vector_norm(x, 2, {-1}, true))).to(at::kBFloat16);
  };
  AttentionArgs a;
  a.q = unit_rows(Tq);
  a.k = unit_rows(Tk);
  a.v = at::randn({1, H, Tk, D}, f32).to(at::kBFloat16);
  a.cum_log_fgate = at::cumsum(at::log_sigmoid(at::randn({1, H, Tk}, f32) + gate_bias), -1).contiguous();
  return a;
}

// The official "auto" threshold -(2R + ln Tk) + tol.
at::Tensor auto_threshold(const AttentionArgs& a, double tol) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(a.q.size(3)));
  at::Tensor R = at::linalg_vector_norm(a.q.to(at::kFloat), 2, {-1}).amax(-1) *
                 at::linalg_vector_norm(a.k.to(at::kFloat), 2, {-1}).amax(-1) * scale;
  return (-(2.0 * R + std::log(static_cast<double>(a.k.size(2)))) + tol).to(at::kFloat).contiguous();
}

std::vector<int64_t> counts_of(const at::Tensor& c) {
  const at::Tensor h = c.to(at::kCPU);
  return {h[0].item<int64_t>(), h[1].item<int64_t>(), h[2].item<int64_t>(), h[3].item<int64_t>()};
}

at::Tensor zero_counts() { return at::zeros({4}, at::TensorOptions().device(at::kCUDA).dtype(at::kLong)); }

}  // namespace

TEST_CASE("pruning counts cuda: prefill blocks counted, outputs unchanged by counting") {
  SKIP_WITHOUT_CUDA();
  for (int64_t D : {int64_t(64), int64_t(128)}) {
    INFO("D=" << D << " prefill " << forgetting_attention_prefill_impl());
    AttentionArgs a = strong_decay(3, 2048, 2048, D, 0.0, 7);
    // No threshold: blocks in range counted, none skipped.
    const at::Tensor plain = forgetting_attention_cuda(a);
    a.pruning_counts = zero_counts();
    const at::Tensor counted = forgetting_attention_cuda(a);
    CHECK(at::equal(plain, counted));
    const auto none = counts_of(a.pruning_counts);
    CHECK(none[0] == 0);
    CHECK(none[1] > 0);
    CHECK(none[2] == 0);  // no decode
    CHECK(none[3] == 0);
    // A threshold nothing is below: the same blocks, none skipped.
    a.adaptive_threshold = at::full({1, 3}, -1e30f, a.q.options().dtype(at::kFloat));
    a.pruning_counts = zero_counts();
    (void)forgetting_attention_cuda(a);
    CHECK(counts_of(a.pruning_counts) == none);
    // The auto threshold at tol -10 on strong decay: some skipped, the same blocks in range, and the
    // output bit-equal to the pruned kernel without counting.
    a.adaptive_threshold = auto_threshold(a, -10.0);
    AttentionArgs uncounted = a;
    uncounted.pruning_counts = at::Tensor();
    const at::Tensor pruned_plain = forgetting_attention_cuda(uncounted);
    a.pruning_counts = zero_counts();
    const at::Tensor pruned = forgetting_attention_cuda(a);
    CHECK(at::equal(pruned_plain, pruned));
    const auto some = counts_of(a.pruning_counts);
    MESSAGE("D=" << D << ": skipped " << some[0] << " of " << some[1] << " key blocks");
    CHECK(some[1] == none[1]);
    CHECK(some[0] > 0);
    CHECK(some[0] < some[1]);
    // Counts add up over calls (the model's one counter over layers and forwards).
    (void)forgetting_attention_cuda(a);
    const auto twice = counts_of(a.pruning_counts);
    CHECK(twice[0] == 2 * some[0]);
    CHECK(twice[1] == 2 * some[1]);
  }
}

TEST_CASE("pruning counts cuda: left padding shrinks the blocks in range") {
  SKIP_WITHOUT_CUDA();
  AttentionArgs a = strong_decay(2, 1024, 1024, 64, 0.0, 3);
  a.pruning_counts = zero_counts();
  (void)forgetting_attention_cuda(a);
  const int64_t full = counts_of(a.pruning_counts)[1];
  a.seq_start = at::full({1}, 700, a.q.options().dtype(at::kLong));
  a.pruning_counts = zero_counts();
  (void)forgetting_attention_cuda(a);
  const int64_t padded = counts_of(a.pruning_counts)[1];
  CHECK(padded > 0);
  CHECK(padded < full);
}

TEST_CASE("pruning counts cuda: decode counts keys exactly") {
  SKIP_WITHOUT_CUDA();
  const int64_t H = 2, Tq = 3, Tk = 5000;
  AttentionArgs a = strong_decay(H, Tq, Tk, 64, 0.0, 11);
  a.adaptive_threshold = auto_threshold(a, -10.0);
  a.pruning_counts = zero_counts();
  (void)forgetting_attention_cuda(a);
  const auto n = counts_of(a.pruning_counts);
  CHECK(n[0] == 0);
  CHECK(n[1] == 0);
  // Expected on the host: query i at position Tk - Tq + i reads keys 0..pos; a key j < pos is skipped
  // when c_pos - c_j < thr (fp32, as the kernel; c is non-increasing, so those keys are a prefix).
  const at::Tensor c = a.cum_log_fgate.to(at::kCPU), thr = a.adaptive_threshold.to(at::kCPU);
  int64_t in_range = 0, skipped = 0;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Tq; ++i) {
      const int64_t pos = Tk - Tq + i;
      in_range += pos + 1;
      const float cq = c[0][h][pos].item<float>(), t = thr[0][h].item<float>();
      for (int64_t j = 0; j < pos; ++j) skipped += (cq - c[0][h][j].item<float>() < t) ? 1 : 0;
    }
  CHECK(n[3] == in_range);
  CHECK(n[2] == skipped);
  CHECK(skipped > 0);
}

TEST_CASE("pruning counts cuda: a malformed counter is refused") {
  SKIP_WITHOUT_CUDA();
  AttentionArgs a = strong_decay(1, 256, 256, 64, 0.0, 1);
  a.pruning_counts = at::zeros({4}, at::TensorOptions().dtype(at::kLong));  // on the CPU
  CHECK_THROWS_WITH(forgetting_attention_cuda(a), doctest::Contains("pruning_counts must be a contiguous int64 [4]"));
  a.pruning_counts = at::zeros({2}, at::TensorOptions().device(at::kCUDA).dtype(at::kLong));
  CHECK_THROWS(forgetting_attention_cuda(a));
}

namespace {
// fox_pro with one head of 64 (as tests/test_slots_cuda.cpp's OneHeadFox): the CUDA kernels take it.
struct OneHeadFox {
  std::string dir = test::temp_dir("pruning-one-head");
  OneHeadFox() {
    const std::string src = test::source_path("tests/fixtures/official/fox_pro");
    nlohmann::json config = nlohmann::json::parse(std::ifstream(src + "/config.json"));
    const int64_t heads = config["num_heads"].get<int64_t>();
    config["num_heads"] = 1;
    std::ofstream(dir + "/config.json") << config.dump(1);
    SafetensorsFile f(src + "/model.safetensors");
    std::map<std::string, at::Tensor> tensors;
    for (const auto& [name, e] : f.entries()) {
      at::Tensor t = f.read(name);
      if (name.find("fgate_proj") != std::string::npos || name.find("shift_proj") != std::string::npos) {
        REQUIRE(t.size(0) == heads);
        t = t.slice(0, 0, 1).contiguous();
      }
      tensors[name] = t;
    }
    test::write_safetensors(dir + "/model.safetensors", tensors);
  }
  ~OneHeadFox() { test::remove_tree(dir); }
};
}  // namespace

TEST_CASE("pruning stats cuda: a FoX model counts its prefill and decode steps, only with pruning on") {
  SKIP_WITHOUT_CUDA();
  OneHeadFox fx;
  at::Tensor ids = at::arange(1, 301, at::TensorOptions().dtype(at::kLong)).remainder(250).view({1, -1}).to(at::kCUDA);
  auto off = load_model(fx.dir, RunOptions{"cuda", "bfloat16", "none"});
  (void)off->forward(ids, nullptr);
  CHECK(!off->pruning_stats().on);

  RunOptions run{"cuda", "bfloat16", "-5"};
  run.fgate_bias_shift = -6.0;  // fast decay: something to skip
  auto on = load_model(fx.dir, run);
  auto st = on->new_state(1, at::Tensor());
  (void)on->forward(ids, st.get());
  const PruningStats p = on->pruning_stats();
  CHECK(p.on);
  CHECK(p.log_tolerance == -5.0);
  CHECK(p.key_blocks > 0);
  CHECK(p.key_blocks_skipped <= p.key_blocks);
  CHECK(p.decode_keys == 0);
  for (int64_t t = 0; t < 3; ++t) (void)on->forward(ids.slice(1, t, t + 1), st.get());
  const PruningStats q = on->pruning_stats();
  CHECK(q.key_blocks == p.key_blocks);
  // Two layers, one head, three steps at 301..303 keys.
  CHECK(q.decode_keys == 2 * (301 + 302 + 303));
  CHECK(q.decode_keys_skipped <= q.decode_keys);
  MESSAGE("prefill skipped " << p.key_blocks_skipped << " of " << p.key_blocks << ", decode " << q.decode_keys_skipped
                             << " of " << q.decode_keys);
}

}  // namespace foxeval
