// The language-model head with the loss in its epilogue (kernels/lm_head_loss.cu) on an H100/H200
// (returns early where CUDA or sm_90 is unavailable, as in CI):
// - where the logits' fp32 sums are exact in any order (so its bf16 logits equal cuBLAS's), its
//   log-probabilities agree with linear + fused_token_logprobs and with fp64 log_softmax of those
//   logits to fp32 summation (rows, column tiles, the vocabulary tail, labels at tile edges, the
//   ring across tiles);
// - on random inputs it stays within one bf16 rounding of each logit of the fp64 result, as the
//   two kernels do;
// - the same bits whatever the number of CTAs, a NaN for a label outside the vocabulary, and it
//   declines what it does not take.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <array>
#include <cmath>
#include <vector>

#include "data/switches.h"
#include "kernels/fused_loss.h"
#include "kernels/lm_head_loss.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

// Random labels in [0, V) with the tile edges (0, 255, 256, V - 1) among them.
at::Tensor labels_for(int64_t M, int64_t V) {
  at::Tensor lab = at::randint(0, V, {M}, at::kLong);
  const std::vector<int64_t> edges{0, 255, 256, 511, V - 1};
  for (size_t i = 0; i < edges.size() && static_cast<int64_t>(i) < M; ++i) lab[static_cast<int64_t>(i)] = std::min(edges[i], V - 1);
  return lab.cuda();
}

// log_softmax(logits)[label] in fp64 over the logits as given.
at::Tensor fp64_logprobs(const at::Tensor& logits, const at::Tensor& labels) {
  return at::log_softmax(logits.to(at::kDouble), -1).gather(-1, labels.unsqueeze(-1)).squeeze(-1);
}

}  // namespace

TEST_CASE("lm_head_loss cuda: equal logits give the two kernels' log-probabilities to fp32 summation") {
  SKIP_WITHOUT_HOPPER();
  at::manual_seed(1);
  // (rows, K, vocabulary, head rows): GPT-2's vocabulary on a 64-padded head, a row tail and a
  // one-column last tile, one k-step (fewer than the epilogue's chunks), a single column tile.
  const std::vector<std::array<int64_t, 4>> shapes{
      {1029, 1536, 50257, 50304}, {333, 256, 513, 576}, {300, 64, 1000, 1000}, {512, 512, 200, 256}};
  for (const auto& [M, K, V, Vp] : shapes) {
    INFO("rows " << M << " K " << K << " vocab " << V << " head rows " << Vp);
    // Multiples of 2^-4 up to 2 and 2^-6 up to 1/4: every partial sum is exact in fp32.
    at::Tensor x = (at::randint(-32, 33, {M, K}) / 16.0).to(at::kBFloat16).cuda();
    at::Tensor w = (at::randint(-16, 17, {Vp, K}) / 64.0).to(at::kBFloat16).cuda();
    at::Tensor lab = labels_for(M, V);
    at::Tensor got = lm_head_token_logprobs(x, w, V, lab);
    REQUIRE(got.defined());
    CHECK(got.sizes() == lab.sizes());
    at::Tensor logits = at::linear(x, w.narrow(0, 0, V));  // bf16, as the two-kernel path
    at::Tensor two = fused_token_logprobs(logits, lab);
    at::Tensor want = fp64_logprobs(logits, lab);
    const double bound = 1e-4 * std::log(static_cast<double>(V)) + 1e-5;  // fused_token_logprobs's own test bound
    const double err = (got.to(at::kDouble) - want).abs().max().item<double>();
    const double err_two = (got - two).abs().max().item<double>();
    MESSAGE("max abs error vs fp64 " << err << ", vs the two kernels " << err_two);
    CHECK(err < bound);
    CHECK(err_two < bound);
  }
}

// (Under compute-sanitizer: FILTER='lm_head_loss cuda: the same bits*' CAP= scripts/device_attention_sanitize.sh.)
TEST_CASE("lm_head_loss cuda: the same bits on two CTAs walking many tiles (the ring wraps round) as on every SM") {
  SKIP_WITHOUT_HOPPER();
  at::manual_seed(3);
  for (const auto& [M, K, V] : std::vector<std::array<int64_t, 3>>{{1000, 256, 3000}, {600, 512, 777}}) {
    INFO("rows " << M << " K " << K << " vocab " << V);
    at::Tensor x = at::randn({M, K}).to(at::kBFloat16).cuda();
    at::Tensor w = (at::randn({V, K}) * 0.05).to(at::kBFloat16).cuda();
    at::Tensor lab = labels_for(M, V);
    at::Tensor all = lm_head_token_logprobs(x, w, V, lab);
    REQUIRE(all.defined());
    CHECK(at::equal(all, lm_head_token_logprobs(x, w, V, lab)));  // deterministic
    SwitchOverride cap("FOXEVAL_LM_HEAD_CTAS", "2");
    at::Tensor two_ctas = lm_head_token_logprobs(x, w, V, lab);
    REQUIRE(two_ctas.defined());
    CHECK(at::equal(all, two_ctas));
  }
}

TEST_CASE("lm_head_loss cuda: within one bf16 rounding of each logit of the fp64 result, as the two kernels") {
  SKIP_WITHOUT_HOPPER();
  at::manual_seed(2);
  const int64_t M = 1024 + 5, K = 1536, V = 50257;
  // fp32 hidden states (as the final norm gives them): cast to bf16 as linear does.
  at::Tensor h = at::randn({1, M, K}).cuda();
  at::Tensor w = (at::randn({V, K}) * 0.05).to(at::kBFloat16).cuda();
  at::Tensor lab = labels_for(M, V).view({1, M});
  at::Tensor got = lm_head_token_logprobs(h, w, V, lab);
  REQUIRE(got.defined());
  CHECK(got.sizes() == at::IntArrayRef({1, M}));
  at::Tensor xb = h.to(at::kBFloat16);
  at::Tensor exact = at::matmul(xb.to(at::kDouble), w.to(at::kDouble).t()).view({M, V});
  at::Tensor want = fp64_logprobs(exact, lab.view({M}));
  // Each logit within one bf16 ulp (2^-8 relative) of the exact one: the label's and the
  // log-sum-exp's (a weighted mean of the logits' errors) each move by at most 2^-8 max |logit|.
  const double allowed = 2 * std::ldexp(1.0, -8) * exact.abs().max().item<double>() + 1e-4;
  at::Tensor two = fused_token_logprobs(at::linear(xb, w).view({M, V}), lab.view({M}));
  for (const auto& [name, t] : {std::pair<std::string, at::Tensor>{"lm_head_loss", got.view({M})}, {"two kernels", two}}) {
    const double err = (t.to(at::kDouble) - want).abs().max().item<double>();
    MESSAGE(name << ": max abs error " << err << " (allowed " << allowed << ")");
    CHECK(err <= allowed);
  }
}

TEST_CASE("lm_head_loss cuda: a label outside the vocabulary gives NaN; it declines what it does not take") {
  SKIP_WITHOUT_HOPPER();
  at::manual_seed(4);
  const int64_t M = 300, K = 128, V = 1000, Vp = 1024;
  at::Tensor x = at::randn({M, K}).to(at::kBFloat16).cuda();
  at::Tensor w = at::randn({Vp, K}).to(at::kBFloat16).cuda();
  at::Tensor lab = labels_for(M, V);
  lab[7] = V;  // a padding row of the head, not the vocabulary
  lab[8] = -1;
  at::Tensor got = lm_head_token_logprobs(x, w, V, lab).cpu();
  REQUIRE(got.defined());
  CHECK(std::isnan(got[7].item<float>()));
  CHECK(std::isnan(got[8].item<float>()));
  CHECK(at::isfinite(got.narrow(0, 9, M - 9)).all().item<bool>());
  CHECK_FALSE(lm_head_token_logprobs(x.narrow(0, 0, 100), w, V, lab.narrow(0, 0, 100)).defined());  // too few rows
  CHECK_FALSE(lm_head_token_logprobs(x.narrow(1, 0, 96), w.narrow(1, 0, 96).contiguous(), V, lab).defined());  // K % 64
  CHECK_FALSE(lm_head_token_logprobs(x, w, Vp + 1, lab).defined());  // vocabulary past the head
  CHECK_FALSE(lm_head_token_logprobs(x.cpu(), w.cpu(), V, lab.cpu()).defined());
  {
    SwitchOverride off("FOXEVAL_LM_HEAD_LOSS", "0");
    CHECK_FALSE(lm_head_loss_supports(x, w, V));
  }
}
