// The greedy pick that ends a decode step (models/generation/slot_decoder.cpp): for each row s of the
// logits [S, V], the index of its first maximum, with torch.argmax's semantics (a NaN counts as
// the maximum; the first index wins ties), written to ids[s] and to tokens[s, column[0]].
// One kernel where the step ran three (argmax, the copy into ids, the index_copy into tokens):
// one block per row, launched as a programmatic dependent of the LM head (kernels/pdl.cuh).
#pragma once
#include <ATen/core/Tensor.h>

namespace foxeval {

// logits [S, V] bf16/fp16/fp32 CUDA with contiguous rows; ids [S] int64; tokens [S, W] int64
// contiguous; column [1] int64 (< W), all on the logits' device. False (nothing written) where the
// arguments do not fit that (the caller then runs the ATen ops) or FOXEVAL_GREEDY_PICK=0 (A/B).
bool greedy_pick_cuda(const at::Tensor& logits, at::Tensor& ids, at::Tensor& tokens, const at::Tensor& column);

}  // namespace foxeval
