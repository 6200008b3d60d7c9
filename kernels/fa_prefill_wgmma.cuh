// Prefill Forgetting Attention on Hopper warpgroup MMA (wgmma, sm_90a).
//
// CTA = NWG warpgroups x 64 query rows; K/V blocks of BN keys are shared by the warpgroups,
// double-buffered with cp.async (every thread loads). S = Q K^T is one wgmma chain with Q and
// K from 128B-swizzled shared memory (K-major); P stays in registers (the accumulator layout
// equals the mma.sync A-fragment layout) and O += P V is a wgmma chain with A from registers
// and V as a transposed (MN-major) shared-memory operand. Softmax, gate and masks as in
// fa_prefill.cuh. Shared layout of a [rows x D] tile: [D/64][rows][64] with 128-byte rows,
// 16-byte chunk c of row r stored at c ^ (r & 7) (the hardware 128B swizzle), 1024B aligned.
#pragma once
#include "fa_common.cuh"
#include "fa_prefill.cuh"
#include "fa_wgmma.cuh"

#include <type_traits>

namespace foxeval::fa {

template <typename T, int N> struct Wg;
#define FA_WG(TY, SUF, N)                                                                                   \
  template <> struct Wg<TY, N> {                                                                            \
    static __device__ __forceinline__ void ss(float (&d)[N / 2], uint64_t a, uint64_t b, int sc) {          \
      wgmma_ss_m64n##N##_##SUF(d, a, b, sc);                                                                 \
    }                                                                                                       \
    static __device__ __forceinline__ void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b) {      \
      wgmma_rs_m64n##N##_##SUF(d, a, b, 1);                                                                  \
    }                                                                                                       \
  };
FA_WG(__nv_bfloat16, bf16, 64)
FA_WG(__nv_bfloat16, bf16, 128)
FA_WG(__half, f16, 64)
FA_WG(__half, f16, 128)
#undef FA_WG

template <int ROWS>
__device__ __forceinline__ uint32_t swz_off(int r, int ch) {
  return (ch >> 3) * (ROWS * 128) + r * 128 + (((ch & 7) ^ (r & 7)) << 4);
}

template <typename T, int D, int BN, int NWG, bool GATE>
__global__ void __launch_bounds__(NWG * 128, 1) fa_prefill_wgmma_kernel(const FaParams p) {
  constexpr int BM = NWG * 64;
  constexpr int NT = NWG * 128;
  constexpr int CH = D / 8;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t sbase = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t sQ = sbase;
  const uint32_t sK0 = sQ + BM * D * 2;
  const uint32_t sV0 = sK0 + 3 * BN * D * 2;

  const int m_block = gridDim.x - 1 - blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (p.H / p.Hkv);
  const int tid = threadIdx.x, wg = tid >> 7, warp_in_wg = (tid >> 5) & 3, lane = tid & 31;
  const int Tq = p.Tq, Tk = p.Tk, off = Tk - Tq;
  const int q0 = m_block * BM;

  const T* qg = reinterpret_cast<const T*>(p.q) + b * p.q_sb + h * p.q_sh + (int64_t)q0 * p.q_st;
  const T* kg = reinterpret_cast<const T*>(p.k) + b * p.k_sb + hk * p.k_sh;
  const T* vg = reinterpret_cast<const T*>(p.v) + b * p.v_sb + hk * p.v_sh;
  const float* cg = GATE ? p.c + b * p.c_sb + h * p.c_sh : nullptr;

  const KeyBlocks blocks = key_block_range<BM, BN, GATE>(p, b, h, q0, cg);
  const int ss = blocks.seq_start, n_end = blocks.end, n_begin = blocks.begin;

  auto load_tile = [&](uint32_t base, auto rows_c, const T* g, int64_t stride, int nvalid) {
    constexpr int ROWS = decltype(rows_c)::value;
#pragma unroll
    for (int i = 0; i < (ROWS * CH + NT - 1) / NT; ++i) {
      const int idx = tid + i * NT;
      if ((ROWS * CH) % NT != 0 && idx >= ROWS * CH) break;
      const int r = idx / CH, ch = idx % CH;
      const bool ok = r < nvalid;
      const T* src = ok ? g + (int64_t)r * stride + ch * 8 : g;
      cp_async16(base + swz_off<ROWS>(r, ch), src, ok ? 16 : 0);
    }
  };
  using RowsM = std::integral_constant<int, BM>;
  using RowsN = std::integral_constant<int, BN>;

  // Three K/V stages: iteration `it` reads K of block it and V of block it-1 while block it+1
  // streams in. Blocks are visited from the diagonal backwards: block index n_end-1-it.
  const int nblk = n_end - n_begin;
  auto stage_k = [&](int it) { return sK0 + (it % 3) * BN * D * 2; };
  auto stage_v = [&](int it) { return sV0 + (it % 3) * BN * D * 2; };
  auto load_kv = [&](int it) {
    const int kb = (n_end - 1 - it) * BN;
    load_tile(stage_k(it), RowsN{}, kg + (int64_t)kb * p.k_st, p.k_st, Tk - kb);
    load_tile(stage_v(it), RowsN{}, vg + (int64_t)kb * p.v_st, p.v_st, Tk - kb);
  };

  load_tile(sQ, RowsM{}, qg, p.q_st, Tq - q0);
  if (nblk > 0) load_kv(0);
  cp_async_commit();

  const int g = lane >> 2, tq = lane & 3;
  const int row0 = wg * 64 + warp_in_wg * 16 + g;  // this thread's rows: row0, row0 + 8
  const int pos0 = off + q0 + row0, pos1 = pos0 + 8;
  float ci0 = 0.f, ci1 = 0.f;
  if (GATE) {
    ci0 = cg[(int64_t)min(pos0, Tk - 1) * p.c_st] * kLog2e;
    ci1 = cg[(int64_t)min(pos1, Tk - 1) * p.c_st] * kLog2e;
  }
  const float sl2 = p.scale_log2;

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;
  float s[BN / 2];
  uint32_t pf[BN / 16][4];

  auto issue_s = [&](int it) {
    const uint32_t sK = stage_k(it);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint32_t koff = (kk & 3) << 5;
      const uint64_t da = gmma_desc(sQ + (kk >> 2) * (BM * 128) + wg * 64 * 128 + koff, 16, 1024);
      const uint64_t db = gmma_desc(sK + (kk >> 2) * (BN * 128) + koff, 16, 1024);
      Wg<T, BN>::ss(s, da, db, kk > 0 ? 1 : 0);
    }
  };
  auto issue_pv = [&](int it) {
    const uint32_t sV = stage_v(it);
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      // MN-major operand: LBO = stride between 64-wide d blocks, SBO = stride between 8-key groups.
      const uint64_t dv = gmma_desc(sV + kk * 16 * 128, BN * 128, 1024);
      Wg<T, D>::rs(o, pf[kk], dv);
    }
  };
  // Bias, mask and online softmax of s (block `it`) in place: s becomes probabilities.
  auto softmax = [&](int it, float& sc0, float& sc1) {
    const int kb0 = (n_end - 1 - it) * BN;
    float cj[BN / 8][2];
    if (GATE) {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = kb0 + j * 8 + 2 * tq;
        cj[j][0] = cg[(int64_t)min(col, Tk - 1) * p.c_st] * kLog2e;
        cj[j][1] = cg[(int64_t)min(col + 1, Tk - 1) * p.c_st] * kLog2e;
      }
    }
    const bool need_mask = (kb0 + BN - 1 > off + q0) || (kb0 < ss) || (kb0 + BN > Tk);
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        float a = s[4 * j + e] * sl2, c2 = s[4 * j + 2 + e] * sl2;
        if (GATE) {
          a += ci0 - cj[j][e];
          c2 += ci1 - cj[j][e];
        }
        if (need_mask) {
          const int col = kb0 + j * 8 + 2 * tq + e;
          const bool bad = col < ss || col >= Tk;
          if (bad || col > pos0) a = -INFINITY;
          if (bad || col > pos1) c2 = -INFINITY;
        }
        s[4 * j + e] = a;
        s[4 * j + 2 + e] = c2;
      }
    }
    float mx0 = m0, mx1 = m1;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      mx0 = fmaxf(mx0, fmaxf(s[4 * j], s[4 * j + 1]));
      mx1 = fmaxf(mx1, fmaxf(s[4 * j + 2], s[4 * j + 3]));
    }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffff, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffff, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffff, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffff, mx1, 2));
    const float mu0 = mx0 == -INFINITY ? 0.f : mx0;
    const float mu1 = mx1 == -INFINITY ? 0.f : mx1;
    sc0 = fast_exp2(m0 - mu0);
    sc1 = fast_exp2(m1 - mu1);
    m0 = mx0;
    m1 = mx1;
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      s[4 * j] = fast_exp2(s[4 * j] - mu0);
      s[4 * j + 1] = fast_exp2(s[4 * j + 1] - mu0);
      s[4 * j + 2] = fast_exp2(s[4 * j + 2] - mu1);
      s[4 * j + 3] = fast_exp2(s[4 * j + 3] - mu1);
      rs0 += s[4 * j] + s[4 * j + 1];
      rs1 += s[4 * j + 2] + s[4 * j + 3];
    }
    l0 = l0 * sc0 + rs0;
    l1 = l1 * sc1 + rs1;
  };
  auto rescale_pack = [&](float sc0, float sc1) {
#pragma unroll
    for (int i = 0; i < D / 8; ++i) {
      o[4 * i] *= sc0;
      o[4 * i + 1] *= sc0;
      o[4 * i + 2] *= sc1;
      o[4 * i + 3] *= sc1;
    }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      pf[j >> 1][(j & 1) * 2 + 0] = TypeTraits<T>::pack(s[4 * j], s[4 * j + 1]);
      pf[j >> 1][(j & 1) * 2 + 1] = TypeTraits<T>::pack(s[4 * j + 2], s[4 * j + 3]);
    }
  };

  if (nblk > 0) {
    cp_async_wait<0>();
    fence_proxy_async();  // cp.async (generic proxy) writes -> wgmma (async proxy) reads
    __syncthreads();
    if (nblk > 1) load_kv(1);
    cp_async_commit();
    wgmma_fence();
    issue_s(0);
    wgmma_commit();
    wgmma_wait<0>();
    float sc0, sc1;
    softmax(0, sc0, sc1);
    rescale_pack(sc0, sc1);
  }
  for (int it = 1; it < nblk; ++it) {
    cp_async_wait<0>();  // block it landed (issued one iteration ago)
    fence_proxy_async();
    __syncthreads();     // ... for every thread; and every warpgroup is done with iteration it-1
    if (it + 1 < nblk) load_kv(it + 1);  // into the stage of block it-2
    cp_async_commit();
    wgmma_fence();
    issue_s(it);         // S_it = Q K_it^T
    wgmma_commit();
    issue_pv(it - 1);    // O += P_{it-1} V_{it-1}, runs while the softmax of S_it is computed
    wgmma_commit();
    wgmma_wait<1>();
    float sc0, sc1;
    softmax(it, sc0, sc1);
    wgmma_wait<0>();
    rescale_pack(sc0, sc1);
  }
  if (nblk > 0) {
    wgmma_fence();
    issue_pv(nblk - 1);
    wgmma_commit();
    wgmma_wait<0>();
  }

  cp_async_wait<0>();  // nothing in flight at exit
  l0 += __shfl_xor_sync(0xffffffff, l0, 1);
  l0 += __shfl_xor_sync(0xffffffff, l0, 2);
  l1 += __shfl_xor_sync(0xffffffff, l1, 1);
  l1 += __shfl_xor_sync(0xffffffff, l1, 2);
  const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
  T* og = reinterpret_cast<T*>(p.o) + ((int64_t)(b * p.H + h) * Tq) * D;
  const int qi0 = q0 + row0, qi1 = qi0 + 8;
#pragma unroll
  for (int i = 0; i < D / 8; ++i) {
    const int col = i * 8 + 2 * tq;
    if (qi0 < Tq)
      *reinterpret_cast<uint32_t*>(og + (int64_t)qi0 * D + col) = TypeTraits<T>::pack(o[4 * i] * inv0, o[4 * i + 1] * inv0);
    if (qi1 < Tq)
      *reinterpret_cast<uint32_t*>(og + (int64_t)qi1 * D + col) = TypeTraits<T>::pack(o[4 * i + 2] * inv1, o[4 * i + 3] * inv1);
  }
}

}  // namespace foxeval::fa
