// The FoX prefill's one-kernel q/k/v glue (kernels/fox_prefill_prep.h) against the separate
// kernels it replaces (equal bits) and the torch ops; the forget gate scan
// (kernels/fgate_scan.h) against fp64 and ATen's cumsum. Runs on a GPU machine; every case
// returns early with a message where CUDA is unavailable, as in CI.
#include <ATen/ATen.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <string>
#include <vector>

#include "kernels/fgate_scan.h"
#include "kernels/fox_prefill_prep.h"
#include "kernels/fused_glue.h"
#include "tests/test_support.h"

namespace {

at::TensorOptions cuda(at::ScalarType t) { return at::TensorOptions().device(at::kCUDA).dtype(t); }

// Bitwise equality of two tensors of one dtype and shape (any layout).
void expect_same_bits(const at::Tensor& got, const at::Tensor& ref, const std::string& what) {
  REQUIRE(got.defined());
  REQUIRE(ref.defined());
  REQUIRE(got.sizes().vec() == ref.sizes().vec());
  REQUIRE(static_cast<int>(got.scalar_type()) == static_cast<int>(ref.scalar_type()));
  const at::ScalarType bits = got.scalar_type() == at::kFloat ? at::kInt : at::kShort;
  const int64_t differ = at::ne(got.contiguous().view(bits), ref.contiguous().view(bits)).sum().item<int64_t>();
  MESSAGE(what << ": " << differ << " of " << got.numel() << " elements differ");
  CHECK(differ == 0);
}

struct Case {
  int64_t B, T, H, Dh;
  bool k_shift, v_shift, norm, rope, prev, mask;
};

std::string describe(const Case& c, at::ScalarType t) {
  return "B=" + std::to_string(c.B) + " T=" + std::to_string(c.T) + " H=" + std::to_string(c.H) + " Dh=" +
         std::to_string(c.Dh) + (t == at::kFloat ? " fp32" : " bf16") + (c.k_shift ? " kshift" : "") +
         (c.v_shift ? " vshift" : "") + (c.norm ? " norm" : "") + (c.rope ? " rope" : "") + (c.prev ? " prev" : "") +
         (c.mask ? " mask" : "");
}

}  // namespace

// The model's unfused chain (models/fox/fox_model.cpp, ForgettingTransformer::attention without
// prepare_qkv): shift -> group norm (head-major) -> rotary, each a separate kernel.
TEST_CASE("the one-kernel prefill glue equals the separate kernels bit for bit") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(21);
  const std::vector<Case> cases = {
      {1, 300, 24, 64, true, true, true, false, false, false},   // FoX (Pro)
      {2, 77, 12, 128, true, true, true, true, true, true},      // Transformer (Pro), a cache and padding
      {2, 33, 4, 64, true, false, true, true, false, true},      // no v shift: v read in place
      {1, 65, 3, 32, false, false, true, true, false, false},    // norm and rotary only
      {3, 1, 2, 16, true, true, false, true, true, false},       // one token: the shift reads the state
      {1, 40, 2, 256, true, true, true, false, false, true},
  };
  for (const Case& c : cases) {
    for (at::ScalarType t : {at::kBFloat16, at::kFloat}) {
      const int64_t C = c.H * c.Dh, N = (3 * C + 2 * c.H + 7) / 8 * 8 + 8;  // q, k, v, the shift logits, other columns
      at::Tensor wide = at::randn({c.B, c.T, N}, cuda(at::kFloat)).to(t);
      at::Tensor q = wide.narrow(-1, 0, C), k = wide.narrow(-1, C, C), v = wide.narrow(-1, 2 * C, C);
      at::Tensor ks = wide.narrow(-1, 3 * C, c.H), vs = wide.narrow(-1, 3 * C + c.H, c.H);
      at::Tensor k_prev = c.prev ? at::randn({c.B, C}, cuda(at::kFloat)).to(t) : at::Tensor();
      at::Tensor v_prev = c.prev ? at::randn({c.B, C}, cuda(at::kFloat)).to(t) : at::Tensor();
      at::Tensor mask, pos = at::arange(c.T, cuda(at::kLong)).unsqueeze(0).expand({c.B, c.T}).contiguous() + 3;
      if (c.mask) {
        // Row 0's padding ends at a block of the kernel's 32 tokens (its first token's previous one is padding).
        at::Tensor start = ((at::arange(c.B, cuda(at::kLong)) * 13 + 32) % (c.T + 1)).view({c.B, 1});
        mask = at::arange(c.T, cuda(at::kLong)).unsqueeze(0) < start;
        pos = at::arange(c.T, cuda(at::kLong)).unsqueeze(0) - start;  // negative where padded, as the model's
      }
      at::Tensor qn = at::randn({C}, cuda(at::kFloat)), kn = at::randn({C}, cuda(at::kFloat));
      at::Tensor inv = at::pow(10000.0, at::arange(0, c.Dh, 2, cuda(at::kFloat)) / static_cast<double>(c.Dh)).reciprocal();

      foxeval::FoxPrefillPrep p;
      p.q = q;
      p.k = k;
      p.v = v;
      if (c.k_shift) p.k_shift_logit = ks;
      if (c.v_shift) p.v_shift_logit = vs;
      p.k_prev = k_prev;
      p.v_prev = v_prev;
      p.pad_mask = mask;
      if (c.norm) {
        p.q_norm = qn;
        p.k_norm = kn;
      }
      if (c.rope) {
        p.positions = pos;
        p.inv_freq = inv;
      }
      p.heads = c.H;
      const foxeval::FoxPrefillQKV got = foxeval::fox_prefill_prep(p);
      const std::string what = describe(c, t);
      REQUIRE_MESSAGE(got.q.defined(), what);

      at::Tensor rq = q, rk = k, rv = v;
      if (c.k_shift) rk = foxeval::fused_token_shift(k, ks, k_prev, mask);
      if (c.v_shift) rv = foxeval::fused_token_shift(v, vs, v_prev, mask);
      if (c.norm) {
        rq = foxeval::fused_group_rms_norm(rq, qn, c.H, 1e-5, t, at::Tensor(), true);
        rk = foxeval::fused_group_rms_norm(rk, kn, c.H, 1e-5, t, at::Tensor(), true);
      }
      rq = rq.reshape({c.B, c.T, c.H, c.Dh});
      rk = rk.reshape({c.B, c.T, c.H, c.Dh});
      rv = rv.reshape({c.B, c.T, c.H, c.Dh});
      if (c.rope) {
        rq = foxeval::fused_rotary(rq, pos, inv);
        rk = foxeval::fused_rotary(rk, pos, inv);
      }
      expect_same_bits(got.q, rq, what + " q");
      expect_same_bits(got.k, rk, what + " k");
      expect_same_bits(got.v, rv, what + " v");
      // The attention kernel's layout: head-major buffers (v: the projection itself when unshifted).
      CHECK(got.q.permute({0, 2, 1, 3}).is_contiguous());
      CHECK(got.k.permute({0, 2, 1, 3}).is_contiguous());
      if (c.v_shift) CHECK(got.v.permute({0, 2, 1, 3}).is_contiguous());
      if (!c.v_shift) CHECK(got.v.data_ptr() == v.data_ptr());
    }
  }
}

TEST_CASE("the one-kernel prefill glue declines what it cannot take") {
  SKIP_WITHOUT_CUDA();
  const int64_t B = 1, T = 9, H = 3;
  auto prep = [&](int64_t Dh, int64_t pad) {
    const int64_t C = H * Dh;
    at::Tensor wide = at::randn({B, T, 3 * C + pad}, cuda(at::kBFloat16));
    foxeval::FoxPrefillPrep p;
    p.q = wide.narrow(-1, pad, C);
    p.k = wide.narrow(-1, pad + C, C);
    p.v = wide.narrow(-1, pad + 2 * C, C);
    p.q_norm = at::ones({C}, cuda(at::kFloat));
    p.k_norm = at::ones({C}, cuda(at::kFloat));
    p.heads = H;
    return foxeval::fox_prefill_prep(p);
  };
  CHECK(prep(64, 0).q.defined());
  CHECK_FALSE(prep(48, 0).q.defined());  // a head is not a power-of-two group of lanes
  CHECK_FALSE(prep(64, 3).q.defined());  // rows not 16-byte aligned: the separate kernels' scalar path
}

TEST_CASE("the forget gate scan matches fp64 as closely as ATen's cumsum") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(22);
  for (int64_t T : {int64_t(1), int64_t(255), int64_t(256), int64_t(257), int64_t(5000), int64_t(65536)}) {
    for (at::ScalarType t : {at::kBFloat16, at::kFloat}) {
      const int64_t B = 2, H = 24;
      // Logits as a column slice of a wider matrix; forget gates from fast decay to near 1.
      at::Tensor wide = (at::randn({B, T, H + 5}, cuda(at::kFloat)) * 3 + 2).to(t);
      at::Tensor x = wide.narrow(-1, 2, H);
      at::Tensor got = foxeval::fused_log_fgate_cumsum(x);
      REQUIRE(got.defined());
      CHECK(got.sizes().vec() == std::vector<int64_t>{B, H, T});
      at::Tensor exact = at::cumsum(at::log_sigmoid(x.to(at::kDouble)).transpose(1, 2), -1);
      at::Tensor aten = at::cumsum(at::log_sigmoid(x.to(at::kFloat)).transpose(1, 2).contiguous(), -1);
      const double err = (got.to(at::kDouble) - exact).abs().max().item<double>();
      const double aten_err = (aten.to(at::kDouble) - exact).abs().max().item<double>();
      const double scale = exact.abs().max().item<double>();
      MESSAGE("T=" << T << (t == at::kFloat ? " fp32" : " bf16") << ": max |c| " << scale << ", error " << err
                   << " (ATen's cumsum " << aten_err << ")");
      // No worse than the path it replaces (plus one fp32 ulp of the largest |c| for T where
      // ATen happens to be exact).
      CHECK(err <= 2 * aten_err + 1.2e-7 * scale);
      expect_same_bits(foxeval::fused_log_fgate_cumsum(x), got, "T=" + std::to_string(T) + " rerun");
    }
  }
}
