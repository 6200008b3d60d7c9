// `foxeval bench attention`: times the CUDA Forgetting Attention kernels against PyTorch's
// SDPA on the same tensors: the flash kernel by name (the anchor, "sdpa_*") and the
// backend at::scaled_dot_product_attention picks by itself ("sdpa_default_*"; cuDNN on an H100
// with PyTorch 2.11, faster than flash there). Prints a table and writes a JSON file.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/bench_common.h"
#include "kernels/forgetting_attention.h"

namespace foxeval {
namespace {

void cuda_ok(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + cudaGetErrorString(e));
}

// Median milliseconds of `repeats` calls, each between two CUDA events, after warm-up.
double event_ms(const std::function<void()>& fn, int warmup, int repeats) {
  auto stream = at::cuda::getCurrentCUDAStream().stream();
  for (int i = 0; i < warmup; ++i) fn();
  cudaEvent_t a, b;
  cuda_ok(cudaEventCreate(&a));
  cuda_ok(cudaEventCreate(&b));
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    cuda_ok(cudaEventRecord(a, stream));
    fn();
    cuda_ok(cudaEventRecord(b, stream));
    cuda_ok(cudaEventSynchronize(b));
    float t = 0;
    cuda_ok(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return upper_median(ms);
}


}  // namespace

void run_bench_attention(const BenchAttentionOptions& opt) {
  if (!at::hasCUDA()) throw std::runtime_error("bench attention needs a CUDA device");
  const auto* prop = at::cuda::getCurrentDeviceProperties();
  const std::string gpu = prop->name;
  struct Shape {
    int64_t B, Tq, Tk, H, D;
  };
  std::vector<Shape> shapes = {{1, 16384, 16384, 16, 128}, {4, 4096, 4096, 24, 64},
                               {1, 16384, 16384, 24, 64},  {1, 65536, 65536, 24, 64},
                               {1, 1, 32768, 24, 64},      {16, 1, 32768, 24, 64},
                               {1, 1, 32768, 16, 128}};
  if (opt.quick) shapes = {{1, 4096, 4096, 16, 128}, {1, 4096, 4096, 24, 64}, {1, 1, 8192, 24, 64}};
  if (opt.head_dim > 0)
    shapes.erase(std::remove_if(shapes.begin(), shapes.end(), [&](const Shape& s) { return s.D != opt.head_dim; }),
                 shapes.end());
  auto opts = at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16);
  nlohmann::json rows = nlohmann::json::array();
  fmt::print("{:>5} {:>6} {:>6} {:>4} {:>4} | {:>9} {:>9} | {:>9} {:>9} | {:>9} {:>9} | {:>9} {:>9} | {:>6} {:>6} {:>7}\n",
             "B", "Tq", "Tk", "H", "D", "fox ms", "fox TF/s", "nogate ms", "nogate TF", "flash ms", "flash TF", "dflt ms",
             "dflt TF", "fl/fox", "df/fox", "df/nogt");
  for (const auto& s : shapes) {
    at::manual_seed(0);
    AttentionArgs a;
    a.q = at::randn({s.B, s.H, s.Tq, s.D}, opts);
    a.k = at::randn({s.B, s.H, s.Tk, s.D}, opts);
    a.v = at::randn({s.B, s.H, s.Tk, s.D}, opts);
    // Realistic gates: log f = logsigmoid(randn + 3) (f ~ 0.95 on average), c very negative.
    a.cum_log_fgate = at::log_sigmoid(at::randn({s.B, s.H, s.Tk}, opts.dtype(at::kFloat)) + 3.0).cumsum(-1);
    const bool decode = s.Tq < s.Tk;
    const double flops = decode ? 4.0 * s.B * s.H * s.Tq * s.Tk * s.D : 4.0 * s.B * s.H * s.Tq * s.Tk * s.D / 2;
    const double fox_ms = event_ms([&] { (void)forgetting_attention_cuda(a); }, opt.warmup, opt.repeats);
    // The same kernel without the forget gate (plain causal, as Transformer layers call it): the
    // gate's own cost, and the like-for-like comparison with SDPA, which has no gate.
    AttentionArgs plain = a;
    plain.cum_log_fgate = at::Tensor();
    const double plain_ms = event_ms([&] { (void)forgetting_attention_cuda(plain); }, opt.warmup, opt.repeats);
    // The layout the models hand over: q, k, v as [B, T, H, D] buffers seen as [B, H, T, D] (rows of
    // one head H*D elements apart) rather than head-major.
    double bthd_ms = 0;
    if (!decode) {
      AttentionArgs m = a;
      m.q = a.q.transpose(1, 2).contiguous().transpose(1, 2);
      m.k = a.k.transpose(1, 2).contiguous().transpose(1, 2);
      m.v = a.v.transpose(1, 2).contiguous().transpose(1, 2);
      bthd_ms = event_ms([&] { (void)forgetting_attention_cuda(m); }, opt.warmup, opt.repeats);
    }
    // SDPA's flash kernel, called by name so that no other backend is picked; for decode the
    // single query attends to the whole cache (non-causal, same FLOPs).
    const double sdpa_ms = event_ms(
        [&] { (void)at::_scaled_dot_product_flash_attention(a.q, a.k, a.v, 0.0, !decode, false); },
        opt.warmup, opt.repeats);
    const double dflt_ms = event_ms(
        [&] { (void)at::scaled_dot_product_attention(a.q, a.k, a.v, {}, 0.0, !decode); }, opt.warmup, opt.repeats);
    auto tflops = [&](double ms) { return flops / (ms * 1e-3) / 1e12; };
    fmt::print(
        "{:>5} {:>6} {:>6} {:>4} {:>4} | {:>9.3f} {:>9.1f} | {:>9.3f} {:>9.1f} | {:>9.3f} {:>9.1f} | {:>9.3f} {:>9.1f} | "
        "{:>6.2f} {:>6.2f} {:>7.2f}\n",
        s.B, s.Tq, s.Tk, s.H, s.D, fox_ms, tflops(fox_ms), plain_ms, tflops(plain_ms), sdpa_ms, tflops(sdpa_ms), dflt_ms,
        tflops(dflt_ms), sdpa_ms / fox_ms, dflt_ms / fox_ms, dflt_ms / plain_ms);
    if (!decode) fmt::print("      (q, k, v in the models' [B, T, H, D] layout: fox {:.3f} ms, {:.1f} TFLOP/s)\n", bthd_ms, tflops(bthd_ms));
    // Sliding window W (Transformer (SWA)): the ungated kernel skipping the key blocks outside the
    // window; its TFLOP/s counts the pairs it computes (each query's min(W, position + 1) keys),
    // so it compares per computed block with the full kernel's nogate column.
    nlohmann::json swa;
    if (!decode && opt.window > 0) {
      AttentionArgs w = plain;
      w.window = opt.window;
      const double ms = event_ms([&] { (void)forgetting_attention_cuda(w); }, opt.warmup, opt.repeats);
      const double W = static_cast<double>(std::min(opt.window, s.Tk)), T = static_cast<double>(s.Tk);
      const double wflops = 4.0 * s.B * s.H * s.D * (T * W - W * (W - 1) / 2);
      const double tf = wflops / (ms * 1e-3) / 1e12;
      fmt::print("      (window {}: {:.3f} ms, {:.1f} TFLOP/s over the pairs in the window; {:.3f}x the full kernel's time, "
                 "{:.2f}x its TFLOP/s)\n", opt.window, ms, tf, ms / plain_ms, tf / tflops(plain_ms));
      swa = {{"window", opt.window}, {"ms", ms}, {"tflops", tf}, {"time_vs_nogate", ms / plain_ms},
             {"tflops_vs_nogate", tf / tflops(plain_ms)}};
    }
    std::fflush(stdout);
    rows.push_back({{"batch", s.B}, {"seqlen", s.Tk}, {"seqlen_q", s.Tq}, {"heads", s.H}, {"head_dim", s.D},
                    {"mode", decode ? "decode" : "prefill"}, {"fox_ms", fox_ms}, {"fox_tflops", tflops(fox_ms)},
                    {"fox_nogate_ms", plain_ms}, {"fox_nogate_tflops", tflops(plain_ms)},
                    {"fox_bthd_layout_ms", decode ? nlohmann::json() : nlohmann::json(bthd_ms)},
                    {"sdpa_ms", sdpa_ms}, {"sdpa_tflops", tflops(sdpa_ms)}, {"sdpa_default_ms", dflt_ms},
                    {"sdpa_default_tflops", tflops(dflt_ms)}});
    if (!swa.is_null()) rows.back()["fox_nogate_window"] = swa;
  }
  nlohmann::json doc = {{"gpu", gpu},
                        {"date", utc_date()},
                        {"dtype", "bfloat16"},
                        {"timing", fmt::format("CUDA events, {} warm-up, median of {}", opt.warmup, opt.repeats)},
                        {"sdpa_backend", "flash (at::_scaled_dot_product_flash_attention)"},
                        {"sdpa_default_backend", "whatever at::scaled_dot_product_attention picks (cuDNN on H100, torch 2.11)"},
                        {"fox_prefill_impl", forgetting_attention_prefill_impl()},
                        {"flops", "prefill 4*B*H*T*T*D/2 (causal); decode 4*B*H*Tq*Tk*D"},
                        {"rows", rows}};
  write_bench_json(doc, opt.out, "attention", gpu, 2);
}

}  // namespace foxeval
