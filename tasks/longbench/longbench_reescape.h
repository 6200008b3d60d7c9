// pred.py re-tokenizes decode(head) + decode(tail). Each half is decoded by JSONGPT2Tokenizer
// (json.loads of the token text) into a Python str, which may hold a lone UTF-16 surrogate where the
// cut split an astral character's "\ud83d\ude42" escape; json.dumps writes that surrogate back as the
// same escape when the prompt is tokenized again. A UTF-8 string cannot hold a lone surrogate (the
// shared json_unescape makes it U+FFFD), so the truncation works on the escaped form instead.
#pragma once
#include <string>
#include <string_view>

namespace foxeval::longbench {

// Python `json.dumps(decode_text(raw))[1:-1]` (ensure_ascii), where decode_text is the official
// decode's tail: json.loads('"' + raw + '"'), else raw.encode().decode("unicode_escape", "ignore").
// `raw` is token text (ASCII for JSON-escaped prompts). Lone surrogates stay "\udXXX" escapes.
std::string reescape_decoded(std::string_view raw);

}  // namespace foxeval::longbench
