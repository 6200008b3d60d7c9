// CPython 3.11's repr() of a str and of a list of str, as RULER's QA generator measures its
// sizing text with f" {answer}" (answer a list). Printability from CPython's unicodedata
// (Unicode 14.0, data/python/printable_table.cpp). Tested against repr over generated strings
// (tests/tools/make_printable_table.py).
#pragma once
#include <string>
#include <vector>

namespace foxeval {

// repr(s) for UTF-8 `s`; foxeval::Error on invalid UTF-8.
std::string python_str_repr(const std::string& s);

// repr(list_of_str): "[" + ", ".join(map(repr, xs)) + "]".
std::string python_str_list_repr(const std::vector<std::string>& xs);

}  // namespace foxeval
