// Python's str.replace(from, to) for a non-empty `from`, as RULER's generators (niah_utils,
// vt_utils) apply it to their templates and texts: every occurrence, left to right, none
// overlapping, the replacements themselves never rescanned.
#pragma once
#include <string>

#include "data/errors.h"

namespace foxeval::ruler {

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) throw Error("ruler: an empty replacement target");
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

}  // namespace foxeval::ruler
