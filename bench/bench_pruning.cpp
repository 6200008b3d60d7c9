// `foxeval bench pruning`: FoX's adaptive computation pruning (kernels/NOTES.md) at forget-gate
// levels from fast decay to f near 1, as trained FoX heads range.
//
// Per level b (--levels): the checkpoint loaded with every forget-gate bias shifted by b
// (RunOptions::fgate_bias_shift), f = sigmoid(w_f . x + b_f + b). Per-token loss of --documents
// random documents of --seq-len tokens (splitmix64(seed + d) % vocab; input [BOS] + row[:T-1]),
// unpruned (--log-pruning-tolerance none) and at each --tolerances value: seconds per document (one
// synchronized forward each; the first model also runs one untimed warm-up), the mean and max
// |per-token loss - unpruned's| over all tokens, and the key blocks the kernels skipped
// (CausalLM::pruning_stats). Beside them the kernel-level error against its stated bound: for
// every layer, that layer's forget gates of document 0 at this level, random q and k with
// per-row norm sqrt(D) (as qk-normed vectors with unit weights) and random v, the official
// "auto" threshold thr = -(2R + ln T) + tol with R = scale * max|q| * max|k| per head, and
//   measured = max over rows ||o_pruned - o||_2   (o: the same kernel unpruned),
//   bound    = 2 * exp(tol) * max_j ||v_j||_2      (kernels/forgetting_attention.cu),
// within when measured <= bound + one bf16 rounding of the outputs (2^-8 * max row ||o||).
// Needs CUDA: the pruning is in the CUDA kernels (the exact CPU path never skips).
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "data/flag_values.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "kernels/forgetting_attention.h"
#include "models/engine.h"
#include "models/registry.h"
#include "tasks/run/identity.h"
#include "tasks/run/result_file.h"

namespace foxeval {
namespace {

namespace fs = std::filesystem;

// "a,b,c" of finite numbers; errors name the flag.
std::vector<double> parse_number_list(const std::string& s, const char* flag) {
  std::vector<double> out;
  for (const std::string& item : split_commas(s)) {
    double v = 0;
    if (!detail::parse_double(item, v) || !std::isfinite(v))
      throw Error(fmt::format("{}: '{}' is not a number (a comma-separated list, e.g. -10,-5)", flag, detail::shown(item)));
    out.push_back(v);
  }
  return out;
}

struct Doc {
  at::Tensor input, labels;  // [1, T] on the device
};

// Every layer's log forget gate of one forward ([1, T, H] fp32 on the device).
struct GateCapture : ForwardCapture {
  std::vector<at::Tensor> layers;
  void log_decay(int64_t layer, const at::Tensor& lf) override {
    if (static_cast<size_t>(layer) >= layers.size()) layers.resize(layer + 1);
    at::Tensor& l = layers[layer];  // a family that runs a long input in segments reports each in order
    l = l.defined() ? at::cat({l, lf}, 1) : lf.clone();
  }
};

double scalar_of(const at::Tensor& t) { return t.to(at::kDouble).item<double>(); }

// Per-token loss of each document, each forward timed alone (synchronized).
struct Pass {
  std::vector<at::Tensor> loss;  // [1, T] fp32 on the device
  double seconds_per_doc = 0;
};

// The gates are captured in a forward of their own (untimed, document 0): with a capture the model
// computes log f itself instead of in its fused cumulative-gate kernel, a different rounding, so
// a captured forward's loss would differ from the pruned runs' by more than the pruning does.
Pass run_docs(CausalLM& model, const std::vector<Doc>& docs, GateCapture* capture) {
  if (capture) {
    model.set_capture(capture);
    (void)token_logprobs(model, docs.at(0).input, docs.at(0).labels);
    model.set_capture(nullptr);
  }
  Pass p;
  double total = 0;
  for (size_t d = 0; d < docs.size(); ++d) {
    c10::cuda::device_synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    at::Tensor loss = token_logprobs(model, docs[d].input, docs[d].labels).neg();
    c10::cuda::device_synchronize();
    total += seconds_since(t0);
    if (!at::isfinite(loss).all().item<bool>()) throw Error(fmt::format("document {}: non-finite per-token loss", d));
    p.loss.push_back(loss);
  }
  p.seconds_per_doc = total / static_cast<double>(docs.size());
  return p;
}

RunOptions options_for(const BenchPruningArgs& a, double shift, const std::string& tolerance) {
  RunOptions r = a.run;
  r.fgate_bias_shift = shift;
  r.log_pruning_tolerance = tolerance;
  r.announce = false;
  return r;
}

std::string tolerance_text(double tol) { return fmt::format("{}", tol); }

// The kernel-level check of one level: every layer's gates, random q/k/v at the model's shape.
struct KernelRow {
  double max_row_diff = 0, bound = 0, allowance = 0, skipped_fraction = 0;
  int64_t worst_layer = -1, blocks = 0, skipped = 0;
  bool within = true;
};

std::vector<KernelRow> kernel_check(const std::vector<at::Tensor>& gates, int64_t heads, int64_t head_dim,
                                    const std::vector<double>& tolerances, uint64_t seed) {
  const at::Tensor& g0 = gates.at(0);
  const int64_t T = g0.size(1);
  const auto opts = g0.options().dtype(at::kBFloat16);
  at::manual_seed(seed);
  // Rows of norm sqrt(D): what a per-head RMSNorm with unit weights gives (FoX Pro's qk-norm).
  auto unit_rows = [&] {
    at::Tensor x = at::randn({1, heads, T, head_dim}, opts.dtype(at::kFloat));
    return (x * (std::sqrt(static_cast<double>(head_dim)) / at::linalg_vector_norm(x, 2, {-1}, true))).to(at::kBFloat16);
  };
  const at::Tensor q = unit_rows(), k = unit_rows();
  const at::Tensor v = at::randn({1, heads, T, head_dim}, opts);
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
  const at::Tensor R = (at::linalg_vector_norm(q.to(at::kFloat), 2, {-1}).amax(-1) *
                        at::linalg_vector_norm(k.to(at::kFloat), 2, {-1}).amax(-1) * scale);  // [1, H]
  const double vmax = scalar_of(at::linalg_vector_norm(v.to(at::kFloat), 2, {-1}).max());
  std::vector<KernelRow> rows(tolerances.size());
  for (size_t t = 0; t < tolerances.size(); ++t) rows[t].bound = 2 * std::exp(tolerances[t]) * vmax;
  for (size_t layer = 0; layer < gates.size(); ++layer) {
    if (!gates[layer].defined()) continue;
    AttentionArgs args;
    args.q = q;
    args.k = k;
    args.v = v;
    args.cum_log_fgate = at::cumsum(gates[layer].transpose(1, 2).contiguous(), -1).contiguous();  // [1, H, T]
    args.scale = scale;
    const at::Tensor o = forgetting_attention(args).to(at::kFloat);
    const double allowance = std::ldexp(scalar_of(at::linalg_vector_norm(o, 2, {-1}).max()), -8);
    for (size_t t = 0; t < tolerances.size(); ++t) {
      AttentionArgs pruned = args;
      pruned.adaptive_threshold = (-(2.0 * R + std::log(static_cast<double>(T))) + tolerances[t]).to(at::kFloat).contiguous();
      pruned.pruning_counts = at::zeros({4}, g0.options().dtype(at::kLong));
      const at::Tensor op = forgetting_attention(pruned).to(at::kFloat);
      const double diff = scalar_of(at::linalg_vector_norm(op - o, 2, {-1}).max());
      const at::Tensor n = pruned.pruning_counts.to(at::kCPU);
      KernelRow& r = rows[t];
      r.skipped += n.data_ptr<int64_t>()[0];
      r.blocks += n.data_ptr<int64_t>()[1];
      if (diff > r.bound + allowance) r.within = false;
      if (r.worst_layer < 0 || diff > r.max_row_diff) {
        r.max_row_diff = diff;
        r.worst_layer = static_cast<int64_t>(layer);
        r.allowance = allowance;
      }
    }
  }
  for (KernelRow& r : rows) r.skipped_fraction = r.blocks > 0 ? static_cast<double>(r.skipped) / r.blocks : 0.0;
  return rows;
}

std::string model_slug(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return slug(p.filename().string());
}

}  // namespace

void run_bench_pruning(const BenchPruningArgs& a) {
  const std::vector<double> levels = parse_number_list(a.levels, "--levels");
  for (double b : levels)
    if (std::fabs(b) > 30) throw Error(fmt::format("--levels: {} is outside [-30, 30] (a shift of forget-gate logits)", b));
  const std::vector<double> tolerances = parse_number_list(a.tolerances, "--tolerances");
  for (double t : tolerances)
    if (t >= 0 || t < -80)
      throw Error(fmt::format("--tolerances: {} must be in [-80, 0): the natural log of the tolerated softmax mass", t));
  const fs::path config_path = fs::path(a.model) / "config.json";
  if (!fs::is_regular_file(config_path)) throw Error(fmt::format("--model {}: no config.json there", a.model));
  const nlohmann::json config = read_json(config_path.string());
  if (!config.contains("bos_token_id") || !config["bos_token_id"].is_number_integer())
    throw Error(fmt::format("{}: no integer bos_token_id (the first input token)", config_path.string()));
  const int64_t bos = config["bos_token_id"].get<int64_t>();
  const at::Device device(a.run.device);
  if (!device.is_cuda() || !at::hasCUDA())
    throw Error(fmt::format("bench pruning needs a CUDA GPU (--device {}): adaptive pruning lives in the CUDA attention "
                            "kernels; the exact CPU path never skips",
                            a.run.device));
  if (a.run.dtype != "bfloat16")
    throw Error(fmt::format("bench pruning: --dtype {}: the CUDA attention kernels run in bfloat16", a.run.dtype));

  const auto t_start = std::chrono::steady_clock::now();
  c10::InferenceMode inference;
  std::vector<Doc> docs;
  int64_t vocab = 0, heads = 0, head_dim = 0, layers = 0;
  nlohmann::json model_id, model_json;
  nlohmann::json rows = nlohmann::json::array();
  std::printf("%6s %7s %9s | %6s %9s %7s %8s %10s %10s | %10s %10s %s\n", "shift", "mean_f", "s/doc", "tol", "s/doc", "speedup",
              "skipped", "mean|dL|", "max|dL|", "kern_diff", "bound", "");
  for (size_t li = 0; li < levels.size(); ++li) {
    const double shift = levels[li];
    nlohmann::json row = {{"fgate_bias_shift", shift}};
    GateCapture capture;
    Pass base;
    {
      auto model = load_model(a.model, options_for(a, shift, "none"));
      if (li == 0) {
        if (model->decay_info().kind != "forget_gate")
          throw Error(fmt::format("--model {}: {} has no forget gate to prune by", a.model, model->info().family));
        const ModelInfo& info = model->info();
        vocab = info.vocab_size;
        layers = info.num_layers;
        heads = model->decay_info().heads;
        head_dim = model->decay_info().head_dim;
        model_id = model_identity(model);
        model_json = {{"family", info.family}, {"num_parameters", info.num_parameters}, {"layers", layers},
                      {"heads", heads},        {"head_dim", head_dim}};
        for (int64_t d = 0; d < a.documents; ++d) {
          at::Tensor labels = at::tensor(splitmix64_ids(a.seed + static_cast<uint64_t>(d), a.seq_len, vocab), at::kLong)
                                  .view({1, a.seq_len});
          at::Tensor input = at::cat({at::full({1, 1}, bos, at::kLong), labels.slice(1, 0, a.seq_len - 1)}, 1);
          docs.push_back({input.to(device), labels.to(device)});
        }
        (void)token_logprobs(*model, docs[0].input, docs[0].labels);  // warm-up: kernels, handles, allocator
        c10::cuda::device_synchronize();
      }
      base = run_docs(*model, docs, &capture);
    }
    at::Tensor all_lf = at::stack(capture.layers, 0);  // [L, 1, T, H]
    row["mean_log_f"] = scalar_of(all_lf.mean());
    row["mean_f"] = scalar_of(all_lf.exp().mean());
    double base_loss = 0;
    for (const at::Tensor& l : base.loss) base_loss += scalar_of(l.to(at::kDouble).mean());
    row["unpruned"] = {{"seconds_per_doc", base.seconds_per_doc}, {"mean_loss", base_loss / docs.size()}};
    const std::vector<KernelRow> kcheck = kernel_check(capture.layers, heads, head_dim, tolerances, a.seed + 1000003);
    nlohmann::json pruned_rows = nlohmann::json::array();
    for (size_t ti = 0; ti < tolerances.size(); ++ti) {
      const double tol = tolerances[ti];
      Pass p;
      PruningStats stats;
      {
        auto model = load_model(a.model, options_for(a, shift, tolerance_text(tol)));
        p = run_docs(*model, docs, nullptr);
        stats = model->pruning_stats();
      }
      double mean_diff = 0, max_diff = 0;
      int64_t n = 0;
      for (size_t d = 0; d < docs.size(); ++d) {
        const at::Tensor diff = (p.loss[d] - base.loss[d]).abs().to(at::kDouble);
        mean_diff += scalar_of(diff.sum());
        max_diff = std::max(max_diff, scalar_of(diff.max()));
        n += diff.numel();
      }
      mean_diff /= static_cast<double>(n);
      const double fraction =
          stats.key_blocks > 0 ? static_cast<double>(stats.key_blocks_skipped) / static_cast<double>(stats.key_blocks) : 0.0;
      const KernelRow& k = kcheck[ti];
      nlohmann::json pr = {{"log_tolerance", tol},
                           {"seconds_per_doc", p.seconds_per_doc},
                           {"speedup_over_unpruned", base.seconds_per_doc / p.seconds_per_doc},
                           {"loss_abs_diff_mean", mean_diff},
                           {"loss_abs_diff_max", max_diff},
                           {"key_blocks", stats.key_blocks},
                           {"key_blocks_skipped", stats.key_blocks_skipped},
                           {"skipped_fraction", fraction},
                           {"kernel_check",
                            {{"max_row_diff", k.max_row_diff},
                             {"worst_layer", k.worst_layer},
                             {"bound", k.bound},
                             {"bf16_rounding_allowance", k.allowance},
                             {"within_bound", k.within},
                             {"key_blocks", k.blocks},
                             {"key_blocks_skipped", k.skipped},
                             {"skipped_fraction", k.skipped_fraction}}}};
      pruned_rows.push_back(pr);
      std::printf("%6s %7s %9s | %6g %9.3f %6.2fx %7.1f%% %10.2e %10.2e | %10.2e %10.2e %s\n",
                  ti == 0 ? fmt::format("{:+g}", shift).c_str() : "",
                  ti == 0 ? fmt::format("{:.4f}", row["mean_f"].get<double>()).c_str() : "",
                  ti == 0 ? fmt::format("{:.3f}", base.seconds_per_doc).c_str() : "", tol, p.seconds_per_doc,
                  base.seconds_per_doc / p.seconds_per_doc, 100 * fraction, mean_diff, max_diff, k.max_row_diff, k.bound,
                  k.within ? "within" : "OVER BOUND");
      std::fflush(stdout);
    }
    row["pruned"] = pruned_rows;
    rows.push_back(row);
    c10::cuda::CUDACachingAllocator::emptyCache();
  }

  const double elapsed = seconds_since(t_start);
  nlohmann::json identity = model_id;
  identity.update({{"device_type", "cuda"},
                   {"dtype", a.run.dtype},
                   {"seq_len", a.seq_len},
                   {"documents", a.documents},
                   {"seed", a.seed},
                   {"levels", levels},
                   {"tolerances", tolerances}});
  nlohmann::json doc = bench_document("pruning", identity, elapsed);
  const std::string gpu = doc["gpu"];
  doc.update(nlohmann::json{
      {"model", model_json},
      {"seq_len", a.seq_len},
      {"documents", a.documents},
      {"ids", "document d: splitmix64(seed + d) % vocab_size; input [BOS] + row[:T-1], labels row"},
      {"levels_note", "fgate_bias_shift: added to every forget-gate bias at load, f = sigmoid(w_f . x + b_f + shift); "
                      "mean_f / mean_log_f over every layer, head and token of document 0"},
      {"time", "seconds per document: one synchronized forward per document, mean over documents (one untimed warm-up "
               "forward before the first level)"},
      {"loss_diff", "|per-token loss - the unpruned run's| at the same level, over every token of every document"},
      {"key_blocks_note", "prefill key blocks the CUDA kernel's query blocks visit (from seq_start's block to the causal end) "
                          "and how many pruning skipped, summed over layers, heads and documents"},
      {"kernel_check_note",
       "per layer: that layer's gates of document 0 at this level, random q and k with row norm sqrt(D), random v; "
       "threshold -(2R + ln T) + tol with R = scale*max|q|*max|k| per head; max_row_diff = max over rows and layers of "
       "||o_pruned - o||_2 against the unpruned kernel; bound = 2*exp(tol)*max||v||_2 (kernels/forgetting_attention.cu); "
       "within_bound: every layer's diff <= bound + one bf16 rounding of the outputs (2^-8 * max row ||o||)"},
      {"rows", rows}});
  write_bench_json(doc, a.out, "pruning-" + model_slug(a.model), gpu);
}

}  // namespace foxeval
