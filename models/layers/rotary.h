// The NeoX rotary embedding both attention families apply (FoX/Transformer: models/fox; Samba's
// window attention: models/samba), in one place.
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// NeoX rotary embedding (fla's RotaryEmbedding, not interleaved) of x [B, T, H, D] at positions
// [B, T] int64 with inv_freq fp32 [D/2]: cos/sin in fp32 rounded through x's dtype, the rotation
// in fp32. The fused kernel on a GPU (the same bits, kernels/fused_glue.h), torch ops elsewhere.
at::Tensor rotary(const at::Tensor& x, const at::Tensor& positions, const at::Tensor& inv_freq);

}  // namespace foxeval
