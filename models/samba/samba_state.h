// Samba's decoding state and slots: per Mamba layer the conv history and the SSM state, per
// attention layer a ring buffer of the last W keys and values (models/samba/window_attention.h).
// Every size is fixed by the config: memory is flat in the context length.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "models/model.h"

namespace foxeval {
namespace samba {

struct LayerState {
  at::Tensor conv;          // Mamba: [B, K-1, E] fp32, the last K-1 conv inputs
  at::Tensor ssm;           // Mamba: [B, E, N] fp32
  at::Tensor keys, values;  // attention: [B, Hkv, W, D] compute dtype, token i in slot i % W
  std::vector<at::Tensor*> tensors() { return {&conv, &ssm, &keys, &values}; }
};

// A batch fed together: every row has consumed the same number of tokens (left padding included,
// masked by seq_start).
class SambaState : public DecodeState {
 public:
  SambaState(int64_t batch, at::Tensor seq_start, int64_t layers)
      : batch(batch), seq_start(std::move(seq_start)), layers(layers) {}
  int64_t batch_size() const override { return batch; }
  int64_t length() const override { return consumed; }

  int64_t batch;
  at::Tensor seq_start;  // [B] int64 on the device, or undefined
  std::vector<LayerState> layers;
  int64_t consumed = 0;
};

// Decoding slots: S rows of the same tensors (allocated once, addresses fixed), each row with its
// own token count `len` on the device (RoPE position and ring slot of its next token). The
// capacity bounds nothing (the ring keeps the last W tokens).
class SambaSlots : public SlotState {
 public:
  int64_t slots() const override { return S; }
  int64_t capacity() const override { return C; }
  void load(int64_t slot, DecodeState& prefilled) override;
  void clear(int64_t slot) override;

  int64_t S = 0, C = 0;
  at::Tensor len;                  // [S] int64
  at::Tensor ring_rows;            // [S * Hkv] int64: (s * Hkv + h) * W, the flat row of slot 0
  std::vector<LayerState> layers;  // [S, ...]
};

}  // namespace samba
}  // namespace foxeval
