// The two-character escapes of Python's json module, shared by its two string writers here:
// json_escape (ensure_ascii=True, json_escape.h) and python_json_string (ensure_ascii=False,
// json_dumps.h). Everything else they write differs (which characters become \uXXXX).
#pragma once

namespace foxeval {

// What json.dumps writes for c inside a string when it has a short escape (\" \\ \b \f \n \r \t),
// else nullptr.
inline const char* json_short_escape(char32_t c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return nullptr;
  }
}

}  // namespace foxeval
