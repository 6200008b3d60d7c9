#include "models/generation/generate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "data/errors.h"
#include "models/requests.h"

namespace foxeval {

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::length: return "length";
    case StopReason::eos: return "eos";
    case StopReason::stop_string: return "stop_string";
  }
  return "?";
}

namespace {

// Uniform double in [0, 1) from the top 53 bits: the same on every standard library
// (std::uniform_real_distribution is not specified bit for bit).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

int64_t choose_token(const float* logits, int64_t vocab, double temperature, double top_p, std::mt19937_64& rng,
                     int64_t top_k) {
  if (vocab <= 0) throw Error("choose_token: empty vocabulary");
  if (temperature <= 0) {  // argmax, first maximum (torch.argmax); NaN wins as in torch
    int64_t best = 0;
    for (int64_t i = 1; i < vocab; ++i) {
      if (std::isnan(logits[best])) break;
      if (std::isnan(logits[i]) || logits[i] > logits[best]) best = i;
    }
    return best;
  }
  float mx = logits[0];
  for (int64_t i = 1; i < vocab; ++i) mx = std::max(mx, logits[i]);
  if (!std::isfinite(mx)) throw Error("choose_token: logits are not finite");
  std::vector<double> p(static_cast<size_t>(vocab));
  const double inv_t = 1.0 / temperature;
  double total = 0;
  for (int64_t i = 0; i < vocab; ++i) total += p[i] = std::exp((static_cast<double>(logits[i]) - mx) * inv_t);
  const bool cut_k = top_k > 0 && top_k < vocab;
  if (top_p >= 1.0 && !cut_k) {
    const double u = uniform01(rng) * total;
    double cum = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      cum += p[i];
      if (u < cum) return i;
    }
    for (int64_t i = vocab - 1; i >= 0; --i)  // rounding: the last token with mass
      if (p[i] > 0) return i;
    return vocab - 1;
  }
  // Most probable first (ties: lower id first); top-k keeps the first k, then the nucleus is the
  // shortest prefix of those with mass >= top_p of theirs (HF's TopK then TopP warpers).
  std::vector<int64_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  if (cut_k) {
    order.resize(static_cast<size_t>(top_k));
    total = 0;
    for (int64_t i : order) total += p[i];
  }
  const double target = top_p * total;
  double kept = 0;
  size_t n = 0;
  while (n < order.size()) {
    kept += p[order[n++]];
    if (kept >= target) break;
  }
  const double u = uniform01(rng) * kept;
  double cum = 0;
  for (size_t i = 0; i < n; ++i) {
    cum += p[order[i]];
    if (u < cum) return order[i];
  }
  return order[n - 1];
}

std::vector<Generation> generate(CausalLM& model, const std::vector<std::vector<int64_t>>& prompts,
                                 const GenerateOptions& options, const Gpt2Tokenizer* tok, GenerateStats* stats) {
  std::vector<GenerationRequest> requests;
  requests.reserve(prompts.size());
  for (const std::vector<int64_t>& p : prompts)
    requests.push_back({p, options.max_new_tokens, options.stop_ids, options.stop_strings});
  GenerateUntilOptions g;
  g.max_batch = options.max_batch;
  g.prefill_chunk = options.prefill_chunk;
  g.use_cache = options.use_cache;
  g.sampling = Sampling{options.temperature, options.top_k, options.top_p, options.seed, options.first_index};
  g.tokenizer = tok;
  std::vector<Generation> out(prompts.size());
  const GenerateStats s = generate_until(model, requests, g, [&](size_t i, const GenerationAnswer& a) {
    out[i] = Generation{a.ids, a.text, a.reason, a.stop};
  });
  if (stats) *stats = s;
  return out;
}

}  // namespace foxeval
