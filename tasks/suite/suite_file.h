// A suite file (`foxeval suite run SUITE.yaml`, or a preset, tasks/suite/presets/*.yaml): YAML, or
// JSON, read into JSON with the line of every field kept, so an error names the file, the line and
// the field ("suite.yaml:12: tasks[1].lengths: ..."). The format is in the README ("foxeval suite").
//
//   name: smoke                       # optional: the title of report.html
//   vars: {shared: ../../shared}      # optional: ${shared} in any string below; --set NAME=VALUE replaces;
//                                     # a var given as null must come from --set where it is used
//   device: auto                      # auto | cpu | cuda | cuda:N (as --device)
//   dtype: auto                       # auto | float32 | bfloat16 (as --dtype)
//   cap: 0                            # optional: at most this many documents/records/cells per task
//   models:                           # each loaded once, for all tasks
//     - {label: fox, path: models/fox}    # a checkpoint folder (relative to this file's folder)
//     - {label: hub, repo: org/name}      # or a Hugging Face repo id in the local cache
//   tasks:                            # in order; each writes OUT/{label}/{name}.json
//     - task: niah                    # a task with a suite entry (tasks/task_def.h)
//       name: niah-easy               # optional: the output's name (default: the task's); unique
//       models: [fox]                 # optional: the labels it runs for (default: every model)
//       mode: easy                    # the rest: the task command's flags without "--"
//       lengths: [1000, 4100]
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace foxeval::suite {

// Where each field of a read file sits: its line by JSON pointer ("/tasks/1/lengths").
struct SourceLines {
  std::string file;
  std::map<std::string, int> lines;
  // "FILE:LINE: where" (the closest enclosing field that has a line; the file alone when none).
  std::string at(const std::string& pointer, const std::string& where) const;
};

struct SuiteText {
  nlohmann::json value;  // the document as JSON (YAML scalars typed: integers, numbers, true/false, null)
  SourceLines source;
};

// Reads FILE (".json": JSON; otherwise YAML). Errors name the file and line.
SuiteText read_suite_text(const std::string& path);

// Parses text as if read from `file` (tests, and presets).
SuiteText parse_suite_text(const std::string& text, const std::string& file, bool json);

// "${NAME}" in every string, from `vars` (the file's vars: section with `overrides` applied).
// An unknown name is an error naming the field.
void substitute_vars(SuiteText& suite, const std::map<std::string, std::string>& overrides);

// A key as one JSON Pointer token (RFC 6901: '~' -> "~0", '/' -> "~1"), for the pointers that name
// a suite file's fields in errors.
std::string escape_pointer(const std::string& key);

}  // namespace foxeval::suite
