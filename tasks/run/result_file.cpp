#include "tasks/run/result_file.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "data/url_secrets.h"
#include "tasks/run/run_stats.h"

#ifndef FOXEVAL_VERSION
#define FOXEVAL_VERSION "unknown"
#endif

namespace foxeval {
namespace {

std::map<std::string, ResultBuilder>& builders() {
  static std::map<std::string, ResultBuilder> table;
  return table;
}

std::map<std::string, Reducer>& reducers() {
  static std::map<std::string, Reducer> table;
  return table;
}

std::string now_iso8601() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string cpu_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

}  // namespace

ResultBuilderRegistrar::ResultBuilderRegistrar(const std::string& task, ResultBuilder build) {
  builders()[task] = std::move(build);
}

ReducerRegistrar::ReducerRegistrar(const std::string& task, Reducer reducer) { reducers()[task] = std::move(reducer); }

const ResultBuilder* find_result_builder(const std::string& task) {
  auto it = builders().find(task);
  return it == builders().end() ? nullptr : &it->second;
}

const Reducer* find_reducer(const std::string& task) {
  auto it = reducers().find(task);
  return it == reducers().end() ? nullptr : &it->second;
}

nlohmann::json task_part(const std::string& task, const nlohmann::json& identity, int64_t num_shards, int64_t shard_index,
                         const std::vector<std::string>& items, const nlohmann::json& payload, double elapsed_s) {
  nlohmann::json part = {{"kind", "foxeval-part"}, {"task", task},           {"identity", identity},
                         {"num_shards", num_shards}, {"shard_index", shard_index}, {"items", items},
                         {"elapsed_s", elapsed_s}};
  part.update(payload);
  return part;
}

nlohmann::json merge_task_parts(const std::vector<std::string>& parts, const std::string& out_path) {
  if (parts.empty()) throw Error("merge: no parts given");
  std::string task;
  nlohmann::json identity, items;
  int64_t num_shards = 0;
  double elapsed = 0;
  std::set<int64_t> seen;
  std::set<std::string> item_ids;
  const ResultBuilder* build = nullptr;
  const Reducer* reducer = nullptr;
  std::map<std::string, nlohmann::json> records;  // record mode
  std::unique_ptr<ReducerState> state;             // reducer mode: every part's state added up
  std::set<std::string> done;                      // reducer mode: every part's finished items
  // Run statistics (tasks/run/run_stats.h) by kind: the parts' counts added up, and how many parts had them.
  std::map<std::string, std::pair<nlohmann::json, size_t>> stats;
  for (const std::string& path : parts) {
    const nlohmann::json p = read_json(path);
    if (!p.is_object() || p.value("kind", "") != "foxeval-part")
      throw Error(fmt::format("{}: not a shard part of a foxeval task (run with --num-shards > 1)", path));
    // A part is input like any other: every field checked before it is used, errors naming the file.
    try {
      if (task.empty()) {
        task = p.at("task").get<std::string>();
        identity = p.at("identity");
        items = p.at("items");
        num_shards = p.at("num_shards").get<int64_t>();
        if (num_shards < 1 || num_shards > (int64_t(1) << 20))
          throw Error(fmt::format("num_shards {} is outside [1, {}]", num_shards, int64_t(1) << 20));
        if (!identity.is_object()) throw Error("identity must be an object");
        if (!items.is_array()) throw Error("items must be a list of item ids");
        for (const auto& id : items)
          if (!id.is_string() || !item_ids.insert(id.get<std::string>()).second)
            throw Error("items must be a list of distinct item ids (strings)");
        build = find_result_builder(task);
        reducer = find_reducer(task);
        if (!build && !reducer) throw Error(fmt::format("no result builder for task '{}'", task));
      } else if (p.at("task") != task || p.at("identity") != identity || p.at("num_shards") != num_shards ||
                 p.at("items") != items) {
        throw Error(fmt::format("made with other settings than {} ({})", parts[0],
                                diff_fields(identity, p.at("identity")).dump()));
      }
      const int64_t shard = p.at("shard_index").get<int64_t>();
      if (shard < 0 || shard >= num_shards) throw Error(fmt::format("shard_index {} is outside [0, {})", shard, num_shards));
      if (!seen.insert(shard).second) throw Error(fmt::format("shard {} given twice (overlapping parts)", shard));
      if (reducer) {
        if (!p.at("done").is_array()) throw Error("done must be a list of item ids");
        for (const auto& id : p.at("done")) {
          if (!id.is_string() || !item_ids.count(id.get<std::string>()))
            throw Error(fmt::format("done names {}, not an item of this run", id.dump()));
          if (!done.insert(id.get<std::string>()).second)
            throw Error(fmt::format("item {} is in two parts (overlapping parts)", id.dump()));
        }
        std::unique_ptr<ReducerState> s = reducer->load(identity, &p.at("state"));
        if (state) {
          state->merge(*s);
        } else {
          state = std::move(s);
        }
      } else {
        if (!p.at("records").is_object()) throw Error("records must be an object of item id -> record");
        for (auto it = p.at("records").begin(); it != p.at("records").end(); ++it) {
          if (!item_ids.count(it.key())) throw Error(fmt::format("records name '{}', not an item of this run", it.key()));
          if (!records.emplace(it.key(), it.value()).second)
            throw Error(fmt::format("item '{}' is in two parts (overlapping parts)", it.key()));
        }
      }
      for (const RunStatsKind& kind : run_stats_kinds())
        if (p.contains(kind.name)) {
          auto& [sum, count] = stats[kind.name];
          sum = kind.add(sum, p.at(kind.name));
          ++count;
        }
      const double el = p.value("elapsed_s", 0.0);
      if (std::isfinite(el)) elapsed = std::max(elapsed, el);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", path, e.what()));
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}: not a valid shard part ({})", path, e.what()));
    }
  }
  for (int64_t i = 0; i < num_shards; ++i)
    if (!seen.count(i)) throw Error(fmt::format("merge: shard {} of {} is missing", i, num_shards));
  // The merged result equals one run: a task that keeps num_shards in its identity has 1 there.
  if (identity.contains("num_shards")) identity["num_shards"] = 1;
  nlohmann::json out;
  if (reducer) {
    for (const auto& id : items)
      if (!done.count(id.get<std::string>())) throw Error(fmt::format("merge: item '{}' is in no part", id.get<std::string>()));
    out = reducer->finish(identity, *state, elapsed);
  } else {
    std::vector<nlohmann::json> ordered;
    for (const auto& id : items) {
      auto it = records.find(id.get<std::string>());
      if (it == records.end()) throw Error(fmt::format("merge: item '{}' is in no part", id.get<std::string>()));
      ordered.push_back(it->second);
    }
    out = (*build)(identity, ordered);
  }
  out["header"] = result_header(task, identity, elapsed);
  out["header"]["merged_from"] = parts;
  for (const RunStatsKind& kind : run_stats_kinds()) {
    auto it = stats.find(kind.name);
    if (it == stats.end()) continue;
    const auto& [sum, count] = it->second;
    if (count < parts.size())
      throw Error(fmt::format("merge: {} of {} parts carry {} counts (parts of one run all do, or none)", count,
                              parts.size(), kind.name));
    if (!sum.is_null()) out["header"][kind.name] = kind.header(sum);
  }
  write_json_atomic(out_path, out);
  return out;
}

std::optional<int64_t> peak_gpu_memory_bytes(const std::string& device) {
  const at::Device d(device);
  if (!d.is_cuda()) return std::nullopt;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(d.has_index() ? d.index() : 0);
  return stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
}

nlohmann::json result_header(const std::string& task, const nlohmann::json& identity, double elapsed_seconds) {
  nlohmann::json machine = {{"cpu", cpu_name()}};
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) machine["host"] = host;
  if (identity.value("device_type", "") == "cuda" && at::cuda::is_available())
    machine["gpu"] = at::cuda::getDeviceProperties(0)->name;
  nlohmann::json header = {{"task", task},       {"foxeval_version", FOXEVAL_VERSION}, {"settings", without_url_secrets(identity)},
                           {"machine", machine}, {"date", now_iso8601()},              {"elapsed_s", elapsed_seconds}};
  // A model from the Hugging Face cache: its repo id and the commit its snapshot is.
  const HubModelId hub = hub_model_of_path(identity.value("model", ""));
  if (!hub.repo_id.empty()) header["model_repo"] = {{"repo_id", hub.repo_id}, {"revision", hub.revision}};
  return header;
}

nlohmann::json diff_fields(const nlohmann::json& a, const nlohmann::json& b) {
  nlohmann::json d = nlohmann::json::array();
  for (auto it = a.begin(); it != a.end(); ++it)
    if (!b.contains(it.key()) || b[it.key()] != it.value())
      d.push_back(fmt::format("{}: {} vs {}", it.key(), it.value().dump(),
                              b.contains(it.key()) ? b[it.key()].dump() : "absent"));
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!a.contains(it.key())) d.push_back(fmt::format("{}: absent vs {}", it.key(), it.value().dump()));
  return d;
}

}  // namespace foxeval
