// `foxeval bench generate`: end-to-end generation through generate_until (models/requests.h, the
// scheduler niah and longbench use) on synthetic prompts, against the memory-bandwidth bound of
// its decode steps, with Hugging Face `generate` of the official code beside it (--anchor).
//
// A row is `batch` requests of `prompt_len` random ids, none of them EOS, each asking for
// `new_tokens` tokens with no stop id, so every request decodes to its length. The scheduler gets
// at most `batch` slots; a row for which its memory plan (plan_slots) has fewer slots than `batch`
// is reported as not fitting and not run. Per row: wall time of the call, prefill tokens/s and
// decode tokens/s from GenerateStats (a request's first token comes from its prefill, the other
// new_tokens - 1 from decode steps), peak GPU memory of the CUDA caching allocator (reset per row;
// the weights included), and the fraction of the bound of bench decode (bench/bench_common.h) with
// the row's decoding state at the mean decode context prompt_len + new_tokens / 2.
// The memory check runs one prompt of --memory-check-len tokens at batch 1 (the grid's row when
// it has one) and compares its peak reserved memory with --memory-limit-gib.
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/run/runner.h"

namespace foxeval {
namespace {

constexpr int64_t kEos = 50256;  // GPT-2's <|endoftext|>: never in a prompt here

// HF-generate rows of scripts/bench_generate_anchor.py ({"rows": [...]} at the top), or of a
// results/bench file that keeps them under "hf_generate_anchor_official_code".
struct Anchor {
  nlohmann::json meta = nlohmann::json::object();  // the file's fields other than its rows
  std::vector<nlohmann::json> rows;
};

Anchor read_anchor(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw Error(fmt::format("--anchor {}: no such file", path));
  nlohmann::json doc = read_json(path);
  const nlohmann::json* holder = &doc;
  if (doc.is_object() && !doc.contains("rows") && doc.contains("hf_generate_anchor_official_code"))
    holder = &doc["hf_generate_anchor_official_code"];
  if (!holder->is_object() || !holder->contains("rows") || !(*holder)["rows"].is_array())
    throw Error(fmt::format("--anchor {}: no \"rows\" array (expected scripts/bench_generate_anchor.py's output)", path));
  Anchor a;
  for (const auto& [key, value] : holder->items())
    if (key != "rows") a.meta[key] = value;
  a.meta["file"] = path;
  size_t i = 0;
  for (const nlohmann::json& row : (*holder)["rows"]) {
    for (const char* field : {"batch", "context"})
      if (!row.is_object() || !row.contains(field) || !row[field].is_number_integer())
        throw Error(fmt::format("--anchor {}: rows[{}] has no integer \"{}\"", path, i, field));
    if (!row.contains("error") && !row.contains("decode_tokens_per_s"))
      throw Error(fmt::format("--anchor {}: rows[{}] has neither \"decode_tokens_per_s\" nor \"error\"", path, i));
    a.rows.push_back(row);
    ++i;
  }
  return a;
}

const nlohmann::json* find_anchor_row(const Anchor& a, int64_t batch, int64_t prompt_len) {
  for (const nlohmann::json& r : a.rows)
    if (r["batch"].get<int64_t>() == batch && r["context"].get<int64_t>() == prompt_len) return &r;
  return nullptr;
}

// `batch` prompts of `len` random ids in [0, vocab) without EOS; the same for a (batch, len) in
// any grid, whatever rows come before it.
std::vector<GenerationRequest> synthetic_requests(int64_t batch, int64_t len, int64_t new_tokens, int64_t vocab,
                                                  uint64_t seed) {
  std::seed_seq seq{seed, static_cast<uint64_t>(batch), static_cast<uint64_t>(len)};
  std::mt19937_64 rng(seq);
  const bool skip_eos = kEos < vocab;
  const uint64_t n = static_cast<uint64_t>(vocab - (skip_eos ? 1 : 0));
  std::vector<GenerationRequest> requests(static_cast<size_t>(batch));
  for (GenerationRequest& r : requests) {
    r.prompt.resize(static_cast<size_t>(len));
    for (int64_t& id : r.prompt) {
      id = static_cast<int64_t>(rng() % n);
      if (skip_eos && id >= kEos) ++id;
    }
    r.max_new_tokens = new_tokens;  // no stop ids: every request runs to its length
  }
  return requests;
}

class GenerateBench {
 public:
  GenerateBench(const BenchGenerateArgs& a, CausalLM& model, double bandwidth)
      : a_(a), model_(model), bandwidth_(bandwidth), cuda_(model.lm_head().device().is_cuda()) {
    if (cuda_) {
      const at::Device d = model.lm_head().device();
      device_index_ = d.has_index() ? d.index() : c10::cuda::current_device();
    }
  }

  // One row of the grid: runs it (or says why not) and returns its JSON.
  nlohmann::json run_row(int64_t batch, int64_t len) {
    const ModelInfo& info = model_.info();
    const int64_t n = a_.new_tokens;
    GenerateUntilOptions g = a_.gen;
    g.max_batch = batch;
    const double state_bytes = static_cast<double>(batch) * static_cast<double>(model_.slot_bytes(len + n / 2));
    const double weights = weight_bytes(info, a_.run.dtype);
    const double bound = decode_bound_tokens_per_s(weights, state_bytes, batch, bandwidth_);
    nlohmann::json row = {{"batch", batch},         {"prompt_len", len},           {"new_tokens", n},
                          {"weight_bytes", weights}, {"state_bytes", state_bytes}, {"bound_tokens_per_s", bound}};
    if (cuda_) c10::cuda::CUDACachingAllocator::emptyCache();
    const SlotPlan plan = plan_slots(model_, len + n, batch, g);
    row["capacity"] = plan.capacity;
    row["slot_bytes"] = plan.slot_bytes;
    if (plan.memory_slots >= 0) row["memory_plan_slots"] = plan.memory_slots;
    if (plan.memory_slots >= 0 && plan.memory_slots < batch) {
      row["fits"] = false;
      row["error"] = fmt::format(
          "does not fit: the scheduler's memory plan allows {} slot(s) of {} tokens ({:.2f} GiB each) at "
          "--gpu-memory-fraction {}",
          plan.memory_slots, plan.capacity, static_cast<double>(plan.slot_bytes) / (1 << 30), g.gpu_memory_fraction);
      return row;
    }
    row["fits"] = true;
    const std::vector<GenerationRequest> requests = synthetic_requests(batch, len, n, info.vocab_size, a_.seed);
    try {
      if (cuda_) c10::cuda::CUDACachingAllocator::resetPeakStats(device_index_);
      int64_t generated = 0, finished = 0;
      bool full_length = true;
      const auto t0 = std::chrono::steady_clock::now();
      const GenerateStats stats = generate_until(model_, requests, g, [&](size_t, const GenerationAnswer& ans) {
        ++finished;
        generated += static_cast<int64_t>(ans.ids.size());
        full_length = full_length && static_cast<int64_t>(ans.ids.size()) == n;
      });
      if (cuda_) c10::cuda::device_synchronize();
      const double wall = seconds_since(t0);
      // No stop id was given, so anything short of new_tokens per request is a scheduler fault.
      if (finished != batch || !full_length)
        throw Error(fmt::format("{} of {} requests finished, {} tokens generated; expected {} each", finished, batch,
                                generated, n));
      const double decode_tokens = static_cast<double>(generated - batch);
      const double decode_tps = stats.decode_seconds > 0 ? decode_tokens / stats.decode_seconds : 0.0;
      row["wall_s"] = wall;
      row["prefill_s"] = stats.prefill_seconds;
      row["decode_s"] = stats.decode_seconds;
      row["prompt_tokens"] = stats.prompt_tokens;
      row["generated_tokens"] = generated;
      row["decode_steps"] = stats.decode_steps;
      row["slots"] = stats.min_slots;
      row["oom_backoffs"] = stats.oom_backoffs;
      row["prefill_tokens_per_s"] = static_cast<double>(stats.prompt_tokens) / stats.prefill_seconds;
      row["decode_tokens_per_s"] = decode_tps;
      row["fraction_of_bound"] = decode_tps / bound;
      if (cuda_) {
        const auto mem = c10::cuda::CUDACachingAllocator::getDeviceStats(device_index_);
        const size_t all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
        row["peak_allocated_bytes"] = mem.allocated_bytes[all].peak;
        row["peak_reserved_bytes"] = mem.reserved_bytes[all].peak;
      }
    } catch (const std::exception& e) {  // e.g. out of GPU memory with one slot: reported, not fatal
      std::string what = e.what();
      row["error"] = what.substr(0, what.find('\n'));
    }
    if (cuda_) c10::cuda::CUDACachingAllocator::emptyCache();
    return row;
  }

 private:
  const BenchGenerateArgs& a_;
  CausalLM& model_;
  double bandwidth_;
  bool cuda_;
  c10::DeviceIndex device_index_ = 0;
};

void print_generate_row(const nlohmann::json& r, const nlohmann::json& anchor_row) {
  std::string line = fmt::format("{:>6} {:>8} {:>5}", r["batch"].get<int64_t>(), r["prompt_len"].get<int64_t>(),
                                 r["new_tokens"].get<int64_t>());
  if (r.contains("error")) {
    line += "  " + r["error"].get<std::string>();
  } else {
    const double tps = r["decode_tokens_per_s"].get<double>();
    line += fmt::format(" {:>8.2f} {:>12.0f} {:>11.1f} {:>11.1f} {:>7.1f}% {:>9} {:>5}", r["wall_s"].get<double>(),
                        r["prefill_tokens_per_s"].get<double>(), tps, r["bound_tokens_per_s"].get<double>(),
                        100.0 * r["fraction_of_bound"].get<double>(), gib(r, "peak_allocated_bytes"),
                        r["slots"].get<int64_t>());
    if (anchor_row.is_object() && anchor_row.contains("decode_tokens_per_s"))
      line += fmt::format(" {:>10.1f} {:>7.1f}x", anchor_row["decode_tokens_per_s"].get<double>(),
                          tps / anchor_row["decode_tokens_per_s"].get<double>());
    else if (anchor_row.is_object())
      line += "  HF: " + anchor_row.value("error", std::string("?")).substr(0, 40);
  }
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

void run_bench_generate(const BenchGenerateArgs& a) {
  // Every flag is checked before the model loads.
  const std::vector<int64_t> batches = parse_positive_list(a.batches, "--batch");
  const std::vector<int64_t> lens = parse_positive_list(a.prompt_lens, "--prompt-len");
  std::optional<Anchor> anchor;
  if (!a.anchor.empty()) anchor = read_anchor(a.anchor);
  const std::string gpu = bench_device_name(a.run);
  const bool cuda = gpu != "cpu";
  const auto t_start = std::chrono::steady_clock::now();

  auto model = load_model(a.model, a.run);
  const ModelInfo& info = model->info();
  const double bandwidth = cuda ? measured_copy_bandwidth(at::Device(a.run.device)) : a.bandwidth_gbs * 1e9;
  GenerateBench bench(a, *model, bandwidth);
  {  // warm-up (CUDA context, cuBLAS handles, kernel loading): not part of any row
    BenchGenerateArgs w = a;
    w.new_tokens = 4;
    GenerateBench(w, *model, bandwidth).run_row(1, 16);
  }

  std::printf("%s (%s), %s %s, %lld new tokens per request, copy bandwidth %.0f GB/s%s%s\n", info.family.c_str(),
              a.model.c_str(), gpu.c_str(), a.run.dtype.c_str(), static_cast<long long>(a.new_tokens), bandwidth / 1e9,
              cuda ? " (measured)" : " (given)", a.gen.cuda_graphs ? "" : ", no CUDA graphs");
  std::printf("%6s %8s %5s %8s %12s %11s %11s %8s %9s %5s%s\n", "batch", "prompt", "new", "wall_s", "prefill_t/s",
              "decode_t/s", "bound_t/s", "of_bound", "peak_GiB", "slots", anchor ? "  HF_dec_t/s speedup" : "");
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json missing = nlohmann::json::array();
  for (int64_t len : lens) {
    for (int64_t batch : batches) {
      nlohmann::json row = bench.run_row(batch, len);
      nlohmann::json anchor_row;  // null: no anchor given or none for this shape
      if (anchor) {
        if (const nlohmann::json* r = find_anchor_row(*anchor, batch, len)) {
          anchor_row = *r;
          if (row.contains("decode_tokens_per_s") && r->contains("decode_tokens_per_s")) {
            row["speedup_decode"] = row["decode_tokens_per_s"].get<double>() / (*r)["decode_tokens_per_s"].get<double>();
            if (r->contains("prefill_tokens_per_s"))
              row["speedup_prefill"] =
                  row["prefill_tokens_per_s"].get<double>() / (*r)["prefill_tokens_per_s"].get<double>();
          }
        } else {
          missing.push_back({{"batch", batch}, {"prompt_len", len}});
        }
        row["anchor"] = anchor_row;
      }
      print_generate_row(row, anchor_row);
      rows.push_back(row);
    }
  }

  // The memory check: one prompt of memory_check_len tokens at batch 1.
  nlohmann::json check;
  if (a.memory_check_len > 0) {
    nlohmann::json row;
    std::string from = "grid row";
    for (const nlohmann::json& r : rows)
      if (r["batch"] == 1 && r["prompt_len"] == a.memory_check_len) row = r;
    if (row.is_null()) {
      from = "extra row";
      row = bench.run_row(1, a.memory_check_len);
      print_generate_row(row, nlohmann::json());
    }
    const double limit = a.memory_limit_gib * double(1 << 30);
    check = {{"batch", 1}, {"prompt_len", a.memory_check_len}, {"new_tokens", a.new_tokens},
             {"from", from}, {"limit_bytes", limit}, {"measured_on", "peak reserved bytes of the CUDA caching allocator"}};
    if (row.contains("error")) {
      check["error"] = row["error"];
      check["under_limit"] = false;
      std::printf("memory check: batch 1, %lld-token prompt: %s\n", static_cast<long long>(a.memory_check_len),
                  row["error"].get<std::string>().c_str());
    } else if (!cuda) {
      check["under_limit"] = nullptr;
      check["note"] = "not on a GPU: no peak memory";
      std::printf("memory check: not on a GPU, no peak memory measured\n");
    } else {
      const double reserved = row["peak_reserved_bytes"].get<double>();
      check["peak_allocated_bytes"] = row["peak_allocated_bytes"];
      check["peak_reserved_bytes"] = row["peak_reserved_bytes"];
      check["under_limit"] = reserved < limit;
      std::printf("memory check: batch 1, %lld-token prompt + %lld new: peak %.2f GiB reserved (%.2f GiB allocated), %s %.1f GiB\n",
                  static_cast<long long>(a.memory_check_len), static_cast<long long>(a.new_tokens), reserved / (1 << 30),
                  row["peak_allocated_bytes"].get<double>() / (1 << 30), reserved < limit ? "under" : "NOT under",
                  a.memory_limit_gib);
    }
  }
  if (anchor) {
    std::string list;
    for (const nlohmann::json& m : missing)
      list += fmt::format("{}batch {} at {}", list.empty() ? "" : ", ", m["batch"].get<int64_t>(), m["prompt_len"].get<int64_t>());
    std::printf("anchor %s: %zu of %zu rows matched%s%s\n", a.anchor.c_str(), rows.size() - missing.size(), rows.size(),
                missing.empty() ? "" : "; no anchor row for ", list.c_str());
  }

  const double elapsed = seconds_since(t_start);
  nlohmann::json identity = {{"model", a.model},           {"device_type", cuda ? "cuda" : "cpu"},
                             {"dtype", a.run.dtype},       {"batches", batches},
                             {"prompt_lens", lens},        {"new_tokens", a.new_tokens},
                             {"seed", a.seed},             {"prefill_chunk", a.gen.prefill_chunk},
                             {"cuda_graphs", a.gen.cuda_graphs}, {"gpu_memory_fraction", a.gen.gpu_memory_fraction}};
  nlohmann::json doc = bench_document("generate", identity, elapsed, {/*kind=*/false, /*machine=*/true});
  doc["gpu"] = gpu;  // the --device's own GPU
  doc["date"] = utc_date();
  doc.update(nlohmann::json{{"model", a.model},
              {"family", info.family},
              {"num_parameters", info.num_parameters},
              {"device", a.run.device},
              {"dtype", a.run.dtype},
              {"new_tokens", a.new_tokens},
              {"bandwidth_bytes_per_s", bandwidth},
              {"bandwidth_measured", cuda},
              {"bound", "batch / ((parameters x element size + batch x slot bytes at prompt_len + new_tokens/2) "
                        "/ copy bandwidth); decode tokens/s = batch x (new_tokens - 1) / decode seconds"},
              {"rows", rows}});
  if (!check.is_null()) doc["memory_check"] = check;
  if (anchor) {
    doc["anchor"] = anchor->meta;
    doc["anchor_missing"] = missing;
  }
  write_bench_json(doc, a.out, "generate", gpu);
}

}  // namespace foxeval
