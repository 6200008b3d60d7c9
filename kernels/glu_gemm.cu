// The gate_up projection with SwiGLU in its epilogue (glu_gemm.h): the persistent warp-specialized
// wgmma GEMM of kernels/hopper/ws_gemm.cuh with the gated linear unit as its epilogue.
//
// An output tile is 128 rows x 128 columns of act(gate) * up, computed from a 128 x 256
// accumulator tile whose columns 0..127 are gate rows n..n+127 of the weight and 128..255 the up
// rows I+n..I+n+127. Tiles go round-robin over the CTAs (one per SM), rows slowest: the CTAs
// working at once share a few 128-row blocks of x, and the whole weight (22 MB for the 760M
// models) stays in L2.
//
// The epilogue runs beside the next tile's products: at a tile's end a consumer thread only rounds
// its accumulators to bf16 pairs (as the two-kernel path stores the projection) and keeps them in
// registers (64 beside the 128 accumulators); during each of the next tile's first 8 k-steps it
// computes act(gate) * up for 4 of its 32 output pairs (torch's expf / IEEE-division forms, as
// fused_swiglu) and stores them, while that step's products run in the tensor cores. Earlier
// versions (kernels/NOTES.md): the whole gated unit at the tile's end idled the tensor cores ~3 us
// a tile (~20% slower than cuBLAS alone); a staging tile in shared memory drained by the producer
// warpgroup's spare warps left room for 3 stages only (10-13% slower than cuBLAS). Clusters of two
// multicasting the weight tile tie with one CTA once the remote slot release is relaxed (a
// `.release.cluster` arrive is a MEMBAR.ALL.GPU each k-step), so they are not used.
#include "kernels/glu_gemm.h"

#include "kernels/cuda_types.cuh"
#include "data/switches.h"
#include "kernels/hopper/tma_map.h"
#include "kernels/hopper/ws_gemm.cuh"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <cstdlib>
#include <type_traits>

namespace foxeval {

namespace {

using namespace cuda_types;  // bf16_lo/hi, pack_bf16x2, ...
namespace ws = hopper::ws_gemm;  // the tile shape

// A thread's 32 output pairs of a tile, in chunks of kGluChunkPairs, one chunk a k-step.
constexpr int kGluChunkPairs = 4;

// The gated linear unit as the GEMM's epilogue (the interface: kernels/hopper/ws_gemm.cuh).
template <bool SILU>
struct SwigluEpilogue {
  static constexpr int kChunks = 32 / kGluChunkPairs;
  // A consumer holds its 128 accumulators and the previous tile's 64 packed pairs at once.
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 256 x 232 + 128 x 40 <= 64K

  struct Tile {
    int m0, n0, up0;  // first row of x, first gate row and first up row of the weight
    __device__ int x_row() const { return m0; }
    __device__ int w_row_lo() const { return n0; }
    __device__ int w_row_hi() const { return up0; }
  };

  __nv_bfloat16* __restrict__ out;
  int M, I, n_col_tiles, n_k, n_tiles;
  uint32_t pk[64];                 // the previous tile's projection, bf16 pairs
  bool pending = false;            // whether pk holds a tile whose gated unit is not yet stored
  __nv_bfloat16 *o0 = nullptr, *o1 = nullptr;  // where its rows g and g + 8 go (null: past M)

  __device__ SwigluEpilogue(__nv_bfloat16* __restrict__ out_, int M_, int I_, int K)
      : out(out_), M(M_), I(I_), n_col_tiles(I_ / ws::kHalfN), n_k(K / ws::kBK), n_tiles((M_ + ws::kBM - 1) / ws::kBM * n_col_tiles) {}

  __device__ Tile tile_at(int tile) const {
    const int m0 = (tile / n_col_tiles) * ws::kBM, n0 = (tile % n_col_tiles) * ws::kHalfN;
    return {m0, n0, I + n0};
  }

  // act(gate) * up for chunk c of a finished tile's packed projection (pk: bf16 pairs, [0, 32) gate
  // and [32, 64) up; entry 16h + j holds columns 8j + 2tq, +1 of row h: rows g and g + 8), stored as
  // bf16 pairs at o[h] + 8j (null: the row is past M). Called with c a constant after unrolling, so
  // pk is indexed with constants and stays in registers, and the stores' offsets are immediates.
  __device__ __forceinline__ void chunk(int c) {
#pragma unroll
    for (int i = 0; i < kGluChunkPairs; ++i) {
      const int e = c * kGluChunkPairs + i, h = e / 16, j = e % 16;
      const float g0 = bf16_lo(pk[e]), g1 = bf16_hi(pk[e]), u0 = bf16_lo(pk[32 + e]), u1 = bf16_hi(pk[32 + e]);
      const uint32_t v = pack_bf16x2(__fmul_rn(SILU ? silu_torch(g0) : sigmoid_torch(g0), u0),
                                     __fmul_rn(SILU ? silu_torch(g1) : sigmoid_torch(g1), u1));
      __nv_bfloat16* o = h ? o1 : o0;
      if (o) *reinterpret_cast<uint32_t*>(o + 8 * j) = v;
    }
  }

  // The projection rounded to bf16 (as the two-kernel path stores it), gate column c beside up c.
  __device__ __forceinline__ void finish(const float (&acc)[128], const Tile& t, int row_in_tile, int tq) {
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      pk[j] = pack_bf16x2(acc[4 * j], acc[4 * j + 1]);
      pk[16 + j] = pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
      pk[32 + j] = pack_bf16x2(acc[4 * (16 + j)], acc[4 * (16 + j) + 1]);
      pk[48 + j] = pack_bf16x2(acc[4 * (16 + j) + 2], acc[4 * (16 + j) + 3]);
    }
    pending = true;
    const int row = t.m0 + row_in_tile;
    o0 = row < M ? out + (int64_t)row * I + t.n0 + 2 * tq : nullptr;
    o1 = row + 8 < M ? out + (int64_t)(row + 8) * I + t.n0 + 2 * tq : nullptr;
  }
};

template <bool SILU>
__global__ void __launch_bounds__(ws::kThreads, 1)
    glu_gemm_kernel(const __grid_constant__ CUtensorMap tm_x, const __grid_constant__ CUtensorMap tm_w,
                    __nv_bfloat16* __restrict__ out, int M, int I, int K) {
  SwigluEpilogue<SILU> epi(out, M, I, K);
  hopper::ws_gemm_main_loop(tm_x, tm_w, epi);
}


}  // namespace

bool glu_gemm_supports(const at::Tensor& x, const at::Tensor& weight) {
  if (!x.is_cuda() || !weight.is_cuda() || x.device() != weight.device() || x.scalar_type() != at::kBFloat16 ||
      weight.scalar_type() != at::kBFloat16 || weight.dim() != 2 || !weight.is_contiguous() || x.dim() < 1)
    return false;
  const int64_t K = x.size(-1), N2 = weight.size(0);
  if (K == 0 || K % ws::kBK != 0 || weight.size(1) != K || N2 % (2 * ws::kHalfN) != 0) return false;
  const int64_t M = x.numel() / K;
  // The kernel counts rows, tiles and each CTA's k-steps (at most all tiles' k-steps) in int.
  if (M < kGluGemmMinRows || (M + ws::kBM - 1) / ws::kBM * (N2 / 2 / ws::kHalfN) * (K / ws::kBK) >= (int64_t(1) << 31)) return false;
  // A contiguous x is read in place (a non-contiguous one is copied to a fresh, aligned tensor).
  if (!cuda_types::aligned(weight.data_ptr(), 16) || (x.is_contiguous() && !cuda_types::aligned(x.data_ptr(), 16))) return false;
  if (at::cuda::getDeviceProperties(x.device().index())->major != 9) return false;  // wgmma, setmaxnreg: sm_90a
  static const SwitchSlot on("FOXEVAL_GLU_GEMM");
  return on.on();
}

at::Tensor glu_gemm(const at::Tensor& x_in, const at::Tensor& weight, bool silu) {
  if (!glu_gemm_supports(x_in, weight)) return {};
  const int64_t K = x_in.size(-1), N2 = weight.size(0), I = N2 / 2, M = x_in.numel() / K;
  c10::cuda::CUDAGuard guard(x_in.device());
  at::Tensor x = x_in.reshape({M, K}).contiguous();
  auto shape = x_in.sizes().vec();
  shape.back() = I;
  at::Tensor out = at::empty(shape, x_in.options());  // the caching allocator aligns to 512 bytes

  const CUtensorMap tm_x = matrix_tile_map(x.data_ptr(), true, M, K, K, ws::kBM, "glu_gemm (x)");
  const CUtensorMap tm_w = matrix_tile_map(weight.data_ptr(), true, N2, K, K, ws::kHalfN, "glu_gemm (weight)");
  const int64_t n_tiles = (M + ws::kBM - 1) / ws::kBM * (I / ws::kHalfN);
  static const SwitchSlot cap("FOXEVAL_GLU_CTAS");  // tests: many tiles a CTA on small inputs
  const int grid = hopper::ws_gemm_grid(n_tiles, cap.value(), "FOXEVAL_GLU_CTAS");
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  auto* o = reinterpret_cast<__nv_bfloat16*>(out.data_ptr());
  if (silu)
    hopper::ws_gemm_launch<glu_gemm_kernel<true>>(grid, stream, tm_x, tm_w, o, (int)M, (int)I, (int)K);
  else
    hopper::ws_gemm_launch<glu_gemm_kernel<false>>(grid, stream, tm_x, tm_w, o, (int)M, (int)I, (int)K);
  return out;
}

}  // namespace foxeval
