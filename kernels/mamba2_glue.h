// Mamba-2's gated output norm in one CUDA kernel (models/mamba2/mamba2_model.cpp, `mixer`):
// the D skip, the gate and mamba_ssm's RMSNormGated(norm_before_gate=False), per row (b, t):
//
//   u = y[b, h, t, p] + xs[b, t, h, p] * D[h];   g = u * silu(z[b, t, h*P + p])
//   out[b, t, e] = g * rsqrt(mean_{group of e}(g^2) + eps) * weight[e]     (e = h*P + p)
//
// fp32 inside, out in `out_dtype` (the out_proj's dtype: the ATen chain's fp32 result would be
// cast to it by foxeval::linear). It replaces ~9 passes of the ATen chain (permuted add of the
// D skip, cast of z, SiLU, gate product, the norm, the cast) by one: y, xs and z read once,
// out written once. The elementwise steps are the ATen ops' (each product and sum rounded, no
// FMA, SiLU as x / (1 + exp(-x))); only the order of the group's sum of squares differs (a
// per-chunk sum, then a warp's strided sum and a shuffle tree), so results agree with the ATen
// chain to fp32 summation-order noise (a few ulp of fp32; see tests/test_recurrent_glue_cuda.cpp).
//
// Dispatch rule: mamba2_gated_norm_supports() says false for arguments the kernel does not take
// (CPU tensors, other dtypes or layouts, rows longer than 32768 / 8192 elements); the caller
// then runs the ATen chain.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace foxeval {

// y [B, H, T, P] fp32 with the last dim contiguous (any other strides: the scan's output);
// xs [B, T, H, P] fp32 with stride(3) == 1 and stride(2) == P (a view of the conv output);
// or xs undefined and y bf16 (ssd_chunked_cuda's output, the D skip included: u = y);
// D [H] fp32 contiguous; z [B, T, H*P] fp32/bf16/fp16 with the last dim contiguous; weight
// [H*P] fp32 contiguous; n_groups dividing H*P; out_dtype fp32/bf16/fp16; all on one device.
bool mamba2_gated_norm_supports(const at::Tensor& y, const at::Tensor& xs, const at::Tensor& D, const at::Tensor& z,
                                const at::Tensor& weight, int64_t n_groups, at::ScalarType out_dtype);

// Returns out [B, T, H*P] contiguous in out_dtype (call only where supported; throws otherwise).
// One block per row; no host synchronisation (CUDA-graph safe for decode steps).
at::Tensor mamba2_gated_norm(const at::Tensor& y, const at::Tensor& xs, const at::Tensor& D, const at::Tensor& z,
                             const at::Tensor& weight, int64_t n_groups, double eps, at::ScalarType out_dtype);

}  // namespace foxeval
