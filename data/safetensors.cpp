#include "data/safetensors.h"

#include <ATen/Functions.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "data/errors.h"

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

}  // namespace

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw Error(fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
  struct stat st {};
  ::fstat(fd, &st);
  map_size_ = static_cast<size_t>(st.st_size);
  if (map_size_ < 8) {
    ::close(fd);
    throw Error(fmt::format("{}: truncated safetensors file ({} bytes, no header)", path, map_size_));
  }
  void* p = ::mmap(nullptr, map_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw Error(fmt::format("{}: mmap failed ({})", path, std::strerror(errno)));
  map_ = static_cast<const uint8_t*>(p);

  uint64_t header_len = 0;
  std::memcpy(&header_len, map_, 8);  // little-endian on every platform we build for
  if (header_len > map_size_ - 8) {
    throw Error(fmt::format("{}: truncated safetensors file (header says {} bytes, file has {})", path,
                            header_len, map_size_ - 8));
  }
  data_offset_ = 8 + header_len;
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(map_ + 8, map_ + data_offset_);
  } catch (const std::exception& e) {
    throw Error(fmt::format("{}: malformed safetensors header: {}", path, e.what()));
  }
  const uint64_t data_size = map_size_ - data_offset_;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const auto& v = it.value();
    SafetensorsEntry e;
    try {
      e.dtype = v.at("dtype").get<std::string>();
      e.shape = v.at("shape").get<std::vector<int64_t>>();
      auto offsets = v.at("data_offsets").get<std::vector<uint64_t>>();
      if (offsets.size() != 2) throw Error("data_offsets must have 2 entries");
      e.begin = offsets[0];
      e.end = offsets[1];
    } catch (const std::exception& ex) {
      throw Error(fmt::format("{}: tensor {}: malformed header entry ({})", path, it.key(), ex.what()));
    }
    int64_t numel = 1;
    for (int64_t d : e.shape) numel *= d;
    const int64_t esize = dtype_size(e.dtype);
    if (esize < 0) throw Error(fmt::format("{}: tensor {}: unsupported dtype {}", path, it.key(), e.dtype));
    if (e.end < e.begin || e.end - e.begin != static_cast<uint64_t>(numel * esize)) {
      throw Error(fmt::format("{}: tensor {}: data_offsets [{}, {}) do not match shape and dtype {}", path,
                              it.key(), e.begin, e.end, e.dtype));
    }
    if (e.end > data_size) {
      throw Error(fmt::format("{}: truncated safetensors file: tensor {} ends at byte {} of a {}-byte data section",
                              path, it.key(), e.end, data_size));
    }
    entries_.emplace(it.key(), std::move(e));
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(const_cast<uint8_t*>(map_), map_size_);
}

at::Tensor SafetensorsFile::read(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw Error(fmt::format("{}: no tensor named {}", path_, name));
  const SafetensorsEntry& e = it->second;
  const std::string where = fmt::format("{}: tensor {}", path_, name);
  at::Tensor out = at::empty(e.shape, at::TensorOptions().dtype(scalar_type(e.dtype, where)));
  // Copy (rather than wrap the mapping) so the tensor owns aligned memory.
  std::memcpy(out.data_ptr(), map_ + data_offset_ + e.begin, e.end - e.begin);
  return out;
}

}  // namespace foxeval
