#include "tasks/loss.h"

#include <ATen/Functions.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <set>
#include <thread>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/prefetch.h"
#include "data/token_rows.h"
#include "data/windows.h"
#include "models/engine.h"
#include "models/registry.h"
#include "data/json_file.h"
#include "tasks/progress.h"
#include "tasks/distributed.h"
#include "tasks/output_lock.h"
#include "tasks/runner.h"
#include "tasks/stop_signals.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {


// Everything that changes the numbers. A state file or shard part made with other values is refused.
nlohmann::json identity(const LossSettings& s, const CausalLM& model, const TokenRows& rows, int64_t seq_len,
                        int64_t num_windows) {
  const ModelInfo& info = model.info();
  nlohmann::json id = {{"data", rows.describe()},
          {"seq_len", seq_len},
          {"max_tokens", s.max_tokens},
          {"num_windows", num_windows},
          {"bos_id", s.bos_id},
          {"dtype", s.run.dtype},
          {"device_type", at::Device(s.run.device).is_cuda() ? "cuda" : "cpu"},
          {"batch_size", s.batch_size},
          {"num_shards", s.num_shards}};
  id.update(model_identity(s.model_dir, info));  // model, type, size, numerics options
  return id;
}

std::string state_path(const LossSettings& s) { return s.out_path + ".state.json"; }

// A shard's share of the windows: a contiguous block (neighbouring documents share zarr chunks).
std::pair<int64_t, int64_t> shard_range(int64_t n, int64_t shards, int64_t index) {
  return {n * index / shards, n * (index + 1) / shards};
}

// Per-position losses of n consecutive windows (the first is window `first`), row-major.
std::vector<float> batch_losses(CausalLM& model, const LossSettings& s, std::vector<int64_t>& batch_tokens, int64_t n,
                                int64_t seq_len, int64_t first, const at::Device& device) {
  at::Tensor labels = at::from_blob(batch_tokens.data(), {n, seq_len}, at::kLong).clone();
  if (labels.min().item<int64_t>() < 0 || labels.max().item<int64_t>() >= model.info().vocab_size)
    throw Error(fmt::format("{}: token ids out of the model's vocabulary [0, {}) in windows {}..{}", s.data_path,
                            model.info().vocab_size, first, first + n - 1));
  at::Tensor input = at::cat({at::full({n, 1}, s.bos_id, at::kLong), labels.slice(1, 0, seq_len - 1)}, 1);
  at::Tensor loss = token_logprobs(model, input.to(device), labels.to(device)).neg().to(at::kCPU).contiguous();
  return std::vector<float>(loss.data_ptr<float>(), loss.data_ptr<float>() + loss.numel());
}

// The result of one run (one process, or all ranks of a distributed run reduced at rank 0).
nlohmann::json one_result(const CausalLM& model, const nlohmann::json& id, const LossSums& sums, int64_t seq_len,
                          double elapsed, double data_wait_s, const at::Device& device) {
  nlohmann::json result = loss_metrics(sums, seq_len);
  result["kind"] = "foxeval-loss";
  result["identity"] = id;
  result["model_info"] = {{"family", model.info().family}, {"num_parameters", model.info().num_parameters}};
  result["documents"] = sums.documents;
  result["tokens"] = sums.documents * seq_len;
  result["elapsed_s"] = elapsed;
  result["tokens_per_s"] = elapsed > 0 ? static_cast<double>(sums.documents * seq_len) / elapsed : 0.0;
  result["data_wait_s"] = data_wait_s;  // this run's (a resumed run counts from the resume)
  result["seconds_per_document"] = sums.documents > 0 ? elapsed / static_cast<double>(sums.documents) : 0.0;
  result["header"] = result_header("loss", id, elapsed);
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.has_index() ? device.index() : 0);
    result["peak_gpu_memory_bytes"] =
        stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  }
  return result;
}

// OUT.state.rank<R>.json of earlier distributed runs, sorted.
std::vector<std::string> rank_state_files(const LossSettings& s) {
  const fs::path out(s.out_path);
  const fs::path dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  const std::string stem = out.filename().string() + ".state.rank";
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(stem, 0) != 0 || name.size() <= stem.size() + 5 || name.compare(name.size() - 5, 5, ".json") != 0) continue;
    const std::string r = name.substr(stem.size(), name.size() - stem.size() - 5);
    if (r.find_first_not_of("0123456789") == std::string::npos) found.push_back((out.parent_path() / name).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

nlohmann::json run_loss_shared(const LossSettings& s, CausalLM& model, TokenRows& rows, const std::vector<Window>& windows,
                               const nlohmann::json& id, int64_t seq_len, DistributedSession* dist,
                               const std::string& lock_refusal);

}  // namespace

// One run over the ranks of a launcher (or one process finishing such a run): the windows go in
// chunks of --batch-size, handed out by a shared counter in the store; each rank keeps its exact
// sums and the chunks it did in OUT.state.rank<R>.json (saved every --save-every seconds and on a
// stop), so --resume continues with any number of ranks; rank 0 adds every rank's sums (int64,
// associative: the same bits as one process) and writes the one result.
namespace {
nlohmann::json run_loss_shared(const LossSettings& s, CausalLM& model, TokenRows& rows, const std::vector<Window>& windows,
                               const nlohmann::json& id, int64_t seq_len, DistributedSession* dist,
                               const std::string& lock_refusal) {
  const int64_t rank = dist ? dist->rank() : 0, world = dist ? dist->world() : 1;
  const int64_t num_windows = static_cast<int64_t>(windows.size()), B = s.batch_size;
  const int64_t num_chunks = (num_windows + B - 1) / B;
  const std::string own_state = fmt::format("{}.state.rank{}.json", s.out_path, rank);
  static int scope_count = 0;
  const std::string scope = fmt::format("loss{}", scope_count++);

  // Every state file: whose chunks are done. A current rank continues its own file; files of
  // ranks beyond this run's count (and a one-process state) are carried by rank 0 to the end.
  std::vector<std::string> files = rank_state_files(s);
  if (fs::exists(state_path(s))) files.push_back(state_path(s));
  std::vector<char> done(static_cast<size_t>(num_chunks), 0);
  LossSums sums, carried;
  sums.sum_fixed.assign(seq_len, 0);
  carried.sum_fixed.assign(seq_len, 0);
  double elapsed_before = 0;
  std::string refusal;
  try {
    if (!lock_refusal.empty()) throw Error(lock_refusal);
    if (!files.empty() && !s.resume)
      throw Error(fmt::format("{} exists (an interrupted run): pass --resume to continue it, or delete it", files.front()));
    for (const std::string& f : files) {
      const nlohmann::json st = read_json(f);
      if (st.value("identity", nlohmann::json()) != id)
        throw Error(fmt::format("{}: was made with other settings, model or data; refusing to resume ({})", f,
                                diff_fields(st.value("identity", nlohmann::json::object()), id).dump()));
      std::vector<int64_t> chunks;
      if (st.contains("chunks")) {
        chunks = st.at("chunks").get<std::vector<int64_t>>();
      } else {  // a one-process state: windows [0, next_window) are done, in batches from 0
        const int64_t next = st.at("next_window").get<int64_t>();
        for (int64_t c = 0; c * B < next; ++c) chunks.push_back(c);
      }
      for (int64_t c : chunks) {
        if (c < 0 || c >= num_chunks || done[c]) throw Error(fmt::format("{}: chunk {} is invalid or done twice", f, c));
        done[c] = 1;
      }
      if (static_cast<int64_t>(st.at("sum_fixed").size()) != seq_len)
        throw Error(fmt::format("{}: a damaged state file (sum_fixed has {} positions, seq_len is {})", f,
                                st.at("sum_fixed").size(), seq_len));
      // Sums: our own file's we continue; another current rank's is that rank's; the rest rank 0 carries.
      bool current_rank = false;
      for (int64_t r = 0; r < world; ++r) current_rank |= f == fmt::format("{}.state.rank{}.json", s.out_path, r);
      if (f == own_state || !current_rank) {
        LossSums& into = f == own_state ? sums : carried;
        const auto add = st.at("sum_fixed").get<std::vector<int64_t>>();
        for (int64_t t = 0; t < seq_len; ++t) into.sum_fixed[t] += add.at(t);
        into.documents += st.at("documents").get<int64_t>();
      }
      elapsed_before = std::max(elapsed_before, st.at("elapsed_s").get<double>());
    }
  } catch (const Error& e) {
    if (!dist) throw;
    refusal = e.what();
  }
  if (dist) dist->barrier(scope + "/start", refusal);
  std::vector<int64_t> mine, open;
  if (fs::exists(own_state)) mine = read_json(own_state).at("chunks").get<std::vector<int64_t>>();
  for (int64_t c = 0; c < num_chunks; ++c)
    if (!done[c]) open.push_back(c);
  if (!files.empty())
    std::fprintf(stderr, "[loss] resuming from %zu state file(s): %lld of %lld chunks of %lld windows done\n", files.size(),
                 static_cast<long long>(num_chunks - static_cast<int64_t>(open.size())), static_cast<long long>(num_chunks),
                 static_cast<long long>(B));

  Progress progress(dist ? fmt::format("loss rank {} (of all ranks' windows)", rank) : "loss",
                    static_cast<int64_t>(open.size()) * B, "tok", 5.0);
  auto save_state = [&] {
    write_json_atomic(own_state, {{"identity", id}, {"chunks", mine}, {"documents", sums.documents},
                                  {"elapsed_s", elapsed_before + progress.elapsed()}, {"sum_fixed", sums.sum_fixed}}, -1);
  };
  const StopSignals stop_signals;

  const at::Device device(s.run.device);
  auto last_save = std::chrono::steady_clock::now();
  int64_t windows_this_run = 0, local_next = 0;
  double data_wait_s = 0;
  std::vector<int64_t> tokens, batch_tokens;
  Window w;
  const int64_t die_after = std::getenv("FOXEVAL_TEST_DIE_AFTER") ? std::atoll(std::getenv("FOXEVAL_TEST_DIE_AFTER")) : -1;
  while (true) {
    const std::string fault = dist ? dist->fault() : std::string();
    const bool stop = s.stop_after_windows > 0 && windows_this_run >= s.stop_after_windows;
    if (stop_signals.received() != 0 || !fault.empty() || stop) {
      save_state();
      const std::string why = stop_signals.received() != 0 ? fmt::format("interrupted by signal {}", stop_signals.received())
                              : !fault.empty()     ? fmt::format("rank {} stops: {}", rank, fault)
                                                   : fmt::format("stopped after {} windows as asked", s.stop_after_windows);
      throw LossInterrupted(fmt::format("{}: state saved to {}; run again with --resume", why, own_state));
    }
    const int64_t k = dist ? dist->add(scope + "/claim", 1) - 1 : local_next++;
    if (k >= static_cast<int64_t>(open.size())) break;
    const int64_t c = open[static_cast<size_t>(k)];
    const int64_t first = c * B, n = std::min(B, num_windows - first);
    const auto wait_start = std::chrono::steady_clock::now();
    std::vector<Window> chunk(windows.begin() + first, windows.begin() + first + n);
    Prefetcher prefetch(rows, chunk, 4);
    batch_tokens.clear();
    for (int64_t i = 0; i < n; ++i) {
      if (!prefetch.next(w, tokens)) throw Error("internal: prefetcher ran out of windows");
      batch_tokens.insert(batch_tokens.end(), tokens.begin(), tokens.end());
    }
    data_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
    sums.add(batch_losses(model, s, batch_tokens, n, seq_len, first, device), n, seq_len);
    mine.push_back(c);
    windows_this_run += n;
    progress.update(windows_this_run, static_cast<double>(windows_this_run * seq_len));
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_save).count() >= s.save_every_seconds) {
      save_state();
      last_save = std::chrono::steady_clock::now();
    }
    if (dist && die_after >= 0) {  // the test hook (tasks/distributed.h): die right after a save
      save_state();
      dist->after_item(static_cast<int64_t>(windows_this_run / B));
    }
  }
  progress.update(windows_this_run, static_cast<double>(windows_this_run * seq_len), true);
  save_state();  // what this rank did is safe until rank 0 has written the result
  double elapsed = elapsed_before + progress.elapsed();
  if (!dist) {
    for (int64_t t = 0; t < seq_len; ++t) sums.sum_fixed[t] += carried.sum_fixed[t];
    sums.documents += carried.documents;
  } else {
    dist->set(fmt::format("{}/sums/{}", scope, rank),
              nlohmann::json{{"documents", sums.documents}, {"sum_fixed", sums.sum_fixed}, {"elapsed_s", elapsed}}.dump());
    if (rank != 0) {
      const nlohmann::json r = nlohmann::json::parse(dist->get(scope + "/result"));
      dist->add("exited", 1);
      dist->add(scope + "/left", 1);
      if (r.contains("error") && !r.contains("header")) throw Error(r["error"].get<std::string>());
      StopSignals::ignore();
      return r;
    }
    for (int64_t t = 0; t < seq_len; ++t) sums.sum_fixed[t] += carried.sum_fixed[t];
    sums.documents += carried.documents;
    for (int64_t r = 1; r < world; ++r) {
      const nlohmann::json p = nlohmann::json::parse(dist->get(fmt::format("{}/sums/{}", scope, r)));
      const auto add = p.at("sum_fixed").get<std::vector<int64_t>>();
      for (int64_t t = 0; t < seq_len; ++t) sums.sum_fixed[t] += add[t];
      sums.documents += p.at("documents").get<int64_t>();
      elapsed = std::max(elapsed, p.at("elapsed_s").get<double>());
    }
  }
  nlohmann::json result;
  try {
    if (sums.documents != num_windows)
      throw Error(fmt::format("loss: {} of {} windows summed (a state file is missing?); states kept, run again with --resume",
                              sums.documents, num_windows));
    result = one_result(model, id, sums, seq_len, elapsed, data_wait_s, device);
    if (dist) result["header"]["world_size"] = world;
    StopSignals::ignore();
    write_json_atomic(s.out_path, result, 1);
  } catch (const std::exception& e) {
    if (dist) dist->set(scope + "/result", nlohmann::json{{"error", fmt::format("rank 0: {}", e.what())}}.dump());
    throw;
  }
  std::error_code ec;
  for (const std::string& f : rank_state_files(s)) fs::remove(f, ec);
  fs::remove(state_path(s), ec);
  if (dist) {
    dist->set(scope + "/result", result.dump());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (dist->add(scope + "/left", 0) < world - 1 && dist->fault().empty() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return result;
}

}  // namespace

void LossSums::add(const std::vector<float>& losses, int64_t rows, int64_t seq_len) {
  if (sum_fixed.empty()) sum_fixed.assign(seq_len, 0);
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = losses.data() + r * seq_len;
    for (int64_t t = 0; t < seq_len; ++t) {
      if (!std::isfinite(row[t])) throw Error(fmt::format("non-finite loss {} at position {}", row[t], t));
      sum_fixed[t] += std::llround(static_cast<double>(row[t]) * kScale);
    }
  }
  documents += rows;
}

double LossSums::mean(int64_t position) const {
  return static_cast<double>(sum_fixed[position]) / kScale / static_cast<double>(documents);
}

nlohmann::json loss_metrics(const LossSums& sums, int64_t seq_len) {
  nlohmann::json out;
  std::vector<double> per_token(seq_len);
  for (int64_t t = 0; t < seq_len; ++t) per_token[t] = sums.documents > 0 ? sums.mean(t) : NAN;
  std::vector<int64_t> lengths;
  for (int64_t L = seq_len; L >= 512; L /= 2) lengths.push_back(L);
  if (seq_len < 512) lengths.push_back(seq_len);
  for (int64_t L : lengths) {
    double total = 0;
    for (int64_t t = 0; t < L; ++t) total += per_token[t];
    const double avg = total / static_cast<double>(L);
    out[fmt::format("val/loss_avg_len_{}", L)] = avg;
    out[fmt::format("val/perplexity_len_{}", L)] = std::exp(avg);
  }
  out["val/loss_per_token"] = per_token;
  return out;
}

nlohmann::json run_loss(const LossSettings& s) {
  if (s.num_shards < 1 || s.shard_index < 0 || s.shard_index >= s.num_shards)
    throw Error(fmt::format("--shard-index {} must be in [0, --num-shards {})", s.shard_index, s.num_shards));
  if (s.batch_size < 1) throw Error(fmt::format("--batch-size {} must be >= 1", s.batch_size));
  if (s.seq_len < 0) throw Error(fmt::format("--seq-len {}: must be >= 1 (or left out: the row length)", s.seq_len));
  if (s.max_tokens < 1) throw Error(fmt::format("--tokens {}: must be >= 1", s.max_tokens));
  if (s.stop_after_windows < 0) throw Error(fmt::format("--stop-after {}: must be >= 1", s.stop_after_windows));
  if (!(s.save_every_seconds > 0) || !std::isfinite(s.save_every_seconds))
    throw Error(fmt::format("--save-every {}: must be a finite number of seconds > 0", s.save_every_seconds));
  DistributedSession* dist = DistributedSession::active();
  const bool shared = s.num_shards == 1 && dist && dist->world() > 1;
  // One run per output (tasks/output_lock.h), taken before any state file is read; in a
  // distributed run rank 0 holds it for all, and its refusal reaches every rank through the start barrier.
  std::unique_ptr<OutputLock> lock;
  std::string lock_refusal;
  try {
    if (!shared || dist->rank() == 0) lock = std::make_unique<OutputLock>(s.out_path);
  } catch (const Error& e) {
    if (!shared) throw;
    lock_refusal = e.what();
  }
  std::unique_ptr<TokenRows> rows = open_token_rows(s.data_path);
  // A degenerate array (no rows, or rows of no tokens) has no window to evaluate.
  if (rows->num_rows() < 1 || rows->row_length() < 1)
    throw Error(fmt::format("--data {}: {} rows of {} tokens: needs at least one row of at least one token", s.data_path,
                            rows->num_rows(), rows->row_length()));
  const int64_t seq_len = s.seq_len > 0 ? s.seq_len : rows->row_length();
  if (seq_len > rows->row_length())
    throw Error(fmt::format("--seq-len {} is longer than the rows of {} ({})", seq_len, s.data_path, rows->row_length()));
  std::unique_ptr<CausalLM> model = load_model(s.model_dir, s.run);
  if (s.bos_id < 0 || s.bos_id >= model->info().vocab_size)
    throw Error(fmt::format("--bos-id {} is outside the vocabulary of {} (size {})", s.bos_id, s.model_dir,
                            model->info().vocab_size));

  // As the official loader: the first tokens/doc_len documents, every seq_len window of each
  // (the loader's order is column-major, so cutting a longer window list would pick other documents).
  const int64_t doc_len = rows->row_length() - rows->row_length() % seq_len;
  const int64_t num_docs = std::min(rows->num_rows(), std::max<int64_t>(1, s.max_tokens / doc_len));
  std::vector<Window> windows = longcrawl_row_windows(num_docs, rows->row_length(), seq_len);
  const int64_t num_windows = static_cast<int64_t>(windows.size());
  const nlohmann::json id = identity(s, *model, *rows, seq_len, num_windows);
  if (shared) return run_loss_shared(s, *model, *rows, windows, id, seq_len, dist, lock_refusal);
  if (s.num_shards == 1 && !rank_state_files(s).empty())
    return run_loss_shared(s, *model, *rows, windows, id, seq_len, nullptr, "");
  auto [first, last] = shard_range(num_windows, s.num_shards, s.shard_index);

  // Resume from the saved partial sums, or start.
  LossSums sums;
  int64_t next = first;
  double elapsed_before = 0;
  const std::string state_file = state_path(s);
  if (fs::exists(state_file)) {
    if (!s.resume)
      throw Error(fmt::format("{} exists (an interrupted run): pass --resume to continue it, or delete it", state_file));
    nlohmann::json st = read_json(state_file);
    if (st.value("identity", nlohmann::json()) != id || st.value("shard_index", -1) != s.shard_index)
      throw Error(fmt::format("{}: was made with other settings, model or data; refusing to resume ({})", state_file,
                              diff_fields(st.value("identity", nlohmann::json::object()), id).dump()));
    try {
      sums.sum_fixed = st.at("sum_fixed").get<std::vector<int64_t>>();
      sums.documents = st.at("documents").get<int64_t>();
      next = st.at("next_window").get<int64_t>();
      elapsed_before = st.at("elapsed_s").get<double>();
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}: a damaged state file ({}); delete it to start again", state_file, e.what()));
    }
    if (static_cast<int64_t>(sums.sum_fixed.size()) != seq_len || next < first || next > last || sums.documents < 0 ||
        sums.documents > next - first || !std::isfinite(elapsed_before))
      throw Error(fmt::format("{}: a damaged state file (sum_fixed, next_window or documents out of range); delete it "
                              "to start again", state_file));
    std::fprintf(stderr, "[loss] resuming %s at window %lld of [%lld, %lld)\n", state_file.c_str(),
                 static_cast<long long>(next), static_cast<long long>(first), static_cast<long long>(last));
  }
  if (sums.sum_fixed.empty()) sums.sum_fixed.assign(seq_len, 0);

  Progress progress("loss", last - first, "tok", 5.0);
  auto save_state = [&](double elapsed) {
    write_json_atomic(state_file, {{"identity", id}, {"shard_index", s.shard_index}, {"next_window", next},
                                   {"documents", sums.documents}, {"elapsed_s", elapsed}, {"sum_fixed", sums.sum_fixed}},
                      -1);
  };

  // SIGINT/SIGTERM only set a flag while this runs: in the loop it saves the state and stops;
  // after the loop (the result being written) it is ignored. The caller's handlers come back
  // on return.
  const StopSignals stop_signals;

  const at::Device device(s.run.device);
  std::vector<Window> todo(windows.begin() + next, windows.begin() + last);
  Prefetcher prefetch(*rows, todo, 4);
  auto last_save = std::chrono::steady_clock::now();
  int64_t tokens_this_run = 0;
  double data_wait_s = 0;
  Window w;
  std::vector<int64_t> tokens;
  std::vector<int64_t> batch_tokens;
  while (next < last) {
    // One batch of consecutive windows (a batch never spans a resume point: see save_state).
    const int64_t n = std::min(s.batch_size, last - next);
    batch_tokens.clear();
    const auto wait_start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i) {
      if (!prefetch.next(w, tokens)) throw Error("internal: prefetcher ran out of windows");
      batch_tokens.insert(batch_tokens.end(), tokens.begin(), tokens.end());
    }
    // Time the model waited for data: ~0 when reading and decompression keep ahead.
    data_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
    sums.add(batch_losses(*model, s, batch_tokens, n, seq_len, next, device), n, seq_len);
    next += n;
    tokens_this_run += n * seq_len;
    progress.update(next - first, static_cast<double>(tokens_this_run));

    const bool due = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_save).count() >=
                     s.save_every_seconds;
    const bool stop = s.stop_after_windows > 0 && tokens_this_run >= s.stop_after_windows * seq_len && next < last;
    if (stop_signals.received() != 0 || stop || (due && next < last)) {
      save_state(elapsed_before + progress.elapsed());
      last_save = std::chrono::steady_clock::now();
      if (stop_signals.received() != 0)
        throw LossInterrupted(fmt::format("interrupted by signal {}: state saved to {}; run again with --resume",
                                          stop_signals.received(), state_file));
      if (stop)
        throw LossInterrupted(fmt::format("stopped after {} windows as asked: state saved to {}; run again with --resume",
                                          s.stop_after_windows, state_file));
    }
  }
  progress.update(next - first, static_cast<double>(tokens_this_run), true);

  const double elapsed = elapsed_before + progress.elapsed();
  nlohmann::json result;
  if (s.num_shards > 1) {
    // A shard part: the exact sums, for `foxeval merge`.
    result = {{"kind", "foxeval-loss-part"}, {"identity", id}, {"shard_index", s.shard_index},
              {"window_range", {first, last}}, {"documents", sums.documents}, {"elapsed_s", elapsed},
              {"sum_fixed", sums.sum_fixed}};
  } else {
    result = one_result(*model, id, sums, seq_len, elapsed, data_wait_s, device);
  }
  write_json_atomic(s.out_path, result, s.num_shards > 1 ? -1 : 1);
  std::error_code ec;
  fs::remove(state_file, ec);
  return result;
}

nlohmann::json merge_loss_parts(const std::vector<std::string>& parts, const std::string& out_path) {
  if (parts.empty()) throw Error("merge: no parts given");
  nlohmann::json id;
  LossSums sums;
  std::set<int64_t> seen;
  double elapsed_max = 0;
  int64_t num_shards = 0;
  int64_t seq_len = 0;
  for (const auto& path : parts) {
    nlohmann::json p = read_json(path);
    if (!p.is_object() || p.value("kind", "") != "foxeval-loss-part")
      throw Error(fmt::format("{}: not a shard part of foxeval loss (run with --num-shards > 1)", path));
    // A part is input like any other: every field checked before it is used, errors naming the file.
    try {
      if (id.is_null()) {
        id = p.at("identity");
        num_shards = id.at("num_shards").get<int64_t>();
        seq_len = id.at("seq_len").get<int64_t>();
        if (num_shards < 1 || num_shards > (int64_t(1) << 20))
          throw Error(fmt::format("identity.num_shards {} is outside [1, {}]", num_shards, int64_t(1) << 20));
        if (seq_len < 1 || seq_len > (int64_t(1) << 22))
          throw Error(fmt::format("identity.seq_len {} is outside [1, {}]", seq_len, int64_t(1) << 22));
      } else if (p.at("identity") != id) {
        throw Error(fmt::format("made with other settings than {} ({})", parts[0], diff_fields(id, p["identity"]).dump()));
      }
      const int64_t shard = p.at("shard_index").get<int64_t>();
      if (shard < 0 || shard >= num_shards)
        throw Error(fmt::format("shard_index {} is outside [0, {})", shard, num_shards));
      if (!seen.insert(shard).second) throw Error(fmt::format("shard {} given twice (overlapping parts)", shard));
      auto s = p.at("sum_fixed").get<std::vector<int64_t>>();
      if (static_cast<int64_t>(s.size()) != seq_len)
        throw Error(fmt::format("sum_fixed has {} positions, seq_len is {}", s.size(), seq_len));
      if (sums.sum_fixed.empty()) sums.sum_fixed.assign(s.size(), 0);
      for (size_t t = 0; t < s.size(); ++t) sums.sum_fixed[t] += s[t];
      const int64_t docs = p.at("documents").get<int64_t>();
      if (docs < 0) throw Error(fmt::format("documents {} is negative", docs));
      sums.documents += docs;
      const double el = p.at("elapsed_s").get<double>();
      if (std::isfinite(el)) elapsed_max = std::max(elapsed_max, el);
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", path, e.what()));
    } catch (const nlohmann::json::exception& e) {
      throw Error(fmt::format("{}: not a valid loss part ({})", path, e.what()));
    }
  }
  for (int64_t i = 0; i < num_shards; ++i)
    if (!seen.count(i)) throw Error(fmt::format("merge: shard {} of {} is missing", i, num_shards));
  nlohmann::json result = loss_metrics(sums, seq_len);
  id["num_shards"] = 1;  // the merged result equals a single run
  result["kind"] = "foxeval-loss";
  result["identity"] = id;
  result["merged_from"] = parts;
  result["header"] = result_header("loss", id, elapsed_max);
  result["documents"] = sums.documents;
  result["tokens"] = sums.documents * seq_len;
  result["elapsed_s"] = elapsed_max;
  result["tokens_per_s"] = elapsed_max > 0 ? static_cast<double>(sums.documents * seq_len) / elapsed_max : 0.0;
  write_json_atomic(out_path, result);
  return result;
}

}  // namespace foxeval
