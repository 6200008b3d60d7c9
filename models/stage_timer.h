// FOXEVAL_TIMING=1: wall time per named stage (forward, LM head, linear layers, the recurrent
// families' conv / scan / gated norm), synchronizing the GPU around each stage, printed to stderr
// at exit (stages nest: "forward" holds the others). Not timed inside a CUDA graph capture. For
// finding where end-to-end time goes; off by default because the synchronizations remove overlap.
#pragma once

namespace foxeval {

bool stage_timing_enabled();

class StageTimer {
 public:
  explicit StageTimer(const char* stage);  // a string literal: it is kept by pointer
  ~StageTimer();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  const char* stage_;
  double start_ = 0;
};

}  // namespace foxeval
