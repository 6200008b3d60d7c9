// Gated linear attention kernels (see kernels/recurrent_gla.h and the section in kernels/NOTES.md).
//
// Chunks of C = 64 tokens; b = the within-chunk inclusive cumulative log decay (fp32, <= 0,
// non-increasing in t), b_last = b at the chunk's last row (padded rows have g = 0, k = v = 0).
//   state pass (gla_state_kernel), grid (V/64, K/64, B*H), sequential over chunks:
//     hs[n] = S (bf16);  S = diag(exp(b_last)) S + (k * exp(b_last - b))^T v
//   output pass (gla_output_kernel), grid (chunks, B*H):
//     o = scale * ((q * exp(b)) hs[n] + A v),  A[i,j] = sum_k q_ik k_jk exp(b_ik - b_jk), j <= i
// A with a per-key gate (fla's chunk_gla scheme): 16-row sub-blocks; off-diagonal blocks (J < I)
// as (q * exp(b - r)) (k * exp(r - b))^T with r = b at the first row of query block I (both
// exponents <= 0), diagonal blocks elementwise in fp32. With a scalar gate A = (q k^T) *
// exp(b_i - b_j) on the fp32 accumulator, and exp(b_i) scales the inter-chunk product after it
// (as mamba_ssm's chunk scan).
#include "kernels/recurrent_gla.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <c10/util/StringUtil.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "data/errors.h"
#include "data/switches.h"
#include "kernels/hopper/mma_fragments.cuh"
#include "kernels/hopper/mma_sync.cuh"

namespace foxeval {
namespace kernels {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kC = 64;  // chunk length

struct GlaParams {
  const void *q, *k, *v;  // fp32; bf16 in the SSD form (q = C, k = B, v = x)
  const float* g;
  int64_t sq[3], sk[3], sv[3], sg[3];  // strides of dims B, H, T (elements)
  int H, T, NT;
  float scale;
  const float* state_in;  // [BH, K, V] contiguous, or null (zeros)
  float* state_out;       // [BH, K, V]
  bf16* hs;               // [BH, NT, K, V]: the state at the start of each chunk (of its group, G > 1)
  float* out;             // [BH, T, V] (the GLA form)
  // Group-parallel state pass (G > 1): group j holds chunks [j CG, (j+1) CG) and starts from zero
  // (group 0 from state_in); the combine kernel turns the groups' end states into their true
  // start states, which the output pass adds to hs with the decay from the group's start.
  int G, CG;
  float* gl;    // [BH, G, K, V]: group j's end state from zero; after the combine, its true start state
  float* gdec;  // [BH, G, W]: group j's total log decay (W = K per key, 1 scalar)
  float* cdec;  // [BH, NT, W]: log decay from the group's start to the start of chunk n
  // The SSD form (Mamba-2, as mamba_ssm's chunk scan): v = x * dt, y = S^T q + D x in bf16.
  const float* dt;
  int64_t sdt[3];
  const float* D;  // [H]
  bf16* y;         // [B, T, H, V] via sy (b, h, t)
  int64_t sy[3];
};

// ---------------------------------------------------------------- tensor-core helpers
// The PTX wrappers are the shared ones (kernels/hopper/mma_sync.cuh); below sm_80 the kernels trap
// (gla_cuda_supports() is false there).
using hopper::smem_u32;
using mma_frag::ldsm_x4;
using mma_frag::ldsm_x4_trans;
using mma_frag::mma_bf16;
using mma_frag::pack_bf16;
using mma_frag::unpack_bf16;

// Fragments of 16x16 tiles in shared memory (addresses: kernels/hopper/mma_fragments.cuh).
// A (rows m0.., cols k0..) of a row-major [m][k] tile with row stride ld.
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const bf16* s, int ld, int m0, int k0, int lane) {
  ldsm_x4(a, mma_frag::a_rowmajor(s, ld, m0, k0, lane));
}
// A of A = X^T, X stored row-major [k][m].
__device__ __forceinline__ void load_a_trans(uint32_t (&a)[4], const bf16* s, int ld, int m0, int k0, int lane) {
  ldsm_x4_trans(a, mma_frag::a_transposed(s, ld, m0, k0, lane));
}
// B of two n-tiles (n0.., n0+8..) from a row-major [k][n] tile: b[0], b[1] for n0, b[2], b[3] for n0 + 8.
__device__ __forceinline__ void load_b_kn(uint32_t (&b)[4], const bf16* s, int ld, int k0, int n0, int lane) {
  ldsm_x4_trans(b, mma_frag::b_from_kn(s, ld, n0, k0, lane));
}
// The same from a row-major [n][k] tile (B = X^T).
__device__ __forceinline__ void load_b_nk(uint32_t (&b)[4], const bf16* s, int ld, int k0, int n0, int lane) {
  ldsm_x4(b, mma_frag::b_from_nk(s, ld, n0, k0, lane));
}

// 4 floats -> 4 bf16 at an 8-byte aligned smem address.
__device__ __forceinline__ void store4_bf16(bf16* p, float4 x) {
  *reinterpret_cast<uint2*>(p) = make_uint2(pack_bf16(x.x, x.y), pack_bf16(x.z, x.w));
}

__device__ __forceinline__ float4 ldg4(const float* p) { return __ldg(reinterpret_cast<const float4*>(p)); }

// Four consecutive inputs at element offset `off` of q, k or v as fp32: fp32 tensors (the GLA
// form) or bf16 ones (the SSD form; 8-byte aligned, ssd_cuda_supports checks).
template <bool kBf16>
__device__ __forceinline__ float4 ld4(const void* base, int64_t off) {
  if constexpr (kBf16) {
    const uint2 u = __ldg(reinterpret_cast<const uint2*>(static_cast<const bf16*>(base) + off));
    const float2 a = unpack_bf16(u.x), b = unpack_bf16(u.y);
    return make_float4(a.x, a.y, b.x, b.y);
  } else {
    return ldg4(static_cast<const float*>(base) + off);
  }
}

// The SSD form's v = x * dt (rounded to bf16 where it is staged, as the GLA form's x*dt input).
__device__ __forceinline__ float4 scale4(float4 x, float d) {
  return make_float4(__fmul_rn(x.x, d), __fmul_rn(x.y, d), __fmul_rn(x.z, d), __fmul_rn(x.w, d));
}

// Inclusive cumulative sum of s[0..63] (fp32) in place, by one warp.
__device__ __forceinline__ void warp_cumsum64(float* s, int lane) {
  const float x0 = s[2 * lane], x1 = s[2 * lane + 1];
  float incl = x0 + x1;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const float y = __shfl_up_sync(0xffffffffu, incl, o);
    if (lane >= o) incl += y;
  }
  float excl = __shfl_up_sync(0xffffffffu, incl, 1);
  if (lane == 0) excl = 0.f;
  s[2 * lane] = excl + x0;
  s[2 * lane + 1] = incl;
}

// ---------------------------------------------------------------- state pass
// CTA: (V tile of 64, K tile of 64, b*H+h), 4 warps; warp w owns state rows 16w..16w+15 of the
// key tile, all 64 columns (8 m16n8 accumulators). The next chunk's inputs are loaded into
// registers while the current one is processed.
constexpr int kStateThreads = 128;
constexpr int kLdF = 64 + 4;  // fp32 [t][key] tiles
constexpr int kLdH = 64 + 8;  // bf16 [t][key|v] tiles
constexpr int kStateSmem = 2 * kC * kLdF * 4 + 2 * kC * kLdH * 2;

template <bool kPerKey, bool kSsd>
__global__ void __launch_bounds__(kStateThreads) gla_state_kernel(GlaParams p, int K, int V) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* gs = reinterpret_cast<float*>(smem);  // [kC][kLdF] gates -> b (per key); [kC] (scalar)
  float* ks = gs + kC * kLdF;                  // [kC][kLdF] k
  bf16* kd = reinterpret_cast<bf16*>(ks + kC * kLdF);  // [kC][kLdH] k * exp(b_last - b)
  bf16* vs = kd + kC * kLdH;                            // [kC][kLdH] v

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g8 = lane >> 2, t4 = lane & 3;
  const int nvt = V / 64, vt = blockIdx.x % nvt, grp = blockIdx.x / nvt;
  const int kt = blockIdx.y, bh = blockIdx.z, b = bh / p.H, h = bh % p.H;
  const int key0 = kt * 64, v0 = vt * 64;
  const int n_begin = grp * p.CG, n_end = min(p.NT, n_begin + p.CG);
  const int64_t koff = b * p.sk[0] + h * p.sk[1] + key0, voff = b * p.sv[0] + h * p.sv[1] + v0;
  const float* qg = p.g + b * p.sg[0] + h * p.sg[1] + (kPerKey ? key0 : 0);
  const float* qdt = kSsd ? p.dt + b * p.sdt[0] + h * p.sdt[1] : nullptr;
  // The decay bookkeeping of the group-parallel pass (G > 1): one writer per gate value.
  const bool decay_writer = p.G > 1 && vt == 0 && (kPerKey ? tid < 64 : (tid == 0 && kt == 0));
  const int W = kPerKey ? K : 1, wkey = kPerKey ? key0 + tid : 0;
  float csum = 0.f;  // log decay from the group's start (decay_writer threads)

  // Accumulator element (row, col) of n-tile j: rows r0 = 16w + g8 (c[0], c[1]), r0 + 8 (c[2], c[3]).
  const int r0 = 16 * warp + g8;
  float acc[8][4];
  {
    const float* s0 = (grp == 0 && p.state_in) ? p.state_in + (int64_t)bh * K * V : nullptr;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int c = v0 + 8 * j + 2 * t4;
      if (s0) {
        const float2 x = *reinterpret_cast<const float2*>(s0 + (int64_t)(key0 + r0) * V + c);
        const float2 y = *reinterpret_cast<const float2*>(s0 + (int64_t)(key0 + r0 + 8) * V + c);
        acc[j][0] = x.x; acc[j][1] = x.y; acc[j][2] = y.x; acc[j][3] = y.y;
      } else {
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
      }
    }
  }

  // Register prefetch: unit r covers row t = tid / 16 + 8 r, columns 4 (tid % 16) .. + 3.
  float4 pk[8], pv[8], pg[8];
  float pgs = 0.f;
  auto load_chunk = [&](int n) {
    const int t0 = n * kC;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int t = (tid >> 4) + 8 * r, c = (tid & 15) * 4;
      const bool ok = t0 + t < p.T;
      const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
      pk[r] = ok ? ld4<kSsd>(p.k, koff + (int64_t)(t0 + t) * p.sk[2] + c) : z;
      pv[r] = ok ? ld4<kSsd>(p.v, voff + (int64_t)(t0 + t) * p.sv[2] + c) : z;
      if (kSsd) pv[r] = scale4(pv[r], ok ? __ldg(qdt + (int64_t)(t0 + t) * p.sdt[2]) : 0.f);
      if (kPerKey) pg[r] = ok ? ldg4(qg + (int64_t)(t0 + t) * p.sg[2] + c) : z;
    }
    if (!kPerKey) pgs = (tid < kC && t0 + tid < p.T) ? __ldg(qg + (int64_t)(t0 + tid) * p.sg[2]) : 0.f;
  };

  if (n_begin < n_end) load_chunk(n_begin);
  for (int n = n_begin; n < n_end; ++n) {
    // The state at the start of chunk n (from the group's start when G > 1).
    bf16* hn = p.hs + ((int64_t)bh * p.NT + n) * K * V;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int c = v0 + 8 * j + 2 * t4;
      *reinterpret_cast<uint32_t*>(hn + (int64_t)(key0 + r0) * V + c) = pack_bf16(acc[j][0], acc[j][1]);
      *reinterpret_cast<uint32_t*>(hn + (int64_t)(key0 + r0 + 8) * V + c) = pack_bf16(acc[j][2], acc[j][3]);
    }
    if (decay_writer) p.cdec[((int64_t)bh * p.NT + n) * W + wkey] = csum;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int t = (tid >> 4) + 8 * r, c = (tid & 15) * 4;
      *reinterpret_cast<float4*>(ks + t * kLdF + c) = pk[r];
      if (kPerKey) *reinterpret_cast<float4*>(gs + t * kLdF + c) = pg[r];
      store4_bf16(vs + t * kLdH + c, pv[r]);
    }
    if (!kPerKey && tid < kC) gs[tid] = pgs;
    __syncthreads();
    if (n + 1 < n_end) load_chunk(n + 1);

    // b = cumulative sum of g over the chunk.
    if (kPerKey) {
      const int key = tid & 63, half = tid >> 6;
      float s = 0.f;
      for (int t = 32 * half; t < 32 * half + 32; ++t) {
        s += gs[t * kLdF + key];
        gs[t * kLdF + key] = s;
      }
      __syncthreads();
      if (half == 1) {
        const float off = gs[31 * kLdF + key];
        for (int t = 32; t < 64; ++t) gs[t * kLdF + key] += off;
      }
    } else if (warp == 0) {
      warp_cumsum64(gs, lane);
    }
    __syncthreads();
    if (decay_writer) csum += kPerKey ? gs[(kC - 1) * kLdF + tid] : gs[kC - 1];

    // kd = bf16(k * exp(b_last - b)); exponent <= 0.
#pragma unroll
    for (int r = 0; r < 8; ++r) {
      const int t = (tid >> 4) + 8 * r, c = (tid & 15) * 4;
      const float4 kv = *reinterpret_cast<const float4*>(ks + t * kLdF + c);
      float4 d;
      if (kPerKey) {
        const float4 bl = *reinterpret_cast<const float4*>(gs + (kC - 1) * kLdF + c);
        const float4 bt = *reinterpret_cast<const float4*>(gs + t * kLdF + c);
        d = make_float4(kv.x * __expf(bl.x - bt.x), kv.y * __expf(bl.y - bt.y), kv.z * __expf(bl.z - bt.z),
                        kv.w * __expf(bl.w - bt.w));
      } else {
        const float e = __expf(gs[kC - 1] - gs[t]);
        d = make_float4(kv.x * e, kv.y * e, kv.z * e, kv.w * e);
      }
      store4_bf16(kd + t * kLdH + c, d);
    }
    __syncthreads();

    // S = diag(exp(b_last)) S + kd^T v.
    {
      const float e0 = __expf(kPerKey ? gs[(kC - 1) * kLdF + r0] : gs[kC - 1]);
      const float e1 = __expf(kPerKey ? gs[(kC - 1) * kLdF + r0 + 8] : gs[kC - 1]);
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        acc[j][0] *= e0; acc[j][1] *= e0; acc[j][2] *= e1; acc[j][3] *= e1;
      }
    }
#pragma unroll
    for (int kk = 0; kk < kC / 16; ++kk) {
      uint32_t a[4];
      load_a_trans(a, kd, kLdH, 16 * warp, 16 * kk, lane);
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        uint32_t bb[4];
        load_b_kn(bb, vs, kLdH, 16 * kk, 16 * np, lane);
        mma_bf16(acc[2 * np], a, bb[0], bb[1]);
        mma_bf16(acc[2 * np + 1], a, bb[2], bb[3]);
      }
    }
    __syncthreads();
  }

  // G == 1: the final state. G > 1: the group's end state (from its start) and total decay.
  float* so = p.G == 1 ? p.state_out + (int64_t)bh * K * V : p.gl + ((int64_t)bh * p.G + grp) * K * V;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int c = v0 + 8 * j + 2 * t4;
    *reinterpret_cast<float2*>(so + (int64_t)(key0 + r0) * V + c) = make_float2(acc[j][0], acc[j][1]);
    *reinterpret_cast<float2*>(so + (int64_t)(key0 + r0 + 8) * V + c) = make_float2(acc[j][2], acc[j][3]);
  }
  if (decay_writer) p.gdec[((int64_t)bh * p.G + grp) * W + wkey] = csum;
}

// ---------------------------------------------------------------- group combine
// G > 1: a thread per state element (key, v) of one b*H+h walks the groups in order. Group 0
// ran from the initial state, so its end state is the true one; for j >= 1:
//   start_j = S;  S = exp(decay_j) S + end_j   (end_j: group j's end state from zero)
// storing start_j over end_j in gl and the final S in state_out. G sequential steps of
// elementwise work where the state pass had NT dependent chunk steps.
constexpr int kCombineThreads = 256;

template <bool kPerKey>
__global__ void __launch_bounds__(kCombineThreads) gla_combine_kernel(GlaParams p, int K, int V) {
  const int e = blockIdx.x * kCombineThreads + threadIdx.x, bh = blockIdx.y;
  if (e >= K * V) return;
  const int W = kPerKey ? K : 1, wkey = kPerKey ? e / V : 0;
  const float* gd = p.gdec + (int64_t)bh * p.G * W + wkey;
  float* gl = p.gl + (int64_t)bh * p.G * K * V + e;
  float s = gl[0];
  for (int j = 1; j < p.G; ++j) {
    const float end = gl[(int64_t)j * K * V], d = gd[j * W];
    gl[(int64_t)j * K * V] = s;
    s = __expf(d) * s + end;
  }
  p.state_out[(int64_t)bh * K * V + e] = s;
}

// ---------------------------------------------------------------- output pass
// CTA: (chunk n, b*H+h), 8 warps. Phase A: warp w computes rows 16(w%4).. of A (half of the
// sub-blocks each); phase C: warp w computes rows 16(w%4).. and half w/4 of the V columns.
constexpr int kOutThreads = 256;

template <int K, int V, bool kPerKey>
struct OutLayout {
  static constexpr int kLdQ = K + 8, kLdV = V + 8, kLdA = kC + 8, kLdB = K + 8;
  static constexpr int kQ = 0;                              // bf16 [kC][kLdQ] q, then q * exp(b)
  static constexpr int kVs = kQ + kC * kLdQ * 2;            // bf16 [kC][kLdV] v
  static constexpr int kA = kVs + kC * kLdV * 2;            // bf16 [kC][kLdA] A
  static constexpr int kBsc = kA + kC * kLdA * 2;           // fp32 [kC] b (scalar gate)
  static constexpr int kR = kBsc + kC * 4;                  // phase A: k, b; phase C: S
  static constexpr int kKs = kR;                            // bf16 [kC][kLdQ]
  static constexpr int kBs = kKs + kC * kLdQ * 2;           // fp32 [kC][kLdB] (per-key gate)
  static constexpr int kRBytesA = kC * kLdQ * 2 + (kPerKey ? kC * kLdB * 4 : 0);
  static constexpr int kRBytesC = K * kLdV * 2;             // bf16 [K][kLdV] S
  static constexpr int kBytes = kR + (kRBytesA > kRBytesC ? kRBytesA : kRBytesC);
};

template <int K, int V, bool kPerKey, bool kSsd>
__global__ void __launch_bounds__(kOutThreads) gla_output_kernel(GlaParams p) {
  using L = OutLayout<K, V, kPerKey>;
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* qs = reinterpret_cast<bf16*>(smem + L::kQ);
  bf16* vs = reinterpret_cast<bf16*>(smem + L::kVs);
  bf16* as = reinterpret_cast<bf16*>(smem + L::kA);
  float* bsc = reinterpret_cast<float*>(smem + L::kBsc);
  bf16* ks = reinterpret_cast<bf16*>(smem + L::kKs);
  float* bs = reinterpret_cast<float*>(smem + L::kBs);
  bf16* ss = reinterpret_cast<bf16*>(smem + L::kR);
  constexpr int kLdQ = L::kLdQ, kLdV = L::kLdV, kLdA = L::kLdA, kLdB = L::kLdB;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g8 = lane >> 2, t4 = lane & 3;
  const int n = blockIdx.x, bh = blockIdx.y, b = bh / p.H, h = bh % p.H;
  const int t0 = n * kC;
  const int64_t qoff = b * p.sq[0] + h * p.sq[1], koff = b * p.sk[0] + h * p.sk[1], voff = b * p.sv[0] + h * p.sv[1];
  const float* pg = p.g + b * p.sg[0] + h * p.sg[1];
  const float4 z4 = make_float4(0.f, 0.f, 0.f, 0.f);

  // Phase 0: q, k, v (bf16), g (fp32), rows past T zero; A zero.
  for (int i = tid; i < kC * K / 4; i += kOutThreads) {
    const int t = i / (K / 4), c = (i % (K / 4)) * 4;
    const bool ok = t0 + t < p.T;
    store4_bf16(qs + t * kLdQ + c, ok ? ld4<kSsd>(p.q, qoff + (int64_t)(t0 + t) * p.sq[2] + c) : z4);
    store4_bf16(ks + t * kLdQ + c, ok ? ld4<kSsd>(p.k, koff + (int64_t)(t0 + t) * p.sk[2] + c) : z4);
    if (kPerKey) *reinterpret_cast<float4*>(bs + t * kLdB + c) = ok ? ldg4(pg + (int64_t)(t0 + t) * p.sg[2] + c) : z4;
  }
  for (int i = tid; i < kC * V / 4; i += kOutThreads) {
    const int t = i / (V / 4), c = (i % (V / 4)) * 4;
    const bool ok = t0 + t < p.T;
    float4 x = ok ? ld4<kSsd>(p.v, voff + (int64_t)(t0 + t) * p.sv[2] + c) : z4;
    if (kSsd) x = scale4(x, ok ? __ldg(p.dt + b * p.sdt[0] + h * p.sdt[1] + (int64_t)(t0 + t) * p.sdt[2]) : 0.f);
    store4_bf16(vs + t * kLdV + c, x);
  }
  if (!kPerKey && tid < kC) bsc[tid] = t0 + tid < p.T ? __ldg(pg + (int64_t)(t0 + tid) * p.sg[2]) : 0.f;
  for (int i = tid; i < kC * kLdA / 8; i += kOutThreads) reinterpret_cast<uint4*>(as)[i] = make_uint4(0, 0, 0, 0);
  // The chunk's start state (bf16 [K][V]) into registers now; stored after phase A, over k and b.
  constexpr int kSUnits = K * V / 8 / kOutThreads;
  uint4 sreg[kSUnits];
  {
    const uint4* hn = reinterpret_cast<const uint4*>(p.hs + ((int64_t)bh * p.NT + n) * K * V);
#pragma unroll
    for (int r = 0; r < kSUnits; ++r) sreg[r] = hn[tid + r * kOutThreads];
  }
  __syncthreads();

  // Cumulative gates.
  if (kPerKey) {
    constexpr int kParts = kOutThreads / K, kSeg = kC / kParts;
    const int key = tid % K, part = tid / K;
    float s = 0.f;
    for (int t = part * kSeg; t < (part + 1) * kSeg; ++t) {
      s += bs[t * kLdB + key];
      bs[t * kLdB + key] = s;
    }
    __syncthreads();
    float off = 0.f;
    for (int q = 0; q < part; ++q) off += bs[((q + 1) * kSeg - 1) * kLdB + key];
    __syncthreads();
    if (part > 0)
      for (int t = part * kSeg; t < (part + 1) * kSeg; ++t) bs[t * kLdB + key] += off;
  } else if (warp == 0) {
    warp_cumsum64(bsc, lane);
  }
  __syncthreads();

  // Phase A: the intra-chunk scores, rows of query block I, bf16 into as.
  const int I = warp & 3, part = warp >> 2;
  if (kPerKey) {
    if (I > part) {  // this warp has an off-diagonal block J < I with J % 2 == part
      // q * exp(b - r), r = b at row 16 I: A fragments for all K / 16 k-steps.
      const float* rr = bs + 16 * I * kLdB;
      uint32_t qa[K / 16][4];
#pragma unroll
      for (int kk = 0; kk < K / 16; ++kk) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = 16 * I + g8 + ((e & 1) << 3), col = 16 * kk + 2 * t4 + ((e >> 1) << 3);
          const float2 qv = unpack_bf16(*reinterpret_cast<const uint32_t*>(qs + row * kLdQ + col));
          const float2 bv = *reinterpret_cast<const float2*>(bs + row * kLdB + col);
          const float2 rv = *reinterpret_cast<const float2*>(rr + col);
          qa[kk][e] = pack_bf16(qv.x * __expf(bv.x - rv.x), qv.y * __expf(bv.y - rv.y));
        }
      }
      for (int J = part; J < I; J += 2) {
        float c2[2][4] = {};
#pragma unroll
        for (int kk = 0; kk < K / 16; ++kk) {
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) {
            const int j = 16 * J + 8 * nt + g8;
            uint32_t bb[2];
#pragma unroll
            for (int e = 0; e < 2; ++e) {
              const int col = 16 * kk + 2 * t4 + 8 * e;
              const float2 kv = unpack_bf16(*reinterpret_cast<const uint32_t*>(ks + j * kLdQ + col));
              const float2 bv = *reinterpret_cast<const float2*>(bs + j * kLdB + col);
              const float2 rv = *reinterpret_cast<const float2*>(rr + col);
              bb[e] = pack_bf16(kv.x * __expf(rv.x - bv.x), kv.y * __expf(rv.y - bv.y));
            }
            mma_bf16(c2[nt], qa[kk], bb[0], bb[1]);
          }
        }
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          const int col = 16 * J + 8 * nt + 2 * t4, row = 16 * I + g8;
          *reinterpret_cast<uint32_t*>(as + row * kLdA + col) = pack_bf16(c2[nt][0], c2[nt][1]);
          *reinterpret_cast<uint32_t*>(as + (row + 8) * kLdA + col) = pack_bf16(c2[nt][2], c2[nt][3]);
        }
      }
    }
    // Diagonal block, elementwise in fp32: the 136 pairs j <= i over the two warps of block I.
    for (int pidx = part * 32 + lane; pidx < 136; pidx += 64) {
      int i = 0;
      while ((i + 1) * (i + 2) / 2 <= pidx) ++i;
      const int j = pidx - i * (i + 1) / 2;
      const int ri = 16 * I + i, rj = 16 * I + j;
      float s = 0.f;
#pragma unroll 4
      for (int c = 0; c < K; c += 8) {
        const uint4 qu = *reinterpret_cast<const uint4*>(qs + ri * kLdQ + c);
        const uint4 ku = *reinterpret_cast<const uint4*>(ks + rj * kLdQ + c);
        const float4 bi0 = *reinterpret_cast<const float4*>(bs + ri * kLdB + c);
        const float4 bi1 = *reinterpret_cast<const float4*>(bs + ri * kLdB + c + 4);
        const float4 bj0 = *reinterpret_cast<const float4*>(bs + rj * kLdB + c);
        const float4 bj1 = *reinterpret_cast<const float4*>(bs + rj * kLdB + c + 4);
        const float2 q0 = unpack_bf16(qu.x), q1 = unpack_bf16(qu.y), q2 = unpack_bf16(qu.z), q3 = unpack_bf16(qu.w);
        const float2 k0 = unpack_bf16(ku.x), k1 = unpack_bf16(ku.y), k2 = unpack_bf16(ku.z), k3 = unpack_bf16(ku.w);
        s += q0.x * k0.x * __expf(bi0.x - bj0.x);
        s += q0.y * k0.y * __expf(bi0.y - bj0.y);
        s += q1.x * k1.x * __expf(bi0.z - bj0.z);
        s += q1.y * k1.y * __expf(bi0.w - bj0.w);
        s += q2.x * k2.x * __expf(bi1.x - bj1.x);
        s += q2.y * k2.y * __expf(bi1.y - bj1.y);
        s += q3.x * k3.x * __expf(bi1.z - bj1.z);
        s += q3.y * k3.y * __expf(bi1.w - bj1.w);
      }
      as[ri * kLdA + rj] = __float2bfloat16_rn(s);
    }
  } else {
    // (q k^T) * exp(b_i - b_j) on the fp32 accumulator, blocks J <= I with J % 2 == part.
    for (int J = part; J <= I; J += 2) {
      float c2[2][4] = {};
#pragma unroll
      for (int kk = 0; kk < K / 16; ++kk) {
        uint32_t a[4], bb[4];
        load_a(a, qs, kLdQ, 16 * I, 16 * kk, lane);
        load_b_nk(bb, ks, kLdQ, 16 * kk, 16 * J, lane);
        mma_bf16(c2[0], a, bb[0], bb[1]);
        mma_bf16(c2[1], a, bb[2], bb[3]);
      }
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        const int col = 16 * J + 8 * nt + 2 * t4;
#pragma unroll
        for (int hh = 0; hh < 2; ++hh) {
          const int row = 16 * I + g8 + 8 * hh;
          const float bi = bsc[row];
          const float x0 = col <= row ? c2[nt][2 * hh] * __expf(bi - bsc[col]) : 0.f;
          const float x1 = col + 1 <= row ? c2[nt][2 * hh + 1] * __expf(bi - bsc[col + 1]) : 0.f;
          *reinterpret_cast<uint32_t*>(as + row * kLdA + col) = pack_bf16(x0, x1);
        }
      }
    }
  }
  __syncthreads();

  // Phase B: q * exp(b) (per-key gate; reads b before S overwrites it), then S into smem.
  if (kPerKey) {
    for (int i = tid; i < kC * K / 8; i += kOutThreads) {
      const int t = i / (K / 8), c = (i % (K / 8)) * 8;
      uint4 u = *reinterpret_cast<const uint4*>(qs + t * kLdQ + c);
      const float4 b0 = *reinterpret_cast<const float4*>(bs + t * kLdB + c);
      const float4 b1 = *reinterpret_cast<const float4*>(bs + t * kLdB + c + 4);
      float2 x;
      x = unpack_bf16(u.x); u.x = pack_bf16(x.x * __expf(b0.x), x.y * __expf(b0.y));
      x = unpack_bf16(u.y); u.y = pack_bf16(x.x * __expf(b0.z), x.y * __expf(b0.w));
      x = unpack_bf16(u.z); u.z = pack_bf16(x.x * __expf(b1.x), x.y * __expf(b1.y));
      x = unpack_bf16(u.w); u.w = pack_bf16(x.x * __expf(b1.z), x.y * __expf(b1.w));
      *reinterpret_cast<uint4*>(qs + t * kLdQ + c) = u;
    }
    __syncthreads();
  }
  // Group-parallel state pass: hs holds the state from the group's start; add the group's
  // true start state decayed to this chunk (fp32, then rounded to bf16 once more).
  const int grp = n / p.CG;
  if (p.G > 1 && grp > 0) {
    const float* s0 = p.gl + ((int64_t)bh * p.G + grp) * K * V;
    const float* cd = p.cdec + ((int64_t)bh * p.NT + n) * (kPerKey ? K : 1);
#pragma unroll
    for (int r = 0; r < kSUnits; ++r) {
      const int i = tid + r * kOutThreads, row = i / (V / 8), c = (i % (V / 8)) * 8;
      const float e = __expf(kPerKey ? cd[row] : cd[0]);
      const float4 a0 = ldg4(s0 + row * V + c), a1 = ldg4(s0 + row * V + c + 4);
      uint4 u = sreg[r];
      float2 x;
      x = unpack_bf16(u.x); u.x = pack_bf16(x.x + e * a0.x, x.y + e * a0.y);
      x = unpack_bf16(u.y); u.y = pack_bf16(x.x + e * a0.z, x.y + e * a0.w);
      x = unpack_bf16(u.z); u.z = pack_bf16(x.x + e * a1.x, x.y + e * a1.y);
      x = unpack_bf16(u.w); u.w = pack_bf16(x.x + e * a1.z, x.y + e * a1.w);
      sreg[r] = u;
    }
  }
#pragma unroll
  for (int r = 0; r < kSUnits; ++r) {
    const int i = tid + r * kOutThreads, row = i / (V / 8), c = (i % (V / 8)) * 8;
    *reinterpret_cast<uint4*>(ss + row * kLdV + c) = sreg[r];
  }
  __syncthreads();

  // Phase C: o = (q * exp(b)) S + A v for rows 16 I.., columns vh * V / 2 ...
  constexpr int kNV = V / 2, kNT = kNV / 8;
  const int vh = warp >> 2, c0 = vh * kNV;
  float acc[kNT][4];
#pragma unroll
  for (int j = 0; j < kNT; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    uint32_t a[4];
    load_a(a, qs, kLdQ, 16 * I, 16 * kk, lane);
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      uint32_t bb[4];
      load_b_kn(bb, ss, kLdV, 16 * kk, c0 + 16 * np, lane);
      mma_bf16(acc[2 * np], a, bb[0], bb[1]);
      mma_bf16(acc[2 * np + 1], a, bb[2], bb[3]);
    }
  }
  if (!kPerKey) {
    const float e0 = __expf(bsc[16 * I + g8]), e1 = __expf(bsc[16 * I + g8 + 8]);
#pragma unroll
    for (int j = 0; j < kNT; ++j) {
      acc[j][0] *= e0; acc[j][1] *= e0; acc[j][2] *= e1; acc[j][3] *= e1;
    }
  }
  for (int J = 0; J <= I; ++J) {
    uint32_t a[4];
    load_a(a, as, kLdA, 16 * I, 16 * J, lane);
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      uint32_t bb[4];
      load_b_kn(bb, vs, kLdV, 16 * J, c0 + 16 * np, lane);
      mma_bf16(acc[2 * np], a, bb[0], bb[1]);
      mma_bf16(acc[2 * np + 1], a, bb[2], bb[3]);
    }
  }
  if constexpr (kSsd) {
    // y = S^T q + D x in fp32 (the sum, then x * D added: ATen's y + xs * D), rounded to bf16.
    const float d = p.D[h];
    bf16* py = p.y + b * p.sy[0] + h * p.sy[1];
    const bf16* px = static_cast<const bf16*>(p.v) + voff;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int t = t0 + 16 * I + g8 + 8 * hh;
      if (t < p.T) {
#pragma unroll
        for (int j = 0; j < kNT; ++j) {
          const int c = c0 + 8 * j + 2 * t4;
          const float2 x = unpack_bf16(__ldg(reinterpret_cast<const uint32_t*>(px + (int64_t)t * p.sv[2] + c)));
          *reinterpret_cast<uint32_t*>(py + (int64_t)t * p.sy[2] + c) =
              pack_bf16(__fadd_rn(__fmul_rn(p.scale, acc[j][2 * hh]), __fmul_rn(x.x, d)),
                        __fadd_rn(__fmul_rn(p.scale, acc[j][2 * hh + 1]), __fmul_rn(x.y, d)));
        }
      }
    }
  } else {
    float* po = p.out + (int64_t)bh * p.T * V;
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      const int t = t0 + 16 * I + g8 + 8 * hh;
      if (t < p.T) {
#pragma unroll
        for (int j = 0; j < kNT; ++j)
          *reinterpret_cast<float2*>(po + (int64_t)t * V + c0 + 8 * j + 2 * t4) =
              make_float2(p.scale * acc[j][2 * hh], p.scale * acc[j][2 * hh + 1]);
      }
    }
  }
}

// ---------------------------------------------------------------- single step
// CTA per (b, h), 128 threads: column v = tid % V, keys of part tid / V; fp32 throughout.
constexpr int kStepThreads = 128;

template <bool kPerKey>
__global__ void __launch_bounds__(kStepThreads) gla_step_kernel(GlaParams p, int K, int V, float* state) {
  __shared__ float sq[128], sk[128], sd[128], red[kStepThreads];
  const int tid = threadIdx.x, bh = blockIdx.x, b = bh / p.H, h = bh % p.H;
  const float* pq = static_cast<const float*>(p.q) + b * p.sq[0] + h * p.sq[1];
  const float* pk = static_cast<const float*>(p.k) + b * p.sk[0] + h * p.sk[1];
  const float* pv = static_cast<const float*>(p.v) + b * p.sv[0] + h * p.sv[1];
  const float* pg = p.g + b * p.sg[0] + h * p.sg[1];
  for (int i = tid; i < K; i += kStepThreads) {
    sq[i] = pq[i];
    sk[i] = pk[i];
    sd[i] = __expf(kPerKey ? pg[i] : pg[0]);
  }
  __syncthreads();
  const int parts = kStepThreads / V, col = tid % V, part = tid / V, per = K / parts;
  float* s = state + (int64_t)bh * K * V + col;
  const float vv = pv[col];
  float acc = 0.f;
  for (int key = part * per; key < (part + 1) * per; ++key) {
    const float x = s[(int64_t)key * V] * sd[key] + sk[key] * vv;
    s[(int64_t)key * V] = x;
    acc += sq[key] * x;
  }
  red[tid] = acc;
  __syncthreads();
  if (part == 0) {
    for (int q = 1; q < parts; ++q) acc += red[q * V + col];
    p.out[(int64_t)bh * V + col] = p.scale * acc;
  }
}

// ---------------------------------------------------------------- host side
bool aligned16(const at::Tensor& x) {
  if (reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 != 0) return false;
  for (int d = 0; d < 3; ++d)
    if (x.stride(d) % 4 != 0) return false;
  return true;
}

// The tensors the kernels read with 16-byte loads: a contiguous copy where a pointer or stride
// is not a multiple of 16 bytes (rare: views of fresh projections are aligned).
at::Tensor vec_ready(const at::Tensor& x) {
  if (aligned16(x)) return x;
  at::Tensor c = x.contiguous();
  return aligned16(c) ? c : c.clone();  // a contiguous view at an odd offset: a fresh allocation
}

void check_args(const char* who, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g) {
  if (!gla_cuda_supports(q, k, v, g))
    throw Error(c10::str(who, ": unsupported arguments q ", q.sizes(), " k ", k.sizes(), " v ", v.sizes(), " g ",
                         g.sizes(), " (fp32 CUDA, K and V in {64, 128}, last dim contiguous, sm_80+)"));
}

void fill_params(GlaParams& p, const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                 double scale) {
  p.q = q.data_ptr();
  p.k = k.data_ptr();
  p.v = v.data_ptr();
  p.g = g.data_ptr<float>();
  for (int d = 0; d < 3; ++d) {
    p.sq[d] = q.stride(d);
    p.sk[d] = k.stride(d);
    p.sv[d] = v.stride(d);
    p.sg[d] = g.stride(d);
  }
  p.H = static_cast<int>(q.size(1));
  p.T = static_cast<int>(q.size(2));
  p.scale = static_cast<float>(scale);
}

at::Tensor checked_state(const char* who, const at::Tensor& state, int64_t B, int64_t H, int64_t K, int64_t V,
                         const at::Tensor& like) {
  if (!state.defined()) return at::Tensor();
  if (state.dim() != 4 || state.size(0) != B || state.size(1) != H || state.size(2) != K || state.size(3) != V ||
      state.scalar_type() != at::kFloat || state.device() != like.device())
    throw Error(c10::str(who, ": state ", state.sizes(), " ", state.scalar_type(), " on ", state.device(),
                         ", expected fp32 [", B, ", ", H, ", ", K, ", ", V, "] on ", like.device()));
  return state;
}

template <int K, int V, bool kPerKey, bool kSsd>
void launch_output(const GlaParams& p, int64_t BH, cudaStream_t stream) {
  constexpr int smem = OutLayout<K, V, kPerKey>::kBytes;
  auto kernel = gla_output_kernel<K, V, kPerKey, kSsd>;
  C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<dim3(p.NT, static_cast<unsigned>(BH)), kOutThreads, smem, stream>>>(p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <bool kPerKey, bool kSsd>
void launch_all(const GlaParams& p, int64_t BH, int K, int V, cudaStream_t stream) {
  auto state_kernel = gla_state_kernel<kPerKey, kSsd>;
  C10_CUDA_CHECK(cudaFuncSetAttribute(state_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kStateSmem));
  state_kernel<<<dim3(V / 64 * p.G, K / 64, static_cast<unsigned>(BH)), kStateThreads, kStateSmem, stream>>>(p, K, V);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (p.G > 1) {
    gla_combine_kernel<kPerKey>
        <<<dim3((K * V + kCombineThreads - 1) / kCombineThreads, static_cast<unsigned>(BH)), kCombineThreads, 0,
           stream>>>(p, K, V);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  if (K == 64 && V == 64) launch_output<64, 64, kPerKey, kSsd>(p, BH, stream);
  else if (K == 64 && V == 128) launch_output<64, 128, kPerKey, kSsd>(p, BH, stream);
  else if (K == 128 && V == 64) launch_output<128, 64, kPerKey, kSsd>(p, BH, stream);
  else launch_output<128, 128, kPerKey, kSsd>(p, BH, stream);
}

// Groups of the state pass. One sequential pass per (state tile, b*h) is NT dependent chunk
// steps on (V/64)(K/64)BH CTAs, far fewer than the GPU holds (Mamba-2 760M: 96 CTAs, HGRN2: 48
// on 132 SMs). G groups of CG chunks run side by side, a combine kernel of G elementwise steps
// joins them, and the output pass adds each group's start state. G aims at ~3 state-pass CTAs
// per SM: the best of a sweep of G on the H100 (tests/test_gla_cuda.cpp "state pass groups"
// times it; FOXEVAL_GLA_GROUPS below fixes G for such sweeps). More groups lose to the combine and the
// output pass's extra reads of the start states. Short inputs (NT < 16) keep one group: the
// sequential pass, as before the split.
int state_groups_override = 0;  // testing::set_gla_state_groups

// FOXEVAL_GLA_GROUPS=n fixes the number of groups (1: the one sequential pass): A/B timing.
int env_state_groups() {
  static const SwitchSlot groups("FOXEVAL_GLA_GROUPS");
  const char* v = groups.value();
  return v ? std::max(0, std::atoi(v)) : 0;
}

void plan_groups(GlaParams& p, int64_t base_ctas, const at::Tensor& like) {
  int64_t G = 1;
  if (state_groups_override > 0 || env_state_groups() > 0) {
    G = state_groups_override > 0 ? state_groups_override : env_state_groups();
  } else if (p.NT >= 16) {
    const int sms = at::cuda::getDeviceProperties(like.device().index())->multiProcessorCount;
    G = std::min<int64_t>(3 * sms / base_ctas, p.NT / 4);
  }
  G = std::max<int64_t>(1, std::min<int64_t>(G, p.NT));
  p.CG = static_cast<int>((p.NT + G - 1) / G);
  p.G = static_cast<int>((p.NT + p.CG - 1) / p.CG);
}

// Group buffers for G > 1 (allocated with the call's other temporaries; kept alive by `keep`).
void alloc_groups(GlaParams& p, int64_t BH, int64_t K, int64_t V, bool per_key, const at::Tensor& like,
                  std::vector<at::Tensor>& keep) {
  if (p.G == 1) return;
  const int64_t W = per_key ? K : 1;
  const auto f32 = like.options().dtype(at::kFloat);
  keep.push_back(at::empty({BH, p.G, K, V}, f32));
  keep.push_back(at::empty({BH, p.G, W}, f32));
  keep.push_back(at::empty({BH, p.NT, W}, f32));
  p.gl = keep[keep.size() - 3].data_ptr<float>();
  p.gdec = keep[keep.size() - 2].data_ptr<float>();
  p.cdec = keep[keep.size() - 1].data_ptr<float>();
}

}  // namespace

bool gla_cuda_supports(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g) {
  for (const at::Tensor* x : {&q, &k, &v, &g})
    if (!x->defined() || !x->is_cuda() || x->scalar_type() != at::kFloat || x->dim() != 4 ||
        x->device() != q.device())
      return false;
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), K = q.size(3), V = v.size(3);
  if (k.sizes() != q.sizes() || v.size(0) != B || v.size(1) != H || v.size(2) != T || g.size(0) != B ||
      g.size(1) != H || g.size(2) != T || (g.size(3) != 1 && g.size(3) != K))
    return false;
  if ((K != 64 && K != 128) || (V != 64 && V != 128) || T < 1 || B * H > 65535 || T > (int64_t(1) << 30)) return false;
  if (q.stride(3) != 1 || k.stride(3) != 1 || v.stride(3) != 1 || (g.size(3) != 1 && g.stride(3) != 1)) return false;
  const auto* prop = at::cuda::getDeviceProperties(q.device().index());
  return prop->major >= 8;
}

namespace {

// The chunked passes for filled-in inputs (p's q, k, v, g, strides, scale, and for the SSD
// form dt, D, y): start states, groups, the final state into `state`.
void run_chunked(GlaParams& p, int64_t B, int64_t H, int64_t T, int64_t K, int64_t V, bool per_key, bool ssd,
                 at::Tensor& state, const at::Tensor& like, const char* who) {
  const int64_t NT = (T + kC - 1) / kC;
  const at::Tensor s_in = checked_state(who, state, B, H, K, V, like);
  const at::Tensor s0 = s_in.defined() ? s_in.contiguous() : at::Tensor();
  const auto f32 = like.options().dtype(at::kFloat);
  at::Tensor s_out = at::empty({B, H, K, V}, f32);
  at::Tensor hs = at::empty({B * H, NT, K, V}, f32.dtype(at::kBFloat16));
  p.NT = static_cast<int>(NT);
  p.state_in = s0.defined() ? s0.data_ptr<float>() : nullptr;
  p.state_out = s_out.data_ptr<float>();
  p.hs = reinterpret_cast<bf16*>(hs.data_ptr<at::BFloat16>());
  plan_groups(p, (V / 64) * (K / 64) * B * H, like);
  std::vector<at::Tensor> keep;
  alloc_groups(p, B * H, K, V, per_key, like, keep);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  const int k = static_cast<int>(K), v = static_cast<int>(V);
  if (ssd) launch_all<false, true>(p, B * H, k, v, stream);
  else if (per_key) launch_all<true, false>(p, B * H, k, v, stream);
  else launch_all<false, false>(p, B * H, k, v, stream);
  state = s_out;
}

}  // namespace

at::Tensor gla_chunked_cuda(const at::Tensor& q_in, const at::Tensor& k_in, const at::Tensor& v_in,
                            const at::Tensor& g_in, double scale, at::Tensor& state) {
  check_args("gla_chunked_cuda", q_in, k_in, v_in, g_in);
  const c10::cuda::CUDAGuard guard(q_in.device());
  const bool per_key = g_in.size(3) != 1;
  const at::Tensor q = vec_ready(q_in), k = vec_ready(k_in), v = vec_ready(v_in);
  const at::Tensor g = per_key ? vec_ready(g_in) : g_in;
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), K = q.size(3), V = v.size(3);
  at::Tensor out = at::empty({B, H, T, V}, q.options());
  GlaParams p{};
  fill_params(p, q, k, v, g, scale);
  p.out = out.data_ptr<float>();
  run_chunked(p, B, H, T, K, V, per_key, /*ssd=*/false, state, q, "gla_chunked_cuda");
  return out;
}

bool ssd_cuda_supports(const at::Tensor& x, const at::Tensor& dt, const at::Tensor& C, const at::Tensor& Bm,
                       const at::Tensor& g, const at::Tensor& D) {
  for (const at::Tensor* t : {&x, &dt, &C, &Bm, &g, &D})
    if (!t->defined() || !t->is_cuda() || t->device() != x.device()) return false;
  if (x.scalar_type() != at::kBFloat16 || C.scalar_type() != at::kBFloat16 || Bm.scalar_type() != at::kBFloat16 ||
      dt.scalar_type() != at::kFloat || g.scalar_type() != at::kFloat || D.scalar_type() != at::kFloat)
    return false;
  if (x.dim() != 4 || C.dim() != 4 || Bm.dim() != 4 || dt.dim() != 3 || g.dim() != 4 || D.dim() != 1) return false;
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), P = x.size(3), N = C.size(3);
  if (C.sizes() != Bm.sizes() || C.size(0) != B || C.size(1) != H || C.size(2) != T || dt.size(0) != B ||
      dt.size(1) != H || dt.size(2) != T || g.size(0) != B || g.size(1) != H || g.size(2) != T || g.size(3) != 1 ||
      D.size(0) != H || !D.is_contiguous())
    return false;
  if ((N != 64 && N != 128) || (P != 64 && P != 128) || T < 1 || B * H > 65535 || T > (int64_t(1) << 30)) return false;
  // bf16 read 4 (x: 2 in the epilogue) elements at a time: 8-byte aligned rows.
  for (const at::Tensor* t : {&x, &C, &Bm}) {
    if (t->stride(3) != 1 || reinterpret_cast<uintptr_t>(t->data_ptr()) % 8 != 0) return false;
    for (int d = 0; d < 3; ++d)
      if (t->stride(d) % 4 != 0) return false;
  }
  return at::cuda::getDeviceProperties(x.device().index())->major >= 8;
}

at::Tensor ssd_chunked_cuda(const at::Tensor& x, const at::Tensor& dt, const at::Tensor& C, const at::Tensor& Bm,
                            const at::Tensor& g, const at::Tensor& D, at::Tensor& state) {
  if (!ssd_cuda_supports(x, dt, C, Bm, g, D))
    throw Error(c10::str("ssd_chunked_cuda: unsupported arguments x ", x.sizes(), " dt ", dt.sizes(), " C ", C.sizes(),
                         " B ", Bm.sizes(), " g ", g.sizes(), " D ", D.sizes(),
                         " (bf16 x, C, B with 8-byte aligned rows; fp32 dt, g, D; N and P in {64, 128}; sm_80+)"));
  const c10::cuda::CUDAGuard guard(x.device());
  const int64_t B = x.size(0), H = x.size(1), T = x.size(2), P = x.size(3), N = C.size(3);
  at::Tensor y = at::empty({B, T, H, P}, x.options());
  GlaParams p{};
  fill_params(p, C, Bm, x, g, 1.0);
  p.dt = dt.data_ptr<float>();
  for (int d = 0; d < 3; ++d) p.sdt[d] = dt.stride(d);
  p.D = D.data_ptr<float>();
  p.y = reinterpret_cast<bf16*>(y.data_ptr<at::BFloat16>());
  p.sy[0] = y.stride(0);
  p.sy[1] = y.stride(2);
  p.sy[2] = y.stride(1);
  run_chunked(p, B, H, T, N, P, /*per_key=*/false, /*ssd=*/true, state, x, "ssd_chunked_cuda");
  return y;
}

namespace testing {
void set_gla_state_groups(int groups) { state_groups_override = groups; }
}  // namespace testing

at::Tensor gla_step_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& g,
                         double scale, at::Tensor& state) {
  check_args("gla_step_cuda", q, k, v, g);
  if (q.size(2) != 1) throw Error(c10::str("gla_step_cuda: T = ", q.size(2), ", expected 1"));
  const c10::cuda::CUDAGuard guard(q.device());
  const int64_t B = q.size(0), H = q.size(1), K = q.size(3), V = v.size(3);
  if (!state.defined()) state = at::zeros({B, H, K, V}, q.options());
  checked_state("gla_step_cuda", state, B, H, K, V, q);
  at::Tensor s = state.is_contiguous() ? state : state.contiguous();
  at::Tensor out = at::empty({B, H, 1, V}, q.options());
  GlaParams p{};
  fill_params(p, q, k, v, g, scale);
  p.NT = 1;
  p.out = out.data_ptr<float>();
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  if (g.size(3) != 1)
    gla_step_kernel<true><<<static_cast<unsigned>(B * H), kStepThreads, 0, stream>>>(p, K, V, s.data_ptr<float>());
  else
    gla_step_kernel<false><<<static_cast<unsigned>(B * H), kStepThreads, 0, stream>>>(p, K, V, s.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  if (!s.is_same(state)) state.copy_(s);
  return out;
}

}  // namespace kernels
}  // namespace foxeval
