// Reading members of a .zip archive in place (libzip), for benchmark data as it is released:
// LongBench's data.zip holds data/{task}.jsonl. Nothing is extracted to disk.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace foxeval {

// The largest member foxeval reads (uncompressed): LongBench's largest file is ~40 MB; the cap
// keeps a hostile archive (a zip bomb) from filling memory.
constexpr uint64_t kMaxZipMemberBytes = uint64_t{4} << 30;

// The archive's file members (folders left out), in archive order. Error naming the archive when
// it cannot be opened or is not a zip.
std::vector<std::string> zip_member_names(const std::string& zip_path);

// One member's bytes. Error naming the archive and the member when it is missing, corrupt (CRC) or
// larger than `max_bytes`.
std::string read_zip_member(const std::string& zip_path, const std::string& member, uint64_t max_bytes = kMaxZipMemberBytes);

}  // namespace foxeval
