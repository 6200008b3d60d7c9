#include "tasks/inspect/inspect_task.h"

#include <ATen/Functions.h>
#include <c10/core/InferenceMode.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "data/token_rows.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "models/stage_timer.h"
#include "tasks/inspect/gate_stats.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tasks/run/task_runner_settings.h"

namespace foxeval::inspect {
namespace {

// Keeps what a forward hands out: per layer the log decays (segments concatenated along T) and
// the chosen head's q, k.
class Capture : public ForwardCapture {
 public:
  Capture(int64_t layers, std::pair<int64_t, int64_t> qk_head, int64_t only_layer)
      : chunks_(static_cast<size_t>(layers)), qk_head_(qk_head), only_layer_(only_layer) {}
  void log_decay(int64_t layer, const at::Tensor& x) override {
    if (layer < 0 || layer >= static_cast<int64_t>(chunks_.size()))
      throw Error(fmt::format("inspect: internal: a decay for layer {} of {}", layer, chunks_.size()));
    if (only_layer_ < 0 || layer == only_layer_) chunks_[layer].push_back(x.clone());  // the model may reuse its buffers
  }
  std::pair<int64_t, int64_t> qk_head() const override { return qk_head_; }
  void qk(const at::Tensor& q, const at::Tensor& k) override {
    q_.push_back(q.clone());
    k_.push_back(k.clone());
  }
  // [B, T, H(, K)] of layer l.
  at::Tensor layer(int64_t l) const {
    const auto& parts = chunks_.at(l);
    if (parts.empty()) throw Error(fmt::format("inspect: internal: the model reported no decay for layer {}", l));
    return parts.size() == 1 ? parts[0] : at::cat(parts, 1);
  }
  at::Tensor q() const { return q_.empty() ? at::Tensor() : at::cat(q_, 1); }
  at::Tensor k() const { return k_.empty() ? at::Tensor() : at::cat(k_, 1); }

 private:
  std::vector<std::vector<at::Tensor>> chunks_;
  std::pair<int64_t, int64_t> qk_head_;
  int64_t only_layer_;
  std::vector<at::Tensor> q_, k_;
};

// One forward of ids (batch 1) with the capture set, and unset on every way out.
void forward_captured(CausalLM& model, const std::vector<int64_t>& ids, Capture& capture) {
  c10::InferenceMode inference;
  at::Tensor input = at::tensor(ids, at::kLong).view({1, -1}).to(at::Device(model.options().device));
  struct Unset {
    CausalLM& m;
    ~Unset() { m.set_capture(nullptr); }
  } unset{model};
  model.set_capture(&capture);
  (void)model.forward(input, nullptr);
}

nlohmann::json decay_json(const DecayInfo& d) {
  return {{"kind", d.kind}, {"what", d.what}, {"layers", d.layers}, {"heads", d.heads}, {"channels", d.channels}};
}

// The model's sliding window W (its "window_size" setting: Transformer (SWA)), 0 without one.
int64_t window_size(const ModelInfo& info) {
  for (const auto& [k, v] : info.settings)
    if (k == "window_size") return std::stoll(v);
  return 0;
}

void check_ids(const std::vector<int64_t>& ids, int64_t vocab, const std::string& where) {
  for (size_t t = 0; t < ids.size(); ++t)
    if (ids[t] < 0 || ids[t] >= vocab)
      throw Error(fmt::format("{}: token {} at position {} is outside the model's vocabulary [0, {})", where, ids[t], t, vocab));
}

}  // namespace

nlohmann::json build_gates_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  const nlohmann::json& decay = identity.at("decay");
  nlohmann::json sums;  // [layer][head]: the records added in item order
  int64_t tokens = 0;
  for (const nlohmann::json& r : records) {
    tokens += r.at("tokens").get<int64_t>();
    if (sums.is_null()) {
      sums = r.at("layers");
      continue;
    }
    const nlohmann::json& layers = r.at("layers");
    if (layers.size() != sums.size()) throw Error("inspect: records with different layer counts");
    for (size_t l = 0; l < sums.size(); ++l)
      for (size_t h = 0; h < sums[l].size(); ++h) add_head_records(sums[l][h], layers.at(l).at(h));
  }
  nlohmann::json layers = nlohmann::json::array();
  if (!sums.is_null())
    for (size_t l = 0; l < sums.size(); ++l) {
      nlohmann::json heads = nlohmann::json::array();
      for (size_t h = 0; h < sums[l].size(); ++h) {
        nlohmann::json s = head_summary(sums[l][h]);
        s["head"] = h;
        heads.push_back(std::move(s));
      }
      layers.push_back({{"layer", l}, {"heads", std::move(heads)}});
    }
  std::vector<double> taus(std::begin(kTolerances), std::end(kTolerances));
  return {{"kind", "foxeval-inspect-gates"},
          {"model", identity.value("model", "")},
          {"decay", decay},
          {"documents", records.size()},
          {"tokens", tokens},
          {"tolerances", taus},
          {"layers", std::move(layers)}};
}

nlohmann::json run_gates(const GatesSettings& s) {
  if (s.data_path.empty() == s.text_path.empty()) throw Error("inspect gates: give one of --data and --text");
  if (s.max_tokens < 0) throw Error(fmt::format("--tokens {}: must be >= 1", s.max_tokens));
  // The documents, checked before the model loads: token rows or one tokenized text.
  std::unique_ptr<TokenRows> rows;
  std::vector<int64_t> text_ids;
  nlohmann::json source;
  int64_t num_docs = 1, doc_len = 0;
  ModelFiles files;  // the model resolved once: for the text's tokenizer (--text), then for its load
  if (!s.data_path.empty()) {
    rows = open_token_rows(s.data_path);
    if (rows->num_rows() < 1 || rows->row_length() < 1)
      throw Error(fmt::format("--data {}: {} rows of {} tokens: needs at least one row of at least one token", s.data_path,
                              rows->num_rows(), rows->row_length()));
    doc_len = rows->row_length();
    const int64_t tokens = s.max_tokens > 0 ? s.max_tokens : kDefaultDataTokens;
    num_docs = std::min(rows->num_rows(), std::max<int64_t>(1, tokens / doc_len));
    source = {{"data", rows->describe()}, {"data_digest", rows->content_digest(num_docs)}, {"documents", num_docs},
              {"bos_id", s.bos_id}};
  } else {
    const std::string text = read_text_file(s.text_path);
    files = task_model_files(s.model, s.model_dir);
    const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
    text_ids = tok.encode(text, /*add_bos=*/true);
    if (s.max_tokens > 0 && static_cast<int64_t>(text_ids.size()) > s.max_tokens) text_ids.resize(s.max_tokens);
    doc_len = static_cast<int64_t>(text_ids.size());
    source = {{"text", digest_paths({s.text_path})}, {"tokens", doc_len}};
  }
  if (files.dir.empty()) files = task_model_files(s.model, s.model_dir);
  const std::shared_ptr<const LoadedModel> loaded = task_model(s.model, files, s.run);
  CausalLM* model = loaded->get();
  const ModelInfo& info = model->info();
  const DecayInfo decay = model->decay_info();
  nlohmann::json identity = {{"source", source},
                             {"dtype", s.run.dtype},
                             {"device_type", at::Device(s.run.device).is_cuda() ? "cuda" : "cpu"},
                             {"decay", decay_json(decay)}};
  if (const int64_t w = window_size(info)) identity["decay"]["window_size"] = w;  // its hard window instead of a decay
  identity.update(model_identity(*loaded));
  if (!text_ids.empty()) check_ids(text_ids, info.vocab_size, s.text_path);
  if (s.bos_id < 0 || s.bos_id >= info.vocab_size)
    throw Error(fmt::format("--bos-id {} is outside the vocabulary of {} (size {})", s.bos_id, s.model_dir, info.vocab_size));

  // A model with nothing that decays has no documents to read: the runner writes a result (or
  // shard part) that says so, with the same lock, resume and shard handling as every run.
  std::vector<WorkItem> items;
  if (decay.kind != "none")
    for (int64_t d = 0; d < num_docs; ++d) items.push_back({fmt::format("doc_{}", d), static_cast<double>(doc_len)});
  const RunnerSettings rs = task_runner_settings(s, s.out_path, model);
  RecordRunner runner(rs, "inspect-gates", identity, items);
  const auto start = std::chrono::steady_clock::now();
  int64_t docs_this_run = 0, tokens_this_run = 0;
  for (size_t i : runner.todo()) {
    std::vector<int64_t> ids = text_ids;
    if (rows) {  // the loss protocol's input: [bos] + row[:-1]
      std::vector<int64_t> row = rows->read(static_cast<int64_t>(i), 1, 0, doc_len);
      check_ids(row, info.vocab_size, fmt::format("{} row {}", s.data_path, i));
      ids.assign(1, s.bos_id);
      ids.insert(ids.end(), row.begin(), row.end() - 1);
    }
    Capture capture(decay.layers, {-1, -1}, -1);
    {
      StageTimer timer("forward");
      forward_captured(*model, ids, capture);
    }
    nlohmann::json layers = nlohmann::json::array();
    {
      StageTimer timer("gate statistics");
      std::vector<at::Tensor> decays;
      for (int64_t l = 0; l < decay.layers; ++l) decays.push_back(capture.layer(l).select(0, 0));
      for (nlohmann::json& layer : layer_records(decays)) layers.push_back(std::move(layer));
    }
    const auto T = static_cast<int64_t>(ids.size());
    runner.finish(items[i].id, {{"tokens", T}, {"layers", std::move(layers)}}, static_cast<double>(T));
    ++docs_this_run;
    tokens_this_run += T;
    if (runner.should_stop()) runner.interrupt();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::json this_run = {{"documents", docs_this_run},
                             {"tokens", tokens_this_run},
                             {"elapsed_s", elapsed},
                             {"tokens_per_s", elapsed > 0 ? static_cast<double>(tokens_this_run) / elapsed : 0.0},
                             {"seconds_per_document", docs_this_run > 0 ? elapsed / static_cast<double>(docs_this_run) : 0.0}};
  if (const auto peak = peak_gpu_memory_bytes(s.run.device)) this_run["peak_gpu_memory_bytes"] = *peak;
  return runner.complete([&](const nlohmann::json& id, const std::vector<nlohmann::json>& records) {
    nlohmann::json out = build_gates_result(id, records);
    out["this_run"] = this_run;  // this invocation's timing: not part of what `foxeval merge` rebuilds
    return out;
  });
}

AttentionMaps attention_maps(CausalLM& model, const std::vector<int64_t>& ids, int64_t layer, int64_t head,
                             int64_t begin, int64_t end) {
  const DecayInfo d = model.decay_info();
  const std::string family = model.info().family;
  if (!d.has_attention)
    throw Error(fmt::format("inspect attention: {} has no attention matrix (a recurrent state); `inspect gates` shows its "
                            "decays", family));
  if (layer < 0 || layer >= d.layers) throw Error(fmt::format("--layer {}: {} has layers 0..{}", layer, family, d.layers - 1));
  if (head < 0 || head >= d.heads) throw Error(fmt::format("--head {}: {} has heads 0..{}", head, family, d.heads - 1));
  const auto T = static_cast<int64_t>(ids.size());
  if (begin < 0 || end > T || end - begin < 1)
    throw Error(fmt::format("--span {}:{}: the text has {} tokens (with BOS); give 0 <= a < b <= {}", begin, end, T, T));
  check_ids(ids, model.info().vocab_size, "--text");
  Capture capture(d.layers, {layer, head}, layer);
  forward_captured(model, ids, capture);
  const at::Tensor q = capture.q(), k = capture.k();
  if (!q.defined() || !k.defined()) throw Error(fmt::format("inspect: internal: {} reported no q/k", family));
  AttentionMaps m;
  m.layer = layer;
  m.head = head;
  m.begin = begin;
  m.end = end;
  m.ids.assign(ids.begin() + begin, ids.begin() + end);
  m.has_decay = d.kind != "none";
  m.window = window_size(model.info());
  const auto cpu_double = [](const at::Tensor& t) { return t.to(at::kCPU).to(at::kDouble).contiguous(); };
  const at::Tensor qd = cpu_double(q.select(0, 0)), kd = cpu_double(k.select(0, 0));  // [T, D]
  at::Tensor c = m.has_decay ? cpu_double(capture.layer(layer).select(0, 0).select(1, head)).cumsum(0)
                             : at::zeros({T}, at::kDouble);
  const int64_t n = end - begin;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.head_dim));
  at::Tensor cq = c.slice(0, begin, end).view({n, 1});
  at::Tensor logits = at::matmul(qd.slice(0, begin, end), kd.slice(0, 0, end).t()) * scale + cq - c.slice(0, 0, end).view({1, end});
  at::Tensor rows = at::arange(begin, end, at::kLong).view({n, 1}), cols = at::arange(0, end, at::kLong).view({1, end});
  // A sliding window W: key j counts at query i only when i - W < j (a hard window, shown as the decay).
  at::Tensor outside = m.window > 0 ? cols <= rows - m.window : at::zeros_like(cols > rows);
  logits = logits.masked_fill(cols > rows, -std::numeric_limits<double>::infinity());
  logits = logits.masked_fill(outside, -std::numeric_limits<double>::infinity());
  at::Tensor probs = at::softmax(logits, -1).slice(1, begin, end).contiguous();
  at::Tensor decay = (cq - c.slice(0, begin, end).view({1, n})).exp();
  decay = decay.masked_fill(outside.slice(1, begin, end), 0.0);
  at::Tensor upper = cols.slice(1, begin, end) > rows;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  probs = probs.masked_fill(upper, nan).contiguous();
  decay = decay.masked_fill(upper, nan).contiguous();
  m.attention.assign(probs.data_ptr<double>(), probs.data_ptr<double>() + n * n);
  m.decay.assign(decay.data_ptr<double>(), decay.data_ptr<double>() + n * n);
  return m;
}

nlohmann::json attention_maps_json(const AttentionMaps& m) {
  const int64_t n = m.end - m.begin;
  auto rows = [n](const std::vector<double>& v) {
    nlohmann::json out = nlohmann::json::array();
    for (int64_t i = 0; i < n; ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (int64_t j = 0; j <= i; ++j) row.push_back(v[i * n + j]);  // the lower triangle only
      out.push_back(std::move(row));
    }
    return out;
  };
  return {{"layer", m.layer}, {"head", m.head},           {"begin", m.begin},          {"end", m.end},
          {"ids", m.ids},     {"has_decay", m.has_decay}, {"decay", rows(m.decay)}, {"attention", rows(m.attention)}};
}

}  // namespace foxeval::inspect
