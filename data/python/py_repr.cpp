#include "data/python/py_repr.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/python/printable_table.h"
#include "data/python/unicode.h"

namespace foxeval {

namespace {

bool printable_non_ascii(char32_t c) {
  using unicode_tables::kPrintable;
  const auto* end = kPrintable + unicode_tables::kPrintableCount;
  const auto* it = std::upper_bound(kPrintable, end, static_cast<uint32_t>(c),
                                    [](uint32_t v, const unicode_tables::CodeRange& r) { return v < r.first; });
  return it != kPrintable && c <= (it - 1)->last;
}

}  // namespace

std::string python_str_repr(const std::string& s) {
  const std::u32string u = utf8_to_u32(s, "repr");
  // unicode_repr: double quotes only when the text has a single quote and no double quote.
  const bool has_single = u.find(U'\'') != std::u32string::npos, has_double = u.find(U'"') != std::u32string::npos;
  const char32_t quote = has_single && !has_double ? U'"' : U'\'';
  std::u32string out;
  out += quote;
  auto ascii = [&out](const std::string& a) { out.append(a.begin(), a.end()); };
  for (char32_t c : u) {
    if (c == quote || c == U'\\') {
      out += U'\\';
      out += c;
    } else if (c == U'\t') {
      ascii("\\t");
    } else if (c == U'\n') {
      ascii("\\n");
    } else if (c == U'\r') {
      ascii("\\r");
    } else if (c < 0x20 || c == 0x7f) {
      ascii(fmt::format("\\x{:02x}", static_cast<uint32_t>(c)));
    } else if (c < 0x7f || printable_non_ascii(c)) {
      out += c;
    } else if (c <= 0xff) {
      ascii(fmt::format("\\x{:02x}", static_cast<uint32_t>(c)));
    } else if (c <= 0xffff) {
      ascii(fmt::format("\\u{:04x}", static_cast<uint32_t>(c)));
    } else {
      ascii(fmt::format("\\U{:08x}", static_cast<uint32_t>(c)));
    }
  }
  out += quote;
  return u32_to_utf8(out);
}

std::string python_str_list_repr(const std::vector<std::string>& xs) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + python_str_repr(xs[i]);
  return out + "]";
}

}  // namespace foxeval
