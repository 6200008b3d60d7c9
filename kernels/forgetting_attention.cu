// CUDA Forgetting Attention: host side (argument checks, dispatch, launches).
//
// Kernels (design and measurements in kernels/NOTES.md):
//   fa_prefill_ws.cuh  Hopper prefill (sm_90): a TMA producer warpgroup feeding wgmma consumer
//                      warpgroups through mbarrier rings (FlashAttention-3 layout); the default;
//   fa_prefill.cuh     FlashAttention-2 style mma.sync prefill, for GPUs other than sm_90;
//   fa_decode.cuh      flash-decoding (split along the keys) for Tq <= kDecodeMaxTq.
// FOXEVAL_FA_IMPL=mma|ws forces the prefill kernel (tests run both on an H100).
//
// Sliding window (args.window = W, FaParams::window): key_block_range starts a query block's keys
// at the block holding its first query's p - W + 1 (blocks wholly before it are never loaded), and
// the blocks that hold a window edge are masked like the diagonal one; decode starts each row's
// keys at p - W + 1.
//
// Adaptive computation pruning (args.adaptive_threshold [B, H], natural-log units, off when
// undefined): a key block (prefill, BN keys) or key (decode) is skipped when the decay bias
// c_i - c_j is below the threshold thr for every query i of the block; the block holding the
// diagonal is never skipped. Since log f <= 0, c is non-increasing and the skipped keys form a
// prefix. Error bound: with the logits |scale * q_i.k_j| <= R (R = scale*max|q|*max|k|), each
// skipped key has unnormalized weight <= exp(R + thr) while the diagonal key alone keeps
// weight >= exp(-R), so the skipped softmax mass is eps <= N * exp(2R + thr) (N = number of
// skipped keys <= Tk), and ||o_pruned - o||_2 <= 2 * eps * max_j ||v_j||_2. The official
// "auto" threshold thr = -(2R + ln Tk) + tol gives eps <= exp(tol).
// args.pruning_counts (optional): one thread per CUDA block adds its key blocks (prefill) or keys
// (decode) in range and the skipped prefix of them with integer atomics; a null pointer costs one
// branch per CUDA block.
#include "kernels/forgetting_attention.h"

#include "data/switches.h"
#include "kernels/fa_decode.cuh"
#include "kernels/fa_prefill.cuh"
#include "kernels/fa_prefill_ws.cuh"
#include "kernels/hopper/tma_map.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>
#include <cudaTypedefs.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>

namespace foxeval {

namespace {

constexpr int kDecodeMaxTq = 8;
#ifndef FA_PREFILL_BN
#define FA_PREFILL_BN(D) ((D) == 128 ? 32 : 64)
#endif

bool aligned16(const at::Tensor& t) {
  if (t.stride(3) != 1) return false;
  if (reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 != 0) return false;
  for (int i = 0; i < 3; ++i)
    if (t.size(i) > 1 && t.stride(i) % 8 != 0) return false;
  return true;
}

template <typename T, int D, bool GATE>
void launch_prefill(const fa::FaParams& p, cudaStream_t stream) {
  // 4 warps x 32 query rows (two m16 tiles per warp), 64 keys per block; 2 CTAs per SM.
  constexpr int NW = 4, MT = 2, BM = NW * 16 * MT, BN = FA_PREFILL_BN(D);
  constexpr int smem = (BM + 4 * BN) * D * (int)sizeof(T);
  auto kernel = fa::fa_prefill_kernel<T, D, BM, BN, NW, MT, GATE>;
  static bool configured = false;  // per instantiation
  if (!configured) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    configured = true;
  }
  dim3 grid((p.Tq + BM - 1) / BM, p.H, p.B);
  kernel<<<grid, NW * 32, smem, stream>>>(p);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---- warp-specialized TMA prefill (fa_prefill_ws.cuh) ----

// Tensor map over a [B, heads, T, D] operand (element strides sb, sh, st; last dim contiguous)
// that copies boxes of `rows` x 64 elements into 128B-swizzled shared memory. Rows past T are
// zero-filled by the hardware.
CUtensorMap head_tile_map(const void* ptr, bool bf16, int64_t B, int64_t heads, int64_t T, int64_t D, int64_t sb, int64_t sh,
                          int64_t st, int rows) {
  CUtensorMap map;
  // A dimension of size 1 may carry any stride; give it a valid (16-byte multiple) one.
  auto stride_bytes = [](int64_t size, int64_t stride, int64_t packed) { return (cuuint64_t)((size > 1 ? stride : packed) * 2); };
  const cuuint64_t dims[4] = {(cuuint64_t)D, (cuuint64_t)T, (cuuint64_t)heads, (cuuint64_t)B};
  const cuuint64_t strides[3] = {stride_bytes(T, st, D), stride_bytes(heads, sh, T * D), stride_bytes(B, sb, heads * T * D)};
  const cuuint32_t box[4] = {64, (cuuint32_t)rows, 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = tensor_map_encoder()(&map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 4,
                                          const_cast<void*>(ptr), dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  TORCH_CHECK(r == CUDA_SUCCESS, "forgetting_attention_cuda: cuTensorMapEncodeTiled failed (", (int)r, ") for a [", B, ",", heads,
              ",", T, ",", D, "] operand with strides (", sb, ",", sh, ",", st, ")");
  return map;
}

// cpad[bh, t] = c[b, h, t] * log2(e) for t < Tk, 0 up to tpad: the gate values in the layout
// the bulk copies need (16-byte aligned rows, whole blocks).
__global__ void pack_gate_kernel(const float* __restrict__ c, int64_t c_sb, int64_t c_sh, int64_t c_st, int H, int Tk, int tpad,
                                 float* __restrict__ cpad) {
  const int bh = blockIdx.y, b = bh / H, h = bh % H;
  for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < tpad; t += gridDim.x * blockDim.x)
    cpad[(int64_t)bh * tpad + t] = t < Tk ? c[b * c_sb + h * c_sh + t * c_st] * fa::kLog2e : 0.f;
}

// Query heads per launch group: as many as keep their K/V (Tk * D * 4 bytes per kv head) within
// about half of an H100's 50 MB L2; FOXEVAL_FA_GROUP overrides (tuning).
int64_t l2_head_group(int64_t Tk, int64_t D, int64_t q_per_kv) {
  static const SwitchSlot group("FOXEVAL_FA_GROUP");
  const char* e = group.value();
  const int64_t forced = e ? std::max<int64_t>(1, std::atoll(e)) : int64_t(0);
  if (forced > 0) return forced;
  const int64_t kv_bytes = std::max<int64_t>(1, Tk * D * 4);
  return std::max<int64_t>(1, (int64_t(24) << 20) / kv_bytes * q_per_kv);
}

// The ws kernel's flags (fa_prefill_ws.cuh): the optimistic softmax, tied frames and the skipping
// of dead key blocks are on; FOXEVAL_FA_OPT=0 / FOXEVAL_FA_TIE=0 / FOXEVAL_FA_SKIP=0 turn one off
// (A/B timing; tests run every path in one process through SwitchOverride).
int ws_flags() {
  static const SwitchSlot opt("FOXEVAL_FA_OPT"), tie("FOXEVAL_FA_TIE"), skip("FOXEVAL_FA_SKIP");
  return (opt.on() ? fa::kWsOptimistic : 0) | (tie.on() ? fa::kWsTie : 0) | (skip.on() ? fa::kWsSkipDead : 0);
}

// CTAs of the persistent ws kernel: one per SM. FOXEVAL_FA_PERSIST=0 gives every query tile its
// own CTA (the launch before the tile queue; A/B timing); FOXEVAL_FA_CTAS=N caps the grid at N
// (tests: many tiles a CTA on small inputs).
int64_t ws_grid(int64_t n_tiles) {
  static const SwitchSlot persist("FOXEVAL_FA_PERSIST"), cap("FOXEVAL_FA_CTAS");
  if (!persist.on()) return n_tiles;
  int64_t ctas = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  if (const char* e = cap.value()) {
    char* end = nullptr;
    const long long n = std::strtoll(e, &end, 10);
    TORCH_CHECK(end != e && *end == '\0' && n >= 1, "FOXEVAL_FA_CTAS must be a whole number >= 1, got '", e, "'");
    ctas = n;
  }
  return std::min(n_tiles, ctas);
}

template <typename T, int D, int BN, int STAGES, int NCWG, bool PINGPONG, bool GATE, bool GTC = false>
void launch_prefill_ws_cfg(const fa::FaParams& p, cudaStream_t stream, const at::TensorOptions& fopts) {
  using L = fa::WsLayout<NCWG>;
  constexpr int smem = fa::WsSmem<D, BN, STAGES, NCWG, GTC>::kBytes;
  auto kernel = fa::fa_prefill_ws_kernel<T, D, BN, STAGES, NCWG, PINGPONG, GATE, GTC>;
  static bool configured = false;
  if (!configured) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    configured = true;
  }
  constexpr bool bf16 = std::is_same_v<T, __nv_bfloat16>;
  constexpr int BM = L::kBM;
  const CUtensorMap tq = head_tile_map(p.q, bf16, p.B, p.H, p.Tq, D, p.q_sb, p.q_sh, p.q_st, BM);
  const CUtensorMap tk = head_tile_map(p.k, bf16, p.B, p.Hkv, p.Tk, D, p.k_sb, p.k_sh, p.k_st, BN);
  const CUtensorMap tv = head_tile_map(p.v, bf16, p.B, p.Hkv, p.Tk, D, p.v_sb, p.v_sh, p.v_st, BN);
  const int64_t n_m = (p.Tq + BM - 1) / BM, n_bh = (int64_t)p.B * p.H, n_tiles = n_m * n_bh;
  TORCH_CHECK(n_tiles < (int64_t(1) << 30), "forgetting_attention_cuda: too many query blocks (", n_tiles, ")");
  const int64_t grid = ws_grid(n_tiles);
  // One scratch allocation: the tile queue's counter (zeroed here, 16 bytes) and the packed gate.
  const int tpad = (p.Tk + BN - 1) / BN * BN;
  const int64_t gate_floats = GATE ? n_bh * tpad : 0;
  at::Tensor scratch = at::empty({4 + gate_floats}, fopts);
  int* counter = reinterpret_cast<int*>(scratch.data_ptr<float>());
  float* cpad = GATE ? scratch.data_ptr<float>() + 4 : nullptr;
  if (grid < n_tiles) C10_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(int), stream));
  if (GATE) {
    pack_gate_kernel<<<dim3((tpad + 255) / 256 < 64 ? (tpad + 255) / 256 : 64, p.B * p.H), 256, 0, stream>>>(
        p.c, p.c_sb, p.c_sh, p.c_st, p.H, p.Tk, tpad, cpad);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  const int group = (int)std::min<int64_t>(n_bh, l2_head_group(p.Tk, D, p.H / p.Hkv));
  kernel<<<(unsigned)grid, L::kThreads, smem, stream>>>(p, tq, tk, tv, cpad, tpad, group, ws_flags(), counter);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

// Layouts (measurements in kernels/NOTES.md): head dim 64 runs 3 consumer warpgroups (192 query
// rows share each K/V block) in ping-pong; head dim 128 needs 240 registers per consumer thread,
// so it runs 2 warpgroups, without ping-pong (slower there). K/V stages: 4 at head dim 64 and 3 at
// 128 (232,112 of the 232,448 bytes of shared memory a block may have; Q then has one buffer,
// two at head dim 64): 1-2% faster in the 760M models at 64k than 3 and 2 (same-call A/B,
// 2026-11-25).
//
// The gate of bf16 head dim 64 (the FoX models) rides on the tensor cores (GTC: S = Q K^T gets one
// more k-step that adds each key's gate term; fa_prefill_ws.cuh), which leaves the softmax as
// short as without a gate. FOXEVAL_FA_GTC=0 takes the ALU column gate instead (A/B; read at every
// launch). Head dim 128 has no shared memory left for the gate operands; fp16 could not hold the
// gate terms (up to ~1e4 / sl2).
template <typename T, int D, bool GATE>
void launch_prefill_ws(const fa::FaParams& p, cudaStream_t stream, const at::TensorOptions& fopts) {
  if constexpr (D == 64) {
    if constexpr (GATE && std::is_same_v<T, __nv_bfloat16>) {
      static const SwitchSlot gtc("FOXEVAL_FA_GTC");
      if (gtc.on()) return launch_prefill_ws_cfg<T, D, 128, 4, 3, true, GATE, true>(p, stream, fopts);
    }
    launch_prefill_ws_cfg<T, D, 128, 4, 3, true, GATE>(p, stream, fopts);
  } else {
    launch_prefill_ws_cfg<T, D, 128, 3, 2, false, GATE>(p, stream, fopts);
  }
}

// Prefill kernel choice. Default on sm_90: the warp-specialized TMA kernel (ws); elsewhere the
// mma.sync kernel. FOXEVAL_FA_IMPL=mma|ws forces one (tests run both on an H100).
enum class Prefill { mma, ws };
Prefill prefill_impl() {
  static const SwitchSlot impl("FOXEVAL_FA_IMPL");
  const char* e = impl.value();
  const int forced = e && std::strcmp(e, "mma") == 0 ? 0 : e && std::strcmp(e, "ws") == 0 ? 1 : -1;
  const auto* prop = at::cuda::getCurrentDeviceProperties();
  if (prop->major != 9) return Prefill::mma;
  if (forced >= 0) return static_cast<Prefill>(forced);
  return Prefill::ws;
}

// Fewest keys a decode split takes: 128 gives a batch-1 step at a 1k context 11 splits a head (a
// CTA walks its keys in two rounds of loads, not four): 807 tokens/s at batch 1 x 1k on the H100,
// 785 with 256; 64 was no better (829 vs 835 with the 2-chunk GEMV). FOXEVAL_DECODE_SPLIT_KEYS=
// 64|256 for A/B timing.
int min_split_keys() {
  static const SwitchSlot keys("FOXEVAL_DECODE_SPLIT_KEYS");
  const char* v = keys.value();
  return v && std::strcmp(v, "256") == 0 ? 256 : v && std::strcmp(v, "64") == 0 ? 64 : 128;
}

template <typename T, int D, bool GATE>
void launch_decode(fa::FaParams& p, cudaStream_t stream, const at::TensorOptions& fopts) {
  const int rows = p.B * p.H * p.Tq;
  const int sms = at::cuda::getCurrentDeviceProperties()->multiProcessorCount;
  // Enough CTAs for ~4 per SM, each split at least min_split_keys() keys.
  const int min_keys = min_split_keys();
  int splits = (4 * sms + rows - 1) / rows;
  splits = std::max(1, std::min(splits, (p.Tk + min_keys - 1) / min_keys));
  int len = (p.Tk + splits - 1) / splits;
  len = (len + 63) / 64 * 64;
  splits = (p.Tk + len - 1) / len;
  p.num_splits = splits;
  p.split_len = len;
  at::Tensor o_part, ml_part;
  if (splits > 1) {
    o_part = at::empty({(int64_t)rows * splits * D}, fopts);
    ml_part = at::empty({(int64_t)rows * splits * 2}, fopts);
    p.o_part = o_part.data_ptr<float>();
    p.ml_part = ml_part.data_ptr<float>();
  }
  launch_dependent(fa::fa_decode_kernel<T, D, GATE>, dim3(rows, splits), dim3(128), 0, stream, p);
  if (splits > 1) launch_dependent(fa::fa_decode_combine_kernel<T, D>, dim3(rows), dim3(D), 0, stream, p);
}

template <typename T, int D>
void dispatch(fa::FaParams& p, bool gate, bool decode, cudaStream_t stream, const at::TensorOptions& fopts) {
  if (decode) {
    if (gate) launch_decode<T, D, true>(p, stream, fopts);
    else launch_decode<T, D, false>(p, stream, fopts);
  } else {
    const Prefill impl = prefill_impl();
    if (impl == Prefill::ws) {
      if (gate) launch_prefill_ws<T, D, true>(p, stream, fopts);
      else launch_prefill_ws<T, D, false>(p, stream, fopts);
    } else {
      if (gate) launch_prefill<T, D, true>(p, stream);
      else launch_prefill<T, D, false>(p, stream);
    }
  }
}

}  // namespace

const char* forgetting_attention_prefill_impl() {
  switch (prefill_impl()) {
    case Prefill::ws: return "ws";
    default: return "mma";
  }
}

bool forgetting_attention_cuda_supports(const AttentionArgs& a) {
  const auto& q = a.q;
  const auto& k = a.k;
  const auto& v = a.v;
  if (!q.defined() || !k.defined() || !v.defined()) return false;
  if (!q.is_cuda() || !k.is_cuda() || !v.is_cuda()) return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  const auto st = q.scalar_type();
  if (st != at::kBFloat16 && st != at::kHalf) return false;
  if (k.scalar_type() != st || v.scalar_type() != st) return false;
  const int64_t B = q.size(0), H = q.size(1), Tq = q.size(2), D = q.size(3);
  const int64_t Hkv = k.size(1), Tk = k.size(2);
  if (D != 64 && D != 128) return false;
  if (k.size(0) != B || v.size(0) != B || v.size(1) != Hkv || v.size(2) != Tk) return false;
  if (k.size(3) != D || v.size(3) != D) return false;
  if (Hkv == 0 || H % Hkv != 0 || Tq > Tk || Tq == 0) return false;
  if (Tk >= (int64_t(1) << 31) - 256) return false;
  if (q.get_device() != k.get_device() || q.get_device() != v.get_device()) return false;
  if (a.cum_log_fgate.defined()) {
    const auto& c = a.cum_log_fgate;
    if (!c.is_cuda() || c.scalar_type() != at::kFloat || c.dim() != 3) return false;
    if (c.size(0) != B || c.size(1) != H || c.size(2) != Tk) return false;
  }
  if (a.seq_start.defined()) {
    const auto& s = a.seq_start;
    if (!s.is_cuda() || s.scalar_type() != at::kLong || s.dim() != 1 || s.size(0) != B) return false;
  }
  if (a.kv_len.defined()) {
    const auto& n = a.kv_len;
    if (Tq > kDecodeMaxTq) return false;
    if (!n.is_cuda() || n.scalar_type() != at::kLong || n.dim() != 1 || n.size(0) != B) return false;
  }
  if (a.window < 0) return false;
  if (a.adaptive_threshold.defined()) {
    const auto& t = a.adaptive_threshold;
    if (!a.cum_log_fgate.defined()) return false;
    if (!t.is_cuda() || t.scalar_type() != at::kFloat || t.dim() != 2) return false;
    if (t.size(0) != B || t.size(1) != H) return false;
  }
  return true;
}

at::Tensor forgetting_attention_cuda(const AttentionArgs& a) {
  TORCH_CHECK(forgetting_attention_cuda_supports(a), "forgetting_attention_cuda: unsupported arguments");
  c10::cuda::CUDAGuard guard(a.q.device());
  at::Tensor q = aligned16(a.q) ? a.q : a.q.contiguous();
  at::Tensor k = aligned16(a.k) ? a.k : a.k.contiguous();
  at::Tensor v = aligned16(a.v) ? a.v : a.v.contiguous();
  const int B = q.size(0), H = q.size(1), Tq = q.size(2), D = q.size(3);
  const int Hkv = k.size(1), Tk = k.size(2);
  const bool decode = Tq <= kDecodeMaxTq;
  // Prefill writes o as [B, Tq, H, D] in memory (returned as its [B, H, Tq, D] view), which is
  // the layout the output projection reads: the caller's transpose back is free.
  at::Tensor out = decode ? at::empty({B, H, Tq, D}, q.options()) : at::empty({B, Tq, H, D}, q.options()).transpose(1, 2);
  if (B == 0 || H == 0) return out;

  fa::FaParams p{};
  p.q = q.data_ptr();
  p.k = k.data_ptr();
  p.v = v.data_ptr();
  p.o = out.data_ptr();
  p.o_sb = out.stride(0); p.o_sh = out.stride(1); p.o_st = out.stride(2);
  p.q_sb = q.stride(0); p.q_sh = q.stride(1); p.q_st = q.stride(2);
  p.k_sb = k.stride(0); p.k_sh = k.stride(1); p.k_st = k.stride(2);
  p.v_sb = v.stride(0); p.v_sh = v.stride(1); p.v_st = v.stride(2);
  at::Tensor c, ss, thr;
  const bool gate = a.cum_log_fgate.defined();
  if (gate) {
    c = a.cum_log_fgate;
    p.c = c.data_ptr<float>();
    p.c_sb = c.stride(0); p.c_sh = c.stride(1); p.c_st = c.stride(2);
  }
  if (a.seq_start.defined()) {
    ss = a.seq_start.contiguous();
    p.seq_start = ss.data_ptr<int64_t>();
  }
  at::Tensor kv_len;
  if (a.kv_len.defined()) {
    kv_len = a.kv_len.contiguous();
    p.kv_len = kv_len.data_ptr<int64_t>();
  }
  if (a.adaptive_threshold.defined()) {
    thr = a.adaptive_threshold;
    p.threshold = thr.data_ptr<float>();
    p.thr_sb = thr.stride(0); p.thr_sh = thr.stride(1);
  }
  if (a.pruning_counts.defined()) {
    const auto& n = a.pruning_counts;
    TORCH_CHECK(n.is_cuda() && n.get_device() == q.get_device() && n.scalar_type() == at::kLong && n.numel() == 4 &&
                    n.is_contiguous(),
                "forgetting_attention_cuda: pruning_counts must be a contiguous int64 [4] tensor on ", q.device(), ", not ",
                n.scalar_type(), " ", n.sizes(), " on ", n.device());
    p.prune_counts = reinterpret_cast<unsigned long long*>(n.data_ptr<int64_t>());
  }
  p.B = B; p.H = H; p.Hkv = Hkv; p.Tq = Tq; p.Tk = Tk;
  // A window at least Tk long bounds nothing (and a window past 2^31 would not fit an int).
  p.window = a.window > 0 && a.window < Tk ? (int)a.window : 0;
  const double scale = a.scale > 0.0 ? a.scale : 1.0 / std::sqrt((double)D);
  p.scale_log2 = (float)(scale * 1.4426950408889634);

  const auto stream = at::cuda::getCurrentCUDAStream().stream();
  const auto fopts = q.options().dtype(at::kFloat);
  if (q.scalar_type() == at::kBFloat16) {
    if (D == 64) dispatch<__nv_bfloat16, 64>(p, gate, decode, stream, fopts);
    else dispatch<__nv_bfloat16, 128>(p, gate, decode, stream, fopts);
  } else {
    if (D == 64) dispatch<__half, 64>(p, gate, decode, stream, fopts);
    else dispatch<__half, 128>(p, gate, decode, stream, fopts);
  }
  return out;
}

}  // namespace foxeval
