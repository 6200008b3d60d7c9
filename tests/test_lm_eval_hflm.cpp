// lm-eval 0.4.4 HFLM requests and the loglikelihood engine:
// - encode_pair / rolling_requests equal lm-eval's own HFLM code with the JSONGPT2Tokenizer
//   (goldens: tests/tools/lm_eval_hflm_golden.py),
// - loglikelihood() equals lm-eval's _loglikelihood_tokens (truncation, continuation positions,
//   padding, one-token cache, is_greedy) on the goldens' closed-form fake model,
// - on the trained FoX (Pro): answers = the engine's per-token log-likelihoods summed, is_greedy on
//   the model's own greedy continuation, and batch size 1 = many.
#include <ATen/Functions.h>
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <nlohmann/json.hpp>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/tokenizer.h"
#include "models/engine.h"
#include "models/generation/generate.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/lm_eval/hflm.h"
#include "tests/test_support.h"

using namespace foxeval;

namespace {

const nlohmann::json& golden() {
  static const nlohmann::json g = read_json(test::source_path("tests/fixtures/lm_eval/hflm_golden.json"));
  return g;
}

const Gpt2Tokenizer& tokenizer() {
  static const Gpt2Tokenizer tok = Gpt2Tokenizer::load("");
  return tok;
}

std::vector<int64_t> ids(const nlohmann::json& j) { return j.get<std::vector<int64_t>>(); }

// The goldens' fake causal LM (see tests/tools/lm_eval_hflm_golden.py): logits = hidden @ head^T
// with head[v] = [cos, sin](2 pi f v / V) and hidden[t] = s_t [cos, sin](2 pi f c_t / V),
// c_t = (x_t + 1) % V, s_t = 2 + sin(0.37 t + 0.001 x_{t-1}); float64 rounded to float32.
class FakeLM : public CausalLM {
 public:
  explicit FakeLM(const nlohmann::json& spec)
      : V_(spec.at("vocab").get<int64_t>()), freqs_(spec.at("freqs").get<std::vector<double>>()) {
    info_.vocab_size = V_;
    info_.hidden_size = static_cast<int64_t>(2 * freqs_.size());
    at::Tensor h = at::empty({V_, info_.hidden_size}, at::kDouble);
    auto a = h.accessor<double, 2>();
    for (int64_t v = 0; v < V_; ++v) features(v, 1.0, &a[v][0]);
    head_ = h.to(at::kFloat);
  }
  const ModelInfo& info() const override { return info_; }
  at::Tensor forward(const at::Tensor& input_ids, DecodeState* state) override {
    REQUIRE(state == nullptr);
    ++forwards;
    at::Tensor x = input_ids.to(at::kCPU).contiguous();
    const int64_t B = x.size(0), T = x.size(1);
    at::Tensor h = at::empty({B, T, info_.hidden_size}, at::kDouble);
    auto xa = x.accessor<int64_t, 2>();
    auto ha = h.accessor<double, 3>();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t) {
        const double prev = t > 0 ? static_cast<double>(xa[b][t - 1]) : 0.0;
        features((xa[b][t] + 1) % V_, 2 + std::sin(0.37 * static_cast<double>(t) + 0.001 * prev), &ha[b][t][0]);
      }
    return h.to(at::kFloat);
  }
  std::unique_ptr<DecodeState> new_state(int64_t, const at::Tensor&) override { throw Error("FakeLM has no state"); }
  const at::Tensor& lm_head() const override { return head_; }
  const RunOptions& options() const override { return options_; }
  int64_t forwards = 0;

 private:
  void features(int64_t c, double scale, double* out) const {
    for (size_t k = 0; k < freqs_.size(); ++k) {
      const double angle = 2 * M_PI * freqs_[k] * static_cast<double>(c) / static_cast<double>(V_);
      out[2 * k] = scale * std::cos(angle);
      out[2 * k + 1] = scale * std::sin(angle);
    }
  }
  int64_t V_;
  std::vector<double> freqs_;
  ModelInfo info_;
  at::Tensor head_;
  RunOptions options_;
};

std::vector<LoglikelihoodAnswer> score(CausalLM& model, const std::vector<LoglikelihoodRequest>& requests,
                                       const LoglikelihoodOptions& o) {
  std::vector<LoglikelihoodAnswer> out(requests.size());
  std::vector<int> calls(requests.size(), 0);
  loglikelihood(model, requests, o, [&](size_t i, const LoglikelihoodAnswer& a) {
    out.at(i) = a;
    ++calls.at(i);
  });
  for (size_t i = 0; i < calls.size(); ++i) CHECK_MESSAGE(calls[i] == 1, "request ", i, " answered ", calls[i], " times");
  return out;
}

LoglikelihoodRequest req(std::vector<int64_t> context, std::vector<int64_t> continuation) {
  return LoglikelihoodRequest{std::move(context), std::move(continuation)};
}

std::string trained_dir() { return test::shared_path("fixtures/trained/fox_pro_tiny_pg"); }

}  // namespace

TEST_CASE("lm_eval hflm: encode_pair equals lm-eval's loglikelihood encoding (JSONGPT2Tokenizer, add_bos_token)") {
  int n = 0;
  for (const auto& p : golden().at("pairs")) {
    const std::string context = p.at("context"), continuation = p.at("continuation");
    CAPTURE(context);
    CAPTURE(continuation);
    const LoglikelihoodRequest r = lm_eval::encode_pair(tokenizer(), context, continuation);
    CHECK(r.context == ids(p.at("context_enc")));
    CHECK(r.continuation == ids(p.at("continuation_enc")));
    ++n;
  }
  CHECK(n == 19);
  // The quirks, spelled out: an empty context is [BOS] and the continuation starts with BOS too;
  // a context's trailing space moves to the continuation.
  const LoglikelihoodRequest empty = lm_eval::encode_pair(tokenizer(), "", "Hi");
  CHECK(empty.context == std::vector<int64_t>{50256});
  CHECK(empty.continuation.front() == 50256);
  const LoglikelihoodRequest spaced = lm_eval::encode_pair(tokenizer(), "a ", "b");
  CHECK(spaced.context == tokenizer().encode("a"));
  CHECK(spaced.continuation == tokenizer().encode_bpe(" b"));
}

TEST_CASE("lm_eval hflm: an empty continuation is an error, as lm-eval's assert") {
  CHECK_THROWS_WITH_AS(lm_eval::encode_pair(tokenizer(), "context", ""), doctest::Contains("no token of its own"), Error);
  CHECK_THROWS_AS(lm_eval::encode_pair(tokenizer(), "bad \xff utf-8", "x"), Error);
}

TEST_CASE("lm_eval hflm: rolling windows equal lm-eval's get_rolling_token_windows + make_disjoint_window") {
  const int64_t L = golden().at("max_length");
  for (const auto& r : golden().at("rolling")) {
    const std::string text = r.at("text");
    CAPTURE(text);
    const std::vector<LoglikelihoodRequest> w = lm_eval::rolling_requests(tokenizer(), text, L);
    REQUIRE(w.size() == r.at("windows").size());
    for (size_t i = 0; i < w.size(); ++i) {
      CHECK(w[i].context == ids(r.at("windows")[i][0]));
      CHECK(w[i].continuation == ids(r.at("windows")[i][1]));
    }
  }
  // lm-eval's docstring example: tokens 0..9, prefix BOS, max length 4.
  const std::vector<LoglikelihoodRequest> w = lm_eval::rolling_windows({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 99, 4);
  REQUIRE(w.size() == 3);
  CHECK(w[0].context == std::vector<int64_t>{99});
  CHECK(w[0].continuation == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(w[1].context == std::vector<int64_t>{3});
  CHECK(w[1].continuation == std::vector<int64_t>{4, 5, 6, 7});
  CHECK(w[2].context == std::vector<int64_t>{5, 6, 7});
  CHECK(w[2].continuation == std::vector<int64_t>{8, 9});
  CHECK(lm_eval::rolling_windows({}, 99, 4).empty());
  CHECK_THROWS_AS(lm_eval::rolling_windows({1}, 99, 0), Error);
}

TEST_CASE("lm_eval hflm: Python str.rstrip whitespace") {
  using lm_eval::python_rstrip_size;
  CHECK(python_rstrip_size("ab \t\n\r\x0b\x0c") == 2);
  CHECK(python_rstrip_size("ab\x1c\x1d\x1e\x1f") == 2);
  CHECK(python_rstrip_size("ab\xc2\x85\xc2\xa0") == 2);                  // U+0085, U+00A0
  CHECK(python_rstrip_size("ab\xe3\x80\x80\xe2\x80\xa8\xe2\x80\x8a") == 2);  // U+3000, U+2028, U+200A
  CHECK(python_rstrip_size("ab\xe2\x80\x8b") == 5);                      // U+200B is not whitespace
  CHECK(python_rstrip_size("ab\xe6\x97\xa5 ") == 5);                     // a CJK character stays
  CHECK(python_rstrip_size("   ") == 0);
  CHECK(python_rstrip_size("") == 0);
  CHECK(python_rstrip_size("a\x80 ") == 2);                              // stray byte: stop there
}

TEST_CASE("lm_eval hflm: loglikelihood equals lm-eval's _loglikelihood_tokens on the fake model") {
  FakeLM model(golden().at("fake_model"));
  const int64_t L = golden().at("max_length");
  // Every golden request at once: pairs, rolling windows (owned by their text), token requests.
  std::vector<LoglikelihoodRequest> requests;
  std::vector<double> expected;
  std::vector<int> greedy;  // -1: not checked (rolling windows: lm-eval drops is_greedy)
  for (const auto& p : golden().at("pairs")) {
    requests.push_back(req(ids(p.at("context_enc")), ids(p.at("continuation_enc"))));
    expected.push_back(p.at("logprob"));
    greedy.push_back(p.at("is_greedy").get<bool>());
  }
  for (const auto& t : golden().at("token_requests")) {
    requests.push_back(req(ids(t.at("context")), ids(t.at("continuation"))));
    expected.push_back(t.at("logprob"));
    greedy.push_back(t.at("is_greedy").get<bool>());
  }
  std::vector<std::pair<size_t, size_t>> rolling;  // [first, last) request of each text
  std::vector<double> rolling_expected;
  for (const auto& r : golden().at("rolling")) {
    const size_t first = requests.size();
    for (const auto& w : r.at("windows")) requests.push_back(req(ids(w[0]), ids(w[1])));
    rolling.emplace_back(first, requests.size());
    rolling_expected.push_back(r.at("logprob"));
  }
  for (const int64_t batch : {int64_t(1), int64_t(3), int64_t(0)}) {
    CAPTURE(batch);
    LoglikelihoodOptions o;
    o.max_length = L;
    o.batch_size = batch;
    o.max_batch_tokens = 4 * L;
    model.forwards = 0;
    const std::vector<LoglikelihoodAnswer> got = score(model, requests, o);
    for (size_t i = 0; i < expected.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].logprob == doctest::Approx(expected[i]).epsilon(1e-5));
      CHECK(static_cast<int>(got[i].is_greedy) == greedy[i]);
    }
    for (size_t k = 0; k < rolling.size(); ++k) {
      double sum = 0;
      for (size_t i = rolling[k].first; i < rolling[k].second; ++i) sum += got[i].logprob;
      CHECK(sum == doctest::Approx(rolling_expected[k]).epsilon(1e-5));
    }
    // Requests with equal model inputs share a row (lm-eval's one-token cache: the "Pick a colour:"
    // choices, the [500, 501] requests), so a forward per distinct input at batch size 1.
    std::set<std::vector<int64_t>> inputs;
    for (const LoglikelihoodRequest& r : requests) {
      std::vector<int64_t> full(r.context);
      full.insert(full.end(), r.continuation.begin(), r.continuation.end());
      const size_t keep = std::min<size_t>(full.size(), static_cast<size_t>(L) + 1);
      inputs.emplace(full.end() - static_cast<std::ptrdiff_t>(keep), full.end() - 1);
    }
    CHECK(inputs.size() + 4 <= requests.size());
    if (batch == 1) CHECK(model.forwards == static_cast<int64_t>(inputs.size()));
  }
}

TEST_CASE("lm_eval hflm: bad requests are errors naming the request") {
  FakeLM model(golden().at("fake_model"));
  LoglikelihoodOptions o;
  o.max_length = 4;
  auto run = [&](std::vector<LoglikelihoodRequest> r) { score(model, r, o); };
  CHECK_THROWS_WITH_AS(run({req({1}, {2}), req({}, {2})}), doctest::Contains("request 1 has an empty context"), Error);
  CHECK_THROWS_WITH_AS(run({req({1}, {})}), doctest::Contains("request 0 has an empty continuation"), Error);
  CHECK_THROWS_WITH_AS(run({req({1}, {1, 2, 3, 4, 5})}), doctest::Contains("longer than max length 4"), Error);
  CHECK_THROWS_WITH_AS(run({req({1}, {50257})}), doctest::Contains("token id 50257 outside"), Error);
  CHECK_THROWS_WITH_AS(run({req({-1}, {2})}), doctest::Contains("token id -1 outside"), Error);
  o.max_length = 0;
  CHECK_THROWS_AS(run({req({1}, {2})}), Error);
}

TEST_CASE("lm_eval hflm: answers are the engine's per-token log-likelihoods summed (trained FoX, CPU fp32)") {
  auto model = load_model(trained_dir(), RunOptions{});
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(trained_dir());
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"The most important thing in a startup is", " the founders."},
      {"What I worked on", " before college was writing and programming."},
      {"", "An empty context scores the whole text after BOS."},
      {"Paul Graham wrote many essays about", " startups, programming and painting."},
      {"Startups are companies designed to grow fast. Being newly founded does not make a company a startup, and",
       " nor is it necessary for a startup to work on technology."},
  };
  std::vector<LoglikelihoodRequest> requests;
  for (const auto& [c, x] : texts) requests.push_back(lm_eval::encode_pair(tok, c, x));
  // 12 cuts the last request's input (lm-eval keeps the end).
  for (const int64_t max_length : {int64_t(16384), int64_t(12)}) {
    CAPTURE(max_length);
    LoglikelihoodOptions o;
    o.max_length = max_length;
    const std::vector<LoglikelihoodAnswer> got = score(*model, requests, o);
    for (size_t i = 0; i < requests.size(); ++i) {
      std::vector<int64_t> full(requests[i].context);
      full.insert(full.end(), requests[i].continuation.begin(), requests[i].continuation.end());
      // lm-eval's cut: (context + continuation)[-(max_length + 1):], input = all but the last.
      const int64_t n = static_cast<int64_t>(full.size()), keep = std::min<int64_t>(n, max_length + 1);
      at::Tensor seq = at::tensor(std::vector<int64_t>(full.end() - keep, full.end()), at::kLong).view({1, keep});
      at::Tensor lp = token_logprobs(*model, seq.slice(1, 0, keep - 1), seq.slice(1, 1, keep));
      const int64_t contlen = static_cast<int64_t>(requests[i].continuation.size());
      const double want = lp.slice(1, keep - 1 - contlen, keep - 1).to(at::kDouble).sum().item<double>();
      CHECK(got[i].logprob == doctest::Approx(want).epsilon(1e-6));
      CHECK(got[i].logprob < 0);
    }
  }
}

TEST_CASE("lm_eval hflm: is_greedy on the trained model's own greedy continuation") {
  auto model = load_model(trained_dir(), RunOptions{});
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(trained_dir());
  const std::vector<int64_t> prompt = tok.encode("The way to get startup ideas is", true, true);
  GenerateOptions g;
  g.max_new_tokens = 10;
  const std::vector<int64_t> cont = generate(*model, {prompt}, g, nullptr)[0].ids;
  REQUIRE(cont.size() == 10);
  std::vector<int64_t> changed = cont;
  changed.back() = (changed.back() + 1) % 50257;
  const std::vector<LoglikelihoodAnswer> got = score(*model, {req(prompt, cont), req(prompt, changed)}, LoglikelihoodOptions{});
  CHECK(got[0].is_greedy);
  CHECK_FALSE(got[1].is_greedy);
  CHECK(got[1].logprob < got[0].logprob);
}

TEST_CASE("lm_eval hflm: batch size 1 and many give the same answers (trained FoX, CPU fp32)") {
  auto model = load_model(trained_dir(), RunOptions{});
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(trained_dir());
  std::vector<LoglikelihoodRequest> requests;
  const char* contexts[] = {"I", "Startups are hard because", "The best way to learn to program is to write"};
  const char* choices[] = {" fail.", " succeed at last, after a long time of trying many things.", " think"};
  for (const char* c : contexts)
    for (const char* x : choices) requests.push_back(lm_eval::encode_pair(tok, c, x));
  for (const auto& w : lm_eval::rolling_requests(tok, std::string(150, 'a') + " and then some words", 32))
    requests.push_back(w);
  LoglikelihoodOptions one;
  one.max_length = 32;
  one.batch_size = 1;
  const std::vector<LoglikelihoodAnswer> a = score(*model, requests, one);
  double worst = 0;
  for (const int64_t batch : {int64_t(64), int64_t(0)}) {
    LoglikelihoodOptions many = one;
    many.batch_size = batch;
    many.max_batch_tokens = 100;
    const std::vector<LoglikelihoodAnswer> b = score(*model, requests, many);
    for (size_t i = 0; i < requests.size(); ++i) {
      worst = std::max(worst, std::abs(a[i].logprob - b[i].logprob));
      CHECK(a[i].is_greedy == b[i].is_greedy);
    }
  }
  MESSAGE("batch 1 vs 64/token budget: max |logprob difference| = ", worst, " over ", requests.size(), " requests");
  CHECK(worst < 1e-4);
}
