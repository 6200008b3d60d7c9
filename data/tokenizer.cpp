// GPT-2 byte-level BPE with tiktoken's semantics; see tokenizer.h. Loading lives in
// tokenizer_load.cpp, this file is the hot path: pre-tokenize, then merge each piece.
#include "data/tokenizer.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <queue>
#include <string>
#include <tuple>
#include <unordered_map>

#include "data/errors.h"
#include "data/python/json_escape.h"
#include "data/tokenizer_impl.h"
#include "data/utf8.h"

namespace foxeval {
namespace {

constexpr std::string_view kEndOfText = "<|endoftext|>";
// Pieces up to this many bytes merge in stack arrays with a linear scan (tiktoken's algorithm);
// longer ones (long digit or space runs, base64) use a heap so they stay O(n log n).
constexpr std::size_t kSmallPiece = 64;

void check_utf8(std::string_view text) {
  const std::size_t bad = utf8::first_invalid(text);
  if (bad != std::string_view::npos)
    throw Error("text is not valid UTF-8 (byte offset " + std::to_string(bad) + ")");
}

void merge_small(const Gpt2Tokenizer::Impl& t, std::string_view piece, std::vector<int64_t>& out) {
  int32_t sym[kSmallPiece], rank[kSmallPiece], merged[kSmallPiece];
  std::size_t m = piece.size();
  for (std::size_t i = 0; i < m; ++i) sym[i] = t.byte_id[static_cast<unsigned char>(piece[i])];
  auto set_pair = [&](std::size_t i) {
    const PairTable::Value* v = t.pairs.find(sym[i], sym[i + 1]);
    rank[i] = v ? v->rank : INT32_MAX;
    merged[i] = v ? v->id : -1;
  };
  for (std::size_t i = 0; i + 1 < m; ++i) set_pair(i);
  while (m > 1) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < m; ++i)
      if (rank[i] < rank[best]) best = i;  // strict: leftmost of equal ranks, as tiktoken
    if (rank[best] == INT32_MAX) break;
    sym[best] = merged[best];
    for (std::size_t i = best + 1; i + 1 < m; ++i) {  // drop symbol best+1
      sym[i] = sym[i + 1];
      rank[i] = rank[i + 1];
      merged[i] = merged[i + 1];
    }
    --m;
    if (best > 0) set_pair(best - 1);
    if (best + 1 < m) set_pair(best);
  }
  out.insert(out.end(), sym, sym + m);
}

void merge_large(const Gpt2Tokenizer::Impl& t, std::string_view piece, std::vector<int64_t>& out) {
  const int n = static_cast<int>(piece.size());
  // Symbols live at the byte offset where they start; next/prev link the live ones.
  std::vector<int32_t> sym(n), next(n), prev(n);
  std::vector<char> alive(n, 1);
  for (int i = 0; i < n; ++i) {
    sym[i] = t.byte_id[static_cast<unsigned char>(piece[i])];
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  using Entry = std::tuple<int32_t, int32_t, int32_t>;  // rank, left start, right start
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  auto push = [&](int l) {
    if (l < 0 || next[l] >= n) return;
    if (const PairTable::Value* v = t.pairs.find(sym[l], sym[next[l]]))
      heap.emplace(v->rank, l, next[l]);
  };
  for (int i = 0; i + 1 < n; ++i) push(i);
  while (!heap.empty()) {
    const auto [r, l, rt] = heap.top();
    heap.pop();
    if (!alive[l] || !alive[rt] || next[l] != rt) continue;
    const PairTable::Value* v = t.pairs.find(sym[l], sym[rt]);
    if (!v || v->rank != r) continue;  // a side merged since this entry was pushed
    sym[l] = v->id;
    alive[rt] = 0;
    next[l] = next[rt];
    if (next[l] < n) prev[next[l]] = l;
    push(prev[l]);
    push(l);
  }
  for (int i = 0; i < n; i = next[i]) out.push_back(sym[i]);
}

// Appends the BPE of `text` (valid UTF-8, no special-token handling) to `out`.
void encode_ordinary(const Gpt2Tokenizer::Impl& t, std::string_view text,
                     std::vector<int64_t>& out) {
  std::vector<std::string_view> pieces;
  pieces.reserve(text.size() / 4 + 1);
  t.pretok.split(text, pieces);
  // Per-call cache of multi-token pieces: keys view the caller's text and values index `out`,
  // so lookups allocate nothing and concurrent calls share no mutable state.
  std::unordered_map<std::string_view, std::pair<std::size_t, std::size_t>> cache;
  for (std::string_view piece : pieces) {
    if (const int32_t id = t.token_ids.find(piece); id >= 0) {
      out.push_back(id);  // the whole piece is a token (tiktoken's shortcut)
      continue;
    }
    if (const auto it = cache.find(piece); it != cache.end()) {
      const auto [start, len] = it->second;
      for (std::size_t k = 0; k < len; ++k) {
        const int64_t id = out[start + k];  // copy: push_back may reallocate
        out.push_back(id);
      }
      continue;
    }
    const std::size_t start = out.size();
    if (piece.size() <= kSmallPiece)
      merge_small(t, piece, out);
    else
      merge_large(t, piece, out);
    cache.emplace(piece, std::make_pair(start, out.size() - start));
  }
}

}  // namespace

std::vector<int64_t> Gpt2Tokenizer::encode_bpe(std::string_view text) const {
  check_utf8(text);
  std::vector<int64_t> out;
  out.reserve(text.size() / 3 + 1);
  encode_ordinary(*impl_, text, out);
  return out;
}

std::vector<int64_t> Gpt2Tokenizer::encode(std::string_view text, bool add_bos,
                                           bool json_escape_text) const {
  std::string escaped;
  if (json_escape_text) {
    escaped = json_escape(text);  // validates UTF-8
    text = escaped;
  } else {
    check_utf8(text);
  }
  std::vector<int64_t> out;
  out.reserve(text.size() / 3 + 2);
  if (add_bos) out.push_back(impl_->eos_id);
  // Split on the special token first, as the Hugging Face tokenizer does.
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = text.find(kEndOfText, pos);
    encode_ordinary(*impl_, text.substr(pos, hit == std::string_view::npos ? hit : hit - pos), out);
    if (hit == std::string_view::npos) break;
    out.push_back(impl_->eos_id);
    pos = hit + kEndOfText.size();
  }
  return out;
}

std::string Gpt2Tokenizer::decode_bpe(const std::vector<int64_t>& ids) const {
  std::string out;
  out.reserve(ids.size() * 4);
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size())
      throw Error("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                  std::to_string(vocab_size()) + ") of " + impl_->vocab_path);
    out += impl_->id_bytes[static_cast<std::size_t>(id)];
  }
  return out;
}

std::string Gpt2Tokenizer::decode(const std::vector<int64_t>& ids, bool json_unescape_text,
                                  bool skip_special) const {
  std::string bytes;
  if (skip_special) {
    std::vector<int64_t> kept;
    kept.reserve(ids.size());
    for (int64_t id : ids)
      if (id != impl_->eos_id) kept.push_back(id);
    bytes = decode_bpe(kept);
  } else {
    bytes = decode_bpe(ids);
  }
  std::string text = utf8::sanitize(bytes);  // bytes.decode("utf-8", errors="replace")
  return json_unescape_text ? json_unescape(text) : text;
}

int64_t Gpt2Tokenizer::eos_id() const { return impl_->eos_id; }
int64_t Gpt2Tokenizer::vocab_size() const { return static_cast<int64_t>(impl_->id_bytes.size()); }
const std::string& Gpt2Tokenizer::vocab_path() const { return impl_->vocab_path; }

}  // namespace foxeval
