#include "models/layers/recurrent_ops.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>

#include <algorithm>
#include <optional>
#include <cstdlib>
#include <string>
#include <limits>
#include <vector>

#include "data/errors.h"
#include "data/switches.h"
#include "kernels/causal_conv.h"
#include "kernels/recurrent_delta.h"
#include "kernels/recurrent_gla.h"
#include "models/stage_timer.h"

namespace foxeval {
namespace recurrent {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
// Largest temporary a group of chunks may build, in fp32 elements (~128 MB).
constexpr int64_t kGroupElements = int64_t(32) << 20;

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

// Pads dim 2 (time) of [B, H, T, ...] with zeros to length Tp.
at::Tensor pad_time(const at::Tensor& x, int64_t Tp) {
  const int64_t T = x.size(2);
  if (Tp == T) return x;
  auto sizes = x.sizes().vec();
  sizes[2] = Tp - T;
  return at::cat({x, at::zeros(sizes, x.options())}, 2);
}

// [B, H, N*C, D] -> [B, H, N, C, D]
at::Tensor chunked(const at::Tensor& x, int64_t C) {
  return x.reshape({x.size(0), x.size(1), x.size(2) / C, C, x.size(3)});
}

// The chunk length used for T tokens: `chunk`, or less for short inputs (multiple of 16).
int64_t chunk_length(int64_t T, int64_t chunk) { return std::min(chunk, round_up(T, 16)); }

// Intra-chunk scores A[t, s] = sum_k q[t,k] k[s,k] exp(b[t,k] - b[s,k]) for s <= t (else 0),
// with b the within-chunk cumulative log decay [.., C, K]. No exp of a positive number is
// formed: off-diagonal 16-blocks use the first row of the query block as reference point
// (both factors <= 1), diagonal 16-blocks are computed elementwise.
at::Tensor intra_scores_per_key(const at::Tensor& q, const at::Tensor& k, const at::Tensor& b) {
  // q, k, b: [B, H, N, C, K]
  const int64_t B = q.size(0), H = q.size(1), N = q.size(2), C = q.size(3), K = q.size(4);
  const int64_t c = std::min<int64_t>(16, C), NC = C / c;
  auto opts = q.options();
  at::Tensor qs = q.reshape({B, H, N, NC, c, K});
  at::Tensor ks = k.reshape({B, H, N, NC, c, K});
  at::Tensor bs = b.reshape({B, H, N, NC, c, K});
  // Diagonal blocks: [B, H, N, NC, c(t), c(s), K].
  at::Tensor causal = at::ones({c, c}, opts.dtype(at::kBool)).tril().unsqueeze(-1);
  at::Tensor diff = (bs.unsqueeze(-2) - bs.unsqueeze(-3)).masked_fill(causal.logical_not(), kNegInf);
  at::Tensor a_diag = (qs.unsqueeze(-2) * ks.unsqueeze(-3) * diff.exp_()).sum(-1);  // [B,H,N,NC,c,c]
  if (NC == 1) return a_diag.reshape({B, H, N, C, C});
  // Off-diagonal blocks (j < i) with reference r_i = b at the first row of query block i.
  at::Tensor r = bs.narrow(4, 0, 1);                                                   // [B,H,N,NC,1,K]
  at::Tensor q_ref = qs * (bs - r).exp();                                              // [B,H,N,NC,c,K]
  at::Tensor below = at::ones({NC, NC}, opts.dtype(at::kBool)).tril(-1).view({NC, NC, 1, 1});
  at::Tensor e = (r.unsqueeze(4) - bs.unsqueeze(3)).masked_fill(below.logical_not(), kNegInf);  // [..,NC,NC,c,K]
  at::Tensor k_ref = ks.unsqueeze(3) * e.exp_();                                       // [B,H,N,NC,NC,c,K]
  at::Tensor a_off = at::matmul(q_ref.unsqueeze(4), k_ref.transpose(-1, -2));          // [B,H,N,NC,NC,c,c]
  at::Tensor a = a_off.permute({0, 1, 2, 3, 5, 4, 6}).contiguous();                    // [B,H,N,NC,c,NC,c]
  at::diagonal(a, 0, 3, 5).copy_(a_diag.permute({0, 1, 2, 4, 5, 3}));
  return a.reshape({B, H, N, C, C});
}

at::Tensor gla_step(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g, double scale,
                    at::Tensor& state) {
  // [B, H, 1, D] inputs; state [B, H, K, V]
  at::Tensor decay = g.squeeze(2).exp().unsqueeze(-1);  // [B,H,K or 1,1]
  state = state * decay + k.transpose(-1, -2) * v;      // [B,H,K,1]*[B,H,1,V]
  return at::matmul(q * scale, state);                  // [B,H,1,V]
}

at::Tensor delta_step(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta,
                      double scale, at::Tensor& state) {
  at::Tensor u = (v - at::matmul(k, state)) * beta.unsqueeze(-1);  // [B,H,1,V]
  state = state + k.transpose(-1, -2) * u;
  return at::matmul(q * scale, state);
}

}  // namespace

at::Tensor real_token_mask(const at::Tensor& seq_start, int64_t offset, int64_t T, const at::Device& device) {
  if (!seq_start.defined()) return at::Tensor();
  at::Tensor start = seq_start.to(device, at::kLong);
  if (start.numel() == 0 || start.max().item<int64_t>() <= offset) return at::Tensor();
  at::Tensor pos = at::arange(offset, offset + T, at::TensorOptions().dtype(at::kLong).device(device));
  return pos.unsqueeze(0) >= start.unsqueeze(1);
}

at::Tensor zero_padding(const at::Tensor& x, const at::Tensor& real_mask) {
  if (!real_mask.defined()) return x;
  at::Tensor m = real_mask;
  while (m.dim() < x.dim()) m = m.unsqueeze(-1);
  return x.masked_fill(m.logical_not(), 0.0);
}

ScanImpl scan_impl(const at::Tensor& x, at::ScalarType compute) {
  if (!x.is_cuda() || (compute != at::kBFloat16 && compute != at::kHalf)) return ScanImpl::kExact;
  static const SwitchSlot impl("FOXEVAL_RECURRENT_IMPL");  // read at every op: found once
  const char* env = impl.value();
  if (env && std::string(env) == "aten") return ScanImpl::kExact;
  if (env && *env && std::string(env) != "kernel")
    throw Error(fmt::format("FOXEVAL_RECURRENT_IMPL={}: expected \"aten\" or \"kernel\"", env));
  return ScanImpl::kKernel;
}

at::Tensor round_to(const at::Tensor& x, at::ScalarType dtype) {
  if (dtype == at::kFloat) return x.to(at::kFloat);
  return x.to(dtype).to(at::kFloat);
}

namespace {

// The fused causal-conv kernel (one pass, the same bits as the torch path) where the scans run on
// the kernels and it supports this call; nullopt where the torch path runs.
std::optional<at::Tensor> fused_conv(const at::Tensor& x, const at::Tensor& weight, at::Tensor* state,
                                     const CausalConvSpec& spec) {
  if (scan_impl(x, x.scalar_type()) != ScanImpl::kKernel || !causal_conv_cuda_supports(x, weight, state, spec))
    return std::nullopt;
  return causal_conv_cuda(x, weight, state, spec);
}

}  // namespace

at::Tensor causal_conv1d(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, at::Tensor* state,
                         const at::Tensor& real_mask, std::optional<at::ScalarType> silu_through,
                         at::ScalarType out_dtype) {
  StageTimer timer("conv");
  CausalConvSpec spec;
  spec.bias = bias;
  spec.real_mask = real_mask;
  spec.out_dtype = out_dtype;
  if (silu_through) {
    spec.silu = true;
    spec.round_before = spec.round_after = *silu_through;
  }
  if (std::optional<at::Tensor> y = fused_conv(x, weight, state, spec)) return *y;
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2), K = weight.size(1);
  at::Tensor xf = zero_padding(x, real_mask).to(at::kFloat);
  at::Tensor history = (state && state->defined()) ? *state : at::zeros({B, K - 1, C}, xf.options());
  at::Tensor xp = at::cat({history, xf}, 1);  // [B, K-1+T, C]
  at::Tensor out = bias.defined() ? bias.expand({B, T, C}).clone() : at::zeros({B, T, C}, xf.options());
  for (int64_t j = 0; j < K; ++j) out.add_(xp.narrow(1, j, T) * weight.select(1, j));
  if (state) *state = xp.narrow(1, T, K - 1).clone();
  if (silu_through) out = round_to(at::silu(round_to(out, *silu_through)), *silu_through);
  return out.to(out_dtype);
}

at::Tensor fla_short_conv(const at::Tensor& x, const at::Tensor& weight, bool silu, const at::Tensor& real_mask,
                          at::Tensor* state, at::ScalarType out_dtype) {
  StageTimer timer("short_conv");
  CausalConvSpec spec;
  spec.real_mask = real_mask;
  spec.silu = silu;
  spec.out_dtype = out_dtype;
  if (std::optional<at::Tensor> y = fused_conv(x, weight, state, spec)) return *y;
  at::Tensor y = causal_conv1d(x, weight, at::Tensor(), state, real_mask);
  return (silu ? at::silu(y) : y).to(out_dtype);
}

at::Tensor gated_linear_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                                  double scale, at::Tensor& state, ScanImpl impl, int64_t chunk) {
  StageTimer timer("gla");
  // The fused kernels take CUDA fp32 inputs with K, V in {64, 128} on sm_80+; anything else
  // (e.g. the tiny fixtures) runs the exact form below (recurrent_gla.h's dispatch rule).
  if (impl == ScanImpl::kKernel && kernels::gla_cuda_supports(q, k, v, g))
    return q.size(2) == 1 ? kernels::gla_step_cuda(q, k, v, g, scale, state)
                          : kernels::gla_chunked_cuda(q, k, v, g, scale, state);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), K = q.size(3), V = v.size(3);
  const bool scalar_gate = g.size(3) == 1;
  if (!state.defined()) state = at::zeros({B, H, K, V}, q.options());
  if (T == 1) return gla_step(q, k, v, g, scale, state);
  const int64_t C = chunk_length(T, chunk), Tp = round_up(T, C), NT = Tp / C;
  // Chunks per group: the largest temporaries are [.., C, 16, K] per chunk (or [.., C, C]).
  const int64_t per_chunk = B * H * C * std::max<int64_t>(scalar_gate ? C : 16 * K, K * V / C + 1);
  const int64_t group = std::max<int64_t>(1, kGroupElements / per_chunk);
  at::Tensor qc = chunked(pad_time(q, Tp), C), kc = chunked(pad_time(k, Tp), C);
  at::Tensor vc = chunked(pad_time(v, Tp), C), gc = chunked(pad_time(g, Tp), C);
  at::Tensor out = at::empty({B, H, NT, C, V}, q.options());
  at::Tensor causal = at::ones({C, C}, q.options().dtype(at::kBool)).tril();
  for (int64_t n0 = 0; n0 < NT; n0 += group) {
    const int64_t N = std::min(group, NT - n0);
    at::Tensor qg = qc.narrow(2, n0, N), kg = kc.narrow(2, n0, N), vg = vc.narrow(2, n0, N);
    at::Tensor b = gc.narrow(2, n0, N).cumsum(3);  // [B,H,N,C,K or 1], non-increasing in t
    at::Tensor b_last = b.narrow(3, C - 1, 1);     // [B,H,N,1,K or 1]
    at::Tensor scores;
    if (scalar_gate) {
      at::Tensor bt = b.squeeze(-1);  // [B,H,N,C]
      at::Tensor decay = (bt.unsqueeze(-1) - bt.unsqueeze(-2)).masked_fill(causal.logical_not(), kNegInf).exp_();
      scores = at::matmul(qg, kg.transpose(-1, -2)).mul_(decay);
    } else {
      scores = intra_scores_per_key(qg, kg, b);
    }
    at::Tensor o = at::matmul(scores, vg);                                      // [B,H,N,C,V]
    at::Tensor k_to_end = kg * (b_last - b).exp();                             // decay to the chunk end
    at::Tensor chunk_kv = at::matmul(k_to_end.transpose(-1, -2), vg);          // [B,H,N,K,V]
    at::Tensor chunk_decay = b_last.exp().transpose(-1, -2);                   // [B,H,N,K or 1,1]
    at::Tensor starts = at::empty({B, H, N, K, V}, q.options());
    for (int64_t n = 0; n < N; ++n) {
      starts.select(2, n).copy_(state);
      state = state * chunk_decay.select(2, n) + chunk_kv.select(2, n);
    }
    o.add_(at::matmul(qg * b.exp(), starts));
    out.narrow(2, n0, N).copy_(o.mul_(scale));
  }
  return out.reshape({B, H, Tp, V}).narrow(2, 0, T);
}

at::Tensor delta_rule(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta,
                      double scale, at::Tensor& state, ScanImpl impl, int64_t chunk) {
  StageTimer timer("delta_rule");
  const bool kernel = impl == ScanImpl::kKernel && kernels::delta_rule_cuda_supports(q, k, v, beta);
  if (kernel && q.size(2) > 1) return kernels::delta_rule_chunked_cuda(q, k, v, beta, scale, state);
  if (q.scalar_type() != at::kFloat)  // bf16 q, k, v: the chunked kernel reads them; the rest is fp32
    return delta_rule(q.to(at::kFloat), k.to(at::kFloat), v.to(at::kFloat), beta, scale, state, impl, chunk);
  if (kernel) return kernels::delta_rule_step_cuda(q, k, v, beta, scale, state);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), K = q.size(3), V = v.size(3);
  if (!state.defined()) state = at::zeros({B, H, K, V}, q.options());
  if (T == 1) return delta_step(q, k, v, beta, scale, state);
  const int64_t C = chunk_length(T, chunk), Tp = round_up(T, C), NT = Tp / C;
  const int64_t per_chunk = B * H * C * (C + 2 * K + 2 * V);
  const int64_t group = std::max<int64_t>(1, kGroupElements / per_chunk);
  at::Tensor qc = chunked(pad_time(q, Tp), C), kc = chunked(pad_time(k, Tp), C), vc = chunked(pad_time(v, Tp), C);
  at::Tensor bc = pad_time(beta.unsqueeze(-1), Tp).reshape({B, H, NT, C, 1});
  at::Tensor out = at::empty({B, H, NT, C, V}, q.options());
  at::Tensor eye = at::eye(C, q.options());
  for (int64_t n0 = 0; n0 < NT; n0 += group) {
    const int64_t N = std::min(group, NT - n0);
    at::Tensor qg = qc.narrow(2, n0, N), kg = kc.narrow(2, n0, N), vg = vc.narrow(2, n0, N);
    at::Tensor bg = bc.narrow(2, n0, N);
    at::Tensor k_beta = kg * bg, v_beta = vg * bg;
    // WY representation: (I + tril(beta k k^T, -1)) [w | u] = [beta k | beta v].
    at::Tensor a = at::matmul(k_beta, kg.transpose(-1, -2)).tril(-1) + eye;
    at::Tensor w = at::linalg_solve_triangular(a, k_beta, /*upper=*/false, /*left=*/true, /*unitriangular=*/true);
    at::Tensor u = at::linalg_solve_triangular(a, v_beta, false, true, true);
    at::Tensor qk = at::matmul(qg, kg.transpose(-1, -2)).tril();  // [B,H,N,C,C]
    for (int64_t n = 0; n < N; ++n) {
      at::Tensor v_new = u.select(2, n) - at::matmul(w.select(2, n), state);  // [B,H,C,V]
      at::Tensor o = at::matmul(qg.select(2, n), state) + at::matmul(qk.select(2, n), v_new);
      out.select(2, n0 + n).copy_(o.mul_(scale));
      state = state + at::matmul(kg.select(2, n).transpose(-1, -2), v_new);
    }
  }
  return out.reshape({B, H, Tp, V}).narrow(2, 0, T);
}

}  // namespace recurrent
}  // namespace foxeval
