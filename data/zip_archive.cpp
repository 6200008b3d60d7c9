#include "data/zip_archive.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iterator>
#include <memory>

#include "data/errors.h"

namespace foxeval {
namespace {

struct ArchiveCloser {
  void operator()(zip_t* z) const { zip_discard(z); }  // read-only: nothing to write back
};
using Archive = std::unique_ptr<zip_t, ArchiveCloser>;

Archive open_archive(const std::string& zip_path) {
  int code = 0;
  zip_t* z = zip_open(zip_path.c_str(), ZIP_RDONLY, &code);
  if (!z) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error(fmt::format("{}: cannot open as a zip archive ({})", zip_path, why));
  }
  return Archive(z);
}

}  // namespace

bool is_contained_member_name(const std::string& name) {
  // Relative, no ".." component, no control character: joined to the archive's path it stays below it.
  // A backslash or a drive letter ("C:") is refused too: the zip format separates with '/' only, and
  // Windows tools read "..\\x" or "C:x" as leaving the folder.
  if (name.empty() || name.front() == '/') return false;
  if (name.size() >= 2 && name[1] == ':' && std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || c == '\\') return false;
  }
  for (size_t start = 0; start <= name.size();) {
    const size_t end = std::min(name.find('/', start), name.size());
    if (name.compare(start, end - start, "..") == 0) return false;
    start = end + 1;
  }
  return true;
}

std::vector<std::string> zip_member_names(const std::string& zip_path) {
  Archive z = open_archive(zip_path);
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  std::vector<std::string> names;
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z.get(), static_cast<zip_uint64_t>(i), ZIP_FL_ENC_GUESS);
    if (!name) continue;
    std::string s(name);
    if (!is_contained_member_name(s))
      throw Error(fmt::format("{}: member {} is not a relative path inside the archive (absolute, a drive letter, "
                              "'..', a backslash or control characters); refusing the archive", zip_path, nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).substr(0, 200)));
    if (s.back() != '/') names.push_back(std::move(s));
  }
  return names;
}

std::string read_zip_member(const std::string& zip_path, const std::string& member, uint64_t max_bytes) {
  if (!is_contained_member_name(member))
    throw Error(fmt::format("{}: '{}' is not a relative path inside the archive", zip_path, member.substr(0, 200)));
  Archive z = open_archive(zip_path);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat(z.get(), member.c_str(), 0, &st) != 0)
    throw Error(fmt::format("{}: the archive has no member '{}'", zip_path, member));
  if ((st.valid & ZIP_STAT_SIZE) && st.size > max_bytes)
    throw Error(fmt::format("{}: member '{}' is {} bytes uncompressed, more than the {} foxeval reads", zip_path, member,
                            st.size, max_bytes));
  zip_file_t* f = zip_fopen(z.get(), member.c_str(), 0);
  if (!f) throw Error(fmt::format("{}: cannot read member '{}' ({})", zip_path, member, zip_strerror(z.get())));
  std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> file(f, zip_fclose);
  std::string out;
  if (st.valid & ZIP_STAT_SIZE) out.reserve(static_cast<size_t>(st.size));  // no doubling past the stated size
  char buf[1 << 16];
  for (;;) {
    const zip_int64_t got = zip_fread(f, buf, sizeof buf);
    if (got < 0)
      throw Error(fmt::format("{}: member '{}' is corrupt ({})", zip_path, member, zip_file_strerror(f)));
    if (got == 0) break;
    // The stated size can lie; the cap holds on what is actually inflated.
    if (out.size() + static_cast<uint64_t>(got) > max_bytes)
      throw Error(fmt::format("{}: member '{}' inflates past the {} bytes foxeval reads", zip_path, member, max_bytes));
    out.append(buf, static_cast<size_t>(got));
  }
  return out;
}

}  // namespace foxeval
