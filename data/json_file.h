// Result and state files: written atomically (temp file, fsync, rename), so an interrupted
// run never leaves a half-written file behind. And whole-file reads.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace foxeval {

// Text as it is (temp file beside it, fsync, rename); the temp file never outlives an error.
void write_text_atomic(const std::string& path, const std::string& text);
void write_json_atomic(const std::string& path, const nlohmann::json& value, int indent = 1);
nlohmann::json read_json(const std::string& path);  // errors name the file
// Refuses JSON text nested deeper than code that walks a value recursively may go (Error naming
// `source`); read_json and the JSON-lines readers call it before parsing.
void check_json_depth(std::string_view text, const std::string& source);
std::string read_text_file(const std::string& path);  // the whole file, bytes as they are; errors name the file
// An input that `flag` names and a reader streams line by line: a file, a pipe or a process
// substitution; a folder or a device (/dev/zero never ends) is refused, naming both
// ("FLAG PATH: not a file (a folder or a device)"). A path that does not exist passes: the open says so.
void check_input_stream(const std::string& path, const std::string& flag);

}  // namespace foxeval
