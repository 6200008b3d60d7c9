#include "tasks/run/runner.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "data/content_digest.h"
#include "data/new_file.h"
#include "data/read_stamps.h"
#include "data/errors.h"
#include "data/switches.h"
#include "data/json_file.h"
#include "tasks/run/distributed.h"
#include "tasks/run/output_lock.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

// What a run keeps beside OUT while it is unfinished. Record mode: a journal, one JSON line per
// finished item after a header line. Reducer mode: a state file, one JSON object saved atomically
// (the state and the ids it adds up). Both start from the same header: a file made for another
// task or identity is refused.
struct RunFileKind {
  const char* stem;  // OUT.<stem>.<ext>, OUT.<stem>.rank<R>.<ext>
  const char* ext;
  const char* what;
};
constexpr RunFileKind kJournal{"journal", "jsonl", "journal"};
constexpr RunFileKind kState{"state", "json", "state file"};

nlohmann::json run_file_header(const RunFileKind& kind, const std::string& task, const nlohmann::json& identity) {
  return {{&kind == &kJournal ? "foxeval_journal" : "foxeval_state", 1}, {"task", task}, {"identity", identity}};
}

// A rank's own share of a distributed run, once at its end (its progress lines count every rank's items).
void say_rank_share(const std::string& task, int64_t rank, int64_t finished_here) {
  std::fprintf(stderr, "[%s rank %lld] %lld items finished by this rank\n", task.c_str(), static_cast<long long>(rank),
               static_cast<long long>(finished_here));
}

// Refuses a journal/state made for another task or identity, naming the fields that differ.
void check_run_file_header(const RunFileKind& kind, const std::string& path, const nlohmann::json& got,
                           const std::string& task, const nlohmann::json& identity) {
  const nlohmann::json want = run_file_header(kind, task, identity);
  bool same = got.is_object();
  for (auto it = want.begin(); same && it != want.end(); ++it) same = got.contains(it.key()) && got[it.key()] == it.value();
  if (same) return;
  const nlohmann::json theirs = got.is_object() ? got.value("identity", nlohmann::json::object()) : nlohmann::json::object();
  // The way out, after what differs: the saved work belongs to the other settings.
  throw Error(fmt::format("{}: was made with other settings, model or data; refusing to resume ({}). To continue it, "
                          "rerun with the settings it was made with; to start this run afresh, delete {} or give "
                          "another --out",
                          path, diff_fields(theirs.is_object() ? theirs : nlohmann::json::object(), identity).dump(), path));
}

std::string run_file_path(const RunFileKind& kind, const std::string& out_path, int64_t rank) {
  return rank < 0 ? fmt::format("{}.{}.{}", out_path, kind.stem, kind.ext)
                  : fmt::format("{}.{}.rank{}.{}", out_path, kind.stem, rank, kind.ext);
}

// A journal or state file is ours to read, cut and append to only as a regular file: a symbolic
// link (to a file elsewhere) or a FIFO/device there is refused, never followed or truncated.
void check_run_file(const RunFileKind& kind, const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (S_ISLNK(st.st_mode))
    throw Error(fmt::format("{}: the {} is a symbolic link; foxeval never reads, cuts or writes through one (delete it)",
                            path, kind.what));
  if (!S_ISREG(st.st_mode)) throw Error(fmt::format("{}: the {} is not a regular file (delete it)", path, kind.what));
}

// Every journal (state file) of `out_path`: OUT.journal.jsonl (one process) and
// OUT.journal.rank<R>.jsonl (the ranks of distributed runs, whatever their number), sorted.
std::vector<std::string> run_files(const RunFileKind& kind, const std::string& out_path) {
  const fs::path out(out_path);
  const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string stem = out.filename().string() + "." + kind.stem + ".";
  const std::string ext = std::string(".") + kind.ext;
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    bool ours = name == stem + kind.ext;
    if (!ours && name.rfind(stem + "rank", 0) == 0 && name.size() > stem.size() + 4 + ext.size() &&
        name.compare(name.size() - ext.size(), ext.size(), ext) == 0) {
      const std::string r = name.substr(stem.size() + 4, name.size() - stem.size() - 4 - ext.size());
      ours = r.find_first_not_of("0123456789") == std::string::npos;
    }
    if (ours) found.push_back((out.parent_path() / name).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Reads a journal: its header must match; a torn last line (a kill mid-write) is dropped and
// the file cut back to the last whole record. Returns {records, elapsed so far}.
// `ours`: we append to it next, so a torn tail is cut off; another rank's journal is only read.
std::pair<std::map<std::string, nlohmann::json>, double> read_journal(const std::string& path, const std::string& task,
                                                                      const nlohmann::json& identity, bool ours) {
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
    check_json_depth(line, fmt::format("{} line {}", path, line_no));
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !has_newline) {
      if (in.peek() == EOF) {  // the last line: torn by a kill, drop it
        torn = true;
        break;
      }
      throw Error(fmt::format("{} line {}: not a JSON line (a damaged journal; delete it to start again)", path, line_no));
    }
    if (line_no == 1) {
      check_run_file_header(kJournal, path, j, task, identity);
    } else {
      if (!j.is_object() || !j.contains("id") || !j.contains("record"))
        throw Error(fmt::format("{} line {}: a journal line without 'id' or 'record'", path, line_no));
      if (!j["id"].is_string() || (j.contains("t") && !j["t"].is_number()))
        throw Error(fmt::format("{} line {}: 'id' must be a string and 't' a number (a damaged journal; delete it to "
                                "start again)", path, line_no));
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

// A saved reducer state: {header..., done: [item ids], state: the reducer's JSON, elapsed_s}.
struct SavedState {
  std::vector<std::string> done;
  std::unique_ptr<ReducerState> state;
  double elapsed = 0;
};

SavedState read_state(const std::string& path, const std::string& task, const nlohmann::json& identity,
                      const Reducer& reducer, const std::set<std::string>& item_ids) {
  const nlohmann::json j = read_json(path);
  if (j.is_object() && !j.contains("foxeval_state"))
    throw Error(fmt::format("{}: not a state file of this foxeval version; delete it to start again", path));
  check_run_file_header(kState, path, j, task, identity);
  SavedState s;
  try {
    if (!j.at("done").is_array()) throw Error("done must be a list of item ids");
    for (const auto& id : j.at("done")) {
      if (!id.is_string() || !item_ids.count(id.get<std::string>()))
        throw Error(fmt::format("done names {}, not an item of this run", id.dump()));
      s.done.push_back(id.get<std::string>());
    }
    s.state = reducer.load(identity, &j.at("state"));
    s.elapsed = j.at("elapsed_s").get<double>();
    if (!std::isfinite(s.elapsed)) throw Error("elapsed_s is not a finite number");
  } catch (const Error& e) {
    throw Error(fmt::format("{}: a damaged state file ({}); delete it to start again", path, e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: a damaged state file ({}); delete it to start again", path, e.what()));
  }
  return s;
}

}  // namespace

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

RunnerCore::RunnerCore(RunnerSettings settings, std::string task, nlohmann::json identity, std::vector<WorkItem> items,
               std::optional<Reducer> reducer)
    : settings_(std::move(settings)),
      task_(std::move(task)),
      identity_(identity),
      task_identity_(std::move(identity)),
      items_(std::move(items)),
      progress_(task_, 0, settings_.progress_unit),
      reducer_(std::move(reducer)) {
  for (const WorkItem& it : items_)
    if (!item_ids_.insert(it.id).second) throw Error(fmt::format("internal: work item id '{}' appears twice", it.id));
  if (reducer_ && (!reducer_->load || !reducer_->finish)) throw Error("internal: a reducer without load or finish");
  if (reducer_ && !(settings_.save_every_seconds > 0))
    throw Error(fmt::format("--save-every {}: must be a number of seconds > 0", settings_.save_every_seconds));
  for (const RunStatsSource& src : settings_.stats) {
    if (!src.counts) throw Error(fmt::format("internal: run statistics '{}' without counts", src.name));
    (void)run_stats_kind(src.name);  // registered, or a logic_error now rather than at the end of the run
  }
  if (settings_.num_shards == 1 && settings_.ranks && settings_.ranks->world() > 1) dist_ = settings_.ranks.get();
  if (dist_) scope_ = dist_->next_run_scope(task_);
  std::vector<size_t> mine = shard_items(items_, settings_.num_shards, settings_.shard_index);
  if (settings_.num_shards > 1) identity_["num_shards"] = settings_.num_shards;
  // A FOXEVAL_* switch that changes the numerics path, off its default, makes other numbers
  // (data/switches.h): the journal, the parts and the result's settings carry it. None set: the
  // identity is the task's own, as before switches were recorded.
  if (const auto numerics = numerics_switches(); !numerics.empty()) {
    identity_["switches"] = numerics;
    task_identity_["switches"] = numerics;
  }

  // Static shards read only their own journal (state). One run (one process or the ranks of a
  // distributed one) reads every journal of OUT, whatever number of ranks wrote them, so no
  // finished item is redone; in a distributed run every rank reads before any rank writes (the
  // barrier below).
  const RunFileKind& kind = reducer_ ? kState : kJournal;
  const std::string path = journal_path();
  std::vector<std::string> files;
  if (settings_.num_shards > 1) {
    if (fs::exists(path)) files.push_back(path);
  } else {
    files = run_files(kind, settings_.out_path);
  }
  // In a distributed run a rank's own state is continued by that rank; any other is carried.
  auto continued_by_a_rank = [&](const std::string& f) {
    if (!dist_) return false;
    for (int64_t r = 0; r < dist_->world(); ++r)
      if (f == run_file_path(kind, settings_.out_path, r)) return true;
    return false;
  };
  std::string refusal;
  std::map<std::string, nlohmann::json> found;
  try {
    // One run per output (a distributed run's rank 0 holds it for all): taken before any journal is read.
    if (!dist_ || dist_->rank() == 0) lock_ = std::make_unique<OutputLock>(settings_.out_path);
    if (!files.empty() && !settings_.resume)
      throw Error(fmt::format("{} exists (an interrupted run): pass --resume to continue it, or delete it", files.front()));
    for (const std::string& f : files) {
      check_run_file(kind, f);
      if (f != path) other_journals_.push_back(f);
      if (!reducer_) {
        auto [records, elapsed] = read_journal(f, task_, identity_, f == path);
        elapsed_before_ = std::max(elapsed_before_, elapsed);
        found.insert(records.begin(), records.end());
        continue;
      }
      SavedState s = read_state(f, task_, identity_, *reducer_, item_ids_);
      elapsed_before_ = std::max(elapsed_before_, s.elapsed);
      for (const std::string& id : s.done)
        if (!finished_.insert(id).second)
          throw Error(fmt::format("{}: item '{}' is also in another state file (damaged states; delete them to start again)", f, id));
      if (f == path) {
        state_ = std::move(s.state);
        own_done_ = std::move(s.done);
      } else if (!continued_by_a_rank(f)) {
        if (carried_) {
          carried_->merge(*s.state);
        } else {
          carried_ = std::move(s.state);
        }
        carried_done_.insert(carried_done_.end(), s.done.begin(), s.done.end());
      }
    }
    if (reducer_ && !state_) state_ = reducer_->load(task_identity_, nullptr);
  } catch (const Error& e) {
    if (!dist_) throw;
    refusal = e.what();
  }
  if (dist_) {
    // One job, one run: every rank must have been given the same task, identity (model, data
    // digest, settings), items and output. Each posts its own; each compares with rank 0's; a
    // difference is every rank's refusal (the barrier), before any work.
    nlohmann::json item_ids = nlohmann::json::array();
    for (const WorkItem& it : items_) item_ids.push_back(it.id);
    const nlohmann::json whole = {{"task", task_}, {"identity", identity_}, {"items", sha256_hex(item_ids.dump())},
                                  {"out", fs::weakly_canonical(fs::absolute(settings_.out_path)).string()},
                                  {"resume", settings_.resume}};
    dist_->set(fmt::format("{}/identity/{}", scope_, dist_->rank()), whole.dump());
    if (refusal.empty() && dist_->rank() != 0) {
      const nlohmann::json rank0 = nlohmann::json::parse(dist_->get(scope_ + "/identity/0"), nullptr, false);
      if (rank0 != whole) {
        nlohmann::json a = whole, b = rank0.is_object() ? rank0 : nlohmann::json::object();
        // Name the identity fields that differ, not just "identity".
        if (a.contains("identity") && b.contains("identity") && a["identity"].is_object() && b["identity"].is_object()) {
          for (auto& [k, v] : a["identity"].items()) a["identity." + k] = v;
          for (auto& [k, v] : b["identity"].items()) b["identity." + k] = v;
          a.erase("identity");
          b.erase("identity");
        }
        refusal = fmt::format("rank {} was given another run than rank 0 (every rank needs the same model, data, "
                              "settings and --out): {}",
                              dist_->rank(), diff_fields(a, b).dump());
      }
    }
    dist_->barrier(scope_ + "/start", refusal);
  }
  for (const WorkItem& it : items_)
    if (found.count(it.id)) {
      records_[it.id] = found[it.id];
      finished_.insert(it.id);
    }
  if (!files.empty())
    std::fprintf(stderr, "[%s] resuming from %zu %s(s) of %s: %zu of %zu items already done\n", task_.c_str(), files.size(),
                 kind.what, settings_.out_path.c_str(), finished_.size(), dist_ ? items_.size() : mine.size());

  std::vector<size_t> open_items;
  for (size_t i : mine)
    if (!finished_.count(items_[i].id)) open_items.push_back(i);
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
    done_count_ = shard_total_ - static_cast<int64_t>(open_items.size());
  }

  if (!fs::path(settings_.out_path).parent_path().empty()) fs::create_directories(fs::path(settings_.out_path).parent_path());
  if (!reducer_) {
    // Appended to only when it is the regular file read above; else created new (never through a link).
    check_run_file(kind, path);
    const bool exists = fs::exists(fs::symlink_status(path));
    const int fd = exists ? ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC) : create_new_file(path);
    if (fd < 0) throw Error(fmt::format("{}: cannot open the journal for writing ({})", path, std::strerror(errno)));
    struct stat st {};
    const bool fresh = ::fstat(fd, &st) != 0 || st.st_size == 0;
    journal_ = ::fdopen(fd, "ab");
    if (!journal_) {
      ::close(fd);
      throw Error(fmt::format("{}: cannot open the journal for writing", path));
    }
    if (fresh) {
      const std::string header = run_file_header(kJournal, task_, identity_).dump() + "\n";
      std::fwrite(header.data(), 1, header.size(), journal_);
      std::fflush(journal_);
    }
  }
  last_save_ = std::chrono::steady_clock::now();
  progress_ = Progress(dist_ ? fmt::format("{} rank {}", task_, dist_->rank()) : task_, shard_total_, settings_.progress_unit);
  progress_.update(done_count_, 0.0);

  signals_ = std::make_unique<StopSignals>();
}

int64_t RunnerCore::rank() const { return dist_ ? dist_->rank() : -1; }
int64_t RunnerCore::world() const { return dist_ ? dist_->world() : 1; }

nlohmann::json RunnerCore::with_stats(nlohmann::json payload) const {
  payload.update(stats_counts());
  return payload;
}

std::string RunnerCore::journal_path() const {
  return run_file_path(reducer_ ? kState : kJournal, settings_.out_path, dist_ ? dist_->rank() : -1);
}

bool RunnerCore::writes_result() const { return !dist_ || dist_->rank() == 0; }

std::optional<size_t> RunnerCore::claim() {
  const std::vector<size_t> one = claim_batch(1);
  if (one.empty()) return std::nullopt;
  return one.front();
}

std::vector<size_t> RunnerCore::claim_batch(size_t n) {
  if (n == 0) throw Error("internal: claim_batch(0)");
  std::vector<size_t> out;
  if (!dist_) {
    claimed_ = true;
    while (out.size() < n && next_claim_ < claim_order_.size()) out.push_back(claim_order_[next_claim_++]);
    return out;
  }
  const bool first = !claimed_;
  if (first)  // progress now counts every rank's items (after_finish), of all ranks' open ones
    progress_ = Progress(fmt::format("{} rank {}, all ranks", task_, dist_->rank()),
                         static_cast<int64_t>(claim_order_.size()), settings_.progress_unit);
  claimed_ = true;
  if (first) dist_->before_first_claim();
  const int64_t end = dist_->add(scope_ + "/claim", static_cast<int64_t>(n));
  if (first) dist_->after_first_claim();
  for (int64_t k = end - static_cast<int64_t>(n); k < end && k < static_cast<int64_t>(claim_order_.size()); ++k)
    out.push_back(claim_order_[static_cast<size_t>(k)]);
  return out;
}

RunnerCore::~RunnerCore() {
  if (journal_) std::fclose(journal_);
  lock_.reset();  // last: the journal is closed before another run may take the output
}

double RunnerCore::elapsed_seconds() const { return elapsed_before_ + progress_.elapsed(); }

void RunnerCore::finish_record(const std::string& id, nlohmann::json record, double work) {
  if (!item_ids_.count(id)) throw Error(fmt::format("internal: '{}' is not an item of this run", id));
  if (finished_.count(id)) throw Error(fmt::format("internal: item '{}' finished twice", id));
  const std::string line = nlohmann::json{{"id", id}, {"t", elapsed_seconds()}, {"record", record}}.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), journal_) != line.size() || std::fflush(journal_) != 0)
    throw Error(fmt::format("{}: cannot append to the journal (disk full?)", journal_path()));
  if (dist_) mine_[id] = record;
  records_[id] = std::move(record);
  after_finish(id, work);
  if (dist_) dist_->after_item(finished_here_);
}

void RunnerCore::finish_state(const std::string& id, const ReducerState& contribution, double work) {
  if (!item_ids_.count(id)) throw Error(fmt::format("internal: '{}' is not an item of this run", id));
  if (finished_.count(id)) throw Error(fmt::format("internal: item '{}' finished twice", id));
  state_->merge(contribution);
  own_done_.push_back(id);
  after_finish(id, work);
  // The test hook kills this rank right after its item: the state must hold it by then.
  const bool due = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_save_).count() >=
                   settings_.save_every_seconds;
  if (due || (dist_ && dist_->test_hook_kills_this_rank())) save_state();
  if (dist_) dist_->after_item(finished_here_);
}

void RunnerCore::after_finish(const std::string& id, double work) {
  finished_.insert(id);
  ++finished_here_;
  if (dist_ && claimed_) {
    // Progress counts every rank's items (claim_batch's line): totals kept in the store.
    done_count_ = dist_->add(scope_ + "/progress_done", 1);
    work_ = static_cast<double>(dist_->add(scope_ + "/progress_work", std::llround(work)));
  } else {
    ++done_count_;
    work_ += work;
  }
  progress_.update(done_count_, work_);
}

void RunnerCore::save_state() const {
  nlohmann::json j = run_file_header(kState, task_, identity_);
  j["done"] = own_done_;
  j["state"] = state_->to_json();
  j["elapsed_s"] = elapsed_seconds();
  write_json_atomic(journal_path(), j, -1);
  last_save_ = std::chrono::steady_clock::now();
}

bool RunnerCore::should_stop() const { return (signals_ && signals_->received() != 0) || (dist_ && !dist_->fault().empty()); }

void RunnerCore::interrupt() const {
  if (reducer_) {
    save_state();
  } else {
    std::fflush(journal_);
    ::fsync(fileno(journal_));
  }
  const int sig = signals_ ? signals_->received() : 0;
  const std::string fault = dist_ ? dist_->fault() : std::string();
  const std::string why = sig != 0           ? fmt::format("interrupted by signal {}", sig)
                          : !fault.empty()   ? fmt::format("rank {} stops: {}", dist_->rank(), fault)
                                             : std::string("stopped as asked");
  const std::string done = dist_ && claimed_ ? fmt::format("{} of {} items done by all ranks", done_count_, claim_order_.size())
                                             : fmt::format("{} of {} items done", done_count_, shard_total_);
  throw RunInterrupted(fmt::format("{}: {}; {} and saved in {}; run again with --resume", task_, why, done, journal_path()));
}

// Every item this process had to do is finished (with claim() in a distributed run, the shared
// counter ran out instead: rank 0 checks every item against what all ranks finished).
void RunnerCore::check_finished() const {
  if (dist_ && claimed_) return;
  const std::vector<size_t> mine = dist_ ? todo_ : shard_items(items_, settings_.num_shards, settings_.shard_index);
  for (size_t i : mine)
    if (!finished_.count(items_[i].id)) throw Error(fmt::format("internal: {} item '{}' is not finished", task_, items_[i].id));
}

nlohmann::json RunnerCore::stats_counts() const {
  nlohmann::json counts = nlohmann::json::object();
  for (const RunStatsSource& src : settings_.stats) {
    nlohmann::json c = src.counts();
    if (!c.is_null()) counts[src.name] = std::move(c);
  }
  return counts;
}

void RunnerCore::add_stats_header(nlohmann::json& header, const std::vector<nlohmann::json>& posts) const {
  for (const RunStatsSource& src : settings_.stats) {
    const RunStatsKind& kind = run_stats_kind(src.name);
    nlohmann::json sum;
    for (const nlohmann::json& p : posts) sum = kind.add(sum, p.value(src.name, nlohmann::json()));
    if (!sum.is_null()) header[src.name] = kind.header(sum);
  }
}

nlohmann::json RunnerCore::shard_part(nlohmann::json payload, double elapsed) const {
  std::vector<std::string> ids;
  for (const WorkItem& it : items_) ids.push_back(it.id);
  payload.update(stats_counts());
  return task_part(task_, task_identity_, settings_.num_shards, settings_.shard_index, ids, std::move(payload), elapsed);
}

nlohmann::json RunnerCore::complete_records(const ResultBuilder& build) {
  check_finished();
  if (!dist_) progress_.update(done_count_, work_, true);  // a distributed run's: rank 0's, once all ranks are done
  if (dist_) {
    say_rank_share(task_, dist_->rank(), finished_here_);
    std::fflush(journal_);
    ::fsync(fileno(journal_));
    return complete_distributed(
        with_stats({{"records", mine_}, {"elapsed_s", elapsed_seconds()}}),
        [&](const std::vector<nlohmann::json>& others, double) {
          for (const nlohmann::json& p : others)
            for (auto it = p.at("records").begin(); it != p.at("records").end(); ++it) records_[it.key()] = it.value();
          std::vector<nlohmann::json> ordered;
          ordered.reserve(items_.size());
          for (const WorkItem& it : items_) {
            auto rec = records_.find(it.id);
            if (rec == records_.end())
              throw Error(fmt::format("{}: item '{}' was finished by no rank (journals kept; run again with --resume)", task_, it.id));
            ordered.push_back(rec->second);
          }
          return build(identity_, ordered);
        });
  }
  const double elapsed = elapsed_seconds();
  nlohmann::json out;
  if (settings_.num_shards > 1) {
    out = shard_part({{"records", records_}}, elapsed);
  } else {
    std::vector<nlohmann::json> ordered;
    ordered.reserve(items_.size());
    for (const WorkItem& it : items_) ordered.push_back(records_.at(it.id));
    out = build(identity_, ordered);
    out["header"] = result_header(task_, identity_, elapsed);
    add_stats_header(out["header"], {stats_counts()});
  }
  // The result is complete: a signal from now on must not lose it.
  check_digested_files_unchanged();  // the identity's digests are of the bytes read
  StopSignals::ignore();
  write_json_atomic(settings_.out_path, out, settings_.num_shards > 1 ? -1 : 1);
  std::fclose(journal_);
  journal_ = nullptr;
  std::error_code ec;
  fs::remove(journal_path(), ec);
  for (const std::string& j : other_journals_) fs::remove(j, ec);
  return out;
}

nlohmann::json RunnerCore::complete_reduced(const ReducerFinish& finish) {
  check_finished();
  if (!dist_) progress_.update(done_count_, work_, true);
  if (dist_) {
    say_rank_share(task_, dist_->rank(), finished_here_);
    save_state();  // what this rank did is safe until rank 0 has written the result
    return complete_distributed(
        with_stats({{"done", own_done_}, {"state", state_->to_json()}, {"elapsed_s", elapsed_seconds()}}),
        [&](const std::vector<nlohmann::json>& others, double elapsed) {
          std::set<std::string> done(own_done_.begin(), own_done_.end());
          done.insert(carried_done_.begin(), carried_done_.end());
          if (carried_) state_->merge(*carried_);
          for (const nlohmann::json& p : others) {
            for (const auto& id : p.at("done")) done.insert(id.get<std::string>());
            state_->merge(*reducer_->load(identity_, &p.at("state")));
          }
          for (const WorkItem& it : items_)
            if (!done.count(it.id))
              throw Error(fmt::format("{}: item '{}' was finished by no rank (states kept; run again with --resume)", task_, it.id));
          return finish(identity_, *state_, elapsed);
        });
  }
  const double elapsed = elapsed_seconds();
  nlohmann::json out;
  if (settings_.num_shards > 1) {
    out = shard_part({{"done", own_done_}, {"state", state_->to_json()}}, elapsed);
  } else {
    if (carried_) state_->merge(*carried_);
    out = finish(identity_, *state_, elapsed);
    out["header"] = result_header(task_, identity_, elapsed);
    add_stats_header(out["header"], {stats_counts()});
  }
  check_digested_files_unchanged();  // the identity's digests are of the bytes read
  StopSignals::ignore();
  write_json_atomic(settings_.out_path, out, settings_.num_shards > 1 ? -1 : 1);
  std::error_code ec;
  fs::remove(journal_path(), ec);
  for (const std::string& f : other_journals_) fs::remove(f, ec);
  return out;
}

// Every rank posts what it finished in this run; rank 0 adds them to what the journals (states)
// held at the start, builds the result (records in item order, or states merged exactly, so
// which rank did what never changes it), writes it, removes every journal and posts it back; the
// others wait for it. Rank 0 leaves last (it may host the store the others still read).
nlohmann::json RunnerCore::complete_distributed(
    const nlohmann::json& mine,
    const std::function<nlohmann::json(const std::vector<nlohmann::json>& others, double elapsed)>& build_all) {
  dist_->set(fmt::format("{}/part/{}", scope_, dist_->rank()), mine.dump());
  const std::string result_key = scope_ + "/result";
  nlohmann::json out;
  if (dist_->rank() == 0) {
    try {
      double elapsed = elapsed_seconds();
      std::vector<nlohmann::json> others;
      for (int64_t r = 1; r < dist_->world(); ++r) {
        others.push_back(nlohmann::json::parse(dist_->get(fmt::format("{}/part/{}", scope_, r))));
        elapsed = std::max(elapsed, others.back().at("elapsed_s").get<double>());
      }
      out = build_all(others, elapsed);
      // Every rank has posted its part: all open items are done.
      if (claimed_) progress_.update(static_cast<int64_t>(claim_order_.size()), work_, true);
      out["header"] = result_header(task_, identity_, elapsed);
      out["header"]["world_size"] = dist_->world();
      std::vector<nlohmann::json> posts = {mine};
      posts.insert(posts.end(), others.begin(), others.end());
      add_stats_header(out["header"], posts);
      check_digested_files_unchanged();  // the identity's digests are of the bytes read
      StopSignals::ignore();
      write_json_atomic(settings_.out_path, out, 1);
    } catch (const std::exception& e) {
      dist_->set(result_key, nlohmann::json{{"error", fmt::format("rank 0: {}", e.what())}}.dump());
      dist_->leave(scope_);
      throw;
    }
    if (journal_) std::fclose(journal_);
    journal_ = nullptr;
    std::error_code ec;
    for (const std::string& f : run_files(reducer_ ? kState : kJournal, settings_.out_path)) fs::remove(f, ec);
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
    if (journal_) std::fclose(journal_);
    journal_ = nullptr;
    dist_->add("exited", 1);
    dist_->leave(scope_);
  }
  return out;
}

}  // namespace foxeval
