// NeoX rotary embedding (not interleaved), as FoX's official layer and fla's RotaryEmbedding (Samba)
// compute it: one definition for the families that rotate queries and keys.
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// x [B, T, H, D] rotated at positions [B, T] int64 with inv_freq fp32 [D/2]: cos/sin in fp32
// rounded through x's dtype, the rotation in fp32. The fused kernel on a GPU (the same bits),
// torch ops elsewhere.
at::Tensor rotary(const at::Tensor& x, const at::Tensor& positions, const at::Tensor& inv_freq);

}  // namespace foxeval
