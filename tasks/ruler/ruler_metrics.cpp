#include "tasks/ruler/ruler_metrics.h"

#include <algorithm>

#include "data/python/str_strip.h"
#include "data/python/unicode.h"

namespace foxeval::ruler {

namespace {

double match_share(const std::string& prediction, const std::vector<std::string>& outputs) {
  const std::u32string pred = py_lower(utf8_to_u32(postprocess_pred(prediction), "prediction"));
  double found = 0.0;  // sum(1.0 if ... else 0.0 ...): exact in a double
  for (const std::string& r : outputs)
    if (pred.find(py_lower(utf8_to_u32(r, "expected output"))) != std::u32string::npos) found += 1.0;
  return found / static_cast<double>(outputs.size());  // ZeroDivisionError in Python for no outputs
}

}  // namespace

std::string postprocess_pred(const std::string& prediction) {
  std::u32string s = py_strip(utf8_to_u32(prediction, "prediction"));
  for (char32_t& c : s)
    if (c <= 0x1f) c = U'\n';
  return u32_to_utf8(py_strip(s));
}

double string_match_all(const std::string& prediction, const std::vector<std::string>& outputs) {
  return match_share(prediction, outputs);
}

// lm-eval's string_match_part takes the max over predictions of the same share; it is given one.
double string_match_part(const std::string& prediction, const std::vector<std::string>& outputs) {
  return match_share(prediction, outputs);
}

double aggregate_metrics(const std::vector<double>& values) {
  double sum = 0.0;
  size_t n = 0;
  for (double v : values)
    if (v != -1) sum += v, ++n;
  return n ? sum / static_cast<double>(n) : -1.0;
}

}  // namespace foxeval::ruler
