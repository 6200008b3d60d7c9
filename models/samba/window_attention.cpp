#include "models/samba/window_attention.h"

#include <ATen/Functions.h>
#include <ATen/TensorOperators.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "data/errors.h"

namespace foxeval {
namespace samba {

at::Tensor window_attention(const AttentionArgs& a, int64_t window, int64_t score_budget) {
  if (a.q.dim() != 4 || a.k.dim() != 4 || a.v.sizes() != a.k.sizes() || a.k.size(0) != a.q.size(0) ||
      a.k.size(3) != a.q.size(3) || a.k.size(2) < a.q.size(2) || a.q.size(1) % a.k.size(1) != 0)
    throw Error(fmt::format("window_attention: q {} k {} v {} are not [B, H, Tq, D], [B, Hkv, Tk >= Tq, D]",
                            a.q.sizes().vec(), a.k.sizes().vec(), a.v.sizes().vec()));
  if (window < 1) throw Error(fmt::format("window_attention: window {} must be >= 1", window));
  if (a.cum_log_fgate.defined() || a.kv_len.defined()) throw Error("window_attention: no forget gate or kv_len here");
  (void)score_budget;  // the shared kernel (kernels/forgetting_attention.h) tiles on its own
  AttentionArgs args = a;
  args.window = window;
  return forgetting_attention(args);
}

at::Tensor ring_then_new(const at::Tensor& ring, const at::Tensor& fresh, int64_t consumed) {
  if (consumed == 0 || !ring.defined()) return fresh;
  const int64_t W = ring.size(2);
  return at::cat({at::roll(ring, {-(consumed % W)}, {2}), fresh}, 2);
}

at::Tensor ring_seq_start(const at::Tensor& seq_start, int64_t consumed, int64_t window, int64_t batch,
                          const at::Device& device) {
  if (consumed == 0) return seq_start;  // no ring in front: key j is token j
  // Key j is token consumed - W + j: valid from token max(0, seq_start).
  at::Tensor s = seq_start.defined() ? seq_start.to(device, at::kLong).clamp_min(0)
                                     : at::zeros({batch}, at::TensorOptions().device(device).dtype(at::kLong));
  return (s + (window - consumed)).clamp_min(0);
}

void ring_store(at::Tensor& ring, const at::Tensor& all, int64_t consumed_after, int64_t window) {
  const int64_t L = all.size(2);
  at::Tensor last = all.slice(2, std::max<int64_t>(0, L - window), L);
  if (last.size(2) < window) {  // a first chunk shorter than the window: the slots before it stay zero
    auto sizes = last.sizes().vec();
    sizes[2] = window - last.size(2);
    last = at::cat({at::zeros(sizes, last.options()), last}, 2);
  }
  // Element j is token consumed_after - W + j, whose slot is (j + consumed_after) % W.
  at::Tensor placed = at::roll(last, {consumed_after % window}, {2});
  if (ring.defined() && ring.sizes() == placed.sizes() && ring.scalar_type() == placed.scalar_type())
    ring.copy_(placed);
  else
    ring = placed.contiguous();
}

}  // namespace samba
}  // namespace foxeval
