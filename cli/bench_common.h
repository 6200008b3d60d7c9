// Shared by the `foxeval bench` commands that time decoding (decode, generate): flag lists, the
// output file name, the copy bandwidth measured in the run and the memory-bandwidth bound of a
// decode step.
#pragma once
#include <ATen/ATen.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/model.h"

namespace foxeval {

// The `foxeval bench NAME` subcommand (the bench group made on first use).
CLI::App* bench_subcommand(CLI::App& root, const std::string& name, const std::string& about);

// Writes a bench's result atomically to `out`, or where --out is not given to
// results/bench/{stem}-{slug(gpu)}.json, and prints where.
void write_bench_json(const nlohmann::json& doc, const std::string& out, const std::string& stem, const std::string& gpu);

// What the decoding benches (decode, generate) share on the command line.
struct DecodeBenchArgs {
  std::string out;
  double bandwidth_gbs = 3000;
  uint64_t seed = 0;
  RunOptions run;
};

// Their last options: --bandwidth-gbs, --seed, the run options and --out (default
// results/bench/{stem}-<gpu>.json); the callback resolves the run options, then calls `run`.
void add_decode_bench_options(CLI::App* sub, DecodeBenchArgs& a, const std::string& stem, std::function<void()> run);

// A non-empty list of positive integers ("1,4,16"); errors name the flag.
std::vector<int64_t> parse_positive_list(const std::string& s, const char* flag);

// n token ids from splitmix64(seed) % vocab: the ids the anchor scripts make
// (scripts/bench_recurrent_anchor.py splitmix64_ids), so both sides read the same documents.
std::vector<int64_t> splitmix64_ids(uint64_t seed, int64_t n, int64_t vocab);

// The items of a comma-separated flag value, empty ones included ("" is one empty item), for the
// caller to check one by one.
std::vector<std::string> split_commas(const std::string& s);

// "NAME=DIR,NAME=DIR,...": the --models list of the model benches, in order. `allowed` (when not
// empty) are the names a bench takes; errors name the flag and the item.
std::vector<std::pair<std::string, std::string>> parse_named_dirs(const std::string& s, const char* flag,
                                                                  const std::vector<std::string>& allowed = {});

// A file-name-safe lower-case form of a device name for results/bench/ file names: the GPU model
// where it is a known one ("NVIDIA H100 80GB HBM3" -> "h100"), else the whole name
// ("Some GPU 9" -> "some-gpu-9").
std::string slug(const std::string& name);

// Seconds on the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Wall-clock Unix seconds: a bench row's window, to match logs sampled beside the run.
inline double unix_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// "cpu", or the GPU's name for a cuda device (an Error when --device cuda has no GPU).
std::string bench_device_name(const RunOptions& run);

// Today's date (UTC), YYYY-MM-DD.
std::string utc_date();

// Waits for the GPU's queued work before a timer reads the clock (a no-op on the CPU).
void sync_device(bool cuda);

// Device-to-device copy bandwidth (bytes read + written per second) over a 1 GiB buffer: the
// bandwidth a decode step's reads can at best reach, measured in the same run.
double measured_copy_bandwidth(const at::Device& device);

// Bytes of the weights a decode step reads: every parameter once, at the run's element size.
double weight_bytes(const ModelInfo& info, const std::string& dtype);

// The memory-bandwidth bound of decoding `batch` rows together: a step reads the weights once and
// every row's decoding state (`state_bytes`, all rows together), so
//   bound tokens/s = batch / ((weight_bytes + state_bytes) / bandwidth).
double decode_bound_tokens_per_s(double weight_bytes, double state_bytes, int64_t batch, double bandwidth);

}  // namespace foxeval
