// The persistent warp-specialized wgmma GEMM main loop both fused-epilogue GEMMs run (sm_90a):
// out-tile = x [M, K] (128 rows) times two 128-row blocks of a weight w [N, K] (both K-major, bf16),
// handed to an epilogue functor that reduces the 128 x 256 fp32 accumulator tile to its output.
// kernels/glu_gemm.cu (gate_up + SwiGLU) and kernels/lm_head_loss.cu (LM head + log-sum-exp) are
// its two epilogues; the loop and the ring are here once.
//
// CTA: two consumer warpgroups (64 rows each) and one producer warp. K streams through a 4-deep
// ring of 64-wide stages (x: 128 x 64, weight: 2 x 128 x 64, 48 KB a stage), each slot with a
// "full" transaction barrier and an "empty" barrier that lane 0 of each consumer warp arrives at
// once the warp's wgmma read it. Tiles go round-robin over the CTAs (one per SM); which tile is
// where (and so what stays in L2) is the epilogue's choice.
//
// The epilogue runs beside the next tile's products: at a tile's end a consumer thread only hands
// its accumulators to the epilogue (`finish`: round and keep them in registers), and during each of
// the next tile's first Epi::kChunks k-steps the epilogue does one chunk of the finished tile
// (`chunk(c)`), while that step's products run in the tensor cores; the last tile's chunks follow
// the loop (`flush`).
//
// In the wgmma m64n256 accumulator a thread holds, for j = 0..31, columns 8j + 2tq and
// 8j + 2tq + 1 of rows g and g + 8 of its warp's 16 (lane = 4g + tq).
//
// An epilogue Epi provides (all __device__, called with constants after unrolling where noted):
//   static constexpr int kChunks, kProducerRegs, kConsumerRegs;  // setmaxnreg: 256 x C + 128 x P <= 64K
//   int n_tiles, n_k;                     // output tiles, 64-wide k-steps
//   Tile tile_at(int tile) const;         // Tile: its x_row(), w_row_lo(), w_row_hi() (TMA rows)
//   bool pending;                         // holds a finished tile whose chunks are not yet done
//   void chunk(int c);                    // c in [0, kChunks), a constant
//   void finish(const float (&acc)[128], const Tile& t, int row_in_tile, int tq);  // sets pending
#pragma once
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/util/Exception.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "kernels/hopper/mbarrier.cuh"
#include "kernels/hopper/mma_sync.cuh"
#include "kernels/hopper/tma.cuh"
#include "kernels/hopper/wgmma.cuh"

namespace foxeval::hopper {

namespace ws_gemm {
constexpr int kBM = 128, kBK = 64, kHalfN = 128, kBN = 2 * kHalfN;  // rows, k-step, columns of a tile
constexpr int kStages = 4;
constexpr int kATile = kBM * kBK * 2, kBTile = kBN * kBK * 2, kStage = kATile + kBTile;
constexpr int kSmem = 1024 + kStages * kStage + 2 * kStages * 8;
constexpr int kConsumerThreads = 256, kThreads = kConsumerThreads + 128;
constexpr int kConsumerWarps = kConsumerThreads / 32;
}  // namespace ws_gemm

// The whole kernel body: a __global__ __launch_bounds__(ws_gemm::kThreads, 1) kernel of the
// epilogue's file makes its epilogue from its own parameters and calls this. (The kernels keep
// their parameter lists, with __restrict__, rather than a parameter struct.)
template <class Epi>
__device__ __forceinline__ void ws_gemm_main_loop(const CUtensorMap& tm_x, const CUtensorMap& tm_w, Epi& epi) {
  using namespace ws_gemm;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t bar0 = base + kStages * kStage;
  auto full = [&](int s) { return bar0 + 8 * s; };
  auto empty = [&](int s) { return bar0 + 8 * (kStages + s); };
  const int n_k = epi.n_k, n_tiles = epi.n_tiles;
  // This CTA's k-steps in all: the last kStages are never waited for by the producer, so their
  // slots are not released.
  const int my_tiles = (int)blockIdx.x < n_tiles ? (n_tiles - 1 - (int)blockIdx.x) / (int)gridDim.x + 1 : 0;
  const int last_release = my_tiles * n_k - kStages;
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
    regs_dec<Epi::kProducerRegs>();
    if (warp != kConsumerWarps || lane != 0) return;
    int it = 0;  // k-steps loaded so far (the ring's position)
    for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
      const auto t = epi.tile_at(tile);
      for (int kb = 0; kb < n_k; ++kb, ++it) {
        const int s = it % kStages;
        if (it >= kStages) mbar_wait(empty(s), ((it / kStages) + 1) & 1);  // the previous use's phase
        const uint32_t a = base + s * kStage, b = a + kATile;
        mbar_expect_tx(full(s), kStage);  // rows past the ends are zero-filled and still counted
        tma_load_2d(a, &tm_x, full(s), kb * kBK, t.x_row());
        tma_load_2d(b, &tm_w, full(s), kb * kBK, t.w_row_lo());
        tma_load_2d(b + kHalfN * 128, &tm_w, full(s), kb * kBK, t.w_row_hi());
      }
    }
    return;
  }

  // ---- consumers ----
  regs_inc<Epi::kConsumerRegs>();
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
    const auto t = epi.tile_at(tile);
    if (n_k >= Epi::kChunks) {
      // The first kChunks k-steps each run one chunk of the previous tile's epilogue while their
      // products are in the tensor cores.
#pragma unroll
      for (int c = 0; c < Epi::kChunks; ++c) {
        k_step(c);
        if (epi.pending) epi.chunk(c);
      }
      for (int kb = Epi::kChunks; kb < n_k; ++kb) k_step(kb);
    } else {  // fewer k-steps than chunks: the previous tile's epilogue first
      if (epi.pending) {
#pragma unroll
        for (int c = 0; c < Epi::kChunks; ++c) epi.chunk(c);
      }
      for (int kb = 0; kb < n_k; ++kb) k_step(kb);
    }
    wgmma_wait<0>();
    release(it - 1);
    epi.finish(acc, t, row_in_tile, tq);
  }
  if (epi.pending) {
#pragma unroll
    for (int c = 0; c < Epi::kChunks; ++c) epi.chunk(c);
  }
}

// The grid: one CTA an SM, fewer when there are fewer tiles; `cap`, when set, caps it at that many
// CTAs (tests: many tiles a CTA on small inputs). `cap_name` names the switch in the error.
inline int ws_gemm_grid(int64_t n_tiles, const char* cap, const char* cap_name) {
  int64_t ctas = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  if (cap) {
    char* end = nullptr;
    const long long n = std::strtoll(cap, &end, 10);
    TORCH_CHECK(end != cap && *end == '\0' && n >= 1, cap_name, " must be a whole number >= 1, got '", cap, "'");
    ctas = n;
  }
  return (int)std::min<int64_t>(n_tiles, ctas);
}

// Kernel<<<grid, ws_gemm::kThreads, ws_gemm::kSmem, stream>>>(args...), allowing the kernel its
// shared memory at its first launch (a template per kernel, so each kernel is configured once).
template <auto Kernel, typename... Args>
void ws_gemm_launch(int grid, cudaStream_t stream, Args&&... args) {
  static bool configured = false;
  if (!configured) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, ws_gemm::kSmem));
    configured = true;
  }
  Kernel<<<grid, ws_gemm::kThreads, ws_gemm::kSmem, stream>>>(std::forward<Args>(args)...);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace foxeval::hopper
