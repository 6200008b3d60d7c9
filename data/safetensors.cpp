#include "data/safetensors.h"

#include <ATen/Functions.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>
#include <vector>

#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {
namespace {

int64_t dtype_size(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "BF16" || dtype == "F16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "U8" || dtype == "I8" || dtype == "BOOL") return 1;
  return -1;
}

at::ScalarType scalar_type(const std::string& dtype, const std::string& where) {
  if (dtype == "F32") return at::kFloat;
  if (dtype == "F64") return at::kDouble;
  if (dtype == "BF16") return at::kBFloat16;
  if (dtype == "F16") return at::kHalf;
  if (dtype == "I64") return at::kLong;
  if (dtype == "I32") return at::kInt;
  if (dtype == "I16") return at::kShort;
  if (dtype == "U8") return at::kByte;
  if (dtype == "I8") return at::kChar;
  if (dtype == "BOOL") return at::kBool;
  throw Error(fmt::format("{}: unsupported safetensors dtype {}", where, dtype));
}

// Validates the header (types, ranges, exact tiling of the data section), fills `entries` and
// returns the offset of the data section. `map` holds the file's first 8 + header length bytes (only
// its first 8 when that length is out of range: refused before anything else is read); map_size is
// the file's size.
size_t parse_header(const uint8_t* map, size_t map_size, const std::string& path,
                    std::map<std::string, SafetensorsEntry>& entries) {
  uint64_t header_len = 0;
  std::memcpy(&header_len, map, 8);  // little-endian on every platform we build for
  if (header_len > map_size - 8) {
    throw Error(fmt::format("{}: truncated safetensors file (header says {} bytes, file has {})", path,
                            header_len, map_size - 8));
  }
  // As the safetensors library: a header is at most 100 MB (a real one is a few hundred KB).
  constexpr uint64_t kMaxHeader = 100'000'000;
  if (header_len > kMaxHeader || header_len < 2)
    throw Error(fmt::format("{}: safetensors header length {} is outside [2, {}] bytes", path, header_len, kMaxHeader));
  const size_t data_offset = 8 + header_len;
  // Messages below print parts of the header (dump() recurses): nesting is bounded first, as for every JSON file.
  check_json_depth(std::string_view(reinterpret_cast<const char*>(map + 8), header_len), path + " (safetensors header)");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(map + 8, map + data_offset);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: malformed safetensors header: {}", path, e.what()));
  }
  if (!header.is_object()) throw Error(fmt::format("{}: malformed safetensors header: not a JSON object", path));
  const uint64_t data_size = map_size - data_offset;
  // Every field is checked for its type and range before use (a float offset or a negative dim
  // must not be converted silently), then the tensors must tile the data section exactly, as the
  // safetensors library requires: sorted by offset they start at 0, each begins where the one
  // before ends (no overlap, no gap), and the last ends at the end of the file.
  std::vector<std::pair<std::string, SafetensorsEntry>> sorted;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string where = fmt::format("{}: tensor \"{}\"", path, it.key());
    const auto& v = it.value();
    if (it.key() == "__metadata__") {
      if (!v.is_object() && !v.is_null()) throw Error(fmt::format("{}: __metadata__ must be an object of strings", path));
      continue;
    }
    if (!v.is_object()) throw Error(fmt::format("{}: malformed header entry (not an object)", where));
    SafetensorsEntry e;
    const auto dt = v.find("dtype"), sh = v.find("shape"), off = v.find("data_offsets");
    if (dt == v.end() || !dt->is_string()) throw Error(fmt::format("{}: field \"dtype\" missing or not a string", where));
    e.dtype = dt->get<std::string>();
    const int64_t esize = dtype_size(e.dtype);
    if (esize < 0)
      throw Error(fmt::format("{}: unsupported dtype \"{}\" (F64, F32, BF16, F16, I64, I32, I16, I8, U64, U32, U16, U8, BOOL)",
                              where, e.dtype));
    if (sh == v.end() || !sh->is_array() || sh->size() > 64)
      throw Error(fmt::format("{}: field \"shape\" missing or not a list of at most 64 sizes", where));
    uint64_t numel = 1;
    bool overflow = false;
    for (const auto& d : *sh) {
      if (!d.is_number_integer() || (d.is_number_integer() && !d.is_number_unsigned() && d.get<int64_t>() < 0))
        throw Error(fmt::format("{}: field \"shape\" = {} must hold integers >= 0", where, sh->dump()));
      const uint64_t n = d.get<uint64_t>();
      if (n > static_cast<uint64_t>(INT64_MAX)) overflow = true;
      e.shape.push_back(static_cast<int64_t>(n));
      overflow = overflow || __builtin_mul_overflow(numel, n, &numel);
    }
    uint64_t bytes = 0;
    overflow = overflow || __builtin_mul_overflow(numel, static_cast<uint64_t>(esize), &bytes);
    if (off == v.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      throw Error(fmt::format("{}: field \"data_offsets\" must be [begin, end], two integers >= 0 (got {})", where,
                              off == v.end() ? std::string("nothing") : off->dump()));
    e.begin = (*off)[0].get<uint64_t>();
    e.end = (*off)[1].get<uint64_t>();
    if (overflow || e.end < e.begin || e.end - e.begin != bytes) {
      throw Error(fmt::format("{}: data_offsets [{}, {}) hold {} bytes, but shape {} of {} needs {}", where, e.begin,
                              e.end, e.end >= e.begin ? std::to_string(e.end - e.begin) : std::string("a negative number of"),
                              sh->dump(), e.dtype, overflow ? std::string("more than 2^64") : std::to_string(bytes)));
    }
    if (e.end > data_size) {
      throw Error(fmt::format("{}: truncated safetensors file: the tensor ends at byte {} of a {}-byte data section",
                              where, e.end, data_size));
    }
    sorted.emplace_back(it.key(), std::move(e));
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second.begin != b.second.begin ? a.second.begin < b.second.begin : a.second.end < b.second.end;
  });
  uint64_t expect = 0;
  const std::string* previous = nullptr;
  for (const auto& [name, e] : sorted) {
    if (e.begin != expect) {
      if (e.begin < expect)
        throw Error(fmt::format("{}: tensor \"{}\" (bytes [{}, {})) overlaps tensor \"{}\" (which ends at {}): tensors "
                                "must not share bytes",
                                path, name, e.begin, e.end, previous ? *previous : std::string(), expect));
      throw Error(fmt::format("{}: tensor \"{}\" starts at byte {} of the data section, but the bytes before end at {}: "
                              "a gap (the data_offsets must tile the data section)",
                              path, name, e.begin, expect));
    }
    expect = e.end;
    previous = &name;
  }
  if (expect != data_size)
    throw Error(fmt::format("{}: the tensors cover {} bytes of a {}-byte data section: {} trailing bytes belong to no "
                            "tensor (the data_offsets must tile the data section)",
                            path, expect, data_size, data_size - expect));
  for (auto& [name, e] : sorted) entries.emplace(name, std::move(e));
  return data_offset;
}

}  // namespace

namespace {

// Reads exactly n bytes at offset, or says where the file ended: a file that shrinks under a run
// (truncated, rewritten) gives an error, never the SIGBUS a mapping would.
void pread_exact(int fd, void* dst, size_t n, size_t offset, const std::string& what) {
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::pread(fd, static_cast<uint8_t*>(dst) + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw Error(fmt::format("{}: read failed ({})", what, std::strerror(errno)));
    if (got == 0)
      throw Error(fmt::format("{}: the file ended at byte {} while {} bytes from {} were read (did it change during "
                              "the run?)",
                              what, offset + done, n, offset));
    done += static_cast<size_t>(got);
  }
}

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: a FIFO in place of the file must not block the open; only regular files are read.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) throw Error(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  try {
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) throw Error(fmt::format("{}: not a regular file", path));
    file_size_ = static_cast<size_t>(st.st_size);
    if (file_size_ < 8) throw Error(fmt::format("{}: truncated safetensors file ({} bytes, no header)", path, file_size_));
    // The header alone is read (parse_header checks its length against the file and the 100 MB cap
    // before it looks past the first 8 bytes); tensors are read when asked for.
    std::vector<uint8_t> head(8);
    pread_exact(fd_, head.data(), 8, 0, path);
    uint64_t header_len = 0;
    std::memcpy(&header_len, head.data(), 8);
    if (header_len >= 2 && header_len <= 100'000'000 && header_len <= file_size_ - 8) {
      head.resize(8 + header_len);
      pread_exact(fd_, head.data() + 8, header_len, 8, path);
    }
    data_offset_ = parse_header(head.data(), file_size_, path_, entries_);
  } catch (...) {
    ::close(fd_);  // the destructor does not run for a throwing constructor
    fd_ = -1;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (fd_ >= 0) ::close(fd_);
}

at::Tensor SafetensorsFile::read(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw Error(fmt::format("{}: no tensor named {}", path_, name));
  const SafetensorsEntry& e = it->second;
  const std::string where = fmt::format("{}: tensor {}", path_, name);
  at::Tensor out = at::empty(e.shape, at::TensorOptions().dtype(scalar_type(e.dtype, where)));
  // Read with pread into memory the tensor owns (aligned), never through a mapping.
  pread_exact(fd_, out.data_ptr(), e.end - e.begin, data_offset_ + e.begin, where);
  return out;
}

}  // namespace foxeval
