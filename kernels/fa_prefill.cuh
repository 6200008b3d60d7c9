// Prefill Forgetting Attention: FlashAttention-2 style tiled causal attention on mma.sync
// (m16n8k16, fp32 accumulation), ldmatrix from XOR-swizzled shared memory, cp.async loads.
//
// One CTA = BM query rows of one (batch, head); each warp owns 16 rows. Key blocks of BN are
// visited from the diagonal backwards, so the masked blocks come first and adaptive pruning
// is a lower bound on the block index. Scores live in the log2 domain:
//   s_ij = scale*log2e * q_i.k_j + log2e*(c_i - c_j)      (the gate difference in fp32)
#pragma once
#include "fa_common.cuh"

namespace foxeval::fa {

// Index of the first key block that adaptive pruning keeps (see forgetting_attention.cu for
// the error bound). c is non-increasing along the sequence (log f <= 0), so the largest bias
// of key block n for the query block starting at position p0 is c[p0] - c[last key of n];
// it grows with n, and a binary search finds the first block whose bias reaches thr. The
// block holding position p0 itself is never skipped.
__device__ __forceinline__ int prune_first_block(const float* c, int64_t c_st, int p0, int n_lo,
                                                 int n_hi_incl, int bn, int Tk, float thr) {
  const float cq = c[(int64_t)p0 * c_st];
  int lo = n_lo, hi = n_hi_incl;  // answer in [lo, hi]; block hi always kept
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    const int last = min(mid * bn + bn - 1, Tk - 1);
    if (cq - c[(int64_t)last * c_st] < thr) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// The key blocks [begin, end) a query block [q0, q0 + BM) must visit: causal end, left padding
// (seq_start, clamped to [0, Tk]), the sliding window of its first query (blocks wholly before
// it are never loaded) and adaptive pruning. `first`: the first block in range before pruning.
// Shared by both prefill kernels.
struct KeyBlocks {
  int begin, end, seq_start, first;
};

// The first key the query at position pos may see: pos - W + 1 with a window (0: none), else
// INT_MIN / 2 (no bound, and no overflow when compared).
__device__ __forceinline__ int window_lo(const FaParams& p, int pos) {
  return p.window > 0 ? pos - p.window + 1 : -(1 << 30);
}

template <int BM, int BN, bool GATE>
__device__ __forceinline__ KeyBlocks key_block_range(const FaParams& p, int b, int h, int q0, const float* cg) {
  const int Tk = p.Tk, off = p.Tk - p.Tq;
  int ss = 0;
  if (p.seq_start) {
    const long long s0 = p.seq_start[b];
    ss = s0 < 0 ? 0 : (s0 > Tk ? Tk : (int)s0);
  }
  const int q_last = min(q0 + BM, p.Tq) - 1;
  const int n_end = (off + q_last + 1 + BN - 1) / BN;
  const int lo = max(ss, window_lo(p, off + q0));
  const int n_first = min(lo / BN, n_end);
  int n_begin = n_first;
  if (GATE && p.threshold) {
    const float thr = p.threshold[b * p.thr_sb + h * p.thr_sh];
    const int n_diag = min((off + q0) / BN, n_end - 1);
    if (n_begin < n_diag) n_begin = prune_first_block(cg, p.c_st, off + q0, n_begin, n_diag, BN, Tk, thr);
  }
  return {n_begin, n_end, ss, n_first};
}

// The pruning counts (FaParams::prune_counts) of one query block: its key blocks from the one
// holding seq_start (or its window's first key) to the causal end, and the pruned prefix of them.
// One thread, one branch per CUDA block when counting is off. `counter`: whether the calling
// thread is the one that counts.
template <int BN>
__device__ __forceinline__ void count_key_blocks(const FaParams& p, const KeyBlocks& kb, bool counter) {
  if (p.prune_counts && counter) {
    count_pruning(p.prune_counts, 0, kb.begin - kb.first, kb.end - kb.first);
  }
}

template <typename T, int D, int BM, int BN, int NW, int MT, bool GATE>
__global__ void __launch_bounds__(NW * 32, 2) fa_prefill_kernel(const FaParams p) {
  // Each warp owns MT m16 tiles (16*MT query rows): K and V fragments read from shared memory
  // are reused MT times, which halves the shared-memory traffic per MMA for MT = 2.
  static_assert(BM == NW * 16 * MT, "BM = warps * 16 * MT");
  static_assert(D % 64 == 0 && BN % 16 == 0, "swizzle needs D >= 64");
  constexpr int NT = NW * 32;
  constexpr int CH = D / 8;  // 16-byte chunks per row
  constexpr bool Q_IN_REGS = D <= 64;
  extern __shared__ __align__(128) unsigned char smem[];
  // Q, then K and V double-buffered: block n-1 streams in while block n is computed.
  T* sQ = reinterpret_cast<T*>(smem);
  T* sK0 = sQ + BM * D;
  T* sV0 = sK0 + 2 * BN * D;

  const int m_block = gridDim.x - 1 - blockIdx.x;  // longest (last) query blocks first
  const int h = blockIdx.y, b = blockIdx.z;
  const int hk = h / (p.H / p.Hkv);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int Tq = p.Tq, Tk = p.Tk, off = Tk - Tq;
  const int q0 = m_block * BM;

  const T* qg = reinterpret_cast<const T*>(p.q) + b * p.q_sb + h * p.q_sh + (int64_t)q0 * p.q_st;
  const T* kg = reinterpret_cast<const T*>(p.k) + b * p.k_sb + hk * p.k_sh;
  const T* vg = reinterpret_cast<const T*>(p.v) + b * p.v_sb + hk * p.v_sh;
  const float* cg = GATE ? p.c + b * p.c_sb + h * p.c_sh : nullptr;

  const KeyBlocks blocks = key_block_range<BM, BN, GATE>(p, b, h, q0, cg);
  const int ss = blocks.seq_start, n_end = blocks.end, n_begin = blocks.begin;  // blocks [n_begin, n_end)
  count_key_blocks<BN>(p, blocks, threadIdx.x == 0);

  auto load_tile = [&](T* s, const T* g, int64_t stride, int rows, int nvalid) {
    const uint32_t base = smem_u32(s);
#pragma unroll
    for (int i = 0; i < rows * CH / NT; ++i) {
      const int idx = tid + i * NT;
      const int r = idx / CH, ch = idx % CH;
      const bool ok = r < nvalid;
      const T* src = ok ? g + (int64_t)r * stride + ch * 8 : g;
      cp_async16(base + (r * CH + (ch ^ (r & 7))) * 16, src, ok ? 16 : 0);
    }
  };

  auto load_kv = [&](int nb, int buf) {
    const int kb = nb * BN;
    load_tile(sK0 + buf * BN * D, kg + (int64_t)kb * p.k_st, p.k_st, BN, Tk - kb);
    load_tile(sV0 + buf * BN * D, vg + (int64_t)kb * p.v_st, p.v_st, BN, Tk - kb);
  };
  // Q and the first (diagonal) K/V block in group 0, the next block in group 1.
  load_tile(sQ, qg, p.q_st, BM, Tq - q0);
  int n = n_end - 1;
  if (n >= n_begin) load_kv(n, 0);
  cp_async_commit();
  if (n - 1 >= n_begin) load_kv(n - 1, 1);
  cp_async_commit();

  const int g = lane >> 2, tq = lane & 3;
  const int wrow = warp * 16 * MT;  // first row of this warp in the CTA
  int pos[MT][2];
  float ci[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    pos[mt][0] = off + q0 + wrow + mt * 16 + g;
    pos[mt][1] = pos[mt][0] + 8;
#pragma unroll
    for (int e = 0; e < 2; ++e)
      ci[mt][e] = GATE ? cg[(int64_t)min(pos[mt][e], Tk - 1) * p.c_st] * kLog2e : 0.f;
  }
  const float sl2 = p.scale_log2;

  float o[MT][D / 8][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int i = 0; i < D / 8; ++i) o[mt][i][0] = o[mt][i][1] = o[mt][i][2] = o[mt][i][3] = 0.f;
  float m[MT][2], l[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) m[mt][0] = m[mt][1] = -INFINITY, l[mt][0] = l[mt][1] = 0.f;

  cp_async_wait<1>();
  __syncthreads();

  const uint32_t qbase = smem_u32(sQ);
  auto load_q = [&](int mt, int kk, uint32_t (&a)[4]) {
    const int r = wrow + mt * 16 + (lane & 15);
    const int ch = kk * 2 + (lane >> 4);
    ldmatrix_x4(qbase + (r * CH + (ch ^ (r & 7))) * 16, a[0], a[1], a[2], a[3]);
  };
  uint32_t qf[Q_IN_REGS ? MT : 1][Q_IN_REGS ? D / 16 : 1][4];
  if constexpr (Q_IN_REGS) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) load_q(mt, kk, qf[mt][kk]);
  }

  for (int it = 0; n >= n_begin; --n, ++it) {
    const int kb0 = n * BN;
    const int buf = it & 1;
    const uint32_t kbase = smem_u32(sK0 + buf * BN * D), vbase = smem_u32(sV0 + buf * BN * D);
    if (it > 0) {
      cp_async_wait<1>();  // this block's group has landed (one newer group may be in flight)
      __syncthreads();
    }

    // Gate values of this thread's key columns.
    float cj[BN / 8][2];
    if (GATE) {
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const int col = kb0 + j * 8 + 2 * tq;
        cj[j][0] = cg[(int64_t)min(col, Tk - 1) * p.c_st] * kLog2e;
        cj[j][1] = cg[(int64_t)min(col + 1, Tk - 1) * p.c_st] * kLog2e;
      }
    }

    // S = Q K^T
    float s[MT][BN / 8][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) s[mt][j][0] = s[mt][j][1] = s[mt][j][2] = s[mt][j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t qa[MT][4];
      if constexpr (!Q_IN_REGS) {
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) load_q(mt, kk, qa[mt]);
      }
#pragma unroll
      for (int jp = 0; jp < BN / 16; ++jp) {
        const int r = jp * 16 + (lane >> 4) * 8 + (lane & 7);
        const int ch = kk * 2 + ((lane >> 3) & 1);
        uint32_t b0, b1, b2, b3;
        ldmatrix_x4(kbase + (r * CH + (ch ^ (r & 7))) * 16, b0, b1, b2, b3);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const uint32_t (&a)[4] = Q_IN_REGS ? qf[Q_IN_REGS ? mt : 0][Q_IN_REGS ? kk : 0] : qa[mt];
          mma16816<T>(s[mt][2 * jp], a, b0, b1);
          mma16816<T>(s[mt][2 * jp + 1], a, b2, b3);
        }
      }
    }

    // Scale, bias, mask.
    // The window's edge: a key of the block is before the window of the block's last query.
    const bool need_mask = (kb0 + BN - 1 > off + q0) || (kb0 < ss) || (kb0 + BN > Tk) ||
                           (kb0 < window_lo(p, off + min(q0 + BM, Tq) - 1));
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e)
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            float x = s[mt][j][2 * hh + e] * sl2;
            if (GATE) x += ci[mt][hh] - cj[j][e];
            if (need_mask) {
              const int col = kb0 + j * 8 + 2 * tq + e;
              if (col < ss || col >= Tk || col > pos[mt][hh] || col < window_lo(p, pos[mt][hh])) x = -INFINITY;
            }
            s[mt][j][2 * hh + e] = x;
          }

    // Online softmax (a quad shares a row).
    uint32_t pf[MT][BN / 16][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      float mx[2] = {m[mt][0], m[mt][1]};
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        mx[0] = fmaxf(mx[0], fmaxf(s[mt][j][0], s[mt][j][1]));
        mx[1] = fmaxf(mx[1], fmaxf(s[mt][j][2], s[mt][j][3]));
      }
      float mu[2], sc[2];
#pragma unroll
      for (int hh = 0; hh < 2; ++hh) {
        mx[hh] = fmaxf(mx[hh], __shfl_xor_sync(0xffffffff, mx[hh], 1));
        mx[hh] = fmaxf(mx[hh], __shfl_xor_sync(0xffffffff, mx[hh], 2));
        mu[hh] = mx[hh] == -INFINITY ? 0.f : mx[hh];
        sc[hh] = fast_exp2(m[mt][hh] - mu[hh]);
        m[mt][hh] = mx[hh];
      }
      float rs[2] = {0.f, 0.f};
#pragma unroll
      for (int j = 0; j < BN / 8; ++j) {
        const float p0 = fast_exp2(s[mt][j][0] - mu[0]), p1 = fast_exp2(s[mt][j][1] - mu[0]);
        const float p2 = fast_exp2(s[mt][j][2] - mu[1]), p3 = fast_exp2(s[mt][j][3] - mu[1]);
        rs[0] += p0 + p1;
        rs[1] += p2 + p3;
        pf[mt][j >> 1][(j & 1) * 2 + 0] = TypeTraits<T>::pack(p0, p1);
        pf[mt][j >> 1][(j & 1) * 2 + 1] = TypeTraits<T>::pack(p2, p3);
      }
      l[mt][0] = l[mt][0] * sc[0] + rs[0];
      l[mt][1] = l[mt][1] * sc[1] + rs[1];
#pragma unroll
      for (int i = 0; i < D / 8; ++i) {
        o[mt][i][0] *= sc[0];
        o[mt][i][1] *= sc[0];
        o[mt][i][2] *= sc[1];
        o[mt][i][3] *= sc[1];
      }
    }


    // O += P V
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        const int r = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int ch = dp * 2 + (lane >> 4);
        uint32_t b0, b1, b2, b3;
        ldmatrix_x4_trans(vbase + (r * CH + (ch ^ (r & 7))) * 16, b0, b1, b2, b3);
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma16816<T>(o[mt][2 * dp], pf[mt][kk], b0, b1);
          mma16816<T>(o[mt][2 * dp + 1], pf[mt][kk], b2, b3);
        }
      }
    }
    __syncthreads();  // every warp is done with this buffer
    if (n - 2 >= n_begin) load_kv(n - 2, buf);
    cp_async_commit();  // possibly empty: keeps one group per block
  }

  // Normalize and store.
  T* og = reinterpret_cast<T*>(p.o) + b * p.o_sb + h * p.o_sh;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int hh = 0; hh < 2; ++hh) {
      float lv = l[mt][hh];
      lv += __shfl_xor_sync(0xffffffff, lv, 1);
      lv += __shfl_xor_sync(0xffffffff, lv, 2);
      const float inv = lv > 0.f ? 1.f / lv : 0.f;
      const int qi = pos[mt][hh] - off;
      if (qi < Tq) {
#pragma unroll
        for (int i = 0; i < D / 8; ++i)
          *reinterpret_cast<uint32_t*>(og + (int64_t)qi * p.o_st + i * 8 + 2 * tq) =
              TypeTraits<T>::pack(o[mt][i][2 * hh] * inv, o[mt][i][2 * hh + 1] * inv);
      }
    }
  }
}

}  // namespace foxeval::fa
