// Character-class tables behind unicode.h, generated from CPython's unicodedata by
// tests/tools/longbench_metrics_golden.py (tables); unicode_tables.cpp is that output.
#pragma once
#include <cstddef>
#include <cstdint>

namespace foxeval::unicode_tables {

struct CodeRange {
  uint32_t first, last;  // inclusive
};
// chr(c).lower() == chr(c + delta) for c = first, first + stride, ..., last.
struct LowerRun {
  uint32_t first, last;
  uint32_t stride;
  int32_t delta;
};

extern const LowerRun kLower[];
extern const size_t kLowerCount;
extern const CodeRange kSpace[];
extern const size_t kSpaceCount;
extern const CodeRange kAlnum[];
extern const size_t kAlnumCount;
extern const CodeRange kDecimal[];
extern const size_t kDecimalCount;
extern const CodeRange kCaseIgnorable[];
extern const size_t kCaseIgnorableCount;
extern const CodeRange kCased[];
extern const size_t kCasedCount;

}  // namespace foxeval::unicode_tables
