// Text as the official prompt.py holds it: a Python str, which may carry lone surrogates. A
// prompt cut between the two \uXXXX escapes of an astral character (an emoji, say) decodes to a
// str with a lone surrogate; prompt.py re-encodes it (json.dumps writes it back as \udXXX) and
// writes it into the prompt file. UTF-8 cannot hold a lone surrogate, so the NIAH prompts are
// built in the escaped domain instead: every decoded context is kept as its json.dumps(...)[1:-1]
// form (ASCII), which is exactly what the tokenizer re-encodes and what prompt.py's file holds.
#pragma once
#include <string>
#include <string_view>

namespace foxeval::niah {

// json.dumps(JSONGPT2Tokenizer-decode)[1:-1] of `raw`, the token bytes as text (what
// Gpt2Tokenizer::decode gives with json_unescape = false): json.loads('"' + raw + '"'), or when
// that raises, raw.encode().decode("unicode_escape", "ignore"); then json.dumps with
// ensure_ascii (each surrogate, paired or lone, as its own \uXXXX, as Python writes them).
std::string python_reescape(std::string_view raw);

}  // namespace foxeval::niah
