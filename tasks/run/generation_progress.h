// Progress of a generation task (niah, longbench, babilong, ruler: tasks/run/generation_loop.h)
// on stderr, inside the scheduler's groups too: a group of long generations may finish no request
// for minutes (a random or undertrained model never emits EOS, so every request runs to its
// max_new_tokens), and the Runner's line moves only when one finishes. Lines say requests done,
// new tokens against their bound, prefill and decode rates and an ETA that assumes every open
// request runs to its max_new_tokens (what such a model does).
// On the CPU, the first time the estimate exceeds a few minutes, one line says so and names the
// flags that shorten the run.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "models/requests.h"

namespace foxeval {

class GenerationMeter {
 public:
  // The open work of this run: `requests` (named `unit`, e.g. "cells"), their prompt tokens and the
  // sum of their max_new_tokens. `shorten`: the flags that shorten the run, for the CPU warning.
  // `rank` >= 0 in a distributed run: lines name the rank and give no ETA (other ranks share the work).
  GenerationMeter(std::string task, std::string unit, int64_t requests, int64_t prompt_tokens, int64_t max_new_tokens,
                  bool cpu, std::string shorten, int64_t rank = -1, double every_seconds = 10.0);

  // The callback for one generate_until call (GenerateUntilOptions::on_progress): the scheduler's
  // counts start from zero in every call, the meter's carry on.
  std::function<void(const GenerationProgress&)> next_call();
  // A request finished after `new_tokens` steps (its stop token included) of its `max_new_tokens`:
  // the steps it did not take leave the bound.
  void request_done(int64_t new_tokens, int64_t max_new_tokens);

  static constexpr double kWarnSeconds = 180.0;  // "a few minutes": a CPU run estimated longer says so

 private:
  std::string task_, unit_, shorten_;
  int64_t requests_, prompt_tokens_, new_bound_;
  bool cpu_;
  int64_t rank_;
  double every_;
  bool warned_ = false;
  std::chrono::steady_clock::time_point start_, last_;
  // Finished calls' totals, and the current call's latest report.
  GenerationProgress before_, now_;
  int64_t done_ = 0;
  void update(const GenerationProgress& call);
};

}  // namespace foxeval
