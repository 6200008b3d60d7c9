// `foxeval bench prefill`: the per-token loss forward `foxeval loss` runs (one document of T
// tokens, batch 1), timed end to end, then once more with the stage timer on (models/stage_timer.h)
// for a table of where the time goes: each linear layer by shape with its TFLOP/s, the attention
// kernel with its TFLOP/s, the FoX block's glue kernels, the LM head's loss. The stage pass
// synchronizes around every stage, so its total is a little above the end-to-end time; the
// end-to-end seconds are the ones to compare.
//
// "Non-attention TFLOP/s equivalent" = the matmul FLOPs (2 * in * out per token for every linear
// layer, the LM head included) / (stage-pass total - attention seconds): how close everything
// around attention runs to GEMM speed.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "data/errors.h"
#include "models/engine.h"
#include "models/registry.h"
#include "models/stage_timer.h"
#include "tasks/run/result_file.h"

namespace foxeval {
namespace {

// The official code end to end on the same GPU kind (../shared/docs/GPU.md: H100, bf16 autocast,
// random 760M weights, batch 1), seconds per document; not re-run here (it needs the archived
// official sources and their shims).
const std::map<std::string, std::map<int64_t, double>> kOfficialGpuMd = {
    {"FoX (Pro)", {{16384, 0.166}, {65536, 1.596}}}, {"Transformer (Pro)", {{16384, 0.138}, {65536, 1.151}}}};

int64_t int_setting(const ModelInfo& info, const std::string& key) {
  for (const auto& [k, v] : info.settings)
    if (k == key) return std::stoll(v);
  return 0;
}

// The stage table of one forward (stage timer on), with FLOPs where the stage is a matmul or
// the attention. `T` tokens, the attention shape from the model's settings.
nlohmann::json stage_table(CausalLM& model, const at::Tensor& input, const at::Tensor& labels, bool cuda) {
  // The LM head's matmul (its rows padded to a multiple of 64 on a GPU: models/engine.cpp).
  const int64_t vocab = model.lm_head().size(0), padded_vocab = (vocab + 63) / 64 * 64;
  const ModelInfo& info = model.info();
  const int64_t T = labels.size(1), H = int_setting(info, "num_heads"), D = int_setting(info, "head_dim");
  // Query-key pairs attention computes: causal half the square, or with a sliding window W each
  // query's min(W, position + 1) keys (Transformer (SWA)).
  const int64_t W = int_setting(info, "window_size");
  const double pairs = W > 0 && W < T ? double(T) * W - double(W) * (W - 1) / 2 : double(T) * T / 2;
  reset_stage_timing();
  set_stage_timing(true);
  (void)token_logprobs(model, input, labels);
  sync_device(cuda);
  set_stage_timing(false);
  double forward = 0, inner = 0, total = 0, attention = 0, matmul_flops = 0;
  nlohmann::json rows = nlohmann::json::array();
  for (const StageTotal& s : stage_timing_totals()) {
    nlohmann::json r = {{"stage", s.stage}, {"seconds", s.seconds}, {"calls", s.calls}};
    long long in = 0, out = 0;
    const bool is_linear = std::sscanf(s.stage.c_str(), "linear %lld->%lld", &in, &out) == 2;
    const bool lm_head = is_linear && (out == vocab || out == padded_vocab);
    if (is_linear) {
      // Every layer's matmul sees all T tokens per call; the LM head sees them over its chunks.
      const double flops = 2.0 * in * out * T * (lm_head ? 1 : s.calls);
      matmul_flops += flops;
      r["tflops"] = flops / s.seconds / 1e12;
    }
    if (s.stage == "attention" && H > 0 && D > 0) {
      const double flops = 4.0 * H * pairs * D * s.calls;
      r["tflops"] = flops / s.seconds / 1e12;
      attention = s.seconds;
    }
    if (s.stage == "forward") {
      forward = s.seconds;
      total += s.seconds;
    } else if (lm_head || s.stage == "loss") {
      total += s.seconds;  // the LM head and its loss run after the forward
    } else {
      inner += s.seconds;
    }
    rows.push_back(r);
  }
  rows.push_back({{"stage", "(forward, not in a stage)"}, {"seconds", forward - inner}});
  for (auto& r : rows) r["share"] = r["seconds"].get<double>() / total;
  std::sort(rows.begin(), rows.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["seconds"].get<double>() > b["seconds"].get<double>();
  });
  return {{"stages", rows},
          {"stage_pass_seconds", total},
          {"attention_seconds", attention},
          {"non_attention_seconds", total - attention},
          {"matmul_tflop", matmul_flops / 1e12},
          {"non_attention_tflops_equivalent", matmul_flops / (total - attention) / 1e12}};
}

}  // namespace

void run_bench_prefill(const BenchPrefillArgs& a) {
  const auto models = parse_named_dirs(a.models, "--models");
  const std::vector<int64_t> lens = parse_seq_lens(a.seq_lens, "--seq-lens");
  const at::Device device(a.run.device);
  const bool cuda = device.is_cuda();
  const auto t_start = std::chrono::steady_clock::now();
  c10::InferenceMode inference;

  nlohmann::json rows = nlohmann::json::array();
  std::printf("%-16s %7s %9s %9s %8s | %9s %7s %9s %9s | %8s\n", "model", "T", "s/doc", "tok/s", "peak_GiB",
              "attn_s", "attn_TF", "other_s", "other_TF", "official");
  for (const auto& [name, dir] : models) {
    auto model = load_model(dir, a.run);
    const ModelInfo& info = model->info();
    for (int64_t T : lens) {
      // The same ids as the other model benches make (splitmix64), whatever torch's generator does.
      at::Tensor ids = at::tensor(splitmix64_ids(a.seed, T + 1, info.vocab_size), at::kLong).view({1, T + 1});
      at::Tensor input = ids.slice(1, 0, T).to(device), labels = ids.slice(1, 1, T + 1).to(device);
      at::Tensor logp, first;
      bool identical = true;  // every repeat gives the first one's bits (determinism on the device)
      const TimedRepeats timed = time_repeats([&] { logp = token_logprobs(*model, input, labels); }, a.warmup, a.repeats,
                                              device, [&](int64_t r) {
                                                if (r == 0)
                                                  first = logp;
                                                else
                                                  identical = identical && at::equal(logp, first);
                                              });
      if (!at::isfinite(logp).all().item<bool>()) throw Error(fmt::format("{}: non-finite log-probabilities", name));
      const std::vector<double>& seconds = timed.seconds;
      const double median = upper_median(seconds);
      nlohmann::json row = {{"model", name},
                            {"model_dir", dir},
                            {"family", info.family},
                            {"num_parameters", info.num_parameters},
                            {"seq_len", T},
                            {"seconds_per_document", median},
                            {"all_seconds", seconds},
                            {"tokens_per_s", T / median},
                            {"mean_loss", -logp.to(at::kDouble).mean().item<double>()},
                            {"repeats_bit_identical", identical},
                            {"timed_window_unix_s", {timed.window_start_unix_s, timed.window_end_unix_s}}};
      if (cuda) row["peak_gpu_memory_bytes"] = timed.peak_bytes;
      row["stage_table"] = stage_table(*model, input, labels, cuda);
      std::string official = "-";
      auto fam = kOfficialGpuMd.find(info.family);
      if (fam != kOfficialGpuMd.end() && fam->second.count(T)) {
        row["official_gpu_md_seconds_per_document"] = fam->second.at(T);
        official = fmt::format("{:.3f}", fam->second.at(T));
      }
      const nlohmann::json& st = row["stage_table"];
      double attn_tf = 0;
      for (const auto& r : st["stages"])
        if (r["stage"] == "attention" && r.contains("tflops")) attn_tf = r["tflops"].get<double>();
      const std::string peak = gib(row, "peak_gpu_memory_bytes");
      std::printf("%-16s %7lld %9.4f %9.0f %8s | %9.4f %7.0f %9.4f %9.0f | %8s\n", name.c_str(), (long long)T, median,
                  T / median, peak.c_str(), st["attention_seconds"].get<double>(), attn_tf,
                  st["non_attention_seconds"].get<double>(), st["non_attention_tflops_equivalent"].get<double>(),
                  official.c_str());
      for (const auto& r : st["stages"]) {
        std::string tf = r.contains("tflops") ? fmt::format("{:7.0f} TF/s", r["tflops"].get<double>()) : "";
        std::printf("    %-28s %9.4f s %5.1f%%  %6lld calls %s\n", r["stage"].get<std::string>().c_str(),
                    r["seconds"].get<double>(), 100 * r["share"].get<double>(), (long long)r.value("calls", 0LL),
                    tf.c_str());
      }
      if (!identical) std::printf("    NOT DETERMINISTIC: the repeats' log-probabilities differ\n");
      std::fflush(stdout);
      rows.push_back(row);
      if (cuda) c10::cuda::CUDACachingAllocator::emptyCache();
    }
  }
  const double elapsed = seconds_since(t_start);
  nlohmann::json identity = {{"models", a.models}, {"device_type", cuda ? "cuda" : "cpu"}, {"dtype", a.run.dtype},
                             {"seq_lens", lens},   {"seed", a.seed},                     {"repeats", a.repeats},
                             {"warmup", a.warmup}};
  nlohmann::json doc = bench_document("prefill", identity, elapsed, {/*kind=*/true, /*machine=*/false});
  const std::string gpu = doc["gpu"];
  doc.update(nlohmann::json{
      {"what", "the per-token loss forward of `foxeval loss` (token_logprobs), one document of T random ids, batch 1"},
      {"time", "seconds_per_document: median of --repeats after --warmup, device synchronized around each forward; "
               "stage_table: one more forward with every stage synchronized (its total runs a little longer)"},
      {"official_gpu_md", "official code end to end on an H100 (../shared/docs/GPU.md), not re-run here"},
      {"rows", rows}});
  write_bench_json(doc, a.out, "prefill", gpu);
}

}  // namespace foxeval
