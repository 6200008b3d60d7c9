// Mamba-1's selective scan (Gu & Dao, 2023) as fla's MambaMixer runs it (Samba's Mamba layers),
// with the output gate, per row b, channel e of E and state n of N:
//
//   h_t[e, n] = exp(dt_t[e] * A[e, n]) * h_{t-1}[e, n] + (dt_t[e] * B_t[n]) * x_t[e]
//   y_t[e]    = (sum_n h_t[e, n] * C_t[n] + D[e] * x_t[e]) * silu(z_t[e])
//
// Shapes (last dim contiguous, any row strides: B, C and z are column slices of projections):
//   x [B, T, E] (the conv output after SiLU), dt [B, T, E] fp32 (softplus and its bias applied),
//   A [E, N] fp32 (= -exp(A_log)), Bm, Cm [B, T, N], D [E] fp32, z [B, T, E]; x, Bm, Cm, z fp32,
//   bf16 or fp16 (read as they are, computed in fp32).
// The state h [B, E, N] is fp32: `state` undefined = zeros; on return it holds h_T. A defined
// contiguous fp32 state is updated IN PLACE by the CUDA kernel (decoding slots and CUDA graphs
// need fixed addresses); the reference replaces it.
// Returns y [B, T, E] in out_dtype. T = 1 is the decoding step (the state update), the same math.
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

struct SelectiveScanArgs {
  at::Tensor x, dt, A, Bm, Cm, D, z;
};

// Dispatches: the CUDA kernel where selective_scan_cuda_supports() says yes, else the reference.
at::Tensor selective_scan(const SelectiveScanArgs& args, at::Tensor& state, at::ScalarType out_dtype);

// Exact on any device: the official pure-PyTorch order (exp(A dt), (dt B) x, h = dA h + dBx,
// y = h . C, + D x, * silu(z)), fp32 throughout, the per-step products of a block of steps
// computed at once so a step is two small ops. The reference the kernel is tested against.
at::Tensor selective_scan_reference(const SelectiveScanArgs& args, at::Tensor& state, at::ScalarType out_dtype);

// Whether selective_scan_cuda takes these arguments: every tensor on one CUDA device, shapes as
// above, 1 <= N <= 32, dt/A/D fp32 contiguous, x/Bm/Cm/z fp32/bf16/fp16 with a contiguous last dim,
// state undefined or a contiguous fp32 [B, E, N], out_dtype fp32/bf16/fp16.
bool selective_scan_cuda_supports(const SelectiveScanArgs& args, const at::Tensor& state, at::ScalarType out_dtype);

// The CUDA kernel (kernels/selective_scan.cu): one thread per (row, channel, state), the N threads
// of a channel side by side in a warp (the sum over n by shuffles), sequential over time with the
// inputs of the next steps loaded ahead. The sum over n is a tree, not the reference's order.
at::Tensor selective_scan_cuda(const SelectiveScanArgs& args, at::Tensor& state, at::ScalarType out_dtype);

}  // namespace foxeval
