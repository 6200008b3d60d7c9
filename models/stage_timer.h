// Wall time per named stage (forward, LM head, linear layers by shape, the FoX block's glue, the
// recurrent families' conv / scan / gated norm), synchronizing the GPU around each stage. On with
// FOXEVAL_TIMING=1 (printed to stderr at exit) or set_stage_timing(true) (`foxeval bench prefill`
// reads the totals). Stages nest: "forward" holds the others, and a named glue stage never holds
// a "linear" one, so the stages inside "forward" add up to it. Not timed inside a CUDA graph
// capture. Off by default because the synchronizations remove overlap.
#pragma once
#include <string>
#include <vector>

namespace foxeval {

bool stage_timing_enabled();
void set_stage_timing(bool on);

struct StageTotal {
  std::string stage;
  double seconds = 0;
  long calls = 0;
};
// The totals since the last reset, by stage name.
std::vector<StageTotal> stage_timing_totals();
void reset_stage_timing();

class StageTimer {
 public:
  explicit StageTimer(const char* stage);  // a string literal: it is kept by pointer
  // A name built at run time (the linear layers' shapes); build it only when timing is on.
  explicit StageTimer(std::string stage);
  ~StageTimer();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  void start();
  const char* stage_;
  std::string owned_;
  double start_ = 0;
};

}  // namespace foxeval
