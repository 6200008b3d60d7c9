#include "data/data_source.h"

#include <filesystem>

#include "data/content_digest.h"
#include "data/json_file.h"
#include "data/zip_archive.h"

namespace fs = std::filesystem;

namespace foxeval {

std::string DataSource::name() const { return fs::path(in_zip() ? member : file).filename().string(); }

std::string DataSource::extension() const { return fs::path(name()).extension().string(); }

std::string DataSource::where() const { return in_zip() ? file + ":" + member : file; }

std::string DataSource::read() const { return in_zip() ? read_zip_member(file, member) : read_text_file(file); }

std::string DataSource::sha256() const {
  if (!in_zip()) return sha256_file(file);
  return sha256_hex(read());  // a member is read whole anyway (LongBench's largest is ~40 MB)
}

std::string digest_sources(const std::vector<DataSource>& sources) {
  // Files hash in parallel (sha256_files); members one at a time (each opens the archive).
  std::vector<std::string> files;
  for (const DataSource& s : sources)
    if (!s.in_zip()) files.push_back(s.file);
  const std::vector<std::string> file_hex = sha256_files(files);
  std::vector<std::pair<std::string, std::string>> named;
  size_t next_file = 0;
  for (const DataSource& s : sources) named.emplace_back(s.name(), s.in_zip() ? s.sha256() : file_hex[next_file++]);
  return combine_digests(named);
}

}  // namespace foxeval
