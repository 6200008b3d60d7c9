#include "models/stage_timer.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAGraphsUtils.cuh>
#include <c10/cuda/CUDAFunctions.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "data/switches.h"

namespace foxeval {
namespace {

struct Totals {
  std::mutex mutex;
  std::map<std::string, std::pair<double, long>> seconds_calls;
  bool print_at_exit = false;
  ~Totals() {
    if (!print_at_exit) return;
    for (const auto& [stage, v] : seconds_calls)
      std::fprintf(stderr, "[timing] %-24s %10.3f s  %8ld calls\n", stage.c_str(), v.first, v.second);
  }
};

Totals& totals() {
  static Totals t;
  return t;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void sync() {
  if (at::hasCUDA()) c10::cuda::device_synchronize();
}

bool env_on() {
  const char* v = switch_value("FOXEVAL_TIMING");
  return v && std::string(v) == "1";
}

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> on{env_on()};
  return on;
}

}  // namespace

bool stage_timing_enabled() { return enabled_flag().load(std::memory_order_relaxed); }

void set_stage_timing(bool on) {
  totals();  // constructed before first use, so it outlives every timer
  enabled_flag().store(on);
}

std::vector<StageTotal> stage_timing_totals() {
  std::lock_guard<std::mutex> lock(totals().mutex);
  std::vector<StageTotal> out;
  for (const auto& [stage, v] : totals().seconds_calls) out.push_back({stage, v.first, v.second});
  return out;
}

void reset_stage_timing() {
  std::lock_guard<std::mutex> lock(totals().mutex);
  totals().seconds_calls.clear();
}

StageTimer::StageTimer(const char* stage) : stage_(stage) { start(); }

StageTimer::StageTimer(std::string stage) : stage_(nullptr), owned_(std::move(stage)) {
  stage_ = owned_.c_str();
  start();
}

void StageTimer::start() {
  if (!stage_timing_enabled()) return;
  // A stage inside a CUDA graph capture (a decode step) cannot synchronize: not timed.
  if (at::hasCUDA() && at::cuda::currentStreamCaptureStatus() != at::cuda::CaptureStatus::None) {
    stage_ = nullptr;
    return;
  }
  if (env_on()) totals().print_at_exit = true;  // constructed here at the latest, so it prints after the last
  sync();
  start_ = now();
}

StageTimer::~StageTimer() {
  if (!stage_timing_enabled() || !stage_ || start_ == 0) return;
  sync();
  const double dt = now() - start_;
  std::lock_guard<std::mutex> lock(totals().mutex);
  auto& v = totals().seconds_calls[stage_];
  v.first += dt;
  v.second += 1;
}

}  // namespace foxeval
