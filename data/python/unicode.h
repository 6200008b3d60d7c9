// The pieces of Python's str semantics that LongBench's metrics.py relies on, over code points:
// UTF-8 <-> code points, str.lower() (full mapping, Final_Sigma included), str.split()'s
// whitespace, and the `re` classes \w (alphanumeric; '_' is handled by callers) and \d (decimal).
// The classes come from CPython 3.11's unicodedata (Unicode 14.0), see unicode_tables.h; a scorer
// run under a Python with another Unicode version can differ on characters added or changed since.
#pragma once
#include <string>
#include <vector>

namespace foxeval {

// Strict UTF-8 decoding; `what` names the text in the foxeval::Error for invalid bytes.
std::u32string utf8_to_u32(const std::string& text, const std::string& what);
std::string u32_to_utf8(const std::u32string& text);

bool py_isspace(char32_t c);    // str.isspace() / str.split()
bool py_isalnum(char32_t c);    // str.isalnum(); re's \w is this or '_'
bool py_isdecimal(char32_t c);  // str.isdecimal(); re's \d

// str.lower().
std::u32string py_lower(const std::u32string& text);

// str.split() with no argument: runs of non-whitespace.
std::vector<std::u32string> py_split(const std::u32string& text);

// re.findall(r"\d+", text), as UTF-8 strings.
std::vector<std::string> find_decimal_runs(const std::u32string& text);

}  // namespace foxeval
