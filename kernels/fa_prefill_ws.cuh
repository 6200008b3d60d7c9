// Prefill Forgetting Attention on Hopper, warp-specialized (FlashAttention-3 layout, sm_90a).
//
// A CTA has NCWG consumer warpgroups (64 query rows each, BM = 64 NCWG) and one producer
// warpgroup that gives its registers to the consumers (setmaxnreg: 24 per producer thread,
// 240 (NCWG = 2) or 160 (NCWG = 3) per consumer thread; head dim 128 needs the 240). The
// producer's elected lane streams each tile's Q once and then K, V and the block's gate values
// through STAGES-deep rings with the bulk-copy engine (TMA for the 128B-swizzled K/V tiles, a plain
// bulk copy for the fp32 gate values), each slot guarded by a "full" transaction barrier that
// the copies count down and an "empty" barrier that all consumer threads arrive at once they
// are done with the slot. So the consumers never compute an address or wait at a CTA-wide
// barrier; they only issue wgmma and do the softmax.
//
// Consumers, per key block j (from the diagonal backwards): S_j = Q K_j^T is issued together
// with O += P_{j-1} V_{j-1} (both async wgmma); the softmax of S_j runs while the PV product is
// in flight. With PINGPONG the warpgroups take turns to issue their products (named barriers in
// a ring), so one warpgroup's softmax overlaps the others' products.
// Persistent: the grid has one CTA per SM (or fewer) and each CTA walks query tiles from a
// queue: its first tile is blockIdx.x, the next ones come from an atomic counter (dynamic, so
// the longest-first order still balances the SMs). The producer takes the next tile as soon as
// it has issued the last loads of the current one and passes its index to the consumers through
// a two-slot ring in shared memory; the K/V ring runs on across tiles, and Q has two buffers
// where shared memory allows (head dim 64), so the next tile's Q and first key blocks load while
// the consumers finish the current one (its last blocks and the output), instead of a new CTA
// waiting for them. A tile's result does not depend on which CTA takes it: same bits in any
// schedule.
// Shared layout of a [rows x D] tile: [D/64][rows][64] with 128-byte rows, 16-byte chunk c of
// row r at c ^ (r & 7): the hardware 128B swizzle, which is what TMA writes with
// CU_TENSOR_MAP_SWIZZLE_128B into 1024-byte aligned tiles and what the wgmma descriptors read.
// S = Q K^T reads Q and K K-major; P stays in registers (the wgmma accumulator layout is the
// A-fragment layout); O += P V reads V as an MN-major (transposed) operand.
//
// Gate: the gate values arrive pre-multiplied by log2(e) (cpad, [B*H, tpad] fp32). Of the bias
// c_i - c_j only the column term -c_j is applied: the row term is the same for all of a row's
// keys and cancels in the softmax, so each row keeps its running maximum without it (a
// "gate-free frame" f_i) and the gate costs one FADD per column, c_j + f_i, which is exact where
// the probability matters (the two are then within a few hundred log2 units of each other), so
// nothing is rounded at the magnitude of c (-1e4 at long context).
//
// Gate on the tensor cores (GTC: bf16, head dim 64, the FoX models): the column term rides in
// S = Q K^T itself. A gate warp of the producer warpgroup writes g_j = (c_r - c_j) / sl2 per key
// (c_r: the block's first key; exact, as keys of one block) as three bf16 columns (hi, mid, lo:
// fp32's 24 bits) into a B operand, and one more wgmma k-step against a tile of ones adds their
// sum to each score: sl2 S = (s sl2 - c_j) + c_r, the gated score in the block's frame. The
// softmax then subtracts one value per row, f_i + c_r, as without a gate (no column FADD, no
// gate loads, no tied frames), for 25% more work in S on the tensor cores, which have it to
// spare: gated 4 x 4k x 24 x 64 ~6% faster, 16k ~4%, 64k ~2% (medians, kernels/NOTES.md). fp16 cannot hold g
// (up to ~1e4 / sl2) and head dim 128 has no shared memory left: they keep the ALU column term.
//
// The loop is limited by instruction issue, so each FP32 instruction per score counts (~7% each
// at head dim 64, kernels/NOTES.md). The optimistic softmax takes a block's probabilities in the
// running frames without this block's maxima, checks them by their row sums, and computes them
// exactly (maxima first) only where a block raised a maximum. A thread's two rows share one
// frame where they can (bf16 with the ALU gate), so one FADD serves both rows' column term. Per
// score, in the optimistic path: FFMA + MUFU + FADD (row sum), plus FADD / 2 with the ALU gate.
#pragma once
#include "fa_common.cuh"
#include "fa_prefill.cuh"
#include "kernels/hopper/mbarrier.cuh"
#include "kernels/hopper/tma.cuh"
#include "kernels/hopper/wgmma.cuh"

#include <cuda.h>

#include <type_traits>

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
// Tied frames (see the consumer's softmax): how far (log2 units) a row's own maximum may lie
// below its thread's shared frame. Its probabilities then reach down to 2^-(kTieGap + 24) at
// fp32's precision, far above bf16's and fp32's smallest normal numbers (2^-126).
constexpr float kTieGap = 64.f;

template <int NCWG> struct WsLayout {
  static constexpr int kConsumerThreads = NCWG * 128;
  static constexpr int kThreads = kConsumerThreads + 128;
  static constexpr int kBM = NCWG * 64;
  // 24: with 32 (the consumers' 160 a thread then take the last of the 64K) the consumers'
  // setmaxnreg.inc never returned on an H100 (every launch hung), though FlashAttention-3 uses 32.
  static constexpr int kProducerRegs = 24;
  // What the consumers may take of the 64K registers (a multiple of 8, at most 240).
  static constexpr int kConsumerRegs = ((65536 - 128 * kProducerRegs) / kConsumerThreads) / 8 * 8 > 240
                                           ? 240
                                           : ((65536 - 128 * kProducerRegs) / kConsumerThreads) / 8 * 8;
};

// Shared memory: Q (kQBuffers tiles), the K and V rings, with GTC the gate operands of S (below),
// the gate ring, the barriers and the tile ring. Q gets a second buffer where it fits in the
// 232,448 bytes a block may have.
template <int D, int BN, int STAGES, int NCWG, bool GTC = false> struct WsSmem {
  static constexpr int kQTile = WsLayout<NCWG>::kBM * D * 2;
  static constexpr int kKvTile = BN * D * 2;
  // GTC: the gate's k-step of S = Q K^T, both operands in the 128B-swizzled K-major layout of Q and
  // K: B = [BN keys][64] whose 32-byte column pair 2s, 2s + 1 holds ring slot s's gate terms (so up
  // to 4 slots), A = [64 rows][64] of ones in columns 0..2, shared by the warpgroups.
  static constexpr int kGateOps = GTC ? BN * 128 + 64 * 128 : 0;
  // K/V full/empty, Q full/empty, tile full/empty, with GTC the gate operands' full barriers.
  static constexpr int kBarriers = (GTC ? 5 : 4) * STAGES + 2 * 2 + 2 * 2;
  static constexpr int kFixed = 1024 + 2 * STAGES * kKvTile + kGateOps + STAGES * BN * 4 + 8 * kBarriers + 2 * 16;
  static constexpr int kQBuffers = kFixed + 2 * kQTile <= 232448 ? 2 : 1;
  static constexpr int kBytes = kFixed + kQBuffers * kQTile;
};

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

// Kernel flags: the optimistic softmax, tied frames (bf16 with the ALU gate); see the consumers.
// kWsSkipDead: a consumer warpgroup skips the key block that lies wholly after its last row
// (every score masked; at most the first one a tile visits): no S and no softmax, P = 0.
constexpr int kWsOptimistic = 1, kWsTie = 2, kWsSkipDead = 4;

// Query tile `tile` of the launch order (tiles start in this order): (b, h) pairs in groups of
// `group`, and within a group the longest query blocks first, heads fastest. A group's K/V is
// sized to stay in L2 while its tiles run; longest-first inside it keeps the tail short.
struct WsTile {
  int b, h, m_block;
};
__device__ __forceinline__ WsTile ws_tile(int tile, int n_m, int n_bh, int group, int H) {
  const int grp = tile / (group * n_m);
  const int gsize = min(group, n_bh - grp * group);
  const int r = tile - grp * group * n_m;
  const int bh = grp * group + r % gsize;
  return {bh / H, bh % H, n_m - 1 - r / gsize};
}

template <typename T, int D, int BN, int STAGES, int NCWG, bool PINGPONG, bool GATE, bool GTC = false>
__global__ void __launch_bounds__(WsLayout<NCWG>::kThreads, 1)
    fa_prefill_ws_kernel(const FaParams p, const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                         const __grid_constant__ CUtensorMap tm_v, const float* __restrict__ cpad, int tpad, int group,
                         int flags, int* __restrict__ tile_counter) {
  using L = WsLayout<NCWG>;
  using M = WsSmem<D, BN, STAGES, NCWG, GTC>;
  constexpr int BM = L::kBM;
  static_assert(!GTC || (GATE && std::is_same_v<T, __nv_bfloat16> && STAGES <= 4 && BN == 128),
                "the gate on the tensor cores: bf16 (whose range holds any gate term), 4 slots in a 64-column tile");
  // The gate's column terms on ALU (one FADD per column and row pair) or, GTC, in S itself.
  constexpr bool COLGATE = GATE && !GTC;
  constexpr int TILE = M::kKvTile;  // bytes of one K or V tile
  constexpr int QB = M::kQBuffers, QTILE = M::kQTile;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t sraw = smem_u32(smem_raw);
  const uint32_t sQ = (sraw + 1023) & ~1023u;
  const uint32_t sK0 = sQ + QB * QTILE;
  const uint32_t sV0 = sK0 + STAGES * TILE;
  const uint32_t sG = sV0 + STAGES * TILE;  // GTC: the gate operands (1024-aligned: TILE is)
  const uint32_t sOnes = sG + BN * 128;
  const uint32_t sC0 = sV0 + STAGES * TILE + M::kGateOps;
  const uint32_t bar0 = sC0 + STAGES * BN * 4;
  auto full_k = [&](int s) { return bar0 + 8 * s; };
  auto full_v = [&](int s) { return bar0 + 8 * (STAGES + s); };
  auto empty_k = [&](int s) { return bar0 + 8 * (2 * STAGES + s); };
  auto empty_v = [&](int s) { return bar0 + 8 * (3 * STAGES + s); };
  auto full_q = [&](int s) { return bar0 + 8 * (4 * STAGES + s); };
  auto empty_q = [&](int s) { return bar0 + 8 * (4 * STAGES + 2 + s); };
  auto full_tile = [&](int s) { return bar0 + 8 * (4 * STAGES + 4 + s); };
  auto empty_tile = [&](int s) { return bar0 + 8 * (4 * STAGES + 6 + s); };
  auto full_g = [&](int s) { return bar0 + 8 * (4 * STAGES + 8 + s); };  // GTC
  // The tile ring: {tile, first key block, end key block, seq_start} a slot.
  // (Plain accesses: the barrier asm around them is a compiler memory fence.)
  int4* tile_slot = reinterpret_cast<int4*>(smem_raw + (bar0 + 8 * M::kBarriers - sraw));

  const int n_m = (p.Tq + BM - 1) / BM, n_bh = p.B * p.H, n_tiles = n_m * n_bh;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int Tq = p.Tq, Tk = p.Tk, off = Tk - Tq;

  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full_k(s), 1);
      mbar_init(full_v(s), 1);
      mbar_init(empty_k(s), L::kConsumerThreads);
      mbar_init(empty_v(s), L::kConsumerThreads);
    }
    for (int s = 0; s < 2; ++s) {
      mbar_init(full_q(s), 1);
      mbar_init(empty_q(s), L::kConsumerThreads);
      mbar_init(full_tile(s), 1);
      mbar_init(empty_tile(s), L::kConsumerThreads + (GTC ? 32 : 0));  // GTC: the gate warp reads it too
    }
    if (GTC)
      for (int s = 0; s < STAGES; ++s) mbar_init(full_g(s), 32);  // the gate warp's lanes
    mbar_fence_init();
  }
  if (GTC) {  // the gate operands: zeros, and A's ones (bf16 1.0, columns 0..2 of each row)
    uint4* g4 = reinterpret_cast<uint4*>(smem_raw + (sG - sraw));
    for (int i = threadIdx.x; i < M::kGateOps / 16; i += L::kThreads) {
      const int r = i / 8 - BN, chunk = i % 8;  // r >= 0: row r of A, at 16-byte chunk (logical ^ (r & 7))
      g4[i] = r >= 0 && (chunk ^ (r & 7)) == 0 ? make_uint4(0x3F803F80u, 0x00003F80u, 0u, 0u) : make_uint4(0u, 0u, 0u, 0u);
    }
    fence_proxy_async_shared();
  }
  __syncthreads();  // the only CTA-wide barrier

  if (warp >= L::kConsumerThreads / 32) {  // producer warpgroup
    regs_dec<L::kProducerRegs>();
    if (warp == L::kConsumerThreads / 32 && lane == 0) {
      int kv_it = 0, q_it = 0;  // K/V blocks and Q tiles loaded so far (the rings' positions)
      for (int t = 0;; ++t) {
        // The tile queue: blockIdx.x first, then the shared counter (none when every tile has a CTA).
        const int tile = t == 0 ? blockIdx.x : (gridDim.x >= n_tiles ? n_tiles : (int)gridDim.x + atomicAdd(tile_counter, 1));
        // Its key blocks (pruning reads the gate), passed on with it: found once, here.
        WsTile w{0, 0, 0};
        KeyBlocks blocks{0, 0, 0};
        if (tile < n_tiles) {
          w = ws_tile(tile, n_m, n_bh, group, p.H);
          blocks = key_block_range<BM, BN, GATE>(p, w.b, w.h, w.m_block * BM, GATE ? p.c + w.b * p.c_sb + w.h * p.c_sh : nullptr);
          count_key_blocks<BN>(p, blocks, true);
        }
        if (t >= 2) mbar_wait(empty_tile(t & 1), ((t >> 1) + 1) & 1);
        tile_slot[t & 1] = make_int4(tile, blocks.begin, blocks.end, blocks.seq_start);
        mbar_arrive(full_tile(t & 1));  // release: the consumers see the slot
        if (tile >= n_tiles) break;
        const int hk = w.h / (p.H / p.Hkv), q0 = w.m_block * BM;
        const float* cb = GATE ? cpad + (int64_t)(w.b * p.H + w.h) * tpad : nullptr;
        const int nblk = blocks.end - blocks.begin;
        if (nblk <= 0) continue;
        const int qs = q_it % QB;
        if (q_it >= QB) mbar_wait(empty_q(qs), ((q_it / QB) + 1) & 1);  // the previous use's phase
        mbar_expect_tx(full_q(qs), QTILE);
        for (int d0 = 0; d0 < D / 64; ++d0) tma_load_4d(sQ + qs * QTILE + d0 * BM * 128, &tm_q, full_q(qs), d0 * 64, q0, w.h, w.b);
        ++q_it;
        for (int it = 0; it < nblk; ++it, ++kv_it) {
          const int st = kv_it % STAGES;
          const uint32_t reuse_parity = ((kv_it / STAGES) + 1) & 1;  // the previous use's phase
          const int kb = (blocks.end - 1 - it) * BN;
          if (kv_it >= STAGES) mbar_wait(empty_k(st), reuse_parity);
          mbar_expect_tx(full_k(st), TILE + (GATE ? BN * 4 : 0));
          for (int d0 = 0; d0 < D / 64; ++d0) tma_load_4d(sK0 + st * TILE + d0 * BN * 128, &tm_k, full_k(st), d0 * 64, kb, hk, w.b);
          if (GATE) bulk_load(sC0 + st * BN * 4, cb + kb, BN * 4, full_k(st));
          if (kv_it >= STAGES) mbar_wait(empty_v(st), reuse_parity);
          mbar_expect_tx(full_v(st), TILE);
          for (int d0 = 0; d0 < D / 64; ++d0) tma_load_4d(sV0 + st * TILE + d0 * BN * 128, &tm_v, full_v(st), d0 * 64, kb, hk, w.b);
        }
      }
    } else if (GTC && warp == L::kConsumerThreads / 32 + 1) {
      // The gate warp: per key block (in ring order, as the consumers take them) the gate's column
      // terms g_j = (c_r - c_j) / sl2 into the B operand of S's extra k-step (c_r: the block's
      // first key), split over three bf16 columns (hi + mid + lo: fp32's 24 bits), so that S
      // comes out as q.k + g and sl2 S = (s sl2 - c_j) + c_r, the column-gated score in the
      // block's frame. c_r - c_j is exact (Sterbenz: keys of one block), as on the ALU path.
      const float* sCg = reinterpret_cast<const float*>(smem_raw + (sC0 - sraw));
      unsigned char* gb = smem_raw + (sG - sraw);
      const float inv_sl2 = 1.f / p.scale_log2;
      int kv_it = 0;
      for (int t = 0;; ++t) {
        mbar_wait(full_tile(t & 1), (t >> 1) & 1);
        const int4 slot = tile_slot[t & 1];
        mbar_arrive(empty_tile(t & 1));
        if (slot.x >= n_tiles) break;
        for (int it = 0; it < slot.z - slot.y; ++it, ++kv_it) {
          const int st = kv_it % STAGES;
          mbar_wait(full_k(st), (kv_it / STAGES) & 1);  // the gate values came with K
          const float cr = sCg[st * BN];
#pragma unroll
          for (int q = 0; q < BN / 32; ++q) {
            const int j = q * 32 + lane;
            const float gj = (cr - sCg[st * BN + j]) * inv_sl2;
            const __nv_bfloat16 hi = __float2bfloat16_rn(gj);
            const float r1 = gj - __bfloat162float(hi);
            const __nv_bfloat16 mid = __float2bfloat16_rn(r1);
            const __nv_bfloat16 lo = __float2bfloat16_rn(r1 - __bfloat162float(mid));
            __nv_bfloat162 w0, w1;
            w0.x = hi;
            w0.y = mid;
            w1.x = lo;
            w1.y = __float2bfloat16_rn(0.f);
            // Row j, logical 16-byte chunk 2 st (columns 0..7 of slot st's pair) under the swizzle.
            *reinterpret_cast<uint2*>(gb + j * 128 + (((2 * st) ^ (j & 7)) << 4)) =
                make_uint2(*reinterpret_cast<uint32_t*>(&w0), *reinterpret_cast<uint32_t*>(&w1));
          }
          fence_proxy_async_shared();
          mbar_arrive(full_g(st));
        }
      }
    }
    return;
  }

  // ---- consumers ----
  regs_inc<L::kConsumerRegs>();
  // The warpgroup index goes through a shuffle so the compiler knows it is warp-uniform: it keeps
  // the descriptors in uniform registers, and a branch on it (dead blocks, the ping-pong ring)
  // does not make ptxas serialize the wgmma (C7520: "program dependence on compiler-inserted
  // WG.AR in divergent path").
  const int wg = __shfl_sync(0xffffffff, warp >> 2, 0), wi = warp & 3, g = lane >> 2, tq = lane & 3;
  const int row0 = wg * 64 + wi * 16 + g;  // this thread's rows: row0, row0 + 8
  const float sl2 = p.scale_log2;
  // The current tile's values (set at the top of each tile; the lambdas below read them).
  int q0 = 0, pos0 = 0, pos1 = 0, ss = 0, n_end = 0, kv_base = 0;
  const float* sC_gen = reinterpret_cast<const float*>(smem_raw + (sC0 - sraw));

  float o[D / 2];
  float l0, l1;  // running sums of probabilities (in the frames below)
  bool resc;  // does this block rescale O (warp-uniform, see softmax)
  float s[BN / 2];
  uint32_t pf[BN / 16][4];

  // Descriptors: built once, then advanced by byte offsets added to their 14-bit
  // address field (every operand lies below 256 KB of shared memory, so no carry leaves it).
  const uint64_t dq0 = gmma_desc(sQ + wg * 64 * 128, 16, 1024);
  const uint64_t dk0 = gmma_desc(sK0, 16, 1024);
  // V is an MN-major operand: LBO = stride between 64-wide d blocks, SBO = between 8-key groups.
  const uint64_t dv0 = gmma_desc(sV0, BN * 128, 1024);
  auto desc_at = [](uint64_t d, uint32_t bytes) {
    return (d & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)d + (bytes >> 4));
  };
  uint32_t qoff = 0;  // the current tile's Q buffer (bytes from the first)
  // GTC: the gate's k-step, ones (A, every warpgroup) times slot st's gate terms (B, column pair st).
  const uint64_t dones = gmma_desc(sOnes, 16, 1024), dg0 = gmma_desc(sG, 16, 1024);
  auto issue_s = [&](int st) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const uint32_t koff = (kk & 3) << 5;  // 16 columns = 32 bytes within a 64-column block
      WgOp<T, BN>::ss(s, desc_at(dq0, qoff + (kk >> 2) * (BM * 128) + koff), desc_at(dk0, st * TILE + (kk >> 2) * (BN * 128) + koff),
                      kk > 0 ? 1 : 0);
    }
    if constexpr (GTC) WgOp<T, BN>::ss(s, dones, desc_at(dg0, st << 5), 1);
  };
  auto issue_pv = [&](int st) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) WgOp<T, D>::rs(o, pf[kk], desc_at(dv0, st * TILE + kk * 16 * 128));
  };
  // Frames. Row i's probabilities are taken as exp2(t_ij - f_i): without the gate t = s sl2 and
  // f is the row's running maximum; with it t = s sl2 - c_j and f is the row's gate-free running
  // maximum. The row term c_i of the bias c_i - c_j is the same for every key of a row, so it
  // cancels in the softmax and never needs to be added: the gate costs one FADD per column
  // (c_j + f_i, two rows a thread) instead of one per score. Near a row's relevant keys c_j and
  // -f_i agree to a few hundred log2 units, so their sum is exact (Sterbenz) and nothing is
  // rounded at the magnitude of c (-1e4 at long context). Frames move lazily: only when a block
  // raises a row's maximum by more than kLazyRescale, so probabilities stay below 2^8.
  //
  // Tied frames (bf16, tie): a thread's two rows (8 apart) share one frame f, so the column
  // term c_j + f serves both rows: one FADD per two scores. The row whose own maximum is lower
  // then has probabilities scaled by 2^-(gap), which cancels in O / l; bf16 P and fp32 l hold
  // that for gaps up to ~100, so a warp whose gap exceeds kTieGap unties for good.
  float f0, f1;  // frames (see above), -inf until a row has a key
  float e0, e1;  // the rows' own maxima in the frames' terms (lower bounds)
  bool tied;  // warp-uniform
  // The optimistic softmax: once every row of the warpgroup has a frame, a block's
  // probabilities are taken in the frames without this block's maxima (no max tree, no
  // shuffles). Checked after the fact: every thread's row sums must stay at or below
  // kOptimisticMax, which bounds each probability (for fp16 P too). Where one does not (or is
  // inf or NaN), the warpgroup computes S again (the K slot is still held) and takes the exact
  // path. Going back from the diagonal, older keys rarely raise the maxima. (Deciding per warp
  // instead, every warp voting in every block, measured slower: 23.4 -> 23.8 ms at 64k x 24 x 64
  // gated, 1.59 -> 2.0 ms at 16k x 16 x 128 without the gate.)
  bool frames;
  // Scores of block `it` (slot st) -> probabilities in place; sc = rescale factor for O.
  auto softmax = [&](int it, int st, float& sc0, float& sc1) {
    const int kb0 = (n_end - 1 - it) * BN;
    const float* sc = sC_gen + st * BN;
    // The window's edge: a key of the block lies before the window of the tile's last row (a
    // tile-uniform test, as the others: no divergent branch near the wgmma). The window's bounds
    // are computed where used from the kernel parameter, not held in registers through the tile.
    const bool need_mask = (kb0 + BN - 1 > off + q0) || (kb0 < ss) || (kb0 + BN > Tk) ||
                           (kb0 < window_lo(p, off + min(q0 + BM, Tq) - 1));
    auto mask = [&]() {
      if (need_mask) {
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int col = kb0 + j * 8 + 2 * tq + e;
            const bool bad = col < ss || col >= Tk;
            if (bad || col > pos0 || col < window_lo(p, pos0)) s[4 * j + e] = -INFINITY;
            if (bad || col > pos1 || col < window_lo(p, pos1)) s[4 * j + 2 + e] = -INFINITY;
          }
        }
      }
    };
    // The optimistic path's s -> exp2(t - f) in place, and this thread's row sums (every row
    // has a frame there). TIED: one column term for both rows.
    auto exp_frame = [&](auto tied_c, float& rs0, float& rs1) {
      constexpr bool TIED = decltype(tied_c)::value;
      // GTC: S holds the column term, in the block's frame (c_r); the rows' subtrahends f + c_r.
      const float cr = GTC ? sc[0] : 0.f, w0 = -(f0 + cr), w1 = -(f1 + cr);
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        float a0x, a0y, a1x, a1y;  // exponent addends: rows 0/1, columns x/y
        if (COLGATE) {
          const float2 cj = *reinterpret_cast<const float2*>(sc + j * 8 + 2 * tq);
          a0x = -(cj.x + f0);
          a0y = -(cj.y + f0);
          a1x = TIED ? a0x : -(cj.x + f1);
          a1y = TIED ? a0y : -(cj.y + f1);
        } else {
          a0x = a0y = w0;
          a1x = a1y = w1;
        }
        s[4 * j] = fast_exp2(fmaf(s[4 * j], sl2, a0x));
        s[4 * j + 1] = fast_exp2(fmaf(s[4 * j + 1], sl2, a0y));
        s[4 * j + 2] = fast_exp2(fmaf(s[4 * j + 2], sl2, a1x));
        s[4 * j + 3] = fast_exp2(fmaf(s[4 * j + 3], sl2, a1y));
        rs0 += s[4 * j] + s[4 * j + 1];
        rs1 += s[4 * j + 2] + s[4 * j + 3];
      }
    };
    mask();
    if (frames) {
      float rs0 = 0.f, rs1 = 0.f;
      if (COLGATE && tied) exp_frame(std::true_type{}, rs0, rs1);
      else exp_frame(std::false_type{}, rs0, rs1);
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
      mask();
    }
    // Exact: this block's row maxima (as trees: log2(BN/8) dependent steps; max is exact in any
    // order). With the gate the scores are first taken in the block's frame, t + c_r with c_r = c
    // of its first key, so the column terms c_r - c_j are exact; m - c_r is then gate-free.
    const float cr = GATE ? sc[0] : 0.f;
    if (COLGATE) {
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
    // In the frames' terms (-inf stays -inf): gate-free, or scaled (sl2 > 0 commutes with max).
    if (COLGATE) {
      mx0 -= cr;
      mx1 -= cr;
    } else if (GTC) {  // S = q.k + g: sl2 S is in the block's frame
      mx0 = fmaf(mx0, sl2, -cr);
      mx1 = fmaf(mx1, sl2, -cr);
    } else {
      mx0 *= sl2;
      mx1 *= sl2;
    }
    e0 = fmaxf(e0, mx0);
    e1 = fmaxf(e1, mx1);
    float n0 = f0, n1 = f1;  // the new frames
    if (tied) {
      const float mx = fmaxf(mx0, mx1), nt = mx > f0 + kLazyRescale ? mx : f0;
      // A row more than kTieGap below the shared frame: this warp unties for good, each row's
      // frame going to its own maximum (so far as known; a row without keys has O = l = 0).
      const bool far = (e0 != -INFINITY && nt - e0 > kTieGap) || (e1 != -INFINITY && nt - e1 > kTieGap);
      if (__any_sync(0xffffffff, far)) {
        tied = false;
        n0 = e0;
        n1 = e1;
      } else {
        n0 = n1 = nt;
      }
    }
    if (!tied) {
      if (mx0 > n0 + kLazyRescale) n0 = mx0;
      if (mx1 > n1 + kLazyRescale) n1 = mx1;
    }
    const bool up0 = n0 != f0, up1 = n1 != f1;
    resc = __any_sync(0xffffffff, up0 || up1);
    // f = -inf: 0 (O and l are still 0); n = -inf (untied, no key yet): O and l are 0, keep them.
    sc0 = up0 && n0 != -INFINITY ? fast_exp2(f0 - n0) : 1.f;
    sc1 = up1 && n1 != -INFINITY ? fast_exp2(f1 - n1) : 1.f;
    f0 = n0;
    f1 = n1;
    // The probabilities, from the scores as they stand: in the block's frame with the gate
    // (subtrahend f + c_r, small where it matters), raw without it (the scale in the FMA, as in
    // FlashAttention-3's softmax).
    const float u0 = f0 == -INFINITY ? 0.f : (GATE ? f0 + cr : f0);
    const float u1 = f1 == -INFINITY ? 0.f : (GATE ? f1 + cr : f1);
    const float k = COLGATE ? 1.f : sl2;
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      s[4 * j] = fast_exp2(fmaf(s[4 * j], k, -u0));
      s[4 * j + 1] = fast_exp2(fmaf(s[4 * j + 1], k, -u0));
      s[4 * j + 2] = fast_exp2(fmaf(s[4 * j + 2], k, -u1));
      s[4 * j + 3] = fast_exp2(fmaf(s[4 * j + 3], k, -u1));
      rs0 += s[4 * j] + s[4 * j + 1];
      rs1 += s[4 * j + 2] + s[4 * j + 3];
    }
    l0 = (resc ? l0 * sc0 : l0) + rs0;
    l1 = (resc ? l1 * sc1 : l1) + rs1;
    if ((flags & kWsOptimistic) && !frames) frames = !warpgroup_any(e0 == -INFINITY || e1 == -INFINITY, kVoteBarrier + wg);
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

  auto zero_p = [&]() {  // P of a dead block: its PV product adds nothing
#pragma unroll
    for (int j = 0; j < BN / 16; ++j) pf[j][0] = pf[j][1] = pf[j][2] = pf[j][3] = 0u;
  };

  int q_it = 0;  // Q tiles used so far (the Q ring's position)
  for (int t = 0;; ++t) {
    mbar_wait(full_tile(t & 1), (t >> 1) & 1);
    // The slot stays ours until the tile's end (empty_tile there): its fields are read where
    // they are needed rather than held in registers through the tile.
    const int4 slot = tile_slot[t & 1];
    if (slot.x >= n_tiles) break;
    q0 = ws_tile(slot.x, n_m, n_bh, group, p.H).m_block * BM;
    pos0 = off + q0 + row0;
    pos1 = pos0 + 8;
    n_end = slot.z;
    ss = slot.w;
    const int nblk = n_end - slot.y;
    // A dead block lies wholly after this warpgroup's last row: only the first one visited can
    // (a warpgroup's 64 rows end at most BM - 64 <= BN rows before the tile's). It gets no S and
    // no softmax, and P = 0 for its PV product, issued with the next block's S. (Not its own
    // branch in the loop: a wgmma or a P written under a branch there makes ptxas serialize
    // every wgmma of the kernel, C7513 / C7515, 1.5x slower.)
    static_assert(BM - 64 <= BN, "a warpgroup has at most one dead key block");
    const bool dead = (flags & kWsSkipDead) && nblk > 0 && (n_end - 1) * BN > off + q0 + wg * 64 + 63;

#pragma unroll
    for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
    l0 = l1 = 0.f;
    resc = true;
    f0 = f1 = e0 = e1 = -INFINITY;
    tied = COLGATE && std::is_same_v<T, __nv_bfloat16> && (flags & kWsTie);
    frames = false;

    // Ping-pong: the last warpgroup opens the ring for the first (and skips its own last signal,
    // so that every arrival is matched).
    if (PINGPONG && nblk > 1 && wg == NCWG - 1) named_bar_arrive(1, 256);
    const int qs = q_it % QB;
    if (nblk > 0) {
      qoff = qs * QTILE;
      mbar_wait(full_q(qs), (q_it / QB) & 1);
      const int st = kv_base % STAGES;
      mbar_wait(full_k(st), (kv_base / STAGES) & 1);
      if (GTC && !dead) mbar_wait(full_g(st), (kv_base / STAGES) & 1);
      if (!dead) {
        wgmma_fence();
        issue_s(st);
        wgmma_commit();
        wgmma_wait<0>();
        float sc0, sc1;
        softmax(0, st, sc0, sc1);
        rescale_pack(sc0, sc1);
      } else {
        zero_p();
      }
      mbar_arrive(empty_k(st));
    }
    for (int it = 1; it < nblk; ++it) {
      const int st = (kv_base + it) % STAGES, pst = (kv_base + it - 1) % STAGES;
      mbar_wait(full_k(st), ((kv_base + it) / STAGES) & 1);
      if (GTC) mbar_wait(full_g(st), ((kv_base + it) / STAGES) & 1);
      mbar_wait(full_v(pst), ((kv_base + it - 1) / STAGES) & 1);  // issued before K_it: already there
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
      mbar_arrive(empty_q(qs));  // the last S (and any recomputed one) is done: Q's buffer is free
      ++q_it;
      const int st = (kv_base + nblk - 1) % STAGES;
      mbar_wait(full_v(st), ((kv_base + nblk - 1) / STAGES) & 1);
      if (!(dead && nblk == 1)) {  // one block, dead: P was never computed
        wgmma_fence();
        issue_pv(st);
        wgmma_commit();
        wgmma_wait<0>();
      }
      mbar_arrive(empty_v(st));
      kv_base += nblk;
    }
    // The output of this tile (rows without keys, e.g. all padding, get 0).
    l0 += __shfl_xor_sync(0xffffffff, l0, 1);
    l0 += __shfl_xor_sync(0xffffffff, l0, 2);
    l1 += __shfl_xor_sync(0xffffffff, l1, 1);
    l1 += __shfl_xor_sync(0xffffffff, l1, 2);
    const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
    const WsTile w = ws_tile(tile_slot[t & 1].x, n_m, n_bh, group, p.H);
    mbar_arrive(empty_tile(t & 1));
    T* og = reinterpret_cast<T*>(p.o) + w.b * p.o_sb + w.h * p.o_sh;
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
}

}  // namespace foxeval::fa
