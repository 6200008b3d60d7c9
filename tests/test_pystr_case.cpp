// Case mapping of tasks/lm_eval/pystr.h against CPython 3.11 over every code point:
// tests/fixtures/lm_eval/case_goldens.json (tests/tools/make_case_tables.py) lists chr(c).upper(),
// chr(c).capitalize() and chr(c).lower() wherever they are not chr(c); everywhere else the
// result must be chr(c) itself. Then whole strings around Final_Sigma, expected values from Python.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "data/json_file.h"
#include "data/utf8.h"
#include "data/python/unicode.h"
#include "tasks/lm_eval/pystr.h"

using foxeval::lm_eval::py_capitalize;
using foxeval::lm_eval::py_lower;
using foxeval::lm_eval::py_lower_first;
using foxeval::lm_eval::py_upper;

namespace {

std::unordered_map<char32_t, std::string> golden(const nlohmann::json& g, const char* name) {
  std::unordered_map<char32_t, std::string> out;
  for (const auto& e : g.at(name)) out.emplace(static_cast<char32_t>(e.at(0).get<uint32_t>()), e.at(1).get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("pystr case mapping: upper, capitalize, lower of every code point equal CPython 3.11") {
  const nlohmann::json g =
      foxeval::read_json(std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/lm_eval/case_goldens.json");
  const auto upper = golden(g, "upper"), capitalize = golden(g, "capitalize"), lower = golden(g, "lower");
  // Unicode 14.0's counts (an emptied golden would make the loop vacuous).
  CHECK(upper.size() == 1525);
  CHECK(capitalize.size() == 1452);
  CHECK(lower.size() == 1433);

  struct Op {
    const char* name;
    std::string (*f)(std::string_view);
    const std::unordered_map<char32_t, std::string>* want;
  };
  const Op ops[] = {{"upper", py_upper, &upper},
                    {"capitalize", py_capitalize, &capitalize},
                    {"lower", py_lower, &lower},
                    {"lower_first", py_lower_first, &lower}};  // s[0].lower() + "" for one character
  std::string bad;  // the first mismatches
  std::size_t checked = 0, mapped = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string s;
    foxeval::utf8::append(s, c);
    for (const Op& op : ops) {
      const auto it = op.want->find(c);
      const std::string& want = it == op.want->end() ? s : it->second;
      mapped += it != op.want->end();
      ++checked;
      if (op.f(s) != want && bad.size() < 400) bad += fmt::format(" {}(U+{:04X})", op.name, uint32_t(c));
    }
  }
  CHECK(checked == 4 * (0x110000 - 0x800));
  CHECK(mapped == upper.size() + capitalize.size() + 2 * lower.size());  // every golden key was visited
  CHECK_MESSAGE(bad.empty(), bad);
}

TEST_CASE("pystr case mapping: whole strings, Final_Sigma and multi-character mappings") {
  // str.lower(): U+03A3 is final (U+03C2) after a cased letter with no cased letter after it,
  // case-ignorable characters skipped both ways (CPython's handle_capital_sigma).
  CHECK(py_lower("\u1f48\u0394\u03a5\u03a3\u03a3\u0395\u038e\u03a3") == "\u1f40\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2");
  CHECK(py_lower("\u038c\u03a3\u039f\u03a3 \u03a3\u039f\u03a6\u038c\u03a3.") == "\u03cc\u03c3\u03bf\u03c2 \u03c3\u03bf\u03c6\u03cc\u03c2.");
  CHECK(py_lower("A\u03a3") == "a\u03c2");
  CHECK(py_lower("\u03a3") == "\u03c3");
  CHECK(py_lower("1\u03a3") == "1\u03c3");
  CHECK(py_lower("A\u03a3'B") == "a\u03c3'b");
  CHECK(py_lower("A\u03a3'") == "a\u03c2'");
  CHECK(py_lower("A\u0345\u03a3") == "a\u0345\u03c2");  // U+0345 is cased and case-ignorable: skipped
  CHECK(py_lower("\u03a3\u0345") == "\u03c3\u0345");
  CHECK(py_lower("A\u00ad\u03a3\u2019 x") == "a\u00ad\u03c2\u2019 x");
  CHECK(py_lower("\u0130\u03a3") == "i\u0307\u03c2");
  CHECK(py_lower("\u0130stanbul") == "i\u0307stanbul");
  CHECK(py_lower("\U00010400") == "\U00010428");

  // str.capitalize(): title case of the first character, lower case of the rest, whose
  // Final_Sigma context includes the (original) first character.
  CHECK(py_capitalize("\u03a3\u0391\u03a3") == "\u03a3\u03b1\u03c2");  // "ΣΑΣ" -> "Σας"
  CHECK(py_capitalize("\u1f48\u0394\u03a5\u03a3\u03a3\u0395\u038e\u03a3") == "\u1f48\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2");
  CHECK(py_capitalize("A\u03a3") == "A\u03c2");
  CHECK(py_capitalize("\u03a3\u03a3") == "\u03a3\u03c2");
  CHECK(py_capitalize("\u03a3A") == "\u03a3a");
  CHECK(py_capitalize("\u03a3") == "\u03a3");
  CHECK(py_capitalize("\u0130\u03a3") == "\u0130\u03c2");
  CHECK(py_capitalize("\u00df\u03a3") == "Ss\u03c2");
  CHECK(py_capitalize("\U00010428\U00010400\u03a3") == "\U00010400\U00010428\u03c2");
  CHECK(py_capitalize("\u0149") == "\u02bcN");
  CHECK(py_capitalize("\ufb00") == "Ff");
  CHECK(py_capitalize("\u01c6EMAL") == "\u01c5emal");
  CHECK(py_capitalize("\u01c9ubljana") == "\u01c8ubljana");
  CHECK(py_capitalize("\u1fb3") == "\u1fbc");
  CHECK(py_capitalize("\u10d0") == "\u10d0");  // Georgian: title case is itself, upper is Mtavruli
  CHECK(py_capitalize("\u041f\u0420\u0418\u0412\u0415\u0422 \u041c\u0418\u0420") == "\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440");

  // str.upper(): no context, full mappings.
  CHECK(py_upper("stra\u00dfe") == "STRASSE");
  CHECK(py_upper("\u0149") == "\u02bcN");
  CHECK(py_upper("\ufb00") == "FF");
  CHECK(py_upper("\u01f0") == "J\u030c");
  CHECK(py_upper("\u0390") == "\u0399\u0308\u0301");
  CHECK(py_upper("\u01c6emal") == "\u01c4EMAL");
  CHECK(py_upper("\u1fb3") == "\u0391\u0399");
  CHECK(py_upper("\u10d0") == "\u1c90");
  CHECK(py_upper("\U0001e922") == "\U0001e900");
  CHECK(py_upper("\u1f40\u03b4\u03c5\u03c3\u03c3\u03b5\u03cd\u03c2") == "\u1f48\u0394\u03a5\u03a3\u03a3\u0395\u038e\u03a3");

  // s[0].lower() + s[1:]: s[0] alone has no Final_Sigma context; the rest is untouched.
  CHECK(py_lower_first("\u03a3\u0391") == "\u03c3\u0391");
  CHECK(py_lower_first("\u0130x") == "i\u0307x");
  CHECK(py_upper("") == "");
  CHECK(py_lower("") == "");
}

TEST_CASE("pystr: the RE2 class of Python whitespace matches exactly py_isspace, over every code point") {
  // py_isspace comes from CPython's tables (data/python/unicode_tables.cpp); the hand-written RE2
  // class that lm-eval's regexes use must agree with it everywhere.
  const RE2 space(foxeval::lm_eval::kPySpaceClass);
  REQUIRE(space.ok());
  int64_t spaces = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    std::string u;
    foxeval::utf8::append(u, c);
    const bool matched = RE2::FullMatch(u, space);
    if (matched != foxeval::py_isspace(c)) FAIL_CHECK(fmt::format("U+{:04X}: class {} vs str.isspace {}", uint32_t(c), matched, !matched));
    spaces += matched;
  }
  CHECK(spaces == 29);  // CPython 3.11: sum(chr(c).isspace() for c in range(0x110000))
}
