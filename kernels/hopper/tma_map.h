// Tensor maps for the Hopper bulk-copy engine (TMA), shared by the attention and GEMM kernels.
#pragma once
#include <cudaTypedefs.h>

#include <cstdint>

namespace foxeval {

// cuTensorMapEncodeTiled from the driver, found through the runtime (no link to libcuda).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

// A tensor map over a row-major [rows, cols] bf16 (or fp16) matrix with `row_stride` elements
// between rows (a multiple of 8: TMA wants 16-byte strides) that copies boxes of box_rows x 64
// elements into 128B-swizzled shared memory (what the wgmma descriptors read K-major). Rows past
// `rows` are zero-filled. `who` names the caller in the error.
CUtensorMap matrix_tile_map(const void* ptr, bool bf16, int64_t rows, int64_t cols, int64_t row_stride, int box_rows,
                            const char* who);

}  // namespace foxeval
