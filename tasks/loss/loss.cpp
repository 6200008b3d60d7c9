#include "tasks/loss/loss.h"

#include <ATen/Functions.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "data/errors.h"
#include "data/prefetch.h"
#include "data/token_rows.h"
#include "data/windows.h"
#include "models/engine.h"
#include "models/registry.h"
#include "tasks/run/identity.h"
#include "tasks/loss/loss_text.h"
#include "tasks/results/item_stats.h"
#include "tasks/run/runner.h"
#include "tasks/run/task_runner_settings.h"

namespace foxeval {
namespace {

// What the windows are read from and what each counts: token rows (npy, zarr) or a tokenized text corpus.
struct LossData {
  std::unique_ptr<TokenRows> rows;
  std::vector<Window> windows;
  std::vector<WindowCounts> counts;  // per window
  int64_t seq_len = 0;
  nlohmann::json identity;  // data, data_digest (+ text: the source, tokenizer, windowing)
};

// Everything that changes the numbers. A state file or shard part made with other values is refused.
nlohmann::json identity(const LossSettings& s, const LoadedModel& model, const LossData& data) {
  nlohmann::json id = data.identity;
  id.update({{"seq_len", data.seq_len},
          {"max_tokens", s.max_tokens},
          {"num_windows", static_cast<int64_t>(data.windows.size())},
          {"bos_id", s.bos_id},
          {"dtype", s.run.dtype},
          {"device_type", at::Device(s.run.device).is_cuda() ? "cuda" : "cpu"},
          {"batch_size", s.batch_size},
          {"num_shards", s.num_shards}});
  id.update(model_identity(model));  // model, type, size, numerics options
  return id;
}

// As the official loader: the first tokens/doc_len documents, every seq_len window of each
// (the loader's order is column-major, so cutting a longer window list would pick other documents).
LossData row_data(const LossSettings& s) {
  LossData d;
  d.rows = open_token_rows(s.data_path);
  const TokenRows& rows = *d.rows;
  // A degenerate array (no rows, or rows of no tokens) has no window to evaluate.
  if (rows.num_rows() < 1 || rows.row_length() < 1)
    throw Error(fmt::format("--data {}: {} rows of {} tokens: needs at least one row of at least one token", s.data_path,
                            rows.num_rows(), rows.row_length()));
  const int64_t seq_len = s.seq_len > 0 ? s.seq_len : rows.row_length();
  if (seq_len > rows.row_length())
    throw Error(fmt::format("--seq-len {} is longer than the rows of {} ({})", seq_len, s.data_path, rows.row_length()));
  const int64_t doc_len = rows.row_length() - rows.row_length() % seq_len;
  const int64_t num_docs = std::min(rows.num_rows(), std::max<int64_t>(1, s.max_tokens / doc_len));
  d.seq_len = seq_len;
  d.windows = longcrawl_row_windows(num_docs, rows.row_length(), seq_len);
  const int64_t dropped_per_row = rows.row_length() - doc_len, unread = rows.num_rows() - num_docs;
  // Each window whose column is 0 counts its row and that row's tail; the first window the rows unread.
  for (const Window& w : d.windows)
    d.counts.push_back({w.col0 == 0 ? 1 : 0, w.col0 == 0 ? dropped_per_row : 0, w.col0 == 0 && w.row0 == 0 ? unread : 0, 0, 0});
  std::fprintf(stderr, "[loss] %lld rows (documents) of %lld tokens: %lld windows of %lld tokens%s%s\n",
               static_cast<long long>(num_docs), static_cast<long long>(rows.row_length()),
               static_cast<long long>(d.windows.size()), static_cast<long long>(seq_len),
               dropped_per_row > 0 ? fmt::format("; the last {} tokens of each row are not evaluated (not a whole window)",
                                                 dropped_per_row).c_str() : "",
               unread > 0 ? fmt::format("; {} more rows of the data not read (--tokens {})", unread, s.max_tokens).c_str() : "");
  d.identity = {{"data", rows.describe()},
                // the rows read, by content (data/token_rows.h): the windows cover whole documents 0..n-1
                {"data_digest", rows.content_digest(num_docs)}};
  return d;
}

// --text: the documents read, tokenized (or their cached tokens), cut into windows (tasks/loss/loss_text.h).
LossData text_data(const LossSettings& s, ModelFiles& files) {
  if (s.seq_len < 1) throw Error("--text needs --seq-len (documents have no common row length)");
  TextSourceSpec spec{s.text_source, s.text_field, s.text_split, ""};
  apply_corpus_defaults(spec, !s.text_field.empty());
  const auto read_start = std::chrono::steady_clock::now();
  const TextDocs docs = read_text_docs(spec);
  const double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - read_start).count();
  files = task_model_files(s.model, s.model_dir);  // the model resolved once: for its tokenizer, then its load
  const TextTokenizer tok = text_tokenizer(files);
  const DocTokens tokens = tokenize_docs(docs.docs, docs.digest, tok, s.out_path);
  std::fprintf(stderr, "[loss] %zu documents from %s (read and hashed in %.1f s%s); %zu tokens, %s in %.1f s\n",
               docs.docs.size(), docs.description.c_str(), read_s,
               docs.duplicates > 0 ? fmt::format(", {} repeats of a document dropped", docs.duplicates).c_str() : "",
               tokens.tokens.size(), tokens.from_cache ? ("read from " + tokens.cache_path).c_str() : "tokenized", tokens.seconds);
  TextWindows tw = text_windows(tokens, s.seq_len, s.pack, s.separator_id, std::max<int64_t>(1, s.max_tokens / s.seq_len));
  LossData d;
  d.seq_len = s.seq_len;
  d.windows = longcrawl_row_windows(tw.rows->num_rows(), s.seq_len, s.seq_len);
  d.counts = std::move(tw.counts);
  std::fprintf(stderr, "[loss] %lld windows of %lld tokens%s%s\n", static_cast<long long>(d.windows.size()),
               static_cast<long long>(s.seq_len),
               s.pack ? fmt::format(" from {} documents packed with separator {}", tw.documents, s.separator_id).c_str()
                      : fmt::format(" (the first of each document); {} documents shorter than that skipped", tw.documents_skipped).c_str(),
               tw.windows_unread > 0 ? fmt::format("; {} more not read (--tokens {})", tw.windows_unread, s.max_tokens).c_str() : "");
  d.rows = std::move(tw.rows);
  d.identity = {{"data", docs.description},
                {"data_digest", docs.digest},  // the text as read (data/text_docs.h)
                {"text", {{"source", docs.identity},
                          {"tokenizer", "json.dumps(text)[1:-1] + GPT-2 BPE"},
                          {"tokenizer_digest", tok.digest},
                          {"pack", s.pack}}}};
  if (s.pack) d.identity["text"]["separator_id"] = s.separator_id;
  return d;
}

// Per-position losses of n consecutive windows (the first is window `first`), row-major.
std::vector<float> batch_losses(CausalLM& model, const LossSettings& s, std::vector<int64_t>& batch_tokens, int64_t n,
                                int64_t seq_len, int64_t first, const at::Device& device) {
  at::Tensor labels = at::from_blob(batch_tokens.data(), {n, seq_len}, at::kLong).clone();
  if (labels.min().item<int64_t>() < 0 || labels.max().item<int64_t>() >= model.info().vocab_size)
    throw Error(fmt::format("{}: token ids out of the model's vocabulary [0, {}) in windows {}..{}",
                            s.data_path.empty() ? s.text_source : s.data_path,
                            model.info().vocab_size, first, first + n - 1));
  at::Tensor input = at::cat({at::full({n, 1}, s.bos_id, at::kLong), labels.slice(1, 0, seq_len - 1)}, 1);
  at::Tensor loss = token_logprobs(model, input.to(device), labels.to(device)).neg().to(at::kCPU).contiguous();
  return std::vector<float>(loss.data_ptr<float>(), loss.data_ptr<float>() + loss.numel());
}

int64_t checked_seq_len(const nlohmann::json& identity) {
  const int64_t seq_len = identity.at("seq_len").get<int64_t>();
  if (seq_len < 1 || seq_len > (int64_t(1) << 22))
    throw Error(fmt::format("identity.seq_len {} is outside [1, {}]", seq_len, int64_t(1) << 22));
  return seq_len;
}

const LossState& as_loss(const ReducerState& s) {
  const auto* l = dynamic_cast<const LossState*>(&s);
  if (!l) throw Error("internal: a loss state expected");
  return *l;
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

void LossState::add_windows(const std::vector<float>& losses, int64_t n, int64_t seq_len, int64_t first) {
  sums.add(losses, n, seq_len);  // checks every loss is finite
  const std::vector<int64_t> lengths = loss_lengths(seq_len);
  for (int64_t r = 0; r < n; ++r) {
    const float* row = losses.data() + r * seq_len;
    // The lengths decrease: one pass from position 0, each length's sum read off on the way.
    std::vector<int64_t> at(lengths.size());
    int64_t total = 0, t = 0;
    for (size_t j = lengths.size(); j-- > 0;) {
      for (; t < lengths[j]; ++t) total += std::llround(static_cast<double>(row[t]) * LossSums::kScale);
      at[j] = total;
    }
    window_sums[first + r] = std::move(at);
  }
}

std::vector<int64_t> loss_lengths(int64_t seq_len) {
  std::vector<int64_t> lengths;
  for (int64_t L = seq_len; L >= 512; L /= 2) lengths.push_back(L);
  if (seq_len < 512) lengths.push_back(seq_len);
  return lengths;
}

double LossSums::mean(int64_t position) const {
  return static_cast<double>(sum_fixed[position]) / kScale / static_cast<double>(documents);
}

nlohmann::json LossState::to_json() const {
  nlohmann::json windows = nlohmann::json::object();
  for (const auto& [k, v] : window_sums) windows[std::to_string(k)] = v;
  return {{"documents", sums.documents}, {"sum_fixed", sums.sum_fixed}, {"rows", rows},
          {"tokens_dropped", tokens_dropped}, {"rows_unread", rows_unread},
          {"documents_skipped", documents_skipped}, {"tokens_skipped", tokens_skipped}, {"window_sums", windows}};
}

void LossState::merge(const ReducerState& other) {
  const LossState& o = as_loss(other);
  for (const auto& [k, v] : o.window_sums)  // checked before anything is added: a refused merge changes nothing
    if (window_sums.count(k)) throw Error(fmt::format("internal: loss window {} summed twice", k));
  window_sums.insert(o.window_sums.begin(), o.window_sums.end());
  if (sums.sum_fixed.empty()) sums.sum_fixed.assign(o.sums.sum_fixed.size(), 0);
  if (o.sums.sum_fixed.size() != sums.sum_fixed.size())
    throw Error(fmt::format("internal: loss states of {} and {} positions", sums.sum_fixed.size(), o.sums.sum_fixed.size()));
  for (size_t t = 0; t < sums.sum_fixed.size(); ++t) sums.sum_fixed[t] += o.sums.sum_fixed[t];
  sums.documents += o.sums.documents;
  rows += o.rows;
  tokens_dropped += o.tokens_dropped;
  rows_unread += o.rows_unread;
  documents_skipped += o.documents_skipped;
  tokens_skipped += o.tokens_skipped;
}

Reducer loss_reducer() {
  Reducer r;
  r.load = [](const nlohmann::json& identity, const nlohmann::json* saved) {
    const int64_t seq_len = checked_seq_len(identity);
    auto state = std::make_unique<LossState>();
    state->sums.sum_fixed.assign(seq_len, 0);
    if (!saved) return std::unique_ptr<ReducerState>(std::move(state));
    if (!saved->is_object()) throw Error("the loss state must be an object");
    auto sums = saved->at("sum_fixed").get<std::vector<int64_t>>();
    if (static_cast<int64_t>(sums.size()) != seq_len)
      throw Error(fmt::format("sum_fixed has {} positions, seq_len is {}", sums.size(), seq_len));
    state->sums.sum_fixed = std::move(sums);
    state->sums.documents = saved->at("documents").get<int64_t>();
    state->rows = saved->at("rows").get<int64_t>();
    state->tokens_dropped = saved->at("tokens_dropped").get<int64_t>();
    state->rows_unread = saved->at("rows_unread").get<int64_t>();
    // States and parts from before --text have no skipped documents.
    state->documents_skipped = saved->value("documents_skipped", int64_t(0));
    state->tokens_skipped = saved->value("tokens_skipped", int64_t(0));
    if (state->sums.documents < 0 || state->rows < 0 || state->tokens_dropped < 0 || state->rows_unread < 0 ||
        state->documents_skipped < 0 || state->tokens_skipped < 0)
      throw Error("documents, rows, tokens_dropped, rows_unread, documents_skipped and tokens_skipped must be >= 0");
    if (saved->contains("window_sums")) {  // absent in states saved before foxeval kept them
      const size_t nl = loss_lengths(seq_len).size();
      for (const auto& [k, v] : saved->at("window_sums").items()) {
        size_t used = 0;
        const int64_t index = std::stoll(k, &used);
        auto sums_k = v.get<std::vector<int64_t>>();
        if (used != k.size() || index < 0 || sums_k.size() != nl)
          throw Error(fmt::format("window_sums '{}': a window index with {} sums expected", k, nl));
        state->window_sums.emplace(index, std::move(sums_k));
      }
    }
    return std::unique_ptr<ReducerState>(std::move(state));
  };
  r.finish = [](const nlohmann::json& identity, const ReducerState& state, double elapsed_s) {
    return loss_result(identity, as_loss(state), elapsed_s);
  };
  return r;
}

nlohmann::json loss_metrics(const LossSums& sums, int64_t seq_len) {
  nlohmann::json out;
  std::vector<double> per_token(seq_len);
  for (int64_t t = 0; t < seq_len; ++t) per_token[t] = sums.documents > 0 ? sums.mean(t) : NAN;
  for (int64_t L : loss_lengths(seq_len)) {
    double total = 0;
    for (int64_t t = 0; t < L; ++t) total += per_token[t];
    const double avg = total / static_cast<double>(L);
    out[fmt::format("val/loss_avg_len_{}", L)] = avg;
    out[fmt::format("val/perplexity_len_{}", L)] = std::exp(avg);
  }
  out["val/loss_per_token"] = per_token;
  return out;
}

nlohmann::json loss_result(const nlohmann::json& identity, const LossState& state, double elapsed) {
  const int64_t seq_len = checked_seq_len(identity);
  const LossSums& sums = state.sums;
  if (sums.documents != identity.at("num_windows").get<int64_t>())
    throw Error(fmt::format("loss: {} of {} windows summed", sums.documents, identity.at("num_windows").dump()));
  nlohmann::json result = loss_metrics(sums, seq_len);
  // Per document (window) at each length: its mean loss over the first L positions, when every
  // window's sums are kept (a state saved before foxeval kept them has none).
  if (!state.window_sums.empty() && static_cast<int64_t>(state.window_sums.size()) == sums.documents) {
    const std::vector<int64_t> lengths = loss_lengths(seq_len);
    nlohmann::json per_item = nlohmann::json::object();
    for (size_t j = 0; j < lengths.size(); ++j) {
      ItemScores items;
      for (const auto& [k, v] : state.window_sums) {
        items.ids.push_back(std::to_string(k));
        items.values.push_back(static_cast<double>(v[j]) / LossSums::kScale / static_cast<double>(lengths[j]));
      }
      per_item[fmt::format("val/loss_avg_len_{}", lengths[j])] = per_item_entry(items);
    }
    result["per_item"] = per_item;
  }
  result["kind"] = "foxeval-loss";
  result["identity"] = identity;
  // "documents" counts windows (sequences of seq_len), as it always has; rows are the data's
  // documents, each cut into seq_len windows with its last tokens_dropped / rows tokens unused.
  result["documents"] = sums.documents;
  result["windows"] = sums.documents;
  result["rows"] = state.rows;
  result["tokens_dropped"] = state.tokens_dropped;
  result["rows_unread"] = state.rows_unread;
  if (identity.contains("text")) {  // rows are the corpus' documents; those shorter than a window are skipped
    result["documents_skipped"] = state.documents_skipped;
    result["tokens_skipped"] = state.tokens_skipped;
  }
  result["tokens"] = sums.documents * seq_len;
  result["elapsed_s"] = elapsed;
  result["tokens_per_s"] = elapsed > 0 ? static_cast<double>(sums.documents * seq_len) / elapsed : 0.0;
  result["seconds_per_document"] = sums.documents > 0 ? elapsed / static_cast<double>(sums.documents) : 0.0;
  return result;
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
  if (s.text_source.empty() == s.data_path.empty()) throw Error("give one of --data (token rows) and --text (documents)");
  ModelFiles files;
  const LossData data = s.text_source.empty() ? row_data(s) : text_data(s, files);
  if (files.dir.empty()) files = task_model_files(s.model, s.model_dir);
  const int64_t seq_len = data.seq_len;
  const std::vector<Window>& windows = data.windows;
  const int64_t num_windows = static_cast<int64_t>(windows.size());
  const std::shared_ptr<const LoadedModel> loaded = task_model(s.model, files, s.run);
  CausalLM* model = loaded->get();
  if (s.bos_id < 0 || s.bos_id >= model->info().vocab_size)
    throw Error(fmt::format("--bos-id {} is outside the vocabulary of {} (size {})", s.bos_id, s.model_dir,
                            model->info().vocab_size));

  // The items: batches of --batch-size consecutive windows, the same batches whatever the shards,
  // ranks or resume, so every window's loss is computed in the batch one process puts it in.
  std::vector<WorkItem> items;
  for (int64_t first = 0; first < num_windows; first += s.batch_size) {
    const int64_t n = std::min(s.batch_size, num_windows - first);
    items.push_back({fmt::format("windows_{}_{}", first, first + n), static_cast<double>(n * seq_len)});
  }
  RunnerSettings rs = task_runner_settings(s, s.out_path, model);
  rs.save_every_seconds = s.save_every_seconds;
  ReducerRunner run(rs, "loss", identity(s, *loaded, data), items, loss_reducer());

  const at::Device device(s.run.device);
  int64_t windows_this_run = 0;
  double data_wait_s = 0;
  std::vector<int64_t> tokens, batch_tokens;
  Window w;
  while (true) {
    // One process takes all its items at once, so one prefetcher reads ahead across batches; the
    // ranks of a distributed run take a batch at a time from the shared counter.
    const std::vector<size_t> claimed = run.claim_batch(run.distributed() ? 1 : items.size());
    if (claimed.empty()) break;
    std::vector<Window> todo;
    for (size_t i : claimed)
      for (int64_t k = static_cast<int64_t>(i) * s.batch_size; k < std::min(num_windows, static_cast<int64_t>(i + 1) * s.batch_size); ++k)
        todo.push_back(windows[k]);
    Prefetcher prefetch(*data.rows, todo, 4);
    for (size_t i : claimed) {
      if (run.should_stop() || (s.stop_after_windows > 0 && windows_this_run >= s.stop_after_windows)) run.interrupt();
      const int64_t first = static_cast<int64_t>(i) * s.batch_size, n = std::min(s.batch_size, num_windows - first);
      batch_tokens.clear();
      LossState contribution;
      const auto wait_start = std::chrono::steady_clock::now();
      for (int64_t k = 0; k < n; ++k) {
        if (!prefetch.next(w, tokens)) throw Error("internal: prefetcher ran out of windows");
        batch_tokens.insert(batch_tokens.end(), tokens.begin(), tokens.end());
        const WindowCounts& c = data.counts[first + k];
        contribution.rows += c.rows;
        contribution.tokens_dropped += c.tokens_dropped;
        contribution.rows_unread += c.rows_unread;
        contribution.documents_skipped += c.documents_skipped;
        contribution.tokens_skipped += c.tokens_skipped;
      }
      // Time the model waited for data: ~0 when reading and decompression keep ahead.
      data_wait_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - wait_start).count();
      contribution.add_windows(batch_losses(*model, s, batch_tokens, n, seq_len, first, device), n, seq_len, first);
      run.finish(items[i].id, contribution, static_cast<double>(n * seq_len));
      windows_this_run += n;
    }
  }

  // A live run knows more than the sums: the model's family, the data wait, the GPU memory.
  return run.complete([&](const nlohmann::json& id, const ReducerState& state, double elapsed) {
    nlohmann::json result = loss_result(id, as_loss(state), elapsed);
    result["model_info"] = {{"family", model->info().family}, {"num_parameters", model->info().num_parameters}};
    result["data_wait_s"] = data_wait_s;  // this run's (a resumed run counts from the resume)
    if (const auto peak = peak_gpu_memory_bytes(s.run.device)) result["peak_gpu_memory_bytes"] = *peak;
    return result;
  });
}

}  // namespace foxeval
