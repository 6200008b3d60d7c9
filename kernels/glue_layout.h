// Host-side layouts shared by the glue kernels (kernels/fused_glue.cu, kernels/fox_prefill_prep.cu):
// the fused input projection's column slices read in place, and the head-major buffers they
// write for the attention kernel.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace foxeval {

// The row stride of t read as [rows, size(-1)]: rows evenly spaced, the last dim contiguous, no
// overlap (a column slice of a wider matrix, such as one part of the fused input projection's
// output, qualifies); -1 otherwise, and the caller makes t contiguous.
inline int64_t uniform_row_stride(const at::Tensor& t) {
  if (t.dim() == 0 || t.stride(-1) != 1) return -1;
  int64_t rs = -1, span = 1;  // span: rows covered by the dims inside the current one
  for (int64_t d = t.dim() - 2; d >= 0; --d) {
    if (t.size(d) == 1) continue;  // a size-1 dim's stride is never used
    if (rs < 0) {
      rs = t.stride(d);
    } else if (t.stride(d) != rs * span) {
      return -1;
    }
    span *= t.size(d);
  }
  if (rs < 0) return t.size(-1);  // a single row
  return rs >= t.size(-1) ? rs : -1;
}

// A [B, T, H, Dh] view of a new head-major [B, H, T, Dh] buffer (the layout the attention
// kernel reads fastest).
inline at::Tensor empty_head_major(int64_t B, int64_t T, int64_t H, int64_t Dh, const at::TensorOptions& opts) {
  return at::empty({B, H, T, Dh}, opts.memory_format(at::MemoryFormat::Contiguous)).permute({0, 2, 1, 3});
}

}  // namespace foxeval
