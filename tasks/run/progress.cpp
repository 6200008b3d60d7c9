#include "tasks/run/progress.h"

#include <fmt/format.h>

#include <cstdio>

namespace foxeval {

Progress::Progress(std::string what, int64_t total, std::string unit, double every_seconds)
    : what_(std::move(what)), unit_(std::move(unit)), total_(total), every_(every_seconds) {
  start_ = last_ = std::chrono::steady_clock::now();
}

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(int64_t done, double work, bool force) {
  if (start_done_ < 0) start_done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (!force && std::chrono::duration<double>(now - last_).count() < every_) return;
  last_ = now;
  const double t = elapsed();
  const double rate = t > 0 ? work / t : 0.0;
  const double per_item = done > start_done_ ? t / static_cast<double>(done - start_done_) : 0.0;
  const double eta = per_item * static_cast<double>(total_ - done);
  std::fprintf(stderr, "%s\n",
               fmt::format("[{}] {}/{} ({:.1f}%)  {:.0f} {}/s  elapsed {:.0f}s  ETA {:.0f}s", what_, done, total_,
                           total_ > 0 ? 100.0 * done / total_ : 100.0, rate, unit_, t, eta)
                   .c_str());
}

}  // namespace foxeval
