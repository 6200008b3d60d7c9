// Which files a model folder may have foxeval read: only plain file names (no '/', '..' or
// absolute paths, whatever an index file or a config names), and only files that, with every
// symlink resolved, lie inside the folder. A snapshot of the Hugging Face hub cache
// (models--org--name/snapshots/<commit>/) links its files to ../../blobs/: there the repo's own
// folder (models--org--name/) is the boundary.
#pragma once
#include <string>

namespace foxeval {

// True for a name that is one path component: not empty, no '/', not "." or "..", no control characters.
bool is_plain_file_name(const std::string& name);

// dir/name after the checks above; throws foxeval::Error naming `where` (e.g. the index file and
// its field) otherwise. A file that does not exist is returned as is (the caller says it is missing).
std::string model_file(const std::string& dir, const std::string& name, const std::string& where);

}  // namespace foxeval
