// The FoX prefill's q/k/v glue in one kernel (see kernels/fox_prefill_prep.h).
//
// A thread takes chunk j (8 elements) of one token's q, k and v at a time; a head's Dh / 8
// chunks sit on aligned lanes of one warp, so the norm's sum and the rotary partner (the other
// half of the head) are xor shuffles, as in the separate kernels. (A version where each thread
// walked 32 tokens in order, keeping the last k and v for the shift, was 1.7x slower at 64k on
// the H100: too few loads in flight.)
#include "kernels/fox_prefill_prep.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda_types.cuh"
#include "kernels/env_switch.h"
#include "kernels/glue_layout.h"

namespace foxeval {
namespace {

using namespace cuda_types;

struct PrepParams {
  const void* q;            // [B * T, C] rows, each with its row stride
  const void* k;
  const void* v;
  int64_t q_rs, k_rs, v_rs;
  const void* k_alpha;      // token-shift logits [B * T, H] (row strides below), or null: no shift
  const void* v_alpha;
  int64_t k_alpha_rs, v_alpha_rs;
  const void* k_prev;       // [B, C] shift states, or null (zeros)
  const void* v_prev;
  const float* q_norm;      // [C] qk-norm weights, or null
  const float* k_norm;
  const bool* mask;         // [B, T] or null
  const int64_t* pos;       // [B, T], or null: no rotary
  const float* inv_freq;    // [Dh / 2]
  void* q_out;              // head-major [B, H, T, Dh]
  void* k_out;
  void* v_out;              // or null: v is read in place
  int64_t Tn, total;        // tokens per sequence; items (tokens x chunks)
  int H, Dh, C, cpr, vpg;   // heads, head dim, H * Dh, chunks per token, chunks per head (2^k)
  float inv_n, eps;
};

__device__ __forceinline__ void zero8(float* v) {
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = 0.f;
}

// The token shift's mix, as token_shift_kernel: fp32, no contraction, rounded to T.
template <typename T>
__device__ __forceinline__ void shift_mix(float a, const float* pv, float* v) {
  const float na = __fsub_rn(1.f, a);
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = to_f(from_f<T>(__fadd_rn(__fmul_rn(a, pv[e]), __fmul_rn(na, v[e]))));
}

// qk-norm over the head, as row_norm_kernel: squares summed along the chunk, then across the
// head's lanes (every lane runs the shuffles).
template <typename T>
__device__ __forceinline__ void head_norm(float* v, const float* w, int vpg, float inv_n, float eps) {
  float ss = 0.f;
#pragma unroll
  for (int e = 0; e < 8; ++e) ss += v[e] * v[e];
  for (int o = vpg >> 1; o > 0; o >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, o);
  const float rstd = rsqrtf(ss * inv_n + eps);
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = to_f(from_f<T>(__fmul_rn(__fmul_rn(v[e], rstd), w[e])));
}

// NeoX rotary, as rotary_kernel: the pair (i, i + Dh/2) lies on lanes vpg/2 apart ("lo" holds i).
template <typename T>
__device__ __forceinline__ void rotate(float* v, const float* cs, const float* sn, bool lo, int vpg) {
#pragma unroll
  for (int e = 0; e < 8; ++e) {
    const float other = __shfl_xor_sync(0xffffffffu, v[e], vpg >> 1);
    const float x0 = lo ? v[e] : other, x1 = lo ? other : v[e];
    v[e] = to_f(from_f<T>(lo ? __fsub_rn(__fmul_rn(x0, cs[e]), __fmul_rn(x1, sn[e]))
                             : __fadd_rn(__fmul_rn(x0, sn[e]), __fmul_rn(x1, cs[e]))));
  }
}

// Grid-stride over items (token, chunk j): the thread does chunk j (8 elements) of the token's
// q, k and v. Items are numbered token-major, so a head's Dh / 8 chunks sit on aligned lanes of
// one warp; the item count is a multiple of that, so a head's lanes are all in range or all out
// (lanes out of range work on the last item, their shuffles stay among themselves, and store
// nothing).
template <typename T>
__global__ void __launch_bounds__(256) fox_prefill_prep_kernel(const PrepParams p) {
  const int lane = threadIdx.x & 31, half = p.Dh >> 1;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x + (threadIdx.x - lane); base < p.total; base += step) {
    const bool active = base + lane < p.total;
    const int64_t idx = active ? base + lane : p.total - 1;
    const int64_t row = idx / p.cpr;
    const int c0 = static_cast<int>(idx - row * p.cpr) * 8;
    const int head = c0 / p.Dh, e0 = c0 - head * p.Dh;
    const bool lo = e0 < half;
    const int64_t b = row / p.Tn, t = row - b * p.Tn;
    const bool masked = p.mask && p.mask[row];
    float qv[8], kv[8], vv[8];
    load8(static_cast<const T*>(p.q) + row * p.q_rs + c0, qv);
    if (masked && p.k_alpha) zero8(kv); else load8(static_cast<const T*>(p.k) + row * p.k_rs + c0, kv);
    if (p.v_alpha) {
      if (masked) zero8(vv); else load8(static_cast<const T*>(p.v) + row * p.v_rs + c0, vv);
    }
    // The token before (as token_shift_kernel: the state before token 0, 0 where padded).
    const bool prev_zero = t > 0 && p.mask && p.mask[row - 1];
    if (p.k_alpha) {
      float pv[8];
      if (t == 0 ? !p.k_prev : prev_zero) zero8(pv);
      else load8(t == 0 ? static_cast<const T*>(p.k_prev) + b * p.C + c0 : static_cast<const T*>(p.k) + (row - 1) * p.k_rs + c0, pv);
      shift_mix<T>(sigmoid_torch(to_f(static_cast<const T*>(p.k_alpha)[row * p.k_alpha_rs + head])), pv, kv);
    }
    if (p.v_alpha) {
      float pv[8];
      if (t == 0 ? !p.v_prev : prev_zero) zero8(pv);
      else load8(t == 0 ? static_cast<const T*>(p.v_prev) + b * p.C + c0 : static_cast<const T*>(p.v) + (row - 1) * p.v_rs + c0, pv);
      shift_mix<T>(sigmoid_torch(to_f(static_cast<const T*>(p.v_alpha)[row * p.v_alpha_rs + head])), pv, vv);
    }
    if (p.q_norm) {
      float w[8];
      load8(p.q_norm + c0, w);
      head_norm<T>(qv, w, p.vpg, p.inv_n, p.eps);
      load8(p.k_norm + c0, w);
      head_norm<T>(kv, w, p.vpg, p.inv_n, p.eps);
    }
    if (p.pos) {
      // The pair's two lanes share 8 angles: each takes sin and cos of 4 (sincosf) and they swap;
      // q and k use them both (the separate rotary kernel computes each angle 4 times).
      const int f0 = (lo ? e0 : e0 - half) + (lo ? 0 : 4);
      const float ps = static_cast<float>(p.pos[row]);
      float c4[4], s4[4], cs[8], sn[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float sv, cv;
        sincosf(__fmul_rn(ps, p.inv_freq[f0 + i]), &sv, &cv);
        c4[i] = to_f(from_f<T>(cv));
        s4[i] = to_f(from_f<T>(sv));
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float oc = __shfl_xor_sync(0xffffffffu, c4[i], p.vpg >> 1);
        const float os = __shfl_xor_sync(0xffffffffu, s4[i], p.vpg >> 1);
        cs[i] = lo ? c4[i] : oc;
        sn[i] = lo ? s4[i] : os;
        cs[4 + i] = lo ? oc : c4[i];
        sn[4 + i] = lo ? os : s4[i];
      }
      rotate<T>(qv, cs, sn, lo, p.vpg);
      rotate<T>(kv, cs, sn, lo, p.vpg);
    }
    if (active) {
      const int64_t o = ((b * p.H + head) * p.Tn + t) * p.Dh + e0;
      store8(static_cast<T*>(p.q_out) + o, qv);
      store8(static_cast<T*>(p.k_out) + o, kv);
      if (p.v_out) store8(static_cast<T*>(p.v_out) + o, vv);
    }
  }
}

bool prep_same_device(const at::Tensor& t, const at::Tensor& ref) { return t.is_cuda() && t.device() == ref.device(); }

}  // namespace

FoxPrefillQKV fox_prefill_prep(const FoxPrefillPrep& a) {
  if (!fused_glue_on()) return {};
  const at::Tensor& q = a.q;
  if (!q.defined() || !q.is_cuda() || q.dim() != 3) return {};
  const auto dt = q.scalar_type();
  if (dt != at::kFloat && dt != at::kBFloat16) return {};
  const int64_t B = q.size(0), Tn = q.size(1), C = q.size(2), H = a.heads;
  if (B < 1 || Tn < 1 || H < 1 || C % H != 0) return {};
  const int64_t Dh = C / H;
  if (Dh != 16 && Dh != 32 && Dh != 64 && Dh != 128 && Dh != 256) return {};  // a head = 2^k aligned lanes
  auto slice_ok = [&](const at::Tensor& t, int64_t cols) {
    return t.defined() && prep_same_device(t, q) && t.scalar_type() == dt && t.dim() == 3 && t.size(0) == B &&
           t.size(1) == Tn && t.size(2) == cols && uniform_row_stride(t) >= 0;
  };
  auto vec_ok = [&](const at::Tensor& t) { return uniform_row_stride(t) % 8 == 0 && cuda_types::aligned(t.data_ptr(), 16); };
  if (!slice_ok(a.k, C) || !slice_ok(a.v, C) || !vec_ok(q) || !vec_ok(a.k) || !vec_ok(a.v)) return {};
  for (const at::Tensor* l : {&a.k_shift_logit, &a.v_shift_logit})
    if (l->defined() && !slice_ok(*l, H)) return {};
  for (const at::Tensor* s : {&a.k_prev, &a.v_prev})
    if (s->defined() && (!prep_same_device(*s, q) || s->numel() != B * C || !float_type(s->scalar_type()))) return {};
  if (a.pad_mask.defined() && (!prep_same_device(a.pad_mask, q) || a.pad_mask.scalar_type() != at::kBool ||
                               a.pad_mask.numel() != B * Tn))
    return {};
  if (a.q_norm.defined() != a.k_norm.defined()) return {};
  for (const at::Tensor* w : {&a.q_norm, &a.k_norm})
    if (w->defined() && (!prep_same_device(*w, q) || w->scalar_type() != at::kFloat || w->numel() != C)) return {};
  const bool rope = a.inv_freq.defined();
  if (rope && (!prep_same_device(a.inv_freq, q) || a.inv_freq.scalar_type() != at::kFloat || a.inv_freq.numel() != Dh / 2 ||
               !a.positions.defined() || !prep_same_device(a.positions, q) || a.positions.scalar_type() != at::kLong ||
               a.positions.numel() != B * Tn))
    return {};

  c10::cuda::CUDAGuard guard(q.device());
  // Kept alive until the launch is queued (the stream orders their later reuse).
  const at::Tensor k_prev = a.k_prev.defined() ? a.k_prev.to(dt).contiguous() : at::Tensor();
  const at::Tensor v_prev = a.v_prev.defined() ? a.v_prev.to(dt).contiguous() : at::Tensor();
  const at::Tensor q_norm = a.q_norm.defined() ? a.q_norm.contiguous() : at::Tensor();
  const at::Tensor k_norm = a.k_norm.defined() ? a.k_norm.contiguous() : at::Tensor();
  const at::Tensor mask = a.pad_mask.defined() ? a.pad_mask.contiguous() : at::Tensor();
  const at::Tensor pos = rope ? a.positions.contiguous() : at::Tensor();
  const at::Tensor freq = rope ? a.inv_freq.contiguous() : at::Tensor();
  for (const at::Tensor* t : {&k_prev, &v_prev, &q_norm, &k_norm, &freq})
    if (t->defined() && !cuda_types::aligned(t->data_ptr(), 16)) return {};

  FoxPrefillQKV out;
  out.q = empty_head_major(B, Tn, H, Dh, q.options());
  out.k = empty_head_major(B, Tn, H, Dh, q.options());
  const bool v_shift = a.v_shift_logit.defined();
  out.v = v_shift ? empty_head_major(B, Tn, H, Dh, q.options()) : a.v.view({B, Tn, H, Dh});

  PrepParams p{};
  auto rs = [](const at::Tensor& t) { return uniform_row_stride(t); };
  p.q = q.data_ptr();
  p.k = a.k.data_ptr();
  p.v = a.v.data_ptr();
  p.q_rs = rs(q);
  p.k_rs = rs(a.k);
  p.v_rs = rs(a.v);
  if (a.k_shift_logit.defined()) {
    p.k_alpha = a.k_shift_logit.data_ptr();
    p.k_alpha_rs = rs(a.k_shift_logit);
    p.k_prev = k_prev.defined() ? k_prev.data_ptr() : nullptr;
  }
  if (v_shift) {
    p.v_alpha = a.v_shift_logit.data_ptr();
    p.v_alpha_rs = rs(a.v_shift_logit);
    p.v_prev = v_prev.defined() ? v_prev.data_ptr() : nullptr;
    p.v_out = out.v.data_ptr();
  }
  p.q_norm = q_norm.defined() ? q_norm.data_ptr<float>() : nullptr;
  p.k_norm = k_norm.defined() ? k_norm.data_ptr<float>() : nullptr;
  p.mask = mask.defined() ? mask.data_ptr<bool>() : nullptr;
  p.pos = rope ? pos.data_ptr<int64_t>() : nullptr;
  p.inv_freq = rope ? freq.data_ptr<float>() : nullptr;
  p.q_out = out.q.data_ptr();
  p.k_out = out.k.data_ptr();
  p.Tn = Tn;
  p.H = static_cast<int>(H);
  p.Dh = static_cast<int>(Dh);
  p.C = static_cast<int>(C);
  p.cpr = static_cast<int>(C / 8);
  p.vpg = static_cast<int>(Dh / 8);
  p.inv_n = 1.f / static_cast<float>(Dh);
  p.eps = static_cast<float>(a.norm_eps);
  p.total = B * Tn * p.cpr;
  const int threads = 256;
  const int64_t cap = static_cast<int64_t>(at::cuda::getCurrentDeviceProperties()->multiProcessorCount) * 32;
  const int blocks = static_cast<int>(std::min<int64_t>(cap, (p.total + threads - 1) / threads));
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  if (dt == at::kFloat)
    fox_prefill_prep_kernel<float><<<blocks, threads, 0, stream>>>(p);
  else
    fox_prefill_prep_kernel<bf16><<<blocks, threads, 0, stream>>>(p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace foxeval
