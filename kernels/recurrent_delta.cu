// Fused CUDA delta rule (see kernels/recurrent_delta.h). The algorithm of fla's chunk_delta_rule
// (1c5937e) and its split into three launches (chunk_fwd_h's sequential pass, then the
// chunk-parallel output of chunk_fwd_o), with fla's intra-chunk preparation in the first:
//
// 1. delta_prep_kernel, one CTA (4 warps) per (chunk of 64 tokens, b*h), all in parallel:
//    rounds q (times scale), k, v to bf16, forms A = tril(beta K K^T, -1) and the causal scores
//    Aqk = tril(q K^T) on tensor cores, inverts (I + A) in fp32 by forward substitution (one
//    column per thread, in registers: columns of a unit-lower-triangular inverse are independent), rounds the
//    inverse to bf16 and forms w = inv (beta k) and u^T = (beta v)^T inv^T on tensor cores.
//    It writes per chunk one contiguous bf16 block [w 64xK | k 64xK | q 64xK | Aqk 64x64 | u^T Vx64].
// 2. delta_scan_kernel, one CTA per (V tile of 16*NW columns, b*h), sequential over chunks: each
//    warp owns 16 state columns S^T [16 x K] in fp32 accumulator registers. Per chunk it re-packs
//    S^T as bf16 A fragments (the FA2 trick: the m16n8 accumulator layout is the A-fragment
//    layout) and stores them (hs), computes v_new^T = u^T - S^T w^T, rounds it to bf16 A fragments
//    and stores them (vn), and S^T += v_new^T K. Only w, k and the warp's rows of u^T are staged
//    (double-buffered in shared memory with cp.async). Warps never exchange data; the only
//    barriers guard the shared-memory stages.
// 3. delta_output_kernel, one CTA per (chunk, b*h), all in parallel: each warp takes 16 value
//    columns and computes O^T = S^T q^T + v_new^T Aqk^T from the stored fragments (A operands,
//    straight from global memory into registers) and q, Aqk (B operands, staged in shared memory).
//    The same mma.sync sequence per accumulator as the fused scan that computed O inside the
//    recurrence (kept as delta_scan_kernel<K, NW, true> for kernels::testing), so the output is
//    the same bit for bit.
// Step (T == 1): delta_step_kernel, fp32 CUDA-core math, the state updated in place.
//
// hs and vn are stored in fragment order, 16 bytes per lane: for each (b*h, chunk, 16-column
// slice) K/16 (hs) or 4 (vn) k16 blocks of 32 lanes x 4 bf16x2 registers {a0, a1, a2, a3}: the
// scan writes and the output kernel reads whole 512-byte warp rows.
//
// Shared-memory rows are padded by 8 bf16 (16 bytes) so the 8 row addresses of every ldmatrix
// fall in distinct bank groups.
#include "kernels/recurrent_delta.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "data/errors.h"
#include "kernels/hopper/mma_fragments.cuh"
#include "kernels/hopper/mma_sync.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define FOXEVAL_DELTA_SM80 1
#endif

namespace foxeval {
namespace kernels {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kChunk = 64;  // tokens per chunk (fla's BT)
constexpr int kLdA = 72;    // padded row of a 64-wide bf16 tile (Aqk, inverse, u^T)

struct DeltaArgs {
  const void *q, *k, *v;  // fp32 or bf16 (one dtype for the three: the prep kernel's Tin)
  const float* beta;
  int64_t qs[3], ks[3], vs[3], bs[3];  // b, h, t strides (the last dim is contiguous)
  int H, T, V, NT;
  float scale;
  bf16* work;  // [B*H][NT][block_elems(K, V)]
  float* out;  // [B, H, T, V] contiguous
  uint4* hs;   // [B*H][NT][V/16][K/16][32 lanes]: bf16 S^T A fragments at each chunk's start
  uint4* vn;   // [B*H][NT][V/16][4][32 lanes]: bf16 v_new^T A fragments
  const float* state_in;  // null: zeros
  int64_t ss[4];
  float* state_out;  // [B, H, K, V] contiguous
};

__host__ __device__ constexpr int64_t block_elems(int K, int V) { return 3 * kChunk * K + kChunk * kChunk + V * kChunk; }

__device__ __forceinline__ float bf16_round(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(bf16 x) { return __bfloat162float(x); }

using mma_frag::a_rowmajor;
using mma_frag::a_transposed;
using mma_frag::b_from_kn;
using mma_frag::b_from_nk;
using mma_frag::pack_bf16;
using mma_frag::unpack_bf16;

// kernels/hopper/mma_fragments.cuh's wrappers over register arrays given by pointer.
// c (16x8 fp32) += a (16x16 bf16, row) * b (16x8 bf16, col).
__device__ __forceinline__ void mma_bf16(float* c, const uint32_t* a, const uint32_t* b) {
  mma_frag::mma_bf16(*reinterpret_cast<float(*)[4]>(c), *reinterpret_cast<const uint32_t(*)[4]>(a), b[0], b[1]);
}
__device__ __forceinline__ void ldsm_x4(uint32_t* r, const bf16* p) {
  mma_frag::ldsm_x4(*reinterpret_cast<uint32_t(*)[4]>(r), p);
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t* r, const bf16* p) {
  mma_frag::ldsm_x4_trans(*reinterpret_cast<uint32_t(*)[4]>(r), p);
}

__device__ __forceinline__ void cp_async16(bf16* dst, const bf16* src) {
#ifdef FOXEVAL_DELTA_SM80
  const uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#ifdef FOXEVAL_DELTA_SM80
  hopper::cp_async_commit();
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifdef FOXEVAL_DELTA_SM80
  hopper::cp_async_wait<N>();
#endif
}

// O (16 value columns x 64 tokens of a chunk, 8 m16n8 tiles) += v_new^T Aqk^T, Aqk[t][t'] = 0
// for t' > t (blocks with kk > np skipped). The output kernel and the fused (testing) scan share
// it: the same mma.sync sequence, hence the same bits.
__device__ __forceinline__ void add_vnew_aqk(float (*O)[4], const uint32_t (*va)[4], const bf16* aqk_s, int lane) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      if (kk > np) continue;
      uint32_t bb[4];
      ldsm_x4(bb, b_from_nk(aqk_s, kLdA, np * 16, kk * 16, lane));
      mma_bf16(O[2 * np], va[kk], bb);
      mma_bf16(O[2 * np + 1], va[kk], bb + 2);
    }
}

// Stores O^T (value columns vw.., tokens t0..t0+63; tokens past T skipped) into ob [T][V] fp32.
__device__ __forceinline__ void store_o(float* ob, const float (*O)[4], int t0, int vw, int T, int V, int lane) {
  const int g = lane >> 2, c = lane & 3;
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int t = t0 + nt * 8 + 2 * c + (e & 1), v = vw + g + 8 * (e >> 1);
      if (t < T) ob[static_cast<int64_t>(t) * V + v] = O[nt][e];
    }
}

// Shared memory of delta_prep_kernel, in bytes.
__host__ __device__ constexpr int prep_smem_bytes(int K, int V) {
  return (3 * kChunk * (K + 8) + kChunk * (V + 8) + kChunk * kLdA) * 2 + (kChunk * kChunk + kChunk) * 4;
}

// Tin: the dtype of q, k, v (fp32, or bf16 whose values the rounding below leaves as they are).
template <int K, typename Tin>
__global__ void __launch_bounds__(128) delta_prep_kernel(DeltaArgs a) {
#ifdef FOXEVAL_DELTA_SM80
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int LDK = K + 8;
  const int V = a.V, LDV = V + 8;
  bf16* k_s = reinterpret_cast<bf16*>(smem_raw);  // bf16(k)
  bf16* kb_s = k_s + kChunk * LDK;                // bf16(bf16(k) * beta)
  bf16* q_s = kb_s + kChunk * LDK;                // bf16(bf16(q) * scale)
  bf16* vb_s = q_s + kChunk * LDK;                // bf16(bf16(v) * beta)
  bf16* inv_s = vb_s + kChunk * LDV;              // bf16((I + A)^-1)
  float* L = reinterpret_cast<float*>(inv_s + kChunk * kLdA);  // A = tril(beta K K^T, -1), [64][64]
  float* beta_s = L + kChunk * kChunk;

  const int n = blockIdx.x, bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int t0 = n * kChunk, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int g = lane >> 2, c = lane & 3;
  if (tid < kChunk) {
    const int t = t0 + tid;
    beta_s[tid] = t < a.T ? a.beta[b * a.bs[0] + h * a.bs[1] + t * a.bs[2]] : 0.f;
  }
  __syncthreads();
  {
    const Tin* qb = static_cast<const Tin*>(a.q) + b * a.qs[0] + h * a.qs[1];
    const Tin* kb = static_cast<const Tin*>(a.k) + b * a.ks[0] + h * a.ks[1];
    const Tin* vb = static_cast<const Tin*>(a.v) + b * a.vs[0] + h * a.vs[1];
    for (int i = tid; i < kChunk * K; i += 128) {
      const int r = i / K, d = i % K, t = t0 + r;
      float kv = 0.f, qv = 0.f;
      if (t < a.T) kv = to_f32(kb[t * a.ks[2] + d]), qv = to_f32(qb[t * a.qs[2] + d]);
      const float kr = bf16_round(kv);
      k_s[r * LDK + d] = __float2bfloat16_rn(kr);
      kb_s[r * LDK + d] = __float2bfloat16_rn(kr * beta_s[r]);
      q_s[r * LDK + d] = __float2bfloat16_rn(bf16_round(qv) * a.scale);
    }
    for (int i = tid; i < kChunk * V; i += 128) {
      const int r = i / V, d = i % V, t = t0 + r;
      const float vv = t < a.T ? to_f32(vb[t * a.vs[2] + d]) : 0.f;
      vb_s[r * LDV + d] = __float2bfloat16_rn(bf16_round(vv) * beta_s[r]);
    }
  }
  __syncthreads();

  bf16* blk = a.work + (static_cast<int64_t>(bh) * a.NT + n) * block_elems(K, V);
  bf16* w_g = blk;
  bf16* k_g = blk + kChunk * K;
  bf16* q_g = blk + 2 * kChunk * K;
  bf16* aqk_g = blk + 3 * kChunk * K;
  bf16* ut_g = aqk_g + kChunk * kChunk;

  // A = (beta k) k^T and Aqk = q k^T for this warp's 16 rows; tiles right of the diagonal skipped.
  {
    const int m0 = warp * 16;
    float accA[8][4] = {}, accQ[8][4] = {};
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      uint32_t ak[4], aq[4];
      ldsm_x4(ak, a_rowmajor(kb_s, LDK, m0, kk * 16, lane));
      ldsm_x4(aq, a_rowmajor(q_s, LDK, m0, kk * 16, lane));
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        if (np > warp) break;
        uint32_t bk[4];
        ldsm_x4(bk, b_from_nk(k_s, LDK, np * 16, kk * 16, lane));
        mma_bf16(accA[2 * np], ak, bk);
        mma_bf16(accA[2 * np + 1], ak, bk + 2);
        mma_bf16(accQ[2 * np], aq, bk);
        mma_bf16(accQ[2 * np + 1], aq, bk + 2);
      }
    }
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int row = m0 + g + hf * 8, col = nt * 8 + 2 * c;
        L[row * kChunk + col] = col < row ? accA[nt][2 * hf] : 0.f;
        L[row * kChunk + col + 1] = col + 1 < row ? accA[nt][2 * hf + 1] : 0.f;
        const float s0 = col <= row ? accQ[nt][2 * hf] : 0.f, s1 = col + 1 <= row ? accQ[nt][2 * hf + 1] : 0.f;
        *reinterpret_cast<uint32_t*>(aqk_g + row * kChunk + col) = pack_bf16(s0, s1);
      }
  }
  __syncthreads();

  if (tid < kChunk) {
    // Column cl of (I + A)^-1: x_i = 0 (i < cl), x_cl = 1, x_i = -sum_{j < i} A[i][j] x_j (i > cl).
    // Fully unrolled with x in registers: the terms j < cl vanish because x_j = 0 there, so every
    // lane runs the same instructions and reads the same L element (a shared-memory broadcast).
    const int cl = tid;
    float x[kChunk];
#pragma unroll
    for (int i = 0; i < kChunk; ++i) {
      const float* Li = L + i * kChunk;
      float s = 0.f;
#pragma unroll
      for (int j = 0; j < i; ++j) s = fmaf(Li[j], x[j], s);
      x[i] = i < cl ? 0.f : (i == cl ? 1.f : -s);
    }
#pragma unroll
    for (int i = 0; i < kChunk; ++i) inv_s[i * kLdA + cl] = __float2bfloat16_rn(x[i]);
  } else {
    // Meanwhile the other two warps store the rounded q and k (16-byte chunks).
    for (int i = tid - kChunk; i < 2 * kChunk * K / 8; i += 128 - kChunk) {
      const int m = i / (kChunk * K / 8), j = i % (kChunk * K / 8), r = j / (K / 8), cc = j % (K / 8);
      const bf16* src = (m == 0 ? q_s : k_s) + r * LDK + cc * 8;
      bf16* dst = (m == 0 ? q_g : k_g) + r * K + cc * 8;
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    }
  }
  __syncthreads();

  // w = inv (beta k): this warp's 16 rows; inv is lower triangular (k16 blocks past the warp's rows are 0).
  {
    const int m0 = warp * 16;
    float acc[K / 8][4] = {};
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      if (kk > warp) break;
      uint32_t ai[4];
      ldsm_x4(ai, a_rowmajor(inv_s, kLdA, m0, kk * 16, lane));
#pragma unroll
      for (int np = 0; np < K / 16; ++np) {
        uint32_t bb[4];
        ldsm_x4_t(bb, b_from_kn(kb_s, LDK, np * 16, kk * 16, lane));
        mma_bf16(acc[2 * np], ai, bb);
        mma_bf16(acc[2 * np + 1], ai, bb + 2);
      }
    }
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int row = m0 + g + hf * 8, col = nt * 8 + 2 * c;
        *reinterpret_cast<uint32_t*>(w_g + row * K + col) = pack_bf16(acc[nt][2 * hf], acc[nt][2 * hf + 1]);
      }
  }
  // u^T = (beta v)^T inv^T: rows = value columns (16 per m tile), columns = tokens.
  for (int mt = warp; mt < V / 16; mt += 4) {
    float acc[8][4] = {};
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      uint32_t av[4];
      ldsm_x4_t(av, a_transposed(vb_s, LDV, mt * 16, kk * 16, lane));
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        if (kk > np) continue;  // inv[t][t'] = 0 for t' > t
        uint32_t bb[4];
        ldsm_x4(bb, b_from_nk(inv_s, kLdA, np * 16, kk * 16, lane));
        mma_bf16(acc[2 * np], av, bb);
        mma_bf16(acc[2 * np + 1], av, bb + 2);
      }
    }
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int row = mt * 16 + g + hf * 8, col = nt * 8 + 2 * c;
        *reinterpret_cast<uint32_t*>(ut_g + row * kChunk + col) = pack_bf16(acc[nt][2 * hf], acc[nt][2 * hf + 1]);
      }
  }
#else
  __trap();
#endif
}

// One stage of delta_scan_kernel, in bf16 elements: w and k [64 x (K + 8)], the warps' rows of
// u^T [16*NW x 72]; FUSED (the output inside the scan, tests only) adds q [64 x (K + 8)] after k
// and Aqk [64 x 72] before u^T.
template <int K, int NW, bool FUSED>
__host__ __device__ constexpr int scan_stage_elems() {
  return (FUSED ? 3 : 2) * kChunk * (K + 8) + (FUSED ? kChunk * kLdA : 0) + 16 * NW * kLdA;
}

template <int K, int NW, bool FUSED>
__host__ __device__ constexpr int scan_smem_bytes() {
  return 2 * scan_stage_elems<K, NW, FUSED>() * 2;
}

// FUSED = false: the production scan (stores hs, vn; delta_output_kernel forms the output).
// FUSED = true: the previous two-launch algorithm, O^T = S^T q^T + v_new^T Aqk^T inside the
// recurrence, written to a.out (kernels::testing::delta_rule_chunked_fused_cuda). The recurrence
// is the same code in both, so the state and v_new are the same bit for bit.
template <int K, int NW, bool FUSED>
__global__ void __launch_bounds__(NW * 32) delta_scan_kernel(DeltaArgs a) {
#ifdef FOXEVAL_DELTA_SM80
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int LDK = K + 8, BV = 16 * NW, STAGE = scan_stage_elems<K, NW, FUSED>(), CPR = K / 8;
  constexpr int KROWS = (FUSED ? 3 : 2) * kChunk;  // rows of width K staged: w, k (, q)
  constexpr int U_OFF = KROWS * LDK + (FUSED ? kChunk * kLdA : 0);
  bf16* smem = reinterpret_cast<bf16*>(smem_raw);
  const int vt = blockIdx.x, bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, c = lane & 3;
  const int V = a.V, T = a.T, NT = a.NT, vw = vt * BV + warp * 16;

  // S^T [16 value columns x K keys] of this warp: tile nt covers keys nt*8..nt*8+7; element e is
  // (v = vw + g + 8*(e>>1), key = nt*8 + 2c + (e&1)).
  float S[K / 8][4];
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = nt * 8 + 2 * c + (e & 1), v = vw + g + 8 * (e >> 1);
      S[nt][e] = a.state_in ? a.state_in[b * a.ss[0] + h * a.ss[1] + key * a.ss[2] + v * a.ss[3]] : 0.f;
    }

  const int64_t E = block_elems(K, V);
  const bf16* src0 = a.work + static_cast<int64_t>(bh) * NT * E;
  // Block [w | k | q | Aqk | u^T]: w, k (, q) are its first 128 (192) rows of width K.
  auto load_stage = [&](int n, int s) {
    const bf16* src = src0 + n * E;
    bf16* dst = smem + s * STAGE;
    for (int i = threadIdx.x; i < KROWS * CPR; i += NW * 32) {
      const int r = i / CPR, cc = i % CPR;
      cp_async16(dst + r * LDK + cc * 8, src + r * K + cc * 8);
    }
    // Braces required: nvcc 13.0 (V13.0.88) drops the statements after a discarded braceless
    // `if constexpr` body inside this lambda (the u^T copies and the commit below vanished from
    // the FUSED = false scans, which then read unloaded shared memory: NaN on the H100).
    if constexpr (FUSED) {
      for (int i = threadIdx.x; i < kChunk * 8; i += NW * 32) {
        const int r = i >> 3, cc = i & 7;
        cp_async16(dst + KROWS * LDK + r * kLdA + cc * 8, src + 3 * kChunk * K + r * kChunk + cc * 8);
      }
    }
    for (int i = threadIdx.x; i < BV * 8; i += NW * 32) {
      const int r = i >> 3, cc = i & 7;
      cp_async16(dst + U_OFF + r * kLdA + cc * 8, src + 3 * kChunk * K + kChunk * kChunk + (vt * BV + r) * kChunk + cc * 8);
    }
    cp_async_commit();
  };

  float* ob = a.out + static_cast<int64_t>(bh) * T * V;
  load_stage(0, 0);
  for (int n = 0; n < NT; ++n) {
    if (n + 1 < NT) {
      load_stage(n + 1, (n + 1) & 1);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const bf16* w_s = smem + (n & 1) * STAGE;
    const bf16* k_s = w_s + kChunk * LDK;
    const bf16* u_s = w_s + U_OFF;

    // S^T as bf16 A fragments (k16 block kk = key tiles 2kk, 2kk+1): the chunk's start state
    // as every product reads it; stored for the output kernel.
    uint32_t sa[K / 16][4];
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      sa[kk][0] = pack_bf16(S[2 * kk][0], S[2 * kk][1]);
      sa[kk][1] = pack_bf16(S[2 * kk][2], S[2 * kk][3]);
      sa[kk][2] = pack_bf16(S[2 * kk + 1][0], S[2 * kk + 1][1]);
      sa[kk][3] = pack_bf16(S[2 * kk + 1][2], S[2 * kk + 1][3]);
    }
    if constexpr (!FUSED) {
      uint4* hs_n = a.hs + ((static_cast<int64_t>(bh) * NT + n) * (V / 16) + vw / 16) * (K / 16) * 32 + lane;
#pragma unroll
      for (int kk = 0; kk < K / 16; ++kk) hs_n[kk * 32] = make_uint4(sa[kk][0], sa[kk][1], sa[kk][2], sa[kk][3]);
    }
    // P = S^T w^T (and, FUSED, O = S^T q^T): [16 value columns x 64 tokens].
    float P[8][4] = {};
    [[maybe_unused]] float O[FUSED ? 8 : 1][4] = {};
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk)
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        uint32_t bw[4];
        ldsm_x4(bw, b_from_nk(w_s, LDK, np * 16, kk * 16, lane));
        mma_bf16(P[2 * np], sa[kk], bw);
        mma_bf16(P[2 * np + 1], sa[kk], bw + 2);
        if constexpr (FUSED) {
          uint32_t bq[4];
          ldsm_x4(bq, b_from_nk(w_s + 2 * kChunk * LDK, LDK, np * 16, kk * 16, lane));
          mma_bf16(O[2 * np], sa[kk], bq);
          mma_bf16(O[2 * np + 1], sa[kk], bq + 2);
        }
      }
    // v_new^T = u^T - P, rounded to bf16 as an A operand (k16 block kk = token tiles 2kk, 2kk+1).
    uint32_t va[4][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const float2 u0 = unpack_bf16(*reinterpret_cast<const uint32_t*>(u_s + (warp * 16 + g) * kLdA + nt * 8 + 2 * c));
      const float2 u1 =
          unpack_bf16(*reinterpret_cast<const uint32_t*>(u_s + (warp * 16 + g + 8) * kLdA + nt * 8 + 2 * c));
      va[nt >> 1][(nt & 1) * 2] = pack_bf16(u0.x - P[nt][0], u0.y - P[nt][1]);
      va[nt >> 1][(nt & 1) * 2 + 1] = pack_bf16(u1.x - P[nt][2], u1.y - P[nt][3]);
    }
    if constexpr (!FUSED) {
      uint4* vn_n = a.vn + ((static_cast<int64_t>(bh) * NT + n) * (V / 16) + vw / 16) * 4 * 32 + lane;
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) vn_n[kk * 32] = make_uint4(va[kk][0], va[kk][1], va[kk][2], va[kk][3]);
    } else {
      add_vnew_aqk(O, va, w_s + KROWS * LDK, lane);  // O += v_new^T Aqk^T
      store_o(ob, O, n * kChunk, vw, T, V, lane);
    }
    // S^T += v_new^T K.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
      for (int np = 0; np < K / 16; ++np) {
        uint32_t bb[4];
        ldsm_x4_t(bb, b_from_kn(k_s, LDK, np * 16, kk * 16, lane));
        mma_bf16(S[2 * np], va[kk], bb);
        mma_bf16(S[2 * np + 1], va[kk], bb + 2);
      }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  float* so = a.state_out + static_cast<int64_t>(bh) * K * V;
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = nt * 8 + 2 * c + (e & 1), v = vw + g + 8 * (e >> 1);
      so[static_cast<int64_t>(key) * V + v] = S[nt][e];
    }
#else
  __trap();
#endif
}

// Shared memory of delta_output_kernel, in bytes: q [64 x (K + 8)], Aqk [64 x 72].
__host__ __device__ constexpr int output_smem_bytes(int K) { return (kChunk * (K + 8) + kChunk * kLdA) * 2; }

// O for one (chunk, b*h): warp w takes the 16-column slices w, w + nw, ... of V. Per slice,
// O^T [16 value columns x 64 tokens] = S^T q^T + v_new^T Aqk^T, the same mma.sync sequence per
// accumulator as the fused scan (first over K with S^T, then the causal token blocks with v_new^T).
template <int K>
__global__ void __launch_bounds__(256) delta_output_kernel(DeltaArgs a) {
#ifdef FOXEVAL_DELTA_SM80
  extern __shared__ __align__(16) unsigned char smem_raw[];
  constexpr int LDK = K + 8, CPR = K / 8;
  bf16* q_s = reinterpret_cast<bf16*>(smem_raw);
  bf16* aqk_s = q_s + kChunk * LDK;
  const int n = blockIdx.x, bh = blockIdx.y, nthr = blockDim.x, nw = nthr >> 5;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int V = a.V, T = a.T, NT = a.NT, NS = V / 16;
  const int64_t bn = static_cast<int64_t>(bh) * NT + n;

  // q and Aqk: rows 128..191 and the 64x64 block after them in [w | k | q | Aqk | u^T].
  const bf16* src = a.work + bn * block_elems(K, V) + 2 * kChunk * K;
  for (int i = threadIdx.x; i < kChunk * CPR; i += nthr) {
    const int r = i / CPR, cc = i % CPR;
    cp_async16(q_s + r * LDK + cc * 8, src + r * K + cc * 8);
  }
  for (int i = threadIdx.x; i < kChunk * 8; i += nthr) {
    const int r = i >> 3, cc = i & 7;
    cp_async16(aqk_s + r * kLdA + cc * 8, src + kChunk * K + r * kChunk + cc * 8);
  }
  cp_async_commit();

  // The first slice's A fragments go out before the wait (16 bytes per lane, whole warp rows).
  uint32_t sa[K / 16][4], va[4][4];
  auto load_frags = [&](int vs) {
    const uint4* hp = a.hs + (bn * NS + vs) * (K / 16) * 32 + lane;
    const uint4* vp = a.vn + (bn * NS + vs) * 4 * 32 + lane;
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      const uint4 x = hp[kk * 32];
      sa[kk][0] = x.x, sa[kk][1] = x.y, sa[kk][2] = x.z, sa[kk][3] = x.w;
    }
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint4 x = vp[kk * 32];
      va[kk][0] = x.x, va[kk][1] = x.y, va[kk][2] = x.z, va[kk][3] = x.w;
    }
  };
  if (warp < NS) load_frags(warp);
  cp_async_wait<0>();
  __syncthreads();

  float* ob = a.out + static_cast<int64_t>(bh) * T * V;
  for (int vs = warp; vs < NS; vs += nw) {
    if (vs != warp) load_frags(vs);
    float O[8][4] = {};
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk)
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        uint32_t bq[4];
        ldsm_x4(bq, b_from_nk(q_s, LDK, np * 16, kk * 16, lane));
        mma_bf16(O[2 * np], sa[kk], bq);
        mma_bf16(O[2 * np + 1], sa[kk], bq + 2);
      }
    add_vnew_aqk(O, va, aqk_s, lane);
    store_o(ob, O, n * kChunk, vs * 16, T, V, lane);
  }
#else
  __trap();
#endif
}

struct StepArgs {
  const float *q, *k, *v, *beta;
  int64_t qs[2], ks[2], vs[2], bs[2];  // b, h strides
  int H, V;
  float scale;
  float* state;  // updated in place
  int64_t ss[4];
  float* out;  // [B, H, 1, V] contiguous
};

// One token: a CTA per (32 value columns, b*h); thread (x, y) holds column x for keys
// y*K/8 .. y*K/8 + K/8 - 1 in registers; the two key sums go through shared memory.
template <int K>
__global__ void __launch_bounds__(256) delta_step_kernel(StepArgs a) {
  constexpr int KPT = K / 8;
  __shared__ float q_s[K], k_s[K], red[8][32], u_s[32];
  const int bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 32 + tx, v = blockIdx.x * 32 + tx;
  if (tid < K) {
    q_s[tid] = a.q[b * a.qs[0] + h * a.qs[1] + tid];
    k_s[tid] = a.k[b * a.ks[0] + h * a.ks[1] + tid];
  }
  __syncthreads();
  float* sp = a.state + b * a.ss[0] + h * a.ss[1] + v * a.ss[3];
  float s[KPT], part = 0.f;
#pragma unroll
  for (int i = 0; i < KPT; ++i) {
    const int key = ty * KPT + i;
    s[i] = sp[key * a.ss[2]];
    part = fmaf(k_s[key], s[i], part);
  }
  red[ty][tx] = part;
  __syncthreads();
  if (ty == 0) {
    float kS = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) kS += red[j][tx];
    const float beta = a.beta[b * a.bs[0] + h * a.bs[1]];
    u_s[tx] = beta * (a.v[b * a.vs[0] + h * a.vs[1] + v] - kS);
  }
  __syncthreads();
  const float u = u_s[tx];
  part = 0.f;
#pragma unroll
  for (int i = 0; i < KPT; ++i) {
    const int key = ty * KPT + i;
    s[i] = fmaf(k_s[key], u, s[i]);
    sp[key * a.ss[2]] = s[i];
    part = fmaf(q_s[key], s[i], part);
  }
  red[ty][tx] = part;
  __syncthreads();
  if (ty == 0) {
    float o = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) o += red[j][tx];
    a.out[static_cast<int64_t>(bh) * a.V + v] = a.scale * o;
  }
}

int max_dynamic_smem(int device) {
  int v = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return v;
}

void check_state(const at::Tensor& state, const at::Tensor& q, int64_t V, const char* fn) {
  if (!state.defined()) return;
  const int64_t B = q.size(0), H = q.size(1), K = q.size(3);
  if (state.dim() != 4 || state.size(0) != B || state.size(1) != H || state.size(2) != K || state.size(3) != V ||
      state.scalar_type() != at::kFloat || state.device() != q.device())
    throw Error(fmt::format("{}: state must be fp32 [{}, {}, {}, {}] on {}, got {} {} on {}", fn, B, H, K, V,
                            q.device().str(), std::string(c10::toString(state.scalar_type())),
                            c10::str(state.sizes()), state.device().str()));
}

template <typename Kernel>
void launch_with_smem(Kernel kernel, dim3 grid, dim3 block, int smem, const DeltaArgs& args) {
  C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<grid, block, smem, at::cuda::getCurrentCUDAStream()>>>(args);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// fused: the testing path (the scan forms the output; no hs/vn, no output kernel). ev: null, or 4
// events recorded before the prep, between the launches and after the last (a fused run records
// the last two together).
template <int K>
void run_chunked(const DeltaArgs& args, int64_t BH, int sm_count, bool bf16_in, bool fused, cudaEvent_t* ev) {
  const int V = args.V;
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  auto mark = [&](int i) {
    if (ev) C10_CUDA_CHECK(cudaEventRecord(ev[i], stream));
  };
  mark(0);
  if (bf16_in)
    launch_with_smem(delta_prep_kernel<K, bf16>, dim3(args.NT, BH), dim3(128), prep_smem_bytes(K, V), args);
  else
    launch_with_smem(delta_prep_kernel<K, float>, dim3(args.NT, BH), dim3(128), prep_smem_bytes(K, V), args);
  mark(1);
  if (fused) {
    launch_with_smem(delta_scan_kernel<K, 2, true>, dim3(V / 32, BH), dim3(64), scan_smem_bytes<K, 2, true>(), args);
    mark(2);
  } else {
    // 2 warps (32 value columns) per CTA unless that already gives two CTAs per SM.
    if (V % 64 == 0 && BH * (V / 32) >= 2 * sm_count)
      launch_with_smem(delta_scan_kernel<K, 4, false>, dim3(V / 64, BH), dim3(128), scan_smem_bytes<K, 4, false>(),
                       args);
    else
      launch_with_smem(delta_scan_kernel<K, 2, false>, dim3(V / 32, BH), dim3(64), scan_smem_bytes<K, 2, false>(),
                       args);
    mark(2);
    // One warp per 16 value columns, at most 8 (V = 256: two slices per warp).
    launch_with_smem(delta_output_kernel<K>, dim3(args.NT, BH), dim3(32 * std::min(V / 16, 8)), output_smem_bytes(K),
                     args);
  }
  mark(3);
}

// The largest dynamic shared memory the production path (fused = false) or the testing path needs.
int chunked_smem_need(int K, int V, bool fused) {
  const int scan = fused ? (K == 64 ? scan_smem_bytes<64, 2, true>() : scan_smem_bytes<128, 2, true>())
                         : (K == 64 ? scan_smem_bytes<64, 4, false>() : scan_smem_bytes<128, 4, false>());
  return std::max({prep_smem_bytes(K, V), scan, output_smem_bytes(K)});
}

at::Tensor chunked(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta, double scale,
                   at::Tensor& state, bool fused, cudaEvent_t* ev, const char* fn) {
  if (!delta_rule_cuda_supports(q, k, v, beta))
    throw Error(fmt::format("{}: unsupported arguments (see delta_rule_cuda_supports)", fn));
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), K = q.size(3), V = v.size(3);
  check_state(state, q, V, fn);
  const c10::cuda::CUDAGuard guard(q.device());
  if (fused && max_dynamic_smem(q.get_device()) < chunked_smem_need(static_cast<int>(K), static_cast<int>(V), true))
    throw Error(fmt::format("{}: not enough shared memory on this device for the fused scan", fn));
  const int64_t NT = (T + kChunk - 1) / kChunk;
  at::Tensor work = at::empty({B * H * NT * block_elems(static_cast<int>(K), static_cast<int>(V))},
                              q.options().dtype(at::kBFloat16));
  const auto f32 = q.options().dtype(at::kFloat);
  at::Tensor out = at::empty({B, H, T, V}, f32);
  at::Tensor state_out = at::empty({B, H, K, V}, f32);
  // hs: the bf16 state operand of every chunk [B*H, NT, V, K]; vn: bf16 v_new [B*H, NT*64, V]
  // (both in fragment order, see the top of this file).
  at::Tensor hs, vn;
  if (!fused) {
    hs = at::empty({B * H * NT * V * K}, q.options().dtype(at::kBFloat16));
    vn = at::empty({B * H * NT * kChunk * V}, q.options().dtype(at::kBFloat16));
  }
  DeltaArgs args{};
  args.q = q.data_ptr(), args.k = k.data_ptr(), args.v = v.data_ptr();
  args.beta = beta.data_ptr<float>();
  for (int i = 0; i < 3; ++i) {
    args.qs[i] = q.stride(i), args.ks[i] = k.stride(i), args.vs[i] = v.stride(i), args.bs[i] = beta.stride(i);
  }
  args.H = static_cast<int>(H), args.T = static_cast<int>(T), args.V = static_cast<int>(V);
  args.NT = static_cast<int>(NT);
  args.scale = static_cast<float>(scale);
  args.work = reinterpret_cast<bf16*>(work.data_ptr<at::BFloat16>());
  args.out = out.data_ptr<float>();
  args.hs = fused ? nullptr : reinterpret_cast<uint4*>(hs.data_ptr<at::BFloat16>());
  args.vn = fused ? nullptr : reinterpret_cast<uint4*>(vn.data_ptr<at::BFloat16>());
  args.state_in = state.defined() ? state.data_ptr<float>() : nullptr;
  if (state.defined())
    for (int i = 0; i < 4; ++i) args.ss[i] = state.stride(i);
  args.state_out = state_out.data_ptr<float>();
  const int sms = at::cuda::getDeviceProperties(q.get_device())->multiProcessorCount;
  const bool bf16_in = q.scalar_type() == at::kBFloat16;
  if (K == 64) run_chunked<64>(args, B * H, sms, bf16_in, fused, ev);
  else run_chunked<128>(args, B * H, sms, bf16_in, fused, ev);
  state = state_out;
  return out;
}

}  // namespace

bool delta_rule_cuda_supports(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta) {
  if (!q.defined() || !k.defined() || !v.defined() || !beta.defined()) return false;
  if (!q.is_cuda() || k.device() != q.device() || v.device() != q.device() || beta.device() != q.device()) return false;
  if (beta.scalar_type() != at::kFloat || (q.scalar_type() != at::kFloat && q.scalar_type() != at::kBFloat16))
    return false;
  if (k.scalar_type() != q.scalar_type() || v.scalar_type() != q.scalar_type()) return false;
  if (q.dim() != 4 || k.sizes() != q.sizes() || v.dim() != 4 || beta.dim() != 3) return false;
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), K = q.size(3), V = v.size(3);
  if (v.size(0) != B || v.size(1) != H || v.size(2) != T || beta.size(0) != B || beta.size(1) != H || beta.size(2) != T)
    return false;
  if (B * H == 0 || T == 0 || B * H > 65535) return false;
  if (K != 64 && K != 128) return false;
  if (V % 32 != 0 || V < 32 || V > 256) return false;
  if (q.stride(3) != 1 || k.stride(3) != 1 || v.stride(3) != 1) return false;
  const int device = q.get_device();
  const cudaDeviceProp* prop = at::cuda::getDeviceProperties(device);
  if (prop->major < 8) return false;
  return max_dynamic_smem(device) >= chunked_smem_need(static_cast<int>(K), static_cast<int>(V), false);
}

at::Tensor delta_rule_chunked_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   const at::Tensor& beta, double scale, at::Tensor& state) {
  return chunked(q, k, v, beta, scale, state, false, nullptr, "delta_rule_chunked_cuda");
}

namespace testing {

at::Tensor delta_rule_chunked_fused_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                         const at::Tensor& beta, double scale, at::Tensor& state) {
  return chunked(q, k, v, beta, scale, state, true, nullptr, "delta_rule_chunked_fused_cuda");
}

DeltaKernelTimes delta_rule_chunked_kernel_times(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                                 const at::Tensor& beta, double scale, at::Tensor& state, bool fused) {
  const c10::cuda::CUDAGuard guard(q.device());
  cudaEvent_t ev[4];
  for (cudaEvent_t& e : ev) C10_CUDA_CHECK(cudaEventCreate(&e));
  float ms[3] = {};
  try {
    chunked(q, k, v, beta, scale, state, fused, ev,
            fused ? "delta_rule_chunked_kernel_times (fused)" : "delta_rule_chunked_kernel_times");
    C10_CUDA_CHECK(cudaEventSynchronize(ev[3]));
    for (int i = 0; i < 3; ++i) C10_CUDA_CHECK(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
  } catch (...) {
    for (cudaEvent_t e : ev) cudaEventDestroy(e);
    throw;
  }
  for (cudaEvent_t e : ev) C10_CUDA_CHECK(cudaEventDestroy(e));
  return {1e3 * ms[0], 1e3 * ms[1], 1e3 * ms[2]};
}

}  // namespace testing

at::Tensor delta_rule_step_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& beta,
                                double scale, at::Tensor& state) {
  if (!delta_rule_cuda_supports(q, k, v, beta) || q.size(2) != 1 || q.scalar_type() != at::kFloat)
    throw Error("delta_rule_step_cuda: unsupported arguments (T must be 1, q, k, v fp32; see delta_rule_cuda_supports)");
  const int64_t B = q.size(0), H = q.size(1), K = q.size(3), V = v.size(3);
  check_state(state, q, V, "delta_rule_step_cuda");
  const c10::cuda::CUDAGuard guard(q.device());
  if (!state.defined()) state = at::zeros({B, H, K, V}, q.options());
  at::Tensor out = at::empty({B, H, 1, V}, q.options());
  StepArgs args{};
  args.q = q.data_ptr<float>(), args.k = k.data_ptr<float>(), args.v = v.data_ptr<float>();
  args.beta = beta.data_ptr<float>();
  for (int i = 0; i < 2; ++i) {
    args.qs[i] = q.stride(i), args.ks[i] = k.stride(i), args.vs[i] = v.stride(i), args.bs[i] = beta.stride(i);
  }
  args.H = static_cast<int>(H), args.V = static_cast<int>(V);
  args.scale = static_cast<float>(scale);
  args.state = state.data_ptr<float>();
  for (int i = 0; i < 4; ++i) args.ss[i] = state.stride(i);
  args.out = out.data_ptr<float>();
  const dim3 grid(V / 32, B * H), block(32, 8);
  auto stream = at::cuda::getCurrentCUDAStream();
  if (K == 64) delta_step_kernel<64><<<grid, block, 0, stream>>>(args);
  else delta_step_kernel<128><<<grid, block, 0, stream>>>(args);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace kernels
}  // namespace foxeval
