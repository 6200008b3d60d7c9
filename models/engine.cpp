#include "models/engine.h"

#include <ATen/Functions.h>
#include <fmt/format.h>

#include <algorithm>

#include "data/errors.h"
#include "kernels/fused_loss.h"
#include "kernels/lm_head_loss.h"
#include "models/layers/layers.h"
#include "models/stage_timer.h"

namespace foxeval {

at::Tensor CausalLM::decode_slots(const at::Tensor& ids, SlotState& slots) {
  (void)ids, (void)slots;
  throw Error(fmt::format("{}: no decoding slots", info().family));
}

at::Tensor logprobs_from_hidden(const CausalLM& model, const at::Tensor& hidden, const at::Tensor& labels,
                                int64_t chunk) {
  const int64_t B = hidden.size(0), T = hidden.size(1);
  const at::Tensor& head = model.lm_head();
  at::Tensor lab = labels.to(hidden.device(), at::kLong);
  // Hopper, prefill-sized: the head with the loss in its epilogue, no logits in memory
  // (kernels/lm_head_loss.h); one launch for all rows, so `chunk` does not apply.
  if (lm_head_loss_supports(hidden, head, head.size(0))) {
    StageTimer timer(stage_timing_enabled() ? fmt::format("linear {}->{} +loss", head.size(1), head.size(0)) : std::string());
    at::Tensor fused = lm_head_token_logprobs(hidden, head, head.size(0), lab);
    if (fused.defined()) return fused.view({B, T});
  }
  // Default chunk: about 256M logits on a GPU (512 MB in bf16), 64M elsewhere. At 64k tokens of a
  // 50k vocabulary that is 13 lm_head matmuls instead of 50: bigger GEMMs run nearer peak.
  const int64_t budget = hidden.is_cuda() ? (int64_t(256) << 20) : (int64_t(64) << 20);
  if (chunk <= 0) chunk = std::max<int64_t>(1, budget / std::max<int64_t>(1, B * head.size(0)));
  at::Tensor out = at::empty({B, T}, hidden.options().dtype(at::kFloat));
  // On the GPU the head is padded to a multiple of 64 rows: with an odd vocabulary (50257) the
  // logits' row pitch is misaligned and cuBLAS falls back to a GEMM ~5x slower than the aligned one.
  const int64_t V = head.size(0);
  const at::Tensor padded_head =
      head.is_cuda() && V % 64 != 0 ? at::constant_pad_nd(head, {0, 0, 0, 64 - V % 64}) : head;
  for (int64_t t0 = 0; t0 < T; t0 += chunk) {
    const int64_t t1 = std::min(T, t0 + chunk);
    // Logits in the compute dtype (bf16 under autocast), cross-entropy in fp32.
    at::Tensor lg = foxeval::linear(hidden.slice(1, t0, t1), padded_head).narrow(-1, 0, V);
    at::Tensor lab_chunk = lab.slice(1, t0, t1);
    StageTimer timer("loss");  // the log-softmax and pick; the lm_head matmul is a "linear" stage
    at::Tensor fused = fused_token_logprobs(lg.flatten(0, 1), lab_chunk.reshape({-1}).contiguous());
    if (fused.defined()) {  // CUDA: one pass over the logits
      out.slice(1, t0, t1).copy_(fused.view({B, t1 - t0}));
      continue;
    }
    lg = lg.to(at::kFloat);
    at::Tensor picked = lg.gather(-1, lab_chunk.unsqueeze(-1)).squeeze(-1);
    out.slice(1, t0, t1).copy_(picked - at::logsumexp(lg, -1));
  }
  return out;
}

at::Tensor token_logprobs(CausalLM& model, const at::Tensor& input_ids, const at::Tensor& labels, DecodeState* state,
                          int64_t chunk) {
  at::Tensor hidden;
  {
    StageTimer timer("forward");
    hidden = model.forward(input_ids, state);
  }
  return logprobs_from_hidden(model, hidden, labels, chunk);
}

at::Tensor logits(CausalLM& model, const at::Tensor& input_ids, DecodeState* state) {
  at::Tensor hidden = model.forward(input_ids, state);
  return foxeval::linear(hidden, model.lm_head()).to(at::kFloat);
}

}  // namespace foxeval
