// The recurrent families' fused glue kernels on the GPU (every case returns early with a message
// where CUDA is unavailable, as in CI): the causal conv (kernels/causal_conv.cu) against the ATen
// form of models/layers/recurrent_ops.cpp to the bit, chained segments and decode steps against one
// prefill, a CUDA-graph decode step; Mamba-2's gated norm (kernels/mamba2_glue.cu) against the
// ATen chain of the model and an fp64 reference; the models in bf16 with the kernels vs the
// ATen forms (FOXEVAL_RECURRENT_IMPL=aten). Inputs are made on the CPU with fixed seeds.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "data/switches.h"
#include "kernels/causal_conv.h"
#include "kernels/mamba2_glue.h"
#include "models/checkpoint/checkpoint.h"
#include "models/hgrn2/hgrn2_model.h"
#include "models/delta_net/delta_net_model.h"
#include "models/layers/layers.h"
#include "models/mamba2/mamba2_model.h"
#include "models/layers/recurrent_ops.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

// FOXEVAL_RECURRENT_IMPL for one scope ("" unsets it), the old value restored after (the models
// read it from the switch registry, data/switches.h).
class ImplEnv {
 public:
  explicit ImplEnv(const std::string& value) : over_("FOXEVAL_RECURRENT_IMPL", value.c_str()) {}

 private:
  SwitchOverride over_;
};

at::Tensor cuda(const at::Tensor& t) { return t.to(at::kCUDA); }
at::Tensor bf16_round(const at::Tensor& t) { return t.to(at::kBFloat16).to(at::kFloat); }

// Elements whose bits differ (sign of zero included) and the largest |a - b|.
struct BitDiff {
  int64_t mismatches = 0;
  double max_abs = 0.0;
};
BitDiff bit_diff(const at::Tensor& a, const at::Tensor& b) {
  REQUIRE(a.defined());
  REQUIRE(static_cast<int>(a.scalar_type()) == static_cast<int>(b.scalar_type()));
  REQUIRE(a.sizes().vec() == b.sizes().vec());
  const at::ScalarType bits = a.element_size() == 4 ? at::kInt : at::kShort;
  BitDiff d;
  d.mismatches = a.contiguous().view(bits).ne(b.contiguous().view(bits)).sum().item<int64_t>();
  if (a.numel() > 0) d.max_abs = (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
  return d;
}

// Real-token mask [B, T]: row 0 has (T + 1) / 2 left-padded positions, the other rows none.
at::Tensor padding_mask(int64_t B, int64_t T) {
  at::Tensor m = at::ones({B, T}, at::TensorOptions().dtype(at::kBool));
  m[0].narrow(0, 0, (T + 1) / 2).fill_(false);
  return m;
}

// How a conv case is called: the ATen function of models/layers/recurrent_ops.h it replaces and the
// CausalConvSpec that gives the same computation.
enum Mode { kPlain, kMamba2Bf16, kMamba2F16, kFlaSiluBf16, kFlaBf16, kModes };
const char* mode_name(int m) {
  static const char* names[] = {"causal_conv1d", "mamba2 conv+silu bf16", "mamba2 conv+silu fp16",
                                "fla_short_conv silu -> bf16", "fla_short_conv -> bf16"};
  return names[m];
}
bool mode_has_bias(int m) { return m == kPlain || m == kMamba2Bf16 || m == kMamba2F16; }

CausalConvSpec spec_of(int mode, const at::Tensor& bias, const at::Tensor& mask) {
  CausalConvSpec s;
  s.bias = bias;
  s.real_mask = mask;
  if (mode == kMamba2Bf16 || mode == kMamba2F16) {
    s.silu = true;
    s.round_before = s.round_after = mode == kMamba2Bf16 ? at::kBFloat16 : at::kHalf;
  }
  if (mode == kFlaSiluBf16 || mode == kFlaBf16) {
    s.silu = mode == kFlaSiluBf16;
    s.out_dtype = at::kBFloat16;
  }
  return s;
}

at::Tensor aten_conv(int mode, const at::Tensor& x, const at::Tensor& w, const at::Tensor& bias, const at::Tensor& mask,
                     at::Tensor* state) {
  ImplEnv env("aten");
  switch (mode) {
    case kPlain: return recurrent::causal_conv1d(x, w, bias, state, mask);
    case kMamba2Bf16: return recurrent::causal_conv1d(x, w, bias, state, mask, at::kBFloat16);
    case kMamba2F16: return recurrent::causal_conv1d(x, w, bias, state, mask, at::kHalf);
    case kFlaSiluBf16: return recurrent::fla_short_conv(x, w, true, mask, state, at::kBFloat16);
    default: return recurrent::fla_short_conv(x, w, false, mask, state, at::kBFloat16);
  }
}

}  // namespace

TEST_CASE("recurrent glue cuda: causal conv equals the ATen form to the bit") {
  SKIP_WITHOUT_CUDA();
  const int64_t B = 2, K = 4;
  int64_t cases = 0, failed = 0;
  for (int64_t C : {3328, 4096}) {
    at::manual_seed(C);
    at::Tensor w = cuda(bf16_round(at::randn({C, K})));  // as Mamba-2 loads it (bf16-rounded fp32)
    at::Tensor bias = cuda(bf16_round(at::randn({C})));
    at::Tensor state0 = cuda(at::randn({B, K - 1, C}));
    for (int64_t T : {1, 2, 3, 5, 4096}) {
      // x is a view into a wider tensor (as Mamba-2's xbc is a slice of in_proj's output):
      // offset 4 keeps 16-byte rows (vector path), offset 1 forces the scalar path.
      at::Tensor wide = at::randn({B, T, C + 8});
      at::Tensor mask = cuda(padding_mask(B, T));
      for (at::ScalarType xt : {at::kBFloat16, at::kFloat}) {
        at::Tensor wide_d = cuda(wide.to(xt));
        for (int64_t offset : {4, 1}) {
          at::Tensor x = wide_d.narrow(2, offset, C);
          for (int mode = 0; mode < kModes; ++mode)
            for (int with_bias = 0; with_bias < (mode_has_bias(mode) ? 2 : 1); ++with_bias)
              for (int with_mask = 0; with_mask < 2; ++with_mask)
                for (int st = 0; st < 3; ++st) {  // 0: no state, 1: fresh (undefined), 2: given
                  const at::Tensor b = with_bias ? bias : at::Tensor();
                  const at::Tensor m = with_mask ? mask : at::Tensor();
                  at::Tensor st_ref = st == 2 ? state0.clone() : at::Tensor();
                  at::Tensor st_k = st == 2 ? state0.clone() : at::Tensor();
                  const CausalConvSpec spec = spec_of(mode, b, m);
                  REQUIRE(causal_conv_cuda_supports(x, w, st ? &st_k : nullptr, spec));
                  const void* st_ptr = st == 2 ? st_k.data_ptr() : nullptr;
                  at::Tensor ref = aten_conv(mode, x, w, b, m, st ? &st_ref : nullptr);
                  at::Tensor got = causal_conv_cuda(x, w, st ? &st_k : nullptr, spec);
                  BitDiff d = bit_diff(got, ref);
                  BitDiff ds;
                  if (st) ds = bit_diff(st_k, st_ref);
                  const bool in_place = st != 2 || st_k.data_ptr() == st_ptr;
                  ++cases;
                  if (d.mismatches || ds.mismatches || !in_place) {
                    ++failed;
                    MESSAGE(fmt::format("C={} T={} x={} offset={} {} bias={} mask={} state={}: output {} "
                                        "mismatches (max abs {:.3g}), state {} mismatches, in place {}",
                                        C, T, c10::toString(xt), offset, mode_name(mode), with_bias, with_mask, st,
                                        d.mismatches, d.max_abs, ds.mismatches, in_place));
                  }
                }
        }
      }
    }
  }
  MESSAGE(fmt::format("causal conv: {} cases, {} not bit-equal to the ATen form", cases, failed));
  CHECK(failed == 0);
}

TEST_CASE("recurrent glue cuda: causal conv segments and decode steps equal one prefill") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(11);
  const int64_t B = 2, C = 3328, K = 4, T = 4100;
  at::Tensor x = cuda(at::randn({B, T, C}).to(at::kBFloat16));
  at::Tensor w = cuda(bf16_round(at::randn({C, K}))), bias = cuda(bf16_round(at::randn({C})));
  at::Tensor mask = cuda(padding_mask(B, T).logical_or(at::arange(T).unsqueeze(0) >= 10));  // row 0: 10 padded
  for (int mode : {kMamba2Bf16, kFlaSiluBf16}) {
    const at::Tensor b = mode_has_bias(mode) ? bias : at::Tensor();
    at::Tensor st_whole;
    at::Tensor whole = causal_conv_cuda(x, w, &st_whole, spec_of(mode, b, mask));
    // Segments: from the start short ones (T < K-1 keeps part of the zero history), a 4-step
    // decode, a segment of 4000, steps again, 2 tokens (T < K-1 after a full history), the rest.
    const std::vector<int64_t> lens{1, 2, 1, 1, 1, 1, 1, 4000, 1, 1, 1, 2, 3, 5, T - 4021};
    at::Tensor st, st_aten;
    std::vector<at::Tensor> parts, parts_aten;
    int64_t t0 = 0;
    for (int64_t n : lens) {
      const at::Tensor xs = x.narrow(1, t0, n), ms = mask.narrow(1, t0, n);
      parts.push_back(causal_conv_cuda(xs, w, &st, spec_of(mode, b, ms)));
      parts_aten.push_back(aten_conv(mode, xs, w, b, ms, &st_aten));
      t0 += n;
    }
    REQUIRE(t0 == T);
    BitDiff d = bit_diff(at::cat(parts, 1), whole), da = bit_diff(at::cat(parts_aten, 1), whole);
    BitDiff s = bit_diff(st, st_whole), sa = bit_diff(st_aten, st_whole);
    MESSAGE(fmt::format("{}: {} segments vs one prefill of {}: kernel {} / ATen {} output mismatches, "
                        "state {} / {}",
                        mode_name(mode), lens.size(), T, d.mismatches, da.mismatches, s.mismatches, sa.mismatches));
    CHECK(d.mismatches == 0);
    CHECK(da.mismatches == 0);
    CHECK(s.mismatches == 0);
    CHECK(sa.mismatches == 0);
  }
  // The model path dispatches to the kernel for bf16 x on a GPU: the state keeps its address.
  at::Tensor st = at::zeros({B, K - 1, C}, w.options());
  const void* before = st.data_ptr();
  at::Tensor y, y_aten, st_aten = st.clone();
  {
    ImplEnv env("");
    y = recurrent::causal_conv1d(x.narrow(1, 0, 7), w, bias, &st, mask.narrow(1, 0, 7), at::kBFloat16);
  }
  y_aten = aten_conv(kMamba2Bf16, x.narrow(1, 0, 7), w, bias, mask.narrow(1, 0, 7), &st_aten);
  CHECK(st.data_ptr() == before);
  CHECK(bit_diff(y, y_aten).mismatches == 0);
  CHECK(bit_diff(st, st_aten).mismatches == 0);
}

TEST_CASE("recurrent glue cuda: causal conv decode step replays in a CUDA graph") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(5);
  const int64_t S = 4, C = 3328, K = 4, steps = 6;
  at::Tensor xs = cuda(at::randn({steps, S, 1, C}).to(at::kBFloat16));
  at::Tensor w = cuda(bf16_round(at::randn({C, K}))), bias = cuda(bf16_round(at::randn({C})));
  at::Tensor st0 = cuda(at::randn({S, K - 1, C}));
  const CausalConvSpec spec = spec_of(kMamba2Bf16, bias, at::Tensor());
  // Eager reference.
  at::Tensor st_e = st0.clone();
  std::vector<at::Tensor> eager;
  for (int64_t i = 0; i < steps; ++i) eager.push_back(causal_conv_cuda(xs[i], w, &st_e, spec));
  // Graph: static input, state and output buffers; captured on a side stream after a warm-up.
  at::Tensor x_in = xs[0].clone(), st_g = st0.clone(), out;
  c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
  const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream();
  at::cuda::CUDAEvent before;
  before.record(main);
  before.block(stream);
  at::cuda::CUDAGraph graph;
  {
    c10::cuda::CUDAStreamGuard on(stream);
    at::Tensor warm_state = st0.clone();
    causal_conv_cuda(x_in, w, &warm_state, spec);  // warm-up outside the capture
    graph.capture_begin();
    out = causal_conv_cuda(x_in, w, &st_g, spec);
    graph.capture_end();
  }
  at::cuda::CUDAEvent after;
  after.record(stream);
  after.block(main);
  st_g.copy_(st0);  // the capture does not run the kernel; reset anyway
  int64_t mismatches = 0;
  for (int64_t i = 0; i < steps; ++i) {
    x_in.copy_(xs[i]);
    graph.replay();
    mismatches += bit_diff(out, eager[i]).mismatches;
  }
  mismatches += bit_diff(st_g, st_e).mismatches;
  MESSAGE(fmt::format("graph decode: {} steps of {} slots, {} mismatches vs eager", steps, S, mismatches));
  CHECK(mismatches == 0);
}

namespace {

// Mamba-2's gated norm inputs as the model forms them: y [B,H,T,P] a slice of a padded scan
// output, xs [B,T,H,P] a view of the conv output (bf16 values), z a slice of in_proj's output.
struct NormInputs {
  at::Tensor y, xs, D, z, w;
};
NormInputs norm_inputs(int64_t B, int64_t T, int64_t H, int64_t P, int64_t seed) {
  at::manual_seed(seed);
  const int64_t E = H * P, Tp = T + 5;
  NormInputs in;
  in.y = cuda(at::randn({B, H, Tp, P})).narrow(2, 0, T);
  in.xs = cuda(bf16_round(at::randn({B, T, E + 12}))).narrow(-1, 0, E).view({B, T, H, P});
  in.D = cuda(at::randn({H}));
  in.z = cuda(at::randn({B, T, 2 * E + 12}).to(at::kBFloat16)).narrow(-1, 0, E);
  in.w = cuda(1.0 + 0.1 * at::randn({E}));
  return in;
}

// The model's ATen chain (models/mamba2/mamba2_model.cpp, gated_norm's fallback), fp32.
at::Tensor norm_aten(const NormInputs& in, int64_t G, double eps) {
  const int64_t B = in.xs.size(0), T = in.xs.size(1), H = in.xs.size(2), E = H * in.xs.size(3);
  at::Tensor u = (in.y.permute({0, 2, 1, 3}) + in.xs * in.D.view({H, 1})).reshape({B, T, E});
  return foxeval::group_rms_norm(u * at::silu(in.z.to(at::kFloat)), in.w, G, eps, at::kFloat);
}

// The same in fp64 on the CPU.
at::Tensor norm_fp64(const NormInputs& in, int64_t G, double eps) {
  const int64_t B = in.xs.size(0), T = in.xs.size(1), H = in.xs.size(2), E = H * in.xs.size(3);
  auto d = [](const at::Tensor& t) { return t.to(at::kCPU).to(at::kDouble); };
  at::Tensor u = (d(in.y).permute({0, 2, 1, 3}) + d(in.xs) * d(in.D).view({H, 1})).reshape({B, T, E});
  at::Tensor g = (u * at::silu(d(in.z))).view({B, T, G, E / G});
  at::Tensor r = at::rsqrt(g.square().mean({-1}, true) + eps);
  return (g * r).view({B, T, E}) * d(in.w);
}

// max |a - b| / |b| over the elements (b never 0 here: random inputs).
double max_rel(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor ad = a.to(at::kCPU).to(at::kDouble), bd = b.to(at::kCPU).to(at::kDouble);
  return ((ad - bd).abs() / bd.abs().clamp_min(1e-30)).max().item<double>();
}

}  // namespace

TEST_CASE("recurrent glue cuda: Mamba-2 gated norm equals the ATen chain") {
  SKIP_WITHOUT_CUDA();
  // Tolerance (fp32 output): the kernel and the ATen chain do the same rounded elementwise ops;
  // they differ only in the order of the group's fp32 sum of squares. Each order's relative
  // error is at most ~depth * 2^-24 (depth: the longest chain of adds, ~30 for a strided sum
  // plus a tree over 3072 terms), so the two sums differ by <= ~60 * 2^-24 = 3.6e-6 relative in
  // the worst case, rsqrt halves that, and rsqrtf (2 ulp) plus the two final products add
  // ~3 * 2^-24. 4e-6 covers the worst case; random data lands far below (the device run
  // reports the measured value). bf16 output: the fp32 results differ by so little that a bf16
  // rounding flips only when the value is that close to a rounding midpoint: at most 1 bf16 ulp
  // (2^-8 relative), on a small fraction of the elements.
  struct Shape {
    int64_t B, T, H, P, G;
  };
  const double eps = 1e-5, tol = 4e-6;
  for (const Shape& s : {Shape{1, 4096, 48, 64, 1}, Shape{2, 7, 4, 16, 1}, Shape{2, 7, 4, 16, 2},
                         Shape{3, 5, 4, 6, 2} /* P = 6: the scalar path */}) {
    const NormInputs in = norm_inputs(s.B, s.T, s.H, s.P, s.H * 100 + s.G);
    REQUIRE(mamba2_gated_norm_supports(in.y, in.xs, in.D, in.z, in.w, s.G, at::kFloat));
    at::Tensor got = mamba2_gated_norm(in.y, in.xs, in.D, in.z, in.w, s.G, eps, at::kFloat);
    at::Tensor got_bf = mamba2_gated_norm(in.y, in.xs, in.D, in.z, in.w, s.G, eps, at::kBFloat16);
    at::Tensor ref = norm_aten(in, s.G, eps), ref64 = norm_fp64(in, s.G, eps);
    const double e_aten = max_rel(got, ref), e_64 = max_rel(got, ref64), e_aten64 = max_rel(ref, ref64);
    at::Tensor ref_bf = ref.to(at::kBFloat16);
    const BitDiff bd = bit_diff(got_bf, ref_bf);
    const double bf_rel = max_rel(got_bf.to(at::kFloat), ref_bf.to(at::kFloat));
    const double frac = static_cast<double>(bd.mismatches) / static_cast<double>(ref.numel());
    MESSAGE(fmt::format("gated norm B={} T={} H={} P={} groups={}: fp32 max rel vs ATen {:.3g}, vs fp64 {:.3g} "
                        "(ATen vs fp64 {:.3g}); bf16 out: {} of {} differ ({:.2e}), max rel {:.3g}",
                        s.B, s.T, s.H, s.P, s.G, e_aten, e_64, e_aten64, bd.mismatches, ref.numel(), frac, bf_rel));
    CHECK(e_aten < tol);
    // Elementwise relative error against fp64 is large for both (0.195 at the 760M shape on the
    // H100: near-zero outputs); the kernel must be no further from fp64 than the ATen chain is.
    CHECK(e_64 <= e_aten64 + tol);
    CHECK(bf_rel <= 1.0 / 128);  // 1 bf16 ulp: at most 2^-7 relative just above a power of two
    CHECK(frac < 1e-2);

    // The SSD kernel's form: y bf16 [B,T,H,P] with the D skip included, no xs.
    const int64_t E = s.H * s.P;
    at::Tensor yb = (in.y.permute({0, 2, 1, 3}) + in.xs * in.D.view({s.H, 1})).to(at::kBFloat16).contiguous();
    at::Tensor yh = yb.permute({0, 2, 1, 3});
    REQUIRE(mamba2_gated_norm_supports(yh, at::Tensor(), in.D, in.z, in.w, s.G, at::kFloat));
    CHECK_FALSE(mamba2_gated_norm_supports(yh.to(at::kFloat), at::Tensor(), in.D, in.z, in.w, s.G, at::kFloat));
    at::Tensor got_b = mamba2_gated_norm(yh, at::Tensor(), in.D, in.z, in.w, s.G, eps, at::kFloat);
    at::Tensor ref_b = foxeval::group_rms_norm(yb.to(at::kFloat).reshape({s.B, s.T, E}) * at::silu(in.z.to(at::kFloat)),
                                               in.w, s.G, eps, at::kFloat);
    const double e_b = max_rel(got_b, ref_b);
    MESSAGE(fmt::format("  bf16 y with the D skip: fp32 max rel vs ATen {:.3g}", e_b));
    CHECK(e_b < tol);
  }
}

namespace {

std::unique_ptr<CausalLM> load_cuda_bf16(const std::string& dir) {
  Checkpoint ckpt(dir);
  RunOptions options;
  options.dtype = "bfloat16";
  options.device = "cuda";
  std::unique_ptr<CausalLM> model;
  const std::string type = ckpt.model_type();
  if (type == "mamba2-project_fox") model = make_mamba2(ckpt, options);
  if (type == "hgrn2-project_fox") model = make_hgrn2(ckpt, options);
  if (type == "delta_net-project_fox") model = make_delta_net(ckpt, options);
  REQUIRE(model);
  return model;
}

}  // namespace

TEST_CASE("recurrent glue cuda: models in bf16 with the glue kernels vs the ATen forms") {
  SKIP_WITHOUT_CUDA();
  // Whole models: the dispatch, Mamba-2's strided conv input and gated-norm views, padding
  // masks through the conv. Left padding in row 0 (seq_start 9) and a prefill of 60 followed
  // by 4 steps. The convs give the same bits; Mamba-2's norm differs by fp32 sum order, which
  // bf16 rounding downstream can turn into single-ulp flips, so outputs are compared to a
  // bound well below the bf16 noise of the families' logits (1.5e-2 mean vs the official).
  const std::string root = std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/";
  for (const std::string& dir : {root + "official/mamba2", root + "official/delta_net", root + "recurrent_unseen/hgrn2_conv_h128"}) {
    auto model = load_cuda_bf16(dir);
    at::manual_seed(9);
    const int64_t V = model->info().vocab_size, T = 64;
    at::Tensor ids = at::randint(V, {2, T}, at::TensorOptions().dtype(at::kLong));
    at::Tensor seq_start = at::tensor({9, 0}, at::TensorOptions().dtype(at::kLong));
    auto run = [&](const std::string& impl) {
      ImplEnv env(impl);
      auto state = model->new_state(2, seq_start);
      std::vector<at::Tensor> parts{model->forward(ids.narrow(1, 0, 60), state.get())};
      for (int64_t t = 60; t < T; ++t) parts.push_back(model->forward(ids.narrow(1, t, 1), state.get()));
      return at::cat(parts, 1).to(at::kCPU).narrow(1, 9, T - 9);  // row 0's real positions onwards
    };
    at::Tensor k = run(""), a = run("aten");
    const double scale = a.abs().max().item<double>();
    const double err = (k - a).abs().max().item<double>() / scale;
    const bool same = at::equal(k, a);
    MESSAGE(fmt::format("{}: hidden states kernels vs ATen: max abs diff / max abs {:.3g} (bit-identical: {})", dir,
                        err, same));
    CHECK(std::isfinite(err));
    CHECK(err < 2e-2);
  }
}

namespace {

// Mean milliseconds of f() over `iters` runs after 3 warm-up runs (CUDA events on the stream).
template <typename F>
double time_ms(F&& f, int iters = 20) {
  for (int i = 0; i < 3; ++i) f();
  at::cuda::CUDAEvent start(cudaEventDefault), stop(cudaEventDefault);
  start.record();
  for (int i = 0; i < iters; ++i) f();
  stop.record();
  stop.synchronize();
  return start.elapsed_time(stop) / iters;
}

}  // namespace

TEST_CASE("recurrent glue cuda: timings at the 760M shapes (reported, not gated)") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(1);
  const int64_t T = 4096, C = 3328, E = 3072, K = 4, H = 48, P = 64;
  // Mamba-2's layer: in_proj output [1, T, 2E + C + H] bf16, xbc its slice.
  at::Tensor proj = cuda(at::randn({1, T, 2 * E + C + H}).to(at::kBFloat16));
  at::Tensor xbc = proj.narrow(-1, E, C);
  at::Tensor w = cuda(bf16_round(at::randn({C, K}))), bias = cuda(bf16_round(at::randn({C})));
  at::Tensor st = at::zeros({1, K - 1, C}, w.options());
  const CausalConvSpec spec = spec_of(kMamba2Bf16, bias, at::Tensor());
  const double conv_k = time_ms([&] { causal_conv_cuda(xbc, w, &st, spec); });
  const double conv_a = time_ms([&] { aten_conv(kMamba2Bf16, xbc, w, bias, at::Tensor(), &st); });
  at::Tensor x1 = proj.narrow(1, 0, 1).narrow(-1, E, C);
  at::Tensor st1 = at::zeros({1, K - 1, C}, w.options());
  const double step_k = time_ms([&] { causal_conv_cuda(x1, w, &st1, spec); }, 200);
  const double step_a = time_ms([&] { aten_conv(kMamba2Bf16, x1, w, bias, at::Tensor(), &st1); }, 200);
  const NormInputs in = norm_inputs(1, T, H, P, 3);
  const double norm_k = time_ms([&] { mamba2_gated_norm(in.y, in.xs, in.D, in.z, in.w, 1, 1e-5, at::kBFloat16); });
  const double norm_a = time_ms([&] { norm_aten(in, 1, 1e-5).to(at::kBFloat16); });
  MESSAGE(fmt::format("760M Mamba-2 layer, T={}: conv+silu kernel {:.4f} ms vs ATen {:.4f} ms; decode step (B=1) "
                      "kernel {:.4f} ms vs ATen {:.4f} ms; gated norm kernel {:.4f} ms vs ATen chain {:.4f} ms",
                      T, conv_k, conv_a, step_k, step_a, norm_k, norm_a));
  CHECK(conv_k > 0.0);
}
