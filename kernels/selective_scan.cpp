// The selective scan's dispatch and its exact reference (see kernels/selective_scan.h).
#include "kernels/selective_scan.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "data/errors.h"

namespace foxeval {
namespace {

// Steps whose decays and inputs are formed at once: [B, kBlock, E, N] fp32 intermediates (12 MiB a
// row for the 760M's E = 3072, N = 16), a step is then a multiply and an add on [B, E, N].
constexpr int64_t kBlock = 64;

void check_shapes(const SelectiveScanArgs& a, const at::Tensor& state) {
  const bool ok = a.x.dim() == 3 && a.dt.sizes() == a.x.sizes() && a.z.sizes() == a.x.sizes() && a.A.dim() == 2 &&
                  a.A.size(0) == a.x.size(2) && a.Bm.dim() == 3 && a.Bm.size(0) == a.x.size(0) &&
                  a.Bm.size(1) == a.x.size(1) && a.Bm.size(2) == a.A.size(1) && a.Cm.sizes() == a.Bm.sizes() &&
                  a.D.dim() == 1 && a.D.size(0) == a.x.size(2);
  if (!ok)
    throw Error(
        fmt::format("selective_scan: shapes x {}, dt {}, A {}, B {}, C {}, D {}, z {} do not fit "
                    "x [B, T, E], A [E, N], B/C [B, T, N], D [E]",
                    a.x.sizes().vec(), a.dt.sizes().vec(), a.A.sizes().vec(), a.Bm.sizes().vec(), a.Cm.sizes().vec(),
                    a.D.sizes().vec(), a.z.sizes().vec()));
  if (state.defined() && (state.dim() != 3 || state.size(0) != a.x.size(0) || state.size(1) != a.x.size(2) ||
                          state.size(2) != a.A.size(1)))
    throw Error(fmt::format("selective_scan: state {} is not [B, E, N] = [{}, {}, {}]", state.sizes().vec(),
                            a.x.size(0), a.x.size(2), a.A.size(1)));
}

}  // namespace

at::Tensor selective_scan(const SelectiveScanArgs& args, at::Tensor& state, at::ScalarType out_dtype) {
  check_shapes(args, state);
  if (selective_scan_cuda_supports(args, state, out_dtype)) return selective_scan_cuda(args, state, out_dtype);
  return selective_scan_reference(args, state, out_dtype);
}

at::Tensor selective_scan_reference(const SelectiveScanArgs& a, at::Tensor& state, at::ScalarType out_dtype) {
  check_shapes(a, state);
  const int64_t B = a.x.size(0), T = a.x.size(1), E = a.x.size(2), N = a.A.size(1);
  const at::Tensor x = a.x.to(at::kFloat), dt = a.dt.to(at::kFloat), A = a.A.to(at::kFloat);
  const at::Tensor Bm = a.Bm.to(at::kFloat), Cm = a.Cm.to(at::kFloat);
  at::Tensor h = state.defined() ? state.to(at::kFloat).clone() : at::zeros({B, E, N}, x.options());
  at::Tensor y = at::empty({B, T, E}, x.options());
  for (int64_t t0 = 0; t0 < T; t0 += kBlock) {
    const int64_t L = std::min(kBlock, T - t0);
    const at::Tensor dtc = dt.narrow(1, t0, L).unsqueeze(-1);  // [B, L, E, 1]
    const at::Tensor dA = at::exp(A * dtc);                    // [B, L, E, N]
    const at::Tensor dBx = (dtc * Bm.narrow(1, t0, L).unsqueeze(2)) * x.narrow(1, t0, L).unsqueeze(-1);
    at::Tensor hs = at::empty({B, L, E, N}, x.options());
    for (int64_t i = 0; i < L; ++i) {
      h = dA.select(1, i) * h + dBx.select(1, i);
      hs.select(1, i).copy_(h);
    }
    y.narrow(1, t0, L).copy_(at::matmul(hs, Cm.narrow(1, t0, L).unsqueeze(-1)).squeeze(-1));
  }
  state = h;
  return ((y + x * a.D.to(at::kFloat)) * at::silu(a.z.to(at::kFloat))).to(out_dtype);
}

}  // namespace foxeval
