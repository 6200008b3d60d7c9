// `foxeval bench recurrent`: per-token loss forward of the recurrent families (Mamba-2, HGRN2,
// DeltaNet) at long lengths, with the fused kernels and with the exact ATen forms
// (FOXEVAL_RECURRENT_IMPL=aten, read by models/layers/recurrent_ops.h scan_impl at every call), beside
// the official code on its kernels (scripts/bench_recurrent_anchor.py's JSON, --anchor).
//
// Per family and length T: one row of T ids from splitmix64(--seed) % vocab (the anchor makes the
// same), input [BOS] + row[:T-1], labels row, the forward `foxeval loss` runs (token_logprobs);
// --warmup untimed forwards, then the median of --repeats, synchronized; peak = the CUDA caching
// allocator's peak allocated bytes over the timed forwards. Ratio = anchor seconds / foxeval
// seconds (> 1: foxeval faster).
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "data/flag_values.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "data/switches.h"
#include "models/engine.h"
#include "models/registry.h"
#include "tasks/run/runner.h"

namespace foxeval {
namespace {

// Families as --models names them, with the model_type of their checkpoints.
const std::map<std::string, std::string> kFamilies = {
    {"mamba2", "mamba2-project_fox"}, {"hgrn2", "hgrn2-project_fox"}, {"delta_net", "delta_net-project_fox"}};

std::vector<std::string> parse_impls(const std::string& s) {
  std::vector<std::string> out = split_commas(s);
  for (const std::string& impl : out)
    if (impl != "kernel" && impl != "aten") throw Error(fmt::format("--impls: '{}': expected kernel and/or aten", impl));
  return out;
}

// scripts/bench_recurrent_anchor.py's timing JSON.
nlohmann::json read_recurrent_anchor(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw Error(fmt::format("--anchor {}: no such file", path));
  nlohmann::json doc = read_json(path);
  if (!doc.is_object() || doc.value("kind", "") != "recurrent-anchor" || !doc.contains("rows") || !doc["rows"].is_array())
    throw Error(fmt::format("--anchor {}: not a scripts/bench_recurrent_anchor.py result (kind \"recurrent-anchor\" with rows)", path));
  if (doc.value("method", "") != "timing")
    throw Error(fmt::format("--anchor {}: method \"{}\", not \"timing\" (a --check run has no timings)", path,
                            doc.value("method", "")));
  for (size_t i = 0; i < doc["rows"].size(); ++i) {
    const nlohmann::json& r = doc["rows"][i];
    if (!r.is_object() || !r.contains("family") || !r["family"].is_string() || !r.contains("seq_len") ||
        !r["seq_len"].is_number_integer())
      throw Error(fmt::format("--anchor {}: rows[{}] has no \"family\" and integer \"seq_len\"", path, i));
    if (!r.contains("error") && !(r.contains("seconds") && r["seconds"].is_number() && r.contains("mean_loss")))
      throw Error(fmt::format("--anchor {}: rows[{}] has neither \"seconds\" + \"mean_loss\" nor \"error\"", path, i));
  }
  return doc;
}

// FOXEVAL_RECURRENT_IMPL for one row, restored when the row is done: the registry's override, since
// the models read the switch there (data/switches.h), not from the environment.
class ImplEnv {
 public:
  explicit ImplEnv(const std::string& impl) : over_("FOXEVAL_RECURRENT_IMPL", impl == "aten" ? "aten" : nullptr) {}

 private:
  SwitchOverride over_;
};

// One (impl, length) row: times and the mean loss of the forward `foxeval loss` runs.
nlohmann::json time_row(CausalLM& model, const at::Tensor& input, const at::Tensor& labels, const BenchRecurrentArgs& a,
                        const at::Device& device) {
  at::Tensor loss;
  const TimedRepeats timed =
      time_repeats([&] { loss = token_logprobs(model, input, labels).neg(); }, a.warmup, a.repeats, device);
  if (!at::isfinite(loss).all().item<bool>()) throw Error("non-finite per-token loss");
  const double seconds = median(timed.seconds);
  const int64_t T = labels.size(1);
  nlohmann::json row = {{"seconds", seconds}, {"all_seconds", timed.seconds}, {"tokens_per_s", static_cast<double>(T) / seconds},
                        {"mean_loss", loss.to(at::kDouble).mean().item<double>()}};
  if (device.is_cuda()) row["peak_gpu_memory_bytes"] = timed.peak_bytes;
  return row;
}

}  // namespace

void run_bench_recurrent(const BenchRecurrentArgs& a) {
  std::vector<std::string> names;
  for (const auto& [name, type] : kFamilies) names.push_back(name);
  const auto models = parse_named_dirs(a.models, "--models", names);
  const std::vector<int64_t> lens = parse_seq_lens(a.seq_lens, "--seq-lens");
  const std::vector<std::string> impls = parse_impls(a.impls);
  std::optional<nlohmann::json> anchor;
  if (!a.anchor.empty()) anchor = read_recurrent_anchor(a.anchor);

  const at::Device device(a.run.device);
  const bool cuda = device.is_cuda();
  if (cuda && !at::hasCUDA()) throw Error("--device cuda: no CUDA device");
  const auto t_start = std::chrono::steady_clock::now();
  c10::InferenceMode inference;

  std::printf("%-9s %7s %-6s %9s %10s %9s %11s | %9s %9s %7s %s\n", "family", "T", "impl", "seconds", "tok/s", "peak_GiB",
              "mean_loss", "anchor_s", "anc_GiB", "ratio", "loss");
  nlohmann::json rows = nlohmann::json::array();
  std::vector<std::string> missing;
  for (const auto& [family, dir] : models) {
    const nlohmann::json config = read_json((std::filesystem::path(dir) / "config.json").string());
    if (config.value("model_type", "") != kFamilies.at(family))
      throw Error(fmt::format("--models {}={}: model_type \"{}\", expected \"{}\"", family, dir, config.value("model_type", ""),
                              kFamilies.at(family)));
    if (!config.contains("bos_token_id") || !config["bos_token_id"].is_number_integer())
      throw Error(fmt::format("{}/config.json: no integer bos_token_id (the first input token)", dir));
    const int64_t bos = config["bos_token_id"].get<int64_t>();
    auto model = load_model(dir, a.run);
    const ModelInfo& info = model->info();
    for (int64_t T : lens) {
      const std::vector<int64_t> ids = splitmix64_ids(a.seed, T, info.vocab_size);
      at::Tensor labels = at::tensor(ids, at::kLong).view({1, T});
      at::Tensor input = at::cat({at::full({1, 1}, bos, at::kLong), labels.slice(1, 0, T - 1)}, 1).to(device);
      labels = labels.to(device);
      const nlohmann::json* anchor_row = nullptr;
      if (anchor) {
        for (const nlohmann::json& r : (*anchor)["rows"])
          if (r["family"] == family && r["seq_len"] == T) anchor_row = &r;
        if (!anchor_row) missing.push_back(fmt::format("{} at {}", family, T));
        if (anchor_row && anchor_row->contains("first_ids")) {
          const std::vector<int64_t> first(ids.begin(), ids.begin() + std::min<int64_t>(8, T));
          if ((*anchor_row)["first_ids"].get<std::vector<int64_t>>() != first)
            throw Error(fmt::format("--anchor {}: the {} row at {} was made from other token ids (first_ids differ: "
                                    "another --seed or vocabulary)", a.anchor, family, T));
        }
      }
      for (const std::string& impl : impls) {
        nlohmann::json row = {{"family", family}, {"model", dir}, {"model_family", info.family},
                              {"num_parameters", info.num_parameters}, {"seq_len", T}, {"impl", impl},
                              {"first_ids", std::vector<int64_t>(ids.begin(), ids.begin() + std::min<int64_t>(8, T))}};
        try {
          const ImplEnv env(impl);
          row.update(time_row(*model, input, labels, a, device));
        } catch (const std::exception& e) {  // typically out of memory at the longest length
          std::string what = e.what();
          row["error"] = what.substr(0, what.find('\n'));
        }
        if (cuda) c10::cuda::CUDACachingAllocator::emptyCache();
        std::string line = fmt::format("{:<9} {:>7} {:<6}", family, T, impl);
        if (row.contains("error")) {
          line += "  failed: " + row["error"].get<std::string>().substr(0, 60);
        } else {
          line += fmt::format(" {:>9.3f} {:>10.0f} {:>9} {:>11.5f}", row["seconds"].get<double>(), row["tokens_per_s"].get<double>(),
                              gib(row, "peak_gpu_memory_bytes"),
                              row["mean_loss"].get<double>());
        }
        if (anchor_row) {
          nlohmann::json an = {{"seconds", anchor_row->value("seconds", nlohmann::json())},
                               {"mean_loss", anchor_row->value("mean_loss", nlohmann::json())},
                               {"peak_gpu_memory_bytes", anchor_row->value("peak_gpu_memory_bytes", nlohmann::json())},
                               {"shim_conv_s", anchor_row->value("shim_conv_s", nlohmann::json())}};
          if (anchor_row->contains("conv_s")) an["conv_s"] = (*anchor_row)["conv_s"];  // the real extension's calls alone
          if (anchor_row->contains("error")) an["error"] = (*anchor_row)["error"];
          row["anchor"] = an;
          if (anchor_row->contains("error")) {
            line += "  anchor: " + (*anchor_row)["error"].get<std::string>().substr(0, 40);
          } else if (!row.contains("error")) {
            const double ratio = (*anchor_row)["seconds"].get<double>() / row["seconds"].get<double>();
            const double dloss = std::fabs(row["mean_loss"].get<double>() - (*anchor_row)["mean_loss"].get<double>());
            row["ratio_anchor_over_foxeval"] = ratio;
            // Without --causal-conv1d the anchor's causal_conv1d is a PyTorch stand-in (F.conv1d in fp32),
            // slower than the CUDA extension: the ratio with its separately timed calls taken out is the
            // fairer one. An anchor on the real extension has no shim_conv_s and no such ratio.
            if (anchor_row->contains("shim_conv_s") && (*anchor_row)["shim_conv_s"].is_number())
              row["ratio_anchor_without_conv_shim_over_foxeval"] =
                  ((*anchor_row)["seconds"].get<double>() - (*anchor_row)["shim_conv_s"].get<double>()) /
                  row["seconds"].get<double>();
            row["mean_loss_abs_diff"] = dloss;
            row["mean_loss_agrees"] = dloss <= a.loss_tolerance;
            line += fmt::format(" | {:>9.3f} {:>9} {:>6.2f}x {}", (*anchor_row)["seconds"].get<double>(),
                                an["peak_gpu_memory_bytes"].is_number() ? gib(an, "peak_gpu_memory_bytes") : std::string("-"),
                                ratio, dloss <= a.loss_tolerance ? "agrees" : fmt::format("DIFFERS by {:.2g}", dloss));
          }
        }
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
        rows.push_back(row);
      }
    }
  }
  if (anchor && !missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    std::printf("anchor %s: no row for %s\n", a.anchor.c_str(), list.c_str());
  }

  const double elapsed = seconds_since(t_start);
  nlohmann::json identity = {{"models", a.models},   {"device_type", cuda ? "cuda" : "cpu"}, {"dtype", a.run.dtype},
                             {"seq_lens", lens},     {"impls", impls},                       {"seed", a.seed},
                             {"repeats", a.repeats}, {"warmup", a.warmup}};
  nlohmann::json doc = bench_document("recurrent", identity, elapsed);
  const std::string gpu = doc["gpu"];
  doc.update(nlohmann::json{
      {"device", a.run.device},
      {"dtype", a.run.dtype},
      {"ids", "splitmix64(seed) % vocab_size; input [BOS] + row[:T-1], labels row"},
      {"time", "median of repeats after warm-up, device synchronized around each forward"},
      {"impls_note", "kernel: the fused CUDA kernels where scan_impl selects them (CUDA, bf16); aten: "
               "FOXEVAL_RECURRENT_IMPL=aten, the exact ATen forms (on the CPU both are the exact forms)"},
      {"ratio", "anchor seconds / foxeval seconds (> 1: foxeval faster)"},
      {"loss_tolerance", a.loss_tolerance},
      {"loss_tolerance_why", "two bf16 computations of the same mean loss; the official code's own bf16-vs-fp32 "
                             "per-token loss difference is 0.001-0.004 mean on the reference models"},
      {"rows", rows}});
  if (anchor)
    doc["anchor"] = {{"path", a.anchor},
                     {"gpu", anchor->value("gpu", "")},
                     {"date", anchor->value("date", "")},
                     {"torch", anchor->value("torch", "")},
                     {"triton", anchor->value("triton", "")},
                     {"commits", anchor->value("commits", nlohmann::json())},
                     {"shims", anchor->value("shims", nlohmann::json())}};
  write_bench_json(doc, a.out, "recurrent-760m", gpu);
}

}  // namespace foxeval
