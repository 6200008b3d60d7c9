// Fused CUDA glue kernels (kernels/fused_glue.cu) against the torch-op path they replace, on
// random inputs with odd sizes and bf16/fp32 dtypes (runs on a GPU machine; every case returns
// early with a message where CUDA is unavailable, as in CI).
#include <ATen/ATen.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/fused_glue.h"
#include "kernels/fused_loss.h"
#include "tests/test_support.h"

namespace {

using at::ScalarType;

at::TensorOptions cuda(ScalarType t) { return at::TensorOptions().device(at::kCUDA).dtype(t); }

// The torch-op references (as models/layers/layers.cpp and models/fox/fox_model.cpp compute them).
at::Tensor ref_rms(const at::Tensor& x, const at::Tensor& w, double eps, ScalarType out) {
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor rstd = at::rsqrt(xf.square().mean({-1}, true) + eps);
  return (xf * rstd * w).to(out);
}
at::Tensor ref_group(const at::Tensor& x, const at::Tensor& w, int64_t G, double eps, ScalarType out,
                     const at::Tensor& gate = at::Tensor()) {
  auto shape = x.sizes().vec();
  std::vector<int64_t> grouped(shape.begin(), shape.end() - 1);
  grouped.push_back(G);
  grouped.push_back(shape.back() / G);
  at::Tensor xf = x.to(at::kFloat).reshape(grouped);
  at::Tensor rstd = at::rsqrt(xf.square().mean({-1}, true) + eps);
  at::Tensor y = (xf * rstd).reshape(shape).mul(w);
  if (gate.defined()) y = y * at::sigmoid(gate.to(at::kFloat));
  return y.to(out);
}
at::Tensor ref_swiglu(const at::Tensor& y, bool silu, ScalarType out) {
  auto parts = y.chunk(2, -1);
  at::Tensor g = parts[0].to(at::kFloat), u = parts[1].to(at::kFloat);
  return ((silu ? at::silu(g) : at::sigmoid(g)) * u).to(out);
}
at::Tensor ref_shift(const at::Tensor& proj, const at::Tensor& logit, const at::Tensor& prev, const at::Tensor& mask) {
  const int64_t B = proj.size(0), T = proj.size(1), H = logit.size(2);
  at::Tensor out = proj;
  if (mask.defined()) out = out.masked_fill(mask.unsqueeze(-1), 0.0);
  at::Tensor alpha = at::sigmoid(logit.to(at::kFloat)).unsqueeze(-1);
  at::Tensor cur = out.to(at::kFloat).view({B, T, H, -1});
  at::Tensor first = prev.defined() ? prev.to(at::kFloat).view({B, 1, H, -1}) : at::zeros({B, 1, H, cur.size(3)}, cur.options());
  at::Tensor p = at::cat({first, cur.slice(1, 0, T - 1)}, 1);
  return (alpha * p + (1.0 - alpha) * cur).to(out.scalar_type()).view({B, T, -1});
}

// bf16: >99.9% bit-equal and never more than 1 ulp apart; fp32: within reduction-order noise.
void expect_close(const at::Tensor& got, const at::Tensor& ref, const std::string& what, bool exact = false) {
  REQUIRE(got.defined());
  REQUIRE(static_cast<int>(got.scalar_type()) == static_cast<int>(ref.scalar_type()));
  REQUIRE(got.sizes().vec() == ref.sizes().vec());
  const int64_t n = ref.numel();
  if (ref.scalar_type() == at::kBFloat16) {
    at::Tensor a = got.contiguous().view(at::kShort).to(at::kInt), b = ref.contiguous().view(at::kShort).to(at::kInt);
    const int64_t ulps = (a - b).abs().max().item<int64_t>();
    const double equal = (a == b).sum().item<int64_t>() / static_cast<double>(n);
    MESSAGE(what << ": bf16 equal fraction " << equal << ", max ulp diff " << ulps);
    CHECK(ulps <= (exact ? 0 : 1));
    CHECK(equal >= (exact ? 1.0 : 0.999));
  } else {
    const double diff = (got - ref).abs().max().item<double>();
    const double scale = ref.abs().max().item<double>();
    MESSAGE(what << ": fp32 max abs diff " << diff << " (max |ref| " << scale << ")");
    CHECK(diff <= (exact ? 0.0 : 4e-6 * std::max(scale, 1.0)));
  }
}

const std::vector<ScalarType> kTypes = {at::kBFloat16, at::kFloat};
std::string tn(ScalarType t) { return t == at::kFloat ? "fp32" : "bf16"; }

}  // namespace

TEST_CASE("fused rms_norm matches the torch ops") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(7);
  for (int64_t D : {1536, 64, 7, 1000, 8200, 4096}) {
    for (int64_t rows : {int64_t(1), int64_t(3), int64_t(1025)}) {
      for (ScalarType tin : kTypes) {
        for (ScalarType tout : kTypes) {
          at::Tensor x = (at::randn({rows, D}, cuda(at::kFloat)) * 3).to(tin);
          at::Tensor w = at::randn({D}, cuda(at::kFloat));
          const std::string what = "rms D=" + std::to_string(D) + " rows=" + std::to_string(rows) + " " + tn(tin) +
                                   "->" + tn(tout);
          expect_close(foxeval::fused_rms_norm(x, w, 1e-6, tout), ref_rms(x, w, 1e-6, tout), what);
        }
      }
    }
  }
  // A 3-d input and a non-contiguous one.
  at::Tensor x = at::randn({2, 37, 1536}, cuda(at::kBFloat16));
  at::Tensor w = at::randn({1536}, cuda(at::kFloat));
  expect_close(foxeval::fused_rms_norm(x, w, 1e-5, at::kBFloat16), ref_rms(x, w, 1e-5, at::kBFloat16), "rms 3d");
  at::Tensor xt = at::randn({1536, 40}, cuda(at::kFloat)).t();
  expect_close(foxeval::fused_rms_norm(xt, w, 1e-5, at::kFloat), ref_rms(xt, w, 1e-5, at::kFloat), "rms strided");
}

TEST_CASE("fused group_rms_norm (and output gate) matches the torch ops") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(8);
  struct Shape { int64_t G, Dg; };
  for (Shape s : {Shape{24, 64}, Shape{16, 128}, Shape{3, 8}, Shape{5, 256}, Shape{1, 64}}) {
    const int64_t D = s.G * s.Dg;
    for (int64_t rows : {int64_t(1), int64_t(77)}) {
      for (ScalarType tin : kTypes) {
        for (ScalarType tout : kTypes) {
          at::Tensor x = (at::randn({rows, D}, cuda(at::kFloat)) * 2).to(tin);
          at::Tensor w = at::randn({D}, cuda(at::kFloat));
          const std::string what = "group G=" + std::to_string(s.G) + " Dg=" + std::to_string(s.Dg) + " rows=" +
                                   std::to_string(rows) + " " + tn(tin) + "->" + tn(tout);
          at::Tensor got = foxeval::fused_group_rms_norm(x, w, s.G, 1e-5, tout);
          expect_close(got, ref_group(x, w, s.G, 1e-5, tout), what);
          for (ScalarType tg : kTypes) {
            at::Tensor g = (at::randn({rows, D}, cuda(at::kFloat)) * 4).to(tg);
            expect_close(foxeval::fused_group_rms_norm(x, w, s.G, 1e-6, tout, g),
                         ref_group(x, w, s.G, 1e-6, tout, g), what + " gate " + tn(tg));
          }
        }
      }
    }
  }
  // Unsupported group sizes fall back (undefined result), never a wrong answer.
  at::Tensor x = at::randn({4, 30}, cuda(at::kFloat));
  CHECK_FALSE(foxeval::fused_group_rms_norm(x, at::ones({30}, cuda(at::kFloat)), 3, 1e-5, at::kFloat).defined());
}

TEST_CASE("fused residual add + rms_norm matches the torch ops") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(9);
  for (int64_t D : {1536, 13}) {
    for (ScalarType td : kTypes) {
      for (ScalarType tout : kTypes) {
        at::Tensor x = at::randn({3, 33, D}, cuda(at::kFloat));
        at::Tensor delta = at::randn({3, 33, D}, cuda(at::kFloat)).to(td);
        at::Tensor w = at::randn({D}, cuda(at::kFloat));
        at::Tensor x_ref = x + delta.to(at::kFloat);
        at::Tensor ref = ref_rms(x_ref, w, 1e-6, tout);
        at::Tensor got = foxeval::fused_add_rms_norm(x, delta, w, 1e-6, tout);
        const std::string what = "add+rms D=" + std::to_string(D) + " " + tn(td) + "->" + tn(tout);
        expect_close(x, x_ref, what + " residual", /*exact=*/true);
        expect_close(got, ref, what);
      }
    }
  }
}

TEST_CASE("fused swiglu matches the torch ops") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(10);
  for (int64_t I : {3584, 5, 64, 1001}) {
    for (ScalarType tin : kTypes) {
      for (ScalarType tout : kTypes) {
        for (bool silu : {true, false}) {
          at::Tensor y = (at::randn({2, 19, 2 * I}, cuda(at::kFloat)) * 3).to(tin);
          const std::string what = "swiglu I=" + std::to_string(I) + " " + tn(tin) + "->" + tn(tout) +
                                   (silu ? " silu" : " sigmoid");
          expect_close(foxeval::fused_swiglu(y, silu, tout), ref_swiglu(y, silu, tout), what);
        }
      }
    }
  }
}

TEST_CASE("fused token shift matches the torch ops") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(11);
  struct Shape { int64_t B, T, H, Dh; };
  for (Shape s : {Shape{1, 257, 24, 64}, Shape{3, 1, 4, 64}, Shape{2, 17, 3, 5}, Shape{4, 9, 2, 128}}) {
    for (ScalarType tp : kTypes) {
      for (ScalarType ta : kTypes) {
        for (int variant = 0; variant < 4; ++variant) {  // bit 0: prev, bit 1: pad mask
          const int64_t C = s.H * s.Dh;
          at::Tensor proj = at::randn({s.B, s.T, C}, cuda(at::kFloat)).to(tp);
          at::Tensor logit = (at::randn({s.B, s.T, s.H}, cuda(at::kFloat)) * 2).to(ta);
          at::Tensor prev = (variant & 1) ? at::randn({s.B, C}, cuda(at::kFloat)).to(tp) : at::Tensor();
          at::Tensor mask;
          if (variant & 2) {
            at::Tensor start = at::randint(0, s.T + 1, {s.B, 1}, cuda(at::kLong));
            mask = at::arange(s.T, cuda(at::kLong)).unsqueeze(0) < start;
          }
          const std::string what = "shift B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) +
                                   " Dh=" + std::to_string(s.Dh) + " " + tn(tp) + "/" + tn(ta) + " variant " +
                                   std::to_string(variant);
          expect_close(foxeval::fused_token_shift(proj, logit, prev, mask), ref_shift(proj, logit, prev, mask), what);
        }
      }
    }
  }
}

// Column slices of one wide matrix, as the FoX prefill's fused input projection hands them over
// (q, the output gate, k and its shift logits side by side in one [B, T, N] product): read in
// place through their row stride, same results as on contiguous copies. Odd slices (a row
// stride that is not a multiple of 8 elements, a misaligned start) take the scalar path.
TEST_CASE("fused glue reads column slices of a wider matrix") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(12);
  const int64_t B = 2, T = 129, H = 24, Dh = 64, C = H * Dh;
  for (int64_t pad : {int64_t(0), int64_t(3)}) {  // pad 3: row stride and offsets not 16-byte multiples
    for (ScalarType t : kTypes) {
      const int64_t N = 2 * C + 2 * H + pad;
      at::Tensor wide = at::randn({B, T, N}, cuda(at::kFloat)).to(t);
      at::Tensor q = wide.narrow(-1, pad, C), gate = wide.narrow(-1, pad + C, C);
      at::Tensor alpha = wide.narrow(-1, pad + 2 * C, H), other = wide.narrow(-1, pad + 2 * C + H, H);
      at::Tensor w = at::randn({C}, cuda(at::kFloat));
      const std::string what = "slices " + tn(t) + " pad " + std::to_string(pad);
      expect_close(foxeval::fused_group_rms_norm(q, w, H, 1e-5, t), foxeval::fused_group_rms_norm(q.contiguous(), w, H, 1e-5, t),
                   what + " group norm", /*exact=*/true);
      expect_close(foxeval::fused_group_rms_norm(q, w, H, 1e-5, t), ref_group(q.contiguous(), w, H, 1e-5, t),
                   what + " group norm vs torch");
      expect_close(foxeval::fused_group_rms_norm(q, w, H, 1e-5, at::kBFloat16, gate),
                   foxeval::fused_group_rms_norm(q.contiguous(), w, H, 1e-5, at::kBFloat16, gate.contiguous()),
                   what + " group norm * gate", /*exact=*/true);
      expect_close(foxeval::fused_rms_norm(gate, w, 1e-6, t), foxeval::fused_rms_norm(gate.contiguous(), w, 1e-6, t),
                   what + " rms norm", /*exact=*/true);
      at::Tensor prev = at::randn({B, C}, cuda(at::kFloat)).to(t);
      at::Tensor start = at::tensor({int64_t(0), int64_t(5)}, cuda(at::kLong)).view({B, 1});
      at::Tensor mask = at::arange(T, cuda(at::kLong)).unsqueeze(0) < start;
      expect_close(foxeval::fused_token_shift(q, alpha, prev, mask),
                   foxeval::fused_token_shift(q.contiguous(), alpha.contiguous(), prev, mask), what + " token shift",
                   /*exact=*/true);
      expect_close(foxeval::fused_token_shift(q, other, at::Tensor(), at::Tensor()),
                   ref_shift(q.contiguous(), other.contiguous(), at::Tensor(), at::Tensor()), what + " shift vs torch");
    }
  }
  // Head-major results ([B, T, H, Dh] views of [B, H, T, Dh] buffers, the attention kernel's
  // fastest layout): the same values as the usual layout, and rotary keeps the layout.
  for (ScalarType t : kTypes) {
    at::Tensor wide = at::randn({B, T, 2 * C + H}, cuda(at::kFloat)).to(t);
    at::Tensor x = wide.narrow(-1, 0, C), alpha = wide.narrow(-1, 2 * C, H);
    at::Tensor w = at::randn({C}, cuda(at::kFloat));
    at::Tensor hm = foxeval::fused_group_rms_norm(x, w, H, 1e-5, t, at::Tensor(), /*head_major=*/true);
    REQUIRE(hm.defined());
    CHECK(hm.sizes().vec() == std::vector<int64_t>{B, T, H, Dh});
    CHECK(hm.permute({0, 2, 1, 3}).is_contiguous());
    expect_close(hm.reshape({B, T, C}), foxeval::fused_group_rms_norm(x, w, H, 1e-5, t), "head-major group norm " + tn(t),
                 /*exact=*/true);
    at::Tensor prev = at::randn({B, C}, cuda(at::kFloat)).to(t);
    at::Tensor sh = foxeval::fused_token_shift(x, alpha, prev, at::Tensor(), /*head_major=*/true);
    REQUIRE(sh.defined());
    CHECK(sh.permute({0, 2, 1, 3}).is_contiguous());
    expect_close(sh.reshape({B, T, C}), foxeval::fused_token_shift(x, alpha, prev, at::Tensor()),
                 "head-major token shift " + tn(t), /*exact=*/true);
    at::Tensor pos = at::arange(T, cuda(at::kLong)).unsqueeze(0).expand({B, T}).contiguous() + 7;
    at::Tensor inv_freq = at::rand({Dh / 2}, cuda(at::kFloat));
    at::Tensor rot = foxeval::fused_rotary(hm, pos, inv_freq);
    REQUIRE(rot.defined());
    CHECK(rot.permute({0, 2, 1, 3}).is_contiguous());
    expect_close(rot.contiguous(), foxeval::fused_rotary(hm.contiguous(), pos, inv_freq), "head-major rotary " + tn(t),
                 /*exact=*/true);
  }
  // Rows that are not evenly spaced (a transposed view) are copied first: still right.
  at::Tensor x = at::randn({C, 2, 7}, cuda(at::kFloat)).permute({1, 2, 0});
  at::Tensor w = at::randn({C}, cuda(at::kFloat));
  expect_close(foxeval::fused_group_rms_norm(x, w, H, 1e-5, at::kFloat), ref_group(x, w, H, 1e-5, at::kFloat),
               "permuted group norm");
}

TEST_CASE("fused rotary matches the torch ops") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(12);
  struct Shape { int64_t B, T, H, D; };
  for (Shape s : {Shape{1, 300, 24, 64}, Shape{3, 5, 4, 128}, Shape{2, 7, 3, 6}}) {
    for (ScalarType tx : kTypes) {
      for (bool offset : {false, true}) {
        at::Tensor x = at::randn({s.B, s.T, s.H, s.D}, cuda(at::kFloat)).to(tx);
        // Positions as the model builds them: arange (+ decode offset) minus a per-row start.
        const int64_t off = offset ? 65000 : 0;
        at::Tensor pos = at::arange(off, off + s.T, cuda(at::kLong)).unsqueeze(0).expand({s.B, s.T});
        pos = pos - at::randint(0, 4, {s.B, 1}, cuda(at::kLong));
        at::Tensor inv = at::pow(10000.0, at::arange(0, s.D, 2, cuda(at::kFloat)) / static_cast<double>(s.D)).reciprocal();
        // The torch path of foxeval::rotary (models/layers/rotary.cpp).
        at::Tensor freqs = pos.to(at::kFloat).unsqueeze(-1) * inv;
        at::Tensor c = at::cos(freqs).to(tx).to(at::kFloat).unsqueeze(2);
        at::Tensor sn = at::sin(freqs).to(tx).to(at::kFloat).unsqueeze(2);
        at::Tensor xf = x.to(at::kFloat);
        const int64_t half = s.D / 2;
        at::Tensor x0 = xf.slice(-1, 0, half), x1 = xf.slice(-1, half);
        at::Tensor ref = at::cat({x0 * c - x1 * sn, x0 * sn + x1 * c}, -1).to(tx);
        const std::string what = "rotary B=" + std::to_string(s.B) + " T=" + std::to_string(s.T) + " D=" +
                                 std::to_string(s.D) + " " + tn(tx) + (offset ? " offset" : "");
        expect_close(foxeval::fused_rotary(x, pos, inv), ref, what);
      }
    }
  }
}

TEST_CASE("fused token log-probabilities equal log_softmax + gather") {
  SKIP_WITHOUT_CUDA();
  for (auto dtype : {at::kBFloat16, at::kFloat}) {
    for (int64_t V : {7, 1000, 50257, 50304}) {
      const int64_t N = 333;
      at::Tensor logits = (at::randn({N, V}, at::kCUDA) * 6).to(dtype);
      at::Tensor labels = at::randint(0, V, {N}, at::TensorOptions().device(at::kCUDA).dtype(at::kLong));
      at::Tensor got = foxeval::fused_token_logprobs(logits, labels);
      REQUIRE(got.defined());
      at::Tensor want = at::log_softmax(logits.to(at::kDouble), -1).gather(-1, labels.unsqueeze(-1)).squeeze(-1);
      const double err = (got.to(at::kDouble) - want).abs().max().item<double>();
      MESSAGE("V " << V << " max abs err " << err);
      CHECK(err < 1e-4 * std::log(static_cast<double>(V)) + 1e-5);
      // A narrowed view of padded logits (row pitch > V), as the engine passes them.
      at::Tensor padded = at::constant_pad_nd(logits, {0, 64 - V % 64}, 1e4);
      CHECK(at::equal(foxeval::fused_token_logprobs(padded.narrow(1, 0, V), labels), got));
      // A row pitch that is not 16-byte aligned takes the scalar loads: the same bits.
      at::Tensor odd = at::constant_pad_nd(logits, {0, 1}, 1e4);
      CHECK(at::equal(foxeval::fused_token_logprobs(odd.narrow(1, 0, V), labels), got));
    }
  }
}
