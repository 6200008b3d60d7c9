#include "models/layers/rotary.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>

#include "kernels/fused_glue.h"

namespace foxeval {

at::Tensor rotary(const at::Tensor& x, const at::Tensor& positions, const at::Tensor& inv_freq) {
  if (x.is_cuda()) {
    at::Tensor y = fused_rotary(x, positions, inv_freq);
    if (y.defined()) return y;
  }
  at::Tensor freqs = positions.to(at::kFloat).unsqueeze(-1) * inv_freq;  // [B, T, D/2]
  at::Tensor cos = at::cos(freqs).to(x.scalar_type()).to(at::kFloat).unsqueeze(2);
  at::Tensor sin = at::sin(freqs).to(x.scalar_type()).to(at::kFloat).unsqueeze(2);
  at::Tensor xf = x.to(at::kFloat);
  const int64_t half = x.size(-1) / 2;
  at::Tensor x0 = xf.slice(-1, 0, half), x1 = xf.slice(-1, half);
  return at::cat({x0 * cos - x1 * sin, x0 * sin + x1 * cos}, -1).to(x.scalar_type());
}

}  // namespace foxeval
