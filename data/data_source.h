// Where a benchmark file's bytes are: a file on disk (a data folder's .jsonl/.parquet, a file in a
// Hugging Face cache) or a member of a .zip archive read in place (LongBench's data.zip). One type
// that the record readers (data/records.h) and the run's identity digest both take, so a member is
// never turned into a made-up path that one of them cannot open.
#pragma once
#include <string>
#include <vector>

namespace foxeval {

struct DataSource {
  std::string file;    // the file on disk; for a member, its archive
  std::string member;  // the member's name inside the archive; empty for a plain file

  static DataSource on_disk(std::string path) { return {std::move(path), ""}; }
  static DataSource zip_member(std::string archive, std::string name) { return {std::move(archive), std::move(name)}; }

  bool in_zip() const { return !member.empty(); }
  // The file name ("trec.jsonl"), also for a member ("data/trec.jsonl" -> "trec.jsonl"): what a
  // digest lists it under, so a member and its unzipped copy give one digest.
  std::string name() const;
  std::string extension() const;  // of name(), as written (".jsonl", ".parquet")
  // For messages: the path, or "ARCHIVE:MEMBER" for a member.
  std::string where() const;
  // The bytes a reader sees (a member inflated, within zip_archive.h's cap). Errors name the source.
  std::string read() const;
  // SHA-256 (hex) of those bytes: a member's equals its unzipped file's.
  std::string sha256() const;

  bool operator==(const DataSource& o) const { return file == o.file && member == o.member; }
};

// One digest over sources ("sha256:..."): combine_digests over (name(), sha256()) in the order
// given, hashed in parallel. For plain files it equals the digest of the same paths taken before
// this type existed (file name and content), so earlier journals still resume.
std::string digest_sources(const std::vector<DataSource>& sources);

}  // namespace foxeval
