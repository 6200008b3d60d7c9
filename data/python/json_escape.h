// LongCrawl64 was tokenized after JSON-escaping the text, so every prompt is escaped the same way
// before BPE, and decoded text is unescaped (official JSONGPT2Tokenizer, tokenizer.py).
#pragma once
#include <string>
#include <string_view>

namespace foxeval {

// Python `json.dumps(text)[1:-1]` with ensure_ascii=True: `\"`, `\\`, `\b \f \n \r \t`, other
// control characters and DEL as `\u00XX`, every non-ASCII character as `\uXXXX` (lowercase hex,
// astral characters as a surrogate pair). Throws foxeval::Error naming the byte offset when `utf8`
// is not valid UTF-8 (a Python str cannot hold such bytes, so there is no official behaviour).
std::string json_escape(std::string_view utf8);

// Python `json.loads('"' + text + '"')`; when that fails (raw quote or control character, bad
// or truncated escape) the official best-effort fallback
// `text.encode().decode("unicode_escape", "ignore")`, which also reads non-ASCII bytes as
// Latin-1 (mojibake, kept on purpose: it is what official scoring saw). `text` must be valid
// UTF-8 (Gpt2Tokenizer::decode sanitizes first). Lone surrogates, which Python would keep in its
// str but UTF-8 cannot hold, become U+FFFD; adjacent high+low surrogates are joined.
std::string json_unescape(std::string_view text);

// The strict half alone: returns false (and leaves *out unspecified) where json.loads raises.
bool json_unescape_strict(std::string_view text, std::string* out);

// The fallback half alone: bytes.decode("unicode_escape", "ignore") on the UTF-8 bytes. `\N{name}`
// escapes are dropped (no Unicode name database here), as Python does for unknown names.
std::string unicode_escape_decode(std::string_view bytes);

// Python `json.dumps(json_unescape(raw))[1:-1]`, where the decoded text stays a Python str: lone
// UTF-16 surrogates (a cut between the two escapes of an astral character) come back as the same
// "\udXXX" escape, which UTF-8 could not carry. This is what the official JSONGPT2Tokenizer
// decode followed by re-encoding gives when a prompt is cut and tokenized again (NIAH, LongBench).
std::string python_reescape(std::string_view raw);

// The value of one hex digit (either case), or -1.
int hex_digit(char c);

}  // namespace foxeval
