#include "tasks/run/pruning_header.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>

#include "data/errors.h"

namespace foxeval {
namespace {

constexpr const char* kCountKeys[] = {"key_blocks_skipped", "key_blocks", "decode_keys_skipped", "decode_keys"};

void check_counts(const nlohmann::json& c) {
  if (!c.is_object()) throw Error("pruning counts must be an object");
  if (!c.contains("log_tolerance") || !c["log_tolerance"].is_number())
    throw Error("pruning counts: log_tolerance must be a number");
  for (const char* k : kCountKeys)
    if (!c.contains(k) || !c[k].is_number_integer() || c[k].get<int64_t>() < 0)
      throw Error(fmt::format("pruning counts: {} must be a non-negative integer", k));
  if (c["key_blocks_skipped"].get<int64_t>() > c["key_blocks"].get<int64_t>() ||
      c["decode_keys_skipped"].get<int64_t>() > c["decode_keys"].get<int64_t>())
    throw Error("pruning counts: more skipped than in range");
}

nlohmann::json fraction(int64_t skipped, int64_t total) {
  return total > 0 ? nlohmann::json(static_cast<double>(skipped) / static_cast<double>(total)) : nlohmann::json();
}

}  // namespace

nlohmann::json pruning_counts(const PruningStats& s) {
  if (!s.on) return nullptr;
  return {{"log_tolerance", s.log_tolerance},
          {"key_blocks_skipped", s.key_blocks_skipped},
          {"key_blocks", s.key_blocks},
          {"decode_keys_skipped", s.decode_keys_skipped},
          {"decode_keys", s.decode_keys}};
}

namespace {
std::map<const CausalLM*, PruningStats>& pruning_origins() {
  static std::map<const CausalLM*, PruningStats> origins;
  return origins;
}
}  // namespace

void set_pruning_origin(const CausalLM* model) {
  if (model) pruning_origins()[model] = model->pruning_stats();
}

nlohmann::json pruning_counts(const CausalLM* model) {
  if (!model) return nullptr;
  PruningStats s = model->pruning_stats();
  auto it = pruning_origins().find(model);
  if (it != pruning_origins().end()) {
    s.key_blocks -= it->second.key_blocks;
    s.key_blocks_skipped -= it->second.key_blocks_skipped;
    s.decode_keys -= it->second.decode_keys;
    s.decode_keys_skipped -= it->second.decode_keys_skipped;
  }
  return pruning_counts(s);
}

nlohmann::json add_pruning_counts(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_null()) {
    if (!b.is_null()) check_counts(b);
    return b;
  }
  check_counts(a);
  if (b.is_null()) return a;
  check_counts(b);
  if (a["log_tolerance"] != b["log_tolerance"])
    throw Error(fmt::format("pruning counts of log tolerance {} and {} do not add up", a["log_tolerance"].dump(),
                            b["log_tolerance"].dump()));
  nlohmann::json sum = a;
  for (const char* k : kCountKeys) sum[k] = add_counts(a[k].get<int64_t>(), b[k].get<int64_t>(), fmt::format("pruning counts: {}", k));
  return sum;
}

nlohmann::json pruning_header(const nlohmann::json& counts) {
  check_counts(counts);
  nlohmann::json h = {{"log_tolerance", counts["log_tolerance"]},
                      {"key_blocks_skipped", counts["key_blocks_skipped"]},
                      {"key_blocks", counts["key_blocks"]},
                      {"skipped_fraction", fraction(counts["key_blocks_skipped"], counts["key_blocks"])}};
  const int64_t decode = counts["decode_keys"].get<int64_t>();
  if (decode > 0) {
    h["decode_keys_skipped"] = counts["decode_keys_skipped"];
    h["decode_keys"] = decode;
    h["decode_skipped_fraction"] = fraction(counts["decode_keys_skipped"], decode);
  }
  h["unit"] = "prefill: key blocks each query block of the CUDA kernel visits (from seq_start's block to the causal end), "
              "skipped = pruned by the tolerance; decode: keys per query row";
  h["counted"] = counts["key_blocks"].get<int64_t>() + decode > 0
                     ? "by the CUDA attention kernels, over the forwards of this run (items an earlier, resumed run "
                       "finished are not counted)"
                     : "nothing: no attention ran on the CUDA kernels (the exact torch path, CPU or float32, never skips)";
  return h;
}

// `foxeval merge` adds the parts' counts up by this kind (tasks/run/result_file.cpp).
const bool pruning_kind_registered = register_run_stats_kind({"pruning", add_pruning_counts, pruning_header});

RunStatsSource pruning_stats(const CausalLM* model) {
  return {"pruning", [model] { return pruning_counts(model); }};
}

}  // namespace foxeval
