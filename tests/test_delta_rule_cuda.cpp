// The fused CUDA delta rule (kernels/recurrent_delta.h) against the exact fp32 chunked form
// (recurrent::delta_rule, ScanImpl::kExact) on the GPU and an fp64 token-by-token recurrence on
// the CPU. Every case returns early with a message where CUDA is unavailable (CI).
//
// Inputs are what DeltaNet feeds the scan: q, k L2-normalised per row and rounded to bf16, v
// rounded to bf16, beta = sigmoid(.) in (0, 1) rounded to bf16, all as [B, H, T, .] views of
// [B, T, H, .] tensors (the model's transposes), plus a non-zero initial state.
//
// Tolerances (relative Frobenius error ||got - want|| / ||want||): the kernel rounds every
// tensor-core operand to bf16 (unit roundoff 2^-8 = 3.9e-3, RMS 2^-8/sqrt(3) = 2.3e-3 per
// rounding). An output element passes through about six rounded operands (q, k, w, u, the state
// operand, v_new), each product a sum of 64..128 terms whose rounding errors are independent, so
// the relative error is ~sqrt(6) * 2.3e-3 = 5.5e-3; the state errors do not grow without bound
// because with |k| = 1 and beta in (0, 1) the update I - beta k k^T is a contraction.
// Measured on an H100 (sm_90a): at most 4.4e-3 (output, T = 4096) and 3.8e-3 (state); the fp32
// step kernel against fp64 at most 1.1e-7. Bounds: 1e-2 and 1e-6.
//
// The output kernel (O from the stored bf16 chunk states and v_new) runs the same mma.sync
// sequence per output element as the previous scan that formed O inside the recurrence
// (kernels::testing::delta_rule_chunked_fused_cuda), on the same bf16 operands, so the two are
// checked equal bit for bit (and, to tell a summation-order difference from a bug should that
// ever fail, within a relative 1e-6).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/recurrent_delta.h"
#include "models/layers/recurrent_ops.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

constexpr double kTolBf16 = 1e-2;  // see the header comment
constexpr double kTolFp32 = 1e-6;
constexpr double kTolSplit = 1e-6;  // output kernel vs the fused scan, should they ever differ

struct Inputs {
  at::Tensor q, k, v, beta, state;  // [B,H,T,K], [B,H,T,K], [B,H,T,V], [B,H,T], [B,H,K,V]; fp32
};

at::Tensor bf16_round(const at::Tensor& x) { return x.to(at::kBFloat16).to(at::kFloat); }

at::Tensor l2_rows(const at::Tensor& x) { return x * at::rsqrt(x.square().sum({-1}, true) + 1e-6); }

// Inputs on `device` (made on the CPU with a fixed seed), as transposed [B, T, H, .] tensors.
Inputs make_inputs(int64_t B, int64_t H, int64_t T, int64_t K, int64_t V, uint64_t seed, const at::Device& device) {
  at::manual_seed(seed);
  at::Tensor q = bf16_round(l2_rows(at::randn({B, T, H, K})));
  at::Tensor k = bf16_round(l2_rows(at::randn({B, T, H, K})));
  at::Tensor v = bf16_round(at::randn({B, T, H, V}));
  at::Tensor beta = bf16_round(at::sigmoid(at::randn({B, T, H})));
  at::Tensor state = at::randn({B, H, K, V}) * 0.5;
  return {q.to(device).transpose(1, 2), k.to(device).transpose(1, 2), v.to(device).transpose(1, 2),
          beta.to(device).transpose(1, 2), state.to(device)};
}

// The recurrence token by token in fp64 on the CPU; `state` [B,H,K,V] is replaced by the final one.
at::Tensor naive_fp64(const Inputs& in, double scale, at::Tensor& state) {
  at::Tensor q = in.q.cpu().to(at::kDouble), k = in.k.cpu().to(at::kDouble), v = in.v.cpu().to(at::kDouble);
  at::Tensor beta = in.beta.cpu().to(at::kDouble);
  at::Tensor S = in.state.cpu().to(at::kDouble);
  const int64_t T = q.size(2);
  std::vector<at::Tensor> outs;
  for (int64_t t = 0; t < T; ++t) {
    at::Tensor kt = k.select(2, t), qt = q.select(2, t), vt = v.select(2, t), bt = beta.select(2, t);  // [B,H,.]
    at::Tensor kS = (kt.unsqueeze(-1) * S).sum(2);                                                       // [B,H,V]
    at::Tensor u = bt.unsqueeze(-1) * (vt - kS);
    S = S + kt.unsqueeze(-1) * u.unsqueeze(-2);
    outs.push_back(scale * (qt.unsqueeze(-1) * S).sum(2));
  }
  state = S;
  return at::stack(outs, 2);
}

struct Err {
  double max_abs, rel;
};

Err compare(const at::Tensor& got, const at::Tensor& want) {
  at::Tensor g = got.to(at::kDouble).cpu(), w = want.to(at::kDouble).cpu();
  return {(g - w).abs().max().item<double>(), (g - w).norm().item<double>() / w.norm().item<double>()};
}

bool all_finite(const at::Tensor& x) { return at::isfinite(x).all().item<bool>(); }

// delta_rule_chunked_cuda (got, s_got: its output and final state) against the previous fused
// scan on the same inputs: equal bit for bit (see the header comment). The differences are
// reported when `report` or when they are not zero.
void check_equals_fused(const Inputs& in, double scale, const at::Tensor& got, const at::Tensor& s_got,
                        const std::string& what, bool report = false) {
  at::Tensor s_fused = in.state.clone();
  at::Tensor fused = kernels::testing::delta_rule_chunked_fused_cuda(in.q, in.k, in.v, in.beta, scale, s_fused);
  const Err eo = compare(got, fused), es = compare(s_got, s_fused);
  INFO(what);
  if (report || eo.max_abs != 0.0 || es.max_abs != 0.0)
    MESSAGE(fmt::format("{}: output kernel vs fused scan: output max abs {:.3e} rel {:.3e}; state max abs {:.3e}", what,
                        eo.max_abs, eo.rel, es.max_abs));
  CHECK(got.equal(fused));
  CHECK(s_got.equal(s_fused));  // the recurrence is the same code in both scans
  CHECK(eo.rel <= kTolSplit);
}

// Fills freed device memory with NaN through the caching allocator, so an output element the
// kernel never writes shows up as NaN instead of a stale value.
void poison_allocator() {
  { at::Tensor p = at::full({int64_t(64) << 20}, std::numeric_limits<float>::quiet_NaN(), at::TensorOptions().device(at::kCUDA)); }
}

}  // namespace

TEST_CASE("delta rule cuda: support rule") {
  SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  Inputs in = make_inputs(1, 2, 8, 128, 128, 1, cuda);
  CHECK(kernels::delta_rule_cuda_supports(in.q, in.k, in.v, in.beta));
  Inputs tiny = make_inputs(1, 2, 8, 32, 32, 1, cuda);  // the fixtures' head size: the exact form runs
  CHECK_FALSE(kernels::delta_rule_cuda_supports(tiny.q, tiny.k, tiny.v, tiny.beta));
  Inputs odd_v = make_inputs(1, 2, 8, 64, 48, 1, cuda);
  CHECK_FALSE(kernels::delta_rule_cuda_supports(odd_v.q, odd_v.k, odd_v.v, odd_v.beta));
  CHECK_FALSE(kernels::delta_rule_cuda_supports(in.q.cpu(), in.k.cpu(), in.v.cpu(), in.beta.cpu()));
  CHECK_FALSE(kernels::delta_rule_cuda_supports(in.q.to(at::kBFloat16), in.k, in.v, in.beta));
  at::Tensor wrong_state = at::zeros({1, 2, 128, 64}, in.q.options());
  CHECK_THROWS(kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, 0.1, wrong_state));
}

TEST_CASE("delta rule cuda: DeltaNet 760M shape (H=12, K=V=128) against the exact fp32 form") {
  SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  const double scale = 1.0 / std::sqrt(128.0);
  for (int64_t T : {4096, 1000}) {
    Inputs in = make_inputs(1, 12, T, 128, 128, 17 + T, cuda);
    REQUIRE(kernels::delta_rule_cuda_supports(in.q, in.k, in.v, in.beta));
    at::Tensor s_exact = in.state.clone(), s_kernel = in.state.clone(), passed = s_kernel;
    at::Tensor want = recurrent::delta_rule(in.q, in.k, in.v, in.beta, scale, s_exact, recurrent::ScanImpl::kExact);
    poison_allocator();
    at::Tensor got = kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s_kernel);
    REQUIRE(got.sizes() == want.sizes());
    CHECK(all_finite(got));
    CHECK(all_finite(s_kernel));
    const Err eo = compare(got, want), es = compare(s_kernel, s_exact);
    MESSAGE(fmt::format("T={}: output max abs {:.3e} rel {:.3e} (max |ref| {:.3f}); state max abs {:.3e} rel {:.3e}", T,
                        eo.max_abs, eo.rel, want.abs().max().item<double>(), es.max_abs, es.rel));
    CHECK(eo.rel < kTolBf16);
    CHECK(es.rel < kTolBf16);
    CHECK(passed.equal(in.state));  // the input state tensor is only read (s_kernel was rebound)
    // The dispatch in recurrent::delta_rule runs this kernel for kKernel.
    at::Tensor s_dispatch = in.state.clone();
    at::Tensor via = recurrent::delta_rule(in.q, in.k, in.v, in.beta, scale, s_dispatch, recurrent::ScanImpl::kKernel);
    CHECK(via.equal(got));
    CHECK(s_dispatch.equal(s_kernel));
    // bf16 q, k, v (DeltaNet's GPU path) are read as the values fp32 inputs are rounded to: the
    // same bits; the dispatch casts them to fp32 for the step kernel and the ATen form.
    const at::Tensor qb = in.q.to(at::kBFloat16), kb = in.k.to(at::kBFloat16), vb = in.v.to(at::kBFloat16);
    REQUIRE(kernels::delta_rule_cuda_supports(qb, kb, vb, in.beta));
    CHECK_FALSE(kernels::delta_rule_cuda_supports(qb, in.k, vb, in.beta));  // mixed dtypes
    at::Tensor s_b = in.state.clone();
    at::Tensor got_b = kernels::delta_rule_chunked_cuda(qb, kb, vb, in.beta, scale, s_b);
    CHECK((got_b.scalar_type() == at::kFloat));
    CHECK(got_b.equal(got));
    CHECK(s_b.equal(s_kernel));
    // The output kernel against the previous algorithm (the output inside the scan).
    poison_allocator();
    check_equals_fused(in, scale, got, s_kernel, fmt::format("T={}", T), true);
    if (T == 4096) {
      // Time per layer call (the number the NOTES quote); informative, not asserted.
      at::Tensor s = in.state.clone();
      for (int i = 0; i < 3; ++i) kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s);
      c10::cuda::device_synchronize();
      const int reps = 20;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s);
      c10::cuda::device_synchronize();
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
      t0 = std::chrono::steady_clock::now();
      recurrent::delta_rule(in.q, in.k, in.v, in.beta, scale, s, recurrent::ScanImpl::kExact);
      c10::cuda::device_synchronize();
      const double exact_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      MESSAGE(fmt::format("B=1 H=12 T=4096 K=V=128: kernel {:.1f} us per call, exact fp32 form {:.1f} us", us, exact_us));
      // Per launch (cudaEvents around each; every call waits for the device, so the times are of
      // kernels on an idle GPU): prep, scan, output; and the previous fused scan.
      auto split = [&](bool fused) {
        kernels::testing::delta_rule_chunked_kernel_times(in.q, in.k, in.v, in.beta, scale, s, fused);  // warm-up
        kernels::testing::DeltaKernelTimes sum;
        for (int i = 0; i < reps; ++i) {
          const auto t = kernels::testing::delta_rule_chunked_kernel_times(in.q, in.k, in.v, in.beta, scale, s, fused);
          sum.prep_us += t.prep_us / reps, sum.scan_us += t.scan_us / reps, sum.output_us += t.output_us / reps;
        }
        return sum;
      };
      const kernels::testing::DeltaKernelTimes now = split(false), before = split(true);
      MESSAGE(fmt::format("per launch (cudaEvents, mean of {}): prep {:.1f} us, scan {:.1f} us, output {:.1f} us "
                          "(sum {:.1f}); previous fused scan {:.1f} us (prep {:.1f}, sum {:.1f})",
                          reps, now.prep_us, now.scan_us, now.output_us, now.prep_us + now.scan_us + now.output_us,
                          before.scan_us, before.prep_us, before.prep_us + before.scan_us));
    }
  }
}

TEST_CASE("delta rule cuda: small T against an fp64 recurrence") {
  SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  struct Shape {
    int64_t B, H, K, V;
  };
  for (const Shape& sh : {Shape{2, 3, 128, 128}, Shape{2, 2, 64, 64}, Shape{1, 3, 64, 96}, Shape{1, 2, 128, 256}}) {
    for (int64_t T : {1, 2, 3, 5, 8, 13, 16, 17, 63, 64, 65, 130}) {
      Inputs in = make_inputs(sh.B, sh.H, T, sh.K, sh.V, 100 + T, cuda);
      REQUIRE(kernels::delta_rule_cuda_supports(in.q, in.k, in.v, in.beta));
      const double scale = 1.0 / std::sqrt(static_cast<double>(sh.K));
      at::Tensor s_ref;
      at::Tensor want = naive_fp64(in, scale, s_ref);
      at::Tensor s_kernel = in.state.clone();
      poison_allocator();
      at::Tensor got = kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s_kernel);
      const Err eo = compare(got, want), es = compare(s_kernel, s_ref);
      INFO(fmt::format("B={} H={} K={} V={} T={}", sh.B, sh.H, sh.K, sh.V, T));
      MESSAGE(fmt::format("chunked B={} H={} K={} V={} T={}: output max abs {:.3e} rel {:.3e}; state rel {:.3e}", sh.B,
                          sh.H, sh.K, sh.V, T, eo.max_abs, eo.rel, es.rel));
      CHECK(all_finite(got));
      CHECK(eo.rel < kTolBf16);
      CHECK(es.rel < kTolBf16);
      // V = 96: 6 output warps; V = 256: 8 warps of two 16-column slices each.
      check_equals_fused(in, scale, got, s_kernel, fmt::format("B={} H={} K={} V={} T={}", sh.B, sh.H, sh.K, sh.V, T));
      if (T <= 3) {  // the fp32 step kernel, token by token, against fp64
        at::Tensor s = in.state.clone();
        std::vector<at::Tensor> outs;
        for (int64_t t = 0; t < T; ++t) {
          auto one = [&](const at::Tensor& x) { return x.narrow(2, t, 1); };
          outs.push_back(kernels::delta_rule_step_cuda(one(in.q), one(in.k), one(in.v), one(in.beta), scale, s));
        }
        const Err eso = compare(at::cat(outs, 2), want), ess = compare(s, s_ref);
        MESSAGE(fmt::format("  step: output rel {:.3e}, state rel {:.3e}", eso.rel, ess.rel));
        CHECK(eso.rel < kTolFp32);
        CHECK(ess.rel < kTolFp32);
      }
    }
  }
}

TEST_CASE("delta rule cuda: chaining two calls equals one call") {
  SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  const double scale = 1.0 / std::sqrt(128.0);
  Inputs in = make_inputs(1, 12, 1000, 128, 128, 7, cuda);
  at::Tensor s_one = in.state.clone();
  at::Tensor one = kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s_one);
  for (int64_t split : {512, 500}) {
    at::Tensor s = in.state.clone();
    at::Tensor a = kernels::delta_rule_chunked_cuda(in.q.narrow(2, 0, split), in.k.narrow(2, 0, split),
                                                    in.v.narrow(2, 0, split), in.beta.narrow(2, 0, split), scale, s);
    const int64_t rest = 1000 - split;
    at::Tensor b = kernels::delta_rule_chunked_cuda(in.q.narrow(2, split, rest), in.k.narrow(2, split, rest),
                                                    in.v.narrow(2, split, rest), in.beta.narrow(2, split, rest), scale, s);
    const Err eo = compare(at::cat({a, b}, 2), one), es = compare(s, s_one);
    MESSAGE(fmt::format("split at {}: output max abs {:.3e} rel {:.3e}; state max abs {:.3e}", split, eo.max_abs, eo.rel,
                        es.max_abs));
    if (split % 64 == 0) {
      // Same chunks, the fp32 state passed through memory instead of registers: identical.
      CHECK(eo.max_abs == 0.0);
      CHECK(es.max_abs == 0.0);
    } else {
      CHECK(eo.rel < kTolBf16);
      CHECK(es.rel < kTolBf16);
    }
  }
}

TEST_CASE("delta rule cuda: step kernel equals the chunked kernel token by token") {
  SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  for (int64_t K : {128, 64}) {
    const int64_t B = 3, H = 4, T = 80, V = 128;
    const double scale = 1.0 / std::sqrt(static_cast<double>(K));
    Inputs in = make_inputs(B, H, T, K, V, 31 + K, cuda);
    at::Tensor s_chunked = in.state.clone();
    at::Tensor want = kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s_chunked);
    at::Tensor s = in.state.clone();
    const void* address = s.data_ptr();
    std::vector<at::Tensor> outs;
    for (int64_t t = 0; t < T; ++t) {
      auto one = [&](const at::Tensor& x) { return x.narrow(2, t, 1); };
      outs.push_back(kernels::delta_rule_step_cuda(one(in.q), one(in.k), one(in.v), one(in.beta), scale, s));
    }
    CHECK(s.data_ptr() == address);  // updated in place (CUDA-graph decoding relies on it)
    const Err eo = compare(at::cat(outs, 2), want), es = compare(s, s_chunked);
    MESSAGE(fmt::format("K={}: step vs chunked output max abs {:.3e} rel {:.3e}; state rel {:.3e}", K, eo.max_abs, eo.rel,
                        es.rel));
    CHECK(eo.rel < kTolBf16);
    CHECK(es.rel < kTolBf16);
    // The dispatch sends T == 1 to the step kernel.
    at::Tensor s1 = in.state.clone(), s2 = in.state.clone();
    auto first = [&](const at::Tensor& x) { return x.narrow(2, 0, 1); };
    at::Tensor via = recurrent::delta_rule(first(in.q), first(in.k), first(in.v), first(in.beta), scale, s1,
                                           recurrent::ScanImpl::kKernel);
    at::Tensor direct = kernels::delta_rule_step_cuda(first(in.q), first(in.k), first(in.v), first(in.beta), scale, s2);
    CHECK(via.equal(direct));
    CHECK(s1.equal(s2));
  }
}

TEST_CASE("delta rule cuda: the 4-warp scan (B*H*V/32 >= 2 SMs) against the exact form and the fused scan") {
  SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  // Enough (b, h) pairs that the scan runs 4 warps per CTA (the fused testing scan always runs 2:
  // each warp's arithmetic does not depend on the CTA's width, so the two still agree bit for bit).
  const int64_t sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  const int64_t H = 12, V = 128, T = 200, B = (2 * sms + H * V / 32 - 1) / (H * V / 32);
  for (int64_t K : {128, 64}) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(K));
    Inputs in = make_inputs(B, H, T, K, V, 53 + K, cuda);
    at::Tensor s_exact = in.state.clone(), s_kernel = in.state.clone();
    at::Tensor want = recurrent::delta_rule(in.q, in.k, in.v, in.beta, scale, s_exact, recurrent::ScanImpl::kExact);
    poison_allocator();
    at::Tensor got = kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s_kernel);
    const Err eo = compare(got, want), es = compare(s_kernel, s_exact);
    MESSAGE(fmt::format("B={} H={} T={} K={} V={}: output rel {:.3e}; state rel {:.3e}", B, H, T, K, V, eo.rel, es.rel));
    CHECK(all_finite(got));
    CHECK(eo.rel < kTolBf16);
    CHECK(es.rel < kTolBf16);
    poison_allocator();
    check_equals_fused(in, scale, got, s_kernel, fmt::format("B={} K={}", B, K));
  }
}

TEST_CASE("delta rule cuda: the chunked kernels captured in a CUDA graph equal an eager call") {
  SKIP_WITHOUT_CUDA();
  const at::Device cuda(at::kCUDA);
  const double scale = 1.0 / std::sqrt(128.0);
  Inputs in = make_inputs(1, 12, 1000, 128, 128, 11, cuda);
  at::Tensor s_eager = in.state.clone();
  at::Tensor want = kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s_eager);
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  at::cuda::CUDAGraph graph;
  at::Tensor out, s_in = in.state.clone(), s = s_in;  // s_in keeps the captured input state alive
  at::cuda::getCurrentCUDAStream().synchronize();  // the inputs above were made on the main stream
  {
    c10::cuda::CUDAStreamGuard on(stream);
    at::Tensor warm = in.state.clone();
    kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, warm);  // eager warm-up on this stream
    graph.capture_begin();
    out = kernels::delta_rule_chunked_cuda(in.q, in.k, in.v, in.beta, scale, s);  // allocations from the graph's pool
    graph.capture_end();
  }
  stream.synchronize();
  for (int i = 0; i < 2; ++i) {
    graph.replay();
    c10::cuda::device_synchronize();
    CHECK(out.equal(want));
    CHECK(s.equal(s_eager));
    CHECK(s_in.equal(in.state));
  }
}
