// Internals of Gpt2Tokenizer shared by tokenizer.cpp (encoding) and tokenizer_load.cpp (loading).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "data/gpt2_pretokenizer.h"
#include "data/tokenizer.h"

namespace foxeval {

// (left id, right id) -> merge: open addressing on a 64-bit key, because the merge loop looks
// pairs up constantly and std::unordered_map's node chasing costs more than the merge itself.
class PairTable {
 public:
  struct Value {
    int32_t rank;  // position of the merged token among the merges (lower merges first)
    int32_t id;    // vocabulary id of the merged token
  };

  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    keys_.assign(cap, kEmpty);
    values_.assign(cap, Value{0, 0});
    mask_ = cap - 1;
  }

  // Keeps the first value inserted for a key.
  void insert(int32_t l, int32_t r, Value v) {
    const uint64_t k = key(l, r);
    for (std::size_t i = slot(k);; i = (i + 1) & mask_) {
      if (keys_[i] == k) return;
      if (keys_[i] == kEmpty) {
        keys_[i] = k;
        values_[i] = v;
        return;
      }
    }
  }

  const Value* find(int32_t l, int32_t r) const {
    const uint64_t k = key(l, r);
    for (std::size_t i = slot(k);; i = (i + 1) & mask_) {
      if (keys_[i] == k) return &values_[i];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t key(int32_t l, int32_t r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }
  std::size_t slot(uint64_t k) const {
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  std::vector<uint64_t> keys_;
  std::vector<Value> values_;
  std::size_t mask_ = 0;
};

// Bytes -> token id, open addressing over views of stable strings; looked up once per piece, so it
// stores a hash tag per slot to skip most byte comparisons.
class BytesTable {
 public:
  static uint64_t hash(std::string_view s) {
    uint64_t h = 0x243F6A8885A308D3ull ^ s.size();
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = (h ^ w) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 32;
    }
    uint64_t tail = 0;
    if (i < s.size()) std::memcpy(&tail, s.data() + i, s.size() - i);
    h = (h ^ tail) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
  }

  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
  }

  // `key` must outlive the table. Keeps the first id inserted for a key.
  void insert(std::string_view key, int32_t id) {
    const uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.id < 0) {
        s = Slot{pack(key), key.data(), static_cast<uint32_t>(key.size()),
                 static_cast<uint32_t>(h >> 32), id};
        return;
      }
      if (same(s, key, static_cast<uint32_t>(h >> 32), pack(key))) return;
    }
  }

  // The id of `key`, or -1.
  int32_t find(std::string_view key) const {
    const uint64_t h = hash(key);
    const auto tag = static_cast<uint32_t>(h >> 32);
    const uint64_t packed = pack(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id < 0) return -1;
      if (same(s, key, tag, packed)) return s.id;
    }
  }

 private:
  // Keys of up to 8 bytes (most tokens) are compared in the slot itself, without touching the
  // key's bytes elsewhere in memory.
  struct Slot {
    uint64_t packed = 0;  // the first 8 bytes of the key, zero-padded
    const char* data = nullptr;
    uint32_t size = 0;
    uint32_t tag = 0;
    int32_t id = -1;
  };
  static uint64_t pack(std::string_view s) {
    uint64_t v = 0;
    if (!s.empty()) std::memcpy(&v, s.data(), s.size() < 8 ? s.size() : 8);
    return v;
  }
  static bool same(const Slot& s, std::string_view key, uint32_t tag, uint64_t packed) {
    if (s.tag != tag || s.size != key.size() || s.packed != packed) return false;
    return key.size() <= 8 || std::memcmp(s.data + 8, key.data() + 8, key.size() - 8) == 0;
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

struct Gpt2Tokenizer::Impl {
  std::string vocab_path;
  std::vector<std::string> id_bytes;  // token id -> its bytes
  // Mergeable tokens (the 256 bytes and every merge result) by their bytes; views id_bytes.
  BytesTable token_ids;
  int32_t byte_id[256];
  PairTable pairs;
  int32_t eos_id = -1;
  Gpt2PreTokenizer pretok;
};

}  // namespace foxeval
