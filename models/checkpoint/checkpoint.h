// A Hugging Face checkpoint directory: config.json plus safetensors weights (single file or
// sharded with model.safetensors.index.json), memory-mapped.
//
// Families take each tensor they need by name with its expected shape; `finish()` then fails
// if any tensor in the files was not taken. Every error names the tensor and the file.
#pragma once
#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "data/safetensors.h"

namespace foxeval {

// Typed access to config.json with errors that name the file and the field.
class Config {
 public:
  Config(nlohmann::json json, std::string path) : json_(std::move(json)), path_(std::move(path)) {}
  bool has(const std::string& key) const;  // present and not null
  int64_t get_int(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;  // fallback when absent/null
  double get_double(const std::string& key) const;
  double get_double(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // Throws unless the value is absent, null or equal to `allowed`.
  void require_default(const std::string& key, const nlohmann::json& allowed) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;
  const nlohmann::json& json() const { return json_; }
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json& at(const std::string& key) const;
  nlohmann::json json_;
  std::string path_;
};

class Checkpoint {
 public:
  explicit Checkpoint(const std::string& directory);
  const std::string& directory() const { return directory_; }
  const Config& config() const { return *config_; }
  std::string model_type() const;

  bool contains(const std::string& name) const { return index_.count(name) > 0; }
  // The tensor as float32 on the CPU, after checking its shape. Marks it used.
  at::Tensor take(const std::string& name, const std::vector<int64_t>& shape);
  // Fails naming every tensor present in the files that no `take` asked for.
  void finish() const;
  int64_t taken_parameters() const { return taken_parameters_; }

 private:
  std::string directory_;
  std::unique_ptr<Config> config_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsFile*> index_;
  std::set<std::string> taken_;
  int64_t taken_parameters_ = 0;
};

}  // namespace foxeval
