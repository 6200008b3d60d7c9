#include "models/checkpoint/checkpoint.h"

#include <ATen/Functions.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <filesystem>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/model_files.h"
#include "data/python/python_json.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

std::string shape_str(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// The numbers of config.json that size a model or enter its arithmetic, whichever family reads
// them: checked once here for their type and range (the families check how they fit together), so
// a negative hidden_ratio or a zero layer count is a refusal naming the file and the field, never
// a tensor of negative size or a division by zero later. Absent or null fields are the family's defaults.
void check_config_numbers(const Config& c) {
  struct IntField {
    const char* key;
    int64_t lo, hi;
  };
  static const IntField ints[] = {
      {"hidden_size", 1, int64_t(1) << 20},   {"num_hidden_layers", 1, 4096},     {"num_heads", 1, int64_t(1) << 16},
      {"num_kv_heads", 1, int64_t(1) << 16},  {"vocab_size", 1, int64_t(1) << 26}, {"intermediate_size", 1, int64_t(1) << 24},
      {"head_dim", 1, int64_t(1) << 16},      {"state_size", 1, int64_t(1) << 16}, {"n_groups", 1, int64_t(1) << 16},
      {"conv_kernel", 1, 1024},               {"conv_size", 1, 1024},              {"chunk_size", 1, int64_t(1) << 20},
      {"expand_ratio", 1, int64_t(1) << 16},  {"max_position_embeddings", 1, int64_t(1) << 30},
  };
  for (const IntField& f : ints) {
    if (!c.has(f.key)) continue;
    const nlohmann::json& v = c.json().at(f.key);
    if (!v.is_number_integer()) c.fail(f.key, fmt::format("must be an integer in [{}, {}], found {}", f.lo, f.hi, v.dump()));
    const bool in_range = v.is_number_unsigned()  // nlohmann keeps every non-negative integer as unsigned
                              ? v.get<uint64_t>() >= static_cast<uint64_t>(f.lo) && v.get<uint64_t>() <= static_cast<uint64_t>(f.hi)
                              : v.get<int64_t>() >= f.lo && v.get<int64_t>() <= f.hi;
    if (!in_range)
      c.fail(f.key, fmt::format("= {} is out of range: must be an integer in [{}, {}]", v.dump(), f.lo, f.hi));
  }
  struct FloatField {
    const char* key;
    double lo, hi;  // (lo, hi]: lo excluded
  };
  static const FloatField floats[] = {
      {"hidden_ratio", 0, 1024}, {"expand", 0, 1024},           {"expand_k", 0, 1024},        {"expand_v", 0, 1024},
      {"norm_eps", 0, 1},        {"layer_norm_epsilon", 0, 1},   {"rms_norm_eps", 0, 1},       {"rope_base", 0, 1e12},
      {"rope_theta", 0, 1e12},   {"time_step_min", 0, 1e6},      {"time_step_max", 0, 1e6},
  };
  for (const FloatField& f : floats) {
    if (!c.has(f.key)) continue;
    const nlohmann::json& v = c.json().at(f.key);
    if (!v.is_number()) c.fail(f.key, fmt::format("must be a number in ({}, {}], found {}", f.lo, f.hi, v.dump()));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x <= f.lo || x > f.hi)
      c.fail(f.key, fmt::format("= {} is out of range: must be a number in ({}, {}]", v.dump(), f.lo, f.hi));
  }
  if (c.has("log_pruning_tolerance")) {
    const nlohmann::json& v = c.json().at("log_pruning_tolerance");
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      c.fail("log_pruning_tolerance", fmt::format("= {} must be a finite number (a natural log, e.g. -10) or null", v.dump()));
  }
}

}  // namespace

// ---- Config ----

const nlohmann::json& Config::at(const std::string& key) const {
  if (!has(key)) fail(key, "is required but missing");
  return json_.at(key);
}

bool Config::has(const std::string& key) const { return json_.contains(key) && !json_.at(key).is_null(); }

void Config::fail(const std::string& key, const std::string& what) const {
  throw Error(fmt::format("{}: field \"{}\" {}", path_, key, what));
}

namespace {

// A config value of the JSON type `is` accepts, else the field's error "must be WHAT, found V".
template <class T>
T typed(const Config& c, const std::string& key, const nlohmann::json& v, bool (nlohmann::json::*is)() const noexcept,
        const char* what) {
  if (!(v.*is)()) c.fail(key, fmt::format("must be {}, found {}", what, v.dump()));
  return v.get<T>();
}

}  // namespace

int64_t Config::get_int(const std::string& key) const {
  return typed<int64_t>(*this, key, at(key), &nlohmann::json::is_number_integer, "an integer");
}
int64_t Config::get_int(const std::string& key, int64_t fallback) const { return has(key) ? get_int(key) : fallback; }

double Config::get_double(const std::string& key) const {
  return typed<double>(*this, key, at(key), &nlohmann::json::is_number, "a number");
}
double Config::get_double(const std::string& key, double fallback) const { return has(key) ? get_double(key) : fallback; }

bool Config::get_bool(const std::string& key, bool fallback) const {
  return has(key) ? typed<bool>(*this, key, at(key), &nlohmann::json::is_boolean, "true or false") : fallback;
}

std::string Config::get_string(const std::string& key) const {
  return typed<std::string>(*this, key, at(key), &nlohmann::json::is_string, "a string");
}
std::string Config::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

void Config::require_default(const std::string& key, const nlohmann::json& allowed) const {
  if (!has(key) || json_.at(key) == allowed) return;
  fail(key, fmt::format("= {} is not supported (only {})", json_.at(key).dump(), allowed.dump()));
}

// ---- Checkpoint ----

Checkpoint::Checkpoint(const std::string& directory) : directory_(directory) {
  if (!fs::is_directory(directory)) throw Error(fmt::format("{}: not a directory (expected a Hugging Face checkpoint)", directory));
  const std::string config_path = model_file(directory, "config.json", directory);
  if (!fs::exists(config_path)) throw Error(fmt::format("{}: no config.json", directory));
  // Python-written: may carry Infinity/NaN (e.g. Mamba-2's time_step_limit), see python_json.h.
  config_ = std::make_unique<Config>(read_python_json(config_path), config_path);
  if (!config_->json().is_object()) throw Error(fmt::format("{}: must hold a JSON object", config_path));
  check_config_numbers(*config_);

  const fs::path single = fs::path(directory) / "model.safetensors";
  const fs::path index = fs::path(directory) / "model.safetensors.index.json";
  std::vector<std::string> shard_names;
  std::map<std::string, std::string> weight_map;  // from the index, checked against the shards
  if (fs::exists(fs::symlink_status(index))) {
    model_file(directory, index.filename().string(), directory);  // inside the folder, symlinks resolved
    nlohmann::json j = read_json(index.string());
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      throw Error(fmt::format("{}: field \"weight_map\" missing or not an object", index.string()));
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      if (!it.value().is_string()) throw Error(fmt::format("{}: weight_map[\"{}\"] must be a file name", index.string(), it.key()));
      // Only a plain file name inside the model folder: never "../x", "/etc/x" or a symlink out of it.
      model_file(directory, it.value().get<std::string>(),
                 fmt::format("{}: weight_map[\"{}\"]", index.string(), it.key()));
      weight_map[it.key()] = it.value().get<std::string>();
      if (std::find(shard_names.begin(), shard_names.end(), it.value().get<std::string>()) == shard_names.end())
        shard_names.push_back(it.value().get<std::string>());
    }
  } else if (fs::exists(single)) {
    shard_names.push_back("model.safetensors");
  } else {
    throw Error(fmt::format("{}: no model.safetensors or model.safetensors.index.json", directory));
  }
  for (const auto& name : shard_names) {
    files_.push_back(std::make_unique<SafetensorsFile>(model_file(directory, name, directory)));
    const SafetensorsFile* file = files_.back().get();
    for (const auto& [tensor, entry] : file->entries()) {
      auto [it, inserted] = index_.emplace(tensor, file);
      if (!inserted)
        throw Error(fmt::format("tensor {} is stored twice: in {} and {}", tensor, it->second->path(), file->path()));
    }
  }
  for (const auto& [tensor, file] : weight_map) {
    auto it = index_.find(tensor);
    if (it == index_.end() || fs::path(it->second->path()).filename() != file)
      throw Error(fmt::format("{}: lists tensor {} in {}, which does not hold it", index.string(), tensor, file));
  }
}

std::string Checkpoint::model_type() const { return config_->get_string("model_type"); }

at::Tensor Checkpoint::take(const std::string& name, const std::vector<int64_t>& shape) {
  auto it = index_.find(name);
  if (it == index_.end())
    throw Error(fmt::format("{}: missing tensor {} (expected shape {})", directory_, name, shape_str(shape)));
  const SafetensorsEntry& entry = it->second->entries().at(name);
  if (entry.shape != shape)
    throw Error(fmt::format("{}: tensor {} has shape {}, expected {}", it->second->path(), name,
                            shape_str(entry.shape), shape_str(shape)));
  if (entry.dtype != "F32" && entry.dtype != "BF16" && entry.dtype != "F16")
    throw Error(fmt::format("{}: tensor {} has dtype {}, expected F32, BF16 or F16", it->second->path(), name, entry.dtype));
  if (taken_.insert(name).second) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    taken_parameters_ += n;
  }
  return it->second->read(name).to(at::kFloat);
}

void Checkpoint::finish() const {
  std::vector<std::string> unused;
  for (const auto& [name, file] : index_)
    if (!taken_.count(name)) unused.push_back(name);
  if (unused.empty()) return;
  const size_t shown = std::min<size_t>(unused.size(), 8);
  throw Error(fmt::format("{}: {} tensor(s) in the checkpoint are not used by model_type {}: {}{}", directory_,
                          unused.size(), model_type(),
                          fmt::join(unused.begin(), unused.begin() + shown, ", "),
                          unused.size() > shown ? ", ..." : ""));
}

}  // namespace foxeval
