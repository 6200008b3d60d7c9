#include "models/generation/slot_decoder.h"

#include <ATen/Functions.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <fmt/format.h>

#include <map>

#include "data/errors.h"
#include "kernels/greedy_pick.h"
#include "models/layers/layers.h"

namespace foxeval {
namespace {

// One capture stream per device for every decoder: each new pool stream would get its own cuBLAS
// workspace, kept for the life of the process.
c10::cuda::CUDAStream capture_stream(c10::DeviceIndex device) {
  static std::map<c10::DeviceIndex, c10::cuda::CUDAStream> streams;
  auto it = streams.find(device);
  if (it == streams.end()) it = streams.emplace(device, c10::cuda::getStreamFromPool(false, device)).first;
  return it->second;
}

}  // namespace

SlotDecoder::SlotDecoder(CausalLM& model, SlotState& slots, int64_t max_steps, bool use_graph)
    : model_(model), slots_(slots), max_steps_(max_steps) {
  if (max_steps < 1) throw Error(fmt::format("decoder: {} steps per run", max_steps));
  const at::Device device = model.lm_head().device();
  const auto i64 = at::TensorOptions().device(device).dtype(at::kLong);
  const int64_t S = slots.slots();
  ids_ = at::zeros({S}, i64);
  tokens_ = at::zeros({S, max_steps}, i64);
  column_ = at::zeros({1}, i64);
  if (!use_graph || !device.is_cuda()) return;
  c10::cuda::CUDAGuard guard(device);
  // Capture happens on a side stream; a first eager step there initialises cuBLAS handles and
  // workspaces and the allocator, which must not happen during capture.
  c10::cuda::CUDAStream stream = capture_stream(device.index());
  const c10::cuda::CUDAStream main = c10::cuda::getCurrentCUDAStream(device.index());
  at::cuda::CUDAEvent before;
  before.record(main);
  before.block(stream);
  {
    c10::cuda::CUDAStreamGuard on(stream);
    step();
    graph_ = std::make_unique<at::cuda::CUDAGraph>();
    graph_->capture_begin();
    try {
      step();
    } catch (...) {
      // E.g. out of memory inside the capture (the scheduler then retries with fewer slots): end
      // the capture, or the stream stays in capture mode and every later use of it fails.
      try {
        graph_->capture_end();
      } catch (...) {  // an invalidated capture reports an error on ending: it is ended all the same
      }
      graph_.reset();
      throw;
    }
    graph_->capture_end();
  }
  at::cuda::CUDAEvent after;
  after.record(stream);
  after.block(main);
}

SlotDecoder::~SlotDecoder() = default;

void SlotDecoder::step() {
  at::Tensor hidden = model_.decode_slots(ids_, slots_);  // [S, hidden] fp32
  // argmax of the compute-dtype logits: converting them to fp32 first changes no value (and no
  // tie: the first maximum wins either way) and is a launch and a [S, vocab] pass more.
  at::Tensor logits = foxeval::linear(hidden, model_.lm_head());
  if (!greedy_pick_cuda(logits, ids_, tokens_, column_)) {  // one kernel for the three ops below
    at::Tensor next = at::argmax(logits, -1);
    ids_.copy_(next);
    tokens_.index_copy_(1, column_, next.view({-1, 1}));
  }
  column_.add_(1);
}

void SlotDecoder::set_token(int64_t slot, int64_t token) { ids_.select(0, slot).fill_(token); }

std::vector<int64_t> SlotDecoder::run(int64_t steps) {
  if (steps < 1 || steps > max_steps_) throw Error(fmt::format("decoder: {} steps, at most {} per run", steps, max_steps_));
  column_.zero_();
  for (int64_t i = 0; i < steps; ++i) {
    if (graph_)
      graph_->replay();
    else
      step();
  }
  at::Tensor host = tokens_.narrow(1, 0, steps).to(at::kCPU).contiguous();  // waits for the steps
  const int64_t* p = host.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + host.numel());
}

std::vector<int64_t> SlotDecoder::run_sampled(const Pick& pick) {
  at::Tensor hidden = model_.decode_slots(ids_, slots_);  // [S, hidden] fp32
  at::Tensor logits = foxeval::linear(hidden, model_.lm_head()).to(at::kCPU, at::kFloat).contiguous();
  const int64_t S = logits.size(0), V = logits.size(1);
  std::vector<int64_t> next(static_cast<size_t>(S));
  for (int64_t s = 0; s < S; ++s) next[s] = pick(s, logits.data_ptr<float>() + s * V, V);
  ids_.copy_(at::tensor(next, at::kLong));
  return next;
}

}  // namespace foxeval
