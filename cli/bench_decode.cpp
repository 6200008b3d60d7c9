// `foxeval bench decode`: prefill and decode throughput of generate() (models/generate.h) on
// random prompts, against the memory-bandwidth bound of a decode step.
//
// Bound: a decode step reads every parameter once plus the whole decoding state, so
//   bytes/step = parameters x bytes per weight + state bytes at the mean decode context,
//   bound tokens/s = batch / (bytes/step / bandwidth).
// State bytes: the FoX family's KV cache (layers x 2 x batch x context x kv_dim x element size)
// plus its cumulative log forget gates (layers x batch x heads x context x 4); the recurrent
// families' fixed-size states are not counted (small next to the weights at these batches).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cli/command.h"
#include "data/errors.h"
#include "models/generate.h"
#include "models/registry.h"

namespace foxeval {
namespace {

struct BenchDecodeArgs {
  std::string model, batches = "1,16", prompt_lens = "1024,32768", out;
  int64_t new_tokens = 64, prefill_chunk = 4096;
  double bandwidth_gbs = 3000;
  uint64_t seed = 0;
  RunOptions run;
};

// A non-empty list of positive integers.
std::vector<int64_t> parse_list(const std::string& s, const char* flag) {
  std::vector<int64_t> v = parse_int_list(s, flag);
  for (int64_t x : v)
    if (x <= 0) throw Error(fmt::format("{}: values must be positive", flag));
  if (v.empty()) throw Error(fmt::format("{}: empty list", flag));
  return v;
}

std::string setting(const ModelInfo& info, const std::string& key) {
  for (const auto& kv : info.settings)
    if (kv.first == key) return kv.second;
  return "";
}

std::string slug(const std::string& name) {
  std::string s;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!s.empty() && s.back() != '-')
      s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s.empty() ? "gpu" : s;
}

void run_bench_decode(const BenchDecodeArgs& a) {
  const std::vector<int64_t> batches = parse_list(a.batches, "--batch");
  const std::vector<int64_t> lens = parse_list(a.prompt_lens, "--prompt-len");
  const bool cuda = a.run.device.rfind("cuda", 0) == 0;
  std::string gpu = "cpu";
  if (cuda) {
    if (!at::hasCUDA()) throw Error("--device cuda: no CUDA device");
    gpu = at::cuda::getCurrentDeviceProperties()->name;
  }
  auto model = load_model(a.model, a.run);
  const ModelInfo& info = model->info();
  const int64_t elt = a.run.dtype == "bfloat16" ? 2 : 4;
  const double weight_bytes = static_cast<double>(info.num_parameters) * elt;
  const bool fox_family = info.model_type.find("transformer") != std::string::npos;
  int64_t kv_dim = info.hidden_size, heads = 0;
  if (fox_family) {
    const std::string kvh = setting(info, "num_kv_heads"), hd = setting(info, "head_dim"), h = setting(info, "num_heads");
    if (!kvh.empty() && !hd.empty()) kv_dim = std::stoll(kvh) * std::stoll(hd);
    if (!h.empty() && setting(info, "fgate_type") != "none") heads = std::stoll(h);
  }
  auto sync = [&] {
    if (cuda) c10::cuda::device_synchronize();
  };

  // Warm-up: kernels, allocator, cuBLAS handles.
  {
    GenerateOptions w;
    w.max_new_tokens = 4;
    (void)generate(*model, {std::vector<int64_t>(16, 1)}, w, nullptr);
    sync();
  }

  std::printf("%s (%s), %s %s, %lld new tokens, bound at %.0f GB/s\n", info.family.c_str(), a.model.c_str(),
              gpu.c_str(), a.run.dtype.c_str(), static_cast<long long>(a.new_tokens), a.bandwidth_gbs);
  std::printf("%6s %9s %10s %12s %12s %10s %12s %8s\n", "batch", "prompt", "prefill_s", "prefill_t/s", "decode_t/s",
              "ms/step", "bound_t/s", "of_bound");
  nlohmann::json rows = nlohmann::json::array();
  std::mt19937_64 rng(a.seed);
  for (int64_t len : lens) {
    for (int64_t batch : batches) {
      std::vector<std::vector<int64_t>> prompts(static_cast<size_t>(batch), std::vector<int64_t>(static_cast<size_t>(len)));
      for (auto& p : prompts)
        for (auto& id : p) id = static_cast<int64_t>(rng() % static_cast<uint64_t>(info.vocab_size));
      GenerateOptions o;
      o.max_new_tokens = a.new_tokens;  // no stop ids: every row runs the full length
      o.prefill_chunk = a.prefill_chunk;
      const double ctx = static_cast<double>(len) + 0.5 * static_cast<double>(a.new_tokens);
      const double state_bytes =
          fox_family ? static_cast<double>(info.num_layers) * batch * ctx *
                           (2.0 * static_cast<double>(kv_dim) * elt + static_cast<double>(heads) * 4.0)
                     : 0.0;
      const double step_bytes = weight_bytes + state_bytes;
      const double bound = static_cast<double>(batch) / (step_bytes / (a.bandwidth_gbs * 1e9));
      nlohmann::json row = {{"batch", batch}, {"prompt_len", len}, {"new_tokens", a.new_tokens},
                            {"weight_bytes", weight_bytes}, {"state_bytes", state_bytes},
                            {"bound_tokens_per_s", bound}};
      try {
        sync();
        GenerateStats st;
        (void)generate(*model, prompts, o, nullptr, &st);
        sync();
        const double decode_tps = st.decode_steps > 0 ? batch * st.decode_steps / st.decode_seconds : 0.0;
        const double ms_step = st.decode_steps > 0 ? 1e3 * st.decode_seconds / st.decode_steps : 0.0;
        row["prefill_seconds"] = st.prefill_seconds;
        row["prefill_tokens_per_s"] = batch * len / st.prefill_seconds;
        row["decode_steps"] = st.decode_steps;
        row["decode_seconds"] = st.decode_seconds;
        row["decode_tokens_per_s"] = decode_tps;
        row["ms_per_step"] = ms_step;
        row["fraction_of_bound"] = decode_tps / bound;
        std::printf("%6lld %9lld %10.3f %12.0f %12.1f %10.3f %12.1f %7.1f%%\n", static_cast<long long>(batch),
                    static_cast<long long>(len), st.prefill_seconds, batch * len / st.prefill_seconds, decode_tps,
                    ms_step, bound, 100.0 * decode_tps / bound);
      } catch (const std::exception& e) {  // typically out of memory at the largest shapes
        std::string what = e.what();
        what = what.substr(0, what.find('\n'));
        row["error"] = what;
        std::printf("%6lld %9lld  failed: %s\n", static_cast<long long>(batch), static_cast<long long>(len),
                    what.c_str());
      }
      if (cuda) c10::cuda::CUDACachingAllocator::emptyCache();
      std::fflush(stdout);
      rows.push_back(row);
    }
  }

  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  nlohmann::json doc = {{"gpu", gpu},
                        {"date", date},
                        {"model", a.model},
                        {"family", info.family},
                        {"num_parameters", info.num_parameters},
                        {"device", a.run.device},
                        {"dtype", a.run.dtype},
                        {"new_tokens", a.new_tokens},
                        {"prefill_chunk", a.prefill_chunk},
                        {"bandwidth_gbs", a.bandwidth_gbs},
                        {"rows", rows}};
  const std::string path = a.out.empty() ? "results/bench/decode-" + slug(gpu) + ".json" : a.out;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  f << doc.dump(2) << "\n";
  std::printf("wrote %s\n", path.c_str());
}

CommandRegistrar bench_decode_command([](CLI::App& root) {
  auto a = std::make_shared<BenchDecodeArgs>();
  CLI::App* bench = command_group(root, "bench", "Time kernels and components");
  CLI::App* sub = bench->add_subcommand("decode", "Prefill and decode throughput vs the memory-bandwidth bound");
  sub->add_option("--model", a->model, "Hugging Face checkpoint directory")->required();
  sub->add_option("--batch", a->batches, "batch sizes, comma separated (default 1,16)");
  sub->add_option("--prompt-len", a->prompt_lens, "prompt lengths, comma separated (default 1024,32768)");
  sub->add_option("--new-tokens", a->new_tokens, "decode steps per run (default 64)")->check(CLI::Range(int64_t(2), int64_t(1) << 20));
  sub->add_option("--prefill-chunk", a->prefill_chunk, "prompt tokens per prefill forward (default 4096)")->check(CLI::PositiveNumber);
  sub->add_option("--bandwidth-gbs", a->bandwidth_gbs, "memory bandwidth for the bound, GB/s (default 3000: H100 copy)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--seed", a->seed, "seed of the random prompt ids");
  sub->add_option("--device", a->run.device, "cpu or cuda[:N]");
  sub->add_option("--dtype", a->run.dtype, "float32 or bfloat16")->check(CLI::IsMember({"float32", "bfloat16"}));
  sub->add_option("--out", a->out, "JSON output path (default results/bench/decode-<gpu>.json)");
  sub->callback([a] { run_bench_decode(*a); });
});

}  // namespace
}  // namespace foxeval
