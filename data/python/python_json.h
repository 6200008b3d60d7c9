// JSON as Python's json module and Hugging Face write it. Python's json.dump (allow_nan=True,
// the default) writes the non-finite floats as the bare tokens Infinity, -Infinity and NaN,
// which strict parsers (nlohmann's included) reject; transformers >= 5 writes them as
// {"__float__": "Infinity"}. Configs such as Mamba-2's time_step_limit = (0.0, inf) carry both.
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace foxeval {

// Parses `text` accepting the bare tokens Infinity, -Infinity and NaN outside strings, and
// turns them and every {"__float__": "Infinity" | "-Infinity" | "NaN"} object into doubles.
// `source` names the text in errors (file name).
nlohmann::json parse_python_json(const std::string& text, const std::string& source);
// The file at `path`, as parse_python_json; errors name the file.
nlohmann::json read_python_json(const std::string& path);

// The value as a double if it is a number or a {"__float__": ...} object; nullopt otherwise.
std::optional<double> python_float(const nlohmann::json& value);

}  // namespace foxeval
