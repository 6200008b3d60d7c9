#!/usr/bin/env python3
"""Writes tests/fixtures/tokenizer/golden_unseen.json: GPT-2 BPE goldens from tiktoken for texts
written for this project (none taken from elsewhere), so the C++ tokenizer is checked on inputs
it was not developed against.

Fields per case, as in ../shared/fixtures/tokenizer/golden_basic.json:
  gpt2_ids               tiktoken gpt2 encode_ordinary(text)
  json_gpt2_ids          encode_ordinary(json.dumps(text)[1:-1])
  json_gpt2_ids_with_bos [50256] + encode(json.dumps(text)[1:-1], allowed_special={"<|endoftext|>"})
                         (the official Hugging Face tokenizer turns a literal <|endoftext|> into
                         the special token; for texts without it this is [50256] + json_gpt2_ids)

Usage: .venv/bin/python tests/tools/make_tokenizer_goldens.py  (uses data/gpt2, no network)
"""
import json
import os
import random
import warnings

import tiktoken
from gpt2_tiktoken import ROOT, gpt2_encoding  # this folder

OUT = os.path.join(ROOT, "tests", "fixtures", "tokenizer", "golden_unseen.json")


# Pieces whose random mixes stress the pre-tokenizer: ASCII classes, contractions, Unicode letters,
# digits and spaces, combining marks, astral characters, controls.
MIX_ALPHABET = ["a", "Z", "q", "0", "9", " ", " ", "  ", "\t", "\n", "\r\n", "\x0b", "\x0c", "'",
                "'s", "'re", "'LL", "'ll", "'d", "!", '"', "\\", ".", ",", "-", "\x00", "\x1c", "\x7f",
                "\u00e9", "e\u0301", "\u65e5", "\u00a0", "\u3000", "\u2028", "\u0663", "\u00bd",
                "\U0001F642", "\x85", "\ufb01", "\u2003", "\u200d", "<|endoftext|>"]


def random_mix(seed, n):
    rng = random.Random(seed)
    return "".join(rng.choice(MIX_ALPHABET) for _ in range(n))


LICENCE = (
    "Permission is given to anyone who receives this file to read it, run it, change it and pass "
    "it on, on the one condition that this paragraph travels with every copy. The file comes "
    "with no promise of any kind: if it breaks, you keep both pieces. Nobody who wrote it can be "
    "held to account for what it does or fails to do.\n")

HEADER = """// Ring buffer of fixed capacity; not thread-safe.
#pragma once
#include <array>
#include <cstddef>

namespace demo {

template <typename T, std::size_t N>
class Ring {
 public:
  bool push(const T& v) {
    if (size_ == N) return false;
    data_[(head_ + size_++) % N] = v;   // wraps around
    return true;
  }
  T& front() { return data_[head_]; }
 private:
  std::array<T, N> data_{};
  std::size_t head_ = 0, size_ = 0;
};

}  // namespace demo
"""

TEXTS = {
    "licence_paragraph": LICENCE,
    "cpp_header": HEADER,
    "japanese": "今日は雨が降っているので、図書館で本を読みました。明日は晴れるといいですね。",
    "cyrillic": "Вчера мы долго гуляли по набережной, а потом пили чай с вареньем.\nЁж и щука — не друзья.",
    "greek_arabic_hindi": "Καλημέρα κόσμε · مرحبا بالعالم · नमस्ते दुनिया",
    "control_chars": "a\x00b\x01c\x07d\x08e\x0bf\x0cg\x1bh\x1ci\x1fj\x7fk\r\nl\u0085m\u2028n",
    "emoji_astral": "Ships 🚢 and rockets 🚀🚀, a family 👨\u200d👩\u200d👧, flags 🇫🇷, math 𝔸𝕓 and 𐍈.",
    "whitespace_runs": "word   \t\t  word\n\n\n  \n\tend   \t \n",
    "trailing_spaces": "trailing spaces   ",
    "trailing_tabs_newlines": "x\t\t\n\n",
    "only_whitespace": " \t \n \u00a0\u3000 ",
    "unicode_spaces": "a\u00a0b\u2003\u2003c\u3000\u3000\u3000d \u00a0 e\u205f\u202ff",
    "numbers": "Pi is 3.14159265358979, the year 2024, 1,000,000 items, -42, 0x1F, 1e-9, ½ and ٣٤٥.",
    "long_digits": "1234567890" * 30,
    "long_letters": "a" * 300 + " " + "ab" * 150,
    "long_spaces": " " * 200 + "x" + " " * 70,
    "apostrophes": "It's what they'd said: we'll see, you've won, I'm here, they're gone, 'tis ok; "
                   "IT'S LOUD, don't, o'clock, rock 'n' roll, ''double'', \u2019curly\u2019s.",
    "quotes_backslashes": "path C:\\temp\\new \"quoted\" \\\\server and a \\u0041 lookalike / slash",
    "json_like": '{"key": [1, 2.5, null, true], "nested": {"s": "v\\n"}}',
    "special_token_literal": "before<|endoftext|>after <|endoftext|> end",
    "mixed_scripts_punct": "Café—naïve résumé… «guillemets» ¿qué? ¡sí! 北京市 ß ﬁ Ⅻ ①",
    "empty": "",
    "random_mix_1": random_mix(1, 600),
    "random_mix_2": random_mix(2, 600),
}


# Decoded model output as the official decode sees it before unescaping. Valid JSON string bodies
# take json.loads; the others take the best-effort fallback (unicode_escape, "ignore").
UNESCAPE = [
    r"Hello\nWorld", r"tab\there \r\f\b", r"\u00e9t\u00E9", r"\ud83d\ude80 rocket",
    r"quote \" slash \/ back \\", r"lone \ud83d end", r"\ude00 low first", r"\ud83d\u0041",
    'raw "quote"', r"bad \x41 escape", r"trunc \u12", "ends with \\", "raw newline\nhere",
    'caf\u00e9 "x" \ufffd', r"octal \101\7 and \777 \08", r"\N{NOT A NAME} and \N{} and \Nx",
    r"\N{unclosed", r"\q unknown \' \a\v", r"\U0001F600 big", r"\U00110000 too big",
    r"\x4g hex", r'\ud83d\ude80 "', "line\\\ncontinuation", "\u4e2d\u6587 \\u4e2d", "",
]


def python_decode(text):
    """The official JSONGPT2Tokenizer.decode tail; lone surrogates shown as U+FFFD."""
    try:
        out = json.loads(f'"{text}"')
    except json.JSONDecodeError:
        with warnings.catch_warnings():  # Python warns about \q, \777 but still decodes them
            warnings.simplefilter("ignore", DeprecationWarning)
            out = text.encode().decode("unicode_escape", "ignore")
    return out.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def main():
    enc = gpt2_encoding()
    cases = []
    for name, text in TEXTS.items():
        escaped = json.dumps(text)[1:-1]
        cases.append({
            "name": name,
            "text": text,
            "gpt2_ids": enc.encode_ordinary(text),
            "json_gpt2_ids": enc.encode_ordinary(escaped),
            "json_gpt2_ids_with_bos": [50256] + enc.encode(escaped, allowed_special={"<|endoftext|>"}),
            "json_escaped": escaped,
        })
    doc = {
        "source": "tiktoken %s gpt2 (data/gpt2 files); texts written for foxeval; "
                  "made by tests/tools/make_tokenizer_goldens.py" % tiktoken.__version__,
        "cases": cases,
        "unescape_cases": [{"text": t, "decoded": python_decode(t)} for t in UNESCAPE],
    }
    # One case per line keeps the file small and its diffs readable.
    with open(OUT, "w", encoding="utf-8") as f:
        f.write('{"source": %s,\n "cases": [\n' % json.dumps(doc["source"]))
        f.write(",\n".join("  " + json.dumps(c) for c in doc["cases"]))
        f.write('\n ],\n "unescape_cases": [\n')
        f.write(",\n".join("  " + json.dumps(c) for c in doc["unescape_cases"]))
        f.write("\n ]\n}\n")
    assert json.load(open(OUT, encoding="utf-8")) == doc
    print("wrote %s (%d cases, %d bytes)" % (OUT, len(cases), os.path.getsize(OUT)))


if __name__ == "__main__":
    main()
