// Files foxeval creates and then appends to (journals): created new, never an existing file or a
// symbolic link (the atomic writer of results, data/json_file.h, makes its temp files the same way).
#pragma once
#include <string>

namespace foxeval {

// O_CREAT|O_EXCL|O_NOFOLLOW: an existing file or a link at `path` is refused (Error naming the
// path), and so is a path that is or lies inside an input of this run (data/path_overlap.h).
// Returns the descriptor, open for writing.
int create_new_file(const std::string& path);

}  // namespace foxeval
