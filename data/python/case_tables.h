// Upper and title case tables behind pystr.h's py_upper/py_capitalize, generated from CPython's
// unicodedata by tests/tools/make_case_tables.py; case_tables.cpp is that output (it names the
// CPython and Unicode versions). Lower case is longbench's (data/python/unicode.h).
#pragma once
#include <cstddef>
#include <cstdint>

namespace foxeval::case_tables {

// c maps to the one code point c + delta for c = first, first + stride, ..., last. Runs are
// sorted by `first` and do not interleave.
struct CaseRun {
  uint32_t first, last;
  uint32_t stride;
  int32_t delta;
};
// A code point whose upper or title case is several code points (CPython's *Full mappings write
// at most 3): both mappings, 0-padded.
struct FullCase {
  uint32_t cp;
  uint32_t upper[3];
  uint32_t title[3];
};

extern const CaseRun kUpper[];  // str.upper(), one to one, outside kSpecial
extern const size_t kUpperCount;
extern const CaseRun kTitle[];  // title case (str.capitalize()'s first character), outside kSpecial
extern const size_t kTitleCount;
extern const FullCase kSpecial[];  // sorted by cp
extern const size_t kSpecialCount;

}  // namespace foxeval::case_tables
