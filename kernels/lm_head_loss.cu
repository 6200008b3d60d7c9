// The language-model head with the loss in its epilogue (lm_head_loss.h): the persistent
// warp-specialized wgmma GEMM of kernels/hopper/ws_gemm.cuh (the gate_up kernel's, glu_gemm.cu),
// whose epilogue reduces each logit row of a tile to (maximum, sum of exp(logit - maximum)).
//
// A tile is 128 rows x 256 vocabulary columns. The head (154 MB for a 50k vocabulary) does not
// fit in L2, so tiles go in groups of kGroupRows row blocks, rows fastest within a column: the
// CTAs working at once share a few columns of the head and the group's rows of hidden
// (kGroupRows x 384 KB at K = 1536) stay in L2; the head is read from memory once per group.
//
// Epilogue beside the next tile's products (as glu_gemm): at a tile's end a consumer thread
// rounds its 128 logits to bf16 (as the two-kernel path stores them) and keeps them as 64 pairs;
// during the next tile's first 6 k-steps it takes the rows' maxima (chunk 0, with the label's
// logit where the label falls in this thread's columns), adds exp(logit - maximum) (chunks 1..4,
// 16 columns a chunk), and sums over the 4 lanes that share a row (chunk 5), storing one
// (maximum, sum) a row and column tile. Columns at or past the vocabulary count as -inf.
#include "kernels/lm_head_loss.h"

#include "kernels/cuda_types.cuh"
#include "data/switches.h"
#include "kernels/hopper/tma_map.h"
#include "kernels/hopper/ws_gemm.cuh"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdlib>

namespace foxeval {

namespace {

using namespace cuda_types;  // bf16_lo/hi, pack_bf16x2, ...
namespace ws = hopper::ws_gemm;  // the tile shape

constexpr int kGroupRows = 32;  // row blocks a tile group spans

__device__ __forceinline__ uint32_t max_bf16x2(uint32_t a, uint32_t b) {
  uint32_t r;
  asm("max.bf16x2 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(b));
  return r;
}

// A finished tile's rows as one consumer thread holds them (rows row0 and row0 + 8, column tile
// cb). Integers only: pointers are formed where the results are stored (fewer live registers).
struct Pending {
  int row0, cb;
  int lab[2];  // the label's column minus n0 + 2tq for rows row0, row0 + 8 (-1: not this thread's)
  float m[2], s[2];
};

// The loss reduction as the GEMM's epilogue (the interface: kernels/hopper/ws_gemm.cuh). Results:
// partials [M, n_col] of (maximum, sum), label logits [M].
struct LossEpilogue {
  static constexpr int kChunks = 6;                               // epilogue steps, one a k-step
  static constexpr int kProducerRegs = 24, kConsumerRegs = 240;  // 256 x 240 + 128 x 24 <= 64K

  struct Tile {
    int rb, cb;  // row block, column tile
    __device__ int x_row() const { return rb * ws::kBM; }
    __device__ int w_row_lo() const { return cb * ws::kBN; }
    __device__ int w_row_hi() const { return cb * ws::kBN + ws::kHalfN; }
  };

  const int64_t* __restrict__ labels;
  float2* __restrict__ part;
  float* __restrict__ lab_logit;
  int M, V, n_col, n_row, n_k, n_tiles;
  uint32_t pk[64];  // the previous tile's logits, bf16 pairs: [32h + j] = columns 8j + 2tq, +1 of row h
  Pending p{};
  bool pending = false;

  __device__ LossEpilogue(const int64_t* __restrict__ labels_, float2* __restrict__ part_, float* __restrict__ lab_logit_,
                          int M_, int V_, int K)
      : labels(labels_), part(part_), lab_logit(lab_logit_), M(M_), V(V_), n_col((V_ + ws::kBN - 1) / ws::kBN),
        n_row((M_ + ws::kBM - 1) / ws::kBM), n_k(K / ws::kBK), n_tiles(n_row * n_col) {}

  // Groups of kGroupRows row blocks (the last may be smaller); rows fastest within a group.
  __device__ Tile tile_at(int tile) const {
    const int per_group = kGroupRows * n_col, grp = tile / per_group, r = tile - grp * per_group;
    const int rb0 = grp * kGroupRows, rows = min(kGroupRows, n_row - rb0);
    const int cb = r / rows;
    return {rb0 + (r - cb * rows), cb};
  }

  // Epilogue step c of a finished tile (c a constant after unrolling, so pk stays in registers).
  // Chunk 0 works on the packed pairs (bf16 maxima are exact), so the unpacked logits of chunks 1..4
  // are never live all at once.
  __device__ __forceinline__ void chunk(int c) {
    if (c == 0) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t mp = pk[32 * h], lp = 0;
#pragma unroll
        for (int j = 1; j < 32; ++j) mp = max_bf16x2(mp, pk[32 * h + j]);
        const int lab = p.lab[h];
        // The label's pair by masks, not selects: nvcc turns a select chain into an indexed load,
        // which puts pk in local memory.
#pragma unroll
        for (int j = 0; j < 32; ++j) lp |= pk[32 * h + j] & (0u - (uint32_t)((lab >> 3) == j));
        float mx = fmaxf(bf16_lo(mp), bf16_hi(mp));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        p.m[h] = mx;
        p.s[h] = 0.f;
        const int row = p.row0 + 8 * h;
        if (lab >= 0 && row < M) lab_logit[row] = (lab & 7) ? bf16_hi(lp) : bf16_lo(lp);
      }
    } else if (c <= 4) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float s = p.s[h];
#pragma unroll
        for (int j = 8 * (c - 1); j < 8 * c; ++j) {
          s += __expf(bf16_lo(pk[32 * h + j]) - p.m[h]);
          s += __expf(bf16_hi(pk[32 * h + j]) - p.m[h]);
        }
        p.s[h] = s;
      }
    } else {
      const int tq = threadIdx.x & 3;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float s = p.s[h];
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        s += __shfl_xor_sync(0xffffffffu, s, 2);
        const int row = p.row0 + 8 * h;
        if (tq == 0 && row < M) part[(int64_t)row * n_col + p.cb] = make_float2(p.m[h], s);
      }
    }
  }

  // The logits rounded to bf16 (as the two-kernel path stores them), those past the vocabulary
  // -inf, and where this thread's rows' labels fall.
  __device__ __forceinline__ void finish(const float (&acc)[128], const Tile& t, int row_in_tile, int tq) {
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      pk[j] = pack_bf16x2(acc[4 * j], acc[4 * j + 1]);
      pk[32 + j] = pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
    }
    pending = true;
    const int n0 = t.cb * ws::kBN, lim = V - n0 - 2 * tq;  // this thread's column 8j + e is in the vocabulary where 8j + e < lim
    if (lim < ws::kBN) {  // the last column tile: columns past the vocabulary count as -inf
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const int col = 8 * (i & 31);
        pk[i] = col >= lim ? 0xff80ff80u : col + 1 >= lim ? (pk[i] & 0xffffu) | 0xff800000u : pk[i];
      }
    }
    p.row0 = t.rb * ws::kBM + row_in_tile;
    p.cb = t.cb;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = p.row0 + 8 * h;
      const int64_t lab = row < M ? labels[row] : -1;
      const int rel = lab >= n0 && lab < V ? (int)(lab - n0) - 2 * tq : -1;  // the tile check below
      p.lab[h] = rel >= 0 && rel < ws::kBN && (rel & 7) < 2 ? rel : -1;
    }
  }
};

__global__ void __launch_bounds__(ws::kThreads, 1)
    lm_head_loss_kernel(const __grid_constant__ CUtensorMap tm_x, const __grid_constant__ CUtensorMap tm_w,
                        const int64_t* __restrict__ labels, float2* __restrict__ part, float* __restrict__ lab_logit,
                        int M, int V, int K) {
  LossEpilogue epi(labels, part, lab_logit, M, V, K);
  hopper::ws_gemm_main_loop(tm_x, tm_w, epi);
}

// A warp a row: its column tiles' partials merged in a fixed order, then label logit - log-sum-exp.
__global__ void __launch_bounds__(256) merge_rows_kernel(const float2* __restrict__ part, const float* __restrict__ lab_logit,
                                                         float* __restrict__ out, int M, int n_col) {
  const int row = blockIdx.x * 8 + (threadIdx.x >> 5), lane = threadIdx.x & 31;
  if (row >= M) return;
  float m = -INFINITY, s = 0.f;
  for (int i = lane; i < n_col; i += 32) {
    const float2 v = part[(int64_t)row * n_col + i];
    merge_max_sum(m, s, v.x, v.y);
  }
#pragma unroll
  for (int off = 16; off > 0; off >>= 1)
    merge_max_sum(m, s, __shfl_xor_sync(0xffffffffu, m, off), __shfl_xor_sync(0xffffffffu, s, off));
  if (lane == 0) out[row] = lab_logit[row] - (m + logf(s));
}


}  // namespace

bool lm_head_loss_supports(const at::Tensor& hidden, const at::Tensor& head, int64_t vocab) {
  if (!hidden.is_cuda() || !head.is_cuda() || hidden.device() != head.device() || head.scalar_type() != at::kBFloat16 ||
      head.dim() != 2 || !head.is_contiguous() || hidden.dim() < 1)
    return false;
  if (hidden.scalar_type() != at::kBFloat16 && hidden.scalar_type() != at::kFloat) return false;
  const int64_t K = hidden.size(-1);
  if (K == 0 || K % ws::kBK != 0 || head.size(1) != K || vocab < 1 || vocab > head.size(0) || head.size(0) >= (int64_t(1) << 31))
    return false;
  const int64_t M = hidden.numel() / K;
  const int64_t tiles = (M + ws::kBM - 1) / ws::kBM * ((vocab + ws::kBN - 1) / ws::kBN);
  // Rows, tiles and each CTA's k-steps (at most all tiles' k-steps) are counted in int.
  if (M < kLmHeadLossMinRows || tiles * (K / ws::kBK) >= (int64_t(1) << 31)) return false;
  if (!cuda_types::aligned(head.data_ptr(), 16)) return false;
  if (at::cuda::getDeviceProperties(hidden.device().index())->major != 9) return false;  // wgmma, setmaxnreg
  static const SwitchSlot on("FOXEVAL_LM_HEAD_LOSS");
  return on.on();
}

at::Tensor lm_head_token_logprobs(const at::Tensor& hidden, const at::Tensor& head, int64_t vocab,
                                  const at::Tensor& labels) {
  if (!lm_head_loss_supports(hidden, head, vocab)) return {};
  const int64_t K = hidden.size(-1), M = hidden.numel() / K;
  if (!labels.is_cuda() || labels.device() != hidden.device() || labels.scalar_type() != at::kLong || labels.numel() != M)
    return {};
  c10::cuda::CUDAGuard guard(hidden.device());
  // A fresh contiguous bf16 copy is aligned (the caching allocator's 512 bytes); a bf16 view is
  // copied when it is not contiguous.
  at::Tensor x = hidden.reshape({M, K}).to(at::kBFloat16).contiguous();
  if (!cuda_types::aligned(x.data_ptr(), 16)) x = x.clone();
  at::Tensor lab = labels.reshape({M}).contiguous();
  const int64_t n_col = (vocab + ws::kBN - 1) / ws::kBN;
  const auto f32 = hidden.options().dtype(at::kFloat);
  at::Tensor part = at::empty({M, n_col, 2}, f32);
  at::Tensor lab_logit = at::full({M}, std::nanf(""), f32);  // stays NaN for a label outside [0, vocab)
  at::Tensor out = at::empty({M}, f32);

  const CUtensorMap tm_x = matrix_tile_map(x.data_ptr(), true, M, K, K, ws::kBM, "lm_head_loss (hidden)");
  const CUtensorMap tm_w = matrix_tile_map(head.data_ptr(), true, head.size(0), K, K, ws::kHalfN, "lm_head_loss (head)");
  const int64_t n_tiles = (M + ws::kBM - 1) / ws::kBM * n_col;
  static const SwitchSlot cap("FOXEVAL_LM_HEAD_CTAS");  // tests: many tiles a CTA on small inputs
  const int grid = hopper::ws_gemm_grid(n_tiles, cap.value(), "FOXEVAL_LM_HEAD_CTAS");
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  hopper::ws_gemm_launch<lm_head_loss_kernel>(grid, stream, tm_x, tm_w, lab.data_ptr<int64_t>(),
                                              reinterpret_cast<float2*>(part.data_ptr<float>()), lab_logit.data_ptr<float>(),
                                              (int)M, (int)vocab, (int)K);
  merge_rows_kernel<<<(unsigned)((M + 7) / 8), 256, 0, stream>>>(reinterpret_cast<const float2*>(part.data_ptr<float>()),
                                                                 lab_logit.data_ptr<float>(), out.data_ptr<float>(),
                                                                 (int)M, (int)n_col);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out.view(labels.sizes());
}

}  // namespace foxeval
