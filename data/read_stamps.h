// What was read is what the identity names: data/content_digest.cpp stamps every file it digests
// (size, mtime, ctime, inode; a write moves ctime, which no user can set back), and the runner
// checks the stamps before it writes a result.
#pragma once

namespace foxeval {

// Throws foxeval::Error naming the first file digested (sha256_file) in this process that changed
// since its last digest. A file removed since is skipped (its readers hold it open); a file put in
// its place is another inode, and caught.
void check_digested_files_unchanged();

}  // namespace foxeval
