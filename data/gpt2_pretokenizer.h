// GPT-2's pre-tokenizer: splits text into the pieces that BPE then encodes one at a time.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace foxeval {

// Equal to tiktoken's gpt2 pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// with \s = Unicode White_Space (what tiktoken's Rust regex and Python's `regex` use; RE2's own
// \s is ASCII-only and lacks \v, so the class is spelled out). RE2 has no lookahead: the last two
// alternatives are matched as one \s+ and the run gives back its last character when a
// non-space follows and the run is longer than one character, which is what `\s+(?!\S)`
// followed by the fallback `\s` produces.
class Gpt2PreTokenizer {
 public:
  Gpt2PreTokenizer();
  ~Gpt2PreTokenizer();
  Gpt2PreTokenizer(const Gpt2PreTokenizer&) = delete;
  Gpt2PreTokenizer& operator=(const Gpt2PreTokenizer&) = delete;

  // Appends the pieces of `text` (valid UTF-8) to `out`; they tile `text` exactly. Pieces made
  // of ASCII only (all of JSON-escaped text) are cut by a hand-written scanner, which is ~10x
  // faster than RE2; as soon as a piece would touch a non-ASCII byte, RE2 cuts that piece.
  void split(std::string_view text, std::vector<std::string_view>& out) const;

  // RE2 for every piece: the reference the fast path is tested against.
  void split_reference(std::string_view text, std::vector<std::string_view>& out) const;

 private:
  // The RE2 piece starting at `pos`.
  std::string_view match_at(std::string_view text, std::size_t pos) const;

  std::unique_ptr<re2::RE2> re_;
};

}  // namespace foxeval
