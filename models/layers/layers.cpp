#include "models/layers/layers.h"

#include <ATen/Functions.h>
#include <fmt/format.h>

#include "data/errors.h"
#include "kernels/fused_glue.h"
#include "kernels/gemv.h"
#include "models/stage_timer.h"

namespace foxeval {

Loader make_loader(Checkpoint& checkpoint, const RunOptions& options) {
  at::ScalarType compute;
  if (options.dtype == "float32") {
    compute = at::kFloat;
  } else if (options.dtype == "bfloat16") {
    compute = at::kBFloat16;
  } else {
    throw Error(fmt::format("--dtype {}: expected float32 or bfloat16", options.dtype));
  }
  at::Device device(at::kCPU);
  try {
    device = at::Device(options.device);
  } catch (const std::exception&) {
    throw Error(fmt::format("--device {}: expected cpu or cuda[:N]", options.device));
  }
  if (device.is_cuda() && !at::hasCUDA())
    throw Error(fmt::format("--device {}: CUDA was asked for but no CUDA device is available", options.device));
  return Loader{checkpoint, device, compute};
}

at::Tensor Loader::fp32(const std::string& name, const std::vector<int64_t>& shape) const {
  return checkpoint.take(name, shape).to(device);
}

at::Tensor Loader::matmul_weight(const std::string& name, const std::vector<int64_t>& shape) const {
  // Cast once at load time: identical to autocast casting fp32 weights at every call.
  return checkpoint.take(name, shape).to(device, compute);
}

// One row (a batch-1 decode step) on the GPU takes the small-batch kernel (kernels/gemv.h: faster
// than cuBLAS there, slower at 4 rows), the rest cuBLAS. `bias` may be undefined.
static at::Tensor linear_in_weight_dtype(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  // Timed by shape ("linear 1536->6216"): the stage table shows which projection costs what.
  StageTimer timer(stage_timing_enabled()
                       ? fmt::format("linear {}->{}", weight.size(-1), weight.dim() > 1 ? weight.size(0) : 1)
                       : std::string());
  at::Tensor xc = x.to(weight.scalar_type());
  at::Tensor bc = bias.defined() ? bias.to(weight.scalar_type()) : at::Tensor();
  if (xc.is_cuda() && xc.dim() >= 1 && xc.size(-1) > 0 && xc.numel() == xc.size(-1)) {
    at::Tensor y = small_gemv(xc, weight, bc);
    if (y.defined()) return y;
  }
  return bc.defined() ? at::linear(xc, weight, bc) : at::linear(xc, weight);
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight) { return linear_in_weight_dtype(x, weight, at::Tensor()); }

at::Tensor linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias) {
  return linear_in_weight_dtype(x, weight, bias);
}

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps, at::ScalarType out_dtype) {
  if (x.is_cuda()) {  // one fused kernel (kernels/fused_glue.cu) where it supports the arguments
    at::Tensor y = fused_rms_norm(x, weight, eps, out_dtype);
    if (y.defined()) return y;
  }
  at::Tensor xf = x.to(at::kFloat);
  at::Tensor rstd = at::rsqrt(xf.square().mean({-1}, /*keepdim=*/true) + eps);
  return (xf * rstd * weight).to(out_dtype);
}

at::Tensor group_rms_norm(const at::Tensor& x, const at::Tensor& weight, int64_t num_groups, double eps,
                          at::ScalarType out_dtype, bool head_major) {
  if (x.is_cuda()) {
    at::Tensor y = fused_group_rms_norm(x, weight, num_groups, eps, out_dtype, at::Tensor(), head_major);
    if (!y.defined() && head_major) y = fused_group_rms_norm(x, weight, num_groups, eps, out_dtype);
    if (y.defined()) return y;
  }
  auto shape = x.sizes().vec();
  const int64_t d = shape.back();
  std::vector<int64_t> grouped(shape.begin(), shape.end() - 1);
  grouped.push_back(num_groups);
  grouped.push_back(d / num_groups);
  at::Tensor xf = x.to(at::kFloat).reshape(grouped);
  at::Tensor rstd = at::rsqrt(xf.square().mean({-1}, /*keepdim=*/true) + eps);
  return (xf * rstd).reshape(shape).mul(weight).to(out_dtype);
}

int64_t mlp_intermediate_size(const Config& config, int64_t hidden_size) {
  if (config.has("intermediate_size")) return config.get_int("intermediate_size");
  const double ratio = config.get_double("hidden_ratio", 4.0);
  const auto raw = static_cast<int64_t>(static_cast<double>(hidden_size) * ratio * 2.0 / 3.0);
  const int64_t width = 256 * ((raw + 255) / 256);
  // A tiny hidden_ratio rounds to no MLP at all (FLA's formula gives 0): a broken config, not a model.
  if (width < 1)
    config.fail("hidden_ratio", fmt::format("= {} gives an MLP width of 0 (hidden_size {} * hidden_ratio * 2/3 < 1)",
                                            ratio, hidden_size));
  return width;
}

ModelInfo basic_model_info(const Checkpoint& checkpoint, const std::string& family, int64_t hidden_size,
                           int64_t num_layers, int64_t vocab_size) {
  ModelInfo info;
  info.directory = checkpoint.directory();
  info.model_type = checkpoint.model_type();
  info.family = family;
  info.hidden_size = hidden_size;
  info.num_layers = num_layers;
  info.vocab_size = vocab_size;
  info.num_parameters = checkpoint.taken_parameters();
  return info;
}

int64_t count_elements(const std::vector<at::Tensor>& tensors) {
  int64_t n = 0;
  for (const auto& t : tensors) n += t.numel();
  return n;
}

}  // namespace foxeval
