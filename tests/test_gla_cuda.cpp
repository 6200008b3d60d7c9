// CUDA gated-linear-attention kernels (kernels/recurrent_gla.h) against the exact fp32 form on
// the GPU (recurrent::gated_linear_attention, ScanImpl::kExact) and an fp64 token-by-token
// recurrence on the CPU. Every case returns early with a message where CUDA is unavailable.
//
// Tolerances. Inputs are bf16-rounded fp32 (as the models give them), so reading q, k, v as
// bf16 is exact; what the kernel rounds to bf16 (unit roundoff u = 2^-8) is the operands formed
// from gates: k*exp(b_last-b), q*exp(b), the intra-chunk scores A, and the chunk start states.
// An output is a sum of products, each through at most two of these roundings (A, then v: or
// q*exp(b), then S), with independent errors of standard deviation <= u/sqrt(3) each, so the
// relative error of the sum in norm is about sqrt(2) * u / sqrt(3) = 3.2e-3 for random
// signs. Measured on the H100 (2026-11-23, 236 comparisons): relative error in norm at most
// 2.49e-3, max error at most 4.63e-3 of max|ref| (Mamba-2 shape, T=4096); the step kernel (fp32
// throughout) at most 4.3e-7. The limits are 2x those: kRelTol 5e-3, kMaxTol 1e-2, kStepTol 1e-6.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/recurrent_gla.h"
#include "models/layers/recurrent_ops.h"
#include "tests/test_support.h"

namespace {

namespace rec = foxeval::recurrent;
namespace kn = foxeval::kernels;

constexpr double kRelTol = 5e-3;
constexpr double kMaxTol = 1e-2;
constexpr double kStepTol = 1e-6;

at::Tensor bf16_round(const at::Tensor& x) { return x.to(at::kBFloat16).to(at::kFloat); }

// Fills freed allocator memory with NaN so an output element a kernel forgets shows up.
void poison_allocator() {
  for (int i = 0; i < 4; ++i)
    at::full({int64_t(32) << 20}, NAN, at::TensorOptions().device(at::kCUDA).dtype(at::kFloat));
}

struct Err {
  double rel = 0, max = 0;
  bool finite = true;
};

// rel = ||out - ref|| / ||ref||, max = max|out - ref| / max|ref|, in fp64.
Err compare(const at::Tensor& out, const at::Tensor& ref) {
  at::Tensor o = out.to(at::kCPU, at::kDouble), r = ref.to(at::kCPU, at::kDouble);
  Err e;
  e.finite = at::isfinite(o).all().item<bool>();
  at::Tensor d = o - r;
  e.rel = (d.norm() / r.norm().clamp_min(1e-300)).item<double>();
  e.max = (d.abs().max() / r.abs().max().clamp_min(1e-300)).item<double>();
  return e;
}

void check_close(const std::string& what, const at::Tensor& out, const at::Tensor& ref, double rel_tol = kRelTol,
                 double max_tol = kMaxTol) {
  const Err e = compare(out, ref);
  MESSAGE(what << ": rel err " << e.rel << ", max err/max|ref| " << e.max << (e.finite ? "" : " NON-FINITE"));
  CHECK(e.finite);
  CHECK(e.rel <= rel_tol);
  CHECK(e.max <= max_tol);
}

// CPU fp32 inputs of one case. Gate: per key [B,H,T,K] or scalar [B,H,T,1], values in [gmin, 0].
struct Inputs {
  at::Tensor q, k, v, g, s0;
};

Inputs make_inputs(int64_t B, int64_t H, int64_t T, int64_t K, int64_t V, bool per_key, double gmin, uint64_t seed) {
  at::manual_seed(seed);
  Inputs in;
  in.q = bf16_round(at::randn({B, H, T, K}));
  in.k = bf16_round(at::randn({B, H, T, K}) * (1.0 / std::sqrt(static_cast<double>(K))));
  in.v = bf16_round(at::randn({B, H, T, V}));
  // A mix of weak and strong decays: half of the values near 0, the rest spread down to gmin.
  at::Tensor u = at::rand({B, H, T, per_key ? K : 1});
  in.g = at::where(at::rand_like(u) < 0.5, u * -0.05, u * gmin);
  in.s0 = at::randn({B, H, K, V});
  return in;
}

// fp64 token-by-token recurrence on the CPU; `state` [B,H,K,V] fp64 in and out.
at::Tensor naive_fp64(const Inputs& in, double scale, at::Tensor& state) {
  at::Tensor q = in.q.to(at::kDouble), k = in.k.to(at::kDouble), v = in.v.to(at::kDouble), g = in.g.to(at::kDouble);
  const int64_t T = q.size(2);
  at::Tensor out = at::empty({q.size(0), q.size(1), T, v.size(3)}, q.options());
  for (int64_t t = 0; t < T; ++t) {
    at::Tensor dec = g.select(2, t).exp().unsqueeze(-1);  // [B,H,K or 1,1]
    state = state * dec + k.select(2, t).unsqueeze(-1) * v.select(2, t).unsqueeze(-2);
    out.select(2, t).copy_((q.select(2, t).unsqueeze(-1) * state).sum(-2) * scale);
  }
  return out;
}

struct Gpu {
  at::Tensor q, k, v, g;
};
Gpu to_gpu(const Inputs& in) {
  return {in.q.cuda(), in.k.cuda(), in.v.cuda(), in.g.cuda()};
}

// Puts the state pass's group count back to the automatic choice when a test case ends.
struct RestoreGroups {
  ~RestoreGroups() { kn::testing::set_gla_state_groups(0); }
};

double time_ms(const std::function<void()>& f, int reps) {
  f();
  at::cuda::getCurrentCUDAStream().synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) f();
  at::cuda::getCurrentCUDAStream().synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}

}  // namespace

TEST_CASE("gla cuda: dispatch rule") {
  SKIP_WITHOUT_CUDA();
  auto cuda = at::TensorOptions().device(at::kCUDA);
  // The official fixtures' tiny heads (K, V = 16/32) and CPU / bf16 tensors are not taken.
  Inputs tiny = make_inputs(1, 2, 40, 16, 32, true, -5, 1);
  Gpu t = to_gpu(tiny);
  CHECK_FALSE(kn::gla_cuda_supports(t.q, t.k, t.v, t.g));
  CHECK_FALSE(kn::gla_cuda_supports(tiny.q, tiny.k, tiny.v, tiny.g));
  at::Tensor q = at::randn({1, 2, 8, 64}, cuda), v = at::randn({1, 2, 8, 128}, cuda);
  at::Tensor g = -at::rand({1, 2, 8, 1}, cuda);
  CHECK(kn::gla_cuda_supports(q, q, v, g));
  CHECK_FALSE(kn::gla_cuda_supports(q.to(at::kBFloat16), q.to(at::kBFloat16), v.to(at::kBFloat16), g));
  CHECK_FALSE(kn::gla_cuda_supports(q.transpose(2, 3).contiguous().transpose(2, 3), q, v, g));  // last dim strided
  // kKernel on an unsupported shape runs the exact form; on a supported one, the kernel.
  at::Tensor s1, s2;
  at::Tensor a = rec::gated_linear_attention(t.q, t.k, t.v, t.g, 0.5, s1, rec::ScanImpl::kKernel);
  at::Tensor b = rec::gated_linear_attention(t.q, t.k, t.v, t.g, 0.5, s2, rec::ScanImpl::kExact);
  CHECK(at::equal(a, b));
  CHECK(at::equal(s1, s2));
  at::Tensor s3, s4;
  at::Tensor c = rec::gated_linear_attention(q, q, v, g, 0.5, s3, rec::ScanImpl::kKernel);
  at::Tensor d = kn::gla_chunked_cuda(q, q, v, g, 0.5, s4);
  CHECK(at::equal(c, d));
  CHECK(at::equal(s3, s4));
  // A pointer and row stride that are not multiples of 16 bytes: read through a copy, same result.
  at::Tensor qpad = at::randn({1, 2, 8, 66}, cuda).narrow(3, 1, 64);
  REQUIRE(kn::gla_cuda_supports(qpad, q, v, g));
  at::Tensor s5, s6;
  CHECK(at::equal(kn::gla_chunked_cuda(qpad, q, v, g, 0.5, s5), kn::gla_chunked_cuda(qpad.contiguous(), q, v, g, 0.5, s6)));
  CHECK(at::equal(s5, s6));
}

TEST_CASE("gla cuda: chunked kernel against the fp64 recurrence, small and odd T") {
  SKIP_WITHOUT_CUDA();
  for (bool per_key : {true, false})
    for (auto [K, V] : {std::pair<int64_t, int64_t>{64, 128}, {128, 64}, {128, 128}, {64, 64}})
      for (int64_t T : {1, 2, 3, 5, 8, 15, 16, 17, 63, 64, 65, 200}) {
        Inputs in = make_inputs(2, 3, T, K, V, per_key, per_key ? -8.0 : -4.0, 100 + T + K + V);
        at::Tensor s_ref = in.s0.to(at::kDouble);
        at::Tensor ref = naive_fp64(in, 0.3, s_ref);
        Gpu x = to_gpu(in);
        poison_allocator();
        at::Tensor state = in.s0.cuda();
        at::Tensor out = kn::gla_chunked_cuda(x.q, x.k, x.v, x.g, 0.3, state);
        const std::string name = std::string(per_key ? "per-key" : "scalar") + " K=" + std::to_string(K) +
                                 " V=" + std::to_string(V) + " T=" + std::to_string(T);
        check_close(name + " out", out, ref);
        check_close(name + " state", state, s_ref);
      }
}

TEST_CASE("gla cuda: strong decays stay finite and match") {
  SKIP_WITHOUT_CUDA();
  // Per-key g down to -30 per step (HGRN2's log sigmoid), scalar dt*A down to -20 (Mamba-2):
  // a cumulative gate reaches ~-1000 inside a chunk; no exp of a positive number may appear.
  for (bool per_key : {true, false}) {
    Inputs in = make_inputs(1, 4, 300, 128, per_key ? 128 : 64, per_key, per_key ? -30.0 : -20.0, 7);
    at::Tensor s_ref = in.s0.to(at::kDouble);
    at::Tensor ref = naive_fp64(in, 0.25, s_ref);
    Gpu x = to_gpu(in);
    at::Tensor state = in.s0.cuda();
    at::Tensor out = kn::gla_chunked_cuda(x.q, x.k, x.v, x.g, 0.25, state);
    check_close(std::string(per_key ? "per-key" : "scalar") + " strong decay out", out, ref);
    check_close(std::string(per_key ? "per-key" : "scalar") + " strong decay state", state, s_ref);
    // Every gate at the extreme: each token sees (almost) only itself.
    Inputs ext = in;
    ext.g = at::full_like(in.g, per_key ? -30.0 : -20.0);
    at::Tensor s2 = ext.s0.to(at::kDouble);
    at::Tensor ref2 = naive_fp64(ext, 0.25, s2);
    Gpu y = to_gpu(ext);
    at::Tensor st2 = ext.s0.cuda();
    check_close(std::string(per_key ? "per-key" : "scalar") + " all gates extreme",
                kn::gla_chunked_cuda(y.q, y.k, y.v, y.g, 0.25, st2), ref2);
  }
}

TEST_CASE("gla cuda: Mamba-2 760M shapes (scalar gate, q/k expanded over heads)") {
  SKIP_WITHOUT_CUDA();
  const int64_t B = 1, H = 48, N = 128, P = 64;
  for (int64_t T : {4096, 1000}) {
    at::manual_seed(11 + T);
    auto cuda = at::TensorOptions().device(at::kCUDA);
    // As the model builds them: C, B [B,T,N] views expanded over heads (stride 0), x*dt and
    // dt*A permuted views of [B,T,H,..] tensors.
    at::Tensor conv = bf16_round(at::randn({B, T, 2 * N + 8}, cuda));
    at::Tensor Cm = conv.narrow(-1, 8 + N, N).unsqueeze(1).expand({B, H, T, N});
    at::Tensor Bm = conv.narrow(-1, 8, N).unsqueeze(1).expand({B, H, T, N});
    at::Tensor dt = at::softplus(at::randn({B, T, H}, cuda) - 1.0);
    at::Tensor A = -at::exp(at::rand({H}, cuda) * 2.8);  // -1 .. -16
    at::Tensor xs = bf16_round(at::randn({B, T, H, P}, cuda));
    at::Tensor v = (xs * dt.unsqueeze(-1)).permute({0, 2, 1, 3});
    at::Tensor g = (dt * A).clamp_min(-20.0).permute({0, 2, 1}).unsqueeze(-1);
    REQUIRE(Cm.stride(1) == 0);
    REQUIRE(kn::gla_cuda_supports(Cm, Bm, v, g));
    at::Tensor s0 = at::randn({B, H, N, P}, cuda);
    at::Tensor s_exact = s0.clone(), s_kernel = s0.clone();
    at::Tensor ref = rec::gated_linear_attention(Cm, Bm, v, g, 1.0, s_exact, rec::ScanImpl::kExact);
    poison_allocator();
    at::Tensor out = kn::gla_chunked_cuda(Cm, Bm, v, g, 1.0, s_kernel);
    check_close("mamba2 T=" + std::to_string(T) + " out", out, ref);
    check_close("mamba2 T=" + std::to_string(T) + " state", s_kernel, s_exact);
    if (T == 4096) {
      const double ms = time_ms([&] { at::Tensor s = s0; kn::gla_chunked_cuda(Cm, Bm, v, g, 1.0, s); }, 20);
      kn::testing::set_gla_state_groups(1);
      const double ms_seq = time_ms([&] { at::Tensor s = s0; kn::gla_chunked_cuda(Cm, Bm, v, g, 1.0, s); }, 20);
      kn::testing::set_gla_state_groups(0);
      at::Tensor xb = xs.to(at::kBFloat16), cb = conv.to(at::kBFloat16);
      at::Tensor Cb = cb.narrow(-1, 8 + N, N).unsqueeze(1).expand({B, H, T, N});
      at::Tensor Bb = cb.narrow(-1, 8, N).unsqueeze(1).expand({B, H, T, N});
      at::Tensor D = at::ones({H}, cuda);
      const double ms_ssd = time_ms(
          [&] { at::Tensor s = s0; kn::ssd_chunked_cuda(xb.permute({0, 2, 1, 3}), dt.permute({0, 2, 1}), Cb, Bb, g, D, s); },
          20);
      const double ms_exact =
          time_ms([&] { at::Tensor s = s0; rec::gated_linear_attention(Cm, Bm, v, g, 1.0, s); }, 2);
      MESSAGE("mamba2 760M layer call T=4096: kernel " << ms << " ms (one sequential state pass " << ms_seq
                                                       << " ms; SSD form " << ms_ssd << " ms), exact ATen " << ms_exact
                                                       << " ms");
    }
  }
}

TEST_CASE("gla cuda: HGRN2 760M shapes (per-key gate)") {
  SKIP_WITHOUT_CUDA();
  const int64_t B = 1, H = 12, K = 128, V = 128;
  for (int64_t T : {4096, 1000}) {
    at::manual_seed(21 + T);
    auto cuda = at::TensorOptions().device(at::kCUDA);
    // As the model builds them: [B,T,H,d] projections viewed as [B,H,T,d].
    auto heads = [&](const at::Tensor& x, int64_t d) { return x.view({B, T, H, d}).transpose(1, 2); };
    at::Tensor f = at::randn({B, T, H * K}, cuda) * 3.0 + 2.0;
    at::Tensor q = heads(bf16_round(at::silu(at::randn({B, T, H * K}, cuda))), K);
    at::Tensor k = heads(bf16_round(1.0 - at::sigmoid(f)), K);
    at::Tensor g = heads(at::log_sigmoid(f).clamp_min(-30.0), K);
    at::Tensor v = heads(bf16_round(at::randn({B, T, H * V}, cuda)), V);
    REQUIRE(kn::gla_cuda_supports(q, k, v, g));
    const double scale = 1.0 / std::sqrt(static_cast<double>(K));
    at::Tensor s0 = at::randn({B, H, K, V}, cuda);
    at::Tensor s_exact = s0.clone(), s_kernel = s0.clone();
    at::Tensor ref = rec::gated_linear_attention(q, k, v, g, scale, s_exact, rec::ScanImpl::kExact);
    poison_allocator();
    at::Tensor out = kn::gla_chunked_cuda(q, k, v, g, scale, s_kernel);
    check_close("hgrn2 T=" + std::to_string(T) + " out", out, ref);
    check_close("hgrn2 T=" + std::to_string(T) + " state", s_kernel, s_exact);
    if (T == 4096) {
      const double ms = time_ms([&] { at::Tensor s = s0; kn::gla_chunked_cuda(q, k, v, g, scale, s); }, 20);
      kn::testing::set_gla_state_groups(1);
      const double ms_seq = time_ms([&] { at::Tensor s = s0; kn::gla_chunked_cuda(q, k, v, g, scale, s); }, 20);
      kn::testing::set_gla_state_groups(0);
      const double ms_exact = time_ms([&] { at::Tensor s = s0; rec::gated_linear_attention(q, k, v, g, scale, s); }, 2);
      MESSAGE("hgrn2 760M layer call T=4096: kernel " << ms << " ms (one sequential state pass " << ms_seq
                                                      << " ms), exact ATen " << ms_exact << " ms");
    }
  }
}

TEST_CASE("gla cuda: the group-parallel state pass equals the sequential one") {
  SKIP_WITHOUT_CUDA();
  // Groups change only the state pass's fp32 sum order (a group's start state is exp(decay) *
  // the previous start + its end state from zero) and round the chunk start states to bf16 once
  // more (the group's part from zero, then the sum): within the tolerances against the exact
  // form, and close to the one sequential pass. Uneven groups (NT = 29 in 5, 4 and 29 groups).
  // Weak decays (g in [-0.05, 0]: a chunk keeps ~1/3 of its start state), so that each group's
  // start state matters to its outputs (with the other tests' strong decays it would not).
  const RestoreGroups restore;
  for (bool per_key : {true, false}) {
    Inputs in = make_inputs(2, 3, 1850, 128, 64, per_key, -0.02, 41);
    Gpu x = to_gpu(in);
    at::Tensor s_exact = in.s0.cuda();
    at::Tensor ref = rec::gated_linear_attention(x.q, x.k, x.v, x.g, 0.5, s_exact, rec::ScanImpl::kExact);
    kn::testing::set_gla_state_groups(1);
    at::Tensor s_seq = in.s0.cuda();
    at::Tensor seq = kn::gla_chunked_cuda(x.q, x.k, x.v, x.g, 0.5, s_seq);
    for (int groups : {5, 4, 29, 0}) {
      kn::testing::set_gla_state_groups(groups);
      poison_allocator();
      at::Tensor s_grp = in.s0.cuda();
      at::Tensor out = kn::gla_chunked_cuda(x.q, x.k, x.v, x.g, 0.5, s_grp);
      const std::string name = std::string(per_key ? "per-key" : "scalar") + " groups " + std::to_string(groups);
      check_close(name + " out vs exact", out, ref);
      check_close(name + " state vs exact", s_grp, s_exact);
      check_close(name + " out vs sequential", out, seq);
      check_close(name + " state vs sequential", s_grp, s_seq, 1e-5, 1e-5);  // fp32 throughout
      if (groups != 1) CHECK_FALSE(at::equal(out, seq));  // the groups did run (and mattered)
    }
  }
}

TEST_CASE("gla cuda: state pass groups at the 760M shapes, T=4096 (timings reported, not gated)") {
  SKIP_WITHOUT_CUDA();
  const RestoreGroups restore;
  auto cuda = at::TensorOptions().device(at::kCUDA);
  const int64_t T = 4096;
  // Mamba-2 (SSD form): H = 48, N = 128, P = 64; HGRN2: H = 12, K = V = 128, per-key gate.
  const int64_t H = 48, N = 128, P = 64, conv_dim = H * P + 2 * N;
  at::Tensor conv = at::randn({1, T, conv_dim}, cuda).to(at::kBFloat16);
  auto heads = [&](const at::Tensor& m) { return m.unsqueeze(1).expand({1, H, T, N}); };
  at::Tensor xh = conv.narrow(-1, 0, H * P).view({1, T, H, P}).permute({0, 2, 1, 3});
  at::Tensor Bm = heads(conv.narrow(-1, H * P, N)), Cm = heads(conv.narrow(-1, H * P + N, N));
  at::Tensor dt = at::softplus(at::randn({1, T, H}, cuda) - 1.0);
  at::Tensor g = (dt * -at::exp(at::rand({H}, cuda) * 2.8)).permute({0, 2, 1}).unsqueeze(-1);
  at::Tensor D = at::ones({H}, cuda), s0 = at::randn({1, H, N, P}, cuda);
  Inputs hg = make_inputs(1, 12, T, 128, 128, true, -0.5, 61);
  Gpu x = to_gpu(hg);
  at::Tensor s1 = hg.s0.cuda();
  std::string line_m = "mamba2 SSD ms by groups:", line_h = "hgrn2 ms by groups:";
  for (int groups : {1, 2, 3, 4, 5, 6, 8, 11, 16, 0}) {
    kn::testing::set_gla_state_groups(groups);
    const double ms = time_ms([&] { at::Tensor s = s0; kn::ssd_chunked_cuda(xh, dt.permute({0, 2, 1}), Cm, Bm, g, D, s); }, 20);
    const double mh = time_ms([&] { at::Tensor s = s1; kn::gla_chunked_cuda(x.q, x.k, x.v, x.g, 0.1, s); }, 20);
    line_m += " " + std::to_string(groups) + ":" + std::to_string(ms).substr(0, 5);
    line_h += " " + std::to_string(groups) + ":" + std::to_string(mh).substr(0, 5);
  }
  MESSAGE(line_m);
  MESSAGE(line_h);
}

TEST_CASE("gla cuda: the SSD form equals the GLA form on x * dt plus the D skip, to the bit") {
  SKIP_WITHOUT_CUDA();
  // ssd_chunked_cuda reads the conv output (bf16) in place and forms v = x * dt as the model's
  // ATen product does; y = sum + x * D rounded to bf16 is the model's (y + xs * D).to(bf16).
  const int64_t B = 1, H = 48, N = 128, P = 64, conv_dim = H * P + 2 * N;
  for (int64_t T : {4096, 1000, 77}) {
    at::manual_seed(51 + T);
    auto cuda = at::TensorOptions().device(at::kCUDA);
    at::Tensor conv = at::randn({B, T, conv_dim}, cuda).to(at::kBFloat16);
    at::Tensor xs = conv.narrow(-1, 0, H * P).view({B, T, H, P});
    at::Tensor Bc = conv.narrow(-1, H * P, N), Cc = conv.narrow(-1, H * P + N, N);
    auto heads = [&](const at::Tensor& m) { return m.unsqueeze(1).expand({B, H, T, N}); };
    at::Tensor dt = at::softplus(at::randn({B, T, H}, cuda) - 1.0);
    at::Tensor A = -at::exp(at::rand({H}, cuda) * 2.8);
    at::Tensor D = at::randn({H}, cuda);
    at::Tensor g = (dt * A).permute({0, 2, 1}).unsqueeze(-1);
    at::Tensor xh = xs.permute({0, 2, 1, 3}), dth = dt.permute({0, 2, 1});
    REQUIRE(kn::ssd_cuda_supports(xh, dth, heads(Cc), heads(Bc), g, D));
    CHECK_FALSE(kn::ssd_cuda_supports(xh.to(at::kFloat), dth, heads(Cc), heads(Bc), g, D));
    at::Tensor s0 = at::randn({B, H, N, P}, cuda);
    at::Tensor s_ssd = s0.clone(), s_gla = s0.clone();
    poison_allocator();
    at::Tensor y = kn::ssd_chunked_cuda(xh, dth, heads(Cc), heads(Bc), g, D, s_ssd);
    at::Tensor xf = xs.to(at::kFloat);
    at::Tensor v = (xf * dt.unsqueeze(-1)).permute({0, 2, 1, 3});
    at::Tensor o = kn::gla_chunked_cuda(heads(Cc.to(at::kFloat)), heads(Bc.to(at::kFloat)), v, g, 1.0, s_gla);
    at::Tensor ref = (o.permute({0, 2, 1, 3}) + xf * D.view({H, 1})).to(at::kBFloat16);
    REQUIRE(y.sizes() == ref.sizes());
    MESSAGE("ssd T=" << T << ": max |y - ref| " << (y.to(at::kFloat) - ref.to(at::kFloat)).abs().max().item<double>());
    CHECK(at::equal(y, ref));
    CHECK(at::equal(s_ssd, s_gla));
  }
}

TEST_CASE("gla cuda: state chaining (two calls equal one)") {
  SKIP_WITHOUT_CUDA();
  for (bool per_key : {true, false})
    for (auto [T, T1] : {std::pair<int64_t, int64_t>{256, 128}, {200, 77}}) {
      Inputs in = make_inputs(2, 2, T, 128, 64, per_key, -6.0, 31 + T);
      Gpu x = to_gpu(in);
      at::Tensor s_one = in.s0.cuda(), s_two = in.s0.cuda();
      at::Tensor one = kn::gla_chunked_cuda(x.q, x.k, x.v, x.g, 0.5, s_one);
      auto part = [&](const at::Tensor& t, int64_t a, int64_t n) { return t.narrow(2, a, n); };
      at::Tensor o1 = kn::gla_chunked_cuda(part(x.q, 0, T1), part(x.k, 0, T1), part(x.v, 0, T1), part(x.g, 0, T1), 0.5,
                                           s_two);
      at::Tensor o2 = kn::gla_chunked_cuda(part(x.q, T1, T - T1), part(x.k, T1, T - T1), part(x.v, T1, T - T1),
                                           part(x.g, T1, T - T1), 0.5, s_two);
      at::Tensor two = at::cat({o1, o2}, 2);
      const std::string name = std::string(per_key ? "per-key" : "scalar") + " chain " + std::to_string(T1) + "+" +
                               std::to_string(T - T1);
      if (T1 % 64 == 0) {
        // Same chunk boundaries: the carried fp32 state is the one the single call holds, so
        // the results are bitwise equal (no atomics anywhere).
        MESSAGE(name << ": max diff " << (one - two).abs().max().item<double>());
        CHECK(at::equal(one, two));
        CHECK(at::equal(s_one, s_two));
      } else {
        check_close(name + " out", two, one);
        check_close(name + " state", s_two, s_one);
      }
    }
}

TEST_CASE("gla cuda: step kernel equals the chunked kernel token by token, and is graph safe") {
  SKIP_WITHOUT_CUDA();
  for (bool per_key : {true, false})
    for (auto [K, V] : {std::pair<int64_t, int64_t>{128, 128}, {128, 64}, {64, 64}}) {
      const int64_t T = 20;
      Inputs in = make_inputs(3, 2, T, K, V, per_key, -6.0, 41 + K + V);
      at::Tensor s_ref = in.s0.to(at::kDouble);
      at::Tensor ref = naive_fp64(in, 0.4, s_ref);
      Gpu x = to_gpu(in);
      at::Tensor s_chunk = in.s0.cuda();
      at::Tensor chunk = kn::gla_chunked_cuda(x.q, x.k, x.v, x.g, 0.4, s_chunk);
      at::Tensor state = in.s0.cuda();
      const void* addr = state.data_ptr();
      std::vector<at::Tensor> steps;
      for (int64_t t = 0; t < T; ++t)
        steps.push_back(kn::gla_step_cuda(x.q.narrow(2, t, 1), x.k.narrow(2, t, 1), x.v.narrow(2, t, 1),
                                          x.g.narrow(2, t, 1), 0.4, state));
      CHECK(state.data_ptr() == addr);  // in place
      at::Tensor step = at::cat(steps, 2);
      const std::string name = std::string(per_key ? "per-key" : "scalar") + " K=" + std::to_string(K) +
                               " V=" + std::to_string(V) + " step";
      check_close(name + " vs fp64", step, ref, kStepTol, kStepTol);
      check_close(name + " state vs fp64", state, s_ref, kStepTol, kStepTol);
      check_close(name + " vs chunked", step, chunk);
      check_close(name + " state vs chunked", state, s_chunk);
    }
  // CUDA graph: capture one step on fixed buffers and replay it T times.
  const int64_t T = 6;
  Inputs in = make_inputs(2, 12, T, 128, 128, true, -6.0, 51);
  at::Tensor s_ref = in.s0.to(at::kDouble);
  at::Tensor ref = naive_fp64(in, 0.4, s_ref);
  Gpu x = to_gpu(in);
  at::Tensor q1 = x.q.narrow(2, 0, 1).clone(), k1 = x.k.narrow(2, 0, 1).clone();
  at::Tensor v1 = x.v.narrow(2, 0, 1).clone(), g1 = x.g.narrow(2, 0, 1).clone();
  at::Tensor state = in.s0.cuda(), warm = in.s0.cuda();
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  at::cuda::CUDAGraph graph;
  at::Tensor out;
  at::cuda::getCurrentCUDAStream().synchronize();  // the inputs above were made on the main stream
  {
    c10::cuda::CUDAStreamGuard on(stream);
    kn::gla_step_cuda(q1, k1, v1, g1, 0.4, warm);  // eager warm-up off the captured state
    graph.capture_begin();
    out = kn::gla_step_cuda(q1, k1, v1, g1, 0.4, state);
    graph.capture_end();
  }
  stream.synchronize();
  std::vector<at::Tensor> outs;
  for (int64_t t = 0; t < T; ++t) {
    q1.copy_(x.q.narrow(2, t, 1));
    k1.copy_(x.k.narrow(2, t, 1));
    v1.copy_(x.v.narrow(2, t, 1));
    g1.copy_(x.g.narrow(2, t, 1));
    graph.replay();
    outs.push_back(out.clone());
  }
  check_close("graph-replayed step vs fp64", at::cat(outs, 2), ref, kStepTol, kStepTol);
  check_close("graph-replayed state vs fp64", state, s_ref, kStepTol, kStepTol);
}
