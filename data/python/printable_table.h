// str.isprintable()'s code points >= 0x80 (generated: data/python/printable_table.cpp).
#pragma once
#include <cstddef>

#include "data/python/unicode_tables.h"

namespace foxeval::unicode_tables {

extern const CodeRange kPrintable[];
extern const size_t kPrintableCount;

}  // namespace foxeval::unicode_tables
