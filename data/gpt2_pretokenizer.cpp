// RE2 implementation of GPT-2's pre-tokenization regex; see gpt2_pretokenizer.h.
#include "data/gpt2_pretokenizer.h"

#include <re2/re2.h>

#include "data/errors.h"

namespace foxeval {
namespace {

// Unicode White_Space, the set tiktoken's \s matches.
#define FOXEVAL_WS \
  R"(\t\n\x0B\x0C\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})"

const char kPattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^)" FOXEVAL_WS R"(\p{L}\p{N}]+|[)" FOXEVAL_WS
    R"(]+)";
#undef FOXEVAL_WS

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// Start of the last UTF-8 character of the non-empty `s`.
std::size_t last_char_start(std::string_view s) {
  std::size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return i;
}

char32_t decode_at(std::string_view s, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return c;
  int n = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
  char32_t v = c & (0x3F >> n);
  for (int k = 1; k <= n && i + k < s.size(); ++k) v = (v << 6) | (s[i + k] & 0x3F);
  return v;
}

}  // namespace

Gpt2PreTokenizer::Gpt2PreTokenizer() {
  RE2::Options opt;
  opt.set_log_errors(false);
  re_ = std::make_unique<RE2>(kPattern, opt);
  if (!re_->ok()) throw Error("GPT-2 pre-tokenizer regex does not compile: " + re_->error());
}

Gpt2PreTokenizer::~Gpt2PreTokenizer() = default;

std::string_view Gpt2PreTokenizer::match_at(std::string_view text, std::size_t pos) const {
  const re2::StringPiece all(text.data(), text.size());
  re2::StringPiece m;
  // Every character is matched by some alternative, so an anchored match always succeeds.
  if (!re_->Match(all, pos, text.size(), RE2::ANCHOR_START, &m, 1) || m.empty())
    throw Error("GPT-2 pre-tokenizer: no match at byte offset " + std::to_string(pos));
  std::string_view piece(m.data(), m.size());
  const std::size_t last = last_char_start(piece);
  // Only the whitespace alternative ends in whitespace: emulate \s+(?!\S) there.
  if (pos + piece.size() < text.size() && last > 0 && is_white_space(decode_at(piece, last)))
    piece = piece.substr(0, last);
  return piece;
}

void Gpt2PreTokenizer::split_reference(std::string_view text,
                                       std::vector<std::string_view>& out) const {
  for (std::size_t pos = 0; pos < text.size(); pos += out.back().size())
    out.push_back(match_at(text, pos));
}

namespace {

// ASCII classes of the pattern: letters (\p{L}), digits (\p{N}), White_Space (\s), other.
enum Cls : unsigned char { kOther, kLetter, kDigit, kSpace, kNonAscii };

struct ClassTable {
  Cls c[256];
  constexpr ClassTable() : c() {
    for (int i = 0; i < 256; ++i) {
      c[i] = i >= 0x80 ? kNonAscii : kOther;
      if ((i >= 'a' && i <= 'z') || (i >= 'A' && i <= 'Z')) c[i] = kLetter;
      if (i >= '0' && i <= '9') c[i] = kDigit;
      if ((i >= 0x09 && i <= 0x0D) || i == ' ') c[i] = kSpace;
    }
  }
};
constexpr ClassTable kClass;

Cls cls(std::string_view s, std::size_t i) { return kClass.c[static_cast<unsigned char>(s[i])]; }

// End of the run of class `k` starting at `i`, or npos when the run reaches a non-ASCII byte
// (which might belong to the run: the caller then asks RE2).
std::size_t run_end(std::string_view s, std::size_t i, Cls k) {
  while (i < s.size() && cls(s, i) == k) ++i;
  if (i < s.size() && cls(s, i) == kNonAscii) return std::string_view::npos;
  return i;
}

// Length of the ASCII piece at `pos`, or 0 when the piece involves non-ASCII text.
std::size_t ascii_piece(std::string_view s, std::size_t pos) {
  const std::size_t n = s.size();
  const Cls c = cls(s, pos);
  if (c == kNonAscii) return 0;
  if (s[pos] == '\'') {  // 's 't 'm 'd 're 've 'll come first
    if (pos + 1 < n) {
      const char a = s[pos + 1];
      if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
      if (pos + 2 < n) {
        const char b = s[pos + 2];
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
      }
    }
  }
  std::size_t start = pos;
  Cls k = c;
  if (s[pos] == ' ' && pos + 1 < n && cls(s, pos + 1) != kSpace) {
    // " ?X+": a single space joins the following letter, digit or other run.
    k = cls(s, pos + 1);
    if (k == kNonAscii) return 0;
    start = pos + 1;
  }
  const std::size_t end = run_end(s, start, k);
  if (end == std::string_view::npos) return 0;
  if (k != kSpace) return end - pos;
  // Whitespace run: \s+(?!\S) gives back its last character before a non-space; \s takes 1.
  if (end == n || end - pos == 1) return end - pos;
  return end - pos - 1;
}

}  // namespace

void Gpt2PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out) const {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t len = ascii_piece(text, pos);
    const std::string_view piece = len ? text.substr(pos, len) : match_at(text, pos);
    out.push_back(piece);
    pos += piece.size();
  }
}

}  // namespace foxeval
