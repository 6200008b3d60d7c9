#include "tasks/run/generation_progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "data/errors.h"

namespace foxeval {
namespace {

// 12345 -> "12.3k", for token counts in one line.
std::string count(int64_t n) {
  if (n >= 10000000) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 10000) return fmt::format("{:.1f}k", n / 1e3);
  return std::to_string(n);
}

std::string duration(double s) {
  if (s >= 5400) return fmt::format("{:.1f} h", s / 3600);
  if (s >= 90) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.0f} s", s);
}

}  // namespace

GenerationMeter::GenerationMeter(std::string task, std::string unit, int64_t requests, int64_t prompt_tokens,
                                 int64_t max_new_tokens, bool cpu, std::string shorten, int64_t rank, double every_seconds)
    : task_(std::move(task)),
      unit_(std::move(unit)),
      shorten_(std::move(shorten)),
      requests_(requests),
      prompt_tokens_(prompt_tokens),
      new_bound_(max_new_tokens),
      cpu_(cpu),
      rank_(rank),
      every_(every_seconds) {
  // FOXEVAL_PROGRESS_SECONDS: another cadence (0: a line after every decode run, for logs and tests).
  if (const char* e = std::getenv("FOXEVAL_PROGRESS_SECONDS"); e && *e) {
    char* end = nullptr;
    const double v = std::strtod(e, &end);
    if (end == e || *end != '\0' || !(v >= 0 && v < 1e6))
      throw Error(fmt::format("FOXEVAL_PROGRESS_SECONDS={}: expected seconds between progress lines (a number >= 0)", e));
    every_ = v;
  }
  start_ = last_ = std::chrono::steady_clock::now();
}

std::function<void(const GenerationProgress&)> GenerationMeter::next_call() {
  before_.requests_done += now_.requests_done;
  before_.new_tokens += now_.new_tokens;
  before_.stats.prompt_tokens += now_.stats.prompt_tokens;
  before_.stats.prefill_seconds += now_.stats.prefill_seconds;
  before_.stats.decode_seconds += now_.stats.decode_seconds;
  now_ = GenerationProgress{};
  return [this](const GenerationProgress& p) { update(p); };
}

void GenerationMeter::request_done(int64_t new_tokens, int64_t max_new_tokens) {
  ++done_;
  new_bound_ -= std::max<int64_t>(0, max_new_tokens - new_tokens);
}

void GenerationMeter::update(const GenerationProgress& call) {
  now_ = call;
  const auto t = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(t - last_).count() < every_) return;
  last_ = t;
  const double elapsed = std::chrono::duration<double>(t - start_).count();
  const int64_t prefilled = before_.stats.prompt_tokens + now_.stats.prompt_tokens;
  const int64_t generated = before_.new_tokens + now_.new_tokens;
  const double prefill_s = before_.stats.prefill_seconds + now_.stats.prefill_seconds;
  const double decode_s = before_.stats.decode_seconds + now_.stats.decode_seconds;
  const double prefill_rate = prefill_s > 0 ? prefilled / prefill_s : 0.0;
  const double decode_rate = decode_s > 0 ? generated / decode_s : 0.0;
  // A rank of a distributed run takes work from a shared counter: it knows what it did, not what is left.
  std::string line =
      rank_ >= 0 ? fmt::format("[{} rank {}] {} {} done here, {} new tokens, {} prompt tokens", task_, rank_, done_, unit_,
                               count(generated), count(prefilled))
                 : fmt::format("[{}] {}/{} {}, {}/{} new tokens (at most), {}/{} prompt tokens", task_, done_, requests_, unit_,
                               count(generated), count(std::max(generated, new_bound_)), count(prefilled), count(prompt_tokens_));
  line += fmt::format("; prefill {:.0f} tok/s, decode {:.1f} tok/s, elapsed {}", prefill_rate, decode_rate, duration(elapsed));
  double eta = -1;
  if (rank_ < 0 && prefill_rate > 0 && decode_rate > 0) {
    eta = std::max<int64_t>(0, prompt_tokens_ - prefilled) / prefill_rate + std::max<int64_t>(0, new_bound_ - generated) / decode_rate;
    line += fmt::format(", ETA {} if nothing stops early", duration(eta));
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  if (cpu_ && !warned_ && eta > kWarnSeconds) {
    warned_ = true;
    std::fprintf(stderr, "[%s] this CPU run may take about %s: each of the %lld open %s may generate its full "
                 "max_new_tokens (a random or undertrained model rarely stops early); %s shorten%s it\n",
                 task_.c_str(), duration(eta).c_str(), static_cast<long long>(requests_ - done_), unit_.c_str(),
                 shorten_.c_str(), shorten_.find(',') == std::string::npos && shorten_.find(" or ") == std::string::npos ? "s" : "");
  }
  std::fflush(stderr);
}

}  // namespace foxeval
