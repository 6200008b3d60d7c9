// data/python/str_strip.h against Python 3.11's str.strip()/lstrip()/rstrip() over generated
// strings (tests/fixtures/python/strip_goldens.json, tests/tools/make_strip_goldens.py): every
// character str.isspace() knows, mixed with others, at the ends and inside; then bytes that are not
// UTF-8, which no Python str holds: they are never whitespace, so stripping stops at them.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "data/json_file.h"
#include "data/python/str_strip.h"
#include "data/python/unicode.h"

using namespace foxeval;

TEST_CASE("python str.strip: one implementation, equal to Python over generated strings") {
  const nlohmann::json g = read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/python/strip_goldens.json");
  CHECK(g.at("spaces").size() == 29);  // Python 3.11: 29 whitespace characters
  for (const auto& sp : g.at("spaces")) CHECK(py_isspace(utf8_to_u32(sp.get<std::string>(), "space").at(0)));
  size_t n = 0;
  for (const auto& row : g.at("cases")) {
    const std::string s = row.at(0);
    CAPTURE(s);
    CHECK(py_strip(s) == row.at(1).get<std::string>());
    CHECK(py_lstrip(s) == row.at(2).get<std::string>());
    CHECK(py_rstrip(s) == row.at(3).get<std::string>());
    CHECK(py_rstrip_size(s) == row.at(3).get<std::string>().size());
    CHECK(u32_to_utf8(py_strip(utf8_to_u32(s, "case"))) == row.at(1).get<std::string>());
    ++n;
  }
  CHECK(n > 1000);
}

TEST_CASE("python str.strip: bytes that are not UTF-8 are not whitespace") {
  CHECK(py_strip(" \xff a \x80 ") == "\xff a \x80");
  CHECK(py_lstrip("\xc2 x") == "\xc2 x");           // a cut sequence: not U+00A0
  CHECK(py_rstrip("x \xe3\x80") == "x \xe3\x80");   // the start of U+3000, cut
  CHECK(py_rstrip("x\xc0\xa0") == "x\xc0\xa0");     // an overlong space is no space
  CHECK(py_rstrip_size("ab\xe3\x80\x80 ") == 2);    // U+3000 itself is
}
