// foxeval's bundled files (the GPT-2 tokenizer, task definitions, LongBench's config, table
// definitions) live in the source tree, beside the binary's build folder. This is the one place
// that finds them: a variable naming the place, else the source tree the binary was configured
// from (FOXEVAL_DATA_DIR, compile time), else the folder above the binary's (build/foxeval -> ./).
#pragma once
#include <string>
#include <vector>

namespace foxeval {

struct Resource {
  std::string what;                // for the error: "the NIAH definition files"
  std::string relative;            // from the source tree's root: "tasks/niah" or "tasks/lm_eval/tasks.json"
  std::vector<std::string> holds;  // files the folder must hold; empty: `relative` is itself a file
  std::string env;                 // a variable that names the place instead ("" = none)
  std::string env_relative;        // appended to the variable's value ("lm_eval/tasks.json"; "" = none)
};

// The path of the resource. When its variable is set (not empty) that place is the only one
// tried: a user who names a place gets those files or an error, never others. Throws Error naming
// what was looked for, every path tried and the variable.
std::string find_resource(const Resource& r);

}  // namespace foxeval
