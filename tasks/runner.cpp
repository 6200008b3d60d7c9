#include "tasks/runner.h"

#include <ATen/cuda/CUDAContext.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "data/errors.h"
#include "data/json_file.h"

namespace fs = std::filesystem;

#ifndef FOXEVAL_VERSION
#define FOXEVAL_VERSION "unknown"
#endif

namespace foxeval {
namespace {

std::atomic<int> g_runner_signal{0};
extern "C" void on_runner_signal(int sig) { g_runner_signal.store(sig); }

std::map<std::string, ResultBuilder>& builders() {
  static std::map<std::string, ResultBuilder> table;
  return table;
}

nlohmann::json journal_header(const std::string& task, const nlohmann::json& identity) {
  return {{"foxeval_journal", 1}, {"task", task}, {"identity", identity}};
}

// Reads a journal: its header must match; a torn last line (a kill mid-write) is dropped and
// the file cut back to the last whole record. Returns {records, elapsed so far}.
std::pair<std::map<std::string, nlohmann::json>, double> read_journal(const std::string& path, const std::string& task,
                                                                      const nlohmann::json& identity) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read the journal", path));
  std::map<std::string, nlohmann::json> records;
  double elapsed = 0;
  std::string line;
  int64_t line_no = 0, good_bytes = 0;
  bool torn = false;
  while (std::getline(in, line)) {
    ++line_no;
    const bool has_newline = !in.eof();
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !has_newline) {
      if (in.peek() == EOF) {  // the last line: torn by a kill, drop it
        torn = true;
        break;
      }
      throw Error(fmt::format("{} line {}: not a JSON line (a damaged journal; delete it to start again)", path, line_no));
    }
    if (line_no == 1) {
      const nlohmann::json want = journal_header(task, identity);
      if (j != want)
        throw Error(fmt::format("{}: was made with other settings, model or data; refusing to resume ({})", path,
                                diff_fields(j.value("identity", nlohmann::json::object()), identity).dump()));
    } else {
      if (!j.contains("id") || !j.contains("record"))
        throw Error(fmt::format("{} line {}: a journal line without 'id' or 'record'", path, line_no));
      records[j["id"].get<std::string>()] = j["record"];
      elapsed = std::max(elapsed, j.value("t", 0.0));
    }
    good_bytes += static_cast<int64_t>(line.size()) + 1;
  }
  in.close();
  if (line_no == 0) torn = true;  // empty file: rewrite the header
  if (torn) fs::resize_file(path, static_cast<uintmax_t>(good_bytes));
  return {records, elapsed};
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

std::vector<size_t> shard_items(const std::vector<WorkItem>& items, int64_t num_shards, int64_t index) {
  if (num_shards < 1 || index < 0 || index >= num_shards)
    throw Error(fmt::format("--shard-index {} must be in [0, --num-shards {})", index, num_shards));
  // Longest processing time first: each item, most costly first, goes to the least loaded shard
  // (ties: the lower shard). Deterministic, and balances items of very different cost.
  std::vector<size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return items[a].cost > items[b].cost; });
  std::vector<double> load(static_cast<size_t>(num_shards), 0.0);
  std::vector<size_t> mine;
  for (size_t i : order) {
    const size_t s = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[s] += items[i].cost;
    if (static_cast<int64_t>(s) == index) mine.push_back(i);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

Runner::Runner(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items)
    : settings_(std::move(settings)),
      task_(std::move(task)),
      identity_(std::move(identity)),
      items_(std::move(items)),
      progress_(task_, 0, settings_.progress_unit) {
  std::set<std::string> ids;
  for (const WorkItem& it : items_)
    if (!ids.insert(it.id).second) throw Error(fmt::format("internal: work item id '{}' appears twice", it.id));
  const std::vector<size_t> mine = shard_items(items_, settings_.num_shards, settings_.shard_index);
  shard_total_ = static_cast<int64_t>(mine.size());
  if (settings_.num_shards > 1) identity_["num_shards"] = settings_.num_shards;

  const std::string path = journal_path();
  if (fs::exists(path)) {
    if (!settings_.resume)
      throw Error(fmt::format("{} exists (an interrupted run): pass --resume to continue it, or delete it", path));
    auto [records, elapsed] = read_journal(path, task_, identity_);
    elapsed_before_ = elapsed;
    for (size_t i : mine)
      if (records.count(items_[i].id)) records_[items_[i].id] = records[items_[i].id];
    std::fprintf(stderr, "[%s] resuming %s: %zu of %lld items already done\n", task_.c_str(), path.c_str(),
                 records_.size(), static_cast<long long>(shard_total_));
  }
  for (size_t i : mine)
    if (!records_.count(items_[i].id)) todo_.push_back(i);
  done_count_ = static_cast<int64_t>(records_.size());

  if (!fs::path(settings_.out_path).parent_path().empty()) fs::create_directories(fs::path(settings_.out_path).parent_path());
  const bool fresh = !fs::exists(path) || fs::file_size(path) == 0;
  journal_ = std::fopen(path.c_str(), "ab");
  if (!journal_) throw Error(fmt::format("{}: cannot open the journal for writing", path));
  if (fresh) {
    const std::string header = journal_header(task_, identity_).dump() + "\n";
    std::fwrite(header.data(), 1, header.size(), journal_);
    std::fflush(journal_);
  }
  progress_ = Progress(task_, shard_total_, settings_.progress_unit);
  progress_.update(done_count_, 0.0);

  g_runner_signal.store(0);
  old_int_ = std::signal(SIGINT, on_runner_signal);
  old_term_ = std::signal(SIGTERM, on_runner_signal);
}

Runner::~Runner() {
  if (journal_) std::fclose(journal_);
  std::signal(SIGINT, old_int_ == SIG_ERR ? SIG_DFL : old_int_);
  std::signal(SIGTERM, old_term_ == SIG_ERR ? SIG_DFL : old_term_);
}

double Runner::elapsed_seconds() const { return elapsed_before_ + progress_.elapsed(); }

void Runner::finish(const std::string& id, nlohmann::json record, double work) {
  if (records_.count(id)) throw Error(fmt::format("internal: item '{}' finished twice", id));
  const std::string line = nlohmann::json{{"id", id}, {"t", elapsed_seconds()}, {"record", record}}.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), journal_) != line.size() || std::fflush(journal_) != 0)
    throw Error(fmt::format("{}: cannot append to the journal (disk full?)", journal_path()));
  records_[id] = std::move(record);
  ++done_count_;
  work_ += work;
  progress_.update(done_count_, work_);
}

bool Runner::should_stop() const { return g_runner_signal.load() != 0; }

void Runner::interrupt() const {
  std::fflush(journal_);
  ::fsync(fileno(journal_));
  const int sig = g_runner_signal.load();
  const std::string why = sig != 0 ? fmt::format("interrupted by signal {}", sig) : std::string("stopped as asked");
  throw RunInterrupted(fmt::format("{}: {}; {} of {} items done and saved in {}; run again with --resume", task_, why,
                                   done_count_, shard_total_, journal_path()));
}

nlohmann::json Runner::complete(const ResultBuilder& build) {
  for (size_t i : shard_items(items_, settings_.num_shards, settings_.shard_index))
    if (!records_.count(items_[i].id)) throw Error(fmt::format("internal: {} item '{}' is not finished", task_, items_[i].id));
  progress_.update(done_count_, work_, true);
  const double elapsed = elapsed_seconds();
  nlohmann::json out;
  if (settings_.num_shards > 1) {
    nlohmann::json ids = nlohmann::json::array();
    for (const WorkItem& it : items_) ids.push_back(it.id);
    out = {{"kind", "foxeval-part"}, {"task", task_},        {"identity", identity_}, {"num_shards", settings_.num_shards},
           {"shard_index", settings_.shard_index}, {"items", ids}, {"records", records_}, {"elapsed_s", elapsed}};
  } else {
    std::vector<nlohmann::json> ordered;
    ordered.reserve(items_.size());
    for (const WorkItem& it : items_) ordered.push_back(records_.at(it.id));
    out = build(identity_, ordered);
    out["header"] = result_header(task_, identity_, elapsed);
  }
  // The result is complete: a signal from now on must not lose it.
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  write_json_atomic(settings_.out_path, out, settings_.num_shards > 1 ? -1 : 1);
  std::fclose(journal_);
  journal_ = nullptr;
  std::error_code ec;
  fs::remove(journal_path(), ec);
  return out;
}

ResultBuilderRegistrar::ResultBuilderRegistrar(const std::string& task, ResultBuilder build) {
  builders()[task] = std::move(build);
}

const ResultBuilder* find_result_builder(const std::string& task) {
  auto it = builders().find(task);
  return it == builders().end() ? nullptr : &it->second;
}

nlohmann::json merge_task_parts(const std::vector<std::string>& parts, const std::string& out_path) {
  if (parts.empty()) throw Error("merge: no parts given");
  std::string task;
  nlohmann::json identity, items;
  int64_t num_shards = 0;
  double elapsed = 0;
  std::set<int64_t> seen;
  std::map<std::string, nlohmann::json> records;
  for (const std::string& path : parts) {
    const nlohmann::json p = read_json(path);
    if (p.value("kind", "") != "foxeval-part")
      throw Error(fmt::format("{}: not a shard part of a foxeval task (run with --num-shards > 1)", path));
    if (task.empty()) {
      task = p.at("task").get<std::string>();
      identity = p.at("identity");
      items = p.at("items");
      num_shards = p.at("num_shards").get<int64_t>();
    } else if (p.at("task") != task || p.at("identity") != identity || p.at("items") != items) {
      throw Error(fmt::format("{}: made with other settings than {} ({})", path, parts[0],
                              diff_fields(identity, p.at("identity")).dump()));
    }
    const int64_t shard = p.at("shard_index").get<int64_t>();
    if (!seen.insert(shard).second) throw Error(fmt::format("{}: shard {} given twice (overlapping parts)", path, shard));
    for (auto it = p.at("records").begin(); it != p.at("records").end(); ++it) records[it.key()] = it.value();
    elapsed = std::max(elapsed, p.value("elapsed_s", 0.0));
  }
  for (int64_t i = 0; i < num_shards; ++i)
    if (!seen.count(i)) throw Error(fmt::format("merge: shard {} of {} is missing", i, num_shards));
  const ResultBuilder* build = find_result_builder(task);
  if (!build) throw Error(fmt::format("merge: no result builder for task '{}'", task));
  std::vector<nlohmann::json> ordered;
  for (const auto& id : items) {
    auto it = records.find(id.get<std::string>());
    if (it == records.end()) throw Error(fmt::format("merge: item '{}' is in no part", id.get<std::string>()));
    ordered.push_back(it->second);
  }
  identity.erase("num_shards");  // the merged result equals a single run
  nlohmann::json out = (*build)(identity, ordered);
  out["header"] = result_header(task, identity, elapsed);
  out["header"]["merged_from"] = parts;
  write_json_atomic(out_path, out);
  return out;
}

nlohmann::json result_header(const std::string& task, const nlohmann::json& identity, double elapsed_seconds) {
  nlohmann::json machine = {{"cpu", cpu_name()}};
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) machine["host"] = host;
  if (identity.value("device_type", "") == "cuda" && at::cuda::is_available())
    machine["gpu"] = at::cuda::getDeviceProperties(0)->name;
  return {{"task", task},         {"foxeval_version", FOXEVAL_VERSION}, {"settings", identity},
          {"machine", machine},   {"date", now_iso8601()},              {"elapsed_s", elapsed_seconds}};
}

std::string digest_paths(const std::vector<std::string>& paths) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(p[i]);
      h *= 1099511628211ull;
    }
  };
  for (const std::string& top : paths) {
    std::vector<std::pair<std::string, fs::path>> files;
    if (fs::is_directory(top)) {
      for (const auto& e : fs::recursive_directory_iterator(top))
        if (e.is_regular_file()) files.emplace_back(fs::relative(e.path(), top).generic_string(), e.path());
      std::sort(files.begin(), files.end());
    } else {
      files.emplace_back(fs::path(top).filename().string(), fs::path(top));
    }
    for (const auto& [name, path] : files) {
      mix(name.data(), name.size() + 1);
      std::ifstream in(path, std::ios::binary);
      if (!in) throw Error(fmt::format("{}: cannot read", path.string()));
      char buf[1 << 16];
      while (in.read(buf, sizeof buf) || in.gcount() > 0) mix(buf, static_cast<size_t>(in.gcount()));
    }
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

}  // namespace foxeval
