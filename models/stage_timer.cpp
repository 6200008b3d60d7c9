#include "models/stage_timer.h"

#include <ATen/Context.h>
#include <ATen/cuda/CUDAGraphsUtils.cuh>
#include <c10/cuda/CUDAFunctions.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace foxeval {
namespace {

struct Totals {
  std::mutex mutex;
  std::map<std::string, std::pair<double, long>> seconds_calls;
  ~Totals() {
    for (const auto& [stage, v] : seconds_calls)
      std::fprintf(stderr, "[timing] %-12s %10.3f s  %8ld calls\n", stage.c_str(), v.first, v.second);
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

}  // namespace

bool stage_timing_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("FOXEVAL_TIMING");
    return v && std::string(v) == "1";
  }();
  return on;
}

StageTimer::StageTimer(const char* stage) : stage_(stage) {
  if (!stage_timing_enabled()) return;
  // A stage inside a CUDA graph capture (a decode step) cannot synchronize: not timed.
  if (at::hasCUDA() && at::cuda::currentStreamCaptureStatus() != at::cuda::CaptureStatus::None) {
    stage_ = nullptr;
    return;
  }
  totals();  // constructed before first use, so it is destroyed (and prints) after the last
  sync();
  start_ = now();
}

StageTimer::~StageTimer() {
  if (!stage_timing_enabled() || !stage_) return;
  sync();
  const double dt = now() - start_;
  std::lock_guard<std::mutex> lock(totals().mutex);
  auto& v = totals().seconds_calls[stage_];
  v.first += dt;
  v.second += 1;
}

}  // namespace foxeval
