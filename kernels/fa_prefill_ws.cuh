// Prefill Forgetting Attention on Hopper, warp-specialized (FlashAttention-3 layout, sm_90a).
//
// A CTA has NCWG consumer warpgroups (64 query rows each, BM = 64 NCWG) and one producer
// warpgroup that gives its registers to the consumers (setmaxnreg: 24 per producer thread,
// 240 (NCWG = 2) or 160 (NCWG = 3) per consumer thread; head dim 128 needs the 240). The
// producer's elected lane streams Q once and then K, V and the block's gate values through
// STAGES-deep rings with the bulk-copy engine (TMA for the 128B-swizzled K/V tiles, a plain
// bulk copy for the fp32 gate values), each slot guarded by a "full" transaction barrier that
// the copies count down and an "empty" barrier that all consumer threads arrive at once they
// are done with the slot. So the consumers never compute an address or wait at a CTA-wide
// barrier; they only issue wgmma and do the softmax.
//
// Consumers, per key block j (from the diagonal backwards): S_j = Q K_j^T is issued together
// with O += P_{j-1} V_{j-1} (both async wgmma); the softmax of S_j runs while the PV product is
// in flight. With PINGPONG the warpgroups take turns to issue their products (named barriers in
// a ring), so one warpgroup's softmax overlaps the others' products.
// Shared layout of a [rows x D] tile: [D/64][rows][64] with 128-byte rows, 16-byte chunk c of
// row r at c ^ (r & 7): the hardware 128B swizzle, which is what TMA writes with
// CU_TENSOR_MAP_SWIZZLE_128B into 1024-byte aligned tiles and what the wgmma descriptors read.
// S = Q K^T reads Q and K K-major; P stays in registers (the wgmma accumulator layout is the
// A-fragment layout); O += P V reads V as an MN-major (transposed) operand.
//
// Gate: the gate values arrive pre-multiplied by log2(e) (cpad, [B*H, tpad] fp32). The bias
// c_i - c_j is split around c_r = c of the block's first key: the column term n_j = c_r - c_j
// is folded into the score with one FMA, the row term r_i = c_i - c_r into the row maximum, so
// the gate costs one FMA per score. Each term is rounded at the magnitude of a bias, never at
// the magnitude of c itself (which reaches -1e4 at long context).
//
// The loop is limited by instruction issue, so each FP32 instruction per score counts (~7% each
// at head dim 64, kernels/NOTES.md). Without the gate, the maxima are taken over the raw scores
// and the scale enters the exponent's FMA (FlashAttention-3's softmax). With it (head dim 64), a
// block's probabilities are first taken in the running maxima's frame without this block's
// maxima (the optimistic softmax), checked by their row sums, and computed exactly only where a
// block raised the maxima.
#pragma once
#include "fa_common.cuh"
#include "fa_prefill.cuh"
#include "fa_tma.cuh"
#include "fa_wgmma.cuh"

#include <cuda.h>

namespace foxeval::fa {

template <typename T, int N> struct WgOp;
#define FA_WGOP(TY, SUF, N)                                                                                 \
  template <> struct WgOp<TY, N> {                                                                          \
    static __device__ __forceinline__ void ss(float (&d)[N / 2], uint64_t a, uint64_t b, int sc) {          \
      wgmma_ss_m64n##N##_##SUF(d, a, b, sc);                                                                 \
    }                                                                                                       \
    static __device__ __forceinline__ void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b) {      \
      wgmma_rs_m64n##N##_##SUF(d, a, b, 1);                                                                  \
    }                                                                                                       \
  };
FA_WGOP(__nv_bfloat16, bf16, 64)
FA_WGOP(__nv_bfloat16, bf16, 128)
FA_WGOP(__half, f16, 64)
FA_WGOP(__half, f16, 128)
#undef FA_WGOP

// NCWG consumer warpgroups of 64 query rows each, one producer warpgroup.
// Lazy rescaling threshold (log2 units): probabilities stay below 2^8 = 256 (see softmax).
constexpr float kLazyRescale = 8.f;
// The optimistic softmax's bound on a thread's row sum of probabilities (so on each of them):
// 2^15, below fp16's largest value.
constexpr float kOptimisticMax = 32768.f;

template <int NCWG> struct WsLayout {
  static constexpr int kConsumerThreads = NCWG * 128;
  static constexpr int kThreads = kConsumerThreads + 128;
  static constexpr int kBM = NCWG * 64;
  static constexpr int kProducerRegs = 24;
  // What the consumers may take of the 64K registers (a multiple of 8, at most 240).
  static constexpr int kConsumerRegs = ((65536 - 128 * kProducerRegs) / kConsumerThreads) / 8 * 8 > 240
                                           ? 240
                                           : ((65536 - 128 * kProducerRegs) / kConsumerThreads) / 8 * 8;
};

template <int N> __device__ __forceinline__ void regs_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N)); }
template <int N> __device__ __forceinline__ void regs_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N)); }

template <int D, int BN, int STAGES, int NCWG>
constexpr int ws_smem_bytes() {
  return 1024 + WsLayout<NCWG>::kBM * D * 2 + 2 * STAGES * BN * D * 2 + STAGES * BN * 4 + 8 * (1 + 4 * STAGES);
}

// Named barriers 1..NCWG order the consumer warpgroups' MMA issue in a ring (PINGPONG): while
// one warpgroup does its softmax, the next one's products run on the tensor cores.
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Whether pred holds for any thread of the calling warpgroup (its 128 threads meet at named
// barrier id: kVoteBarrier + warpgroup, after the ping-pong ring's 1..NCWG).
constexpr int kVoteBarrier = 4;
__device__ __forceinline__ bool warpgroup_any(bool pred, int id) {
  uint32_t r;
  asm volatile(
      "{\n .reg .pred p, q;\n setp.ne.u32 p, %1, 0;\n bar.red.or.pred q, %2, 128, p;\n selp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(r)
      : "r"((uint32_t)pred), "r"(id)
      : "memory");
  return r != 0;
}

template <typename T, int D, int BN, int STAGES, int NCWG, bool PINGPONG, bool GATE>
__global__ void __launch_bounds__(WsLayout<NCWG>::kThreads, 1)
    fa_prefill_ws_kernel(const FaParams p, const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                         const __grid_constant__ CUtensorMap tm_v, const float* __restrict__ cpad, int tpad, int group) {
  using L = WsLayout<NCWG>;
  constexpr int BM = L::kBM;
  constexpr int TILE = BN * D * 2;  // bytes of one K or V tile
  extern __shared__ unsigned char smem_raw[];
  const uint32_t sraw = smem_u32(smem_raw);
  const uint32_t sQ = (sraw + 1023) & ~1023u;
  const uint32_t sK0 = sQ + BM * D * 2;
  const uint32_t sV0 = sK0 + STAGES * TILE;
  const uint32_t sC0 = sV0 + STAGES * TILE;
  const uint32_t bar_q = sC0 + STAGES * BN * 4;
  auto full_k = [&](int s) { return bar_q + 8 * (1 + s); };
  auto full_v = [&](int s) { return bar_q + 8 * (1 + STAGES + s); };
  auto empty_k = [&](int s) { return bar_q + 8 * (1 + 2 * STAGES + s); };
  auto empty_v = [&](int s) { return bar_q + 8 * (1 + 3 * STAGES + s); };

  // Launch order (blocks start in blockIdx order): (b, h) pairs in groups of `group`, and
  // within a group the longest query blocks first, heads fastest. A group's K/V is sized to
  // stay in L2 while its CTAs run; longest-first inside it keeps the tail short.
  const int n_m = (p.Tq + BM - 1) / BM, n_bh = p.B * p.H;
  const int grp = blockIdx.x / (group * n_m);
  const int gsize = min(group, n_bh - grp * group);
  const int r = blockIdx.x - grp * group * n_m;
  const int m_block = n_m - 1 - r / gsize;
  const int bh = grp * group + r % gsize;
  const int b = bh / p.H, h = bh % p.H;
  const int hk = h / (p.H / p.Hkv);
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int Tq = p.Tq, Tk = p.Tk, off = Tk - Tq;
  const int q0 = m_block * BM;
  const float* cg = GATE ? p.c + b * p.c_sb + h * p.c_sh : nullptr;
  const float* cb = GATE ? cpad + (int64_t)(b * p.H + h) * tpad : nullptr;
  const KeyBlocks blocks = key_block_range<BM, BN, GATE>(p, b, h, q0, cg);
  const int ss = blocks.seq_start, n_end = blocks.end, n_begin = blocks.begin;
  const int nblk = n_end - n_begin;
  count_key_blocks<BN>(p, blocks);

  if (threadIdx.x == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full_k(s), 1);
      mbar_init(full_v(s), 1);
      mbar_init(empty_k(s), L::kConsumerThreads);
      mbar_init(empty_v(s), L::kConsumerThreads);
    }
    mbar_fence_init();
  }
  __syncthreads();  // the only CTA-wide barrier

  if (warp >= L::kConsumerThreads / 32) {  // producer warpgroup
    regs_dec<L::kProducerRegs>();
    if (warp == L::kConsumerThreads / 32 && lane == 0 && nblk > 0) {
      mbar_expect_tx(bar_q, BM * D * 2);
      for (int d0 = 0; d0 < D / 64; ++d0) tma_load_4d(sQ + d0 * BM * 128, &tm_q, bar_q, d0 * 64, q0, h, b);
      for (int it = 0; it < nblk; ++it) {
        const int st = it % STAGES;
        const uint32_t reuse_parity = ((it / STAGES) + 1) & 1;  // the previous use's phase
        const int kb = (n_end - 1 - it) * BN;
        if (it >= STAGES) mbar_wait(empty_k(st), reuse_parity);
        mbar_expect_tx(full_k(st), TILE + (GATE ? BN * 4 : 0));
        for (int d0 = 0; d0 < D / 64; ++d0) tma_load_4d(sK0 + st * TILE + d0 * BN * 128, &tm_k, full_k(st), d0 * 64, kb, hk, b);
        if (GATE) bulk_load(sC0 + st * BN * 4, cb + kb, BN * 4, full_k(st));
        if (it >= STAGES) mbar_wait(empty_v(st), reuse_parity);
        mbar_expect_tx(full_v(st), TILE);
        for (int d0 = 0; d0 < D / 64; ++d0) tma_load_4d(sV0 + st * TILE + d0 * BN * 128, &tm_v, full_v(st), d0 * 64, kb, hk, b);
      }
    }
    return;
  }

  // ---- consumers ----
  regs_inc<L::kConsumerRegs>();
  const int wg = warp >> 2, wi = warp & 3, g = lane >> 2, tq = lane & 3;
  const int row0 = wg * 64 + wi * 16 + g;  // this thread's rows: row0, row0 + 8
  const int pos0 = off + q0 + row0, pos1 = pos0 + 8;
  const float ci0 = GATE ? cb[min(pos0, Tk - 1)] : 0.f;
  const float ci1 = GATE ? cb[min(pos1, Tk - 1)] : 0.f;
  const float sl2 = p.scale_log2;
  const float* sC_gen = reinterpret_cast<const float*>(smem_raw + (sC0 - sraw));

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;  // running max (log2, true frame), sum
  bool resc = true;  // does this block rescale O (warp-uniform, see softmax)
  float s[BN / 2];
  uint32_t pf[BN / 16][4];

  // Descriptors: built once, then advanced by byte offsets added to their 14-bit
  // address field (every operand lies below 256 KB of shared memory, so no carry leaves it). The
  // warpgroup index goes through a shuffle so the compiler knows it is warp-uniform and keeps
  // the descriptors in uniform registers.
  const int wgu = __shfl_sync(0xffffffff, wg, 0);
  const uint64_t dq0 = gmma_desc(sQ + wgu * 64 * 128, 16, 1024);
  const uint64_t dk0 = gmma_desc(sK0, 16, 1024);
  // V is an MN-major operand: LBO = stride between 64-wide d blocks, SBO = between 8-key groups.
  const uint64_t dv0 = gmma_desc(sV0, BN * 128, 1024);
  auto desc_at = [](uint64_t d, uint32_t bytes) {
    return (d & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)d + (bytes >> 4));
  };
  auto issue_s = [&](int st) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint32_t koff = (kk & 3) << 5;  // 16 columns = 32 bytes within a 64-column block
      WgOp<T, BN>::ss(s, desc_at(dq0, (kk >> 2) * (BM * 128) + koff), desc_at(dk0, st * TILE + (kk >> 2) * (BN * 128) + koff),
                      kk > 0 ? 1 : 0);
    }
  };
  auto issue_pv = [&](int st) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) WgOp<T, D>::rs(o, pf[kk], desc_at(dv0, st * TILE + kk * 16 * 128));
  };
  // The optimistic softmax (below): gated, head dim 64. At head dim 128 (two warpgroups, no
  // ping-pong) it measured slower: 1.88 -> 2.21 ms at 16k x 16 heads, same call.
  constexpr bool OPT = GATE && D == 64;
  // It runs once every row of the warpgroup has a running maximum.
  bool frames = false;
  // Scores of block `it` (slot st) -> probabilities in place; sc = rescale factor for O.
  auto softmax = [&](int it, int st, float& sc0, float& sc1) {
    const int kb0 = (n_end - 1 - it) * BN;
    const float* sc = sC_gen + st * BN;
    const float cr = GATE ? sc[0] : 0.f;  // c of the block's first key
    const float r0 = GATE ? ci0 - cr : 0.f, r1 = GATE ? ci1 - cr : 0.f;
    const bool need_mask = (kb0 + BN - 1 > off + q0) || (kb0 < ss) || (kb0 + BN > Tk);
    // Scores to the log2 domain with the gate's column term (GATE; without it the scale is
    // folded into the exponent below), masked.
    auto bias_mask = [&]() {
      if (GATE) {
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          const float2 cj = *reinterpret_cast<const float2*>(sc + j * 8 + 2 * tq);
          const float n0 = cr - cj.x, n1 = cr - cj.y;
          s[4 * j] = fmaf(s[4 * j], sl2, n0);
          s[4 * j + 1] = fmaf(s[4 * j + 1], sl2, n1);
          s[4 * j + 2] = fmaf(s[4 * j + 2], sl2, n0);
          s[4 * j + 3] = fmaf(s[4 * j + 3], sl2, n1);
        }
      }
      if (need_mask) {
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int col = kb0 + j * 8 + 2 * tq + e;
            const bool bad = col < ss || col >= Tk;
            if (bad || col > pos0) s[4 * j + e] = -INFINITY;
            if (bad || col > pos1) s[4 * j + 2 + e] = -INFINITY;
          }
        }
      }
    };
    // Gated scores -> exp2(t - mu) in place, and this thread's row sums.
    auto exp_gated = [&](float mu0, float mu1, float& rs0, float& rs1) {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        s[4 * j] = fast_exp2(s[4 * j] - mu0);
        s[4 * j + 1] = fast_exp2(s[4 * j + 1] - mu0);
        s[4 * j + 2] = fast_exp2(s[4 * j + 2] - mu1);
        s[4 * j + 3] = fast_exp2(s[4 * j + 3] - mu1);
        rs0 += s[4 * j] + s[4 * j + 1];
        rs1 += s[4 * j + 2] + s[4 * j + 3];
      }
    };
    bias_mask();
    if (OPT && frames) {
      // Optimistic: the running maxima stand (going back from the diagonal, older keys rarely
      // raise them), so the probabilities come without this block's maxima. Checked after the
      // fact: every thread's row sums must stay at or below kOptimisticMax, which bounds each
      // probability (for fp16 P too). Where one does not (or is inf or NaN), the warpgroup computes
      // S again (the K slot is still held) and takes the exact path below.
      float rs0 = 0.f, rs1 = 0.f;
      exp_gated(m0 - r0, m1 - r1, rs0, rs1);
      if (!warpgroup_any(!(rs0 <= kOptimisticMax) || !(rs1 <= kOptimisticMax), kVoteBarrier + wg)) {
        resc = false;
        sc0 = sc1 = 1.f;
        l0 += rs0;
        l1 += rs1;
        return;
      }
      wgmma_fence();
      issue_s(st);
      wgmma_commit();
      wgmma_wait<0>();
      bias_mask();
    }
    // Row maxima as trees: log2(BN/8) dependent steps instead of BN/8 (max is exact in any order).
    float a[BN / 8], b[BN / 8];
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      a[j] = fmaxf(s[4 * j], s[4 * j + 1]);
      b[j] = fmaxf(s[4 * j + 2], s[4 * j + 3]);
    }
#pragma unroll
    for (int step = 1; step < BN / 8; step *= 2) {  // a fixed trip count, so it unrolls
#pragma unroll
      for (int j = 0; j + step < BN / 8; j += 2 * step) {
        a[j] = fmaxf(a[j], a[j + step]);
        b[j] = fmaxf(b[j], b[j + step]);
      }
    }
    float mx0 = a[0], mx1 = b[0];
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffff, mx0, 1));  // the 4 lanes of a row
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffff, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffff, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffff, mx1, 2));
    if (!GATE) {  // raw maxima: scaling by sl2 > 0 commutes with max, exactly
      mx0 *= sl2;
      mx1 *= sl2;
    }
    // Lazy rescaling: the running max m (true frame) moves only when this block's maximum exceeds
    // it by more than kLazyRescale (log2 units), so probabilities stay below 2^kLazyRescale (exact
    // in fp32, bf16 and fp16) and O is rescaled in few blocks: going back from the diagonal, older
    // keys rarely raise the maximum. Whether to rescale is decided per warp, so the skip is a
    // uniform branch. m is -inf while every key so far is masked.
    const float b0 = mx0 + r0, b1 = mx1 + r1;
    const bool up0 = b0 > m0 + kLazyRescale, up1 = b1 > m1 + kLazyRescale;
    resc = __any_sync(0xffffffff, up0 || up1);
    sc0 = up0 ? fast_exp2(m0 - b0) : 1.f;  // m0 = -inf: 0, and O and l are still 0
    sc1 = up1 ? fast_exp2(m1 - b1) : 1.f;
    if (up0) m0 = b0;
    if (up1) m1 = b1;
    const float mu0 = m0 == -INFINITY ? 0.f : m0 - r0;  // subtrahend in this block's frame
    const float mu1 = m1 == -INFINITY ? 0.f : m1 - r1;
    float rs0 = 0.f, rs1 = 0.f;
    if (GATE) {
      exp_gated(mu0, mu1, rs0, rs1);
    } else {  // the scale and the maximum in one FMA (FlashAttention-3's softmax)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        s[4 * j] = fast_exp2(fmaf(s[4 * j], sl2, -mu0));
        s[4 * j + 1] = fast_exp2(fmaf(s[4 * j + 1], sl2, -mu0));
        s[4 * j + 2] = fast_exp2(fmaf(s[4 * j + 2], sl2, -mu1));
        s[4 * j + 3] = fast_exp2(fmaf(s[4 * j + 3], sl2, -mu1));
        rs0 += s[4 * j] + s[4 * j + 1];
        rs1 += s[4 * j + 2] + s[4 * j + 3];
      }
    }
    l0 = (resc ? l0 * sc0 : l0) + rs0;
    l1 = (resc ? l1 * sc1 : l1) + rs1;
    if (OPT && !frames) frames = !warpgroup_any(m0 == -INFINITY || m1 == -INFINITY, kVoteBarrier + wg);
  };
  auto rescale_pack = [&](float sc0, float sc1) {
    if (resc) {
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
        o[4 * i] *= sc0;
        o[4 * i + 1] *= sc0;
        o[4 * i + 2] *= sc1;
        o[4 * i + 3] *= sc1;
      }
    }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      pf[j >> 1][(j & 1) * 2 + 0] = TypeTraits<T>::pack(s[4 * j], s[4 * j + 1]);
      pf[j >> 1][(j & 1) * 2 + 1] = TypeTraits<T>::pack(s[4 * j + 2], s[4 * j + 3]);
    }
  };

  // Ping-pong: the last warpgroup opens the ring for the first (and skips its own last signal,
  // so that every arrival is matched).
  if (PINGPONG && nblk > 1 && wg == NCWG - 1) named_bar_arrive(1, 256);
  if (nblk > 0) {
    mbar_wait(bar_q, 0);
    mbar_wait(full_k(0), 0);
    wgmma_fence();
    issue_s(0);
    wgmma_commit();
    wgmma_wait<0>();
    float sc0, sc1;
    softmax(0, 0, sc0, sc1);
    mbar_arrive(empty_k(0));
    rescale_pack(sc0, sc1);
  }
  for (int it = 1; it < nblk; ++it) {
    const int st = it % STAGES, pst = (it - 1) % STAGES;
    mbar_wait(full_k(st), (it / STAGES) & 1);
    mbar_wait(full_v(pst), ((it - 1) / STAGES) & 1);  // issued before K_it: already there
    if (PINGPONG) named_bar_sync(1 + wg, 256);  // my turn on the tensor cores
    wgmma_fence();
    issue_s(st);  // S_it = Q K_it^T
    wgmma_commit();
    issue_pv(pst);  // O += P_{it-1} V_{it-1}, runs during the softmax of S_it
    wgmma_commit();
    if (PINGPONG && !(wg == NCWG - 1 && it == nblk - 1)) named_bar_arrive(1 + (wg + 1) % NCWG, 256);  // next one's turn
    wgmma_wait<1>();
    float sc0, sc1;
    softmax(it, st, sc0, sc1);
    mbar_arrive(empty_k(st));  // K and the gate values of slot st are consumed
    wgmma_wait<0>();
    mbar_arrive(empty_v(pst));
    rescale_pack(sc0, sc1);
  }
  if (nblk > 0) {
    const int st = (nblk - 1) % STAGES;
    mbar_wait(full_v(st), ((nblk - 1) / STAGES) & 1);
    wgmma_fence();
    issue_pv(st);
    wgmma_commit();
    wgmma_wait<0>();
  }

  l0 += __shfl_xor_sync(0xffffffff, l0, 1);
  l0 += __shfl_xor_sync(0xffffffff, l0, 2);
  l1 += __shfl_xor_sync(0xffffffff, l1, 1);
  l1 += __shfl_xor_sync(0xffffffff, l1, 2);
  const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
  T* og = reinterpret_cast<T*>(p.o) + b * p.o_sb + h * p.o_sh;
  const int qi0 = q0 + row0, qi1 = qi0 + 8;
#pragma unroll
  for (int i = 0; i < D / 8; ++i) {
    const int col = i * 8 + 2 * tq;
    if (qi0 < Tq)
      *reinterpret_cast<uint32_t*>(og + (int64_t)qi0 * p.o_st + col) = TypeTraits<T>::pack(o[4 * i] * inv0, o[4 * i + 1] * inv0);
    if (qi1 < Tq)
      *reinterpret_cast<uint32_t*>(og + (int64_t)qi1 * p.o_st + col) = TypeTraits<T>::pack(o[4 * i + 2] * inv1, o[4 * i + 3] * inv1);
  }
}

}  // namespace foxeval::fa
