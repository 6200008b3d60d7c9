// An output never replaces an input: before any work, every path a command will write (its result
// and what lives beside it: OUT.journal*.jsonl, OUT.state*.json, OUT.lock, OUT.tmp.*; a folder it
// fills) is compared with every path it reads (data, model, requests, parts, haystack, config), by
// where they really are on disk: relative spellings, `..` and symbolic links are resolved first.
#pragma once
#include <string>
#include <vector>

namespace foxeval {

struct NamedPath {
  std::string flag;  // how the user gave it ("--out", "--data", "parts"), for the message
  std::string path;  // as given
};

// Throws foxeval::Error naming both flags and paths when an output
//   - is an input, or is inside an input folder (the model's config.json, a file of the data folder),
//   - or an input sits beside it under a name it writes (OUT.journal.jsonl, OUT.lock, OUT.tmp.*, ...).
// A folder of outputs may hold inputs (`longbench export lb/merged.json --out lb`): the files
// written into it are checked one by one as they are written (refuse_writing_over_input).
// The inputs are remembered for refuse_writing_over_input.
// Inputs that do not exist are skipped (nothing to replace); symlinks among an input folder's own
// entries count as inputs where they point (a checkpoint folder of links to blobs elsewhere).
void refuse_output_over_input(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// The last line of defence, in the one writer (data/json_file.h): refuses to create or replace
// `path` when it is, or is inside, an input given to refuse_output_over_input in this process.
void refuse_writing_over_input(const std::string& path);

// Where `path` really is: symbolic links of the part that exists resolved, `.` and `..` folded,
// the rest appended as written. An empty path stays empty.
std::string resolved_path(const std::string& path);

}  // namespace foxeval
