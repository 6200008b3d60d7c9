// The gate_up projection with SwiGLU in its epilogue (glu_gemm.h): a persistent warp-specialized
// wgmma GEMM for Hopper, in the shape of the prefill attention kernel (fa_prefill_ws.cuh).
//
// CTA: two consumer warpgroups and one producer warp. An output tile is 128 rows x 128 columns of
// act(gate) * up, computed from a 128 x 256 accumulator tile whose columns 0..127 are gate rows
// n..n+127 of the weight and 128..255 the up rows I+n..I+n+127 (64 rows a consumer warpgroup). K
// streams through a 4-deep ring of 64-wide stages (x: 128 x 64, weight: 2 x 128 x 64, 48 KB a
// stage), each slot with a "full" transaction barrier and an "empty" barrier that lane 0 of each
// consumer warp arrives at once the warp's wgmma read it. Tiles go round-robin over the CTAs (one
// per SM), rows slowest: the CTAs working at once share a few 128-row blocks of x, and the whole
// weight (22 MB for the 760M models) stays in L2.
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
//
// In the wgmma m64n256 accumulator a thread holds, for j = 0..31, columns 8j + 2tq and
// 8j + 2tq + 1 of rows g and g + 8 of its warp's 16 (lane = 4g + tq).
#include "kernels/glu_gemm.h"

#include "kernels/cuda_types.cuh"
#include "kernels/env_switch.h"
#include "kernels/fa_common.cuh"
#include "kernels/fa_tma.cuh"
#include "kernels/fa_wgmma.cuh"
#include "kernels/tma_map.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_bf16.h>

#include <cstdlib>
#include <type_traits>

namespace foxeval {

namespace {

using cuda_types::bf16_hi;
using cuda_types::bf16_lo;
using cuda_types::pack_bf16x2;
using cuda_types::sigmoid_torch;
using cuda_types::silu_torch;

constexpr int kBM = 128, kBK = 64, kHalfN = 128;  // rows, k-step and output columns of a tile
constexpr int kStages = 4;
constexpr int kATile = kBM * kBK * 2, kBTile = 2 * kHalfN * kBK * 2, kStage = kATile + kBTile;
constexpr int kSmem = 1024 + kStages * kStage + 2 * kStages * 8;
constexpr int kConsumerThreads = 256, kGluThreads = kConsumerThreads + 128;
constexpr int kConsumerWarps = kConsumerThreads / 32;
// A consumer holds its 128 accumulators and the previous tile's 64 packed pairs at once.
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 256 x 232 + 128 x 40 <= 64K
// A thread's 32 output pairs of a tile, in chunks of kChunkPairs, one chunk a k-step.
constexpr int kChunkPairs = 4, kChunks = 32 / kChunkPairs;


// act(gate) * up for chunk c of a finished tile's packed projection (pk: bf16 pairs, [0, 32) gate
// and [32, 64) up; entry 16h + j holds columns 8j + 2tq, +1 of row h: rows g and g + 8), stored as
// bf16 pairs at o[h] + 8j (null: the row is past M). Called with c a constant after unrolling, so
// pk is indexed with constants and stays in registers, and the stores' offsets are immediates.
template <bool SILU>
__device__ __forceinline__ void glu_chunk(int c, const uint32_t (&pk)[64], __nv_bfloat16* o0, __nv_bfloat16* o1) {
#pragma unroll
  for (int i = 0; i < kChunkPairs; ++i) {
    const int e = c * kChunkPairs + i, h = e / 16, j = e % 16;
    const float g0 = bf16_lo(pk[e]), g1 = bf16_hi(pk[e]), u0 = bf16_lo(pk[32 + e]), u1 = bf16_hi(pk[32 + e]);
    const uint32_t v = pack_bf16x2(__fmul_rn(SILU ? silu_torch(g0) : sigmoid_torch(g0), u0),
                                   __fmul_rn(SILU ? silu_torch(g1) : sigmoid_torch(g1), u1));
    __nv_bfloat16* o = h ? o1 : o0;
    if (o) *reinterpret_cast<uint32_t*>(o + 8 * j) = v;
  }
}

template <bool SILU>
__global__ void __launch_bounds__(kGluThreads, 1)
    glu_gemm_kernel(const __grid_constant__ CUtensorMap tm_x, const __grid_constant__ CUtensorMap tm_w,
                    __nv_bfloat16* __restrict__ out, int M, int I, int K) {
  using namespace fa;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t bar0 = base + kStages * kStage;
  auto full = [&](int s) { return bar0 + 8 * s; };
  auto empty = [&](int s) { return bar0 + 8 * (kStages + s); };
  const int n_col_tiles = I / kHalfN, n_k = K / kBK;
  const int n_tiles = (M + kBM - 1) / kBM * n_col_tiles;
  // This CTA's k-steps in all: the last kStages are never waited for by the producer, so their
  // slots are not released.
  const int my_tiles = (int)blockIdx.x < n_tiles ? (n_tiles - 1 - (int)blockIdx.x) / (int)gridDim.x + 1 : 0;
  const int last_release = my_tiles * n_k - kStages;
  auto origin = [&](int tile, int& m0, int& n0) {
    m0 = (tile / n_col_tiles) * kBM;
    n0 = (tile % n_col_tiles) * kHalfN;
  };
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), kConsumerWarps);  // lane 0 of each consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();

  if (warp >= kConsumerWarps) {  // producer warpgroup: its first lane streams the stages
    regs_dec<kProducerRegs>();
    if (warp != kConsumerWarps || lane != 0) return;
    int it = 0;  // k-steps loaded so far (the ring's position)
    for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
      int m0, n0;
      origin(tile, m0, n0);
      for (int kb = 0; kb < n_k; ++kb, ++it) {
        const int s = it % kStages;
        if (it >= kStages) mbar_wait(empty(s), ((it / kStages) + 1) & 1);  // the previous use's phase
        const uint32_t a = base + s * kStage, b = a + kATile;
        mbar_expect_tx(full(s), kStage);  // rows past M are zero-filled and still counted
        tma_load_2d(a, &tm_x, full(s), kb * kBK, m0);
        tma_load_2d(b, &tm_w, full(s), kb * kBK, n0);                      // gate rows
        tma_load_2d(b + kHalfN * 128, &tm_w, full(s), kb * kBK, I + n0);  // up rows
      }
    }
    return;
  }

  // ---- consumers ----
  regs_inc<kConsumerRegs>();
  // Warp-uniform for the compiler (a shuffle), so the descriptors stay uniform (see fa_prefill_ws.cuh).
  const int wg = __shfl_sync(0xffffffff, warp >> 2, 0), wi = warp & 3, g = lane >> 2, tq = lane & 3;
  const uint64_t da0 = gmma_desc(base + wg * 64 * 128, 16, 1024), db0 = gmma_desc(base + kATile, 16, 1024);
  auto desc_at = [](uint64_t d, uint32_t bytes) {
    return (d & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)d + (bytes >> 4));
  };
  // k-step j's slot is free (this warp's products that read it are done).
  auto release = [&](int j) {
    if (j >= last_release) return;
    if (lane == 0) mbar_arrive(empty(j % kStages));
  };
  const int row_in_tile = wg * 64 + wi * 16 + g;
  float acc[128];
  uint32_t pk[64];                 // the previous tile's projection, bf16 pairs
  bool pending = false;            // whether pk holds a tile whose gated unit is not yet stored
  __nv_bfloat16 *o0 = nullptr, *o1 = nullptr;  // where its rows g and g + 8 go (null: past M)
  int it = 0;
  // One k-step of products; the previous step's slot is released once they are done.
  auto k_step = [&](int kb) {
    const int s = it % kStages;
    mbar_wait(full(s), (it / kStages) & 1);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk)  // 16 columns = 32 bytes within the 128-byte rows
      wgmma_ss_m64n256_bf16(acc, desc_at(da0, s * kStage + kk * 32), desc_at(db0, s * kStage + kk * 32), (kb | kk) ? 1 : 0);
    wgmma_commit();
    if (kb > 0) {
      wgmma_wait<1>();
      release(it - 1);
    }
    ++it;
  };
  for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
    int m0, n0;
    origin(tile, m0, n0);
    if (n_k >= kChunks) {
      // The first kChunks k-steps each run one chunk of the previous tile's gated unit while their
      // products are in the tensor cores.
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        k_step(c);
        if (pending) glu_chunk<SILU>(c, pk, o0, o1);
      }
      for (int kb = kChunks; kb < n_k; ++kb) k_step(kb);
    } else {  // fewer k-steps than chunks: the previous tile's unit first
      if (pending) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) glu_chunk<SILU>(c, pk, o0, o1);
      }
      for (int kb = 0; kb < n_k; ++kb) k_step(kb);
    }
    wgmma_wait<0>();
    release(it - 1);
    // The projection rounded to bf16 (as the two-kernel path stores it), gate column c beside up c.
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      pk[j] = pack_bf16x2(acc[4 * j], acc[4 * j + 1]);
      pk[16 + j] = pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
      pk[32 + j] = pack_bf16x2(acc[4 * (16 + j)], acc[4 * (16 + j) + 1]);
      pk[48 + j] = pack_bf16x2(acc[4 * (16 + j) + 2], acc[4 * (16 + j) + 3]);
    }
    pending = true;
    const int row = m0 + row_in_tile;
    o0 = row < M ? out + (int64_t)row * I + n0 + 2 * tq : nullptr;
    o1 = row + 8 < M ? out + (int64_t)(row + 8) * I + n0 + 2 * tq : nullptr;
  }
  if (pending) {
#pragma unroll
    for (int c = 0; c < kChunks; ++c) glu_chunk<SILU>(c, pk, o0, o1);
  }
}


}  // namespace

bool glu_gemm_supports(const at::Tensor& x, const at::Tensor& weight) {
  if (!x.is_cuda() || !weight.is_cuda() || x.device() != weight.device() || x.scalar_type() != at::kBFloat16 ||
      weight.scalar_type() != at::kBFloat16 || weight.dim() != 2 || !weight.is_contiguous() || x.dim() < 1)
    return false;
  const int64_t K = x.size(-1), N2 = weight.size(0);
  if (K == 0 || K % kBK != 0 || weight.size(1) != K || N2 % (2 * kHalfN) != 0) return false;
  const int64_t M = x.numel() / K;
  // The kernel counts rows, tiles and each CTA's k-steps (at most all tiles' k-steps) in int.
  if (M < kGluGemmMinRows || (M + kBM - 1) / kBM * (N2 / 2 / kHalfN) * (K / kBK) >= (int64_t(1) << 31)) return false;
  // A contiguous x is read in place (a non-contiguous one is copied to a fresh, aligned tensor).
  if (!cuda_types::aligned(weight.data_ptr(), 16) || (x.is_contiguous() && !cuda_types::aligned(x.data_ptr(), 16))) return false;
  if (at::cuda::getDeviceProperties(x.device().index())->major != 9) return false;  // wgmma, setmaxnreg: sm_90a
  return env_switch_on("FOXEVAL_GLU_GEMM");
}

at::Tensor glu_gemm(const at::Tensor& x_in, const at::Tensor& weight, bool silu) {
  if (!glu_gemm_supports(x_in, weight)) return {};
  const int64_t K = x_in.size(-1), N2 = weight.size(0), I = N2 / 2, M = x_in.numel() / K;
  c10::cuda::CUDAGuard guard(x_in.device());
  const cudaDeviceProp* props = at::cuda::getCurrentDeviceProperties();
  at::Tensor x = x_in.reshape({M, K}).contiguous();
  auto shape = x_in.sizes().vec();
  shape.back() = I;
  at::Tensor out = at::empty(shape, x_in.options());  // the caching allocator aligns to 512 bytes

  const CUtensorMap tm_x = matrix_tile_map(x.data_ptr(), true, M, K, K, kBM, "glu_gemm (x)");
  const CUtensorMap tm_w = matrix_tile_map(weight.data_ptr(), true, N2, K, K, kHalfN, "glu_gemm (weight)");
  const int64_t n_tiles = (M + kBM - 1) / kBM * (I / kHalfN);
  // One CTA an SM; FOXEVAL_GLU_CTAS=N caps the grid (tests: many tiles a CTA on small inputs).
  int64_t ctas = props->multiProcessorCount;
  if (const char* e = std::getenv("FOXEVAL_GLU_CTAS")) {
    char* end = nullptr;
    const long long n = std::strtoll(e, &end, 10);
    TORCH_CHECK(end != e && *end == '\0' && n >= 1, "FOXEVAL_GLU_CTAS must be a whole number >= 1, got '", e, "'");
    ctas = n;
  }
  const int grid = (int)std::min<int64_t>(n_tiles, ctas);
  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  auto launch = [&](auto silu_c) {
    constexpr bool SILU = decltype(silu_c)::value;
    static bool configured = false;  // per instantiation
    if (!configured) {
      C10_CUDA_CHECK(cudaFuncSetAttribute(glu_gemm_kernel<SILU>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
      configured = true;
    }
    glu_gemm_kernel<SILU><<<grid, kGluThreads, kSmem, stream>>>(tm_x, tm_w, reinterpret_cast<__nv_bfloat16*>(out.data_ptr()),
                                                             (int)M, (int)I, (int)K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  };
  if (silu)
    launch(std::true_type{});
  else
    launch(std::false_type{});
  return out;
}

}  // namespace foxeval
