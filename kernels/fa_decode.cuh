// Decode Forgetting Attention (flash-decoding): a few query tokens against a long KV cache.
// One CTA = one (batch, head, query token, split of the keys); 4 warps. D/8 lanes share a key
// (16-byte loads of K and V), a warp walks 256/D keys at a time with an online softmax per
// lane; warps and lanes are merged in registers and shared memory, and the splits are merged
// by fa_decode_combine_kernel (log-sum-exp in the log2 domain).
#pragma once
#include "fa_common.cuh"
#include "kernels/pdl.cuh"

namespace foxeval::fa {

template <typename T, int D, bool GATE>
__global__ void __launch_bounds__(128) fa_decode_kernel(const FaParams p) {
  constexpr int LPK = D / 8;        // lanes per key
  constexpr int KPW = 32 / LPK;     // keys per warp step
  constexpr int NW = 4;
  constexpr int STEP = NW * KPW;    // keys per CTA step
  constexpr int U = 4;              // steps in flight
  __shared__ float s_o[NW][D];
  __shared__ float s_ml[NW][2];
  pdl_wait();  // a programmatic dependent of the decode prep that wrote q and the cache (kernels/pdl.cuh)
  pdl_trigger();

  const int row = blockIdx.x;  // (b*H + h)*Tq + t
  const int split = blockIdx.y;
  const int Tq = p.Tq;
  const int t = row % Tq, bh = row / Tq, h = bh % p.H, b = bh / p.H;
  int Tk = p.Tk;
  if (p.kv_len) {  // a fixed-capacity cache: this row holds kv_len[b] keys (at least Tq)
    const long long n = p.kv_len[b];
    Tk = n < Tq ? Tq : (n > p.Tk ? p.Tk : (int)n);
  }
  const int hk = h / (p.H / p.Hkv);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int sub = lane / LPK, part = lane % LPK;
  const int pos = Tk - Tq + t;

  int ss = 0;
  if (p.seq_start) {
    const long long s0 = p.seq_start[b];
    ss = s0 < 0 ? 0 : (s0 > Tk ? Tk : (int)s0);
  }
  // A sliding window starts the keys at pos - W + 1 (a split wholly before it has none).
  int ks = max(split * p.split_len, max(ss, p.window > 0 ? pos - p.window + 1 : 0));
  const int ke = min((split + 1) * p.split_len, pos + 1);
  const int ks_in_range = ks;  // before pruning, for the counts
  const float* cg = GATE ? p.c + b * p.c_sb + h * p.c_sh : nullptr;
  float ci = 0.f;
  if (GATE) {
    const float cq = cg[(int64_t)pos * p.c_st];
    ci = cq * kLog2e;
    if (p.threshold && ks < ke) {
      // Adaptive pruning at key granularity: skip keys j with c_pos - c_j < thr (c is
      // non-increasing, so they form a prefix). The diagonal key (bias 0) is never skipped.
      const float thr = p.threshold[b * p.thr_sb + h * p.thr_sh];
      int lo = ks, hi = ke;  // first kept key in [lo, hi]
      while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (cq - cg[(int64_t)mid * p.c_st] < thr && mid < pos) lo = mid + 1; else hi = mid;
      }
      ks = lo;
    }
  }
  if (p.prune_counts && threadIdx.x == 0) count_pruning(p.prune_counts, 2, ks - ks_in_range, ke - ks_in_range);

  const T* qg = reinterpret_cast<const T*>(p.q) + b * p.q_sb + h * p.q_sh + (int64_t)t * p.q_st;
  const T* kg = reinterpret_cast<const T*>(p.k) + b * p.k_sb + hk * p.k_sh + part * 8;
  const T* vg = reinterpret_cast<const T*>(p.v) + b * p.v_sb + hk * p.v_sh + part * 8;

  float q[8];
  {
    const uint4 qv = *reinterpret_cast<const uint4*>(qg + part * 8);
    const uint32_t* w = reinterpret_cast<const uint32_t*>(&qv);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = TypeTraits<T>::unpack(w[i]);
      q[2 * i] = f.x * p.scale_log2;
      q[2 * i + 1] = f.y * p.scale_log2;
    }
  }

  float m = -INFINITY, l = 0.f, o[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) o[i] = 0.f;

  for (int jb = ks + warp * KPW; jb < ke; jb += STEP * U) {  // warp-uniform trip count
    const int j0 = jb + sub;
    uint4 kv[U], vv[U];
    float cj[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u * STEP;
      const int jj = j < ke ? j : ks;  // in range, value unused
      kv[u] = *reinterpret_cast<const uint4*>(kg + (int64_t)jj * p.k_st);
      vv[u] = *reinterpret_cast<const uint4*>(vg + (int64_t)jj * p.v_st);
      cj[u] = GATE ? cg[(int64_t)jj * p.c_st] * kLog2e : 0.f;
    }
    float s[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const uint32_t* w = reinterpret_cast<const uint32_t*>(&kv[u]);
      float acc = 0.f;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = TypeTraits<T>::unpack(w[i]);
        acc = fmaf(q[2 * i], f.x, acc);
        acc = fmaf(q[2 * i + 1], f.y, acc);
      }
#pragma unroll
      for (int sh = LPK / 2; sh >= 1; sh >>= 1) acc += __shfl_xor_sync(0xffffffff, acc, sh);
      s[u] = (j0 + u * STEP < ke) ? acc + (ci - cj[u]) : -INFINITY;
    }
    float mx = m;
#pragma unroll
    for (int u = 0; u < U; ++u) mx = fmaxf(mx, s[u]);
    const float mu = mx == -INFINITY ? 0.f : mx;
    const float sc = fast_exp2(m - mu);
    m = mx;
    l *= sc;
#pragma unroll
    for (int i = 0; i < 8; ++i) o[i] *= sc;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const float pr = fast_exp2(s[u] - mu);
      l += pr;
      const uint32_t* w = reinterpret_cast<const uint32_t*>(&vv[u]);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float2 f = TypeTraits<T>::unpack(w[i]);
        o[2 * i] = fmaf(pr, f.x, o[2 * i]);
        o[2 * i + 1] = fmaf(pr, f.y, o[2 * i + 1]);
      }
    }
  }

  // Merge the key slots of the warp.
#pragma unroll
  for (int sh = LPK; sh < 32; sh <<= 1) {
    const float m2 = __shfl_xor_sync(0xffffffff, m, sh);
    const float l2 = __shfl_xor_sync(0xffffffff, l, sh);
    const float mx = fmaxf(m, m2);
    const float mu = mx == -INFINITY ? 0.f : mx;
    const float a = fast_exp2(m - mu), c = fast_exp2(m2 - mu);
    l = l * a + l2 * c;
#pragma unroll
    for (int i = 0; i < 8; ++i) o[i] = o[i] * a + __shfl_xor_sync(0xffffffff, o[i], sh) * c;
    m = mx;
  }
  if (sub == 0) {
#pragma unroll
    for (int i = 0; i < 8; ++i) s_o[warp][part * 8 + i] = o[i];
    if (part == 0) {
      s_ml[warp][0] = m;
      s_ml[warp][1] = l;
    }
  }
  __syncthreads();
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float M = -INFINITY;
#pragma unroll
    for (int w = 0; w < NW; ++w) M = fmaxf(M, s_ml[w][0]);
    const float Mu = M == -INFINITY ? 0.f : M;
    float L = 0.f, O = 0.f;
#pragma unroll
    for (int w = 0; w < NW; ++w) {
      const float a = fast_exp2(s_ml[w][0] - Mu);
      L += s_ml[w][1] * a;
      O += s_o[w][d] * a;
    }
    if (p.num_splits == 1) {
      T* og = reinterpret_cast<T*>(p.o) + (int64_t)row * D;
      og[d] = T(L > 0.f ? O / L : 0.f);
    } else {
      p.o_part[((int64_t)row * p.num_splits + split) * D + d] = O;
      if (d == 0) {
        p.ml_part[((int64_t)row * p.num_splits + split) * 2 + 0] = M;
        p.ml_part[((int64_t)row * p.num_splits + split) * 2 + 1] = L;
      }
    }
  }
}

template <typename T, int D>
__global__ void __launch_bounds__(D) fa_decode_combine_kernel(const FaParams p) {
  pdl_wait();  // a programmatic dependent of fa_decode_kernel (kernels/pdl.cuh)
  pdl_trigger();
  const int row = blockIdx.x, d = threadIdx.x, S = p.num_splits;
  const float* ml = p.ml_part + (int64_t)row * S * 2;
  float M = -INFINITY;
  for (int s = 0; s < S; ++s) M = fmaxf(M, ml[2 * s]);
  const float Mu = M == -INFINITY ? 0.f : M;
  float L = 0.f, O = 0.f;
  for (int s = 0; s < S; ++s) {
    const float a = fast_exp2(ml[2 * s] - Mu);
    L += ml[2 * s + 1] * a;
    O += p.o_part[((int64_t)row * S + s) * D + d] * a;
  }
  reinterpret_cast<T*>(p.o)[(int64_t)row * D + d] = T(L > 0.f ? O / L : 0.f);
}

}  // namespace foxeval::fa
