#include "models/generate.h"

#include <ATen/Functions.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "data/errors.h"
#include "data/tokenizer.h"
#include "models/layers.h"

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

struct Row {
  Generation out;
  bool done = false;
  std::mt19937_64 rng;
};

class Generator {
 public:
  Generator(CausalLM& model, const std::vector<std::vector<int64_t>>& prompts, const GenerateOptions& opt,
            const Gpt2Tokenizer* tok)
      : model_(model), prompts_(prompts), opt_(opt), tok_(tok), rows_(prompts.size()) {
    const int64_t vocab = model.lm_head().size(0);
    if (!opt.stop_strings.empty() && !tok) throw Error("generate: stop strings need a tokenizer");
    for (const std::string& s : opt.stop_strings)
      if (s.empty()) throw Error("generate: empty stop string");
    // NaN fails every comparison: check for what is allowed, not for what is not.
    if (!std::isfinite(opt.temperature) || opt.temperature < 0 ||
        (opt.temperature > 0 && !std::isfinite(1.0 / opt.temperature)))
      throw Error(fmt::format("generate: temperature {} must be a finite number >= 0", opt.temperature));
    if (opt.temperature > 0 && !(opt.top_p > 0 && opt.top_p <= 1))
      throw Error(fmt::format("generate: top_p {} must be in (0, 1]", opt.top_p));
    if (opt.max_new_tokens < 0 || opt.max_new_tokens > (int64_t(1) << 20))
      throw Error(fmt::format("generate: max_new_tokens {} must be in [0, {}]", opt.max_new_tokens, int64_t(1) << 20));
    for (size_t b = 0; b < prompts.size(); ++b) {
      if (prompts[b].empty()) throw Error(fmt::format("generate: prompt {} is empty (give at least a BOS id)", b));
      for (int64_t id : prompts[b])
        if (id < 0 || id >= vocab)
          throw Error(fmt::format("generate: prompt {} holds id {}, outside the model's vocabulary [0, {})", b, id, vocab));
      std::seed_seq seq{static_cast<uint32_t>(opt.seed), static_cast<uint32_t>(opt.seed >> 32),
                        static_cast<uint32_t>(opt.first_index + b), static_cast<uint32_t>((opt.first_index + b) >> 32)};
      rows_[b].rng.seed(seq);
    }
  }

  std::vector<Generation> run(GenerateStats* stats) {
    if (opt_.max_new_tokens > 0 && !prompts_.empty()) {
      if (opt_.use_cache)
        run_cached(stats);
      else
        run_uncached(stats);
    }
    std::vector<Generation> out;
    for (Row& r : rows_) {
      if (tok_ && r.out.reason != StopReason::stop_string) r.out.text = tok_->decode(r.out.ids);
      out.push_back(std::move(r.out));
    }
    return out;
  }

 private:
  // fp32 logits [B, V] of the last position of final-norm hidden states [B, T, hidden].
  at::Tensor last_logits(const at::Tensor& hidden) {
    return foxeval::linear(hidden.select(1, hidden.size(1) - 1), model_.lm_head()).to(at::kFloat);
  }

  // Next token of each row from fp32 logits [B, V] (rows that are done get -1).
  std::vector<int64_t> choose(const at::Tensor& logits, const std::vector<size_t>& row_ids) {
    std::vector<int64_t> next(row_ids.size(), -1);
    if (opt_.temperature <= 0) {
      at::Tensor am = at::argmax(logits, -1).to(at::kCPU, at::kLong).contiguous();
      const int64_t* p = am.data_ptr<int64_t>();
      for (size_t i = 0; i < row_ids.size(); ++i)
        if (!rows_[row_ids[i]].done) next[i] = p[i];
      return next;
    }
    at::Tensor cpu = logits.to(at::kCPU, at::kFloat).contiguous();
    const int64_t V = cpu.size(1);
    for (size_t i = 0; i < row_ids.size(); ++i) {
      Row& r = rows_[row_ids[i]];
      if (!r.done) next[i] = choose_token(cpu.data_ptr<float>() + i * V, V, opt_.temperature, opt_.top_p, r.rng);
    }
    return next;
  }

  // Takes `token` as row b's next token: stop ids, stop strings and the length limit.
  void accept(Row& r, int64_t token) {
    if (std::find(opt_.stop_ids.begin(), opt_.stop_ids.end(), token) != opt_.stop_ids.end()) {
      r.done = true;
      r.out.reason = StopReason::eos;
      r.out.stop = std::to_string(token);
      return;
    }
    r.out.ids.push_back(token);
    if (!opt_.stop_strings.empty()) {
      const std::string text = tok_->decode(r.out.ids);
      size_t best = std::string::npos;
      const std::string* which = nullptr;
      for (const std::string& s : opt_.stop_strings) {
        const size_t pos = text.find(s);
        if (pos != std::string::npos && (best == std::string::npos || pos < best)) best = pos, which = &s;
      }
      if (which) {
        // Shortest prefix of the ids whose decoded text contains the stop string.
        for (size_t k = 1; k <= r.out.ids.size(); ++k) {
          std::vector<int64_t> prefix(r.out.ids.begin(), r.out.ids.begin() + k);
          if (tok_->decode(prefix).find(*which) != std::string::npos) {
            r.out.ids.resize(k);
            break;
          }
        }
        r.done = true;
        r.out.reason = StopReason::stop_string;
        r.out.stop = *which;
        r.out.text = text.substr(0, best);
        return;
      }
    }
    if (static_cast<int64_t>(r.out.ids.size()) >= opt_.max_new_tokens) {
      r.done = true;
      r.out.reason = StopReason::length;
    }
  }

  void run_cached(GenerateStats* stats) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const int64_t B = static_cast<int64_t>(prompts_.size());
    int64_t L = 0;
    for (const auto& p : prompts_) L = std::max<int64_t>(L, static_cast<int64_t>(p.size()));
    // Left padding: row b's prompt ends at column L-1 for every row.
    std::vector<int64_t> flat(static_cast<size_t>(B * L), opt_.pad_id), pads(static_cast<size_t>(B));
    bool padded = false;
    for (int64_t b = 0; b < B; ++b) {
      const auto& p = prompts_[b];
      pads[b] = L - static_cast<int64_t>(p.size());
      padded = padded || pads[b] > 0;
      std::copy(p.begin(), p.end(), flat.begin() + b * L + pads[b]);
    }
    const at::Device device = model_.lm_head().device();
    at::Tensor ids = at::tensor(flat, at::kLong).view({B, L}).to(device);
    at::Tensor seq_start = padded ? at::tensor(pads, at::kLong) : at::Tensor();
    auto state = model_.new_state(B, seq_start);
    state->reserve(L + opt_.max_new_tokens);  // caches allocated once, at their final size
    const int64_t chunk = opt_.prefill_chunk > 0 ? opt_.prefill_chunk : L;
    at::Tensor hidden;
    for (int64_t s = 0; s < L; s += chunk) hidden = model_.forward(ids.slice(1, s, std::min(L, s + chunk)), state.get());
    std::vector<size_t> all(static_cast<size_t>(B));
    std::iota(all.begin(), all.end(), size_t(0));
    std::vector<int64_t> next = choose(last_logits(hidden), all);  // host sync: the prefill is done
    const auto t1 = clock::now();
    int64_t steps = 0;
    for (;;) {
      bool all_done = true;
      for (int64_t b = 0; b < B; ++b) {
        if (!rows_[b].done) accept(rows_[b], next[b]);
        all_done = all_done && rows_[b].done;
      }
      if (all_done) break;
      // Finished rows step on with a dummy token; their outputs are frozen.
      std::vector<int64_t> feed(static_cast<size_t>(B));
      for (int64_t b = 0; b < B; ++b) feed[b] = rows_[b].done ? opt_.pad_id : next[b];
      hidden = model_.forward(at::tensor(feed, at::kLong).view({B, 1}).to(device), state.get());
      next = choose(last_logits(hidden), all);
      ++steps;
    }
    if (stats) {
      stats->prefill_seconds = std::chrono::duration<double>(t1 - t0).count();
      stats->decode_seconds = std::chrono::duration<double>(clock::now() - t1).count();
      stats->decode_steps = steps;
      stats->prompt_tokens = B * L;
    }
  }

  void run_uncached(GenerateStats* stats) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const at::Device device = model_.lm_head().device();
    int64_t steps = 0, prompt_tokens = 0;
    for (size_t b = 0; b < prompts_.size(); ++b) {
      std::vector<int64_t> seq = prompts_[b];
      prompt_tokens += static_cast<int64_t>(seq.size());
      while (!rows_[b].done) {
        at::Tensor ids = at::tensor(seq, at::kLong).view({1, static_cast<int64_t>(seq.size())}).to(device);
        const int64_t token = choose(last_logits(model_.forward(ids, nullptr)), {b})[0];
        ++steps;
        accept(rows_[b], token);
        seq.push_back(token);
      }
    }
    if (stats) {
      stats->prefill_seconds = 0;
      stats->decode_seconds = std::chrono::duration<double>(clock::now() - t0).count();
      stats->decode_steps = steps;
      stats->prompt_tokens = prompt_tokens;
    }
  }

  CausalLM& model_;
  const std::vector<std::vector<int64_t>>& prompts_;
  const GenerateOptions& opt_;
  const Gpt2Tokenizer* tok_;
  std::vector<Row> rows_;
};

}  // namespace

int64_t choose_token(const float* logits, int64_t vocab, double temperature, double top_p, std::mt19937_64& rng) {
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
  if (top_p >= 1.0) {
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
  // Nucleus: most probable first (ties: lower id first), the shortest prefix with mass >= top_p.
  std::vector<int64_t> order(static_cast<size_t>(vocab));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
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
  return Generator(model, prompts, options, tok).run(stats);
}

}  // namespace foxeval
