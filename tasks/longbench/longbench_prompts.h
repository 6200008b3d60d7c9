// pred.py's prompt: the task's template filled with the record (Python str.format(**record)),
// tokenized with BOS by the JSON-GPT2 tokenizer, and cut in the middle when too long.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxeval {
class Gpt2Tokenizer;
}

namespace foxeval::longbench {

// Python `template.format(**fields)` for what LongBench's templates use: `{name}` fields and `{{`,
// `}}` escapes. A field's value is its string, or an integer's decimal digits (Python str()).
// Errors (`what` names the template, e.g. "task 'qasper'") for an unknown field, a value of another
// type, positional `{}`, conversions/format specs/attribute or index access (not used by LongBench,
// so not implemented), and a single `{` or `}` (Python's ValueError).
std::string format_template(const std::string& tmpl, const nlohmann::json& fields, const std::string& what);

// The prompt's token ids as pred.py builds them: ids = encode(prompt) with BOS; when
// len(ids) > max_length, half = int(max_length / 2) and the prompt becomes
// decode(ids[:half]) + decode(ids[-half:]) (each skipping special tokens, so the BOS and any
// <|endoftext|> go, and each JSON-unescaped on its own as the official decode does), encoded again
// with BOS. The result may still be a little longer than max_length, as in pred.py.
// max_length must be >= 2 (pred.py's ids[-0:] would keep everything).
std::vector<int64_t> prompt_ids(const Gpt2Tokenizer& tok, const std::string& prompt, int64_t max_length);

}  // namespace foxeval::longbench
