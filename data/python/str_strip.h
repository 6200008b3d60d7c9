// Python's str.strip() / lstrip() / rstrip() with no argument: leading and trailing characters for
// which str.isspace() holds (py_isspace, data/python/unicode.h: Unicode whitespace, not <cctype>'s).
// The one implementation: lm-eval's document templates, NIAH's predictions, RULER's and BABILong's
// texts all strip through these.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace foxeval {

// On UTF-8 text. A byte that is not UTF-8 is one character that is not whitespace (as U+FFFD of
// decode(errors="replace") would be), so nothing past it is stripped.
std::string py_strip(std::string_view s);   // str.strip()
std::string py_lstrip(std::string_view s);  // str.lstrip()
std::string py_rstrip(std::string_view s);  // str.rstrip()
std::size_t py_rstrip_size(std::string_view s);  // len(s.rstrip()) in bytes

// On code points.
std::u32string py_strip(const std::u32string& s);

}  // namespace foxeval
