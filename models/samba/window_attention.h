// Samba's attention layers: sliding-window softmax attention with RoPE and grouped KV heads (the
// official samba Attention: flash_attn_func(causal=True, window_size=(W - 1, 0))), and its
// decoding cache, a ring buffer of W positions per layer (memory flat in the context length).
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

#include "kernels/forgetting_attention.h"

namespace foxeval {
namespace samba {

// flash-attn's window rule on forgetting_attention's arguments (q [B, H, Tq, D], k, v [B, Hkv,
// Tk, D], query i at key position p = Tk - Tq + i, seq_start: keys before it get no weight, no
// forget gate): the query at p sees keys max(0, p - W + 1) .. p. The one place Samba computes
// windowed attention: the shared kernels' window (AttentionArgs::window; the Hopper prefill kernels
// skip key blocks outside it, the torch path elsewhere is exact in fp32).
// score_budget: kept for the tests' signature; the shared kernels tile on their own.
at::Tensor window_attention(const AttentionArgs& args, int64_t window, int64_t score_budget = int64_t(64) << 20);

// The ring buffer of a decoding state whose rows share one token count `consumed` (a batch fed
// together; left padding is masked by seq_start, never skipped): ring [B, Hkv, W, D], the key of
// token index i in slot i % W. Returns the keys a chunk of new ones [B, Hkv, T, D] attends to,
// cat(the W ring slots oldest first, new) when consumed > 0 (key position of ring slot j:
// consumed - W + j; those below 0 never written), else new alone.
at::Tensor ring_then_new(const at::Tensor& ring, const at::Tensor& fresh, int64_t consumed);
// seq_start in the key index space of ring_then_new's result: keys of token index below
// max(0, seq_start) get no weight. Undefined when no key is excluded.
at::Tensor ring_seq_start(const at::Tensor& seq_start, int64_t consumed, int64_t window, int64_t batch,
                          const at::Device& device);
// The ring after the chunk: the last W keys of `all` (ring_then_new's result, which ends at token
// index consumed + T - 1) in their slots i % W; written into `ring` in place where it is defined.
void ring_store(at::Tensor& ring, const at::Tensor& all, int64_t consumed_after, int64_t window);

}  // namespace samba
}  // namespace foxeval
