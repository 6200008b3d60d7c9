// The gate_up projection with SwiGLU in its epilogue (glu_gemm.h): a persistent warp-specialized
// wgmma GEMM for Hopper, in the shape of the prefill attention kernel (fa_prefill_ws.cuh).
//
// CTA: two consumer warpgroups and one producer warpgroup. An output tile is 128 rows x 128
// columns of act(gate) * up, computed from a 128 x 256 accumulator tile whose columns 0..127 are
// gate rows n..n+127 of the weight and 128..255 the up rows I+n..I+n+127 (64 rows a consumer
// warpgroup). K streams through a 3-deep ring of 64-wide stages (x: 128 x 64, weight: 2 x 128 x
// 64, 48 KB a stage), each slot with a "full" transaction barrier and an "empty" barrier the 256
// consumer threads arrive at once their wgmma read it. Tiles go round-robin over the CTAs (one per
// SM), rows slowest: the CTAs working at once share a few 128-row blocks of x, and the whole
// weight (22 MB for the 760M models) stays in L2.
//
// The epilogue runs beside the next tile's products: the consumers only round their accumulators
// to bf16 into a staging tile in shared memory (what the two-kernel path writes to memory) and go
// on; warps 1..3 of the producer warpgroup (warp 0 issues the copies) compute act(gate) * up from
// it and store 16-byte rows. The gated unit's expf and IEEE division cost ~3 us a tile, as long as
// a sixth of the tile's products: done by the consumers they left the tensor cores idle (the
// first version, ~20% slower than cuBLAS's GEMM alone; kernels/NOTES.md).
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

using cuda_types::sigmoid_torch;
using cuda_types::silu_torch;

constexpr int kBM = 128, kBK = 64, kHalfN = 128;  // rows, k-step and output columns of a tile
constexpr int kStages = 3;
constexpr int kATile = kBM * kBK * 2, kBTile = 2 * kHalfN * kBK * 2, kStage = kATile + kBTile;
// The staging tile: 128 rows of 256 bf16 (gate, up), rows 528 bytes apart so that the consumers'
// 4-byte stores (8 rows x 4 column pairs a warp) fall in 32 different banks.
constexpr int kStageRow = 2 * kHalfN + 8, kStaging = kBM * kStageRow * 2;
constexpr int kSmem = 1024 + kStages * kStage + kStaging + (2 * kStages + 2) * 8;
constexpr int kConsumerThreads = 256, kEpilogueThreads = 96, kThreads = kConsumerThreads + 128;
constexpr int kProducerRegs = 56, kConsumerRegs = 224;  // 256 x 224 + 128 x 56 <= 64K

template <bool SILU>
__global__ void __launch_bounds__(kThreads, 1)
    glu_gemm_kernel(const __grid_constant__ CUtensorMap tm_x, const __grid_constant__ CUtensorMap tm_w,
                    __nv_bfloat16* __restrict__ out, int M, int I, int K) {
  using namespace fa;
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (smem_u32(smem_raw) + 1023) & ~1023u;
  const uint32_t staging = base + kStages * kStage;
  const uint32_t bar0 = staging + kStaging;
  auto full = [&](int s) { return bar0 + 8 * s; };
  auto empty = [&](int s) { return bar0 + 8 * (kStages + s); };
  const uint32_t staged = bar0 + 16 * kStages, drained = staged + 8;  // the staging tile's full / empty
  __nv_bfloat16* stage_tile = reinterpret_cast<__nv_bfloat16*>(smem_raw + (staging - smem_u32(smem_raw)));
  const int n_col_tiles = I / kHalfN, n_tiles = ((M + kBM - 1) / kBM) * n_col_tiles, n_k = K / kBK;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), kConsumerThreads);
    }
    mbar_init(staged, kConsumerThreads);
    mbar_init(drained, kEpilogueThreads);
    mbar_fence_init();
  }
  __syncthreads();

  if (warp >= kConsumerThreads / 32) {  // producer warpgroup
    regs_dec<kProducerRegs>();
    if (warp == kConsumerThreads / 32) {
      if (lane != 0) return;
      int it = 0;  // k-steps loaded so far (the ring's position)
      for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x) {
        const int m0 = tile / n_col_tiles * kBM, n0 = tile % n_col_tiles * kHalfN;
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
    // Epilogue warps: act(gate) * up from the staging tile, as fused_swiglu computes it from the
    // bf16 projection; a thread takes 8 columns of a row (one 16-byte store).
    const int e = threadIdx.x - kConsumerThreads - 32;
    int t = 0;
    for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x, ++t) {
      const int m0 = tile / n_col_tiles * kBM, n0 = tile % n_col_tiles * kHalfN;
      mbar_wait(staged, t & 1);
      for (int i = e; i < kBM * (kHalfN / 8); i += kEpilogueThreads) {
        const int r = i / (kHalfN / 8), c = (i % (kHalfN / 8)) * 8;
        const uint4 gv = *reinterpret_cast<const uint4*>(stage_tile + r * kStageRow + c);
        const uint4 uv = *reinterpret_cast<const uint4*>(stage_tile + r * kStageRow + kHalfN + c);
        const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(&gv);
        const __nv_bfloat162* u2 = reinterpret_cast<const __nv_bfloat162*>(&uv);
        uint4 ov;
        __nv_bfloat162* o2 = reinterpret_cast<__nv_bfloat162*>(&ov);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float2 gf = __bfloat1622float2(g2[q]), uf = __bfloat1622float2(u2[q]);
          o2[q] = __floats2bfloat162_rn(__fmul_rn(SILU ? silu_torch(gf.x) : sigmoid_torch(gf.x), uf.x),
                                        __fmul_rn(SILU ? silu_torch(gf.y) : sigmoid_torch(gf.y), uf.y));
        }
        if (m0 + r < M) *reinterpret_cast<uint4*>(out + (int64_t)(m0 + r) * I + n0 + c) = ov;
      }
      mbar_arrive(drained);
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
  float acc[128];
  int it = 0, t = 0;
  for (int tile = blockIdx.x; tile < n_tiles; tile += gridDim.x, ++t) {
    for (int kb = 0; kb < n_k; ++kb, ++it) {
      const int s = it % kStages;
      mbar_wait(full(s), (it / kStages) & 1);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBK / 16; ++kk)  // 16 columns = 32 bytes within the 128-byte rows
        wgmma_ss_m64n256_bf16(acc, desc_at(da0, s * kStage + kk * 32), desc_at(db0, s * kStage + kk * 32), (kb | kk) ? 1 : 0);
      wgmma_commit();
      if (kb > 0) {  // the previous step's products are done: its slot is free
        wgmma_wait<1>();
        mbar_arrive(empty((it - 1) % kStages));
      }
    }
    wgmma_wait<0>();
    mbar_arrive(empty((it - 1) % kStages));
    // The projection rounded to bf16 into the staging tile, once the epilogue warps have drained it.
    if (t > 0) mbar_wait(drained, (t - 1) & 1);
    __nv_bfloat16* row0 = stage_tile + (wg * 64 + wi * 16 + g) * kStageRow + 2 * tq;
#pragma unroll
    for (int j = 0; j < 32; ++j) {
      *reinterpret_cast<__nv_bfloat162*>(row0 + 8 * j) = __floats2bfloat162_rn(acc[4 * j], acc[4 * j + 1]);
      *reinterpret_cast<__nv_bfloat162*>(row0 + 8 * kStageRow + 8 * j) = __floats2bfloat162_rn(acc[4 * j + 2], acc[4 * j + 3]);
    }
    mbar_arrive(staged);
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

}  // namespace

bool glu_gemm_supports(const at::Tensor& x, const at::Tensor& weight) {
  if (!x.is_cuda() || !weight.is_cuda() || x.device() != weight.device() || x.scalar_type() != at::kBFloat16 ||
      weight.scalar_type() != at::kBFloat16 || weight.dim() != 2 || !weight.is_contiguous() || x.dim() < 1)
    return false;
  const int64_t K = x.size(-1), N2 = weight.size(0);
  if (K == 0 || K % kBK != 0 || weight.size(1) != K || N2 % (2 * kHalfN) != 0) return false;
  const int64_t M = x.numel() / K;
  // The kernel counts rows and tiles in int.
  if (M < kGluGemmMinRows || (M + kBM - 1) / kBM * (N2 / 2 / kHalfN) >= (int64_t(1) << 31)) return false;
  // A contiguous x is read in place (a non-contiguous one is copied to a fresh, aligned tensor).
  if (!aligned16(weight.data_ptr()) || (x.is_contiguous() && !aligned16(x.data_ptr()))) return false;
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
    glu_gemm_kernel<SILU><<<grid, kThreads, kSmem, stream>>>(tm_x, tm_w, reinterpret_cast<__nv_bfloat16*>(out.data_ptr()),
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
