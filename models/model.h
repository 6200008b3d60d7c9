// The one model interface every family implements, and every task talks to.
//
// A family turns token ids into final-norm hidden states; the engine (models/engine.h) turns
// those into log-likelihoods or tokens with the LM head, chunk by chunk, so full-vocabulary
// logits for a long sequence never exist. Tasks never see a family; families never see a task.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace foxeval {

// Numerics of a run. bfloat16 follows the official evaluation (fp32 weights under
// torch.autocast(bfloat16)): matmul inputs in bf16, norms, gates, softmax and loss in fp32.
struct RunOptions {
  std::string device = "cpu";  // "cpu" or "cuda" (or "cuda:N")
  std::string dtype = "float32";  // "float32" or "bfloat16"
  // FoX's adaptive computation pruning: "" = the checkpoint's config (log_pruning_tolerance, as
  // the official model), "none" = off, else a number (natural log of the tolerated softmax mass).
  std::string log_pruning_tolerance;
  // load_model prints the run's one-line announcement on stderr (model, digest, family, size,
  // device, dtype, settings): the commands that run a model set it (cli/run_options.h).
  bool announce = false;
  std::string chosen;    // how device and dtype were chosen ("auto: ..."), for the announcement
  std::string settings;  // the command's settings that change numbers, for the announcement
  // `foxeval bench pruning` only (no task command sets it): added to every FoX forget-gate bias at
  // load, f = sigmoid(w_f . x + b_f + shift), moving the checkpoint's gates toward fast decay (< 0)
  // or f near 1 (> 0). 0 loads the checkpoint as it is.
  double fgate_bias_shift = 0.0;
};

// Adaptive computation pruning as a model's attention ran it (CausalLM::pruning_stats), counted
// on the device by the CUDA kernels (kernels/forgetting_attention.h AttentionArgs::pruning_counts).
// The exact torch path (CPU, float32) never skips and counts nothing.
struct PruningStats {
  bool on = false;  // a FoX model with a log pruning tolerance (and a forget gate)
  double log_tolerance = 0.0;
  // Prefill: key blocks a query block (one CUDA block of the kernel) visits, from the block holding
  // seq_start to the causal end, and how many of them pruning skipped.
  int64_t key_blocks = 0, key_blocks_skipped = 0;
  // Decoding (at most 8 new tokens a forward): keys a query row attends to, and how many were skipped.
  int64_t decode_keys = 0, decode_keys_skipped = 0;
};

// What `foxeval info` prints and result files record about a model.
struct ModelInfo {
  std::string directory;
  std::string model_type;  // config.json's model_type
  std::string family;      // e.g. "FoX (Pro)", "Transformer (LLaMA)"
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t vocab_size = 0;
  int64_t num_parameters = 0;
  std::vector<std::pair<std::string, std::string>> settings;  // config values that matter
};

// Per-sequence decoding state of a family (KV cache, conv and recurrent states, ...).
// `seq_start[b]` left-padding tokens of row b are excluded exactly, as the official seq_start.
// Generation uses a state only to prefill one prompt (batch 1, in chunks) that SlotState::load
// then moves into a decoding slot; decoding itself runs on slots (decode_slots). Batched states
// with left padding are the official model's forward semantics, tested against it, not a
// generation path.
class DecodeState {
 public:
  virtual ~DecodeState() = default;
  virtual int64_t batch_size() const = 0;
  virtual int64_t length() const = 0;  // tokens consumed so far, padding included
  // A hint: the state will hold about `total_length` tokens (prompt + new tokens), so caches can
  // be allocated once at that size instead of growing. Families without caches ignore it.
  virtual void reserve(int64_t total_length) { (void)total_length; }
};

// Decoding slots: a fixed number of rows, each holding one sequence of up to `capacity` tokens
// in buffers allocated once. A decode step then has fixed shapes and addresses (what a CUDA graph
// replays) and a row whose sequence finished can take a new one (continuous batching). Each row
// keeps its own length on the device; a row past its capacity stops growing (its outputs are
// meaningless then, and nobody reads them).
class SlotState {
 public:
  virtual ~SlotState() = default;
  virtual int64_t slots() const = 0;
  virtual int64_t capacity() const = 0;
  // Moves the sequence held by `prefilled` (a batch-1 DecodeState of the same model, no left
  // padding, at most capacity() tokens) into row `slot`, replacing whatever it held.
  virtual void load(int64_t slot, DecodeState& prefilled) = 0;
  // Marks row `slot` empty, so an idle row costs as little as it can in later steps.
  virtual void clear(int64_t slot) { (void)slot; }
  // A fresh batch-1 DecodeState whose caches are row `slot`'s own memory, or null where the family
  // has none (fixed-size recurrent states). A prefill into it writes in place, so a long prompt's
  // cache never exists twice and load(slot, it) copies nothing large. `slot` must be free.
  virtual std::unique_ptr<DecodeState> prefill_state(int64_t slot) {
    (void)slot;
    return nullptr;
  }
};

// What a family's decay is, per layer and head, for analyses (`foxeval inspect`). The log decay
// of token t, log a_t <= 0, weighs what an earlier token j contributes at a later token i by
// exp(sum_{j<l<=i} log a_l): FoX's forget gate (log a = log_fgate), Mamba-2's SSM decay
// (log a = dt * A). HGRN2 has `channels` such decays per head (one per key dimension).
struct DecayInfo {
  std::string kind = "none";  // "forget_gate", "ssm_decay", "channel_forget_gate" or "none"
  std::string what;           // the decay (or why there is none) in words, for the result
  int64_t layers = 0, heads = 0, channels = 1;
  bool has_attention = false;  // softmax attention whose q/k a capture can take (FoX, Transformer)
  int64_t head_dim = 0;
};

// Receives what a forward pass computes anyway, as the family computes it (analyses; never used by
// the scoring paths). Set with CausalLM::set_capture; null (the default) costs nothing.
class ForwardCapture {
 public:
  virtual ~ForwardCapture() = default;
  // The log decay of layer `layer` for the tokens of this forward: [B, T, H] (or [B, T, H, channels])
  // fp32, on the model's device. A family that runs a long input in segments calls it once per
  // segment, in order.
  virtual void log_decay(int64_t layer, const at::Tensor& log_decay) = 0;
  // The (layer, head) whose q and k qk() should receive; {-1, -1}: none.
  virtual std::pair<int64_t, int64_t> qk_head() const { return {-1, -1}; }
  // q, k [B, T, head_dim] of that head as the attention reads them (norms, RoPE, token shift applied).
  virtual void qk(const at::Tensor& q, const at::Tensor& k) { (void)q, (void)k; }
};

class CausalLM {
 public:
  virtual ~CausalLM() = default;
  virtual const ModelInfo& info() const = 0;

  // The family's decay (kind "none": no decay to capture).
  virtual DecayInfo decay_info() const { return {}; }
  // forward() reports to `capture` while it is set (null: off). Only analyses set it, never while generating.
  void set_capture(ForwardCapture* capture) { capture_ = capture; }

  // Final-norm hidden states [B, T, hidden] for `input_ids` [B, T] (int64, on the model's
  // device). Without a state the rows are independent sequences starting at position 0.
  // With a state, the tokens continue the sequences it holds, and it advances by T.
  virtual at::Tensor forward(const at::Tensor& input_ids, DecodeState* state) = 0;

  // A fresh state for `batch` rows; `seq_start` [B] int64 = number of left-padding tokens
  // per row in what will be fed first (undefined tensor = no padding).
  virtual std::unique_ptr<DecodeState> new_state(int64_t batch, const at::Tensor& seq_start) = 0;

  // LM head [vocab, hidden] in the compute dtype, on the model's device.
  virtual const at::Tensor& lm_head() const = 0;

  virtual const RunOptions& options() const = 0;

  // Decoding slots (see SlotState), what generation decodes on (models/requests.h generate_until);
  // every family has them. nullptr: the model cannot generate with a cache (test fakes).
  virtual bool has_slots() const { return false; }
  virtual std::unique_ptr<SlotState> new_slots(int64_t slots, int64_t capacity) {
    (void)slots, (void)capacity;
    return nullptr;
  }
  // One token for every row of `slots`: ids [S] int64 on the model's device -> final-norm hidden
  // states [S, hidden] fp32. Device work only (no host reads, shapes independent of the data):
  // safe to capture in a CUDA graph. Every row advances by one token.
  virtual at::Tensor decode_slots(const at::Tensor& ids, SlotState& slots);
  // Device bytes one slot of `capacity` tokens takes (caches and states), for choosing how many
  // slots fit in memory.
  virtual int64_t slot_bytes(int64_t capacity) const {
    (void)capacity;
    return 0;
  }
  // Whether SlotState::prefill_state gives a state in the slot's own memory (a prefill then needs
  // no memory beyond the slots and its activations).
  virtual bool prefills_in_slot() const { return false; }

  // What adaptive computation pruning did in this model's forwards since it was loaded (on: false
  // where the model has no pruning). Reads the device counters: a synchronization, so call it once,
  // when a run is done, never per forward.
  virtual PruningStats pruning_stats() const { return {}; }

 protected:
  ForwardCapture* capture_ = nullptr;
};

}  // namespace foxeval
