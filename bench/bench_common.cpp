#include "bench/bench_common.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>

#include <c10/cuda/CUDACachingAllocator.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <chrono>
#include <ctime>
#include <filesystem>

#include "data/errors.h"
#include "data/flag_values.h"
#include "data/json_file.h"
#include "tasks/run/result_file.h"

namespace foxeval {

nlohmann::json bench_document(const std::string& name, const nlohmann::json& identity, double elapsed_s,
                              BenchDocFields fields) {
  const nlohmann::json header = result_header("bench-" + name, identity, elapsed_s);
  nlohmann::json doc = {{"header", header},
                        {"gpu", header["machine"].value("gpu", std::string("cpu"))},
                        {"date", header["date"]},
                        {"git_revision", header["foxeval_version"]}};
  if (fields.kind) doc["kind"] = "foxeval-bench-" + name;
  if (fields.machine) doc["machine"] = header["machine"];
  return doc;
}

void write_bench_json(const nlohmann::json& doc, const std::string& out, const std::string& stem, const std::string& gpu,
                      int indent) {
  const std::string path = out.empty() ? "results/bench/" + stem + "-" + slug(gpu) + ".json" : out;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  write_json_atomic(path, doc, indent);  // never through a link, never half written
  std::printf("wrote %s\n", path.c_str());
}

TimedRepeats time_repeats(const std::function<void()>& fn, int64_t warmup, int64_t repeats, const at::Device& device,
                          const std::function<void(int64_t)>& after) {
  const bool cuda = device.is_cuda();
  const int device_index = device.has_index() ? device.index() : 0;
  for (int64_t i = 0; i < warmup; ++i) fn();
  sync_device(cuda);
  TimedRepeats t;
  t.window_start_unix_s = unix_seconds_now();
  for (int64_t r = 0; r < repeats; ++r) {
    sync_device(cuda);
    if (cuda) c10::cuda::CUDACachingAllocator::resetPeakStats(device_index);
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    sync_device(cuda);
    t.seconds.push_back(seconds_since(t0));
    if (cuda) {
      const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_index);
      t.peak_bytes = std::max(t.peak_bytes,
                              stats.allocated_bytes[static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak);
    }
    if (after) after(r);
  }
  t.window_end_unix_s = unix_seconds_now();
  return t;
}

double median(std::vector<double> seconds) {
  if (seconds.empty()) throw Error("internal: the median of no timings");
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  return n % 2 ? seconds[n / 2] : 0.5 * (seconds[n / 2 - 1] + seconds[n / 2]);
}

double upper_median(std::vector<double> seconds) {
  if (seconds.empty()) throw Error("internal: the median of no timings");
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

std::string gib(const nlohmann::json& row, const char* key) {
  return row.contains(key) ? fmt::format("{:.2f}", row[key].get<double>() / double(1 << 30)) : std::string("-");
}

std::vector<int64_t> parse_positive_list(const std::string& s, const char* flag) {
  std::vector<int64_t> v = parse_int_list(s, flag);
  for (int64_t x : v)
    if (x <= 0 || x > kMaxContextTokens)
      throw Error(fmt::format("{}: values must be positive and at most {}, got {}", flag, kMaxContextTokens, x));
  if (v.empty()) throw Error(fmt::format("{}: empty list", flag));
  return v;
}

std::vector<int64_t> parse_seq_lens(const std::string& s, const char* flag) {
  const std::vector<int64_t> lens = parse_int_list(s, flag);
  if (lens.empty()) throw Error(fmt::format("{}: empty list", flag));
  for (int64_t T : lens)
    if (T < 2 || T > kMaxContextTokens) throw Error(fmt::format("{}: {} is out of range [2, {}]", flag, T, kMaxContextTokens));
  return lens;
}

std::string slug(const std::string& name) {
  for (const char* gpu : {"H100", "H200", "A100", "B200", "L40S"})  // results/bench/*-h100.json
    if (name.find(gpu) != std::string::npos) {
      std::string s = gpu;
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    }
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

std::string bench_device_name(const RunOptions& run) {
  if (run.device.rfind("cuda", 0) != 0) return "cpu";
  if (!at::hasCUDA()) throw Error("--device " + run.device + ": no CUDA device");
  return at::cuda::getCurrentDeviceProperties()->name;
}

std::string utc_date() {
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

double measured_copy_bandwidth(const at::Device& device) {
  at::Tensor src = at::empty({int64_t(1) << 29}, at::TensorOptions().device(device).dtype(at::kShort));
  at::Tensor dst = at::empty_like(src);
  for (int i = 0; i < 3; ++i) dst.copy_(src);
  c10::cuda::device_synchronize();
  const int reps = 20;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) dst.copy_(src);
  c10::cuda::device_synchronize();
  const double s = seconds_since(t0);
  return 2.0 * static_cast<double>(src.nbytes()) * reps / s;
}

double weight_bytes(const ModelInfo& info, const std::string& dtype) {
  return static_cast<double>(info.num_parameters) * (dtype == "bfloat16" ? 2 : 4);
}

double decode_bound_tokens_per_s(double weight_bytes, double state_bytes, int64_t batch, double bandwidth) {
  return static_cast<double>(batch) / ((weight_bytes + state_bytes) / bandwidth);
}

std::vector<int64_t> splitmix64_ids(uint64_t seed, int64_t n, int64_t vocab) {
  std::vector<int64_t> ids(static_cast<size_t>(n));
  uint64_t state = seed;
  for (auto& id : ids) {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    id = static_cast<int64_t>((z ^ (z >> 31)) % static_cast<uint64_t>(vocab));
  }
  return ids;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(',', start), s.size());
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> parse_named_dirs(const std::string& s, const char* flag,
                                                                  const std::vector<std::string>& allowed) {
  std::string names;
  for (const auto& n : allowed) names += (names.empty() ? "" : ", ") + n;
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& item : split_commas(s)) {
    const size_t eq = item.find('=');
    const bool known = allowed.empty() || (eq != std::string::npos &&
                                           std::find(allowed.begin(), allowed.end(), item.substr(0, eq)) != allowed.end());
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size() || !known)
      throw Error(allowed.empty()
                      ? fmt::format("{}: '{}': expected NAME=DIR (NAME labels the rows)", flag, item)
                      : fmt::format("{}: '{}': expected FAMILY=DIR with FAMILY one of {}", flag, item, names));
    out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  return out;
}

void sync_device(bool cuda) {
  if (cuda) c10::cuda::device_synchronize();
}

}  // namespace foxeval
