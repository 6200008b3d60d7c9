#include "tests/test_support.h"
#include "tests/temp_files.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <random>

namespace foxeval::test {

void write_safetensors(const std::string& path, const std::map<std::string, at::Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& [name, t0] : tensors) {
    at::Tensor t = t0.contiguous().cpu();
    std::string dtype = t.scalar_type() == at::kFloat      ? "F32"
                        : t.scalar_type() == at::kBFloat16 ? "BF16"
                        : t.scalar_type() == at::kHalf     ? "F16"
                                                           : "I64";
    const size_t begin = data.size();
    data.append(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
    header[name] = {{"dtype", dtype}, {"shape", t.sizes().vec()}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  while (h.size() % 8) h += ' ';
  const uint64_t n = h.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << h << data;
}

std::string temp_dir(const std::string& name) {
  static std::mt19937_64 rng(std::random_device{}());
  auto dir = std::filesystem::temp_directory_path() / ("foxeval-" + name + "-" + std::to_string(rng() % 1000000000));
  remove_tree(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace foxeval::test
