// Building blocks shared by the families, with the official evaluation's numerics:
// under bfloat16, matmul inputs are bf16 (as torch.autocast), norms/gates in fp32.
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "models/checkpoint/checkpoint.h"
#include "models/model.h"

namespace foxeval {

// Where and how a family computes: device, the matmul dtype, and the weights' source.
struct Loader {
  Checkpoint& checkpoint;
  at::Device device;
  at::ScalarType compute;  // kFloat or kBFloat16: the dtype of matmul inputs/outputs

  // A tensor for fp32 use (norm weights, biases of gates, ...), on the device.
  at::Tensor fp32(const std::string& name, const std::vector<int64_t>& shape) const;
  // A matmul weight [out, in] in the compute dtype, on the device.
  at::Tensor matmul_weight(const std::string& name, const std::vector<int64_t>& shape) const;
};

Loader make_loader(Checkpoint& checkpoint, const RunOptions& options);

// y = x W^T with x cast to W's dtype (autocast semantics).
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight);
at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// RMSNorm over the last dim, computed in fp32: x * rsqrt(mean(x^2) + eps) * weight.
// Returns `out_dtype` (the official kernels return the input dtype).
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, at::ScalarType out_dtype);
// RMSNorm per group of the last dim (num_groups groups), fp32 inside. head_major (x [B, T, D],
// a GPU): where the fused kernel runs, the result is [B, T, G, D / G] over a head-major buffer
// (kernels/fused_glue.h); elsewhere [B, T, D] as usual. Either views as [B, T, G, D / G].
at::Tensor group_rms_norm(const at::Tensor& x, const at::Tensor& weight, int64_t num_groups, double eps,
                          at::ScalarType out_dtype, bool head_major = false);

// The MLP width of the paper's models: config.json's intermediate_size, else the multiple of
// 256 at or above int(hidden * hidden_ratio * 2/3) (hidden_ratio default 4).
int64_t mlp_intermediate_size(const Config& config, int64_t hidden_size);

// The ModelInfo fields every family fills the same way (settings are the family's own).
ModelInfo basic_model_info(const Checkpoint& checkpoint, const std::string& family, int64_t hidden_size,
                           int64_t num_layers, int64_t vocab_size);

// Parameter count helper for ModelInfo.
int64_t count_elements(const std::vector<at::Tensor>& tensors);

}  // namespace foxeval
