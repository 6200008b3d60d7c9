// Forgetting Attention dispatch, and the exact torch-ops path used on the CPU, for float32,
// and as the reference the CUDA kernels are tested against.
#include <ATen/Functions.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "data/errors.h"
#include "kernels/forgetting_attention.h"

namespace foxeval {
namespace {

void check_args(const AttentionArgs& a) {
  auto fail = [](const std::string& what) { throw Error("forgetting_attention: " + what); };
  if (a.q.dim() != 4 || a.k.dim() != 4 || a.v.dim() != 4) fail("q, k, v must be [B, H, T, D]");
  const int64_t B = a.q.size(0), H = a.q.size(1), Tq = a.q.size(2), D = a.q.size(3);
  const int64_t Hkv = a.k.size(1), Tk = a.k.size(2);
  if (a.k.size(0) != B || a.v.size(0) != B || a.k.size(3) != D || a.v.sizes() != a.k.sizes())
    fail(fmt::format("shape mismatch: q {} k {} v {}", a.q.sizes().vec(), a.k.sizes().vec(), a.v.sizes().vec()));
  if (Tq > Tk) fail(fmt::format("seq_q {} > seq_k {}", Tq, Tk));
  if (Hkv == 0 || H % Hkv != 0) fail(fmt::format("{} query heads are not a multiple of {} KV heads", H, Hkv));
  if (a.cum_log_fgate.defined() &&
      (a.cum_log_fgate.dim() != 3 || a.cum_log_fgate.size(0) != B || a.cum_log_fgate.size(1) != H ||
       a.cum_log_fgate.size(2) != Tk || a.cum_log_fgate.scalar_type() != at::kFloat))
    fail(fmt::format("cum_log_fgate must be float32 [B, H, Tk] = [{}, {}, {}]", B, H, Tk));
  if (a.seq_start.defined() && (a.seq_start.numel() != B || a.seq_start.scalar_type() != at::kLong))
    fail("seq_start must be int64 [B]");
  if (a.kv_len.defined() && (a.kv_len.numel() != B || a.kv_len.scalar_type() != at::kLong))
    fail("kv_len must be int64 [B]");
  if (a.kv_len.defined() && Tq > 8) fail(fmt::format("kv_len is for decoding (at most 8 queries), not {}", Tq));
  if (a.window < 0) fail(fmt::format("window {} is negative (0 = none, W >= 1 = keys p-W+1..p)", a.window));
}

// Decoding against fixed-capacity caches holding kv_len[b] keys per row. Only tensor ops (no
// host reads of the lengths), so it can run inside a CUDA graph. Scores over the whole capacity.
at::Tensor attention_with_kv_len(const AttentionArgs& a, const at::Tensor& k, const at::Tensor& v, double scale) {
  const int64_t B = a.q.size(0), H = a.q.size(1), Tq = a.q.size(2), Tk = a.k.size(2);
  const auto lopts = a.q.options().dtype(at::kLong);
  at::Tensor n = a.kv_len.to(a.q.device()).clamp(Tq, Tk).view({B, 1, 1, 1});
  at::Tensor query_pos = n - Tq + at::arange(Tq, lopts).view({1, 1, Tq, 1});     // [B, 1, Tq, 1]
  at::Tensor key_pos = at::arange(Tk, lopts).view({1, 1, 1, Tk});
  at::Tensor scores = at::matmul(a.q.to(at::kFloat), k.transpose(-1, -2)).mul_(scale);  // [B, H, Tq, Tk]
  if (a.cum_log_fgate.defined()) {
    at::Tensor idx = query_pos.view({B, 1, Tq}).expand({B, H, Tq});
    at::Tensor c_q = at::gather(a.cum_log_fgate, 2, idx).unsqueeze(-1);
    scores.add_(c_q - a.cum_log_fgate.unsqueeze(-2));
  }
  at::Tensor masked = key_pos > query_pos;
  if (a.window > 0) masked = masked.logical_or(key_pos <= query_pos - a.window);
  if (a.seq_start.defined()) masked = masked.logical_or(key_pos < a.seq_start.to(a.q.device()).view({B, 1, 1, 1}));
  scores.masked_fill_(masked, -std::numeric_limits<float>::infinity());
  return at::matmul(at::softmax(scores, -1).nan_to_num_(0.0), v).to(a.q.scalar_type());
}

}  // namespace

at::Tensor forgetting_attention(const AttentionArgs& args) {
  check_args(args);
  if (args.q.is_cuda() && forgetting_attention_cuda_supports(args)) return forgetting_attention_cuda(args);
  return forgetting_attention_torch(args);
}

at::Tensor sliding_window_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t window,
                                    double scale) {
  if (window < 1) throw Error(fmt::format("sliding_window_attention: window {} must be at least 1", window));
  AttentionArgs a;
  a.q = q;
  a.k = k;
  a.v = v;
  a.window = window;
  a.scale = scale;
  return forgetting_attention(a);
}

at::Tensor forgetting_attention_torch(const AttentionArgs& a) {
  check_args(a);
  const int64_t B = a.q.size(0), H = a.q.size(1), Tq = a.q.size(2), D = a.q.size(3);
  const int64_t Hkv = a.k.size(1), Tk = a.k.size(2);
  const int64_t offset = Tk - Tq;  // key position of query 0
  const double scale = a.scale > 0 ? a.scale : 1.0 / std::sqrt(static_cast<double>(D));

  // Grouped KV heads: query head h reads KV head h / (H / Hkv).
  at::Tensor k = a.k.to(at::kFloat), v = a.v.to(at::kFloat);
  if (Hkv != H) {
    k = k.unsqueeze(2).expand({B, Hkv, H / Hkv, Tk, D}).reshape({B, H, Tk, D});
    v = v.unsqueeze(2).expand({B, Hkv, H / Hkv, Tk, D}).reshape({B, H, Tk, D});
  }
  if (a.kv_len.defined()) return attention_with_kv_len(a, k, v, scale);
  const auto opts = a.q.options();
  at::Tensor out = at::empty({B, H, Tq, D}, opts);
  at::Tensor key_pos = at::arange(Tk, opts.dtype(at::kLong));
  at::Tensor start = a.seq_start.defined() ? a.seq_start.to(a.q.device()).view({B, 1, 1, 1}) : at::Tensor();

  // Tile over queries so scores are [tile, keys] rather than [Tq, Tk]: ~256 MB of fp32 scores.
  // A window bounds the keys of a tile by tile + W - 1.
  const int64_t budget = int64_t(64) << 20;  // elements
  const int64_t span = a.window > 0 ? std::min<int64_t>(Tk, a.window + 4096) : Tk;
  const int64_t tile = std::clamp<int64_t>(budget / std::max<int64_t>(1, B * H * span), 16, 4096);
  for (int64_t i0 = 0; i0 < Tq; i0 += tile) {
    const int64_t i1 = std::min(Tq, i0 + tile);
    const int64_t keys = offset + i1;  // keys after the tile's last query are never attended
    // nor keys before the first query's window: a long document costs O(T * W), not O(T^2)
    const int64_t k0 = a.window > 0 ? std::max<int64_t>(0, offset + i0 - a.window + 1) : 0;
    at::Tensor q = a.q.slice(2, i0, i1).to(at::kFloat);
    at::Tensor kk = k.slice(2, k0, keys), vv = v.slice(2, k0, keys);
    at::Tensor scores = at::matmul(q, kk.transpose(-1, -2)).mul_(scale);  // [B, H, tq, keys - k0]
    if (a.cum_log_fgate.defined()) {
      at::Tensor c_q = a.cum_log_fgate.slice(2, offset + i0, offset + i1).unsqueeze(-1);
      at::Tensor c_k = a.cum_log_fgate.slice(2, k0, keys).unsqueeze(-2);
      scores.add_(c_q - c_k);  // the decay bias, in fp32
    }
    at::Tensor query_pos = at::arange(offset + i0, offset + i1, key_pos.options()).view({-1, 1});
    at::Tensor kpos = key_pos.slice(0, k0, keys).view({1, -1});
    at::Tensor masked = kpos > query_pos;  // causal
    if (a.window > 0) masked = masked.logical_or(kpos <= query_pos - a.window);
    if (start.defined()) masked = masked.logical_or(kpos.view({1, 1, 1, -1}) < start);
    scores.masked_fill_(masked, -std::numeric_limits<float>::infinity());
    // A padding query sees no key at all: its row is all -inf; give it zeros, not NaN.
    at::Tensor probs = at::softmax(scores, -1).nan_to_num_(0.0);
    out.slice(2, i0, i1).copy_(at::matmul(probs, vv));
  }
  return out;
}

}  // namespace foxeval
