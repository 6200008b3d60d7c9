// What the benchmarks (`foxeval bench ...`, one file each in bench/) share: their list flags, the
// document every bench writes (its opening fields and the one place it is written), the timing
// loop of repeated synchronized calls, the copy bandwidth measured in the run and the
// memory-bandwidth bound of a decode step. The command line (cli/bench.cpp) only fills the
// settings and calls a bench's run function.
#pragma once
#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/model.h"

namespace foxeval {

// Which of the optional opening fields a bench document has (bench_document); the documents keep
// the fields they have always had, so scripts and the README read them unchanged.
struct BenchDocFields {
  bool kind = true;     // "kind": "foxeval-bench-NAME"
  bool machine = true;  // "machine": the header's
};

// The opening fields of a bench document with a result header (tasks/run/result_file.h
// result_header("bench-NAME", identity, elapsed_s)): "header", "gpu" (the header machine's GPU,
// "cpu" without one), "date" (the header's), "git_revision", and those `fields` asks for.
nlohmann::json bench_document(const std::string& name, const nlohmann::json& identity, double elapsed_s,
                              BenchDocFields fields = {});

// Writes a bench's document atomically (data/json_file.h, the one writer) to `out`, or where --out
// is not given to results/bench/{stem}-{slug(gpu)}.json (its folder made when missing), and prints
// where.
void write_bench_json(const nlohmann::json& doc, const std::string& out, const std::string& stem, const std::string& gpu,
                      int indent = 1);

// `warmup` untimed calls of `fn`, then `repeats` timed ones, each between two device
// synchronizations (none on the CPU); `after(r)` runs after timed call r, outside the timing.
// On a GPU, peak_bytes is the largest peak of allocated bytes of the CUDA caching allocator in any
// timed call (reset before each).
// window_unix_s: the wall-clock span of the timed calls (Unix seconds), to match logs sampled
// beside the run (GPU clocks and power) to a row.
struct TimedRepeats {
  std::vector<double> seconds;
  int64_t peak_bytes = 0;
  double window_start_unix_s = 0, window_end_unix_s = 0;
};
TimedRepeats time_repeats(const std::function<void()>& fn, int64_t warmup, int64_t repeats, const at::Device& device,
                          const std::function<void(int64_t)>& after = {});

// The median of `seconds` (the mean of the two middle values of an even count), and the upper
// median (the middle value of the sorted list, the higher one of an even count), which the
// benches that report it have always reported.
double median(std::vector<double> seconds);
double upper_median(std::vector<double> seconds);

// "1.23" GiB of a row's byte count `key`, "-" when the row has none (table cells).
std::string gib(const nlohmann::json& row, const char* key);

// A non-empty list of positive integers ("1,4,16") at most kMaxContextTokens; errors name the flag.
std::vector<int64_t> parse_positive_list(const std::string& s, const char* flag);

// A non-empty list of lengths in [2, kMaxContextTokens] (--seq-lens); errors name the flag.
std::vector<int64_t> parse_seq_lens(const std::string& s, const char* flag);

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
