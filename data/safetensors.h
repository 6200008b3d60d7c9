// Reader for one .safetensors file (8-byte header length, JSON header, raw little-endian data),
// memory-mapped. Validates the header against the file size so a truncated file is an error.
#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace foxeval {

struct SafetensorsEntry {
  std::string dtype;  // "F32", "BF16", "F16", "I64", "I32", "U16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte offsets into the data section
};

class SafetensorsFile {
 public:
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  // A CPU tensor of the stored dtype. F32/BF16/F16/I64/I32/U8 supported; copies the bytes.
  at::Tensor read(const std::string& name) const;

 private:
  std::string path_;
  std::map<std::string, SafetensorsEntry> entries_;
  int fd_ = -1;  // kept open: tensors are read with pread when asked for (no mapping: no SIGBUS)
  size_t file_size_ = 0;
  size_t data_offset_ = 0;
};

}  // namespace foxeval
