// The small-batch decode matmul (kernels/gemv.cu) on the GPU (returns early with a message where
// CUDA is unavailable, as in CI): against an fp64 product of the same bf16 inputs for 1 to 8 rows,
// the decode shapes of the 760M models and odd ones, with and without a bias; a row's result not
// depending on the other rows; the cases it must refuse; its early (programmatic) launch after a
// norm reading the norm's finished output, eager and in a CUDA graph.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include "kernels/fused_glue.h"
#include "kernels/gemv.h"
#include "models/layers/layers.h"
#include "tests/test_support.h"

using namespace foxeval;

TEST_CASE("gemv cuda: a few rows times a bf16 weight equal the fp64 product to one rounding") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(0);
  // (N, K): the 760M FoX (Pro) decode shapes (fused input projection, o_proj, MLP, LM head), odd sizes.
  const std::vector<std::pair<int64_t, int64_t>> shapes{{6204, 1536}, {1536, 1536}, {8192, 1536}, {1536, 4096},
                                                        {50257, 1536}, {1, 8}, {7, 24}, {13, 1544}, {3, 4104}};
  double worst = 0;
  for (auto [N, K] : shapes) {
    for (int64_t m : {1, 2, 3, 4, 5, 8}) {
      for (bool with_bias : {false, true}) {
        INFO("N " << N << " K " << K << " rows " << m << " bias " << with_bias);
        at::Tensor w = (at::randn({N, K}) * 0.05).to(at::kBFloat16);
        at::Tensor x = at::randn({m, 1, K}).to(at::kBFloat16);
        at::Tensor b = with_bias ? at::randn({N}).to(at::kBFloat16) : at::Tensor();
        at::Tensor y = small_gemv(x.cuda(), w.cuda(), with_bias ? b.cuda() : at::Tensor());
        REQUIRE(y.defined());
        CHECK(y.sizes() == at::IntArrayRef({m, 1, N}));
        at::Tensor ref = at::matmul(x.to(at::kDouble).view({m, K}), w.to(at::kDouble).t());
        if (with_bias) ref = ref + b.to(at::kDouble);
        // One bf16 rounding (2^-9 relative) plus fp32 accumulation over K terms of size |w||x|.
        at::Tensor mag = at::matmul(x.to(at::kDouble).abs().view({m, K}), w.to(at::kDouble).abs().t());
        at::Tensor err = (y.cpu().to(at::kDouble).view({m, N}) - ref).abs();
        at::Tensor allowed = ref.abs() * std::ldexp(1.0, -8) + mag * 1e-6 + 1e-30;
        worst = std::max(worst, (err / allowed).max().item<double>());
        CHECK((err <= allowed).all().item<bool>());
      }
    }
  }
  MESSAGE("worst error / allowed " << worst);
}

TEST_CASE("gemv cuda: each row's result is the same alone or among eight; linear() takes it for one row") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(1);
  at::Tensor w = (at::randn({3000, 1536}) * 0.05).to(at::kBFloat16).cuda();
  at::Tensor x = at::randn({8, 1536}).to(at::kBFloat16).cuda();
  at::Tensor all = small_gemv(x, w);
  for (int64_t r = 0; r < 8; ++r) CHECK(at::equal(small_gemv(x.slice(0, r, r + 1), w), all.slice(0, r, r + 1)));
  // linear() takes the kernel for one row (fp32 rows cast to the weight's dtype first, as
  // autocast), cuBLAS for more (faster there: kernels/gemv.h).
  CHECK(at::equal(foxeval::linear(x.slice(0, 2, 3), w), all.slice(0, 2, 3)));
  CHECK(at::equal(foxeval::linear(x.slice(0, 2, 3).to(at::kFloat).view({1, 1, -1}), w).view({1, -1}), all.slice(0, 2, 3)));
  CHECK(at::equal(foxeval::linear(x, w), at::linear(x, w)));
}

TEST_CASE("gemv cuda: the gated-unit epilogue equals the GEMV then fused_swiglu, bit for bit") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(3);
  // (2I, K): the 760M FoX (Pro) MLP's gate_up (8192 x 1536) and odd sizes.
  for (auto [W, K] : std::vector<std::pair<int64_t, int64_t>>{{8192, 1536}, {2, 8}, {26, 24}, {1002, 1544}}) {
    for (int64_t m : {1, 2, 3, 8}) {
      for (bool with_bias : {false, true}) {
        for (bool silu : {true, false}) {
          INFO("2I " << W << " K " << K << " rows " << m << " bias " << with_bias << " silu " << silu);
          at::Tensor w = (at::randn({W, K}) * 0.05).to(at::kBFloat16).cuda();
          at::Tensor x = at::randn({m, 1, K}).to(at::kBFloat16).cuda();
          at::Tensor b = with_bias ? at::randn({W}).to(at::kBFloat16).cuda() : at::Tensor();
          at::Tensor fused = small_gemv_glu(x, w, silu, b);
          REQUIRE(fused.defined());
          CHECK(fused.sizes() == at::IntArrayRef{m, 1, W / 2});
          at::Tensor two = fused_swiglu(small_gemv(x, w, b), silu, at::kBFloat16);
          CHECK(at::equal(fused, two));
        }
      }
    }
  }
  at::Tensor w = at::randn({7, 8}).to(at::kBFloat16).cuda();  // 2I odd: not taken
  CHECK_FALSE(small_gemv_glu(at::randn({1, 8}).to(at::kBFloat16).cuda(), w, true).defined());
}

TEST_CASE("gemv cuda: refuses what it does not take") {
  SKIP_WITHOUT_CUDA();
  at::Tensor w = at::randn({64, 64}).to(at::kBFloat16).cuda();
  CHECK_FALSE(small_gemv(at::randn({9, 64}).to(at::kBFloat16).cuda(), w).defined());      // > 8 rows
  CHECK_FALSE(small_gemv(at::randn({1, 64}).cuda(), w.to(at::kFloat)).defined());          // fp32
  CHECK_FALSE(small_gemv(at::randn({1, 60}).to(at::kBFloat16).cuda(),
                         at::randn({64, 60}).to(at::kBFloat16).cuda()).defined());        // K % 8
  CHECK_FALSE(small_gemv(at::randn({1, 64}).to(at::kBFloat16), w.cpu()).defined());       // CPU
  CHECK_FALSE(small_gemv(at::randn({1, 64}).to(at::kBFloat16).cuda(), w.t()).defined());  // not contiguous
}

// The kernel may start before the kernel that writes x has finished (programmatic dependent
// launch, kernels/pdl.cuh), and the norm kernel before it lets it start early: x must still be
// read only once the norm is done. A chain norm -> GEMV -> norm -> GEMV ... over changing inputs,
// eager and replayed from a CUDA graph, equals the same GEMVs run one at a time after a sync.
TEST_CASE("gemv cuda: launched early after a norm, it reads the norm's finished output (eager and in a graph)") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(2);
  const int64_t K = 4096;  // a long row: the norm is still running when the GEMV's blocks start
  at::Tensor w = (at::randn({1536, K}) * 0.02).to(at::kBFloat16).cuda();
  at::Tensor nw = at::rand({K}).add(0.5).cuda();
  at::Tensor in = at::randn({1, K}).to(at::kBFloat16).cuda();
  auto chain = [&](const at::Tensor& start, std::vector<at::Tensor>& xs) {
    at::Tensor h = start, y;
    for (int i = 0; i < 6; ++i) {
      at::Tensor x = fused_rms_norm(h, nw, 1e-5, at::kBFloat16);
      REQUIRE(x.defined());
      xs.push_back(x);
      y = small_gemv(x, w);
      REQUIRE(y.defined());
      h = at::cat({y, y, y, y}, -1).slice(-1, 0, K).contiguous();  // next input depends on y
    }
    return y;
  };
  std::vector<at::Tensor> xs;
  at::Tensor y = chain(in, xs);
  at::cuda::device_synchronize();
  for (size_t i = 0; i + 1 < xs.size(); ++i) {  // each x is the norm of the previous step's output
    at::Tensor ref = small_gemv(xs[i].clone(), w);
    at::cuda::device_synchronize();
    at::Tensor h = at::cat({ref, ref, ref, ref}, -1).slice(-1, 0, K).contiguous();
    CHECK(at::equal(fused_rms_norm(h, nw, 1e-5, at::kBFloat16), xs[i + 1]));
  }
  at::Tensor ref_last = small_gemv(xs.back().clone(), w);
  CHECK(at::equal(y, ref_last));

  // The same chain captured once and replayed on new inputs.
  at::Tensor static_in = in.clone();
  std::vector<at::Tensor> gxs;
  at::cuda::CUDAGraph graph;
  at::cuda::CUDAStream side = at::cuda::getStreamFromPool();
  at::Tensor gy;
  at::cuda::getCurrentCUDAStream().synchronize();  // the inputs above were made on the main stream
  {
    at::cuda::CUDAStreamGuard guard(side);
    graph.capture_begin();
    gy = chain(static_in, gxs);
    graph.capture_end();
  }
  for (int rep = 0; rep < 5; ++rep) {
    static_in.copy_(at::randn({1, K}).to(at::kBFloat16).cuda());
    graph.replay();
    at::cuda::device_synchronize();
    std::vector<at::Tensor> eager;
    CHECK(at::equal(gy, chain(static_in.clone(), eager)));
  }
}
