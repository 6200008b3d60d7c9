#include "tasks/runner.h"

#include <ATen/cuda/CUDAContext.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "tasks/distributed.h"
#include "tasks/output_lock.h"

namespace fs = std::filesystem;

#ifndef FOXEVAL_VERSION
#define FOXEVAL_VERSION "unknown"
#endif

namespace foxeval {
namespace {


std::map<std::string, ResultBuilder>& builders() {
  static std::map<std::string, ResultBuilder> table;
  return table;
}

nlohmann::json journal_header(const std::string& task, const nlohmann::json& identity) {
  return {{"foxeval_journal", 1}, {"task", task}, {"identity", identity}};
}

// Reads a journal: its header must match; a torn last line (a kill mid-write) is dropped and
// the file cut back to the last whole record. Returns {records, elapsed so far}.
// `ours`: we append to it next, so a torn tail is cut off; another rank's journal is only read.
std::pair<std::map<std::string, nlohmann::json>, double> read_journal(const std::string& path, const std::string& task,
                                                                      const nlohmann::json& identity, bool ours = true) {
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
  if (torn && ours) fs::resize_file(path, static_cast<uintmax_t>(good_bytes));
  return {records, elapsed};
}

// Every journal of `out_path`: OUT.journal.jsonl (one process) and OUT.journal.rank<R>.jsonl (the
// ranks of distributed runs, whatever their number), sorted.
std::vector<std::string> journal_files(const std::string& out_path) {
  const fs::path out(out_path);
  const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string stem = out.filename().string() + ".journal.";
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    bool ours = name == stem + "jsonl";
    if (!ours && name.rfind(stem + "rank", 0) == 0 && name.size() > stem.size() + 4 + 6 &&
        name.compare(name.size() - 6, 6, ".jsonl") == 0) {
      const std::string r = name.substr(stem.size() + 4, name.size() - stem.size() - 4 - 6);
      ours = r.find_first_not_of("0123456789") == std::string::npos;
    }
    if (ours) found.push_back((out.parent_path() / name).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Each Runner of a process gets the next scope, the same on every rank (they run the same code).
int g_runner_count = 0;

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
  if (settings_.num_shards == 1 && DistributedSession::active() && DistributedSession::active()->world() > 1)
    dist_ = DistributedSession::active();
  scope_ = fmt::format("run{}/{}", g_runner_count++, task_);
  std::vector<size_t> mine = shard_items(items_, settings_.num_shards, settings_.shard_index);
  if (settings_.num_shards > 1) identity_["num_shards"] = settings_.num_shards;

  // Static shards read only their own journal. One run (one process or the ranks of a distributed
  // one) reads every journal of OUT, whatever number of ranks wrote them, so no finished item is
  // redone; in a distributed run every rank reads before any rank writes (the barrier below).
  const std::string path = journal_path();
  std::vector<std::string> journals;
  if (settings_.num_shards > 1) {
    if (fs::exists(path)) journals.push_back(path);
  } else {
    journals = journal_files(settings_.out_path);
  }
  std::string refusal;
  std::map<std::string, nlohmann::json> found;
  try {
    // One run per output (a distributed run's rank 0 holds it for all): taken before any journal is read.
    if (!dist_ || dist_->rank() == 0) lock_ = std::make_unique<OutputLock>(settings_.out_path);
    if (!journals.empty() && !settings_.resume)
      throw Error(fmt::format("{} exists (an interrupted run): pass --resume to continue it, or delete it", journals.front()));
    for (const std::string& j : journals) {
      auto [records, elapsed] = read_journal(j, task_, identity_, j == path);
      elapsed_before_ = std::max(elapsed_before_, elapsed);
      found.insert(records.begin(), records.end());
      if (j != path) other_journals_.push_back(j);
    }
  } catch (const Error& e) {
    if (!dist_) throw;
    refusal = e.what();
  }
  if (dist_) dist_->barrier(scope_ + "/start", refusal);
  for (const WorkItem& it : items_)
    if (found.count(it.id)) records_[it.id] = found[it.id];
  if (!journals.empty())
    std::fprintf(stderr, "[%s] resuming from %zu journal(s) of %s: %zu of %zu items already done\n", task_.c_str(),
                 journals.size(), settings_.out_path.c_str(), records_.size(), dist_ ? items_.size() : mine.size());

  std::vector<size_t> open_items;
  for (size_t i : mine)
    if (!records_.count(items_[i].id)) open_items.push_back(i);
  // claim() hands out the open items longest first, in one process as in a distributed run (there
  // every rank computes the same list from the same journals and the counter indexes it): batches
  // of consecutive claims hold items of similar cost (one capacity bucket of the scheduler, little
  // padding), and the last items handed out are the cheapest, so the tail is short.
  claim_order_ = open_items;
  std::stable_sort(claim_order_.begin(), claim_order_.end(),
                   [&](size_t a, size_t b) { return items_[a].cost > items_[b].cost; });
  if (dist_) {
    // todo() is this rank's longest-processing-time-first share of the open items.
    std::vector<WorkItem> open;
    for (size_t i : open_items) open.push_back(items_[i]);
    for (size_t k : shard_items(open, dist_->world(), dist_->rank())) todo_.push_back(open_items[k]);
    shard_total_ = static_cast<int64_t>(todo_.size());
    done_count_ = 0;
  } else {
    todo_ = open_items;
    shard_total_ = static_cast<int64_t>(mine.size());
    done_count_ = static_cast<int64_t>(records_.size());
  }

  if (!fs::path(settings_.out_path).parent_path().empty()) fs::create_directories(fs::path(settings_.out_path).parent_path());
  const bool fresh = !fs::exists(path) || fs::file_size(path) == 0;
  journal_ = std::fopen(path.c_str(), "ab");
  if (!journal_) throw Error(fmt::format("{}: cannot open the journal for writing", path));
  if (fresh) {
    const std::string header = journal_header(task_, identity_).dump() + "\n";
    std::fwrite(header.data(), 1, header.size(), journal_);
    std::fflush(journal_);
  }
  progress_ = Progress(dist_ ? fmt::format("{} rank {}", task_, dist_->rank()) : task_, shard_total_, settings_.progress_unit);
  progress_.update(done_count_, 0.0);

  signals_ = std::make_unique<StopSignals>();
}

std::string Runner::journal_path() const {
  if (dist_) return fmt::format("{}.journal.rank{}.jsonl", settings_.out_path, dist_->rank());
  return settings_.out_path + ".journal.jsonl";
}

bool Runner::writes_result() const { return !dist_ || dist_->rank() == 0; }

std::optional<size_t> Runner::claim() {
  const std::vector<size_t> one = claim_batch(1);
  if (one.empty()) return std::nullopt;
  return one.front();
}

nlohmann::json model_identity(const std::string& model_dir, const ModelInfo& info) {
  nlohmann::json id = {{"model", model_identity_path(model_dir)},
                       {"model_type", info.model_type},
                       {"num_parameters", info.num_parameters}};
  for (const auto& [key, value] : info.settings)
    if (key == "log_pruning_tolerance") id["log_pruning_tolerance"] = value;
  return id;
}

std::vector<size_t> Runner::claim_batch(size_t n) {
  if (n == 0) throw Error("internal: claim_batch(0)");
  std::vector<size_t> out;
  if (!dist_) {
    claimed_ = true;
    while (out.size() < n && next_claim_ < claim_order_.size()) out.push_back(claim_order_[next_claim_++]);
    return out;
  }
  const bool first = !claimed_;
  if (first)  // progress now counts this rank's items of all ranks' open ones
    progress_ = Progress(fmt::format("{} rank {} (of all ranks' items)", task_, dist_->rank()),
                         static_cast<int64_t>(claim_order_.size()), settings_.progress_unit);
  claimed_ = true;
  if (first) dist_->before_first_claim();
  const int64_t end = dist_->add(scope_ + "/claim", static_cast<int64_t>(n));
  if (first) dist_->after_first_claim();
  for (int64_t k = end - static_cast<int64_t>(n); k < end && k < static_cast<int64_t>(claim_order_.size()); ++k)
    out.push_back(claim_order_[static_cast<size_t>(k)]);
  return out;
}

Runner::~Runner() {
  if (journal_) std::fclose(journal_);
  lock_.reset();  // last: the journal is closed before another run may take the output
}

double Runner::elapsed_seconds() const { return elapsed_before_ + progress_.elapsed(); }

void Runner::finish(const std::string& id, nlohmann::json record, double work) {
  if (records_.count(id)) throw Error(fmt::format("internal: item '{}' finished twice", id));
  const std::string line = nlohmann::json{{"id", id}, {"t", elapsed_seconds()}, {"record", record}}.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), journal_) != line.size() || std::fflush(journal_) != 0)
    throw Error(fmt::format("{}: cannot append to the journal (disk full?)", journal_path()));
  if (dist_) mine_[id] = record;
  records_[id] = std::move(record);
  ++done_count_;
  work_ += work;
  progress_.update(done_count_, work_);
  if (dist_) dist_->after_item(static_cast<int64_t>(mine_.size()));
}

bool Runner::should_stop() const { return (signals_ && signals_->received() != 0) || (dist_ && !dist_->fault().empty()); }

void Runner::interrupt() const {
  std::fflush(journal_);
  ::fsync(fileno(journal_));
  const int sig = signals_ ? signals_->received() : 0;
  const std::string fault = dist_ ? dist_->fault() : std::string();
  const std::string why = sig != 0           ? fmt::format("interrupted by signal {}", sig)
                          : !fault.empty()   ? fmt::format("rank {} stops: {}", dist_->rank(), fault)
                                             : std::string("stopped as asked");
  throw RunInterrupted(fmt::format("{}: {}; {} of {} items done and saved in {}; run again with --resume", task_, why,
                                   done_count_, shard_total_, journal_path()));
}

nlohmann::json Runner::complete(const ResultBuilder& build) {
  if (dist_) return complete_distributed(build);
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
  StopSignals::ignore();
  write_json_atomic(settings_.out_path, out, settings_.num_shards > 1 ? -1 : 1);
  std::fclose(journal_);
  journal_ = nullptr;
  std::error_code ec;
  fs::remove(journal_path(), ec);
  for (const std::string& j : other_journals_) fs::remove(j, ec);
  return out;
}

// Every rank posts what it finished in this run; rank 0 adds them to what the journals held at
// the start, builds the result from all records in item order (so which rank did what never
// changes it), writes it, removes every journal and posts it back; the others wait for it. Rank 0
// leaves last (it may host the store the others still read).
nlohmann::json Runner::complete_distributed(const ResultBuilder& build) {
  if (!claimed_)
    for (size_t i : todo_)
      if (!records_.count(items_[i].id)) throw Error(fmt::format("internal: {} item '{}' is not finished", task_, items_[i].id));
  progress_.update(done_count_, work_, true);
  std::fflush(journal_);
  ::fsync(fileno(journal_));
  dist_->set(fmt::format("{}/records/{}", scope_, dist_->rank()),
             nlohmann::json{{"records", mine_}, {"elapsed_s", elapsed_seconds()}}.dump());
  const std::string result_key = scope_ + "/result";
  nlohmann::json out;
  if (dist_->rank() == 0) {
    try {
      double elapsed = elapsed_seconds();
      for (int64_t r = 1; r < dist_->world(); ++r) {
        const nlohmann::json p = nlohmann::json::parse(dist_->get(fmt::format("{}/records/{}", scope_, r)));
        for (auto it = p.at("records").begin(); it != p.at("records").end(); ++it) records_[it.key()] = it.value();
        elapsed = std::max(elapsed, p.at("elapsed_s").get<double>());
      }
      std::vector<nlohmann::json> ordered;
      ordered.reserve(items_.size());
      for (const WorkItem& it : items_) {
        auto rec = records_.find(it.id);
        if (rec == records_.end())
          throw Error(fmt::format("{}: item '{}' was finished by no rank (journals kept; run again with --resume)", task_, it.id));
        ordered.push_back(rec->second);
      }
      out = build(identity_, ordered);
      out["header"] = result_header(task_, identity_, elapsed);
      out["header"]["world_size"] = dist_->world();
      StopSignals::ignore();
      write_json_atomic(settings_.out_path, out, 1);
    } catch (const std::exception& e) {
      dist_->set(result_key, nlohmann::json{{"error", fmt::format("rank 0: {}", e.what())}}.dump());
      dist_->leave(scope_);
      throw;
    }
    std::fclose(journal_);
    journal_ = nullptr;
    std::error_code ec;
    for (const std::string& j : journal_files(settings_.out_path)) fs::remove(j, ec);
    dist_->set(result_key, out.dump());
    dist_->leave(scope_);  // until every other rank has read the result
  } else {
    try {
      out = nlohmann::json::parse(dist_->get(result_key));
    } catch (const Error&) {  // a lost rank or store: still say so, rank 0 may be waiting
      dist_->leave(scope_);
      throw;
    }
    if (out.contains("error") && !out.contains("header")) {
      dist_->leave(scope_);
      throw Error(out["error"].get<std::string>());
    }
    StopSignals::ignore();
    std::fclose(journal_);
    journal_ = nullptr;
    dist_->add("exited", 1);
    dist_->leave(scope_);
  }
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
        if (!items.is_array()) throw Error("items must be a list of item ids");
        for (const auto& id : items)
          if (!id.is_string()) throw Error("items must be a list of item ids (strings)");
      } else if (p.at("task") != task || p.at("identity") != identity || p.at("items") != items) {
        throw Error(fmt::format("made with other settings than {} ({})", parts[0],
                                diff_fields(identity, p.at("identity")).dump()));
      }
      const int64_t shard = p.at("shard_index").get<int64_t>();
      if (shard < 0 || shard >= num_shards) throw Error(fmt::format("shard_index {} is outside [0, {})", shard, num_shards));
      if (!seen.insert(shard).second) throw Error(fmt::format("shard {} given twice (overlapping parts)", shard));
      if (!p.at("records").is_object()) throw Error("records must be an object of item id -> record");
      for (auto it = p.at("records").begin(); it != p.at("records").end(); ++it) records[it.key()] = it.value();
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
  nlohmann::json header = {{"task", task},       {"foxeval_version", FOXEVAL_VERSION}, {"settings", identity},
                           {"machine", machine}, {"date", now_iso8601()},              {"elapsed_s", elapsed_seconds}};
  // A model from the Hugging Face cache: its repo id and the commit its snapshot is.
  const HubModelId hub = hub_model_of_path(identity.value("model", ""));
  if (!hub.repo_id.empty()) header["model_repo"] = {{"repo_id", hub.repo_id}, {"revision", hub.revision}};
  return header;
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
