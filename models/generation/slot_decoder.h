// Decode steps over decoding slots (model.h's SlotState): greedy ones launch-free on the GPU, and
// sampled ones (run_sampled) whose tokens the host picks.
//
// A step feeds each row its current token, takes the argmax of the new logits (fp32, ties to the
// lowest id as torch.argmax), makes it the row's next input and writes it to a token buffer on
// the device. The host looks at the buffer only every few steps, so the GPU runs ahead. On CUDA
// the whole step (every layer, the LM head, the argmax, the bookkeeping) is captured once into a
// CUDA graph and replayed: one launch per token instead of a few hundred.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/model.h"

namespace at::cuda {
struct CUDAGraph;
}

namespace foxeval {

class SlotDecoder {
 public:
  // `max_steps`: the most steps one run() takes (the token buffer's width). use_graph: capture
  // and replay a CUDA graph (CUDA models only; ignored on the CPU). Capturing runs one step on
  // the slots first (as warm-up), so create the decoder before loading sequences into them.
  SlotDecoder(CausalLM& model, SlotState& slots, int64_t max_steps, bool use_graph);
  ~SlotDecoder();

  // The token row `slot` is fed at the next step (the one its prefill chose).
  void set_token(int64_t slot, int64_t token);
  // `steps` (1..max_steps) decode steps for every row; returns their tokens on the host,
  // [slots, steps] int64 (row-major), column j = the token chosen at step j.
  std::vector<int64_t> run(int64_t steps);
  // One step whose tokens the host picks: `pick(slot, logits, vocab)` gets row `slot`'s fp32 logits
  // (the LM head in the compute dtype, then fp32) and returns its next token (any id for an idle
  // row). Returns the S tokens, also fed at the next step. Eager: the pick needs the host.
  using Pick = std::function<int64_t(int64_t slot, const float* logits, int64_t vocab)>;
  std::vector<int64_t> run_sampled(const Pick& pick);
  bool graphed() const { return graph_ != nullptr; }

 private:
  void step();

  CausalLM& model_;
  SlotState& slots_;
  int64_t max_steps_;
  at::Tensor ids_;     // [S] int64: the next input of every row
  at::Tensor tokens_;  // [S, max_steps] int64
  at::Tensor column_;  // [1] int64: where the next step writes in tokens_
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
};

}  // namespace foxeval
