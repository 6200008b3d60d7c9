// Python's json.dumps(value, ensure_ascii=False[, indent=N]) byte for byte, for the files whose
// official writers use it (LongBench's pred files and result.json, lm-eval's results, samples and
// document hashes): keys in the object's iteration order (nlohmann::json: sorted, as
// sort_keys=True; ordered_json: insertion order), separators ", " / ": " on one line or "," / ": "
// with newlines, floats as repr (python_float_repr), non-finite floats as the bare NaN / Infinity /
// -Infinity (allow_nan=True), only '"', '\\' and control characters escaped (\n \r \t \b \f by
// name, the others as \u00xx), everything else as UTF-8.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace foxeval {

// indent < 0: one line (json.dumps' default separators).
std::string python_json_dumps(const nlohmann::json& value, int indent = -1);
std::string python_json_dumps(const nlohmann::ordered_json& value, int indent = -1);

// A string literal as json.dumps(s, ensure_ascii=False) writes it.
std::string python_json_string(const std::string& s);

// The same value with its objects as ordered_json (keys in nlohmann::json's sorted order).
nlohmann::ordered_json to_ordered_json(const nlohmann::json& value);

}  // namespace foxeval
