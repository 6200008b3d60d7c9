// Progress on stderr for long work: done/total, rate, ETA; at most one line every few seconds.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace foxeval {

class Progress {
 public:
  Progress(std::string what, int64_t total, std::string unit, double every_seconds = 5.0);
  // `done` items of `total`; `work` = amount for the rate (e.g. tokens) since the start.
  void update(int64_t done, double work, bool force = false);
  double elapsed() const;

 private:
  std::string what_, unit_;
  int64_t total_;
  double every_;
  int64_t start_done_ = -1;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace foxeval
