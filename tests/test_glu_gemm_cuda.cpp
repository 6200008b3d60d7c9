// The gate_up GEMM with SwiGLU in its epilogue (kernels/glu_gemm.cu) on an H100/H200 (returns
// early where CUDA or sm_90 is unavailable, as in CI):
// - on inputs whose fp32 sums are exact in any order it equals linear + fused_swiglu bit for bit
//   (so rows, columns, the gate/up pairing, tails and the ring across tiles are right);
// - on random inputs both it and the two-kernel path stay within one bf16 rounding of each
//   projection of the fp64 result;
// - it declines what it does not take (the caller then runs the two kernels).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <cstdlib>

#include "data/switches.h"
#include "kernels/fused_glue.h"
#include "kernels/glu_gemm.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

at::Tensor two_kernels(const at::Tensor& x, const at::Tensor& w, bool silu) {
  return fused_swiglu(at::linear(x, w), silu, at::kBFloat16);
}

}  // namespace

TEST_CASE("glu_gemm cuda: equal to linear + fused_swiglu where the sums are exact") {
  SKIP_WITHOUT_HOPPER();
  at::manual_seed(1);
  // (rows, K, I): the 760M MLP (1536 -> 2 x 3584), a row tail, one k-step, many tiles a CTA.
  const std::vector<std::array<int64_t, 3>> shapes{{4096, 1536, 3584}, {333, 64, 128}, {2048 + 77, 512, 384}, {256, 1536, 256}};
  for (const auto& [M, K, I] : shapes) {
    for (bool silu : {true, false}) {
      INFO("rows " << M << " K " << K << " I " << I << " silu " << silu);
      // x: multiples of 2^-4 up to 2; w: multiples of 2^-6 up to 1/4. Every partial sum is a
      // multiple of 2^-10 below 2^10, exact in fp32, so any summation order gives the same projection.
      at::Tensor x = (at::randint(-32, 33, {M, K}) / 16.0).to(at::kBFloat16).cuda();
      at::Tensor w = (at::randint(-16, 17, {2 * I, K}) / 64.0).to(at::kBFloat16).cuda();
      at::Tensor got = glu_gemm(x, w, silu);
      REQUIRE(got.defined());
      CHECK(got.sizes() == at::IntArrayRef({M, I}));
      at::Tensor want = two_kernels(x, w, silu);
      CHECK(at::equal(got, want));
    }
  }
  // Leading dims kept: [B, T, K] -> [B, T, I].
  at::Tensor x3 = (at::randint(-32, 33, {2, 300, 128}) / 16.0).to(at::kBFloat16).cuda();
  at::Tensor w3 = (at::randint(-16, 17, {256, 128}) / 64.0).to(at::kBFloat16).cuda();
  at::Tensor got3 = glu_gemm(x3, w3, true);
  REQUIRE(got3.defined());
  CHECK(got3.sizes() == at::IntArrayRef({2, 300, 128}));
  CHECK(at::equal(got3, two_kernels(x3, w3, true)));
}

// (Under compute-sanitizer: FILTER='glu_gemm cuda: two CTAs*' CAP= scripts/device_attention_sanitize.sh.)
TEST_CASE("glu_gemm cuda: two CTAs walking many tiles each (the ring wraps round, each tile's gated unit runs in the next)") {
  SKIP_WITHOUT_HOPPER();
  at::manual_seed(3);
  SwitchOverride cap("FOXEVAL_GLU_CTAS", "2");
  // K 256: fewer k-steps than the epilogue's chunks (the previous tile's unit before the products);
  // K 512: one chunk a k-step.
  for (const auto& [M, K, I] : std::vector<std::array<int64_t, 3>>{{1000, 256, 384}, {600, 512, 256}}) {
    INFO("rows " << M << " K " << K << " I " << I);
    at::Tensor x = (at::randint(-32, 33, {M, K}) / 16.0).to(at::kBFloat16).cuda();
    at::Tensor w = (at::randint(-16, 17, {2 * I, K}) / 64.0).to(at::kBFloat16).cuda();
    at::Tensor got = glu_gemm(x, w, true);
    REQUIRE(got.defined());
    CHECK(at::equal(got, two_kernels(x, w, true)));
  }
}

TEST_CASE("glu_gemm cuda: within one bf16 rounding of each projection of the fp64 result, as the two kernels") {
  SKIP_WITHOUT_HOPPER();
  at::manual_seed(2);
  for (bool silu : {true, false}) {
    const int64_t M = 1024 + 5, K = 1536, I = 3584;
    at::Tensor x = at::randn({M, K}).to(at::kBFloat16).cuda();
    at::Tensor w = (at::randn({2 * I, K}) * 0.03).to(at::kBFloat16).cuda();
    at::Tensor got = glu_gemm(x, w, silu);
    REQUIRE(got.defined());
    at::Tensor y = at::matmul(x.to(at::kDouble), w.to(at::kDouble).t());
    at::Tensor mag = at::matmul(x.to(at::kDouble).abs(), w.to(at::kDouble).abs().t());
    at::Tensor g = y.narrow(1, 0, I), u = y.narrow(1, I, I);
    at::Tensor sg = at::sigmoid(g), act = silu ? g * sg : sg;
    at::Tensor dact = silu ? sg * (1 + g * (1 - sg)) : sg * (1 - sg);
    at::Tensor want = act * u;
    // Each projection within one bf16 ulp (2^-8 relative, either neighbour) plus fp32 summation
    // (K terms of size |x||w|), the product's own rounding (2^-8 relative), a floor at 1e-30.
    const double ulp = std::ldexp(1.0, -8);
    at::Tensor eg = g.abs() * ulp + mag.narrow(1, 0, I) * 1e-6, eu = u.abs() * ulp + mag.narrow(1, I, I) * 1e-6;
    at::Tensor allowed = dact.abs() * u.abs() * eg + act.abs() * eu + want.abs() * ulp + 1e-30;
    for (const auto& [name, t] : {std::pair<std::string, at::Tensor>{"glu_gemm", got}, {"two kernels", two_kernels(x, w, silu)}}) {
      at::Tensor err = (t.to(at::kDouble) - want).abs();
      const double worst = (err / allowed).max().item<double>();
      MESSAGE(name << " (silu " << silu << "): worst error / allowed " << worst);
      CHECK(worst <= 1.0);
    }
    // Same rounding scheme as the two kernels: only where a projection's fp32 sum falls at a bf16
    // rounding boundary do they differ.
    const double differ = (got != two_kernels(x, w, silu)).to(at::kDouble).mean().item<double>();
    MESSAGE("fraction differing from the two kernels: " << differ);
    CHECK(differ < 0.02);
  }
}

TEST_CASE("glu_gemm cuda: declines what it does not take") {
  SKIP_WITHOUT_HOPPER();
  auto bf = at::TensorOptions().dtype(at::kBFloat16).device(at::kCUDA);
  at::Tensor w = at::zeros({256, 128}, bf);
  CHECK_FALSE(glu_gemm(at::zeros({kGluGemmMinRows - 1, 128}, bf), w, true).defined());  // decode-sized
  CHECK_FALSE(glu_gemm(at::zeros({512, 128}, bf.dtype(at::kFloat)), w.to(at::kFloat), true).defined());
  CHECK_FALSE(glu_gemm(at::zeros({512, 96}, bf), at::zeros({256, 96}, bf), true).defined());    // K % 64
  CHECK_FALSE(glu_gemm(at::zeros({512, 128}, bf), at::zeros({192, 128}, bf), true).defined());  // I % 128
  CHECK_FALSE(glu_gemm(at::zeros({512, 128}, bf).cpu(), w.cpu(), true).defined());
  CHECK(glu_gemm(at::zeros({512, 128}, bf), w, true).defined());
  // glu_gemm_supports says the same without launching (callers time the stage only then).
  CHECK(glu_gemm_supports(at::zeros({512, 128}, bf), w));
  CHECK_FALSE(glu_gemm_supports(at::zeros({kGluGemmMinRows - 1, 128}, bf), w));
  // A contiguous x one element off 16-byte alignment (TMA reads it in place: it cannot).
  at::Tensor off = at::zeros({512 * 128 + 1}, bf).narrow(0, 1, 512 * 128).view({512, 128});
  CHECK_FALSE(glu_gemm_supports(off, w));
  CHECK_FALSE(glu_gemm(off, w, true).defined());
  {
    SwitchOverride off("FOXEVAL_GLU_GEMM", "0");
    CHECK_FALSE(glu_gemm(at::zeros({512, 128}, bf), w, true).defined());
  }
}
