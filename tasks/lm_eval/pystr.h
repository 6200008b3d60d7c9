// Python `str` operations on UTF-8 text, as lm-eval's task code applies them to documents
// (strip, capitalize, len, re's \s, ...): the request strings must equal the Python ones byte for
// byte, so "whitespace" and "character" mean what they mean in Python 3, not in <cctype>.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "data/python/str_strip.h"  // py_strip, py_lstrip, py_rstrip: str.strip() and its sides

namespace foxeval::lm_eval {

// The regex character class of Python's str.isspace() (py_isspace, data/python/unicode.h: what
// re's \s matches in a str pattern and str.strip()/split() remove) for RE2 patterns (RE2's \s is
// ASCII only).
extern const char* const kPySpaceClass;

// str.replace(old, new): every non-overlapping occurrence, left to right.
std::string py_replace(std::string_view s, std::string_view from, std::string_view to);

// len(s): code points, not bytes (lm-eval's acc_norm divides by this).
int64_t py_len(std::string_view s);

// s[:-1]: drops the last code point ("" stays "").
std::string py_drop_last(std::string_view s);

// Case mapping as CPython 3.11's str methods, for every code point (full mappings: several
// characters where Python gives several, e.g. "ß".upper() == "SS", "İ".lower() == "i̇"); tables
// generated from its unicodedata (Unicode 14.0) by tests/tools/make_case_tables.py. Bytes that
// are not UTF-8 come out as U+FFFD.
std::string py_lower(std::string_view s);  // str.lower(), Final_Sigma rule included
std::string py_upper(std::string_view s);  // str.upper()

// s[0].lower() + s[1:] (copa's convert_choice); "" is an error in Python and here.
std::string py_lower_first(std::string_view s);

// str.capitalize() (3.8+): the first character in title case ("ß" -> "Ss", "ǆ" -> "ǅ"), the
// rest in lower case with Final_Sigma read over the whole string ("ΣΑΣ" -> "Σας").
std::string py_capitalize(std::string_view s);

// len(re.split(r"\s+", s)): the number of pieces between maximal runs of whitespace,
// empty pieces at either end included (wikitext's word count).
int64_t py_split_whitespace_count(std::string_view s);

}  // namespace foxeval::lm_eval
